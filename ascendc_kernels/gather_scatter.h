// gather / scatter / scatter_add (and index_add / index_copy, whose index is broadcast over the other
// dims) on the vector cores. The host views the tensors as 3-D around the indexed dim:
//   self  [O, D, Q]  (strides so, sd, 1; rows of a scatter destination may be strided)
//   index [O, J, Q]  (any element strides: io, ij, iq; index_add passes 0, 1, 0)
//   src   [O, J, Q]  (any element strides; a scalar value has all three 0)   out (gather) [O, J, Q] contiguous
// gather:      out[o, j, q]                 = self[o, index[o, j, q], q]
// scatter:     self[o, index[o, j, q], q]   = src[o, j, q]    (j in ascending order: the last write wins)
// scatter_add: self[o, index[o, j, q], q]  += src[o, j, q]    (in float for half / bfloat16, rounded per add)
// scatter_mul / scatter_max / scatter_min: the same with *=, max, min (scatter_reduce's prod / amax / amin)
//
// gather: each core takes a range of output elements; index and self are read as scalars through the
// DCache (read-only data), the outputs are staged in UB and leave with one DMA per chunk.
// scatter / scatter_add: deterministic without atomics. A unit of work owns a destination tile
// self[o, d0:d1, q0:q1]: it loads the tile into UB, walks every j of its columns in order applying the
// updates that land in [d0, d1) as UB scalar operations, and writes the tile back with one DMA. Distinct
// units own disjoint destination bytes, so no two cores write the same 64 B line through the DCache
// (scalar GM writes are never used). Indices outside [0, D) fail ascendc_assert.
#pragma once
#include <cstdint>

#include "tiling_common.h"

namespace npu_kernels {

struct GatherScatterTiling {
  uint64_t O = 0, D = 0, J = 0, Q = 0;
  uint64_t so = 0, sd = 0, sq = 1;  // self strides (elements); scatter needs sq == 1
  uint64_t io = 0, ij = 0, iq = 0;  // index strides (elements)
  uint64_t vo = 0, vj = 0, vq = 0;  // src strides (scatter); unused by gather (out is contiguous)
  uint64_t units = 0, units_per_core = 0;
  uint64_t chunk = 0;               // gather: output elements per UB chunk
  uint64_t qblk = 0, dwin = 0;      // scatter: tile = dwin rows x qblk columns
  uint64_t qtiles = 0, dtiles = 0;  // scatter: tiles along q and d (units = O * qtiles * dtiles)
  uint32_t row_elems = 0;           // scatter: UB elements per tile row (qblk rounded up to 32 B)
  uint32_t flat = 0;                // scatter: Q == 1 and sd == 1: the tile is one contiguous run of dwin
  uint32_t idx64 = 0, elem_bytes = 4, block_dim = 1;
  // gather along a contiguous last dim (Q == 1, sd == 1, index rows contiguous, 2- or 4-byte
  // elements, a self row in UB): per row, the self row and index chunks are copied into UB, the
  // indices become byte offsets with vector ops (their range checked by a min / max reduction;
  // a chunk with a bad index takes the scalar path, whose assert names it) and one vector Gather
  // builds the output chunk. Set by gather_row_mode(); units are then rows.
  uint32_t row_mode = 0;
  uint32_t row_chunk = 0;           // indices per UB chunk (multiple of 64)
  // scatter with an index shared by every row o and column q (index_add, an expanded index, 1-D):
  // bucketed (see index_bucket.h). The windows are the d tiles (dwin = 2^shift rows); a unit walks
  // only its window's (row in window, j) pairs from the workspace and skips a window nobody updates.
  // vrow: whole rows per update (src rows contiguous; assign or add of float32/16, bfloat16, int32):
  // a DMA of the src row and, for add, one vector Add per update.
  uint32_t bucket = 0, shift = 0, vrow = 0, pairs_chunk = 0;
  uint32_t vrow_stage = 0;          // src rows staged per batch of vector adds
  uint32_t payload = 0;             // the pairs carry the update's value (O == Q == 1, <= 4-byte elements)
  uint64_t starts_at = 0, pairs_at = 0, ws_words = 0;
};

// What a scatter does with each update (the scatter kernels' template argument; the host picks the
// kernel by it): assign (scatter), add (scatter_add), and scatter_reduce's prod / amax / amin.
enum ScatterOp : int { kScatterAssign, kScatterAdd, kScatterMul, kScatterMax, kScatterMin };

// Joint linear index of several index tensors (x[i, j, ...]): idx [q][n] int64 (each index broadcast to
// the n positions), out[e] = sum_j w_j(e) * (product of the later sizes), w_j = idx[j][e] wrapped once if
// negative. An index outside [-size, size) fails ascendc_assert naming it, its dim and the size; the
// caller fills `out` with the sizes' product first, so positions a stopped block did not write stay out
// of range.
struct IndexLinearTiling {
  static constexpr uint32_t kMaxIndices = 8;
  uint64_t n = 0;
  uint32_t q = 0;
  uint32_t dims[kMaxIndices] = {};   // the dims of self the indices address (for the message)
  uint64_t sizes[kMaxIndices] = {};  // their sizes
  uint64_t chunk = 0, units_per_core = 0;
  uint32_t block_dim = 1;
};
IndexLinearTiling index_linear_tiling(uint64_t n, uint32_t q, const SocInfo& soc);

// gather: out elements split over the vector cores. scatter: tiles of the destination split over them.
// Switches a gather tiling (strides set) to row mode when it applies; returns whether it did.
bool gather_row_mode(GatherScatterTiling& t, const SocInfo& soc);

GatherScatterTiling gather_tiling(uint64_t O, uint64_t D, uint64_t J, uint64_t Q, uint32_t elem_bytes, bool idx64,
                                  const SocInfo& soc);
GatherScatterTiling scatter_tiling(uint64_t O, uint64_t D, uint64_t J, uint64_t Q, uint64_t sd, uint32_t elem_bytes,
                                   bool idx64, const SocInfo& soc);
// The bucketed form of a scatter whose index is shared (see `bucket`): tiles of 2^shift rows (whole rows
// when they fit), enough windows for the cores. vrow_ok: the update can take the row path (the host
// knows the op, dtype and src strides). Returns false when the windows would be too many.
bool scatter_bucket_tiling(GatherScatterTiling& t, bool vrow_ok, const SocInfo& soc);

}  // namespace npu_kernels

