// The dedicated ReLU kernel (contiguous float32/float16/bfloat16 tensors; NaN stays NaN). The other
// activations and their backward ops are ops of the elementwise kernel family (elementwise.h).
// Host side: the tiling function and the kernel entry points, callable from layer 5.
#pragma once
#include <cstdint>

#include "tiling_common.h"

namespace npu_kernels {

struct UnaryTiling {
  uint64_t total;      // elements
  uint64_t per_core;   // elements per core (block aligned); the last core takes the rest
  uint32_t tile;       // elements per UB tile (block aligned)
  uint32_t block_dim;
  uint32_t no_pad;     // 1 on 2002: no DataCopyPad, tails move by scalar
  uint32_t pad;
};

// Pure: shape + dtype size + SoC -> tiling. Tiles use 2 input + 2 output buffers (double
// buffering) plus a float work area for 16-bit dtypes, within the SoC's UB.
UnaryTiling unary_tiling(uint64_t total, uint32_t elem_bytes, const SocInfo& soc);

}  // namespace npu_kernels

// Kernel entry points (Ascend C): x, y in GM; tiling = UnaryTiling.
extern "C" void relu_kernel_float(uint8_t* x, uint8_t* y, uint8_t* tiling);
extern "C" void relu_kernel_half(uint8_t* x, uint8_t* y, uint8_t* tiling);
extern "C" void relu_kernel_bf16(uint8_t* x, uint8_t* y, uint8_t* tiling);
