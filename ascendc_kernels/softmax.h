// Softmax / log_softmax forward and backward kernels and their host tiling (layer 1).
//
// The input is viewed as x[outer, R, inner] with the softmax dim as R (contiguous after layer 5).
// Everything is computed in float in UB; numerically stable forward: m = max_R x, e = exp(x - m),
// softmax = e / sum(e) (multiplied by the reciprocal), log_softmax = (x - m) - ln(sum(e)).
// Backward: softmax: gi = y * (g - sum(g * y)); log_softmax: gi = g - exp(y) * sum(g).
// _safe_softmax (the softmax of scaled_dot_product_attention): a row whose every element is -inf gives
// zeros instead of NaN. Only rows with max == -inf are examined, element by element on the scalar unit
// (all -inf -> zeros; a NaN among them -> NaN, as the plain softmax gives).
//
// * rows (inner == 1): when a row fits in UB ("resident"), rows are packed per tile, each row's max and sum
//   come from one count-form ReduceMax / ReduceSum (a single read pass) and per-row scalars are applied
//   with one vector instruction per row: load, max, subtract, exp, sum, scale, store — one GM round trip.
//   Rows of up to 64 floats (one repeat each) instead take one instruction per 255 rows: WholeReduce for
//   the max and sum, and the per-row scalars broadcast into one block per row (Brcb) and applied by a
//   repeat-form instruction whose src1 block stride is 0 (measured: for 128-wide rows, two such
//   repeats per row cost more than the count-form instruction per row).
//   Longer rows stream through UB in three passes (max, sum of exp, write) — two for the backward.
// * columns (inner > 1): a work item is a chunk of adjacent columns; row tiles stream through UB in three
//   passes (max / sum / write) with the per-column max and sum kept as float vectors, rows folded pairwise.
#pragma once
#include <cstdint>

#include "tiling_common.h"

namespace npu_kernels {

// Rows up to this long reduce with WholeReduce and apply per-row scalars with Brcb + repeat-form
// instructions (see above).
constexpr uint64_t kSoftmaxShortRow = 64;

struct SoftmaxTiling {
  uint64_t outer;
  uint64_t R;
  uint64_t inner;
  uint64_t items;           // rows: outer rows; columns: outer x chunks
  uint64_t items_per_core;
  uint64_t chunks;
  uint32_t chunk_w;
  uint32_t row_stride;      // rows: UB row pitch of packed rows; columns: UB row pitch of a tile (elements)
  uint32_t tile;            // rows: elements per tile; columns: rows per tile
  uint32_t resident;        // rows: a whole row fits in a tile
  uint32_t block_dim;
  uint32_t log;             // 0 softmax, 1 log_softmax
  uint32_t backward;        // 0 forward, 1 backward
  uint32_t safe;            // forward softmax of rows (inner == 1): a row of all -inf gives zeros (_safe_softmax)
};

// in_bytes: input element size (forward: x; backward: grad_output/output), out_bytes: output element size.
SoftmaxTiling softmax_tiling(uint64_t outer, uint64_t R, uint64_t inner, uint32_t in_bytes, uint32_t out_bytes,
                             bool log, bool backward, const SocInfo& soc);

}  // namespace npu_kernels

// Forward: x [outer, R, inner] -> y (same shape). Suffix <input>_<output>.
extern "C" void softmax_kernel_float_float(uint8_t* x, uint8_t* y, uint8_t* tiling);
extern "C" void softmax_kernel_half_half(uint8_t* x, uint8_t* y, uint8_t* tiling);
extern "C" void softmax_kernel_bf16_bf16(uint8_t* x, uint8_t* y, uint8_t* tiling);
extern "C" void softmax_kernel_half_float(uint8_t* x, uint8_t* y, uint8_t* tiling);
// Safe-mode rows (t.safe, inner == 1) that also write each row's log-sum-exp, lse float [outer].
extern "C" void softmax_lse_kernel_float(uint8_t* x, uint8_t* y, uint8_t* lse, uint8_t* tiling);
extern "C" void softmax_lse_kernel_half(uint8_t* x, uint8_t* y, uint8_t* lse, uint8_t* tiling);
extern "C" void softmax_lse_kernel_bf16(uint8_t* x, uint8_t* y, uint8_t* lse, uint8_t* tiling);
// Backward: grad_output, output (same dtype) -> grad_input. Suffix <grad_output>_<grad_input>.
extern "C" void softmax_grad_kernel_float_float(uint8_t* g, uint8_t* y, uint8_t* gi, uint8_t* tiling);
extern "C" void softmax_grad_kernel_half_half(uint8_t* g, uint8_t* y, uint8_t* gi, uint8_t* tiling);
extern "C" void softmax_grad_kernel_bf16_bf16(uint8_t* g, uint8_t* y, uint8_t* gi, uint8_t* tiling);
extern "C" void softmax_grad_kernel_float_half(uint8_t* g, uint8_t* y, uint8_t* gi, uint8_t* tiling);
