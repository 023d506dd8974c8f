// cumsum and cumprod (`prod` = 1) on the vector cores over x[outer, R, inner] -> y[outer, R, inner]
// (contiguous). The product runs the same paths with Mul / *= from 1 (integers wrap in int64, as the
// CPU's).
//   inner > 1, float dtypes: a work item is (o, a chunk of <= chunk columns); tiles of `rows` rows come
//     in with one DataCopyPad, each row is the previous result row plus the input row (one Add, the
//     previous tile's last row carried in a float accumulator), and the tile leaves with one copy.
//     (Many rows scanned along their length are transposed by the host into this mode.)
//   inner == 1, or integer dtypes: a work item is one scanned line, summed element by element with
//     scalar arithmetic in UB chunks (float accumulation for float dtypes, exact int64 for integers).
// Float sums accumulate in float (the CPU accumulates float32 in double: results can differ in the
// last bits for long scans); half / bfloat16 outputs are rounded once per element, as the CPU's.
#pragma once
#include <cstdint>

#include "tiling_common.h"

namespace npu_kernels {

struct CumsumTiling {
  uint64_t outer = 0, R = 0, inner = 0;
  uint64_t items = 0, items_per_core = 0;
  uint32_t chunk = 0;      // columns per chunk (column mode) / elements per UB chunk (line mode)
  uint32_t chunks = 0;     // column chunks per outer index (column mode)
  uint32_t column_mode = 0;
  uint32_t in_dtype = 0, out_dtype = 0;  // EwDType
  uint32_t block_dim = 1;
  uint32_t prod = 0;       // 1: running product (cumprod)
  uint32_t rows = 0;       // column mode: rows per UB tile
};

CumsumTiling cumsum_tiling(uint64_t outer, uint64_t R, uint64_t inner, uint32_t in_dtype, uint32_t out_dtype,
                           const SocInfo& soc);

}  // namespace npu_kernels

extern "C" void cumsum_kernel(uint8_t* x, uint8_t* y, uint8_t* tiling);
