// Non-maximum suppression (torchvision::nms) on the vector cores, in two phases of one kernel.
//
// The host sorts the boxes by decreasing score (stable, as torchvision's CPU kernel) and passes them
// as four coordinate rows x1, y1, x2, y2 [4][n] plus their areas [n] (float).
// Phase 0 (every core): for each box i of its rows, IoU(i, j) > threshold for all j at once on the
// vector unit (Maxs / Mins against box i's scalars, Sub, Maxs 0, Mul, Adds, Sub, Div in torchvision's
// order of operations, then a CompareScalar whose bit-packed result is the suppression mask row),
// written to a [n][row_bytes] bit matrix in device memory.
// Phase 1 (one core): the greedy pass of the sorted order on the scalar unit: box i is kept when no
// kept box suppressed it, and then its mask row is ORed into the suppressed set (one DMA and one
// vector Or per kept box). Writes the kept positions (int32, in the sorted order) and their count.
#pragma once
#include <cstdint>

#include "tiling_common.h"

namespace npu_kernels {

struct NmsTiling {
  uint32_t n;              // boxes
  uint32_t npad;           // n rounded up to 64 (one Compare repeat of floats)
  uint32_t row_bytes;      // bytes of one mask row: npad / 8
  uint32_t chunk;          // boxes j per UB chunk (multiple of 64)
  uint32_t rows_per_block; // mask rows gathered in UB before one copy out
  float threshold;         // IoU > threshold suppresses (the largest float <= the double threshold)
  uint32_t phase;          // 0: masks, 1: greedy pass (set by the caller per launch)
  uint32_t rows_per_core;  // phase 0
  uint32_t block_dim;      // phase 0
  uint32_t ok;             // 0: too many boxes for phase 1's UB (the caller falls back)
};

NmsTiling nms_tiling(uint32_t n, double iou_threshold, const SocInfo& soc);

}  // namespace npu_kernels

// coords float [4][npad] (rows x1, y1, x2, y2; padding lanes 0), areas float [npad], mask uint8
// [n][row_bytes] (workspace), keep int32 [npad], count int32 [8].
extern "C" void nms_kernel(uint8_t* coords, uint8_t* areas, uint8_t* mask, uint8_t* keep, uint8_t* count,
                           uint8_t* tiling);
