// Vector instructions: operand checks, the count form (straight into the SIMD kernel table), the
// mask/repeat form (gather each repeat into a contiguous scratch, run the same kernel, scatter the
// active elements back), Compare/Select and the reductions.
#include <array>
#include <cinttypes>
#include <cstdlib>
#include <cstring>

#include "ascendc_vec_kernels.h"

namespace ascendc_host {

// ------------------------------------------------------------------ kernel table selection
namespace vk {
std::atomic<const Table*> g_table{nullptr};

const Table* BuildTable() {
  static const Table table = [] {
    Table t;
    FillGeneric(t);
    const char* want = std::getenv("TORCH_OPS_NN_VEC_ISA");  // generic | avx2 | avx512 (default: best)
    std::string w = want ? want : "";
#if defined(__x86_64__)
    __builtin_cpu_init();
    bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("f16c");
    bool avx512 = avx2 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                  __builtin_cpu_supports("avx512vl") &&
                  __builtin_cpu_supports("avx512dq");
    if (avx2 && w != "generic") FillAvx2(t);
    if (avx512 && w != "generic" && w != "avx2") FillAvx512(t);
#endif
    return t;
  }();
  g_table.store(&table, std::memory_order_release);
  return &table;
}
}  // namespace vk

const char* VecIsaName() { return vk::Kernels().isa; }

namespace {

using vk::Kernels;

constexpr uint32_t kDTSize[kNumDT] = {1, 1, 2, 2, 2, 2, 4, 4, 4, 8, 8, 8};
constexpr const char* kDTName[kNumDT] = {"int8",  "uint8",  "int16", "uint16", "half",   "bfloat16",
                                         "int32", "uint32", "float", "int64",  "uint64", "double"};
constexpr const char* kBinName[] = {"Add", "Sub", "Mul", "Div", "Max", "Min", "And", "Or"};
constexpr const char* kScalName[] = {"Adds", "Muls", "Maxs", "Mins", "LeakyRelu", "ShiftLeft", "ShiftRight", "Axpy"};
constexpr const char* kUnName[] = {"Relu", "Exp", "Ln", "Sqrt", "Rsqrt", "Reciprocal", "Abs", "Not"};
constexpr const char* kRoundName[] = {"CAST_NONE", "CAST_RINT",  "CAST_FLOOR", "CAST_CEIL",
                                      "CAST_ROUND", "CAST_TRUNC", "CAST_ODD"};

inline uint32_t Esz(DT dt) { return kDTSize[int(dt)]; }

// The common passing case inline (no call, no message); CheckLocal reports the details of a failure.
inline void CheckVec(const char* instr, const char* role, const LocalOperand& op, uint64_t footprint,
                     uint32_t align = 32) {
  const CoreState& c = LocalCore();
  if (__builtin_expect(c.PhysOf(op.pos) == PhysBuf::UB, 1)) {
    const Pool& pl = c.pool[int(PhysBuf::UB)];
    const uint64_t addr = uint64_t(op.ptr - pl.base);
    if (op.ptr >= pl.base && addr <= pl.size && addr % align == 0 && footprint <= op.bytes) return;
  }
  CheckLocal(instr, role, op, PhysMask(PhysBuf::UB), align, footprint);
}

void CheckCount(const char* instr, int64_t count) {
  if (count < 0) Fail("%s count %" PRId64 " is negative", instr, count);
}

[[noreturn]] void FailDtype(const char* instr, DT dt) {
  Fail("%s does not support dtype %s on this model (2201 dtype sets, shared/ascendc.md §4.2)", instr, kDTName[int(dt)]);
}

// ------------------------------------------------------------------ masks and repeat geometry
struct Mask128 {
  uint64_t w[2] = {0, 0};
  bool Test(uint32_t e) const { return (w[e >> 6] >> (e & 63)) & 1u; }
  static Mask128 FirstN(uint64_t n) {
    Mask128 m;
    if (n >= 128) { m.w[0] = m.w[1] = ~0ull; }
    else if (n >= 64) { m.w[0] = ~0ull; m.w[1] = n == 64 ? 0 : (~0ull >> (128 - n)); }
    else { m.w[0] = n == 0 ? 0 : (~0ull >> (64 - n)); }
    return m;
  }
  Mask128 And(const Mask128& o) const { Mask128 m; m.w[0] = w[0] & o.w[0]; m.w[1] = w[1] & o.w[1]; return m; }
  uint32_t Count() const { return uint32_t(__builtin_popcountll(w[0]) + __builtin_popcountll(w[1])); }
  bool Empty() const { return (w[0] | w[1]) == 0; }
};

struct Plan {
  uint32_t repeats = 0;
  Mask128 full, last;  // mask of every repeat but the last, and of the last
};

Plan MakePlan(const char* instr, MaskArg m, int64_t repeat, uint32_t epr) {
  CoreState& c = LocalCore();
  Plan p;
  if (c.mask_counter_mode) {
    uint64_t n = m.kind == MaskArg::REG ? c.mask_lo : m.lo;
    if (m.kind != MaskArg::REG) c.mask_lo = n;
    if (n == 0) return p;
    p.repeats = uint32_t((n + epr - 1) / epr);
    p.full = Mask128::FirstN(epr);
    p.last = Mask128::FirstN(n - uint64_t(p.repeats - 1) * epr);
    return p;
  }
  if (repeat < 0 || repeat > 255) Fail("%s repeatTime %" PRId64 " is out of range [0, 255]", instr, repeat);
  Mask128 mk;
  if (m.kind == MaskArg::REG) { mk.w[0] = c.mask_lo; mk.w[1] = c.mask_hi; }
  else if (m.kind == MaskArg::BITS) { mk.w[0] = m.lo; mk.w[1] = m.hi; }
  else mk = Mask128::FirstN(m.lo < epr ? m.lo : epr);  // continuous masks clamp to a repeat
  if (m.kind != MaskArg::REG) { c.mask_lo = mk.w[0]; c.mask_hi = mk.w[1]; }
  mk = mk.And(Mask128::FirstN(epr));
  if (mk.Empty()) return p;  // mask 0 = NOP
  p.repeats = uint32_t(repeat);
  p.full = p.last = mk;
  return p;
}

struct RepOp {
  uint8_t* base;
  uint32_t esz;
  uint32_t blk;  // block stride (32 B blocks)
  uint32_t rep;  // repeat stride (32 B blocks)
  uint64_t Off(uint32_t r, uint32_t e) const {
    uint32_t epb = 32 / esz;
    return (uint64_t(r) * rep + uint64_t(e / epb) * blk) * 32 + uint64_t(e % epb) * esz;
  }
};

uint64_t ExtentOne(const RepOp& o, uint32_t r, const Mask128& m, uint32_t epr) {
  if (o.blk >= 1 && !m.Empty()) {  // offsets grow with the lane: the highest active lane ends furthest
    const uint32_t hi = m.w[1] ? 127u - uint32_t(__builtin_clzll(m.w[1])) : 63u - uint32_t(__builtin_clzll(m.w[0]));
    if (hi < epr) return o.Off(r, hi) + o.esz;
  }
  if (o.blk == 0) {  // every block of the repeat is the same one: its furthest active position
    const uint32_t epb = 32 / o.esz;
    for (uint32_t j = epb; j-- > 0;)
      for (uint32_t e = j; e < epr; e += epb)
        if (m.Test(e)) return o.Off(r, j) + o.esz;
    return 0;
  }
  uint64_t ext = 0;
  for (uint32_t e = 0; e < epr; ++e)
    if (m.Test(e)) {
      uint64_t x = o.Off(r, e) + o.esz;
      if (x > ext) ext = x;
    }
  return ext;
}
// Largest byte offset (exclusive) that the active elements of all repeats touch.
uint64_t Extent(const RepOp& o, const Plan& p, uint32_t epr) {
  if (p.repeats == 0) return 0;
  uint64_t ext = ExtentOne(o, p.repeats - 1, p.last, epr);
  if (p.repeats >= 2) {
    uint64_t e2 = ExtentOne(o, p.repeats - 2, p.full, epr);
    if (e2 > ext) ext = e2;
  }
  return ext;
}

// Copies the blocks of repeat r that hold an active element into a contiguous scratch.
void Gather(uint8_t* tmp, const RepOp& o, uint32_t r, const Mask128& m, uint32_t epr) {
  uint32_t epb = 32 / o.esz;
  uint32_t nblk = (epr + epb - 1) / epb;
  for (uint32_t b = 0; b < nblk; ++b) {
    bool any = false;
    for (uint32_t e = b * epb; e < (b + 1) * epb && e < epr; ++e) any |= m.Test(e);
    if (any) std::memcpy(tmp + b * 32, o.base + (uint64_t(r) * o.rep + uint64_t(b) * o.blk) * 32, 32);
  }
}
// Writes the active elements of a contiguous scratch back to repeat r.
void Scatter(const RepOp& o, const uint8_t* tmp, uint32_t r, const Mask128& m, uint32_t epr) {
  uint32_t epb = 32 / o.esz;
  uint32_t nblk = (epr + epb - 1) / epb;
  for (uint32_t b = 0; b < nblk; ++b) {
    uint8_t* dst = o.base + (uint64_t(r) * o.rep + uint64_t(b) * o.blk) * 32;
    uint32_t lo = b * epb, hi = (b + 1) * epb < epr ? (b + 1) * epb : epr;
    uint32_t n = 0;
    for (uint32_t e = lo; e < hi; ++e) n += m.Test(e);
    if (n == 0) continue;
    if (n == epb) { std::memcpy(dst, tmp + b * 32, 32); continue; }
    for (uint32_t e = lo; e < hi; ++e)
      if (m.Test(e)) std::memcpy(dst + (e - lo) * o.esz, tmp + e * o.esz, o.esz);
  }
}

void CheckRepOp(const char* instr, const char* role, const LocalOperand& op, const RepOp& ro, const Plan& p,
                uint32_t epr) {
  CheckVec(instr, role, op, Extent(ro, p, epr));
}

void CheckDstBlk(const char* instr, uint32_t blk) {
  if (blk == 0) Fail("%s dstBlkStride is 0 (must not be 0)", instr);
}

// Runs a repeat-form element-wise instruction: up to two sources, one destination.
template <class F>
void RunRepeats(const char* instr, const Plan& p, uint32_t epr, const RepOp& d, const RepOp* s0, const RepOp* s1,
                bool gather_dst, F&& compute) {
  alignas(64) uint8_t t0[512], t1[512], td[512];
  uint64_t active = 0;
  for (uint32_t r = 0; r < p.repeats; ++r) {
    const Mask128& m = r + 1 == p.repeats ? p.last : p.full;
    if (s0) Gather(t0, *s0, r, m, epr);
    if (s1) Gather(t1, *s1, r, m, epr);
    if (gather_dst) Gather(td, d, r, m, epr);
    compute(td, t0, t1);
    Scatter(d, td, r, m, epr);
    active += m.Count();
  }
  (void)instr;
  LocalCore().counters.vector_elem_ops += active;
}

// ------------------------------------------------------------------ scalar helpers for reductions
inline float LoadF(DT dt, const uint8_t* p) {
  if (dt == DT::F16) { uint16_t b; std::memcpy(&b, p, 2); return HalfBitsToFloat(b); }
  float f;
  std::memcpy(&f, p, 4);
  return f;
}
inline void StoreF(DT dt, uint8_t* p, float v) {
  if (dt == DT::F16) { uint16_t b = FloatToHalfBits(v); std::memcpy(p, &b, 2); return; }
  std::memcpy(p, &v, 4);
}
// Rounds a partial sum to the instruction's dtype; half partial sums saturate at +-65504.
inline float RoundPartial(DT dt, float x) {
  if (dt != DT::F16) return x;
  float h = HalfBitsToFloat(FloatToHalfBits(x));
  if (__builtin_isinf(h) && !__builtin_isinf(x)) h = h > 0 ? 65504.0f : -65504.0f;
  return h;
}
// Pairwise tree: v[i] = v[2i] + v[2i+1] per level; an odd last element is carried up.
float TreeSum(DT dt, float* v, uint32_t n) {
  if (n == 0) return 0.0f;
  while (n > 1) {
    uint32_t h = n / 2;
    for (uint32_t i = 0; i < h; ++i) v[i] = RoundPartial(dt, v[2 * i] + v[2 * i + 1]);
    if (n & 1) v[h] = v[n - 1];
    n = (n + 1) / 2;
  }
  return v[0];
}
inline void StoreIndex(DT dt, uint8_t* p, uint32_t idx, bool force32) {
  if (dt == DT::F16 && !force32) { uint16_t b = uint16_t(idx); std::memcpy(p, &b, 2); }
  else std::memcpy(p, &idx, 4);
}
inline bool Better(RedOp op, float a, float best) { return op == RedOp::Max ? a > best : a < best; }
const char* RedName(RedOp op, const char* kind) {
  static const char* names[3][4] = {{"WholeReduceSum", "BlockReduceSum", "ReduceSum", ""},
                                    {"WholeReduceMax", "BlockReduceMax", "ReduceMax", ""},
                                    {"WholeReduceMin", "BlockReduceMin", "ReduceMin", ""}};
  int k = kind[0] == 'W' ? 0 : kind[0] == 'B' ? 1 : 2;
  return names[int(op)][k];
}

}  // namespace

// ------------------------------------------------------------------ element-wise
void VBinary(BinOp op, DT dt, const LO& d, const LO& a, const LO& b, int64_t count) {
  const char* instr = kBinName[int(op)];
  auto fn = Kernels().bin[int(op)][int(dt)];
  if (!fn) FailDtype(instr, dt);
  CheckCount(instr, count);
  if (count == 0) return;
  uint64_t bytes = uint64_t(count) * Esz(dt);
  CheckVec(instr, "dst", d, bytes);
  CheckVec(instr, "src0", a, bytes);
  CheckVec(instr, "src1", b, bytes);
  fn(d.ptr, a.ptr, b.ptr, size_t(count));
  LocalCore().counters.vector_elem_ops += uint64_t(count);
}

void VBinaryRep(BinOp op, DT dt, const LO& d, const LO& a, const LO& b, MaskArg m, int64_t repeat,
                const RepParams& rp) {
  const char* instr = kBinName[int(op)];
  auto fn = Kernels().bin[int(op)][int(dt)];
  if (!fn) FailDtype(instr, dt);
  uint32_t esz = Esz(dt), epr = 256 / esz;
  Plan p = MakePlan(instr, m, repeat, epr);
  if (p.repeats == 0) return;
  CheckDstBlk(instr, rp.blk[0]);
  RepOp rd{d.ptr, esz, rp.blk[0], rp.rep[0]}, r0{a.ptr, esz, rp.blk[1], rp.rep[1]}, r1{b.ptr, esz, rp.blk[2], rp.rep[2]};
  CheckRepOp(instr, "dst", d, rd, p, epr);
  CheckRepOp(instr, "src0", a, r0, p, epr);
  CheckRepOp(instr, "src1", b, r1, p, epr);
  // Fast path: dst and src0 whole adjacent blocks, src1 one block per repeat (src1BlkStride 0: a per-row
  // operand from Brcb), the same prefix of lanes in every repeat: each repeat is one count-form run
  // against the block tiled over the repeat.
  // src0 is read in place, so it must be dst itself (same repeat stride) or clear of it (the general
  // path copies each repeat's sources before writing).
  const uint32_t cnt = p.full.Count();
  const Mask128 prefix = Mask128::FirstN(cnt);
  const uint64_t d_end = uint64_t(p.repeats - 1) * rp.rep[0] * 32 + 256;
  const uint64_t a_end = uint64_t(p.repeats - 1) * rp.rep[1] * 32 + 256;
  const bool src0_ok = (a.ptr == d.ptr && rp.rep[1] == rp.rep[0]) || a.ptr >= d.ptr + d_end || d.ptr >= a.ptr + a_end;
  if (rp.blk[0] == 1 && rp.blk[1] == 1 && rp.blk[2] == 0 && src0_ok && p.full.w[0] == p.last.w[0] &&
      p.full.w[1] == p.last.w[1] && p.full.w[0] == prefix.w[0] && p.full.w[1] == prefix.w[1]) {
    alignas(64) uint8_t tile[256];
    for (uint32_t r = 0; r < p.repeats; ++r) {
      const uint8_t* blk = b.ptr + uint64_t(r) * rp.rep[2] * 32;
      for (uint32_t q = 0; q < 8; ++q) std::memcpy(tile + 32 * q, blk, 32);
      fn(d.ptr + uint64_t(r) * rp.rep[0] * 32, a.ptr + uint64_t(r) * rp.rep[1] * 32, tile, cnt);
    }
    LocalCore().counters.vector_elem_ops += uint64_t(cnt) * p.repeats;
    return;
  }
  RunRepeats(instr, p, epr, rd, &r0, &r1, false,
             [&](uint8_t* td, const uint8_t* t0, const uint8_t* t1) { fn(td, t0, t1, epr); });
}

void VScalar(ScalOp op, DT dt, const LO& d, const LO& a, const void* s, int64_t count) {
  const char* instr = kScalName[int(op)];
  auto fn = Kernels().scal[int(op)][int(dt)];
  if (!fn) FailDtype(instr, dt);
  CheckCount(instr, count);
  if (count == 0) return;
  uint64_t bytes = uint64_t(count) * Esz(dt);
  CheckVec(instr, "dst", d, bytes);
  CheckVec(instr, "src", a, bytes);
  fn(d.ptr, a.ptr, s, size_t(count));
  LocalCore().counters.vector_elem_ops += uint64_t(count);
}

void VScalarRep(ScalOp op, DT dt, const LO& d, const LO& a, const void* s, MaskArg m, int64_t repeat,
                const RepParams& rp) {
  const char* instr = kScalName[int(op)];
  auto fn = Kernels().scal[int(op)][int(dt)];
  if (!fn) FailDtype(instr, dt);
  uint32_t esz = Esz(dt), epr = 256 / esz;
  Plan p = MakePlan(instr, m, repeat, epr);
  if (p.repeats == 0) return;
  CheckDstBlk(instr, rp.blk[0]);
  RepOp rd{d.ptr, esz, rp.blk[0], rp.rep[0]}, r0{a.ptr, esz, rp.blk[1], rp.rep[1]};
  CheckRepOp(instr, "dst", d, rd, p, epr);
  CheckRepOp(instr, "src", a, r0, p, epr);
  RunRepeats(instr, p, epr, rd, &r0, nullptr, op == ScalOp::Axpy,
             [&](uint8_t* td, const uint8_t* t0, const uint8_t*) { fn(td, t0, s, epr); });
}

void VUnary(UnOp op, DT dt, const LO& d, const LO& a, int64_t count) {
  const char* instr = kUnName[int(op)];
  auto fn = Kernels().un[int(op)][int(dt)];
  if (!fn) FailDtype(instr, dt);
  CheckCount(instr, count);
  if (count == 0) return;
  uint64_t bytes = uint64_t(count) * Esz(dt);
  CheckVec(instr, "dst", d, bytes);
  CheckVec(instr, "src", a, bytes);
  fn(d.ptr, a.ptr, size_t(count));
  LocalCore().counters.vector_elem_ops += uint64_t(count);
}

void VUnaryRep(UnOp op, DT dt, const LO& d, const LO& a, MaskArg m, int64_t repeat, const RepParams& rp) {
  const char* instr = kUnName[int(op)];
  auto fn = Kernels().un[int(op)][int(dt)];
  if (!fn) FailDtype(instr, dt);
  uint32_t esz = Esz(dt), epr = 256 / esz;
  Plan p = MakePlan(instr, m, repeat, epr);
  if (p.repeats == 0) return;
  CheckDstBlk(instr, rp.blk[0]);
  RepOp rd{d.ptr, esz, rp.blk[0], rp.rep[0]}, r0{a.ptr, esz, rp.blk[1], rp.rep[1]};
  CheckRepOp(instr, "dst", d, rd, p, epr);
  CheckRepOp(instr, "src", a, r0, p, epr);
  RunRepeats(instr, p, epr, rd, &r0, nullptr, false,
             [&](uint8_t* td, const uint8_t* t0, const uint8_t*) { fn(td, t0, epr); });
}

// ------------------------------------------------------------------ advanced math APIs
namespace {
constexpr const char* kMathName[] = {"Tanh", "Erf", "Erfc", "Sigmoid", "Sign"};
bool Overlaps(const LO& x, uint64_t xb, const LO& y, uint64_t yb) { return x.ptr < y.ptr + yb && y.ptr < x.ptr + xb; }

// The checks every advanced API makes; returns false when there is nothing to do (count 0).
bool CheckMath(const char* api, const char* helper, DT dt, const LO& d, const LO& a, const LO& tmp, int64_t count,
               uint64_t need) {
  CheckCount(api, count);
  const uint64_t bytes = uint64_t(count) * Esz(dt);
  CheckVec(api, "dstTensor", d, bytes);
  CheckVec(api, "srcTensor", a, bytes);
  CheckVec(api, "sharedTmpBuffer", tmp, 0);
  if (tmp.bytes < need)
    Fail("%s: sharedTmpBuffer holds %" PRIu64 " bytes, below the minimum %" PRIu64
         " for %s (Get%sMaxMinTmpSize, csrc/ascendc/kernel_math.h)", api, tmp.bytes, need, kDTName[int(dt)], helper);
  if (d.ptr != a.ptr && Overlaps(d, bytes, a, bytes))
    Fail("%s: dstTensor and srcTensor overlap without being the same tensor", api);
  if (Overlaps(tmp, tmp.bytes, a, bytes) || Overlaps(tmp, tmp.bytes, d, bytes))
    Fail("%s: sharedTmpBuffer overlaps %s (the API writes its intermediates there)", api,
         Overlaps(tmp, tmp.bytes, a, bytes) ? "srcTensor" : "dstTensor");
  return count > 0;
}
}  // namespace

void VMath(MathOp op, DT dt, const LO& d, const LO& a, const LO& tmp, int64_t count) {
  const char* api = kMathName[int(op)];
  auto fn = Kernels().math[int(op)][int(dt)];
  if (!fn) FailDtype(api, dt);
  const uint64_t need = MathTmpMinBytes(MathLiveNodes(op, Esz(dt)));
  if (!CheckMath(api, api, dt, d, a, tmp, count, need)) return;
  fn(d.ptr, a.ptr, size_t(count));
  std::memset(tmp.ptr, 0xFF, need);  // the buffer's contents afterwards are undefined: NaN patterns
  LocalCore().counters.vector_elem_ops += uint64_t(count);
}

void VMathScalar(MathScalOp op, DT dt, const LO& d, const LO& a, const LO& tmp, const void* s, int64_t count) {
  const char* api = op == MathScalOp::ClampMax ? "ClampMax" : "ClampMin";
  auto fn = Kernels().math_s[int(op)][int(dt)];
  if (!fn) FailDtype(api, dt);
  const uint64_t need = MathTmpMinBytes(kClampLiveNodes);
  if (!CheckMath(api, "Clamp", dt, d, a, tmp, count, need)) return;
  fn(d.ptr, a.ptr, s, size_t(count));
  std::memset(tmp.ptr, 0xFF, need);
  LocalCore().counters.vector_elem_ops += uint64_t(count);
}

namespace {
void FillScalar(uint8_t* d, const void* s, uint32_t esz, size_t n) {
  if (esz == 2 || esz == 4) return Kernels().fill[esz == 4](d, s, n);
  switch (esz) {
    case 2: { uint16_t v; std::memcpy(&v, s, 2); uint16_t* p = reinterpret_cast<uint16_t*>(d); for (size_t i = 0; i < n; ++i) p[i] = v; break; }
    case 4: { uint32_t v; std::memcpy(&v, s, 4); uint32_t* p = reinterpret_cast<uint32_t*>(d); for (size_t i = 0; i < n; ++i) p[i] = v; break; }
    default: for (size_t i = 0; i < n; ++i) std::memcpy(d + i * esz, s, esz);
  }
}
}  // namespace

void VDup(DT dt, const LO& d, const void* s, int64_t count) {
  CheckCount("Duplicate", count);
  if (count == 0) return;
  uint32_t esz = Esz(dt);
  CheckVec("Duplicate", "dst", d, uint64_t(count) * esz);
  FillScalar(d.ptr, s, esz, size_t(count));
  LocalCore().counters.vector_elem_ops += uint64_t(count);
}

void VDupRep(DT dt, const LO& d, const void* s, MaskArg m, int64_t repeat, uint16_t dst_blk, uint16_t dst_rep) {
  const char* instr = "Duplicate";
  uint32_t esz = Esz(dt), epr = 256 / esz;
  Plan p = MakePlan(instr, m, repeat, epr);
  if (p.repeats == 0) return;
  CheckDstBlk(instr, dst_blk);
  RepOp rd{d.ptr, esz, dst_blk, dst_rep};
  CheckRepOp(instr, "dst", d, rd, p, epr);
  RunRepeats(instr, p, epr, rd, nullptr, nullptr, false,
             [&](uint8_t* td, const uint8_t*, const uint8_t*) { FillScalar(td, s, esz, epr); });
}

void VBrcb(DT dt, const LO& d, const LO& a, int64_t repeat, uint16_t dst_blk, uint16_t dst_rep) {
  const char* instr = "Brcb";
  const uint32_t esz = Esz(dt);
  if (esz != 2 && esz != 4) FailDtype(instr, dt);
  if (repeat < 0 || repeat > 255) Fail("%s repeatTime %" PRId64 " is out of range [0, 255]", instr, repeat);
  if (repeat == 0) return;
  CheckDstBlk(instr, dst_blk);
  CheckVec(instr, "src", a, uint64_t(repeat) * 8 * esz);
  CheckVec(instr, "dst", d, ((uint64_t(repeat) - 1) * dst_rep + 7ull * dst_blk) * 32 + 32);
  for (int64_t r = 0; r < repeat; ++r)
    for (uint32_t j = 0; j < 8; ++j)
      FillScalar(d.ptr + (uint64_t(r) * dst_rep + uint64_t(j) * dst_blk) * 32, a.ptr + (uint64_t(r) * 8 + j) * esz,
                 esz, 32 / esz);
  LocalCore().counters.vector_elem_ops += uint64_t(repeat) * 8 * (32 / esz);
}

// ------------------------------------------------------------------ Cast
namespace {
vk::UnFn CastFn(DT ddt, DT sdt, AscendC::RoundMode rm) {
  int mi = int(rm);
  if (mi < 0 || mi >= vk::kNumRound) Fail("Cast round mode %d is not a RoundMode", mi);
  auto fn = Kernels().cast[int(ddt)][int(sdt)][mi];
  if (!fn)
    Fail("Cast %s -> %s with %s is not supported on 2201 (shared/ascendc.md §4.3)", kDTName[int(sdt)],
         kDTName[int(ddt)], kRoundName[mi]);
  return fn;
}
}  // namespace

void VCast(DT ddt, DT sdt, AscendC::RoundMode rm, const LO& d, const LO& a, int64_t count) {
  auto fn = CastFn(ddt, sdt, rm);
  CheckCount("Cast", count);
  if (count == 0) return;
  CheckVec("Cast", "dst", d, uint64_t(count) * Esz(ddt));
  CheckVec("Cast", "src", a, uint64_t(count) * Esz(sdt));
  fn(d.ptr, a.ptr, size_t(count));
  LocalCore().counters.vector_elem_ops += uint64_t(count);
}

void VCastRep(DT ddt, DT sdt, AscendC::RoundMode rm, const LO& d, const LO& a, MaskArg m, int64_t repeat,
              const RepParams& rp) {
  const char* instr = "Cast";
  auto fn = CastFn(ddt, sdt, rm);
  uint32_t dsz = Esz(ddt), ssz = Esz(sdt);
  uint32_t epr = 256 / (dsz > ssz ? dsz : ssz);  // elements per repeat follow the wider type
  Plan p = MakePlan(instr, m, repeat, epr);
  if (p.repeats == 0) return;
  CheckDstBlk(instr, rp.blk[0]);
  RepOp rd{d.ptr, dsz, rp.blk[0], rp.rep[0]}, r0{a.ptr, ssz, rp.blk[1], rp.rep[1]};
  CheckRepOp(instr, "dst", d, rd, p, epr);
  CheckRepOp(instr, "src", a, r0, p, epr);
  RunRepeats(instr, p, epr, rd, &r0, nullptr, false,
             [&](uint8_t* td, const uint8_t* t0, const uint8_t*) { fn(td, t0, epr); });
}

// ------------------------------------------------------------------ Compare / CompareScalar
// 2201 compares int32 for equality only (shared/ascendc.md §4): ordering needs a float key.
void CheckCmpMode(const char* instr, DT dt, AscendC::CMPMODE mode) {
  if (dt == DT::I32 && mode != AscendC::CMPMODE::EQ)
    Fail("%s on int32 supports only CMPMODE::EQ on 2201 (got mode %d); order int32 through a float key", instr,
         int(mode));
}

void VCompare(DT dt, AscendC::CMPMODE mode, const LO& d, const LO& a, const LO* b, const void* s, int64_t count) {
  const char* instr = b ? "Compare" : "CompareScalar";
  auto fn = Kernels().cmp[int(dt)];
  if (!fn) FailDtype(instr, dt);
  if (int(mode) > 5) Fail("%s mode %d is not a CMPMODE", instr, int(mode));
  CheckCmpMode(instr, dt, mode);
  CheckCount(instr, count);
  if (count == 0) return;
  uint32_t esz = Esz(dt);
  uint64_t bytes = uint64_t(count) * esz;
  if (bytes % 256 != 0)
    Fail("%s count %" PRId64 " x %u B = %" PRIu64 " B is not a multiple of 256 B", instr, count, esz, bytes);
  CheckVec(instr, "dst", d, uint64_t(count) / 8);
  CheckVec(instr, "src0", a, bytes);
  if (b) CheckVec(instr, "src1", *b, bytes);
  fn(d.ptr, a.ptr, b ? b->ptr : s, b == nullptr, int(mode), size_t(count));
  LocalCore().counters.vector_elem_ops += uint64_t(count);
}

void VCompareRep(DT dt, AscendC::CMPMODE mode, const LO& d, const LO& a, const LO* b, const void* s, MaskArg m,
                 int64_t repeat, const RepParams& rp) {
  const char* instr = b ? "Compare" : "CompareScalar";
  auto fn = Kernels().cmp[int(dt)];
  if (!fn) FailDtype(instr, dt);
  if (int(mode) > 5) Fail("%s mode %d is not a CMPMODE", instr, int(mode));
  CheckCmpMode(instr, dt, mode);
  uint32_t esz = Esz(dt), epr = 256 / esz;
  // On 2201 the mask argument of the repeat form is reserved: every element of a repeat is compared
  // (and the mask register is left alone).
  (void)m;
  if (repeat < 0 || repeat > 255) Fail("%s repeatTime %" PRId64 " is out of range [0, 255]", instr, repeat);
  Plan p;
  p.repeats = uint32_t(repeat);
  p.full = p.last = Mask128::FirstN(epr);
  if (p.repeats == 0) return;
  RepOp r0{a.ptr, esz, rp.blk[1], rp.rep[1]}, r1{b ? b->ptr : nullptr, esz, rp.blk[2], rp.rep[2]};
  CheckVec(instr, "dst", d, uint64_t(p.repeats) * epr / 8);  // one bit per element, repeats packed (inferred)
  CheckRepOp(instr, "src0", a, r0, p, epr);
  if (b) CheckRepOp(instr, "src1", *b, r1, p, epr);
  alignas(64) uint8_t t0[256], t1[256];
  for (uint32_t r = 0; r < p.repeats; ++r) {
    Gather(t0, r0, r, p.full, epr);
    if (b) Gather(t1, r1, r, p.full, epr);
    fn(d.ptr + uint64_t(r) * epr / 8, t0, b ? t1 : s, b == nullptr, int(mode), epr);
  }
  LocalCore().counters.vector_elem_ops += uint64_t(p.repeats) * epr;
}

// ------------------------------------------------------------------ Select
namespace {
inline bool SelBit(const uint8_t* sel, uint64_t i) { return (sel[i >> 3] >> (i & 7)) & 1u; }
void SelectRun(uint32_t esz, uint8_t* d, const uint8_t* sel, uint64_t bit0, bool repeat_bits, uint32_t epr,
               const uint8_t* a, const uint8_t* b, const void* s, size_t n) {
  // element i uses bit (repeat_bits ? i % epr : bit0 + i)
  if (esz == 4) {
    uint32_t* D = reinterpret_cast<uint32_t*>(d);
    const uint32_t* A = reinterpret_cast<const uint32_t*>(a);
    const uint32_t* B = reinterpret_cast<const uint32_t*>(b);
    uint32_t S = 0;
    if (!b) std::memcpy(&S, s, 4);
    for (size_t i = 0; i < n; ++i) {
      uint64_t bit = repeat_bits ? i % epr : bit0 + i;
      D[i] = SelBit(sel, bit) ? A[i] : (b ? B[i] : S);
    }
  } else {
    uint16_t* D = reinterpret_cast<uint16_t*>(d);
    const uint16_t* A = reinterpret_cast<const uint16_t*>(a);
    const uint16_t* B = reinterpret_cast<const uint16_t*>(b);
    uint16_t S = 0;
    if (!b) std::memcpy(&S, s, 2);
    for (size_t i = 0; i < n; ++i) {
      uint64_t bit = repeat_bits ? i % epr : bit0 + i;
      D[i] = SelBit(sel, bit) ? A[i] : (b ? B[i] : S);
    }
  }
}
void CheckSelect(const char* instr, DT dt, DT mask_dt, AscendC::SELMODE mode, const LO* b) {
  if (dt != DT::F16 && dt != DT::F32) FailDtype(instr, dt);
  if (mask_dt != DT::U8 && mask_dt != DT::U16 && mask_dt != DT::U32 && mask_dt != DT::U64)
    Fail("%s selMask dtype %s must be uint8/uint16/uint32/uint64", instr, kDTName[int(mask_dt)]);
  if (int(mode) > 2) Fail("%s mode %d is not a SELMODE", instr, int(mode));
  if (mode == AscendC::SELMODE::VSEL_TENSOR_SCALAR_MODE && b)
    Fail("%s VSEL_TENSOR_SCALAR_MODE needs a scalar src1", instr);
  if (mode != AscendC::SELMODE::VSEL_TENSOR_SCALAR_MODE && !b)
    Fail("%s with a scalar src1 needs VSEL_TENSOR_SCALAR_MODE", instr);
}
}  // namespace

void VSelect(DT dt, DT mask_dt, AscendC::SELMODE mode, const LO& d, const LO& sel, const LO& a, const LO* b,
             const void* s, int64_t count) {
  const char* instr = "Select";
  CheckSelect(instr, dt, mask_dt, mode, b);
  CheckCount(instr, count);
  if (count == 0) return;
  uint32_t esz = Esz(dt), epr = 256 / esz;
  uint64_t bytes = uint64_t(count) * esz;
  bool rep_bits = mode == AscendC::SELMODE::VSEL_CMPMASK_SPR;
  uint64_t sel_bits = rep_bits ? (uint64_t(count) < epr ? uint64_t(count) : epr) : uint64_t(count);
  CheckVec(instr, "dst", d, bytes);
  CheckVec(instr, "selMask", sel, (sel_bits + 7) / 8);
  CheckVec(instr, "src0", a, bytes);
  if (b) CheckVec(instr, "src1", *b, bytes);
  if (auto fast = Kernels().sel[int(dt)]; fast && !rep_bits && mask_dt == DT::U8)
    fast(d.ptr, sel.ptr, a.ptr, b ? b->ptr : s, b == nullptr, size_t(count));
  else
    SelectRun(esz, d.ptr, sel.ptr, 0, rep_bits, epr, a.ptr, b ? b->ptr : nullptr, s, size_t(count));
  LocalCore().counters.vector_elem_ops += uint64_t(count);
}

void VSelectRep(DT dt, DT mask_dt, AscendC::SELMODE mode, const LO& d, const LO& sel, const LO& a, const LO* b,
                const void* s, MaskArg m, int64_t repeat, const RepParams& rp) {
  const char* instr = "Select";
  CheckSelect(instr, dt, mask_dt, mode, b);
  uint32_t esz = Esz(dt), epr = 256 / esz;
  Plan p = MakePlan(instr, m, repeat, epr);
  if (p.repeats == 0) return;
  CheckDstBlk(instr, rp.blk[0]);
  bool rep_bits = mode == AscendC::SELMODE::VSEL_CMPMASK_SPR;
  RepOp rd{d.ptr, esz, rp.blk[0], rp.rep[0]}, r0{a.ptr, esz, rp.blk[1], rp.rep[1]},
      r1{b ? b->ptr : nullptr, esz, rp.blk[2], rp.rep[2]};
  CheckRepOp(instr, "dst", d, rd, p, epr);
  CheckVec(instr, "selMask", sel, (rep_bits ? epr : uint64_t(p.repeats) * epr) / 8);
  CheckRepOp(instr, "src0", a, r0, p, epr);
  if (b) CheckRepOp(instr, "src1", *b, r1, p, epr);
  uint32_t r = 0;
  RunRepeats(instr, p, epr, rd, &r0, b ? &r1 : nullptr, false,
             [&](uint8_t* td, const uint8_t* t0, const uint8_t* t1) {
               SelectRun(esz, td, sel.ptr, rep_bits ? 0 : uint64_t(r) * epr, rep_bits, epr, t0, b ? t1 : nullptr, s,
                         epr);
               ++r;
             });
}

// ------------------------------------------------------------------ reductions
namespace {
void CheckRedDtype(const char* instr, DT dt) {
  if (dt != DT::F16 && dt != DT::F32) FailDtype(instr, dt);
}
void CheckStride(const char* instr, const char* what, int64_t v) {
  if (v < 0 || v > 65535) Fail("%s %s %" PRId64 " is out of range [0, 65535]", instr, what, v);
}
}  // namespace

void VWholeReduce(RedOp op, DT dt, const LO& d, const LO& a, MaskArg m, int64_t repeat, int64_t dst_rep,
                  int64_t src_blk, int64_t src_rep, AscendC::ReduceOrder order) {
  const char* instr = RedName(op, "W");
  CheckRedDtype(instr, dt);
  CheckStride(instr, "dstRepStride", dst_rep);
  CheckStride(instr, "srcBlkStride", src_blk);
  CheckStride(instr, "srcRepStride", src_rep);
  uint32_t esz = Esz(dt), epr = 256 / esz;
  Plan p = MakePlan(instr, m, repeat, epr);
  if (p.repeats == 0) return;
  using AscendC::ReduceOrder;
  uint32_t unit = esz, out = esz;
  if (op != RedOp::Sum) {
    if (order == ReduceOrder::ORDER_VALUE_INDEX || order == ReduceOrder::ORDER_INDEX_VALUE) unit = out = 2 * esz;
    else if (order == ReduceOrder::ORDER_ONLY_INDEX) unit = out = 4;
  }
  RepOp rs{a.ptr, esz, uint32_t(src_blk), uint32_t(src_rep)};
  CheckRepOp(instr, "src", a, rs, p, epr);
  CheckVec(instr, "dst", d, uint64_t(p.repeats - 1) * uint64_t(dst_rep) * unit + out, unit);
  // Fast paths for float repeats of 8 adjacent blocks (srcBlkStride 1) with one mask for every repeat:
  // the same tree (Sum) and the same first-best scan (Max/Min) as below, without the per-lane gather.
  const uint32_t cnt = p.full.Count();
  const bool prefix = cnt > 0 && (cnt == 64 || p.full.w[0] == ~0ull >> (64 - cnt));  // the first cnt lanes
  if (dt == DT::F32 && src_blk == 1 && p.full.w[0] == p.last.w[0] && p.full.w[1] == p.last.w[1] &&
      (op == RedOp::Sum || (order == ReduceOrder::ORDER_ONLY_VALUE && prefix))) {
    const float* src = reinterpret_cast<const float*>(a.ptr);
    float* dst = reinterpret_cast<float*>(d.ptr);
    if (op == RedOp::Sum) {
      // Lane masks: a prefix of cnt lanes is a window of kPrefix (64 ones, then 64 zeros).
      alignas(64) static constexpr auto kPrefix = [] {
        std::array<uint32_t, 128> a{};
        for (int i = 0; i < 64; ++i) a[i] = ~0u;
        return a;
      }();
      alignas(64) uint32_t built[64];
      const uint32_t* lanes = kPrefix.data() + (64 - cnt);
      if (!prefix) {
        for (uint32_t e = 0; e < 64; ++e) built[e] = p.full.Test(e) ? ~0u : 0u;
        lanes = built;
      }
      Kernels().wsum_f32(dst, size_t(dst_rep), src, size_t(src_rep) * 8, lanes, p.repeats);
    } else {
      // The vectorized first-best scan (ReduceMax's), then the first element equal to it for the sign
      // of a zero.
      for (uint32_t r = 0; r < p.repeats; ++r) {
        const float* x = src + uint64_t(r) * uint64_t(src_rep) * 8;
        float best = Kernels().rext_f32(x, cnt, op == RedOp::Min);
        if (best == 0.0f) {
          uint32_t e = 0;
          while (!(x[e] == best)) ++e;
          best = x[e];
        }
        dst[uint64_t(r) * uint64_t(dst_rep)] = best;
      }
    }
    LocalCore().counters.vector_elem_ops += uint64_t(cnt) * p.repeats;
    return;
  }
  alignas(64) uint8_t t0[256];
  float v[128];
  uint64_t active = 0;
  for (uint32_t r = 0; r < p.repeats; ++r) {
    const Mask128& mk = r + 1 == p.repeats ? p.last : p.full;
    Gather(t0, rs, r, mk, epr);
    uint8_t* o = d.ptr + uint64_t(r) * uint64_t(dst_rep) * unit;
    active += mk.Count();
    if (op == RedOp::Sum) {
      for (uint32_t e = 0; e < epr; ++e) v[e] = mk.Test(e) ? LoadF(dt, t0 + e * esz) : 0.0f;
      StoreF(dt, o, TreeSum(dt, v, epr));
      continue;
    }
    bool found = false;
    float best = 0;
    uint32_t bi = 0;
    for (uint32_t e = 0; e < epr; ++e) {
      if (!mk.Test(e)) continue;
      float x = LoadF(dt, t0 + e * esz);
      if (!found || Better(op, x, best)) { best = x; bi = e; found = true; }
    }
    switch (order) {
      case ReduceOrder::ORDER_VALUE_INDEX: StoreF(dt, o, best); StoreIndex(dt, o + esz, bi, false); break;
      case ReduceOrder::ORDER_INDEX_VALUE: StoreIndex(dt, o, bi, false); StoreF(dt, o + esz, best); break;
      case ReduceOrder::ORDER_ONLY_VALUE: StoreF(dt, o, best); break;
      default: StoreIndex(dt, o, bi, true); break;
    }
  }
  LocalCore().counters.vector_elem_ops += active;
}

void VBlockReduce(RedOp op, DT dt, const LO& d, const LO& a, MaskArg m, int64_t repeat, int64_t dst_rep,
                  int64_t src_blk, int64_t src_rep) {
  const char* instr = RedName(op, "B");
  CheckRedDtype(instr, dt);
  CheckStride(instr, "dstRepStride", dst_rep);
  CheckStride(instr, "srcBlkStride", src_blk);
  CheckStride(instr, "srcRepStride", src_rep);
  uint32_t esz = Esz(dt), epr = 256 / esz, epb = 32 / esz;
  Plan p = MakePlan(instr, m, repeat, epr);
  if (p.repeats == 0) return;
  RepOp rs{a.ptr, esz, uint32_t(src_blk), uint32_t(src_rep)};
  CheckRepOp(instr, "src", a, rs, p, epr);
  CheckVec(instr, "dst", d, uint64_t(p.repeats - 1) * uint64_t(dst_rep) * 8 * esz + 8 * esz, 8 * esz);
  // Fast path: float, one mask for every repeat that covers whole blocks (the first 8 * nb lanes): the same
  // per-block tree (Sum) and first-best scan (Max/Min) as below, read in place.
  const uint32_t cnt = p.full.Count();
  if (dt == DT::F32 && cnt % 8 == 0 && p.full.w[0] == p.last.w[0] && p.full.w[1] == p.last.w[1] &&
      (cnt == 64 || p.full.w[0] == ~0ull >> (64 - cnt))) {
    const uint32_t nb = cnt / 8;
    for (uint32_t r = 0; r < p.repeats; ++r) {
      float* o = reinterpret_cast<float*>(d.ptr + uint64_t(r) * uint64_t(dst_rep) * 32);
      float res[8];
      for (uint32_t b = 0; b < nb; ++b) {
        const float* x = reinterpret_cast<const float*>(a.ptr + (uint64_t(r) * uint64_t(src_rep) + uint64_t(b) *
                                                                 uint64_t(src_blk)) * 32);
        if (op == RedOp::Sum) {
          res[b] = ((x[0] + x[1]) + (x[2] + x[3])) + ((x[4] + x[5]) + (x[6] + x[7]));
        } else {
          float best = x[0];
          for (uint32_t i = 1; i < 8; ++i)
            if (Better(op, x[i], best)) best = x[i];
          res[b] = best;
        }
      }
      if (op == RedOp::Sum)
        for (uint32_t b = nb; b < 8; ++b) res[b] = 0.0f;  // a block with no active lane sums to 0
      std::memcpy(o, res, (op == RedOp::Sum ? 8 : nb) * sizeof(float));
    }
    LocalCore().counters.vector_elem_ops += uint64_t(cnt) * p.repeats;
    return;
  }
  alignas(64) uint8_t t0[256];
  float v[16];
  uint64_t active = 0;
  for (uint32_t r = 0; r < p.repeats; ++r) {
    const Mask128& mk = r + 1 == p.repeats ? p.last : p.full;
    Gather(t0, rs, r, mk, epr);
    active += mk.Count();
    uint8_t* o = d.ptr + uint64_t(r) * uint64_t(dst_rep) * 8 * esz;
    for (uint32_t b = 0; b < 8; ++b) {
      if (op == RedOp::Sum) {
        for (uint32_t i = 0; i < epb; ++i) {
          uint32_t e = b * epb + i;
          v[i] = mk.Test(e) ? LoadF(dt, t0 + e * esz) : 0.0f;
        }
        StoreF(dt, o + b * esz, TreeSum(dt, v, epb));
        continue;
      }
      bool found = false;
      float best = 0;
      for (uint32_t i = 0; i < epb; ++i) {
        uint32_t e = b * epb + i;
        if (!mk.Test(e)) continue;
        float x = LoadF(dt, t0 + e * esz);
        if (!found || Better(op, x, best)) { best = x; found = true; }
      }
      if (found) StoreF(dt, o + b * esz, best);  // a block with no active element is left unchanged (inferred)
    }
  }
  LocalCore().counters.vector_elem_ops += active;
}

namespace {
uint64_t RoundUpDiv(uint64_t a, uint64_t b) { return (a + b - 1) / b; }
uint64_t TmpElemsNeeded(RedOp op, uint64_t R, uint32_t epb, uint32_t epr, bool cal_index) {
  if (op == RedOp::Sum) return RoundUpDiv(R, epb) * epb;
  if (!cal_index) return RoundUpDiv(2 * R, epb) * epb;
  uint64_t it1 = 2 * R;
  uint64_t it2 = RoundUpDiv(2 * R, epr) * 2;
  uint64_t it3 = RoundUpDiv(it2, epr) * 2;
  return RoundUpDiv(it1, epb) * epb + RoundUpDiv(it2, epb) * epb + RoundUpDiv(it3, epb) * epb;
}
void CheckReduceOperands(const char* instr, RedOp op, DT dt, const LO& d, const LO& tmp, uint64_t R, bool cal_index) {
  uint32_t esz = Esz(dt), epr = 256 / esz, epb = 32 / esz;
  uint64_t need = TmpElemsNeeded(op, R, epb, epr, cal_index);
  if (tmp.bytes < need * esz)
    Fail("%s sharedTmpBuffer holds %" PRIu64 " elements, needs at least %" PRIu64 " (%" PRIu64 " repeats%s)", instr,
         tmp.bytes / esz, need, R, cal_index ? ", calIndex" : "");
  CheckVec(instr, "sharedTmpBuffer", tmp, need * esz);
  CheckVec(instr, "dst", d, (op != RedOp::Sum && cal_index ? 2 : 1) * esz, esz);
}
void StoreReduceResult(RedOp op, DT dt, const LO& d, float value, uint64_t index, bool cal_index) {
  uint32_t esz = Esz(dt);
  StoreF(dt, d.ptr, value);
  if (op != RedOp::Sum && cal_index) StoreIndex(dt, d.ptr + esz, uint32_t(index), false);
}
}  // namespace

void VReduce(RedOp op, DT dt, const LO& d, const LO& a, const LO& tmp, int64_t count, bool cal_index) {
  const char* instr = RedName(op, "R");
  CheckRedDtype(instr, dt);
  CheckCount(instr, count);
  if (count == 0) return;
  uint32_t esz = Esz(dt), epr = 256 / esz;
  if (dt == DT::F16 && cal_index && count > 65536)
    Fail("%s with calIndex on half: count %" PRId64 " exceeds the 65535 index limit", instr, count);
  uint64_t R = uint64_t(count) / epr;
  if (R == 0) R = 1;
  CheckReduceOperands(instr, op, dt, d, tmp, R, cal_index);
  CheckVec(instr, "src", a, uint64_t(count) * esz);
  const uint8_t* src = a.ptr;
  if (dt == DT::F32 && op == RedOp::Sum && count >= 64) {
    // The same per-repeat trees (vectorized) and in-order accumulation as below.
    alignas(64) static constexpr uint32_t kAll[64] = {~0u, ~0u, ~0u, ~0u, ~0u, ~0u, ~0u, ~0u, ~0u, ~0u, ~0u, ~0u, ~0u,
        ~0u, ~0u, ~0u, ~0u, ~0u, ~0u, ~0u, ~0u, ~0u, ~0u, ~0u, ~0u, ~0u, ~0u, ~0u, ~0u, ~0u, ~0u, ~0u, ~0u, ~0u, ~0u,
        ~0u, ~0u, ~0u, ~0u, ~0u, ~0u, ~0u, ~0u, ~0u, ~0u, ~0u, ~0u, ~0u, ~0u, ~0u, ~0u, ~0u, ~0u, ~0u, ~0u, ~0u, ~0u,
        ~0u, ~0u, ~0u, ~0u, ~0u, ~0u, ~0u};
    const float* x = reinterpret_cast<const float*>(src);
    const uint64_t full = uint64_t(count) / 64;
    float sums[256];
    float acc = 0;
    for (uint64_t r0 = 0; r0 < full; r0 += 256) {
      const uint64_t nr = full - r0 < 256 ? full - r0 : 256;
      Kernels().wsum_f32(sums, 1, x + r0 * 64, 64, kAll, size_t(nr));
      for (uint64_t r = 0; r < nr; ++r) acc = (r0 == 0 && r == 0) ? sums[0] : acc + sums[r];
    }
    if (uint64_t(count) > full * 64) {  // the partial repeat, zero-filled, through the same tree
      alignas(64) float v[64] = {};
      const uint32_t n = uint32_t(uint64_t(count) - full * 64);
      std::memcpy(v, x + full * 64, n * sizeof(float));
      float s;
      Kernels().wsum_f32(&s, 1, v, 64, kAll, 1);
      acc = acc + s;
    }
    StoreReduceResult(op, dt, d, acc, 0, false);
  } else if (dt == DT::F32 && op != RedOp::Sum) {
    // The scan below keeps the first element no later one beats (NaN only when x[0] is NaN): the
    // vectorized extreme, then the first element equal to it, which also picks the sign of a zero
    // and is the index.
    const float* x = reinterpret_cast<const float*>(src);
    float best = Kernels().rext_f32(x, size_t(count), op == RedOp::Min);
    uint64_t bi = 0;
    if (best == best && (cal_index || best == 0.0f)) {
      while (!(x[bi] == best)) ++bi;
      best = x[bi];
    }
    StoreReduceResult(op, dt, d, best, bi, cal_index);
  } else if (op == RedOp::Sum) {
    // Per repeat a tree sum, then the repeat sums added in order (2201 count form).
    float v[128];
    float acc = 0;
    for (int64_t base = 0; base < count; base += epr) {
      uint32_t n = uint32_t(count - base < int64_t(epr) ? count - base : epr);
      for (uint32_t e = 0; e < epr; ++e) v[e] = e < n ? LoadF(dt, src + (base + e) * esz) : 0.0f;
      float s = TreeSum(dt, v, epr);
      acc = base == 0 ? s : RoundPartial(dt, acc + s);
    }
    StoreReduceResult(op, dt, d, acc, 0, false);
  } else {
    float best = LoadF(dt, src);
    uint64_t bi = 0;
    for (int64_t i = 1; i < count; ++i) {
      float x = LoadF(dt, src + i * esz);
      if (Better(op, x, best)) { best = x; bi = uint64_t(i); }
    }
    StoreReduceResult(op, dt, d, best, bi, cal_index);
  }
  LocalCore().counters.vector_elem_ops += uint64_t(count);
}

void VReduceRep(RedOp op, DT dt, const LO& d, const LO& a, const LO& tmp, MaskArg m, int64_t repeat, int64_t src_rep,
                bool cal_index) {
  const char* instr = RedName(op, "R");
  CheckRedDtype(instr, dt);
  CheckStride(instr, "srcRepStride", src_rep);
  uint32_t esz = Esz(dt), epr = 256 / esz;
  Plan p = MakePlan(instr, m, repeat, epr);
  if (p.repeats == 0) return;
  RepOp rs{a.ptr, esz, 1, uint32_t(src_rep)};
  CheckRepOp(instr, "src", a, rs, p, epr);
  CheckReduceOperands(instr, op, dt, d, tmp, p.repeats, cal_index);
  alignas(64) uint8_t t0[256];
  float v[128];
  uint64_t active = 0;
  float* sums = op == RedOp::Sum ? static_cast<float*>(std::malloc(sizeof(float) * p.repeats)) : nullptr;
  bool found = false;
  float best = 0;
  uint64_t bi = 0;
  for (uint32_t r = 0; r < p.repeats; ++r) {
    const Mask128& mk = r + 1 == p.repeats ? p.last : p.full;
    Gather(t0, rs, r, mk, epr);
    active += mk.Count();
    if (op == RedOp::Sum) {
      for (uint32_t e = 0; e < epr; ++e) v[e] = mk.Test(e) ? LoadF(dt, t0 + e * esz) : 0.0f;
      sums[r] = TreeSum(dt, v, epr);
      continue;
    }
    for (uint32_t e = 0; e < epr; ++e) {
      if (!mk.Test(e)) continue;
      float x = LoadF(dt, t0 + e * esz);
      if (!found || Better(op, x, best)) { best = x; bi = uint64_t(r) * epr + e; found = true; }
    }
  }
  if (op == RedOp::Sum) {
    float total = TreeSum(dt, sums, p.repeats);  // the repeat form adds the repeat sums as a tree
    std::free(sums);
    StoreReduceResult(op, dt, d, total, 0, false);
  } else if (found) {
    StoreReduceResult(op, dt, d, best, bi, cal_index);
  }
  LocalCore().counters.vector_elem_ops += active;
}

// ------------------------------------------------------------------ Gather
namespace {
// Checks the offsets of Gather/Scatter: each names a whole element inside the `bytes` B tensor.
void CheckIndexed(const char* instr, const char* role, const uint32_t* o, int64_t count, uint32_t base, uint32_t esz,
                  uint64_t bytes) {
  uint32_t any_bits = 0, max_off = 0;
  Kernels().off_stats(o, size_t(count), &any_bits, &max_off);
  if (((uint64_t(base) | any_bits) % esz) == 0 && uint64_t(base) + max_off + esz <= bytes) return;
  for (int64_t i = 0; i < count; ++i) {
    uint64_t at = uint64_t(base) + o[i];
    if (at % esz != 0 || at + esz > bytes)
      Fail("%s %s[%" PRId64 "] = %u B (+ base %u B) is %s the %" PRIu64 " B %s tensor", instr, role, i, o[i], base,
           at % esz != 0 ? "not element-aligned in" : "outside", bytes, instr[0] == 'G' ? "src" : "dst");
  }
}
}  // namespace

void VGather(DT dt, const LO& d, const LO& a, const LO& off, uint32_t base, int64_t count) {
  const char* instr = "Gather";
  CheckCount(instr, count);
  if (count == 0) return;
  const uint32_t esz = Esz(dt);
  if (esz != 2 && esz != 4) FailDtype(instr, dt);
  CheckVec(instr, "dst", d, uint64_t(count) * esz);
  CheckVec(instr, "srcOffset", off, uint64_t(count) * 4);
  CheckVec(instr, "src", a, a.bytes);
  const uint32_t* o = reinterpret_cast<const uint32_t*>(off.ptr);
  CheckIndexed(instr, "srcOffset", o, count, base, esz, a.bytes);
  Kernels().gather[esz == 4](d.ptr, a.ptr + base, o, size_t(count));
  LocalCore().counters.vector_elem_ops += uint64_t(count);
}

void VScatter(DT dt, const LO& d, const LO& a, const LO& off, uint32_t base, int64_t count) {
  const char* instr = "Scatter";
  CheckCount(instr, count);
  if (count == 0) return;
  const uint32_t esz = Esz(dt);
  if (esz != 2 && esz != 4) FailDtype(instr, dt);
  CheckVec(instr, "src", a, uint64_t(count) * esz);
  CheckVec(instr, "dstOffset", off, uint64_t(count) * 4);
  CheckVec(instr, "dst", d, d.bytes);
  const uint32_t* o = reinterpret_cast<const uint32_t*>(off.ptr);
  CheckIndexed(instr, "dstOffset", o, count, base, esz, d.bytes);
  Kernels().scatter[esz == 4](d.ptr + base, a.ptr, o, size_t(count));
  LocalCore().counters.vector_elem_ops += uint64_t(count);
}

// ------------------------------------------------------------------ GatherMask
// Modelled: the user-defined pattern in counter mode (reduceMode = true) with one repeat, which
// selects from the first `mask` elements. Normal mode (256 B repeats whose pattern steps by
// src1RepeatStride) and the built-in patterns are not modelled and fail here, as does any use of
// strides a single-repeat count form does not need.
uint64_t VGatherMask(DT dt, const LO& d, const LO& a, const LO& pattern, bool reduce_mode, uint32_t mask,
                     uint8_t src0_blk_stride, uint16_t repeat_times) {
  const char* instr = "GatherMask";
  const uint32_t esz = Esz(dt);
  if (esz != 2 && esz != 4) FailDtype(instr, dt);
  if (!reduce_mode)
    Fail("%s: normal mode (reduceMode = false) is not modelled; use counter mode (reduceMode = true, mask = "
         "the element count, repeatTimes = 1)", instr);
  if (repeat_times != 1 || src0_blk_stride != 1)
    Fail("%s: counter mode is modelled with repeatTimes = 1 and src0BlockStride = 1, got repeatTimes %u and "
         "src0BlockStride %u", instr, unsigned(repeat_times), unsigned(src0_blk_stride));
  if (mask == 0) return 0;
  CheckVec(instr, "src0", a, uint64_t(mask) * esz);
  // The pattern is read in whole elements of its type (16 / 32 bits).
  const uint64_t pbits = uint64_t(esz) * 8, pwords = (uint64_t(mask) + pbits - 1) / pbits;
  CheckVec(instr, "src1Pattern", pattern, pwords * esz);
  const uint8_t* pat = pattern.ptr;
  uint64_t n = 0, i = 0;
  for (; i + 64 <= mask; i += 64) {  // whole 64-bit words of the pattern, then the tail bit by bit
    uint64_t w;
    std::memcpy(&w, pat + i / 8, 8);
    n += uint64_t(__builtin_popcountll(w));
  }
  for (; i < mask; ++i) n += (pat[i >> 3] >> (i & 7)) & 1u;
  CheckVec(instr, "dst", d, n * esz);  // only the kept elements are written
  Kernels().gather_mask[esz == 4](d.ptr, a.ptr, pat, size_t(mask));
  LocalCore().counters.vector_elem_ops += uint64_t(mask);
  return n;
}

// ------------------------------------------------------------------ mask register
void VSetMask(DT dt, bool counter_template, uint64_t hi, uint64_t lo) {
  (void)dt;
  (void)counter_template;
  CoreState& c = CurrentCore();
  c.mask_lo = lo;
  c.mask_hi = hi;
}

void VSetMaskLen(DT dt, bool counter_template, int64_t len) {
  CoreState& c = CurrentCore();
  if (len < 0) Fail("SetVectorMask len %" PRId64 " is negative", len);
  if (counter_template || c.mask_counter_mode) {
    c.mask_lo = uint64_t(len);
    c.mask_hi = 0;
    return;
  }
  uint32_t epr = 256 / Esz(dt);
  Mask128 m = Mask128::FirstN(uint64_t(len) < epr ? uint64_t(len) : epr);
  c.mask_lo = m.w[0];
  c.mask_hi = m.w[1];
}

}  // namespace ascendc_host
