// Indexing ops on npu: index_select (embedding's forward goes through it) on the index_select kernel
// (ascendc_kernels/index_select.h).
#include <ATen/core/Tensor.h>
#include <ATen/native/Resize.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include <vector>

#include "aten/kernel_launch.h"
#include "aten/op_common.h"
#include "index_select.h"

namespace torch_ops_nn {

TORCH_OPS_NN_REGISTER_KERNEL(index_select_kernel);

namespace {

at::Tensor index_select_npu(const at::Tensor& self, int64_t dim, const at::Tensor& index) {
  const char* op = "index_select";
  const c10::DeviceIndex dev = CheckSameNpuDevice(op, {{"self", &self}, {"index", &index}});
  TORCH_CHECK_INDEX(index.dim() <= 1, op, "(): Index is supposed to be a vector, got a ", index.dim(),
                    "-D tensor of shape ", index.sizes());
  TORCH_CHECK_TYPE(index.scalar_type() == c10::kLong || index.scalar_type() == c10::kInt, op,
                   "(): Expected dtype int32 or int64 for index, got ", index.scalar_type());
  const int64_t nd = self.dim() == 0 ? 1 : self.dim();
  TORCH_CHECK_INDEX(dim >= -nd && dim < nd, op, "(): Dimension out of range (expected to be in range of [", -nd,
                    ", ", nd - 1, "], but got ", dim, ")");
  if (dim < 0) dim += nd;
  const at::Tensor x = self.dim() == 0 ? self.view({1}) : Contiguous(self);
  const int64_t n_idx = index.numel();
  std::vector<int64_t> sizes(x.sizes().begin(), x.sizes().end());
  const int64_t d = sizes[dim];
  sizes[dim] = n_idx;
  TORCH_CHECK_INDEX(d > 0 || n_idx == 0, op, "(): index out of range in self: dimension ", dim,
                    " has size 0 and ", n_idx, " indices were given");
  at::Tensor out = NpuEmpty(sizes, x.scalar_type(), dev);
  if (out.numel() > 0) {
    uint64_t outer = 1, inner = 1;
    for (int64_t i = 0; i < dim; ++i) outer *= uint64_t(sizes[i]);
    for (int64_t i = dim + 1; i < int64_t(sizes.size()); ++i) inner *= uint64_t(sizes[i]);
    const at::Tensor idx = index.contiguous();
    const auto t = npu_kernels::index_select_tiling(outer, uint64_t(d), inner * x.element_size(), uint64_t(n_idx),
                                                    idx.scalar_type() == c10::kLong, SocInfoFor(dev));
    KernelLaunch launch{"index_select_kernel", ascendc_host::CoreType::AIV, t.block_dim, dev};
    if (LogDebugEnabled()) launch.detail = DescribeForLog({{"self", &x}, {"index", &idx}}) + " dim=" + std::to_string(dim);
    LaunchKernel(std::move(launch), &index_select_kernel, t, x.data_ptr(), idx.data_ptr(), out.data_ptr());
  }
  if (self.dim() == 0) return out.squeeze(0);
  return out;
}

at::Tensor& index_select_out(const at::Tensor& self, int64_t dim, const at::Tensor& index, at::Tensor& out) {
  at::Tensor r = index_select_npu(self, dim, index);
  at::native::resize_output(out, r.sizes());
  out.copy_(r);
  return out;
}

}  // namespace
}  // namespace torch_ops_nn

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("index_select", TORCH_FN(torch_ops_nn::index_select_npu));
  m.impl("index_select.out", TORCH_FN(torch_ops_nn::index_select_out));
}
