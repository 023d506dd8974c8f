// Layer 4: what the PyTorch glue shares: the current device and stream of the calling thread,
// the mapping between c10::Stream and runtime streams, and the translation of runtime errors into
// PyTorch's exception types (OutOfMemoryError, ValueError, RuntimeError).
#pragma once
#include <c10/core/Device.h>
#include <c10/core/Stream.h>

#include <exception>

#include "runtime/runtime.h"

namespace torch_ops_nn {

constexpr c10::DeviceType kNpu = c10::DeviceType::PrivateUse1;

c10::DeviceIndex CurrentDevice();
void SetCurrentDevice(c10::DeviceIndex index);  // validates the index
c10::DeviceIndex DeviceCount() noexcept;

c10::Stream CurrentStream(c10::DeviceIndex index = -1);
c10::Stream DefaultStream(c10::DeviceIndex index = -1);
void SetCurrentStream(const c10::Stream& stream);
npu_rt::Stream& RuntimeStream(const c10::Stream& stream);
inline npu_rt::Stream& CurrentRuntimeStream(c10::DeviceIndex index = -1) { return RuntimeStream(CurrentStream(index)); }

// Call inside `catch (...)`: rethrows the active exception as the matching c10 error.
[[noreturn]] void RethrowAsTorchError();

}  // namespace torch_ops_nn

// Wraps a statement that calls into the runtime so that its errors reach Python typed.
#define NPU_RT_CALL(...)                    \
  do {                                      \
    try {                                   \
      __VA_ARGS__;                          \
    } catch (...) {                         \
      ::torch_ops_nn::RethrowAsTorchError(); \
    }                                       \
  } while (0)
