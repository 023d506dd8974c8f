// The positions of the nonzero bytes of a bool / uint8 mask, on the vector cores: the compaction under
// nonzero, masked_select and boolean-mask indexing. Two launches of one kernel, as CUDA's nonzero
// does with its count-then-scan: mode 0 counts each core's set bytes (counts[block], int32); the
// host reads back their sum (the output size is data-dependent: a synchronization like CUDA's); mode
// 1 writes the int32 linear positions, each core from its first slot (the sum of the earlier cores'
// counts) into its own range of the output, so the result is in order and independent of scheduling.
// Per UB chunk: mask bytes -> half (Cast) -> bit mask (CompareScalar != 0) -> GatherMask of the
// chunk's positions (an int32 iota plus the chunk base) -> DataCopyPad to GM.
#pragma once
#include <cstdint>

#include "tiling_common.h"

namespace npu_kernels {

struct NonzeroTiling {
  uint64_t n = 0;         // mask bytes
  uint64_t per_core = 0;  // bytes per core, a multiple of chunk
  uint32_t chunk = 0;     // bytes per UB chunk, a multiple of 256
  uint32_t block_dim = 1;
  uint32_t mode = 0;      // 0: count, 1: write positions
};

// Pure: mask size + SoC -> tiling (n < 2^31: positions are int32).
NonzeroTiling nonzero_tiling(uint64_t n, const SocInfo& soc);

}  // namespace npu_kernels

// mask: uint8 [n]; counts: int32 [block_dim] (mode 0 writes, mode 1 reads the counts of the earlier
// cores); out: int32 positions (mode 1).
extern "C" void nonzero_kernel(uint8_t* mask, uint8_t* counts, uint8_t* out, uint8_t* tiling);
