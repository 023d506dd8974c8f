// One pass of an LSD radix sort of a 1-D int32 / int64 tensor on the vector cores, by 8-bit digits:
// (keys, values) are moved stably by digit `shift / 8` of the key, into two other arrays. The count and
// place kernels are the index_bucket ones' shape (index_bucket.h) with the digit as the window: each
// block counts its range's digits, index_bucket_scan_kernel turns the counts into each block's first
// slot per digit (digit-major, then block order), and the place kernel writes its range's keys and
// values to their slots (a local counting sort per UB chunk, one DMA per digit touched and array).
// The digit is (((key - base) >> shift) & 255) ^ flip, the subtraction wrapping in the key's width:
// with base the minimum every key - base is its rank-preserving offset in [0, max - min], so only the
// bytes of max - min need passes (ids below 2^24: three), and signed keys need no sign flip. flip =
// 0xFF sorts descending (ties keep their order either way: the sort is stable). Values are the uint32
// positions the keys came from (`iota`: the first pass takes position j itself). radix_range_kernel
// writes each block's (min, max) as int64 pairs for the host to pick base and passes.
//
// Workspace (uint32): counts [block_dim][256] at 0, starts [257] at starts_at.
#pragma once
#include <cstdint>

#include "index_bucket.h"
#include "tiling_common.h"

namespace npu_kernels {

struct RadixTiling {
  static constexpr uint32_t kDigits = 256;
  uint64_t n = 0, per_block = 0;
  uint64_t starts_at = 0, ws_words = 0;
  uint32_t chunk = 4096, block_dim = 1;  // chunk: set by the tiling
  uint32_t wide = 1;    // int64 keys (else int32)
  uint32_t shift = 0;   // bits below the digit
  uint32_t flip = 0;    // xor'ed into the digit
  uint32_t iota = 0;    // values_in is implicit: value j at position j
  uint64_t base = 0;    // subtracted from every key (its bits, wrapping)
};

RadixTiling radix_tiling(uint64_t n, bool wide, uint64_t base, uint32_t shift, uint32_t flip, bool iota,
                         const SocInfo& soc);
// The scan kernel's tiling for a radix pass (index_bucket_scan_kernel reads block_dim, W and the layout).
IndexBucketTiling radix_scan_tiling(const RadixTiling& t);

}  // namespace npu_kernels

extern "C" void radix_range_kernel(uint8_t* keys, uint8_t* out, uint8_t* tiling);
extern "C" void radix_count_kernel(uint8_t* keys, uint8_t* ws, uint8_t* tiling);
extern "C" void radix_place_kernel(uint8_t* keys_in, uint8_t* values_in, uint8_t* keys_out, uint8_t* values_out,
                                   uint8_t* ws, uint8_t* tiling);
