// Internal: contiguous element-wise kernels, one table per instruction set (AVX-512, AVX2+F16C+FMA,
// portable). ascendc_vec.cpp picks the table once (__builtin_cpu_supports) and drives it for the count
// form directly and for the mask/repeat form on gathered repeats. A null entry = unsupported dtype.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>

#include "ascendc_vec.h"

namespace ascendc_host::vk {

using BinFn = void (*)(void* d, const void* a, const void* b, size_t n);
using ScalFn = void (*)(void* d, const void* a, const void* s, size_t n);  // s -> one element of the dtype
using UnFn = void (*)(void* d, const void* a, size_t n);
// Bit-packed compare (LSB first); b_is_scalar: b points to one element. n is a multiple of 8.
using CmpFn = void (*)(uint8_t* d, const void* a, const void* b, bool b_is_scalar, int mode, size_t n);
// Select with a uint8 bit mask consumed continuously from bit 0 (SELMODE 1 and 2, count form):
// d[i] = bit_i ? a[i] : (b_is_scalar ? *b : b[i]). Moves bit patterns (no arithmetic).
using SelFn = void (*)(void* d, const uint8_t* sel, const void* a, const void* b, bool b_is_scalar, size_t n);
// WholeReduceSum on float, repeats of 64 contiguous lanes: dst[r * dst_step] = pairwise tree sum
// (v[i] = v[2i] + v[2i+1] per level) of src[r * src_step + e] & lanes[e] (lanes: all-ones or 0 per lane).
using WSumFn = void (*)(float* dst, size_t dst_step, const float* src, size_t src_step, const uint32_t* lanes,
                        size_t repeats);
// ReduceMax/ReduceMin on float, count form, no index: the first-best scan (x > best / x < best from
// best = src[0]; NaN never replaces a number, a NaN src[0] is kept). The caller finds the first element
// equal to the result (the sign of a zero, the index).
using RExtFn = float (*)(const float* src, size_t n, bool is_min);
// Gather/Scatter helpers (byte offsets, 32- or 16-bit elements): the OR and the max of n offsets (for the
// range/alignment check), and the moves d[i] = *(base + o[i]) / *(base + o[i]) = a[i] (in lane order).
using OffStatsFn = void (*)(const uint32_t* o, size_t n, uint32_t* any_bits, uint32_t* max_off);
using GatherFn = void (*)(void* d, const uint8_t* base, const uint32_t* o, size_t n);
using ScatterFn = void (*)(uint8_t* base, const void* a, const uint32_t* o, size_t n);
using FillFn = void (*)(void* d, const void* s, size_t n);  // s -> one element
// GatherMask: the elements a[i], i < n, whose bit i of `bits` (LSB first) is set, packed into d in order.
using GatherMaskFn = void (*)(void* d, const void* a, const uint8_t* bits, size_t n);
// rows x `len` bytes from s (row step s_step) to d (row step d_step), touching no byte outside the rows.
using CopyRowsFn = void (*)(uint8_t* d, size_t d_step, const uint8_t* s, size_t s_step, size_t len, size_t rows);
// stream_rows: the same copy with non-temporal (cache-bypassing) stores of the aligned body of each row,
// and a store fence at the end, for GM written with SetL2CacheHint(CACHE_MODE_DISABLE).
// Sort32 ranks: for each block of 32 float scores (no NaN), rank[i] = the number of scores greater than
// s[i] plus the equal ones before it (the stable descending position). Returns the first NaN's element
// (or SIZE_MAX, then every block is ranked).
using SortRankFn = size_t (*)(uint8_t* rank, const float* s, size_t blocks);
constexpr int kNumRound = 7;

struct Table {
  const char* isa = "";
  BinFn bin[int(BinOp::NUM)][kNumDT] = {};
  ScalFn scal[int(ScalOp::NUM)][kNumDT] = {};
  UnFn un[int(UnOp::NUM)][kNumDT] = {};
  UnFn math[int(MathOp::NUM)][kNumDT] = {};  // the advanced math APIs, whole in registers
  ScalFn math_s[int(MathScalOp::NUM)][kNumDT] = {};
  UnFn cast[kNumDT][kNumDT][kNumRound] = {};  // [dst][src][RoundMode]
  CmpFn cmp[kNumDT] = {};
  SelFn sel[kNumDT] = {};  // by element size class: only F16 and F32 entries are used
  WSumFn wsum_f32 = nullptr;
  RExtFn rext_f32 = nullptr;
  OffStatsFn off_stats = nullptr;
  GatherFn gather[2] = {};    // [0] 16-bit, [1] 32-bit elements
  ScatterFn scatter[2] = {};
  FillFn fill[2] = {};
  GatherMaskFn gather_mask[2] = {};  // [0] 16-bit, [1] 32-bit elements
  CopyRowsFn copy_rows = nullptr;
  CopyRowsFn stream_rows = nullptr;
  SortRankFn sort32_rank = nullptr;
};

void FillGeneric(Table& t);  // every entry, portable code
void FillAvx2(Table& t);     // overrides the hot entries (x86-64 only)
void FillAvx512(Table& t);
// The table for this CPU, built on first use. Called on every DMA and vector instruction: the hot path
// is one acquire load (the build stays out of line, so callers keep a short prologue).
extern std::atomic<const Table*> g_table;
const Table* BuildTable();
inline const Table& Kernels() {
  const Table* t = g_table.load(std::memory_order_acquire);
  return __builtin_expect(t != nullptr, 1) ? *t : *BuildTable();
}

}  // namespace ascendc_host::vk
