// index_select (and through it embedding) on the vector cores. The input is seen as x[outer, D, inner]
// and the output as y[outer, n, inner] with y[o, k, :] = x[o, index[k], :]. A work item is one output
// row (o, k); each core takes a contiguous range of rows, loads the indices it needs in chunks into
// UB (int32 or int64), checks each against [0, D) with ascendc_assert (the error names the index and
// its position, raised at the next synchronization as for CUDA's device asserts), and moves the row
// GM -> UB -> GM with DataCopyPad in chunks of at most `chunk` bytes, double buffered. Rows are moved
// as bytes, so every dtype takes the same path.
//
// Short rows (inner_bytes a multiple of 2, up to 64 B; up to kGatherMaxInner when the selected rows
// are at least a quarter of D, e.g. the row pass of a reflection pad): moving each row with two
// DataCopyPads costs ~60 ns a row. Instead a work item is a group of outer slices: their [D][inner]
// tables are copied into UB at once, the item's whole output [slices][n][inner] is one vector Gather
// through an offset table built once per core (slice * table pitch + index[k] * inner_bytes + lane
// offsets, every index checked as above), and it leaves with one DataCopyPad.
#pragma once
#include <cstdint>

#include "tiling_common.h"

namespace npu_kernels {

// The longest row (bytes) the gather path takes.
constexpr uint64_t kGatherMaxInner = 1024;

struct IndexSelectTiling {
  uint64_t outer = 0, dim_size = 0, inner_bytes = 0, n_idx = 0;
  uint64_t rows = 0, rows_per_core = 0;
  uint32_t chunk = 0;      // bytes per UB chunk of a row (multiple of 32)
  uint32_t idx_chunk = 0;  // indices per UB load
  uint32_t idx64 = 0;      // index dtype int64 (else int32)
  uint32_t block_dim = 1;
  // Rows of <= 4 KB move `batch` at a time: index_select gathers them into UB and writes the batch out
  // with one DataCopyPad (the output rows are consecutive); index_put_ reads the batch's consecutive
  // value rows with one. 0: one row at a time (double buffered).
  uint32_t batch = 0, batch_pitch = 0;
  // The gather path (index_select only): 0 = off.
  uint32_t gather = 0;
  uint32_t lane_bytes = 0;      // 4 or 2: the Gather element
  uint32_t table_pitch = 0;     // UB bytes per outer slice's table (dim_size * inner_bytes, 32 B aligned)
  uint32_t slices = 0;          // outer slices per work item
  uint64_t items = 0, items_per_core = 0;
};

// Pure: shapes + SoC -> tiling. `gather` allows the gather path (index_select; not index_put).
IndexSelectTiling index_select_tiling(uint64_t outer, uint64_t dim_size, uint64_t inner_bytes, uint64_t n_idx,
                                      bool idx64, const SocInfo& soc, bool gather = false);

}  // namespace npu_kernels

extern "C" void index_select_kernel(uint8_t* x, uint8_t* index, uint8_t* y, uint8_t* tiling);
// The reverse move for index_put_ (same tiling; x = values [outer, n_idx, inner], y = the tensor
// written in place): y[o, index[k], :] = x[o, k, :]. Repeated indices leave one of their rows
// (unspecified which, as PyTorch documents for accumulate=False).
extern "C" void index_put_kernel(uint8_t* values, uint8_t* index, uint8_t* self, uint8_t* tiling);
