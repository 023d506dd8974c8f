// searchsorted / bucketize on the vector cores: a branchless binary search of a chunk of values at
// once. Each row's boundaries (float, padded with +inf to a power of two P) sit in UB; for a chunk of
// values, pos starts at 0 and for step = P/2, P/4, ..., 1 every lane looks at boundary pos + step - 1
// (one vector Gather) and moves to pos + step unless that boundary is >= v (left) / > v (right): the
// CPU's rule (a NaN value compares false and ends at M). Positions are exact in float (P <= 2^14).
#pragma once
#include <cstdint>

#include "tiling_common.h"

namespace npu_kernels {

struct SearchsortedTiling {
  uint64_t rows = 0;        // boundary rows (1 when one boundary row serves every value)
  uint64_t m = 0;           // boundaries per row
  uint64_t k = 0;           // values per row
  uint32_t p = 0;           // a power of two > m (the padded boundary count)
  uint32_t right = 0;       // 1: the first boundary > v (right / side="right"), else >= v
  uint32_t chunk = 0;       // values per chunk (multiple of 64)
  uint64_t chunks = 0;      // per row
  uint64_t items = 0, items_per_core = 0;
  uint32_t block_dim = 1;
  uint32_t ok = 0;          // 0: the boundaries do not fit the UB
};

// Pure: shapes + SoC -> tiling.
SearchsortedTiling searchsorted_tiling(uint64_t rows, uint64_t m, uint64_t k, bool right, const SocInfo& soc);

}  // namespace npu_kernels

// boundaries: float [rows][m]; values: float [rows][k]; out: int32 [rows][k].
extern "C" void searchsorted_kernel(uint8_t* boundaries, uint8_t* values, uint8_t* out, uint8_t* tiling);
