// Bucketing a 1-D index by destination window, for the scatters whose index is shared by every
// destination row (index_add, index_copy, scatter_add with an expanded index, 1-D scatters): a unit
// of the scatter that owns the window [w << shift, (w + 1) << shift) of the indexed dim then walks only
// the updates that land there, instead of every index (1M updates into 1M elements: 64 windows, each
// walked the whole index once before). A stable counting sort in three kernels, no atomics:
//   index_bucket_count_kernel  each block counts its range of positions per window, leaving out an
//                              index outside [0, D) and recording the first (position, value) it met;
//   index_bucket_scan_kernel   one block turns the [blocks][windows] counts into each block's first slot
//                              per window (window-major, then block order) and the windows' starts, then
//                              fails naming the first bad index and its position, if any. No kernel fails
//                              before every block has written what the next kernel reads, so the chain
//                              stays consistent;
//   index_bucket_place_kernel  each block re-reads its range and writes (offset in window, position)
//                              pairs to the slots: per UB chunk a local counting sort, one DMA per window.
//                              With `payload`, the pair's second word is the update's value instead of
//                              its position (one src element of <= 4 bytes per position, read here in
//                              order: the scatter then never reads src at scattered positions).
// Within a window the pairs keep ascending position order, so the scatter applies its updates in the
// index's order, as the CPU does (repeated indices combine in the same order; the last copy wins).
//
// Workspace (uint32): counts/offsets [block_dim][W] at 0, starts [W + 1] at starts_at, pairs [J][2] at
// pairs_at, the blocks' first bad index [block_dim][4] (position, value as int64 pairs) at bad_at
// (offsets in 32 B units so every part is aligned).
#pragma once
#include <cstdint>

#include "tiling_common.h"

namespace npu_kernels {

struct IndexBucketTiling {
  static constexpr uint32_t kMaxWindows = 2048;
  uint64_t J = 0, D = 0;         // positions; the indexed dim's size (valid indices [0, D))
  uint64_t per_block = 0;        // positions per block (count and place kernels)
  uint64_t starts_at = 0, pairs_at = 0, ws_words = 0;  // workspace layout (uint32 words)
  uint64_t bad_at = 0;           // 0: no bad-index records (the radix sort's scan)
  uint32_t shift = 0, W = 1;     // window = index >> shift; windows
  uint32_t chunk = 2048;         // positions per UB chunk (set by the tiling)
  uint32_t idx64 = 1, block_dim = 1;
  uint32_t payload = 0;          // 0: position; 1, 2, 4: the src element's bytes (zero-extended)
  uint64_t src_stride = 0;       // src elements between positions (payload)
};

// The bucketing of J positions into windows of 2^shift indices of a dim of size D; nullopt-like: W = 0
// when the windows would exceed kMaxWindows or the positions 2^32.
IndexBucketTiling index_bucket_tiling(uint64_t J, uint64_t D, uint32_t shift, bool idx64, const SocInfo& soc);

}  // namespace npu_kernels

extern "C" void index_bucket_count_kernel(uint8_t* index, uint8_t* ws, uint8_t* tiling);
extern "C" void index_bucket_scan_kernel(uint8_t* ws, uint8_t* tiling);
extern "C" void index_bucket_place_kernel(uint8_t* index, uint8_t* src, uint8_t* ws, uint8_t* tiling);
