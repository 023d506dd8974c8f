// A device-side check of a data-dependent rule (values in range, class indices valid): one scalar
// core reads a flag the op computed on the device and, when it is set, fails with the op's message,
// as a CUDA device-side assert does. Ops read such flags back eagerly (raising at the call, as the
// CPU does); inside an npu graph, where nothing may be read back, they launch this kernel instead and
// a replay with bad values raises at the next synchronization, naming the rule.
#pragma once
#include <cstdint>

namespace npu_kernels {

struct DeviceCheckTiling {
  char message[232];  // NUL-terminated
};

}  // namespace npu_kernels

extern "C" void device_check_kernel(uint8_t* flag, uint8_t* tiling);
