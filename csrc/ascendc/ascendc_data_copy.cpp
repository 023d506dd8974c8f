// DataCopy (GM<->UB, UB->UB, GM->L1, L1->BiasTable/Fixpipe buffer) and DataCopyPad (GM<->UB), with the
// checks of shared/ascendc.md §3.1, §3.2 and §8, and the gm_to_local / local_to_gm byte counters.
#include <cinttypes>
#include <cstdio>
#include <cstring>

#include "ascendc_core_state.h"
#include "ascendc_vec_kernels.h"
#include "kernel_data_copy.h"

namespace ascendc_host {

namespace {

constexpr uint32_t kGmToLocal = PhysMask(PhysBuf::UB) | PhysMask(PhysBuf::L1);
constexpr uint32_t kUB = PhysMask(PhysBuf::UB);

// "DataCopy GM->VECIN" etc. for messages (cold path only).
struct Label {
  char s[64];
  Label(const char* instr, const char* from, const char* to) { std::snprintf(s, sizeof s, "%s %s->%s", instr, from, to); }
};

void CheckCountBytes(const char* from, const char* to, uint32_t count, uint32_t esz) {
  uint64_t bytes = uint64_t(count) * esz;
  if (bytes % 32 != 0)
    Fail("DataCopy %s->%s count %u x %u B = %" PRIu64 " B is not a multiple of 32 B (the NPU would silently round "
         "down)", from, to, count, esz, bytes);
}

void CheckParams(const char* from, const char* to, const AscendC::DataCopyParams& p) {
  if (p.blockCount > 4095)
    Fail("DataCopy %s->%s blockCount %u is out of range [0, 4095]", from, to, unsigned(p.blockCount));
}

// Footprint of blockCount blocks of blockLen units separated by gap units (end to start), in bytes.
inline uint64_t Footprint(uint64_t count, uint64_t len, uint64_t gap, uint64_t unit) {
  return ((count - 1) * (len + gap) + len) * unit;
}

uint32_t LocalAlign(const CoreState& c, AscendC::TPosition pos) {
  PhysBuf b = c.PhysOf(pos);
  if (b == PhysBuf::BT) return 64;
  if (b == PhysBuf::FB) return 128;
  return 32;
}

// Writes the esz-byte value at `v` into elements [e0, e1) of d.
inline void FillElems(uint8_t* d, const uint8_t* v, uint32_t esz, uint64_t e0, uint64_t e1) {
  switch (esz) {
    case 4: { uint32_t x; std::memcpy(&x, v, 4); for (uint64_t e = e0; e < e1; ++e) std::memcpy(d + e * 4, &x, 4); break; }
    case 2: { uint16_t x; std::memcpy(&x, v, 2); for (uint64_t e = e0; e < e1; ++e) std::memcpy(d + e * 2, &x, 2); break; }
    case 8: { uint64_t x; std::memcpy(&x, v, 8); for (uint64_t e = e0; e < e1; ++e) std::memcpy(d + e * 8, &x, 8); break; }
    default: for (uint64_t e = e0; e < e1; ++e) std::memcpy(d + e * esz, v, esz);
  }
}

void CheckGmAlign(const char* instr, const char* role, const GlobalOperand& g, uint32_t esz) {
  if (esz > 1 && reinterpret_cast<uintptr_t>(g.ptr) % esz != 0)
    Fail("%s %s GM address %p is not aligned to sizeof(T) = %u B", instr, role, static_cast<void*>(g.ptr), esz);
}

// The common case without building a message; on failure CheckLocal reports the details.
inline bool QuickOk(const CoreState& c, const LocalOperand& op, uint32_t allowed, uint32_t align, uint64_t footprint) {
  PhysBuf b = c.PhysOf(op.pos);
  if (!(allowed & PhysMask(b))) return false;
  const Pool& pl = c.pool[int(b)];
  if (op.ptr < pl.base || op.ptr > pl.base + pl.size) return false;
  return uint64_t(op.ptr - pl.base) % align == 0 && footprint <= op.bytes;
}
#define CHECK_LOCAL_I(instr, c, from, to, role, op, allowed, align, footprint)   \
  do {                                                                         \
    if (!QuickOk(c, op, allowed, align, footprint))                             \
      CheckLocal(Label(instr, from, to).s, role, op, allowed, align, footprint); \
  } while (0)
#define CHECK_LOCAL(c, from, to, role, op, allowed, align, footprint) \
  CHECK_LOCAL_I("DataCopy", c, from, to, role, op, allowed, align, footprint)

}  // namespace

// ------------------------------------------------------------------ GM -> local
void CopyG2L(const LocalOperand& dst, const GlobalOperand& src, uint32_t esz, uint32_t count) {
  CoreState& c = LocalCore();
  const char* to = PositionName(dst.pos);
  if (count == 0) return;
  CheckCountBytes("GM", to, count, esz);
  uint64_t bytes = uint64_t(count) * esz;
  CHECK_LOCAL(c, "GM", to, "dst", dst, kGmToLocal, 32, bytes);
  CheckGmAlign("DataCopy", "src", src, esz);
  CheckGlobal("DataCopy", "src", src, bytes);
  std::memcpy(dst.ptr, src.ptr, bytes);
  c.counters.gm_to_local_bytes += bytes;
}

void CopyG2L(const LocalOperand& dst, const GlobalOperand& src, uint32_t esz, const AscendC::DataCopyParams& p) {
  CoreState& c = LocalCore();
  const char* to = PositionName(dst.pos);
  CheckParams("GM", to, p);
  if (p.blockCount == 0 || p.blockLen == 0) return;
  uint64_t lfoot = Footprint(p.blockCount, p.blockLen, p.dstGap, 32);
  uint64_t gfoot = Footprint(p.blockCount, p.blockLen, p.srcGap, 32);
  CHECK_LOCAL(c, "GM", to, "dst", dst, kGmToLocal, 32, lfoot);
  CheckGmAlign("DataCopy", "src", src, esz);
  CheckGlobal("DataCopy", "src", src, gfoot);
  const uint64_t len = uint64_t(p.blockLen) * 32;
  for (uint32_t i = 0; i < p.blockCount; ++i)
    std::memcpy(dst.ptr + i * (len + uint64_t(p.dstGap) * 32), src.ptr + i * (len + uint64_t(p.srcGap) * 32), len);
  c.counters.gm_to_local_bytes += len * p.blockCount;
}

// ------------------------------------------------------------------ local -> GM
void CopyL2G(const GlobalOperand& dst, const LocalOperand& src, uint32_t esz, uint32_t count) {
  CoreState& c = LocalCore();
  const char* from = PositionName(src.pos);
  if (count == 0) return;
  CheckCountBytes(from, "GM", count, esz);
  uint64_t bytes = uint64_t(count) * esz;
  CHECK_LOCAL(c, from, "GM", "src", src, kUB, 32, bytes);
  CheckGmAlign("DataCopy", "dst", dst, esz);
  CheckGlobal("DataCopy", "dst", dst, bytes);
  if (dst.no_l2) vk::Kernels().stream_rows(dst.ptr, 0, src.ptr, 0, bytes, 1);
  else std::memcpy(dst.ptr, src.ptr, bytes);
  c.counters.local_to_gm_bytes += bytes;
}

void CopyL2G(const GlobalOperand& dst, const LocalOperand& src, uint32_t esz, const AscendC::DataCopyParams& p) {
  CoreState& c = LocalCore();
  const char* from = PositionName(src.pos);
  CheckParams(from, "GM", p);
  if (p.blockCount == 0 || p.blockLen == 0) return;
  uint64_t lfoot = Footprint(p.blockCount, p.blockLen, p.srcGap, 32);
  uint64_t gfoot = Footprint(p.blockCount, p.blockLen, p.dstGap, 32);
  CHECK_LOCAL(c, from, "GM", "src", src, kUB, 32, lfoot);
  CheckGmAlign("DataCopy", "dst", dst, esz);
  CheckGlobal("DataCopy", "dst", dst, gfoot);
  const uint64_t len = uint64_t(p.blockLen) * 32;
  (dst.no_l2 ? vk::Kernels().stream_rows : vk::Kernels().copy_rows)(
      dst.ptr, len + uint64_t(p.dstGap) * 32, src.ptr, len + uint64_t(p.srcGap) * 32, len, p.blockCount);
  c.counters.local_to_gm_bytes += len * p.blockCount;
}

// ------------------------------------------------------------------ local -> local
namespace {
// UB -> UB / L1 (TSCM), L1 -> BiasTable / Fixpipe buffer.
void CheckL2LPath(const CoreState& c, const char* from, const char* to, const LocalOperand& dst,
                  const LocalOperand& src, uint64_t dfoot, uint64_t sfoot) {
  // The common UB -> UB case without building a message.
  if (QuickOk(c, src, kUB, 32, sfoot) && QuickOk(c, dst, kUB | PhysMask(PhysBuf::L1), 32, dfoot)) return;
  const Label label("DataCopy", from, to);
  const char* lbl = label.s;
  PhysBuf sb = c.PhysOf(src.pos);
  if (sb == PhysBuf::L1) {
    CheckLocal(lbl, "src", src, PhysMask(PhysBuf::L1), 32, sfoot);
    CheckLocal(lbl, "dst", dst, PhysMask(PhysBuf::BT) | PhysMask(PhysBuf::FB), LocalAlign(c, dst.pos), dfoot);
  } else {
    CheckLocal(lbl, "src", src, kUB, 32, sfoot);
    CheckLocal(lbl, "dst", dst, kUB | PhysMask(PhysBuf::L1), 32, dfoot);
  }
}
}  // namespace

void CopyL2L(const LocalOperand& dst, const LocalOperand& src, uint32_t esz, uint32_t count) {
  CoreState& c = LocalCore();
  const char* from = PositionName(src.pos);
  const char* to = PositionName(dst.pos);
  if (count == 0) return;
  CheckCountBytes(from, to, count, esz);
  uint64_t bytes = uint64_t(count) * esz;
  CheckL2LPath(c, from, to, dst, src, bytes, bytes);
  std::memmove(dst.ptr, src.ptr, bytes);
}

void CopyL2L(const LocalOperand& dst, const LocalOperand& src, uint32_t esz, const AscendC::DataCopyParams& p) {
  CoreState& c = LocalCore();
  const char* from = PositionName(src.pos);
  const char* to = PositionName(dst.pos);
  (void)esz;
  CheckParams(from, to, p);
  if (p.blockCount == 0 || p.blockLen == 0) return;
  uint64_t dfoot = Footprint(p.blockCount, p.blockLen, p.dstGap, 32);
  uint64_t sfoot = Footprint(p.blockCount, p.blockLen, p.srcGap, 32);
  CheckL2LPath(c, from, to, dst, src, dfoot, sfoot);
  const uint64_t len = uint64_t(p.blockLen) * 32;
  for (uint32_t i = 0; i < p.blockCount; ++i)
    std::memmove(dst.ptr + i * (len + uint64_t(p.dstGap) * 32), src.ptr + i * (len + uint64_t(p.srcGap) * 32), len);
}

// ------------------------------------------------------------------ DataCopyPad
namespace {
void CheckPadCommon(const CoreState& c, const char* lbl, uint32_t esz, uint32_t block_count, uint32_t block_len) {
  if (c.cfg.npu_arch == 2002) Fail("%s is not available on 2002 (310P); use DataCopy", lbl);
  if (block_count > 4095) Fail("%s blockCount %u is out of range [0, 4095]", lbl, block_count);
  if (block_len > 2097151) Fail("%s blockLen %u B is out of range [0, 2097151]", lbl, block_len);
  if (block_len % esz != 0) Fail("%s blockLen %u B is not a multiple of sizeof(T) = %u B", lbl, block_len, esz);
}
}  // namespace

void CopyPadG2L(const LocalOperand& dst, const GlobalOperand& src, uint32_t esz, uint32_t block_count,
                uint32_t block_len, uint32_t src_stride, uint32_t dst_stride, bool is_pad, uint32_t left,
                uint32_t right, uint64_t pad_bits, const char* instr) {
  CoreState& c = LocalCore();
  const char* to = PositionName(dst.pos);
  if (c.cfg.npu_arch == 2002 || block_count > 4095 || block_len > 2097151 || block_len % esz != 0)
    CheckPadCommon(c, Label(instr, "GM", to).s, esz, block_count, block_len);
  if (left * esz > 32 || right * esz > 32)
    Fail("%s GM->%s leftPadding %u / rightPadding %u elements of %u B exceed 32 B", instr, to, left, right, esz);
  if (esz == 8 && is_pad && pad_bits != 0) Fail("%s GM->%s padding value must be 0 for 64-bit types", instr, to);
  if (block_count == 0 || block_len == 0) return;
  const uint64_t ub_block = (uint64_t(left) * esz + block_len + uint64_t(right) * esz + 31) / 32 * 32;
  const uint64_t ub_step = ub_block + uint64_t(dst_stride) * 32;
  const uint64_t gm_step = uint64_t(block_len) + src_stride;
  CHECK_LOCAL_I(instr, c, "GM", to, "dst", dst, kUB, 32, (block_count - 1) * ub_step + ub_block);
  CheckGlobal(instr, "src", src, (block_count - 1) * gm_step + block_len);
  const uint64_t elems = ub_block / esz;
  const uint64_t data0 = left, data1 = left + block_len / esz;
  // The pads of each block first (a right pad as one whole 32 B block write, which the data then partly
  // overwrites), then the data of every block in one vectorized pass.
  const bool tail_block = data1 < elems && elems - data1 <= 32 / esz && (esz == 2 || esz == 4 || esz == 8);
  for (uint32_t i = 0; i < block_count; ++i) {
    uint8_t* d = dst.ptr + i * ub_step;
    // Pads and the dummy tail: the isPad value, else SetPadValue's, else (undefined on the NPU) the
    // block's first element, which is also the documented dummy fill when both pads are 0.
    uint8_t fill[8];
    if (is_pad) std::memcpy(fill, &pad_bits, 8);
    else if (c.pad_value_set) std::memcpy(fill, &c.pad_value, 8);
    else std::memcpy(fill, src.ptr + i * gm_step, esz);
    FillElems(d, fill, esz, 0, data0);
    if (tail_block) FillElems(d + ub_block - 32, fill, esz, 0, 32 / esz);  // fixed size: stores inline
    else FillElems(d, fill, esz, data1, elems);
  }
  vk::Kernels().copy_rows(dst.ptr + data0 * esz, ub_step, src.ptr, gm_step, block_len, block_count);
  c.counters.gm_to_local_bytes += uint64_t(block_len) * block_count;
}

void CopyPadL2G(const GlobalOperand& dst, const LocalOperand& src, uint32_t esz, uint32_t block_count,
                uint32_t block_len, uint32_t src_stride, uint32_t dst_stride, const char* instr) {
  CoreState& c = LocalCore();
  const char* from = PositionName(src.pos);
  if (c.cfg.npu_arch == 2002 || block_count > 4095 || block_len > 2097151 || block_len % esz != 0)
    CheckPadCommon(c, Label(instr, from, "GM").s, esz, block_count, block_len);
  if (block_count == 0 || block_len == 0) return;
  const uint64_t ub_block = (uint64_t(block_len) + 31) / 32 * 32;
  const uint64_t ub_step = ub_block + uint64_t(src_stride) * 32;
  const uint64_t gm_step = uint64_t(block_len) + dst_stride;
  CHECK_LOCAL_I(instr, c, from, "GM", "src", src, kUB, 32, (block_count - 1) * ub_step + block_len);
  CheckGlobal(instr, "dst", dst, (block_count - 1) * gm_step + block_len);
  (dst.no_l2 ? vk::Kernels().stream_rows : vk::Kernels().copy_rows)(dst.ptr, gm_step, src.ptr, ub_step, block_len,
                                                                      block_count);
  c.counters.local_to_gm_bytes += uint64_t(block_len) * block_count;
}

}  // namespace ascendc_host
