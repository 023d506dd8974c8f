#include "aten/kernel_launch.h"

#include <c10/util/Exception.h>

#include <cstdlib>
#include <cstring>
#include <mutex>
#include <vector>

#include "runtime/log.h"

namespace torch_ops_nn {

namespace {
bool BoundsCheckFromEnv() {
  const char* v = std::getenv("TORCH_OPS_NN_BOUNDS_CHECK");
  return v && *v && std::strcmp(v, "0") != 0;
}
}  // namespace

namespace {
std::mutex& RegistryMutex() {
  static std::mutex mu;
  return mu;
}
std::vector<std::string>& Registry() {
  static std::vector<std::string> names;
  return names;
}
}  // namespace

bool RegisterKernelName(const char* name) {
  std::lock_guard<std::mutex> g(RegistryMutex());
  Registry().emplace_back(name);
  return true;
}

std::vector<std::string> CompiledKernels() {
  std::lock_guard<std::mutex> g(RegistryMutex());
  return Registry();
}

const ascendc_host::CoreConfig& CoreConfigFor(c10::DeviceIndex device) {
  static std::once_flag once;
  static std::vector<ascendc_host::CoreConfig> configs;
  std::call_once(once, [] {
    const bool bounds = BoundsCheckFromEnv();
    for (int d = 0; d < npu_rt::DeviceCount(); ++d) {
      const npu_rt::SocProfile& soc = *npu_rt::GetDeviceInfo(d).soc;
      ascendc_host::CoreConfig c;
      c.npu_arch = soc.npu_arch;
      c.ub_bytes = soc.ub_bytes;
      c.l1_bytes = soc.l1_bytes;
      c.l0a_bytes = soc.l0a_bytes;
      c.l0b_bytes = soc.l0b_bytes;
      c.l0c_bytes = soc.l0c_bytes;
      c.bt_bytes = soc.bt_bytes;
      c.fb_bytes = soc.fb_bytes;
      c.bounds_check = bounds;
      configs.push_back(c);
    }
  });
  TORCH_CHECK(device >= 0 && device < static_cast<int>(configs.size()), "invalid npu device ", device);
  return configs[device];
}

int64_t MaxBlockDim(c10::DeviceIndex device, ascendc_host::CoreType type) {
  const npu_rt::SocProfile& soc = *npu_rt::GetDeviceInfo(device).soc;
  if (soc.vector_cores == 0) return soc.cube_cores;  // coupled SoC: AI cores do both
  return type == ascendc_host::CoreType::AIV ? soc.vector_cores : soc.cube_cores;
}

bool LogDebugEnabled() { return npu_rt::log::Enabled(npu_rt::log::kDebug); }

void CheckBlockDim(const KernelLaunch& launch) {
  const npu_rt::SocProfile& soc = *npu_rt::GetDeviceInfo(launch.device).soc;
  // Our kernels are written for the split AIC/AIV architecture of the Ascend 910B family (most use
  // DataCopyPad, Fixpipe, ...). On a coupled 2002 SoC (310P) only kernels that say they avoid those
  // instructions run; the others are refused here, where the op is called.
  TORCH_CHECK_NOT_IMPLEMENTED(soc.npu_arch == kKernelArch || launch.runs_on_2002, launch.name, ": the torch_ops_nn kernels are built for ",
                              "__NPU_ARCH__ ", kKernelArch, " (Ascend910B family); npu:", static_cast<int>(launch.device), " is an ",
                              soc.name, " (arch ", soc.npu_arch, "). Use TORCH_OPS_NN_SOC=Ascend910B2 (or B1/B3/B4).");
  const int64_t max = MaxBlockDim(launch.device, launch.type);
  const char* kind = launch.type == ascendc_host::CoreType::AIV ? "vector (AIV)" : "cube (AIC)";
  TORCH_CHECK(launch.block_dim >= 1 && launch.block_dim <= max, launch.name, ": blockDim ", launch.block_dim,
              " is outside [1, ", max, "], the ", kind, " core count of ", npu_rt::GetDeviceInfo(launch.device).soc->name);
}

}  // namespace torch_ops_nn
