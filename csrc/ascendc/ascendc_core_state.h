// Internal API of the Ascend C host model: the state of the logical AI core running on this host thread.
//
// For code inside csrc/ascendc (vector and cube instructions), not for kernels:
//   ascendc_host::CurrentCore()          -> CoreState& of the block running on this thread (throws if none)
//   core.pool[PhysBuf::L0A].base/.size   -> the core's local memories (thread-local, 4 KB aligned, reused)
//   core.PhysOf(TPosition)               -> physical buffer of a logical position (§2.1, per npu_arch);
//                                           PhysBuf::NONE when the position has no buffer on this core type
//   core.counters.cube_macs += ...       -> per-core counters (merged into the per-kernel totals at block end)
//   core.cfg.bounds_check                -> TORCH_OPS_NN_BOUNDS_CHECK: check every element access
//   ascendc_host::Fail("fmt", ...)       -> throws KernelError "<kernel_name>: <message>" (printf format)
//   ascendc_host::Operand(localTensor)   -> LocalOperand {ptr, bytes, pos} (kernel_tensor.h)
//   ascendc_host::CheckLocal(instr, role, op, PhysMask(PhysBuf::L0A), 512, footprint_bytes)
//                                        -> position / alignment / size-overflow check of one local operand
//   ascendc_host::CheckGlobal(instr, role, gm, footprint_bytes) -> GM range check (only with bounds_check)
//   ascendc_host::LocalCore()            -> same as CurrentCore(), without the "outside a kernel" check
// Messages follow the pattern "<kernel>: <Instr> <what> <rule with numbers>", e.g.
//   "relu_kernel: DataCopy GM->VECIN count 10 x 4 B = 40 B is not a multiple of 32 B (...)".
#pragma once
#include <cstdint>

#include "ascendc_types.h"
#include "host_launch.h"

namespace ascendc_host {

enum class PhysBuf : uint8_t { NONE = 0, GM, UB, L1, L0A, L0B, L0C, BT, FB, NUM };
constexpr uint32_t PhysMask(PhysBuf b) { return 1u << uint32_t(b); }
constexpr int kNumPhysBuf = int(PhysBuf::NUM);
constexpr int kNumPositions = int(AscendC::TPosition::MAX) + 1;
constexpr int kMaxPipeBuffers = 64;     // QBUF_MAX_LEN: buffers per TPipe
constexpr int kMaxQueBuffersPerPos = 8; // QUE_MAX_EVENT: queue buffers on one TPosition
constexpr int kNumEventIds = 8;
constexpr int kNumHardEvents = int(AscendC::HardEvent::MAX);

const char* PhysBufName(PhysBuf b);
const char* PositionName(AscendC::TPosition p);
const char* HardEventName(AscendC::HardEvent e);
const char* PipeName(pipe_t p);

struct Pool {
  uint8_t* base = nullptr;
  uint32_t size = 0;   // bytes usable by the kernel (CoreConfig size; 0 = not on this core type)
  uint32_t dirty = 0;  // high-water mark of bytes handed out this block; cleared at the next block start
};

struct CoreState {
  const char* kernel_name = "<no kernel>";
  CoreConfig cfg;
  CoreType type = CoreType::AIV;
  int32_t block_idx = 0;
  int32_t block_num = 1;
  Pool pool[kNumPhysBuf];
  PhysBuf pos_map[kNumPositions] = {};
  KernelCounters counters;
  void* live_pipe = nullptr;  // the one live AscendC::TPipe
  // Vector mask register (SetVectorMask / SetMaskCount / SetMaskNorm).
  uint64_t mask_lo = ~0ull, mask_hi = ~0ull;
  bool mask_counter_mode = false;
  // SetFlag/WaitFlag: bit `id` of flags[src][dst] is set between a SetFlag and its WaitFlag.
  uint8_t flags[PIPE_NUM][PIPE_NUM] = {};
  uint8_t event_ids[kNumHardEvents] = {};  // TPipe::AllocEventID bookkeeping (bit per id)
  uint64_t pad_value = 0;                  // SetPadValue
  bool pad_value_set = false;

  PhysBuf PhysOf(AscendC::TPosition p) const { return pos_map[uint8_t(p) < kNumPositions ? uint8_t(p) : 0]; }
  uint8_t* PoolBase(AscendC::TPosition p) const { return pool[int(PhysOf(p))].base; }
  // Marks [0, end) of a pool as used so the next block on this thread sees it cleared (determinism).
  void Touch(PhysBuf b, uint64_t end) {
    Pool& pl = pool[int(b)];
    if (end > pl.dirty) pl.dirty = end > pl.size ? pl.size : uint32_t(end);
  }
};

extern constinit thread_local CoreState* t_current_core;

[[noreturn]] void FailNoCore();
[[noreturn, gnu::cold]] void Fail(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

inline CoreState& CurrentCore() {
  CoreState* c = t_current_core;
  if (__builtin_expect(c == nullptr, 0)) FailNoCore();
  return *c;
}
inline CoreState& LocalCore() { return *t_current_core; }

// A local (on-chip) operand as the checks see it: start, bytes it covers (GetSize()*sizeof(T)), position.
struct LocalOperand {
  uint8_t* ptr;
  uint64_t bytes;
  AscendC::TPosition pos;
};
// A GM operand: start and bytes known to be valid from it (0 = unknown, never checked).
struct GlobalOperand {
  uint8_t* ptr;
  uint64_t bytes;
  bool no_l2 = false;  // SetL2CacheHint(CACHE_MODE_DISABLE): write with streaming stores
};

// Checks that `op` lies in one of the physical buffers in `allowed` (bitmask of PhysMask), starts
// `align`-aligned within it, and that `footprint_bytes` (the largest byte offset the instruction touches,
// exclusive) fits in the tensor. `instr` and `role` name the instruction and operand in the message.
void CheckLocal(const char* instr, const char* role, const LocalOperand& op, uint32_t allowed, uint32_t align,
                uint64_t footprint_bytes);
// With bounds_check on and a known GM size, checks footprint_bytes <= gm.bytes.
inline void CheckGlobal(const char* instr, const char* role, const GlobalOperand& gm, uint64_t footprint_bytes);
[[noreturn]] void FailGlobalRange(const char* instr, const char* role, const GlobalOperand& gm, uint64_t footprint);

inline void CheckGlobal(const char* instr, const char* role, const GlobalOperand& gm, uint64_t footprint_bytes) {
  if (gm.bytes != 0 && footprint_bytes > gm.bytes && LocalCore().cfg.bounds_check)
    FailGlobalRange(instr, role, gm, footprint_bytes);
}

}  // namespace ascendc_host
