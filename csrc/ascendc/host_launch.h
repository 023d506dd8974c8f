// The contract between the Ascend C host model (layer 2) and whoever launches kernels (layer 5).
// Layer 3 (the runtime) decides *when* and on which host thread a block runs; this header says
// *how* one logical AI core runs a kernel body with the local memories of a SoC profile.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <stdexcept>
#include <string>

#include "runtime/function_ref.h"

namespace ascendc_host {

enum class CoreType : uint8_t { AIV, AIC, MIX };

// Per-core local memory sizes and architecture of the simulated SoC (filled by layer 5 from the
// runtime's SoC profile; layer 2 must not depend on the runtime).
struct CoreConfig {
  int npu_arch = 2201;          // 2201 (910B, split) or 2002 (310P, coupled)
  uint32_t ub_bytes = 192 * 1024;
  uint32_t l1_bytes = 512 * 1024;
  uint32_t l0a_bytes = 64 * 1024;
  uint32_t l0b_bytes = 64 * 1024;
  uint32_t l0c_bytes = 128 * 1024;
  uint32_t bt_bytes = 1024;     // BiasTable
  uint32_t fb_bytes = 2048;     // Fixpipe buffer
  bool bounds_check = false;    // TORCH_OPS_NN_BOUNDS_CHECK: check every LocalTensor/GlobalTensor access
};

// A broken hardware rule inside a kernel. what() names the kernel, the rule and the numbers.
struct KernelError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct KernelCounters {
  uint64_t launches = 0;
  uint64_t blocks = 0;
  uint64_t gm_to_local_bytes = 0;
  uint64_t local_to_gm_bytes = 0;
  uint64_t vector_elem_ops = 0;
  uint64_t cube_macs = 0;
};

// Runs `body` as logical core `block_idx` of `block_num` on the calling host thread: sets up the
// per-core state (GetBlockIdx/GetBlockNum, local memory pools sized by `cfg`, queue and pipe
// bookkeeping), runs the body, checks what must hold at kernel end, and adds this block's
// counters to `kernel_name`'s totals. Any broken rule throws KernelError naming `kernel_name`.
// Safe to call concurrently from many threads (state is thread-local); reentrant use is not needed.
void RunBlock(const char* kernel_name, const CoreConfig& cfg, CoreType type, int32_t block_idx,
              int32_t block_num, npu_rt::FunctionRef<void()> body);

// Called once per launch (not per block) by the launcher, to count launches.
void CountLaunch(const char* kernel_name);

// Snapshot and reset of the per-kernel counters.
std::map<std::string, KernelCounters> CounterSnapshot();
void ResetCounters();

}  // namespace ascendc_host
