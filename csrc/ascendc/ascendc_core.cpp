// Launch and per-core state of the Ascend C host model: RunBlock, the thread-local local-memory pools,
// TPipe bookkeeping, flags, the shared operand checks, error reporting and the per-kernel counters.
#include <cinttypes>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <new>
#include <string>

#include "cube_gemm.h"
#include "ascendc_core_state.h"
#include "kernel_sync.h"
#include "kernel_tpipe.h"

namespace ascendc_host {

using AscendC::HardEvent;
using AscendC::TPosition;

constinit thread_local CoreState* t_current_core = nullptr;

namespace {

// Bytes a fresh or reused pool is filled with before a block sees it: every block starts from the same
// contents no matter which host thread ran what before (0xFF = NaN for float/half, -1 for integers,
// so reading memory the kernel never wrote shows up).
constexpr uint8_t kPoisonByte = 0xFF;

// Whether each block's reused local memory is poisoned (refilled with kPoisonByte) before the block runs.
// Poisoning makes a kernel that reads memory it never wrote deterministic (it reads NaN / -1, whatever
// ran before on that host thread) and visible in tests, but refilling every block's UB costs as much as
// moving the data of a small kernel. So it is on in tests and debugging: TORCH_OPS_NN_POISON_UB=1
// (test/conftest.py sets it), or TORCH_OPS_NN_BOUNDS_CHECK=1; =0 forces it off. Default off. Fresh
// pool memory is always poisoned once.
bool PoisonEnabled(const CoreConfig& cfg) {
  static const int env = [] {
    const char* v = std::getenv("TORCH_OPS_NN_POISON_UB");
    if (v == nullptr || *v == '\0') return -1;
    return *v == '0' ? 0 : 1;
  }();
  return env < 0 ? cfg.bounds_check : env == 1;
}

struct ThreadPools {
  uint8_t* mem[kNumPhysBuf] = {};
  uint32_t cap[kNumPhysBuf] = {};
  ~ThreadPools() {
    for (int i = 0; i < kNumPhysBuf; ++i)
      if (mem[i]) ::operator delete(mem[i], std::align_val_t(4096));
  }
  uint8_t* Get(int i, uint32_t size) {
    if (size > cap[i]) {
      if (mem[i]) ::operator delete(mem[i], std::align_val_t(4096));
      uint32_t sz = (size + 4095u) & ~4095u;
      mem[i] = static_cast<uint8_t*>(::operator new(sz, std::align_val_t(4096)));
      std::memset(mem[i], kPoisonByte, sz);
      cap[i] = sz;
    }
    return mem[i];
  }
};

thread_local ThreadPools t_pools;
thread_local CoreState t_state;

// Per-kernel counters. Every launch counts (from the launching thread) and every block adds its
// counters (from the pool thread that ran it), so these are relaxed atomics in one slot per kernel
// name, found through a thread-local cache keyed by the name's address (kernel names are string
// literals): the hot path takes no lock and builds no string. The mutex guards only the registry of
// slots, touched on a thread's first use of a name. Slots live for the process (a reset zeroes them).
struct CounterSlot {
  std::atomic<uint64_t> launches{0}, blocks{0}, gm_to_local_bytes{0}, local_to_gm_bytes{0}, vector_elem_ops{0},
      cube_macs{0};
};
std::mutex g_counters_mu;
std::map<std::string, std::unique_ptr<CounterSlot>>& Registry() {
  static auto* m = new std::map<std::string, std::unique_ptr<CounterSlot>>();  // outlives pool threads
  return *m;
}
CounterSlot& SlotFor(const char* name) {
  thread_local std::unordered_map<const char*, CounterSlot*> cache;
  auto it = cache.find(name);
  if (it != cache.end()) return *it->second;
  std::lock_guard<std::mutex> lock(g_counters_mu);
  auto& slot = Registry()[name];
  if (!slot) slot = std::make_unique<CounterSlot>();
  cache.emplace(name, slot.get());
  return *slot;
}

void FillPositionMap(CoreState& c) {
  PhysBuf* m = c.pos_map;
  for (int i = 0; i < kNumPositions; ++i) m[i] = PhysBuf::NONE;
  auto set = [&](TPosition p, PhysBuf b) { m[int(p)] = b; };
  set(TPosition::GM, PhysBuf::GM);
  set(TPosition::VECIN, PhysBuf::UB);
  set(TPosition::VECOUT, PhysBuf::UB);
  set(TPosition::VECCALC, PhysBuf::UB);
  set(TPosition::A1, PhysBuf::L1);
  set(TPosition::B1, PhysBuf::L1);
  set(TPosition::TSCM, PhysBuf::L1);
  set(TPosition::A2, PhysBuf::L0A);
  set(TPosition::B2, PhysBuf::L0B);
  set(TPosition::CO1, PhysBuf::L0C);
  if (c.cfg.npu_arch == 2002) {
    set(TPosition::C1, PhysBuf::UB);
    set(TPosition::C2, PhysBuf::L0C);
    set(TPosition::CO2, PhysBuf::UB);
    set(TPosition::SPM, PhysBuf::L1);
  } else {
    set(TPosition::C1, PhysBuf::L1);
    set(TPosition::C2, PhysBuf::BT);
    set(TPosition::CO2, PhysBuf::GM);
    set(TPosition::SPM, PhysBuf::GM);
    set(TPosition::C2PIPE2GM, PhysBuf::FB);
  }
}

// Which local memories a core of this type has: on split 2201 an AIV has only UB, an AIC everything
// but UB; a MIX block (AIC + AIV run as one) and coupled 2002 cores have all.
bool CoreHas(const CoreState& c, PhysBuf b) {
  if (c.cfg.npu_arch == 2002) return b != PhysBuf::BT && b != PhysBuf::FB;
  if (c.type == CoreType::MIX) return true;
  if (c.type == CoreType::AIV) return b == PhysBuf::UB;
  return b != PhysBuf::UB;
}

uint32_t ConfigSize(const CoreConfig& cfg, PhysBuf b) {
  switch (b) {
    case PhysBuf::UB: return cfg.ub_bytes;
    case PhysBuf::L1: return cfg.l1_bytes;
    case PhysBuf::L0A: return cfg.l0a_bytes;
    case PhysBuf::L0B: return cfg.l0b_bytes;
    case PhysBuf::L0C: return cfg.l0c_bytes;
    case PhysBuf::BT: return cfg.bt_bytes;
    case PhysBuf::FB: return cfg.fb_bytes;
    default: return 0;
  }
}

const char* CoreTypeName(CoreType t) { return t == CoreType::AIV ? "AIV" : t == CoreType::AIC ? "AIC" : "MIX"; }

void MergeCounters(const char* name, const KernelCounters& k) {
  CounterSlot& t = SlotFor(name);
  constexpr auto relaxed = std::memory_order_relaxed;
  t.blocks.fetch_add(k.blocks, relaxed);
  if (k.gm_to_local_bytes) t.gm_to_local_bytes.fetch_add(k.gm_to_local_bytes, relaxed);
  if (k.local_to_gm_bytes) t.local_to_gm_bytes.fetch_add(k.local_to_gm_bytes, relaxed);
  if (k.vector_elem_ops) t.vector_elem_ops.fetch_add(k.vector_elem_ops, relaxed);
  if (k.cube_macs) t.cube_macs.fetch_add(k.cube_macs, relaxed);
}

void CheckFlagsAtEnd(const CoreState& c) {
  for (int s = 0; s < PIPE_NUM; ++s)
    for (int d = 0; d < PIPE_NUM; ++d)
      if (c.flags[s][d]) {
        int id = __builtin_ctz(c.flags[s][d]);
        Fail("kernel ended with SetFlag<%s_%s>(%d) not matched by a WaitFlag (a leftover flag corrupts the next "
             "operator)", PipeName(pipe_t(s)), PipeName(pipe_t(d)), id);
      }
}

}  // namespace

// ------------------------------------------------------------------ names
const char* PhysBufName(PhysBuf b) {
  static const char* n[] = {"none", "GM", "UB", "L1", "L0A", "L0B", "L0C", "BiasTable", "Fixpipe buffer"};
  return uint32_t(b) < sizeof(n) / sizeof(n[0]) ? n[int(b)] : "?";
}
const char* PositionName(TPosition p) {
  static const char* n[] = {"GM",     "A1",      "A2",  "B1",   "B2",        "C1",           "C2",  "CO1", "CO2",
                            "VECIN", "VECOUT", "VECCALC", "SPM", "TSCM", "C2PIPE2GM", "C2PIPE2LOCAL", "MAX"};
  return uint32_t(p) < sizeof(n) / sizeof(n[0]) ? n[int(p)] : "?";
}
const char* PipeName(pipe_t p) {
  static const char* n[] = {"S", "V", "M", "MTE1", "MTE2", "MTE3", "ALL", "MTE4", "MTE5", "V2", "FIX"};
  return uint32_t(p) < sizeof(n) / sizeof(n[0]) ? n[int(p)] : "?";
}
const char* HardEventName(HardEvent e) {
  static char buf[kNumHardEvents][16];
  static std::once_flag once;
  std::call_once(once, [] {
    for (int i = 0; i < kNumHardEvents; ++i) {
      PipePair pp = HardEventPipes(HardEvent(i));
      std::snprintf(buf[i], sizeof buf[i], "%s_%s", PipeName(pp.src), PipeName(pp.dst));
    }
  });
  return uint32_t(e) < uint32_t(kNumHardEvents) ? buf[int(e)] : "?";
}

// ------------------------------------------------------------------ errors
void FailNoCore() {
  throw KernelError("Ascend C API used outside a kernel launch (no ascendc_host::RunBlock on this thread)");
}

void Fail(const char* fmt, ...) {
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  const CoreState* c = t_current_core;
  std::string s = c ? c->kernel_name : "<no kernel>";
  s += ": ";
  s += msg;
  if (c && c->block_num > 1) s += " [block " + std::to_string(c->block_idx) + "/" + std::to_string(c->block_num) + "]";
  throw KernelError(s);
}

void FailGlobalRange(const char* instr, const char* role, const GlobalOperand& gm, uint64_t footprint) {
  Fail("%s %s GM range of %" PRIu64 " B exceeds the %" PRIu64 " B given to SetGlobalBuffer", instr, role, footprint,
       gm.bytes);
}
void FailLocalIndex(const char* what, uint64_t index, uint64_t size, TPosition pos) {
  Fail("%s %" PRIu64 " is beyond the %s tensor's size %" PRIu64, what, index, PositionName(pos), size);
}
void FailScalarPosition(const char* what, TPosition pos) {
  Fail("%s on a tensor in position %s (scalar access is allowed only in VECIN/VECOUT/VECCALC)", what,
       PositionName(pos));
}
void FailGlobalIndex(const char* what, uint64_t index, uint64_t size) {
  Fail("%s offset %" PRIu64 " is beyond the GlobalTensor's size %" PRIu64 " (SetGlobalBuffer)", what, index, size);
}

void CheckLocal(const char* instr, const char* role, const LocalOperand& op, uint32_t allowed, uint32_t align,
                uint64_t footprint) {
  const CoreState& c = LocalCore();
  PhysBuf b = c.PhysOf(op.pos);
  if (!(allowed & PhysMask(b))) {
    std::string need;
    for (int i = 1; i < kNumPhysBuf; ++i)
      if (allowed & (1u << i)) {
        if (!need.empty()) need += "/";
        need += PhysBufName(PhysBuf(i));
      }
    Fail("%s %s tensor is in position %s (%s), but the instruction needs %s", instr, role, PositionName(op.pos),
         PhysBufName(b), need.c_str());
  }
  const Pool& pl = c.pool[int(b)];
  if (op.ptr < pl.base || op.ptr > pl.base + pl.size)
    Fail("%s %s tensor (position %s) does not point into the core's %s", instr, role, PositionName(op.pos),
         PhysBufName(b));
  uint64_t addr = uint64_t(op.ptr - pl.base);
  if (align > 1 && addr % align != 0)
    Fail("%s %s tensor address %" PRIu64 " in %s is not %u-byte aligned", instr, role, addr, PhysBufName(b), align);
  if (footprint > op.bytes)
    Fail("%s %s footprint of %" PRIu64 " B exceeds the %s tensor's %" PRIu64 " B", instr, role, footprint,
         PositionName(op.pos), op.bytes);
}

void CheckExplicitLocal(TPosition pos, uint32_t addr, uint64_t bytes) {
  CoreState& c = CurrentCore();
  PhysBuf b = c.PhysOf(pos);
  if (b == PhysBuf::NONE || b == PhysBuf::GM)
    Fail("LocalTensor(%s, addr %u): position %s has no local buffer on %d", PositionName(pos), addr,
         PositionName(pos), c.cfg.npu_arch);
  const Pool& pl = c.pool[int(b)];
  if (uint64_t(addr) + bytes > pl.size)
    Fail("LocalTensor(%s, addr %u, %" PRIu64 " B) ends beyond the %u B %s", PositionName(pos), addr, bytes, pl.size,
         PhysBufName(b));
  c.Touch(b, uint64_t(addr) + bytes);
}

void CheckSetSize(const void* ptr, TPosition pos, uint64_t bytes) {
  CoreState& c = CurrentCore();
  PhysBuf b = c.PhysOf(pos);
  const Pool& pl = c.pool[int(b)];
  const uint8_t* p = static_cast<const uint8_t*>(ptr);
  if (pl.base == nullptr || p < pl.base || uint64_t(p - pl.base) + bytes > pl.size)
    Fail("LocalTensor::SetSize(%" PRIu64 " B) on a %s tensor would end beyond the %u B %s", bytes, PositionName(pos),
         pl.size, PhysBufName(b));
}

// ------------------------------------------------------------------ RunBlock and counters
void RunBlock(const char* kernel_name, const CoreConfig& cfg, CoreType type, int32_t block_idx, int32_t block_num,
              npu_rt::FunctionRef<void()> body) {
  if (t_current_core != nullptr)
    throw KernelError(std::string(kernel_name) + ": RunBlock called from inside a running kernel");
  if (cfg.npu_arch != 2201 && cfg.npu_arch != 2002)
    throw KernelError(std::string(kernel_name) + ": npu_arch " + std::to_string(cfg.npu_arch) +
                      " is not modelled (2201 or 2002)");
  if (block_num < 1 || block_num > 65535 || block_idx < 0 || block_idx >= block_num)
    throw KernelError(std::string(kernel_name) + ": block " + std::to_string(block_idx) + " of " +
                      std::to_string(block_num) + " is out of range (numBlocks in [1, 65535])");
  CoreState& c = t_state;
  c.kernel_name = kernel_name;
  c.cfg = cfg;
  c.type = type;
  c.block_idx = block_idx;
  c.block_num = block_num;
  c.counters = KernelCounters{};
  c.live_pipe = nullptr;
  c.mask_lo = c.mask_hi = ~0ull;
  c.mask_counter_mode = false;
  std::memset(c.flags, 0, sizeof c.flags);
  cube::CubeBlockBegin();
  std::memset(c.event_ids, 0, sizeof c.event_ids);
  c.pad_value = 0;
  c.pad_value_set = false;
  FillPositionMap(c);
  const bool poison = PoisonEnabled(cfg);
  for (int i = 0; i < kNumPhysBuf; ++i) {
    Pool& pl = c.pool[i];
    PhysBuf b = PhysBuf(i);
    uint32_t size = CoreHas(c, b) ? ConfigSize(cfg, b) : 0;
    size &= ~31u;
    if (size == 0) {
      // Keep the previous block's dirty region accounted for so that it is cleared when reused.
      if (poison && pl.base && pl.dirty) std::memset(pl.base, kPoisonByte, pl.dirty);
      pl = Pool{};
      continue;
    }
    uint8_t* base = t_pools.Get(i, size);
    if (poison && pl.base == base && pl.dirty) std::memset(base, kPoisonByte, pl.dirty);
    pl.base = base;
    pl.size = size;
    pl.dirty = 0;
  }
  struct Guard {
    ~Guard() { t_current_core = nullptr; }
  } guard;
  t_current_core = &c;
  body();
  CheckFlagsAtEnd(c);
  c.counters.blocks = 1;
  MergeCounters(kernel_name, c.counters);
}

void CountLaunch(const char* kernel_name) { SlotFor(kernel_name).launches.fetch_add(1, std::memory_order_relaxed); }

std::map<std::string, KernelCounters> CounterSnapshot() {
  std::lock_guard<std::mutex> lock(g_counters_mu);
  std::map<std::string, KernelCounters> out;
  for (const auto& [name, slot] : Registry()) {
    KernelCounters k;
    k.launches = slot->launches.load(std::memory_order_relaxed);
    k.blocks = slot->blocks.load(std::memory_order_relaxed);
    k.gm_to_local_bytes = slot->gm_to_local_bytes.load(std::memory_order_relaxed);
    k.local_to_gm_bytes = slot->local_to_gm_bytes.load(std::memory_order_relaxed);
    k.vector_elem_ops = slot->vector_elem_ops.load(std::memory_order_relaxed);
    k.cube_macs = slot->cube_macs.load(std::memory_order_relaxed);
    if (k.launches || k.blocks) out.emplace(name, k);  // a kernel not run since the last reset is absent
  }
  return out;
}

void ResetCounters() {
  std::lock_guard<std::mutex> lock(g_counters_mu);
  for (auto& [name, slot] : Registry())
    for (auto* a : {&slot->launches, &slot->blocks, &slot->gm_to_local_bytes, &slot->local_to_gm_bytes,
                    &slot->vector_elem_ops, &slot->cube_macs})
      a->store(0, std::memory_order_relaxed);
}

// ------------------------------------------------------------------ TPipe
void PipeConstruct(void* pipe) {
  CoreState& c = CurrentCore();
  if (c.live_pipe != nullptr && c.live_pipe != pipe)
    Fail("TPipe constructed while another TPipe is live (exactly one live TPipe per kernel; call Destroy() on the "
         "first one; the NPU would hang)");
  c.live_pipe = pipe;
  std::memset(c.event_ids, 0, sizeof c.event_ids);
}

void PipeDestruct(void* pipe) {
  CoreState* c = t_current_core;
  if (c && c->live_pipe == pipe) c->live_pipe = nullptr;
}

namespace {
uint8_t* PipeCarve(PipeState& ps, TPosition pos, uint32_t num, uint32_t len, const char* what, uint32_t* len32_out) {
  CoreState& c = CurrentCore();
  PhysBuf b = c.PhysOf(pos);
  if (b == PhysBuf::NONE || b == PhysBuf::GM)
    Fail("TPipe::InitBuffer %s: position %s maps to %s on %d (only local positions can hold buffers)", what,
         PositionName(pos), b == PhysBuf::GM ? "GM" : "no buffer", c.cfg.npu_arch);
  Pool& pl = c.pool[int(b)];
  if (pl.base == nullptr)
    Fail("TPipe::InitBuffer %s: position %s maps to %s, which a %s core of a %d SoC does not have", what,
         PositionName(pos), PhysBufName(b), CoreTypeName(c.type), c.cfg.npu_arch);
  if (num == 0 || len == 0) Fail("TPipe::InitBuffer %s: num %u and len %u must both be > 0", what, num, len);
  if (ps.buffers + num > uint32_t(kMaxPipeBuffers))
    Fail("TPipe::InitBuffer %s: %u buffers already in this TPipe, %u more exceed the limit of %d", what, ps.buffers,
         num, kMaxPipeBuffers);
  uint64_t len32 = (uint64_t(len) + 31) / 32 * 32;
  uint64_t total = len32 * num;
  uint32_t used = ps.cursor[int(b)];
  if (used + total > pl.size)
    Fail("TPipe::InitBuffer %s on %s: %u x %" PRIu64 " B (len %u rounded up to 32 B) = %" PRIu64
         " B does not fit in %s: pool %u B, %u B used, %u B free",
         what, PositionName(pos), num, len32, len, total, PhysBufName(b), pl.size, used, pl.size - used);
  uint8_t* p = pl.base + used;
  ps.cursor[int(b)] = uint32_t(used + total);
  ps.buffers += num;
  c.Touch(b, used + total);
  *len32_out = uint32_t(len32);
  return p;
}
}  // namespace

void PipeInitQueue(PipeState& ps, QueueState& q, TPosition pos, int32_t depth, uint32_t num, uint32_t len) {
  CoreState& c = CurrentCore();
  if (c.live_pipe == nullptr) Fail("TPipe::InitBuffer on a TPipe that was destroyed");
  uint32_t have = ps.que_bufs_per_pos[int(pos)];
  if (have + num > uint32_t(kMaxQueBuffersPerPos))
    Fail("TPipe::InitBuffer queue: max buffer number in same queue position is %d (position %s already has %u, "
         "this queue asks for %u)", kMaxQueBuffersPerPos, PositionName(pos), have, num);
  if (depth < 0) Fail("TPipe::InitBuffer queue: depth %d is negative", depth);
  uint32_t len32 = 0;
  uint8_t* p = PipeCarve(ps, pos, num, len, "queue", &len32);
  ps.que_bufs_per_pos[int(pos)] = uint8_t(have + num);
  q = QueueState{};
  for (uint32_t i = 0; i < num; ++i) q.buf[i] = p + uint64_t(i) * len32;
  q.len = len32;
  q.num = uint8_t(num);
  q.cap = uint8_t(depth == 0 ? num : uint32_t(depth));
  q.pos = pos;
}

void PipeInitBuf(PipeState& ps, TBufState& b, TPosition pos, uint32_t len) {
  CoreState& c = CurrentCore();
  if (c.live_pipe == nullptr) Fail("TPipe::InitBuffer on a TPipe that was destroyed");
  uint32_t len32 = 0;
  b.base = PipeCarve(ps, pos, 1, len, "TBuf", &len32);
  b.len = len32;
  b.pos = pos;
}

void PipeReset(PipeState& ps) {
  ps = PipeState{};
  if (t_current_core) std::memset(t_current_core->event_ids, 0, sizeof t_current_core->event_ids);
}

int8_t PipeAllocEventID(HardEvent e, bool take) {
  CoreState& c = CurrentCore();
  if (uint32_t(e) >= uint32_t(kNumHardEvents)) Fail("AllocEventID: invalid HardEvent %d", int(e));
  uint8_t& used = c.event_ids[int(e)];
  for (int id = 0; id < kNumEventIds; ++id)
    if (!(used & (1u << id))) {
      if (take) used |= uint8_t(1u << id);
      return int8_t(id);
    }
  Fail("AllocEventID<%s>: all %d event IDs are allocated (release some with ReleaseEventID)", HardEventName(e),
       kNumEventIds);
}

void PipeReleaseEventID(HardEvent e, int8_t id) {
  CoreState& c = CurrentCore();
  if (uint32_t(e) >= uint32_t(kNumHardEvents) || id < 0 || id >= kNumEventIds)
    Fail("ReleaseEventID: invalid event %d / id %d", int(e), int(id));
  uint8_t& used = c.event_ids[int(e)];
  if (!(used & (1u << id))) Fail("ReleaseEventID<%s>(%d): the ID was not allocated", HardEventName(e), int(id));
  used &= uint8_t(~(1u << id));
}

// ------------------------------------------------------------------ queues and buffers
void QueueState::FailNoIdle() const {
  Fail("TQue::AllocTensor on %s: no idle buffer (all %u buffers are allocated or queued; FreeTensor one first)",
       PositionName(pos), num == 0 ? 0u : unsigned(num));
}
void QueueState::FailFull() const {
  Fail("TQue::EnQue on %s: the queue is full (%u tensors queued, depth %u; DeQue first)", PositionName(pos),
       unsigned(count), unsigned(cap));
}
void QueueState::FailEmpty() const {
  if (num == 0) Fail("TQue::DeQue on a queue with no buffers (InitBuffer not called)");
  Fail("TQue::DeQue on %s: the queue is empty (EnQue first)", PositionName(pos));
}
void QueueState::FailForeign(const char* what, const void* p) const {
  if (num == 0) Fail("TQue::%s on a queue with no buffers (InitBuffer not called)", what);
  int i = Find(p);
  if (i < 0) Fail("TQue::%s on %s: the tensor was not allocated from this queue", what, PositionName(pos));
  static const char* st[] = {"free", "allocated", "enqueued", "dequeued"};
  Fail("TQue::%s on %s: the tensor's buffer is %s", what, PositionName(pos), st[int(state[i])]);
}
void TBufState::FailGet(const char* what, uint64_t offset, uint64_t bytes) const {
  if (base == nullptr) Fail("%s on a TBuf with no buffer (InitBuffer not called)", what);
  if (offset % 32 != 0) Fail("%s offset %" PRIu64 " B is not 32-byte aligned", what, offset);
  Fail("%s: offset %" PRIu64 " B + %" PRIu64 " B is beyond the %u B buffer", what, offset, bytes, len);
}

// ------------------------------------------------------------------ flags
PipePair HardEventPipes(HardEvent e) {
  static const PipePair map[] = {
      {PIPE_MTE2, PIPE_MTE1}, {PIPE_MTE1, PIPE_MTE2}, {PIPE_MTE1, PIPE_M},    {PIPE_M, PIPE_MTE1},
      {PIPE_MTE2, PIPE_V},    {PIPE_V, PIPE_MTE2},    {PIPE_MTE3, PIPE_V},    {PIPE_V, PIPE_MTE3},
      {PIPE_M, PIPE_V},       {PIPE_V, PIPE_M},       {PIPE_V, PIPE_V},       {PIPE_MTE3, PIPE_MTE1},
      {PIPE_MTE1, PIPE_MTE3}, {PIPE_MTE1, PIPE_V},    {PIPE_MTE2, PIPE_M},    {PIPE_M, PIPE_MTE2},
      {PIPE_V, PIPE_MTE1},    {PIPE_M, PIPE_FIX},     {PIPE_FIX, PIPE_M},     {PIPE_MTE3, PIPE_MTE2},
      {PIPE_MTE2, PIPE_MTE3}, {PIPE_S, PIPE_V},       {PIPE_V, PIPE_S},       {PIPE_S, PIPE_MTE2},
      {PIPE_MTE2, PIPE_S},    {PIPE_S, PIPE_MTE3},    {PIPE_MTE3, PIPE_S},    {PIPE_MTE2, PIPE_FIX},
      {PIPE_FIX, PIPE_MTE2},  {PIPE_FIX, PIPE_S},     {PIPE_M, PIPE_S},       {PIPE_FIX, PIPE_MTE3},
      {PIPE_MTE1, PIPE_FIX},  {PIPE_FIX, PIPE_MTE1},  {PIPE_FIX, PIPE_FIX},
  };
  static_assert(sizeof(map) / sizeof(map[0]) == size_t(kNumHardEvents));
  if (uint32_t(e) >= uint32_t(kNumHardEvents)) Fail("invalid HardEvent %d", int(e));
  return map[int(e)];
}

namespace {
// 2201 split cores: an AIV has no cube pipes (M, MTE1, FIX), an AIC no vector pipe.
void CheckPipesOnCore(const CoreState& c, pipe_t src, pipe_t dst, const char* instr) {
  if (c.cfg.npu_arch != 2201 || c.type == CoreType::MIX) return;
  auto cube = [](pipe_t p) { return p == PIPE_M || p == PIPE_MTE1 || p == PIPE_FIX; };
  bool bad = c.type == CoreType::AIV ? (cube(src) || cube(dst)) : (src == PIPE_V || dst == PIPE_V);
  if (bad)
    Fail("%s<%s_%s>: this event pair is not valid on a 2201 %s core", instr, PipeName(src), PipeName(dst),
         CoreTypeName(c.type));
}
}  // namespace

void FlagSet(pipe_t src, pipe_t dst, int32_t id, const char* instr) {
  CoreState& c = CurrentCore();
  if (src >= PIPE_NUM || dst >= PIPE_NUM) Fail("%s: invalid pipe", instr);
  CheckPipesOnCore(c, src, dst, instr);
  if (id < 0 || id >= kNumEventIds) Fail("%s<%s_%s>: event id %d is out of range [0, 7]", instr, PipeName(src), PipeName(dst), id);
  uint8_t& f = c.flags[src][dst];
  if (f & (1u << id))
    Fail("%s<%s_%s>(%d) set twice without a WaitFlag in between (undefined on the NPU; a later "
         "PipeBarrier<PIPE_ALL> hangs)", instr, PipeName(src), PipeName(dst), id);
  f |= uint8_t(1u << id);
}

void FlagWait(pipe_t src, pipe_t dst, int32_t id, const char* instr) {
  CoreState& c = CurrentCore();
  if (src >= PIPE_NUM || dst >= PIPE_NUM) Fail("%s: invalid pipe", instr);
  if (id < 0 || id >= kNumEventIds) Fail("%s<%s_%s>: event id %d is out of range [0, 7]", instr, PipeName(src), PipeName(dst), id);
  uint8_t& f = c.flags[src][dst];
  if (!(f & (1u << id)))
    Fail("%s<%s_%s>(%d) without a matching SetFlag before it (the NPU would wait forever)", instr, PipeName(src),
         PipeName(dst), id);
  f &= uint8_t(~(1u << id));
}

}  // namespace ascendc_host
