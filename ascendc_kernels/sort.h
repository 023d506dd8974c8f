// sort along the last dim of x[rows, n] on the vector cores, for float / half / bfloat16, stable, with
// int64 indices; the sort instructions of 2201 (Sort32, MrgSort, Extract) do the ordering.
//
// Scores are float: the value, negated for an ascending sort (the instructions sort descending; the
// negation keeps equal values in index order, so both directions are stable). NaN ranks above every
// number as on the CPU, but the instructions leave NaN undefined: it is scored as +inf for descending
// (-inf for ascending), and a row whose output then holds +inf values gets a fix-up pass that writes
// the NaN and +inf entries in their true order (NaN first for descending, last for ascending; each in
// index order) from a scan of the row.
//
// Phase 0 — rows of n <= kSortTile: each row sits in a slot of `slot` elements (the power of two >= n,
// padded with -inf, which sorts after every real element as the padding's indices are larger);
// `slots` rows form one UB batch: Sort32 over the batch, then MrgSort levels in the repeat form
// (4 runs -> 1 per repeat; a last 2-queue level when the slot is 2·4^k·32), then Extract, the value /
// index conversions and one strided DataCopyPad per output. Longer rows: each tile of kSortTile
// elements is sorted the same way and written as (score, index) structures to a GM workspace.
// Phase 1 — merge passes over the workspace: a unit merges up to four runs of `run` structures into one
// (4·run) with MrgSort in exhausted-suspension mode over UB windows of kSortWindow structures per
// queue, refilling the window that ran out; the last pass writes values and indices instead.
// With limit < n (topk) only the first `limit` structures of every run are kept and merged, so the
// merge passes cost O(tiles · limit) rather than O(n) per pass.
#pragma once
#include <cstdint>

#include "tiling_common.h"

namespace npu_kernels {

constexpr uint32_t kSortTile = 4096;    // elements sorted in UB at once
constexpr uint32_t kSortWindow = 1024;  // structures per queue window in a merge pass

struct SortTiling {
  uint64_t rows = 0;
  uint32_t n = 0;           // row length
  uint32_t limit = 0;       // outputs per row: the first `limit` of the sorted row (n: all; topk: k)
  uint32_t dtype = 0;       // EwDType: F32 / F16 / BF16
  uint32_t descending = 0;
  uint32_t phase = 0;       // 0: sort slots / tiles in UB; 1: a merge pass over the workspace
  uint32_t slot = 0;        // phase 0: elements per slot (power of two, 32..kSortTile)
  uint32_t slots = 1;       // phase 0: slots per UB batch
  uint32_t tiles = 1;       // phase 0: tiles per row (1: rows in slots, written out directly)
  uint32_t run = 0;         // phase 1: length of the sorted runs read
  uint32_t final_pass = 0;  // phase 1: writes values / indices (else structures)
  uint64_t units = 0, units_per_core = 0;
  uint32_t block_dim = 1;
};

SortTiling sort_tiling(uint64_t rows, uint32_t n, uint32_t limit, bool descending, uint32_t dtype, const SocInfo& soc);
// The merge pass that turns runs of `run` structures into runs of 4·run.
SortTiling sort_merge_tiling(const SortTiling& first, uint32_t run, const SocInfo& soc);

// Integer keys are sorted as 16-bit digits, least significant first (an LSD radix sort whose passes are
// the stable float sort above): the digit kernel writes digit `digit` of each int32 / int64 element as
// a float — unsigned for the lower digits, signed for the top one — exact in float.
struct SortDigitTiling {
  uint64_t n = 0, per_core = 0;
  uint32_t wide = 0;   // int64 (4 digits) rather than int32 (2)
  uint32_t digit = 0;  // 0 = least significant
  uint32_t block_dim = 1;
};
constexpr uint32_t kSortDigitChunk = 4096;

SortDigitTiling sort_digit_tiling(uint64_t n, bool wide, uint32_t digit, const SocInfo& soc);

}  // namespace npu_kernels

// x: int32 or int64 [n]; out: float [n].
extern "C" void sort_digit_kernel(uint8_t* x, uint8_t* out, uint8_t* tiling);

// x: [rows, n] of the dtype; values: [rows, limit] of the dtype; indices: int64 [rows, limit]; ws_in / ws_out: rows·n structures of
// 8 bytes (phase 0 with one tile per row and phase 1's final pass leave ws_out unused).
extern "C" void sort_kernel(uint8_t* x, uint8_t* values, uint8_t* indices, uint8_t* ws_in, uint8_t* ws_out,
                            uint8_t* tiling);
