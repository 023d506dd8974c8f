#include "runtime/soc_profile.h"

#include <stdexcept>

namespace npu_rt {

namespace {
constexpr uint32_t KiB = 1024;
constexpr uint64_t GiB = 1024ull * 1024 * 1024;
}  // namespace

const std::vector<SocProfile>& AllSocProfiles() {
  static const std::vector<SocProfile> profiles = {
      // name          arch  AIC AIV  UB        L1        L0A      L0B      L0C       BT      FB      HBM       GB/s   TFLOP/s clock verified
      {"Ascend910B1", 2201, 24, 48, 192 * KiB, 512 * KiB, 64 * KiB, 64 * KiB, 128 * KiB, 1 * KiB, 2 * KiB, 64 * GiB, 1600, 354.0, 1.8, true},
      {"Ascend910B2", 2201, 24, 48, 192 * KiB, 512 * KiB, 64 * KiB, 64 * KiB, 128 * KiB, 1 * KiB, 2 * KiB, 64 * GiB, 1600, 353.9, 1.8, true},
      {"Ascend910B3", 2201, 20, 40, 192 * KiB, 512 * KiB, 64 * KiB, 64 * KiB, 128 * KiB, 1 * KiB, 2 * KiB, 64 * GiB, 1600, 295.0, 1.8, false},
      {"Ascend910B4", 2201, 20, 40, 192 * KiB, 512 * KiB, 64 * KiB, 64 * KiB, 128 * KiB, 1 * KiB, 2 * KiB, 32 * GiB, 1600, 295.0, 1.8, false},
      {"Ascend310P3", 2002, 8, 0, 256 * KiB, 1024 * KiB, 64 * KiB, 64 * KiB, 256 * KiB, 0, 0, 24 * GiB, 204.8, 0.0, 0.0, false},
  };
  return profiles;
}

const SocProfile& FindSocProfile(const std::string& name) {
  std::string known;
  for (const auto& p : AllSocProfiles()) {
    if (name == p.name) return p;
    known += known.empty() ? "" : ", ";
    known += p.name;
  }
  throw std::invalid_argument("unknown SoC profile '" + name + "'; known profiles: " + known);
}

}  // namespace npu_rt
