// Layer 5: launching an Ascend C kernel (ascendc_kernels/) on the current npu stream.
//
//   LaunchKernel(KernelLaunch{"relu_kernel", CoreType::AIV, block_dim, device}, relu_kernel, tiling,
//                x.data_ptr(), y.data_ptr());
//
// enqueues one task on the device's current stream that runs `block_dim` logical AI cores on the
// host thread pool; each core calls `kernel(gm_args..., &tiling)` under ascendc_host::RunBlock
// (local memories of the device's SoC profile, rule checks, counters). The tiling struct is copied
// into the task. Errors inside the kernel surface at the next synchronization with the kernel name.
#pragma once
#include <c10/core/Device.h>

#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "ascendc/host_launch.h"
#include "core/npu_context.h"
#include "runtime/runtime.h"

namespace torch_ops_nn {

// The architecture our kernels target: __NPU_ARCH__ 2201, the Ascend 910B family.
constexpr int kKernelArch = 2201;

struct KernelLaunch {
  const char* name;               // kernel name, for errors, logs and counters (a string literal)
  ascendc_host::CoreType type;    // AIV: up to the SoC's vector cores; AIC/MIX: up to its cube cores
  int64_t block_dim;
  c10::DeviceIndex device;
  std::string detail = {};        // shapes/dtypes for the debug log (fill only if LogDebugEnabled())
  bool runs_on_2002 = false;      // the kernel avoids 2201-only instructions (DataCopyPad, Fixpipe)
};

// The registry of compiled kernels (python -m torch_ops_nn info lists it). Register each kernel
// once, next to its ATen op: TORCH_OPS_NN_REGISTER_KERNEL(relu_kernel);
std::vector<std::string> CompiledKernels();
bool RegisterKernelName(const char* name);
#define TORCH_OPS_NN_REGISTER_KERNEL(kernel) \
  static const bool kRegistered_##kernel = ::torch_ops_nn::RegisterKernelName(#kernel)

// The per-core configuration (local memory sizes, arch, bounds checks) of a device.
const ascendc_host::CoreConfig& CoreConfigFor(c10::DeviceIndex device);
// Max blockDim for a core type on the device's SoC (AIV count, AIC count; AI cores on 2002).
int64_t MaxBlockDim(c10::DeviceIndex device, ascendc_host::CoreType type);
bool LogDebugEnabled();
// Throws a clear error when block_dim is outside [1, MaxBlockDim].
void CheckBlockDim(const KernelLaunch& launch);

template <typename Tiling, typename... GmArgs>
void LaunchKernel(KernelLaunch launch, void (*kernel)(std::conditional_t<true, uint8_t*, GmArgs>..., uint8_t*),
                  const Tiling& tiling, GmArgs... gm_args) {
  static_assert(std::is_trivially_copyable_v<Tiling>, "tiling data must be trivially copyable");
  CheckBlockDim(launch);
  const ascendc_host::CoreConfig cfg = CoreConfigFor(launch.device);
  npu_rt::Stream& stream = CurrentRuntimeStream(launch.device);
  const char* name = launch.name;
  const ascendc_host::CoreType type = launch.type;
  const int32_t block_num = static_cast<int32_t>(launch.block_dim);
  if (!launch.detail.empty()) launch.detail += " blockDim=" + std::to_string(launch.block_dim);
  ascendc_host::CountLaunch(name);
  NPU_RT_CALL(npu_rt::LaunchKernel(
      stream, name, launch.block_dim,
      [=](int64_t block) {
        Tiling local = tiling;  // per block copy: kernels may treat tiling as their own
        ascendc_host::RunBlock(name, cfg, type, static_cast<int32_t>(block), block_num, [&] {
          kernel(reinterpret_cast<uint8_t*>(const_cast<void*>(static_cast<const void*>(gm_args)))...,
                 reinterpret_cast<uint8_t*>(&local));
        });
      },
      std::move(launch.detail)));
}

}  // namespace torch_ops_nn
