// 2-D convolution on the cube, "the way the cube does it": the input feature map moves GM (NHWC)
// -> L1 as C1HWC0 slabs (DataCopy Nd2Nz), LoadData 3D (img2col) builds the im2col micro-panel in
// L0A or L0B, the weights move GM -> L1 straight into the fractal grid (one Nd2Nz with a matrix
// stride of C0, optionally with the taps reversed for transposed convolution), Mmad accumulates
// in L0C over all of K = C1 * kh * kw * C0, and the Fixpipe epilogue (column or row scale/shift,
// residual, ReLU) writes the tile once.
//
// Two forms (same kernel):
//   form 0 (channels_last output): C[pixel, co] = im2col (L0A) x W^T (L0B); output NHWC.
//   form 1 (NCHW output):          C[co, pixel] = W (L0A) x im2col^T (L0B); output NCHW, the
//                                  per-channel epilogue is applied per row.
#pragma once
#include <cstdint>

#include "tiling_common.h"

namespace npu_kernels {

struct Conv2dTiling {
  uint32_t n, c, h, w;          // input (NHWC in GM), c = all channels
  uint32_t groups, cg, cout, cog;
  uint32_t kh, kw, sh, sw, dh, dw;
  uint32_t pt, pb, pl, pr;      // padding top, bottom, left, right
  uint32_t ho, wo;
  uint32_t elem_bytes;
  uint32_t c1g, taps;           // C1 per group, kh * kw
  uint32_t form;                // 0: NHWC out (im2col in L0A); 1: NCHW out (im2col in L0B)
  uint32_t flip;                // weights read with taps reversed (transposed convolution)
  uint32_t has_scale, has_shift, has_residual, relu;
  uint64_t x_batch;             // elements between input images (default h*w*c)
  uint64_t w_co_stride;         // elements between output channels' weights (default taps*cg)
  // Blocking.
  uint32_t tile_pix, tile_co, base_k, c1_chunk;
  uint32_t a2_bufs;             // L0A buffers of the im2col / weight micro-panel (2 = double buffered)
  uint32_t slab_pix_max;        // L1 slab capacity in pixels
  uint32_t tiles_pix, tiles_co;
  uint32_t sub_tiles;           // tiles sharing one weight tile computed together (L0C accumulators)
  uint64_t total_tiles, tiles_per_core;
  uint32_t block_dim;
  uint32_t ok;                  // 0: no blocking fits the SoC (layer 5 reports it)
  uint32_t hf32;                // float: run the cube in HF32 mode (set by the caller, not the tiling)
  uint32_t out_no_l2;           // output >= kNoL2OutputBytes: written with the L2 cache hint off
  // Weights already in the L1 fractal order (set by the caller, not the tiling): GM holds
  // [groups][c1g][taps][w_cog16][C0] (zero padded), so a chunk moves GM -> L1 with one strided
  // DataCopy instead of an Nd2Nz of 32-byte pieces.
  uint32_t w_fractal, w_cog16;
  // Input already in 5HD (NC1HWC0, zero lanes past c; set by the caller, groups == 1): each slab
  // moves GM -> L1 with one DataCopy of contiguous rows per C1 plane (conv_fold.h writes it).
  uint32_t x_5hd;
};

// Pure: shapes + SoC -> tiling. Weights are [cout][kh][kw][cg] in GM (channels_last).
Conv2dTiling conv2d_tiling(uint32_t n, uint32_t c, uint32_t h, uint32_t w, uint32_t cout, uint32_t groups,
                           uint32_t kh, uint32_t kw, uint32_t sh, uint32_t sw, uint32_t dh, uint32_t dw, uint32_t pt,
                           uint32_t pb, uint32_t pl, uint32_t pr, uint32_t elem_bytes, uint32_t form,
                           const SocInfo& soc);

}  // namespace npu_kernels

