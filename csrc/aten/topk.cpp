// topk on npu: the topk kernel (ascendc_kernels/topk.h) for float32 / float16 / bfloat16 rows of at most
// kTopkMaxR elements and k <= kTopkMaxK (e.g. top-5 accuracy over 1000 classes); long rows with small k
// by selection (TopkBySelection: a sampled threshold, the select kernel's candidates, their sort); other
// rows beyond the kernel run the sort kernel keeping the first k of every sorted run (stable: ties in
// index order);
// integer dtypes take the first k of the npu sort. The reduced dim is moved last with one device copy
// when it is not already.
#include <ATen/TensorOperators.h>
#include <ATen/core/Tensor.h>
#include <ATen/ops/amax.h>
#include <ATen/ops/amin.h>
#include <ATen/ops/gather.h>
#include <ATen/ops/sort.h>
#include <ATen/ops/where.h>
#include <ATen/ops/zeros.h>

#include <algorithm>
#include <torch/library.h>

#include <tuple>

#include "aten/kernel_launch.h"
#include "aten/op_common.h"
#include "aten/sort_ops.h"
#include "core/cpu_fallback.h"
#include "elementwise.h"
#include "topk.h"

namespace torch_ops_nn {

TORCH_OPS_NN_REGISTER_KERNEL(topk_kernel);
TORCH_OPS_NN_REGISTER_KERNEL(topk_select_kernel);

namespace {

// topk of long rows with small k by selection: a threshold per row — the r-th best of a strided sample,
// r chosen so that about 2k plus 32 rows' worth of samples pass — then the row's candidates (>= it for
// largest, and NaN; <= it for smallest) compacted in index order by the select kernel, and the sort of
// the candidates keeping k. Candidates keep index order and include every tie of the k-th value, so the
// result is the stable full sort's first k. Returns false, having written nothing to v / i, when a
// row's candidates are fewer than k or more than the buffer holds (one number read back tells); the
// caller then sorts whole rows.
bool TopkBySelection(const at::Tensor& x_in, int64_t rows, int64_t R, int64_t k, bool largest, at::Tensor& v,
                     at::Tensor& i, c10::DeviceIndex dev) {
  const at::Tensor x = x_in.view({rows, R});
  const int64_t s = std::min<int64_t>(R, 4096), stride = R / s;
  const at::Tensor sample = x.slice(1, 0, s * stride, stride).contiguous();
  const int64_t r = std::min<int64_t>(s, (k * s + R - 1) / R * 2 + 32);
  at::Tensor sv = NpuEmpty({rows, r}, x.scalar_type(), dev), si = NpuEmpty({rows, r}, c10::kLong, dev);
  LaunchSortRows(sample, uint64_t(rows), uint32_t(s), uint32_t(r), largest, sv, si, dev);
  const at::Tensor thr = sv.select(1, r - 1).to(c10::kFloat).contiguous();
  const int64_t cap = std::min<int64_t>(R, std::max<int64_t>(4096, 8 * k + 1024));
  at::Tensor cand_v = NpuEmpty({rows, cap}, x.scalar_type(), dev), cand_i = NpuEmpty({rows, cap}, c10::kInt, dev);
  at::Tensor count = NpuEmpty({rows}, c10::kInt, dev);
  const auto t = npu_kernels::topk_select_tiling(uint64_t(rows), uint32_t(R), uint32_t(cap), largest,
                                                 uint32_t(*EwDTypeOf(x.scalar_type())), SocInfoFor(dev));
  LaunchKernel(KernelLaunch{"topk_select_kernel", ascendc_host::CoreType::AIV, t.block_dim, dev},
               &topk_select_kernel, t, x.data_ptr(), thr.data_ptr(), cand_v.data_ptr(), cand_i.data_ptr(),
               count.data_ptr());
  // One number read back: the most candidates of any row, or -1 when some row has fewer than k.
  const at::Tensor cf = count.to(c10::kFloat);
  const int64_t hi = int64_t(at::where(at::amin(cf) >= double(k), at::amax(cf), -1.0).item<float>());
  if (hi < k || hi > cap) return false;
  // Sort only the columns some row fills (the rest is padding in every row).
  const at::Tensor cands = hi < cap ? cand_v.narrow(1, 0, hi).contiguous() : cand_v;
  at::Tensor pos = NpuEmpty({rows, k}, c10::kLong, dev);
  LaunchSortRows(cands, uint64_t(rows), uint32_t(cands.size(1)), uint32_t(k), largest, v, pos, dev);
  i.copy_(at::gather(cand_i, 1, pos).view(i.sizes()));
  return true;
}

std::tuple<at::Tensor&, at::Tensor&> topk_values_npu(const at::Tensor& self, c10::SymInt k_s, int64_t dim, bool largest,
                                                     bool sorted, at::Tensor& values, at::Tensor& indices) {
  const char* op = "topk";
  const c10::DeviceIndex dev = CheckSameNpuDevice(op, {{"self", &self}, {"values", &values}, {"indices", &indices}});
  const int64_t k = k_s.expect_int();
  TORCH_CHECK(self.scalar_type() != c10::kBool, "topk does not support bool dtypes (as on the CPU and CUDA)");
  dim = WrapDim(op, dim, self.dim());
  const int64_t R = self.dim() == 0 ? 1 : self.size(dim);
  TORCH_CHECK(k >= 0 && k <= R, "selected index k out of range");
  const bool rows_native = IsNpuFloat(self.scalar_type()) && self.dim() > 0 && k > 0 && self.numel() > 0;
  const bool kernel = rows_native && R <= npu_kernels::kTopkMaxR && k <= npu_kernels::kTopkMaxK;
  const bool sort_rows = rows_native && !kernel && R <= int64_t(INT32_MAX);
  if (self.dim() == 0) {  // a 0-dim tensor is its own top-k (k = 0 or 1), as on the CPU
    CopyToOutExact(op, self.clone(), values);
    CopyToOutExact(op, at::zeros({}, self.options().dtype(c10::kLong)), indices);
    return {values, indices};
  }
  if (!kernel && !sort_rows) {  // the first k of the sorted rows (integers: the radix sort; others: the fallback)
    auto [sv, si] = at::sort(self, /*stable=*/true, dim, /*descending=*/largest);
    CopyToOutExact(op, sv.narrow(dim, 0, k), values);
    CopyToOutExact(op, si.narrow(dim, 0, k), indices);
    return {values, indices};
  }
  // Rows along the last dim.
  const at::Tensor x = dim == self.dim() - 1 ? Contiguous(self) : self.movedim(dim, -1).contiguous();
  std::vector<int64_t> out_shape(x.sizes().begin(), x.sizes().end());
  out_shape.back() = k;
  at::Tensor v = NpuEmpty(out_shape, x.scalar_type(), dev), i = NpuEmpty(out_shape, c10::kLong, dev);
  const uint64_t rows = uint64_t(x.numel() / R);
  const npu_kernels::EwDType ew = *EwDTypeOf(self.scalar_type());
  if (sort_rows) {  // rows beyond the topk kernel: selection for long rows and small k, else the sort
    const bool select =
        R >= 16384 && k <= 512 && k <= R / 64 && TopkBySelection(x, int64_t(rows), R, k, largest, v, i, dev);
    if (!select) LaunchSortRows(x, rows, uint32_t(R), uint32_t(k), largest, v, i, dev);
  } else {
    const auto t = npu_kernels::topk_tiling(rows, uint32_t(R), uint32_t(k), largest, uint32_t(ew),
                                            uint32_t(x.element_size()), SocInfoFor(dev));
    KernelLaunch launch{"topk_kernel", ascendc_host::CoreType::AIV, t.block_dim, dev};
    if (LogDebugEnabled()) launch.detail = DescribeForLog({{"self", &x}}) + " k=" + std::to_string(k);
    LaunchKernel(std::move(launch), &topk_kernel, t, x.data_ptr(), v.data_ptr(), i.data_ptr());
  }
  if (dim != self.dim() - 1) {
    v = v.movedim(-1, dim);
    i = i.movedim(-1, dim);
  }
  CopyToOutExact(op, v, values);
  CopyToOutExact(op, i, indices);
  return {values, indices};
}

std::tuple<at::Tensor, at::Tensor> topk_npu(const at::Tensor& self, c10::SymInt k, int64_t dim, bool largest,
                                            bool sorted) {
  at::Tensor values = NpuEmpty({0}, self.scalar_type(), self.device().index());
  at::Tensor indices = NpuEmpty({0}, c10::kLong, self.device().index());
  topk_values_npu(self, k, dim, largest, sorted, values, indices);
  return {values, indices};
}

}  // namespace
}  // namespace torch_ops_nn

NPU_ATEN_LIBRARY_IMPL(m) {
  m.impl("topk", TORCH_FN(torch_ops_nn::topk_npu));
  m.impl("topk.values", TORCH_FN(torch_ops_nn::topk_values_npu));
}
