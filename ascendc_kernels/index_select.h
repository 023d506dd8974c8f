// index_select (and through it embedding) on the vector cores. The input is seen as x[outer, D, inner]
// and the output as y[outer, n, inner] with y[o, k, :] = x[o, index[k], :]. A work item is one output
// row (o, k); each core takes a contiguous range of rows, loads the indices it needs in chunks into
// UB (int32 or int64), checks each against [0, D) with ascendc_assert (the error names the index and
// its position, raised at the next synchronization as for CUDA's device asserts), and moves the row
// GM -> UB -> GM with DataCopyPad in chunks of at most `chunk` bytes, double buffered. Rows are moved
// as bytes, so every dtype takes the same path.
#pragma once
#include <cstdint>

#include "tiling_common.h"

namespace npu_kernels {

struct IndexSelectTiling {
  uint64_t outer = 0, dim_size = 0, inner_bytes = 0, n_idx = 0;
  uint64_t rows = 0, rows_per_core = 0;
  uint32_t chunk = 0;      // bytes per UB chunk of a row (multiple of 32)
  uint32_t idx_chunk = 0;  // indices per UB load
  uint32_t idx64 = 0;      // index dtype int64 (else int32)
  uint32_t block_dim = 1;
};

// Pure: shapes + SoC -> tiling.
IndexSelectTiling index_select_tiling(uint64_t outer, uint64_t dim_size, uint64_t inner_bytes, uint64_t n_idx,
                                      bool idx64, const SocInfo& soc);

}  // namespace npu_kernels

extern "C" void index_select_kernel(uint8_t* x, uint8_t* index, uint8_t* y, uint8_t* tiling);
// The reverse move for index_put_ (same tiling; x = values [outer, n_idx, inner], y = the tensor
// written in place): y[o, index[k], :] = x[o, k, :]. Repeated indices leave one of their rows
// (unspecified which, as PyTorch documents for accumulate=False).
extern "C" void index_put_kernel(uint8_t* values, uint8_t* index, uint8_t* self, uint8_t* tiling);
