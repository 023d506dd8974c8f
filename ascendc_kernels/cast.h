// On-device dtype conversion (Ascend C Cast), for contiguous tensors: every pair of float32, float16,
// bfloat16, int64, int32, int16, int8, uint8 and bool, as C++ / PyTorch convert them. Float targets
// go through a float32 tile (rounded to nearest even; int32 / int64 beyond 2^24 round there first, as
// PyTorch's Half(float(x)) does); bool targets are x != 0; integer targets go through int32 lanes:
// floats toward zero (out-of-range values saturate, where a CPU static_cast is undefined), int64 by
// its low word, narrow targets keep the low bits (uint8(300) = 44, int8(200) = -56); float / bool ->
// int64 directly. On the 310P (2002) profile only the float-hub pairs run (float <-> float / int32 /
// int64 / bool, int32 / bool -> float, int32 <-> bool); the rest take the runtime's strided copy there.
#pragma once
#include <cstdint>

#include "elementwise.h"  // EwDType
#include "tiling_common.h"

namespace npu_kernels {

struct CastTiling {
  uint64_t total = 0;      // elements
  uint64_t per_core = 0;   // elements per core (a multiple of the tile)
  uint32_t tile = 0;       // elements per UB tile (multiple of 256)
  uint32_t block_dim = 1;
  uint8_t src = 0, dst = 0;  // EwDType
  uint8_t no_pad = 0;        // 1 on 2002: no DataCopyPad, tails move by scalar
  uint8_t pad[5] = {};
};

bool cast_supported(EwDType src, EwDType dst, int npu_arch);
// Pure: elements + dtypes + SoC -> tiling.
CastTiling cast_tiling(uint64_t total, EwDType src, EwDType dst, const SocInfo& soc);

}  // namespace npu_kernels

extern "C" void cast_kernel(uint8_t* x, uint8_t* y, uint8_t* tiling);
