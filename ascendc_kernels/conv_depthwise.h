// Depthwise 2-D convolution (groups = C = Cout) on the vector cores: MobileNet's and
// EfficientNet's 3x3 / 5x5 layers, ConvNeXt's 7x7. On the cube a depthwise conv is C GEMMs of one
// input channel (padded to a 32 B fractal row) by one output channel (padded to 16): >100x the work.
// Here each (image, channel) plane is a sum of kh * kw shifted copies of itself, weighted by a scalar:
//
//   for each tap column j: X_j[r][col] = x_padded[r0 - pt + r][col + j * dw]   (DataCopyPad: the
//       GM side starts anywhere, leftPadding / the zero columns give the padding)
//   O[0 : R * pitch] = sum over taps (i, j) of w[c][i][j] * X_j[i * dh * pitch : ...]   (Muls, Axpy)
//   y = O * scale + shift (+ ReLU)  (per-channel scalars: bias, or a folded BN)
//
// X_j rows have an aligned pitch, so every tap's operand starts on a 32 B block; O's columns past
// Wo are never stored. Strided (sh or sw > 1): the unit's input rows load once into B (zero borders),
// and for each row phase a = (i * dh) % sh in use and tap column j one Gather builds
//   X_aj[u][v] = B[a + u * sh][v * sw + j * dw + lead - pl]
// (one offset table for all, shifted by the Gather's base address), so tap (i, j) is again one Axpy
// over X_aj from row (i * dh) / sh. x, y: NCHW contiguous; w, scale, shift: float.
//
// The same kernel gives the backward: grad_input is this convolution of grad_output (zeros inserted
// between its pixels for a stride) with the flipped kernel (`flip`); grad_weight (`grad_weight` mode)
// loads a unit's grad_output rows G and per tap sums G * X_tap (Mul, ReduceSum): one partial
// [kh * kw] per unit, summed over images and row chunks by the caller.
#pragma once
#include <cstdint>

#include "tiling_common.h"

namespace npu_kernels {

struct ConvDepthwiseTiling {
  uint32_t n, c, h, w, kh, kw, dh, dw, pt, pl, ho, wo;
  uint32_t pitch;      // UB row pitch in elements (a multiple of 16), >= wo and every X_j row's data
  uint32_t rows;       // output rows per unit
  uint32_t in_rows;    // input rows per unit: rows + (kh - 1) * dh
  uint32_t chunks;     // units per plane
  uint32_t elem_bytes;
  uint32_t has_scale, has_shift, relu;
  uint32_t flip;         // the weight read as w[c][kh - 1 - i][kw - 1 - j]
  uint32_t grad_weight;  // 1: y is float [units][kh * kw] partial weight gradients, go the grad_output
  // strided path
  uint32_t sh, sw, strided;
  uint32_t lead;        // zero columns of B before a row's data (>= pl, a multiple of 16)
  uint32_t bpitch;      // B's row pitch in elements
  uint32_t b_rows;      // B rows per unit: (rows + max_shift) * sh
  uint32_t u_rows;      // rows of each X_aj: rows + max_shift
  uint32_t phase_mask;  // bit a: row phase a is used
  uint64_t units, units_per_core;
  uint32_t block_dim;
  uint32_t ok;         // 0: a padding beyond DataCopyPad's 32 B or a row that does not fit the UB
};

// Pure: shapes + SoC -> tiling.
ConvDepthwiseTiling conv_depthwise_tiling(uint32_t n, uint32_t c, uint32_t h, uint32_t w, uint32_t kh, uint32_t kw,
                                          uint32_t sh, uint32_t sw, uint32_t dh, uint32_t dw, uint32_t pt, uint32_t pb,
                                          uint32_t pl, uint32_t pr, uint32_t elem_bytes, bool grad_weight,
                                          const SocInfo& soc);
// The strided path's Gather offsets (bytes into B), u_rows * pitch entries: row u, column v ->
// (u * sh * bpitch + v * sw) * 4 for v < wo, else 0.
void conv_depthwise_offsets(const ConvDepthwiseTiling& t, uint32_t* out);

}  // namespace npu_kernels

// x: [n][c][h][w]; wt: float [c][kh * kw]; scale / shift: float [c] (unused unless has_*); offsets:
// conv_depthwise_offsets' table (strided only); y: [n][c][ho][wo] (grad_weight: the partials, and
// scale is grad_output [n][c][ho][wo] in x's dtype).
extern "C" void conv_depthwise_kernel_float(uint8_t* x, uint8_t* wt, uint8_t* scale, uint8_t* shift, uint8_t* offsets,
                                            uint8_t* y, uint8_t* tiling);
extern "C" void conv_depthwise_kernel_half(uint8_t* x, uint8_t* wt, uint8_t* scale, uint8_t* shift, uint8_t* offsets,
                                           uint8_t* y, uint8_t* tiling);
extern "C" void conv_depthwise_kernel_bf16(uint8_t* x, uint8_t* wt, uint8_t* scale, uint8_t* shift, uint8_t* offsets,
                                           uint8_t* y, uint8_t* tiling);
