// topk on npu: the topk kernel (ascendc_kernels/topk.h) for float32 / float16 / bfloat16 rows of at most
// kTopkMaxR elements and k <= kTopkMaxK (e.g. top-5 accuracy over 1000 classes); longer rows or larger k
// run the sort kernel keeping the first k of every sorted run (stable: equal values in index order);
// integer dtypes take the first k of the npu sort. The reduced dim is moved last with one device copy
// when it is not already.
#include <ATen/core/Tensor.h>
#include <ATen/ops/sort.h>
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

namespace {

std::tuple<at::Tensor&, at::Tensor&> topk_values_npu(const at::Tensor& self, c10::SymInt k_s, int64_t dim, bool largest,
                                                     bool sorted, at::Tensor& values, at::Tensor& indices) {
  const char* op = "topk";
  const c10::DeviceIndex dev = CheckSameNpuDevice(op, {{"self", &self}, {"values", &values}, {"indices", &indices}});
  const int64_t k = k_s.expect_int();
  dim = WrapDim(op, dim, self.dim());
  const int64_t R = self.dim() == 0 ? 1 : self.size(dim);
  TORCH_CHECK(k >= 0 && k <= R, "selected index k out of range");
  const bool rows_native = IsNpuFloat(self.scalar_type()) && self.dim() > 0 && k > 0 && self.numel() > 0;
  const bool kernel = rows_native && R <= npu_kernels::kTopkMaxR && k <= npu_kernels::kTopkMaxK;
  const bool sort_rows = rows_native && !kernel && R <= int64_t(INT32_MAX);
  if (!kernel && !sort_rows) {  // the first k of the sorted rows (integers: the radix sort; others: the fallback)
    auto [sv, si] = at::sort(self, /*stable=*/true, dim, /*descending=*/largest);
    CopyToOut(op, sv.narrow(dim, 0, k), values);
    CopyToOut(op, si.narrow(dim, 0, k), indices);
    return {values, indices};
  }
  // Rows along the last dim.
  const at::Tensor x = dim == self.dim() - 1 ? Contiguous(self) : self.movedim(dim, -1).contiguous();
  std::vector<int64_t> out_shape(x.sizes().begin(), x.sizes().end());
  out_shape.back() = k;
  at::Tensor v = NpuEmpty(out_shape, x.scalar_type(), dev), i = NpuEmpty(out_shape, c10::kLong, dev);
  const uint64_t rows = uint64_t(x.numel() / R);
  npu_kernels::EwDType ew = self.scalar_type() == c10::kFloat ? npu_kernels::EwDType::F32
                            : self.scalar_type() == c10::kHalf ? npu_kernels::EwDType::F16
                                                               : npu_kernels::EwDType::BF16;
  if (sort_rows) {  // rows beyond the topk kernel: the sort, keeping the first k of every sorted run
    LaunchSortRows(x, rows, uint32_t(R), uint32_t(k), largest, v, i, dev);
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
  CopyToOut(op, v, values);
  CopyToOut(op, i, indices);
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

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("topk", TORCH_FN(torch_ops_nn::topk_npu));
  m.impl("topk.values", TORCH_FN(torch_ops_nn::topk_values_npu));
}
