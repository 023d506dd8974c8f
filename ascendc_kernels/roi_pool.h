// RoIPool forward (torchvision::roi_pool) on the vector cores: the maximum of each bin's window and
// its position (h * W + w, the first maximum in row-major order; -1 and 0 for an empty bin).
//
// As RoIAlign (roi_align.h), on a channels-last float copy of the map: the scalar unit computes each
// RoI's bins exactly as torchvision's CPU kernel (float coordinates, std::round / floor / ceil), a
// source row of the RoI's column window comes in with one strided DataCopy, and every pixel of a bin
// updates the bin's running maximum and position over the channels: Compare (strictly greater, so
// the first maximum wins and NaN never does), Select of the value, Select of the position.
#pragma once
#include <cstdint>

#include "tiling_common.h"

namespace npu_kernels {

struct RoiPoolTiling {
  uint32_t rois, batch, c, h, w;
  uint32_t ph, pw;
  float spatial_scale;
  uint32_t cp;                 // channel pitch in UB (c rounded up to 64: whole Compare repeats)
  uint32_t row_floats;         // UB floats for a source row window
  uint32_t rois_per_core, block_dim;
  uint32_t ok;
};

RoiPoolTiling roi_pool_tiling(uint32_t rois, uint32_t batch, uint32_t c, uint32_t h, uint32_t w, uint32_t ph,
                              uint32_t pw, float spatial_scale, const SocInfo& soc);

}  // namespace npu_kernels

// x float [B, H, W, C], rois float [K, 5] -> y float [K, ph, pw, C], argmax int32 [K, ph, pw, C].
extern "C" void roi_pool_kernel(uint8_t* x, uint8_t* rois, uint8_t* y, uint8_t* argmax, uint8_t* tiling);
