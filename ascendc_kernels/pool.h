// 2-D pooling kernels (max with indices, average, adaptive average; forward and backward) over NCHW
// planes. Host side: the tiling struct, the pure tiling function and the kernel entry points.
#pragma once
#include <cstdint>

#include "tiling_common.h"

namespace npu_kernels {

enum PoolKind : uint32_t { kPoolMax = 0, kPoolAvg = 1, kPoolAdaptive = 2, kPoolMean = 3 };

// Geometry of one pooling launch. Windows of output (oh, ow) start at input (oh*sh - ph, ow*sw - pw)
// and take taps (kh*dh, kw*dw); adaptive pooling uses its own start/length per output row/column.
struct PoolTiling {
  uint32_t kind;
  uint64_t planes;              // N*C
  uint32_t h, w, oh, ow;
  uint32_t kh, kw, sh, sw, ph, pw, dh, dw;
  uint32_t count_include_pad;   // avg
  int32_t divisor_override;     // avg, 0 = none
  // UB geometry: a band of output rows and the padded input rows it reads (float, pitch wpad, the data
  // of each row starting at column lpad, 32-byte aligned).
  uint32_t rows;                // output rows per band
  uint32_t in_rows;             // input rows a full band reads
  uint32_t wpad, lpad;
  uint32_t lanes;               // rows*ow rounded up to 64
  uint64_t planes_per_core;
  uint32_t block_dim;
  uint32_t ok;                  // 0: the geometry does not fit the UB (the op reports it)
  // kPoolMean: planes of h*w summed per step
  uint32_t mean_planes;
};

PoolTiling pool_tiling(uint32_t kind, uint64_t planes, uint32_t h, uint32_t w, uint32_t oh, uint32_t ow, uint32_t kh,
                       uint32_t kw, uint32_t sh, uint32_t sw, uint32_t ph, uint32_t pw, uint32_t dh, uint32_t dw,
                       bool backward, uint32_t elem_bytes, const SocInfo& soc);

// Adaptive pooling windows: [floor(i*in/out), ceil((i+1)*in/out)).
inline uint32_t AdaptiveStart(uint32_t i, uint32_t in, uint32_t out) {
  return static_cast<uint32_t>((static_cast<uint64_t>(i) * in) / out);
}
inline uint32_t AdaptiveEnd(uint32_t i, uint32_t in, uint32_t out) {
  return static_cast<uint32_t>(((static_cast<uint64_t>(i) + 1) * in + out - 1) / out);
}
uint32_t AdaptiveMaxLen(uint32_t in, uint32_t out);

}  // namespace npu_kernels

#define NPU_POOL_DECL(T)                                                                                    \
  extern "C" void pool_fwd_kernel_##T(uint8_t* x, uint8_t* y, uint8_t* idx, uint8_t* tiling);               \
  extern "C" void pool_bwd_kernel_##T(uint8_t* go, uint8_t* idx, uint8_t* gx, uint8_t* tiling);
NPU_POOL_DECL(float)
NPU_POOL_DECL(half)
NPU_POOL_DECL(bf16)
#undef NPU_POOL_DECL
