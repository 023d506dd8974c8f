// Separable 2-D interpolation (upsample_bilinear2d / upsample_bicubic2d forward) on the vector cores:
// y[p, oy, ox] = sum_th wh[th][oy] * sum_tw ww[tw][ox] * x[p, ih[th][oy], iw[tw][ox]] over planes
// p = (n, c) of a contiguous NCHW input, float32 / float16 / bfloat16 (computed in float, rounded
// once), with the taps and weights of PyTorch's rules computed on the host (csrc/aten/upsample.cpp).
// A dim whose size does not change is a copy: one tap of weight 1.
//
// Layout: a tile holds the same row of kp planes, one plane per UB row (pitch wp), loaded with one
// strided DataCopyPad. The horizontal pass gathers each W tap for all kp rows at once (Gather with
// byte offsets r * wp + iw, precomputed per tap and row on the host) and weights them with the tap's
// weight row (replicated per plane), so each vector instruction covers kp * ow elements. Horizontally
// interpolated input rows live in a small cache of taps_h + 1 slots (output rows are visited in
// order, so a 2x upsample computes each input row once, not twice); the vertical pass is one Muls
// plus an Axpy per further tap with the row's scalar weights. A work item is kp planes x a chunk of
// output rows; the chunks give every core work when there are few planes.
#pragma once
#include <cstdint>

#include "tiling_common.h"

namespace npu_kernels {

struct InterpTiling {
  uint64_t planes;          // N * C
  uint32_t h, w, oh, ow;
  uint32_t taps_h, taps_w;  // 1 (the dim keeps its size: a copy), 2 (linear), 4 (cubic)
  uint32_t wp, owp, ohp;    // UB pitches (elements): w, ow rounded up to 16; the H tables' row pitch
  uint32_t kp;              // planes per tile
  uint32_t groups;          // ceil(planes / kp)
  uint32_t row_chunk;       // output rows per work item
  uint32_t row_chunks;      // ceil(oh / row_chunk)
  uint64_t items, items_per_core;
  uint32_t block_dim;
  uint32_t ok;              // 0: the tables do not fit in UB (the caller composes the op instead)
};

InterpTiling interp_tiling(uint64_t planes, uint32_t h, uint32_t w, uint32_t oh, uint32_t ow, uint32_t taps_h,
                           uint32_t taps_w, uint32_t elem_bytes, const SocInfo& soc);

}  // namespace npu_kernels

// x [planes, h, w] -> y [planes, oh, ow]. Tables (device memory, built by the host for the tiling):
// woff uint32 [taps_w][kp * owp] byte offsets into the float tile (r * wp + iw) * 4; wwt float
// [taps_w][kp * owp]; hidx int32 [taps_h][ohp]; hwt float [taps_h][ohp].
extern "C" void interp2d_kernel_float(uint8_t* x, uint8_t* y, uint8_t* woff, uint8_t* wwt, uint8_t* hidx, uint8_t* hwt,
                                      uint8_t* tiling);
extern "C" void interp2d_kernel_half(uint8_t* x, uint8_t* y, uint8_t* woff, uint8_t* wwt, uint8_t* hidx, uint8_t* hwt,
                                     uint8_t* tiling);
extern "C" void interp2d_kernel_bf16(uint8_t* x, uint8_t* y, uint8_t* woff, uint8_t* wwt, uint8_t* hidx, uint8_t* hwt,
                                     uint8_t* tiling);
