// Reduction kernels (sum, mean, amax/amin, max/min, argmax/argmin, var/std, vector norms, any/all) and
// their host tiling. Layer 1: the Ascend C API header and the standard library only.
//
// Design
// ------
// * View. Layer 5 brings every reduction to a contiguous x[outer, R, inner] -> y[outer, inner]: the reduced
//   dims of one pass are adjacent (coalesced into R). Reductions over several non-adjacent groups of dims
//   run one pass per group, innermost first, with float intermediates (sum/max/min/norm are associative);
//   var/std/arg reductions permute the reduced dims together with one device copy instead.
// * Two kernel shapes, chosen inside one entry point by `inner`:
//   - rows (inner == 1): every reduced row is contiguous. Short rows are packed many per UB tile
//     (DataCopy when rows are 32 B multiples, DataCopyPad with row padding otherwise): rows of <= 64
//     elements finish with one WholeReduceSum/Max/Min repeat per row (255 rows per instruction), longer
//     ones with one count-form ReduceSum/Max/Min per row (per-64-lane trees added in order), straight into
//     the output buffer. Rows longer than a tile are streamed in tiles into a float accumulator with vector
//     Add/Max/Min, which is folded by a pairwise tree of count-form vector ops to exactly 8 lanes (first
//     level to the largest 8 * 2^j below n, then exact halvings) in a staging buffer; BlockReduceSum/Max/Min
//     finishes 8 staged rows per repeat into an aligned output slot.
//     Tiles are <= 4096 elements: on the host model a small UB working set ran faster than 8K-16K tiles.
//   - columns (inner > 1): a work item is a chunk of `chunk_w` adjacent columns; tiles of `tile` rows x
//     chunk are loaded with one strided DataCopy(Pad), folded row-pairwise (whole row blocks, so each
//     level is one count-form instruction), and added to a float accumulator.
//   Pairwise folding keeps float sums accurate (error grows with log R, not R). Many short rows
//   (R <= 32, >= 2048 rows) are transposed on the device by layer 5 and reduced as columns: whole-tile
//   instructions instead of several per row.
// * Multi-core. Work items (rows or column chunks) are split in contiguous ranges over up to the SoC's
//   vector cores. When there are too few items for the cores (e.g. a full reduction of 16M elements), R is
//   split into `segments`: pass 1 writes float partials y1[outer, segments, inner] to a GM workspace, and
//   pass 2 (the same kernel, R = segments) combines them in a fixed order. Results never depend on the
//   number of host threads.
// * Precision. Inputs are cast to float in UB (half/bf16 tiles); every accumulation is float; the output
//   is cast once (RINT) at the end. Var/std are two passes: mean, then sum((x - mean)^2) / (R - correction).
// * Arg reductions (argmax/argmin, max.dim/min.dim, flattened argmax). Rows: ReduceMax/ReduceMin with
//   calIndex per tile (first extremum in the tile), tiles combined in order with a strict comparison, so ties
//   give the lowest index like PyTorch. Columns: per row Compare(x <= best) + Select(index) + Max, i.e. a
//   row replaces the best only when strictly better. Indices are int32 inside, Cast to int64 on the way out.
//   Long rows with few items are split into segments like sums; pass 2 picks the best segment and maps its
//   local index back (one scalar per output row).
// * Integer sums (bool/uint8/int8/int16/int32/int64 -> int64) are exact: see IntSumTiling / reduce_int.cpp.
// * NaN: sums propagate NaN. The vector Max/Min/Compare do not, so both kernels put NaN (arg reductions: its
//   first index) where CPU PyTorch has them, in the same pass: a ReduceSum per tile screens for NaN (the
//   sum is NaN when a NaN is there, or both infinities), and only a tile that fails is searched.
#pragma once
#include <cstdint>

#include "tiling_common.h"

