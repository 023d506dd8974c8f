// searchsorted / bucketize on npu: the searchsorted kernel (ascendc_kernels/searchsorted.h), a
// vectorized binary search, on float copies of the boundaries and values (exact for float16 /
// bfloat16, and for integers below 2^24 in magnitude: checked with one flag read back). `sorter`
// reorders the boundaries first (a gather). Other cases (float64, larger integers, rows of more than
// 16383 boundaries) take the CPU fallback. Argument errors follow PyTorch's messages.
#include <ATen/core/Tensor.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/gather.h>
#include <ATen/ops/scalar_tensor.h>
#include <ATen/ops/zeros.h>
#include <torch/library.h>

#include <optional>
#include <string>

#include "aten/dtype_dispatch.h"
#include "aten/kernel_launch.h"
#include "aten/op_common.h"
#include "core/cpu_fallback.h"
#include "searchsorted.h"

namespace torch_ops_nn {

TORCH_OPS_NN_REGISTER_KERNEL(searchsorted_kernel);

namespace {

using at::Tensor;

bool Searchable(const Tensor& t) { return IsNpuFloat(t.scalar_type()) || ExactAsFloat(t); }

// The search itself, or an undefined tensor when the case needs the CPU.
Tensor SearchNative(const Tensor& seq_in, const Tensor& values, bool out_int32, bool right,
                    const std::optional<Tensor>& sorter) {
  const int64_t m = seq_in.size(-1);
  const Tensor seq = sorter && sorter->defined() ? at::gather(seq_in, -1, *sorter) : seq_in;
  const c10::DeviceIndex dev = values.device().index();
  const c10::ScalarType odt = out_int32 ? c10::kInt : c10::kLong;
  if (values.numel() == 0) return NpuEmpty(values.sizes(), odt, dev);
  if (m == 0) return at::zeros(values.sizes(), values.options().dtype(odt));
  const uint64_t rows = seq.dim() == 1 ? 1 : uint64_t(seq.numel() / m);
  const uint64_t k = seq.dim() == 1 ? uint64_t(values.numel()) : uint64_t(values.size(-1));
  const auto t = npu_kernels::searchsorted_tiling(rows, uint64_t(m), k, right, SocInfoFor(dev));
  if (!t.ok || !Searchable(seq) || !Searchable(values)) return {};
  const Tensor b = seq.to(c10::kFloat).contiguous(), v = values.to(c10::kFloat).contiguous();
  Tensor out = NpuEmpty(values.sizes(), c10::kInt, dev);
  KernelLaunch launch{"searchsorted_kernel", ascendc_host::CoreType::AIV, t.block_dim, dev};
  if (LogDebugEnabled()) launch.detail = DescribeForLog({{"sorted_sequence", &b}, {"self", &v}});
  LaunchKernel(std::move(launch), &searchsorted_kernel, t, b.data_ptr(), v.data_ptr(), out.data_ptr());
  return out_int32 ? out : out.to(c10::kLong);
}

void CheckArgs(const char* op, const Tensor& seq, const Tensor& values, bool right,
               const std::optional<c10::string_view>& side, const std::optional<Tensor>& sorter) {
  const bool has_sorter = sorter.has_value() && sorter->defined();
  CheckSameNpuDevice(op, {{"sorted_sequence", &seq}, {"self", &values}, {"sorter", has_sorter ? &*sorter : &seq}});
  if (side) {
    TORCH_CHECK(*side == "left" || *side == "right", op, ": side can only be 'left' or 'right' but got ",
                std::string(*side));
    TORCH_CHECK(!right || *side == "right", op, ": side and right can't be set to opposites, got side of ",
                std::string(*side), " while right was True");
  }
  TORCH_CHECK(seq.dim() >= 1, op, ": boundaries tensor should have positive dimension, but got 0 dimension");
  if (seq.dim() > 1) {
    bool match = values.dim() == seq.dim();
    for (int64_t d = 0; match && d < seq.dim() - 1; ++d) match = seq.size(d) == values.size(d);
    TORCH_CHECK(match, op, ": boundaries tensor should be 1 dimension or the first N-1 dimensions of boundaries ",
                "tensor and input value tensor must match, but we got boundaries tensor ", seq.sizes(),
                " and input value tensor ", values.sizes());
  }
  if (has_sorter) {
    TORCH_CHECK(sorter->scalar_type() == c10::kLong, op, ": sorter must be a tensor of long dtype but got ",
                sorter->scalar_type());
    TORCH_CHECK(sorter->sizes() == seq.sizes(), op, ": boundary and sorter must have the same size, but got ",
                "boundary tensor ", seq.sizes(), " and got sorter tensor ", sorter->sizes());
  }
}

Tensor searchsorted_tensor(const Tensor& seq, const Tensor& self, bool out_int32, bool right,
                           std::optional<c10::string_view> side, const std::optional<Tensor>& sorter) {
  const char* op = "searchsorted";
  CheckArgs(op, seq, self, right, side, sorter);
  const bool r = right || (side && *side == "right");
  if (Tensor out = SearchNative(seq, self, out_int32, r, sorter); out.defined()) return out;
  return CallCpuFallback("aten::searchsorted", "Tensor", {seq, self, out_int32, right, side, sorter})[0].toTensor();
}

Tensor& searchsorted_out(const Tensor& seq, const Tensor& self, bool out_int32, bool right,
                         std::optional<c10::string_view> side, const std::optional<Tensor>& sorter, Tensor& out) {
  return CopyToOutExact("searchsorted", searchsorted_tensor(seq, self, out_int32, right, side, sorter), out);
}

Tensor searchsorted_scalar(const Tensor& seq, const c10::Scalar& self, bool out_int32, bool right,
                           std::optional<c10::string_view> side, const std::optional<Tensor>& sorter) {
  TORCH_CHECK(seq.dim() == 1, "searchsorted: input value can be a scalar only when sorted_sequence tensor dimension ",
              "is 1, but we got sorted_sequence dim(", seq.dim(), ")");
  return searchsorted_tensor(seq, at::scalar_tensor(self, seq.options()), out_int32, right, side, sorter);
}

Tensor bucketize_tensor(const Tensor& self, const Tensor& boundaries, bool out_int32, bool right) {
  TORCH_CHECK(boundaries.dim() == 1, "bucketize: boundaries tensor must be 1 dimension, but got dim(",
              boundaries.dim(), ")");
  return searchsorted_tensor(boundaries, self, out_int32, right, std::nullopt, std::nullopt);
}

Tensor& bucketize_out(const Tensor& self, const Tensor& boundaries, bool out_int32, bool right, Tensor& out) {
  return CopyToOutExact("bucketize", bucketize_tensor(self, boundaries, out_int32, right), out);
}

Tensor bucketize_scalar(const c10::Scalar& self, const Tensor& boundaries, bool out_int32, bool right) {
  return bucketize_tensor(at::scalar_tensor(self, boundaries.options()), boundaries, out_int32, right);
}

}  // namespace
}  // namespace torch_ops_nn

NPU_ATEN_LIBRARY_IMPL(m) {
  using namespace torch_ops_nn;
  m.impl("searchsorted.Tensor", TORCH_FN(searchsorted_tensor));
  m.impl("searchsorted.Tensor_out", TORCH_FN(searchsorted_out));
  m.impl("searchsorted.Scalar", TORCH_FN(searchsorted_scalar));
  m.impl("bucketize.Tensor", TORCH_FN(bucketize_tensor));
  m.impl("bucketize.Tensor_out", TORCH_FN(bucketize_out));
  m.impl("bucketize.Scalar", TORCH_FN(bucketize_scalar));
}