extern "C" void index_linear_kernel(uint8_t* idx, uint8_t* out, uint8_t* tiling);
// Copies by element size (any dtype): gather and scatter. Additions by dtype: scatter_add.
extern "C" void gather_kernel_b1(uint8_t* self, uint8_t* index, uint8_t* out, uint8_t* tiling);
extern "C" void gather_kernel_b2(uint8_t* self, uint8_t* index, uint8_t* out, uint8_t* tiling);
extern "C" void gather_kernel_b4(uint8_t* self, uint8_t* index, uint8_t* out, uint8_t* tiling);
extern "C" void gather_kernel_b8(uint8_t* self, uint8_t* index, uint8_t* out, uint8_t* tiling);
// Scatters take the bucket workspace (unused unless t.bucket) after self.
extern "C" void scatter_kernel_b1(uint8_t* src, uint8_t* index, uint8_t* self, uint8_t* ws, uint8_t* tiling);
extern "C" void scatter_kernel_b2(uint8_t* src, uint8_t* index, uint8_t* self, uint8_t* ws, uint8_t* tiling);
extern "C" void scatter_kernel_b4(uint8_t* src, uint8_t* index, uint8_t* self, uint8_t* ws, uint8_t* tiling);
extern "C" void scatter_kernel_b8(uint8_t* src, uint8_t* index, uint8_t* self, uint8_t* ws, uint8_t* tiling);
extern "C" void scatter_add_kernel_float(uint8_t* src, uint8_t* index, uint8_t* self, uint8_t* ws, uint8_t* tiling);
extern "C" void scatter_add_kernel_half(uint8_t* src, uint8_t* index, uint8_t* self, uint8_t* ws, uint8_t* tiling);
extern "C" void scatter_add_kernel_bf16(uint8_t* src, uint8_t* index, uint8_t* self, uint8_t* ws, uint8_t* tiling);
extern "C" void scatter_add_kernel_int32(uint8_t* src, uint8_t* index, uint8_t* self, uint8_t* ws, uint8_t* tiling);
extern "C" void scatter_add_kernel_int64(uint8_t* src, uint8_t* index, uint8_t* self, uint8_t* ws, uint8_t* tiling);
// Integer scatter_add of many updates into a short 1-D destination (bincount's counting): block b adds
// its range of updates into a private zeroed copy of the destination in UB and writes it to row b of
// `partial` [block_dim][pitch]; the host adds the rows' sum (exact: integer addition is associative).
// Tiling: J, D, ij, vj, idx64; units_per_core = updates per block, row_elems = pitch.
extern "C" void scatter_add_private_kernel_int32(uint8_t* src, uint8_t* index, uint8_t* partial, uint8_t* tiling);
extern "C" void scatter_add_private_kernel_int64(uint8_t* src, uint8_t* index, uint8_t* partial, uint8_t* tiling);
// scatter_reduce's prod / amax / amin (sum is scatter_add; mean adds and counts), by dtype.
#define GS_DECLARE_REDUCE(prefix)                                                                \
  extern "C" void prefix##_float(uint8_t* src, uint8_t* index, uint8_t* self, uint8_t* ws, uint8_t* tiling); \
  extern "C" void prefix##_half(uint8_t* src, uint8_t* index, uint8_t* self, uint8_t* ws, uint8_t* tiling);  \
  extern "C" void prefix##_bf16(uint8_t* src, uint8_t* index, uint8_t* self, uint8_t* ws, uint8_t* tiling);  \
  extern "C" void prefix##_int32(uint8_t* src, uint8_t* index, uint8_t* self, uint8_t* ws, uint8_t* tiling); \
  extern "C" void prefix##_int64(uint8_t* src, uint8_t* index, uint8_t* self, uint8_t* ws, uint8_t* tiling);
GS_DECLARE_REDUCE(scatter_mul_kernel)
GS_DECLARE_REDUCE(scatter_max_kernel)
GS_DECLARE_REDUCE(scatter_min_kernel)
#undef GS_DECLARE_REDUCE
