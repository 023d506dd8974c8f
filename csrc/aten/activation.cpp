// Activation ops on npu: argument checks, output, tiling, launch of the Ascend C kernel.
#include <ATen/core/Tensor.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include "activation.h"
#include "aten/kernel_launch.h"
#include "aten/op_common.h"

namespace torch_ops_nn {
namespace {

TORCH_OPS_NN_REGISTER_KERNEL(relu_kernel);

void LaunchRelu(const at::Tensor& x, const at::Tensor& y) {
  if (x.numel() == 0) return;
  const c10::DeviceIndex dev = x.device().index();
  const auto tiling = npu_kernels::unary_tiling(static_cast<uint64_t>(x.numel()), x.element_size(), SocInfoFor(dev));
  auto kernel = PickFloatKernel("relu", x.scalar_type(), &relu_kernel_float, &relu_kernel_half, &relu_kernel_bf16);
  KernelLaunch launch{"relu_kernel", ascendc_host::CoreType::AIV, tiling.block_dim, dev};
  if (LogDebugEnabled()) launch.detail = DescribeForLog({{"self", &x}}) + " blockDim=" + std::to_string(tiling.block_dim);
  LaunchKernel(std::move(launch), kernel, tiling, x.data_ptr(), y.data_ptr());
}

at::Tensor relu(const at::Tensor& self) {
  CheckSameNpuDevice("relu", {{"self", &self}});
  CheckFloatDtype("relu", "self", self);
  at::Tensor x = Contiguous(self);
  at::Tensor y = NpuEmpty(self.sizes(), self.scalar_type(), self.device().index());
  LaunchRelu(x, y);
  return y;
}

at::Tensor& relu_(at::Tensor& self) {
  CheckSameNpuDevice("relu_", {{"self", &self}});
  CheckFloatDtype("relu_", "self", self);
  if (self.is_contiguous()) {
    LaunchRelu(self, self);
  } else {
    self.copy_(relu(self));
  }
  return self;
}

}  // namespace
}  // namespace torch_ops_nn

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("relu", TORCH_FN(torch_ops_nn::relu));
  m.impl("relu_", TORCH_FN(torch_ops_nn::relu_));
}
