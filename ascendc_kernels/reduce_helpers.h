// Kernel-side helpers shared by the reduction and softmax kernels (Ascend C, inline): pairwise folds,
// one-value-per-row WholeReduce, GM -> UB row copies, row-broadcast binary ops.
#pragma once
#include <cstdint>
#include <cstring>

#include "kernel_operator.h"
#include "reduce.h"

namespace npu_kernels::reduce_helpers {

using namespace AscendC;

template <typename T>
constexpr uint32_t kElemsPerBlock = 32 / sizeof(T);

__aicore__ inline uint32_t AlignUpU(uint32_t a, uint32_t b) { return (a + b - 1) / b * b; }
__aicore__ inline uint64_t MinU(uint64_t a, uint64_t b) { return a < b ? a : b; }

__aicore__ inline void CombineVec(uint32_t comb, const LocalTensor<float>& d, const LocalTensor<float>& a,
                                  const LocalTensor<float>& b, int32_t n) {
  if (n <= 0) return;
  if (comb == npu_kernels::kCombSum) Add(d, a, b, n);
  else if (comb == npu_kernels::kCombMax) Max(d, a, b, n);
  else Min(d, a, b, n);
}

// Folds `rows` rows of `stride` floats (row r at v[r*stride]) into row 0, pairing row i with row i + (n - h).
__aicore__ inline void FoldRows(uint32_t comb, const LocalTensor<float>& v, uint32_t rows, uint32_t stride) {
  uint32_t n = rows;
  while (n > 1) {
    const uint32_t h = n / 2;
    CombineVec(comb, v, v, v[(n - h) * stride], static_cast<int32_t>(h * stride));
    n -= h;
  }
}

// FoldRows of src (rows x stride) into dst's row 0 (src untouched).
__aicore__ inline void FoldRowsCopy(uint32_t comb, const LocalTensor<float>& dst, const LocalTensor<float>& src,
                                    uint32_t rows, uint32_t stride) {
  if (rows == 1) {
    DataCopy(dst, src, stride);
    return;
  }
  const uint32_t h = rows / 2;
  if (rows - h > h) DataCopy(dst[h * stride], src[h * stride], stride);  // odd: the middle row moves as is
  CombineVec(comb, dst, src, src[(rows - h) * stride], static_cast<int32_t>(h * stride));
  FoldRows(comb, dst, rows - h, stride);
}

// Width of the first fold of n > 8 lanes: the largest 8 * 2^j below n, so later levels halve exactly to 8.
__aicore__ inline uint32_t FoldWidth(uint32_t n) {
  uint32_t h = 8;
  while (h * 2 < n) h *= 2;
  return h;
}

// Folds v[0:n] (n >= 8) pairwise into exactly 8 lanes written at dst8 (32 B aligned, may be v itself);
// v is clobbered.
__aicore__ inline void FoldTo8(uint32_t comb, const LocalTensor<float>& dst8, const LocalTensor<float>& v, uint32_t n) {
  if (n > 8) {
    const uint32_t h = FoldWidth(n);
    if (h == 8) {
      CombineVec(comb, v, v, v[8], static_cast<int32_t>(n - 8));
    } else {
      CombineVec(comb, v, v, v[h], static_cast<int32_t>(n - h));
      uint32_t w = h;
      while (w > 16) {
        w /= 2;
        CombineVec(comb, v, v, v[w], static_cast<int32_t>(w));
      }
      CombineVec(comb, dst8, v, v[8], 8);
      return;
    }
  }
  if (dst8.GetPhyAddr() != v.GetPhyAddr()) DataCopy(dst8, v, 8);
}

// FoldTo8 of src[0:n] (n >= 8) that leaves src intact: the first level reads src and writes scratch.
__aicore__ inline void FoldTo8Copy(uint32_t comb, const LocalTensor<float>& dst8, const LocalTensor<float>& scratch,
                                   const LocalTensor<float>& src, uint32_t n) {
  if (n <= 16) {
    DataCopy(dst8, src, 8);
    if (n > 8) CombineVec(comb, dst8, src, src[8], static_cast<int32_t>(n - 8));
    return;
  }
  const uint32_t h = FoldWidth(n);
  const uint32_t m = n - h;
  const uint32_t a = m / 8 * 8;
  if (h > a) DataCopy(scratch[a], src[a], h - a);
  CombineVec(comb, scratch, src, src[h], static_cast<int32_t>(m));
  FoldTo8(comb, dst8, scratch, h);
}

// Row r's 8 lanes at src[r * pitch] (pitch in floats, a multiple of 8) -> dst[r] (dst 32 B aligned),
// 8 rows per BlockReduce repeat.
__aicore__ inline void BlockReduceRows(uint32_t comb, const LocalTensor<float>& dst, const LocalTensor<float>& src,
                                       uint32_t rows, uint32_t pitch) {
  const int32_t blk = static_cast<int32_t>(pitch / 8);
  const int32_t rep = static_cast<int32_t>(pitch);  // 8 rows of pitch/8 blocks
  auto run = [&](uint32_t r0, int32_t repeats, int32_t mask) {
    LocalTensor<float> d = dst[r0];
    LocalTensor<float> s = src[r0 * pitch];
    if (comb == npu_kernels::kCombSum) BlockReduceSum(d, s, repeats, mask, 1, blk, rep);
    else if (comb == npu_kernels::kCombMax) BlockReduceMax(d, s, repeats, mask, 1, blk, rep);
    else BlockReduceMin(d, s, repeats, mask, 1, blk, rep);
  };
  const uint32_t full = rows / 8;
  for (uint32_t q = 0; q < full; q += 255) run(q * 8, static_cast<int32_t>(full - q < 255 ? full - q : 255), 64);
  if (rows % 8) run(full * 8, 1, static_cast<int32_t>(8 * (rows % 8)));
}

// One value per row: rows r = 0..rows-1 start at src[r * stride_blocks * 8] (float), the first `mask` lanes
// of each row (<= 64) are reduced into dst[r].
__aicore__ inline void WholeReduceRows(uint32_t comb, const LocalTensor<float>& dst, const LocalTensor<float>& src,
                                       uint32_t mask, uint32_t rows, uint32_t stride_blocks) {
  for (uint32_t r0 = 0; r0 < rows; r0 += 255) {
    const int32_t n = static_cast<int32_t>(rows - r0 < 255 ? rows - r0 : 255);
    LocalTensor<float> d = dst[r0];
    LocalTensor<float> s = src[r0 * stride_blocks * 8];
    const int32_t m = static_cast<int32_t>(mask);
    const int32_t st = static_cast<int32_t>(stride_blocks);
    if (comb == npu_kernels::kCombSum) WholeReduceSum(d, s, m, n, 1, 1, st);
    else if (comb == npu_kernels::kCombMax) WholeReduceMax(d, s, m, n, 1, 1, st, ReduceOrder::ORDER_ONLY_VALUE);
    else WholeReduceMin(d, s, m, n, 1, 1, st, ReduceOrder::ORDER_ONLY_VALUE);
  }
}

__aicore__ inline float BitsAsFloat(int32_t v) {
  float f;
  std::memcpy(&f, &v, sizeof f);
  return f;
}

// GM -> UB of n contiguous elements (the bulk with DataCopy, an unaligned tail with DataCopyPad).
template <typename T>
__aicore__ inline void CopyInContiguous(const LocalTensor<T>& dst, const GlobalTensor<T>& src, uint32_t n) {
  const uint32_t al = n / kElemsPerBlock<T> * kElemsPerBlock<T>;
  if (al > 0) DataCopy(dst, src, al);
  if (n > al) {
    DataCopyPad(dst[al], src[al], DataCopyExtParams{1, static_cast<uint32_t>((n - al) * sizeof(T)), 0, 0, 0},
                DataCopyPadExtParams<T>{false, 0, 0, T(0)});
  }
}

// GM -> UB of `rows` rows of `w` elements, GM row pitch `gm_pitch`, UB row pitch `ub_pitch` (elements,
// ub_pitch * sizeof(T) a multiple of 32 B).
template <typename T>
__aicore__ inline void CopyInRows(const LocalTensor<T>& dst, const GlobalTensor<T>& src, uint32_t rows, uint32_t w,
                                  uint64_t gm_pitch, uint32_t ub_pitch) {
  constexpr uint32_t epb = kElemsPerBlock<T>;
  if (w == gm_pitch && w == ub_pitch && w % epb == 0) {
    DataCopy(dst, src, rows * w);
    return;
  }
  if (w % epb == 0 && gm_pitch % epb == 0) {
    if ((gm_pitch - w) / epb <= 65535 && w / epb <= 65535) {
      DataCopy(dst, src,
               DataCopyParams{static_cast<uint16_t>(rows), static_cast<uint16_t>(w / epb),
                              static_cast<uint16_t>((gm_pitch - w) / epb),
                              static_cast<uint16_t>((ub_pitch - w) / epb)});
    } else {  // GM gap beyond the 16-bit stride field: one copy per row
      for (uint32_t r = 0; r < rows; ++r) DataCopy(dst[r * ub_pitch], src[r * gm_pitch], w);
    }
    return;
  }
  if (w >= 256) {  // long unaligned rows: aligned bulk + padded tail per row
    for (uint32_t r = 0; r < rows; ++r) CopyInContiguous(dst[r * ub_pitch], src[r * gm_pitch], w);
    return;
  }
  const uint32_t padded = AlignUpU(w, epb);
  DataCopyPad(dst, src,
              DataCopyExtParams{static_cast<uint16_t>(rows), static_cast<uint32_t>(w * sizeof(T)),
                                static_cast<uint32_t>((gm_pitch - w) * sizeof(T)),
                                static_cast<uint32_t>((ub_pitch - padded) / epb), 0},
              DataCopyPadExtParams<T>{false, 0, 0, T(0)});
}

// UB -> GM of n contiguous elements (DataCopy for the bulk, DataCopyPad for an unaligned tail).
template <typename T>
__aicore__ inline void CopyOutContiguous(const GlobalTensor<T>& dst, const LocalTensor<T>& src, uint32_t n) {
  const uint32_t al = n / kElemsPerBlock<T> * kElemsPerBlock<T>;
  if (al > 0) DataCopy(dst, src, al);
  if (n > al) DataCopyPad(dst[al], src[al], DataCopyExtParams{1, static_cast<uint32_t>((n - al) * sizeof(T)), 0, 0, 0});
}

// UB -> GM of `rows` rows of `w` elements (UB row pitch `ub_pitch`, GM row pitch `gm_pitch`).
template <typename T>
__aicore__ inline void CopyOutRows(const GlobalTensor<T>& dst, const LocalTensor<T>& src, uint32_t rows, uint32_t w,
                                   uint64_t gm_pitch, uint32_t ub_pitch) {
  constexpr uint32_t epb = kElemsPerBlock<T>;
  if (w == gm_pitch && w == ub_pitch && w % epb == 0) {
    DataCopy(dst, src, rows * w);
    return;
  }
  if (w % epb == 0 && gm_pitch % epb == 0) {
    if ((gm_pitch - w) / epb <= 65535 && w / epb <= 65535) {
      DataCopy(dst, src,
               DataCopyParams{static_cast<uint16_t>(rows), static_cast<uint16_t>(w / epb),
                              static_cast<uint16_t>((ub_pitch - w) / epb),
                              static_cast<uint16_t>((gm_pitch - w) / epb)});
    } else {
      for (uint32_t r = 0; r < rows; ++r) DataCopy(dst[r * gm_pitch], src[r * ub_pitch], w);
    }
    return;
  }
  if (w >= 256) {
    for (uint32_t r = 0; r < rows; ++r) CopyOutContiguous(dst[r * gm_pitch], src[r * ub_pitch], w);
    return;
  }
  DataCopyPad(dst, src,
              DataCopyExtParams{static_cast<uint16_t>(rows), static_cast<uint32_t>(w * sizeof(T)),
                                static_cast<uint32_t>((ub_pitch - AlignUpU(w, epb)) / epb),
                                static_cast<uint32_t>((gm_pitch - w) * sizeof(T)), 0});
}

enum class RowOp : uint8_t { Add, Sub, Mul, Div, Max };

// f[r, :] = f[r, :] op v for r < rows; rows at pitch `rs` floats (a multiple of 8), v has rs floats.
// (One count-form instruction per row: the repeat form with a zero src1 repeat stride would cover 255 short
// rows per instruction, but the model runs repeat forms element by element.)
__aicore__ inline void BroadcastRows(RowOp op, const LocalTensor<float>& f, const LocalTensor<float>& v,
                                     uint32_t rows, uint32_t rs) {
  const int32_t n = static_cast<int32_t>(rs);
  for (uint32_t r = 0; r < rows; ++r) {
    const LocalTensor<float> d = f[r * rs];
    switch (op) {
      case RowOp::Add: Add(d, d, v, n); break;
      case RowOp::Sub: Sub(d, d, v, n); break;
      case RowOp::Mul: Mul(d, d, v, n); break;
      case RowOp::Div: Div(d, d, v, n); break;
      case RowOp::Max: Max(d, d, v, n); break;
    }
  }
}

// src[0:n] -> dst[0] (any dst alignment). scratch receives the folds (pass src itself to fold in place).
__aicore__ inline void ReduceRowTo1(uint32_t comb, const LocalTensor<float>& dst, const LocalTensor<float>& scratch,
                                    const LocalTensor<float>& src, uint32_t n) {
  if (n < 8) {
    WholeReduceRows(comb, dst, src, n, 1, 8);
    return;
  }
  if (scratch.GetPhyAddr() == src.GetPhyAddr()) FoldTo8(comb, scratch, scratch, n);
  else FoldTo8Copy(comb, scratch, scratch, src, n);
  WholeReduceRows(comb, dst, scratch, 8, 1, 8);
}

// k rows of src (pitch P floats, a multiple of 8; n valid lanes each) -> dst[0:k]. scratch has the same
// layout and receives the folds (pass src itself to fold in place). dst_aligned: dst is 32 B aligned, so
// BlockReduce finishes 8 rows per repeat (it may write up to AlignUp(k, 8) values).
__aicore__ inline void ReduceRowsTo1(uint32_t comb, const LocalTensor<float>& dst, const LocalTensor<float>& scratch,
                                     const LocalTensor<float>& src, uint32_t k, uint32_t P, uint32_t n,
                                     bool dst_aligned) {
  if (n < 8) {
    WholeReduceRows(comb, dst, src, n, k, P / 8);
    return;
  }
  const bool in_place = scratch.GetPhyAddr() == src.GetPhyAddr();
  for (uint32_t r = 0; r < k; ++r) {
    if (in_place) FoldTo8(comb, scratch[r * P], scratch[r * P], n);
    else FoldTo8Copy(comb, scratch[r * P], scratch[r * P], src[r * P], n);
  }
  if (dst_aligned) BlockReduceRows(comb, dst, scratch, k, P);
  else WholeReduceRows(comb, dst, scratch, 8, k, P / 8);
}

}  // namespace npu_kernels::reduce_helpers
