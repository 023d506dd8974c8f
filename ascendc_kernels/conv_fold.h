// Width fold of a few-channel input into the cube's 5HD layout (NC1HWC0), on the vector cores:
// the input preparation of a convolution whose kernel width is folded into the channels (a
// network's first layer: 3 channels, 7x7 taps; see UnfoldWidthIntoChannels in csrc/aten/conv.cpp).
//
//   y[n][c1][h][wo][c0] = x[n][c][h][wo * sw + j - pl]   for ch = c1 * C0 + c0 = c * kw + j < C * kw
//                                                        and the column inside the row,
//                       = 0                              for the W padding and the lanes past C * kw.
//
// The conv kernel then moves each slab GM -> L1 with one plain DataCopy per C1 plane (the layout
// it wants in L1) instead of an Nd2Nz of 32-byte pieces, and the zero lanes need no masking.
// x: NCHW (x_cl = 0) or NHWC (x_cl = 1), contiguous. A unit is `rows` input rows of one image:
// DataCopyPad moves them into a row buffer with zero borders, one Gather per (C1 plane, row) through
// an offset table of one row (byte offsets into that buffer for row 0, built by conv_fold_offsets on
// the host; offset 0 is always a zero; row r gathers from r row pitches further) builds the unit's
// output, and one strided DataCopy writes its C1 planes.
#pragma once
#include <cstdint>

#include "tiling_common.h"

namespace npu_kernels {

struct ConvFoldTiling {
  uint32_t n, c, h, w, kw, sw, pl, pr, wo;
  uint32_t c1, c0;         // output planes, lanes per plane (32 B / element size)
  uint32_t x_cl;           // 1: x is NHWC
  uint32_t elem_bytes;
  uint32_t rows;           // input rows per unit
  uint32_t lead;           // zero elements before each row's data (NCHW; NHWC: lead pixels * c)
  uint32_t row_pitch;      // UB row buffer elements per row (per channel row for NCHW)
  uint32_t buf_elems;      // row buffer elements
  uint32_t out_elems;      // unit output elements: c1 * rows * wo * c0
  uint32_t table_elems;    // the offset table's length: c1 * wo * c0 (one row of every plane)
  uint64_t units, units_per_core;
  uint32_t block_dim;
  uint32_t ok;             // 0: one input row does not fit the UB
};

// Pure: shapes + SoC -> tiling.
ConvFoldTiling conv_fold_tiling(uint32_t n, uint32_t c, uint32_t h, uint32_t w, uint32_t kw, uint32_t sw,
                                uint32_t pl, uint32_t pr, uint32_t x_cl, uint32_t elem_bytes, const SocInfo& soc);
// The Gather offsets (bytes into the row buffer) of a unit's first row, table_elems entries in
// output order [c1][wo][c0].
void conv_fold_offsets(const ConvFoldTiling& t, uint32_t* out);

}  // namespace npu_kernels

// x: input; offsets: conv_fold_offsets' table (uint32, in GM); y: [n][c1][h][wo][c0].
extern "C" void conv_fold_kernel_float(uint8_t* x, uint8_t* offsets, uint8_t* y, uint8_t* tiling);
extern "C" void conv_fold_kernel_half(uint8_t* x, uint8_t* offsets, uint8_t* y, uint8_t* tiling);
extern "C" void conv_fold_kernel_bf16(uint8_t* x, uint8_t* offsets, uint8_t* y, uint8_t* tiling);
