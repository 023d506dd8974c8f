// Max pooling with indices, forward, on NHWC (channels_last) float inputs: host side (tiling struct,
// pure tiling function, kernel entry point). The kernel is in pool_nhwc.cpp.
#pragma once
#include <cstdint>

#include "tiling_common.h"

namespace npu_kernels {

// Work item = (channel chunk, output row n*OH + oh); items are chunk-major so a core rarely changes
// chunk width (its per-lane tables depend on it).
struct PoolNhwcTiling {
  uint64_t n;
  uint32_t c, h, w, oh, ow;
  uint32_t kh, kw, sh, sw, ph, pw, dh, dw;
  uint32_t cc;        // channels per chunk (multiple of 8); the last chunk holds the rest
  uint32_t chunks;
  uint32_t wcols;     // padded row columns: pw of -inf, W of data, -inf up to the last tap
  uint32_t qcols;     // columns of one stride phase of the row: ceil(wcols / sw)
  uint32_t phase_pitch;  // floats between phase buffers: qcols*cc + 64
  uint32_t lanes;     // lane tiles: ow*cc rounded up to 64
  uint64_t items;     // chunks * n * oh
  uint64_t items_per_core;
  uint32_t block_dim;
  uint32_t ok;        // 0: the fast path does not apply (the op takes the NCHW path)
  uint32_t values_only;  // 1: max values without indices (aten::max_pool2d); idx is not written
};

// elem_bytes must be 4 (float); C a multiple of 8. ok = 0 when a limit does not hold.
PoolNhwcTiling pool_nhwc_tiling(uint64_t n, uint32_t c, uint32_t h, uint32_t w, uint32_t oh, uint32_t ow,
                                uint32_t kh, uint32_t kw, uint32_t sh, uint32_t sw, uint32_t ph, uint32_t pw,
                                uint32_t dh, uint32_t dw, uint32_t elem_bytes, const SocInfo& soc);

}  // namespace npu_kernels

extern "C" void pool_nhwc_fwd_kernel_float(uint8_t* x, uint8_t* y, uint8_t* idx, uint8_t* tiling);
