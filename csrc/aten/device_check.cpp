// CheckNoneSet (op_common.h): data-dependent rules read back eagerly, checked on the device in graphs.
#include <ATen/core/Tensor.h>
#include <ATen/ops/add.h>
#include <ATen/ops/any.h>
#include <ATen/ops/mul.h>
#include <c10/util/Exception.h>

#include <cstdio>
#include <string>

#include "aten/kernel_launch.h"
#include "aten/op_common.h"
#include "core/npu_context.h"
#include "device_check.h"

namespace torch_ops_nn {

TORCH_OPS_NN_REGISTER_KERNEL(device_check_kernel);

void CheckNoneSet(const at::Tensor& bad, const std::string& message) {
  if (bad.numel() == 0) return;
  const at::Tensor any = bad.numel() == 1 ? bad.reshape({}).to(c10::kBool) : at::any(bad);
  const c10::DeviceIndex dev = any.device().index();
  if (!CurrentRuntimeStream(dev).capturing()) {
    TORCH_CHECK(!any.item<bool>(), message);  // the CPU's error, at the call
    return;
  }
  npu_kernels::DeviceCheckTiling t{};
  std::snprintf(t.message, sizeof(t.message), "%s", message.c_str());
  const at::Tensor flag = any.contiguous();
  LaunchKernel(KernelLaunch{"device_check_kernel", ascendc_host::CoreType::AIV, 1, dev}, &device_check_kernel, t,
               flag.data_ptr());
}

void CheckNoneSet(std::initializer_list<std::pair<at::Tensor, std::string>> rules) {
  auto given = [](const at::Tensor& bad) { return bad.defined() && bad.numel() > 0; };
  at::Tensor code;  // bit i: rule i violated
  int64_t bit = 1;
  for (const auto& [bad, message] : rules) {
    if (given(bad)) {
      if (CurrentRuntimeStream(bad.device().index()).capturing()) {  // no read back: a device check each
        for (const auto& [b, m] : rules)
          if (given(b)) CheckNoneSet(b, m);
        return;
      }
      const at::Tensor b = at::mul(at::any(bad.reshape({-1})).to(c10::kLong), bit);
      code = code.defined() ? at::add(code, b) : b;
    }
    bit <<= 1;
  }
  if (!code.defined()) return;
  const int64_t c = code.item<int64_t>();
  bit = 1;
  for (const auto& [bad, message] : rules) {
    TORCH_CHECK(!(c & bit), message);
    bit <<= 1;
  }
}

}  // namespace torch_ops_nn
