// SoC profiles of the simulated NPU: the figures of shared/ascendc.md Part A, kept as data in one place
// so that a better figure is a one-line change.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace npu_rt {

struct SocProfile {
  const char* name;
  int npu_arch;            // 2201 = split AIC/AIV (910B), 2002 = coupled (310P)
  int cube_cores;          // AIC (or AI cores on a coupled SoC)
  int vector_cores;        // AIV (0 on a coupled SoC: the vector unit sits in each AI core)
  uint32_t ub_bytes;
  uint32_t l1_bytes;
  uint32_t l0a_bytes;
  uint32_t l0b_bytes;
  uint32_t l0c_bytes;
  uint32_t bt_bytes;       // BiasTable
  uint32_t fb_bytes;       // Fixpipe buffer
  uint64_t hbm_bytes;      // device memory
  double hbm_gbps;         // bandwidth, GB/s
  double cube_fp16_tflops; // peak
  double clock_ghz;
  bool figures_verified;   // false where shared/ascendc.md marks a figure "not verified"
};

const std::vector<SocProfile>& AllSocProfiles();
// Throws std::invalid_argument naming the known profiles when `name` is unknown.
const SocProfile& FindSocProfile(const std::string& name);

}  // namespace npu_rt