namespace npu_kernels {

// Applied to every input element (in float) before combining.
enum ReducePre : uint32_t {
  kPreNone = 0,
  kPreAbs,        // |x|                      (norm p = 1, inf, -inf)
  kPreSquare,     // x^2                      (norm p = 2 / fro)
  kPrePowAbs,     // |x|^p = exp(p * ln|x|)   (other p)
  kPreNonZero,    // x != 0 ? 1 : 0           (norm p = 0, any/all)
  kPreCenterSq,   // (x - center[o, i])^2     (var/std second pass; center is float [outer, inner])
  kPreNanToZero,  // NaN -> 0                 (nansum)
};
enum ReduceComb : uint32_t { kCombSum = 0, kCombMax, kCombMin };
// Applied to every output after `scale`: y = post(acc * scale).
enum ReducePost : uint32_t { kPostNone = 0, kPostSqrt, kPostPowInv };  // PowInv: y^(1/p)

struct ReduceTiling {
  // x is [outer, R, inner]; R is split into `segments` of `seg_len` (the last may be shorter);
  // y is [outer, segments, inner].
  uint64_t outer;
  uint64_t R;
  uint64_t inner;
  uint64_t segments;
  uint64_t seg_len;
  // Work items: rows kernel (inner == 1): (row, segment) = output index; columns kernel:
  // ((outer, segment), chunk of chunk_w columns). Each core takes `items_per_core` consecutive items.
  uint64_t items;
  uint64_t items_per_core;
  uint64_t chunks;       // column chunks per (outer, segment); 1 for the rows kernel
  uint32_t chunk_w;      // columns per chunk (the last chunk may be narrower); 1 for the rows kernel
  uint32_t tile;         // rows kernel: elements per UB tile along R; columns kernel: rows per tile
  uint32_t row_stride;   // columns kernel: UB row pitch of a tile, in elements (multiple of 64)
  uint32_t out_tile;     // rows kernel: outputs buffered in UB before one write to GM
  uint32_t block_dim;
  uint32_t pre;          // ReducePre
  uint32_t comb;         // ReduceComb
  uint32_t post;         // ReducePost
  float scale;           // output scale (mean: 1/R, var: 1/(R - correction))
  float p;               // norm order for kPrePowAbs / kPostPowInv
  uint32_t nan_scan;     // 1: max/min put NaN where a slice holds one (set by reduce_tiling)
};

// Pure: shapes + dtype sizes + op + SoC -> tiling. `max_segments` = 1 forbids splitting R (the caller then
// runs a single pass). UB budget: 2 input tiles (double buffering) + float work/accumulator tiles.
ReduceTiling reduce_tiling(uint64_t outer, uint64_t R, uint64_t inner, uint32_t in_bytes, uint32_t out_bytes,
                           ReducePre pre, ReduceComb comb, uint64_t max_segments, const SocInfo& soc);

// Arg reductions: values (optional) and int64 indices of the max/min over R.
struct ArgReduceTiling {
  uint64_t outer;
  uint64_t R;
  uint64_t inner;
  uint64_t segments;     // rows kernel only (columns: 1)
  uint64_t seg_len;
  uint64_t items;
  uint64_t items_per_core;
  uint64_t chunks;
  uint32_t chunk_w;
  uint32_t tile;         // rows: elements per tile; columns: rows per tile
  uint32_t row_stride;   // columns: UB row pitch in elements (multiple of 64)
  uint32_t out_tile;     // rows: outputs buffered before a write
  uint32_t block_dim;
  uint32_t is_min;       // 0 argmax, 1 argmin
  uint32_t write_values; // 1: also write the extreme values
  uint32_t index_in;     // 1: pass 2 of a segmented reduction (map segment winners to their row index)
};

ArgReduceTiling arg_reduce_tiling(uint64_t outer, uint64_t R, uint64_t inner, uint32_t in_bytes, bool is_min,
                                  uint64_t max_segments, const SocInfo& soc);

// Exact integer sums into int64, on int32 words (ATen's int64 wraparound included). Columns kernel only:
// x is a[outer, R, inner] (and b, same shape, when has_b); the result per (outer, inner) is
//   sum(a) + 2^32 * sum(b)   (a's words read as unsigned when a_unsigned, else signed; b signed),
// written as two int32 planes: lo (bits 0..31) and hi (bits 32..63). Each word is split into 16-bit digits
// (shifts), digits are folded pairwise over a tile of rows and added to int32 digit accumulators, which are
// normalized to four 16-bit digits after every tile (so nothing overflows, whatever R).
struct IntSumTiling {
  uint64_t outer;
  uint64_t R;
  uint64_t inner;
  uint64_t items;
  uint64_t items_per_core;
  uint64_t chunks;
  uint32_t chunk_w;
  uint32_t row_stride;   // UB row pitch (words, multiple of 8)
  uint32_t tile;         // rows per tile
  uint32_t block_dim;
  uint32_t a_unsigned;
  uint32_t has_b;
};

IntSumTiling int_sum_tiling(uint64_t outer, uint64_t R, uint64_t inner, bool a_unsigned, bool has_b,
                            const SocInfo& soc);

}  // namespace npu_kernels

// a, b: int32 [outer, R, inner] (b unused unless has_b); lo, hi: int32 [outer, inner].
extern "C" void int_sum_kernel(uint8_t* a, uint8_t* b, uint8_t* lo, uint8_t* hi, uint8_t* tiling);

// Entry points. x: input [outer, R, inner]; center: float [outer, inner] (kPreCenterSq, else unused);
// y: output [outer, segments, inner] in the output dtype. Suffix: <input>_<output> dtype.
#define NPU_REDUCE_KERNEL_DECL(IN, OUT) \
  extern "C" void reduce_kernel_##IN##_##OUT(uint8_t* x, uint8_t* center, uint8_t* y, uint8_t* tiling);
NPU_REDUCE_KERNEL_DECL(float, float)
NPU_REDUCE_KERNEL_DECL(float, half)
NPU_REDUCE_KERNEL_DECL(float, bf16)
NPU_REDUCE_KERNEL_DECL(half, float)
NPU_REDUCE_KERNEL_DECL(half, half)
NPU_REDUCE_KERNEL_DECL(bf16, float)
NPU_REDUCE_KERNEL_DECL(bf16, bf16)
#undef NPU_REDUCE_KERNEL_DECL

// x: input [outer, R, inner]; index_in: int64 [outer, segments_of_pass_1] (index_in = 1, else unused);
// values: [outer, segments, inner] in the input dtype (float for segment partials), written if
// write_values; indices: int64 [outer, segments, inner].
extern "C" void arg_reduce_kernel_float(uint8_t* x, uint8_t* index_in, uint8_t* values, uint8_t* indices,
                                        uint8_t* tiling);
extern "C" void arg_reduce_kernel_half(uint8_t* x, uint8_t* index_in, uint8_t* values, uint8_t* indices,
                                       uint8_t* tiling);
extern "C" void arg_reduce_kernel_bf16(uint8_t* x, uint8_t* index_in, uint8_t* values, uint8_t* indices,
                                       uint8_t* tiling);
