// Kernel-side debugging API: ascendc_assert (Ascend C "ascendc_assert", CPU and NPU domains).
//
//   ascendc_assert(t >= 0 && t < classes, "target %d is out of bounds [0, %d)", t, classes);
//
// A failed assertion stops the kernel; in this model it throws KernelError "<kernel>: Assertion `expr'
// failed: <message>", which the launch re-raises at the next synchronization (at the call with
// ASCEND_LAUNCH_BLOCKING=1). Kernels use it for data-dependent rules that the host cannot check without
// reading device memory (e.g. class indices).
#pragma once

namespace ascendc_host {
[[noreturn, gnu::cold]] void AssertFail(const char* expr, const char* fmt = nullptr, ...)
    __attribute__((format(printf, 2, 3)));
}  // namespace ascendc_host

#define ascendc_assert(expr, ...) \
  ((expr) ? (void)0 : ::ascendc_host::AssertFail(#expr __VA_OPT__(, ) __VA_ARGS__))
