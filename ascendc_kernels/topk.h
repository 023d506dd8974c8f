// topk over the last dim of x[rows, R] on the vector cores, for float / half / bfloat16 and small k:
// per row, a float working copy in UB (negated for smallest-first, real -inf mapped to the lowest
// finite value, NaN set to -inf, the "taken" mark); k rounds of ReduceMax with calIndex, each taking
// the first maximum and marking it taken. NaN ranks above every number as on the CPU: NaN entries
// (counted with one ReduceSum) go first for largest, last for smallest, in index order. Values are
// read back from the row itself, indices are int64. Rows are split over cores.
#pragma once
#include <cstdint>

#include "tiling_common.h"

namespace npu_kernels {

struct TopkTiling {
  uint64_t rows = 0, rows_per_core = 0;
  uint32_t R = 0, R64 = 0, k = 0;
  uint32_t largest = 1, dtype = 0;  // EwDType: F32 / F16 / BF16
  uint32_t block_dim = 1;
};

constexpr uint32_t kTopkMaxR = 8192;  // row length the UB holds
constexpr uint32_t kTopkMaxK = 64;    // k rounds of a full-row reduction: small k only

TopkTiling topk_tiling(uint64_t rows, uint32_t R, uint32_t k, bool largest, uint32_t dtype, uint32_t elem_bytes,
                       const SocInfo& soc);

// topk of long rows by selection, step 2 (the host picks a threshold per row from a sorted sample):
// each row's candidates — x >= thr[row] for largest (NaN too: it ranks first), x <= thr[row] for
// smallest — compacted in index order with GatherMask into cand_v / cand_i [rows, cap] (values in x's
// dtype, int32 positions), the slots past them padded (-inf for largest, NaN for smallest: they sort
// after every candidate); count[row] = the number of candidates (it may exceed cap: then the host sorts
// whole rows instead).
struct TopkSelectTiling {
  uint64_t rows = 0, rows_per_core = 0;
  uint32_t R = 0, cap = 0;
  uint32_t largest = 1, dtype = 0;  // EwDType: F32 / F16 / BF16
  uint32_t block_dim = 1;
};
constexpr uint32_t kTopkSelectWindow = 4096;

TopkSelectTiling topk_select_tiling(uint64_t rows, uint32_t R, uint32_t cap, bool largest, uint32_t dtype,
                                    const SocInfo& soc);

}  // namespace npu_kernels

extern "C" void topk_kernel(uint8_t* x, uint8_t* values, uint8_t* indices, uint8_t* tiling);
// x [rows, R]; thr [rows] float; cand_v [rows, cap] (x's dtype); cand_i [rows, cap] int32; count [rows] int32.
extern "C" void topk_select_kernel(uint8_t* x, uint8_t* thr, uint8_t* cand_v, uint8_t* cand_i, uint8_t* count,
                                   uint8_t* tiling);