// x: NHWC input; wt: [cout][kh][kw][cg]; y: output (NHWC for form 0, NCHW for form 1);
// scale/shift: float [cout] or null; residual: output-shaped, output dtype, or null.
extern "C" void conv2d_kernel_float(uint8_t* x, uint8_t* wt, uint8_t* y, uint8_t* scale, uint8_t* shift,
                                    uint8_t* residual, uint8_t* tiling);
extern "C" void conv2d_kernel_half(uint8_t* x, uint8_t* wt, uint8_t* y, uint8_t* scale, uint8_t* shift,
                                   uint8_t* residual, uint8_t* tiling);
extern "C" void conv2d_kernel_bf16(uint8_t* x, uint8_t* wt, uint8_t* y, uint8_t* scale, uint8_t* shift,
                                   uint8_t* residual, uint8_t* tiling);

// ---- grad_weight on the cube -------------------------------------------------------------------
// dW^T[kcol, co] = sum over images and output pixels of im2col(x)[pixel, kcol] * G[pixel, co]:
// the im2col window goes into L0A transposed (LoadData 3D with enTranspose: rows = K, columns =
// pixels, the reduction), grad_output chunks into L0B, and the sum over all images and pixels
// stays in L0C. Output: a workspace [groups][c1g * kh * kw * C0][cog] (rows in img2col K order).
// Split-K: when the (group, channel tile, co tile) grid has fewer tiles than cores, the reduction
// (images x pixel chunks of pix_l1) is cut into `splits` ranges of chunks_per_split chunks, each
// block summing one range into its own float partial [split][groups][kg][cog] of a float
// workspace (the caller adds the partials: one rounding, deterministic).
// x_5hd: x is [n][c1][h][w][c0] (the conv_fold layout) and moves to L1 by plain DataCopy.
namespace npu_kernels {
struct Conv2dDwTiling {
  uint32_t n, c, h, w, groups, cg, cout, cog, kh, kw, sh, sw, dh, dw, pt, pb, pl, pr, ho, wo;
  uint32_t elem_bytes, c1g, taps;
  uint32_t go_cl;          // grad_output layout: 1 = NHWC, 0 = NCHW
  uint32_t tile_c1, tile_co, pix_step, pix_l1, slab_pix_max;
  uint32_t a2_bufs;        // L0A buffers of the im2col^T window (2 = double buffered)
  uint32_t tiles_kc, tiles_co;
  uint64_t total_tiles, tiles_per_core;
  uint32_t block_dim, ok;
  uint32_t hf32;           // float: HF32 mode (set by the caller)
  uint32_t splits;         // >= 1; > 1: float partials per split (see above)
  uint32_t chunks_img;     // pixel chunks of pix_l1 per image
  uint32_t chunks_per_split;
  uint32_t x_5hd;          // set by the caller: x is 5HD, not NHWC
};
Conv2dDwTiling conv2d_dw_tiling(uint32_t n, uint32_t c, uint32_t h, uint32_t w, uint32_t cout, uint32_t groups,
                                uint32_t kh, uint32_t kw, uint32_t sh, uint32_t sw, uint32_t dh, uint32_t dw,
                                uint32_t pt, uint32_t pb, uint32_t pl, uint32_t pr, uint32_t elem_bytes, bool go_cl,
                                const SocInfo& soc);
}  // namespace npu_kernels

// x: NHWC (or 5HD) input; go: grad_output (NHWC or NCHW per tiling); ws: workspace (see above;
// float partials when splits > 1).
extern "C" void conv2d_dw_kernel_float(uint8_t* x, uint8_t* go, uint8_t* ws, uint8_t* tiling);
extern "C" void conv2d_dw_kernel_half(uint8_t* x, uint8_t* go, uint8_t* ws, uint8_t* tiling);
extern "C" void conv2d_dw_kernel_bf16(uint8_t* x, uint8_t* go, uint8_t* ws, uint8_t* tiling);
