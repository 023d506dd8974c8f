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

// Folds v[0:n] in place with a pairwise halving tree (both halves 32 B aligned) until n <= 64.
__aicore__ inline uint32_t FoldRow(uint32_t comb, const LocalTensor<float>& v, uint32_t n) {
  while (n > 64) {
    const uint32_t h = AlignUpU((n + 1) / 2, 8);
    CombineVec(comb, v, v, v[h], static_cast<int32_t>(n - h));
    n = h;
  }
  return n;
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
__aicore__ inline void BroadcastRows(RowOp op, const LocalTensor<float>& f, const LocalTensor<float>& v,
                                     uint32_t rows, uint32_t rs) {
  auto count_op = [&](const LocalTensor<float>& d, const LocalTensor<float>& a, int32_t n) {
    switch (op) {
      case RowOp::Add: Add(d, a, v, n); break;
      case RowOp::Sub: Sub(d, a, v, n); break;
      case RowOp::Mul: Mul(d, a, v, n); break;
      case RowOp::Div: Div(d, a, v, n); break;
      case RowOp::Max: Max(d, a, v, n); break;
    }
  };
  if (rs > 256 || rows < 4) {
    for (uint32_t r = 0; r < rows; ++r) count_op(f[r * rs], f[r * rs], static_cast<int32_t>(rs));
    return;
  }
  // Short rows: one repeat per row (src1 repeat stride 0 re-reads v), 64 columns per instruction.
  const uint8_t st = static_cast<uint8_t>(rs / 8);
  for (uint32_t c = 0; c < rs; c += 64) {
    const uint64_t mask = rs - c < 64 ? rs - c : 64;
    for (uint32_t r0 = 0; r0 < rows; r0 += 255) {
      const uint8_t rep = static_cast<uint8_t>(rows - r0 < 255 ? rows - r0 : 255);
      LocalTensor<float> d = f[r0 * rs + c];
      LocalTensor<float> b = v[c];
      const BinaryRepeatParams p(1, 1, 1, st, st, 0);
      switch (op) {
        case RowOp::Add: Add(d, d, b, mask, rep, p); break;
        case RowOp::Sub: Sub(d, d, b, mask, rep, p); break;
        case RowOp::Mul: Mul(d, d, b, mask, rep, p); break;
        case RowOp::Div: Div(d, d, b, mask, rep, p); break;
        case RowOp::Max: Max(d, d, b, mask, rep, p); break;
      }
    }
  }
}

}  // namespace npu_kernels::reduce_helpers
