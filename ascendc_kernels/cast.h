// On-device dtype conversion (Ascend C Cast), for contiguous tensors: the float types among
// themselves, float <-> int32 / int64, bool -> float/int32, float/int32 -> bool. Every pair goes
// through a float32 tile (exact for float16/bfloat16/bool sources); rounding follows PyTorch:
// to nearest even for float targets, toward zero for integer targets (out-of-range values
// saturate, where a CPU static_cast is undefined). Other pairs stay with the runtime's strided copy.
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

bool cast_supported(EwDType src, EwDType dst);
// Pure: elements + dtypes + SoC -> tiling.
CastTiling cast_tiling(uint64_t total, EwDType src, EwDType dst, const SocInfo& soc);

}  // namespace npu_kernels

extern "C" void cast_kernel(uint8_t* x, uint8_t* y, uint8_t* tiling);
