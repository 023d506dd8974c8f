// tril / triu on the vector cores, for any dtype (rows move as bytes; zero bytes are the zero of every
// dtype). x and y are [batch, R, C] (contiguous). Row r of each matrix keeps columns j <= r + k (tril)
// or j >= r + k (triu), a prefix or a suffix of the row: a work item is one row, whose kept part moves
// GM -> UB -> GM with DataCopyPad (skipped in place) and whose other part is written from a zeroed UB
// buffer, in chunks of at most `chunk` bytes.
#pragma once
#include <cstdint>

#include "tiling_common.h"

namespace npu_kernels {

struct TrilTiling {
  uint64_t rows = 0, rows_per_core = 0;  // batch * R
  uint64_t R = 0, C = 0;
  int64_t k = 0;                          // diagonal
  uint32_t elem_bytes = 0, upper = 0, in_place = 0;
  uint32_t chunk = 0;                     // bytes per UB chunk (multiple of 32)
  uint32_t block_dim = 1;
};

TrilTiling tril_tiling(uint64_t batch, uint64_t R, uint64_t C, int64_t k, uint32_t elem_bytes, bool upper,
                       bool in_place, const SocInfo& soc);

}  // namespace npu_kernels

extern "C" void tril_kernel(uint8_t* x, uint8_t* y, uint8_t* tiling);
