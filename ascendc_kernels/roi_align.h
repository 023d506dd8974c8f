// RoIAlign forward (torchvision::roi_align) on the vector cores.
//
// The feature map comes channels-last ([B, H, W, C] float; the host makes that copy), so the four
// neighbours of a sample point are four contiguous C-vectors and one bilinear sample is four Axpy of
// C elements with scalar weights. Per RoI (a work item; cores take contiguous ranges): the scalar
// unit computes the RoI's geometry, its sampling grid and every sample's taps and weights exactly as
// torchvision's CPU kernel (float, its order of operations); for each bin row and sample row the two
// source rows of the RoI's column window come in with one strided DataCopy each, and the samples of
// the row are added into the bin accumulators [pooled_w][C chunk]; each bin row is divided by the
// sample count and leaves as rows of the [K, pooled_h, pooled_w, C] result (the host permutes it to
// [K, C, pooled_h, pooled_w]). Channels are chunked when a wide window leaves UB short.
//
// Backward (roi_align_grad_kernel): grad_input[b] += the same taps times grad_output / count. A work
// item owns one image and one chunk of channels of the channels-last float gradient (zeroed by the
// host) and walks every RoI of that image in order: per sample row it reads the two gradient rows of
// the RoI's window, adds the samples' weighted bin gradients with Axpy and writes them back. No two
// items touch the same elements, so no atomics and the sums are deterministic.
#pragma once
#include <cstdint>

#include "tiling_common.h"

namespace npu_kernels {

struct RoiAlignTiling {
  uint32_t rois, batch, c, h, w;
  uint32_t ph, pw;             // pooled size
  int32_t sampling;            // > 0: samples per bin and dim; else ceil(roi size / pooled size)
  uint32_t aligned;            // 1: pixel centres shifted by -0.5
  double spatial_scale;
  uint32_t row_floats;         // UB floats for the two source rows (2 * window * chunk pitch at most)
  uint32_t acc_floats;         // UB floats for the bin accumulators (pw * chunk pitch at most)
 uint32_t rois_per_core, block_dim;
  // backward: items = batch * chunks, each `chunk` channels (the last fewer)
  uint32_t chunk, chunks;
  uint32_t items_per_core, grad_block_dim;
  uint32_t ok;                 // 0: a row of the map does not fit in UB even for 8 channels
};

RoiAlignTiling roi_align_tiling(uint32_t rois, uint32_t batch, uint32_t c, uint32_t h, uint32_t w, uint32_t ph,
                                uint32_t pw, int32_t sampling, bool aligned, double spatial_scale, const SocInfo& soc);

}  // namespace npu_kernels

// x float [B, H, W, C], rois float [K, 5] (batch index, x1, y1, x2, y2), y float [K, ph, pw, C].
extern "C" void roi_align_kernel(uint8_t* x, uint8_t* rois, uint8_t* y, uint8_t* tiling);
// grad_out float [K, ph, pw, C], rois float [K, 5], grad_in float [B, H, W, C] (zeroed; accumulated).
extern "C" void roi_align_grad_kernel(uint8_t* grad_out, uint8_t* rois, uint8_t* grad_in, uint8_t* tiling);
