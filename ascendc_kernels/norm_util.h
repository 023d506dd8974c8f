// Kernel-side helpers shared by the nn kernels (norm, pool, loss, random): float staging of 16-bit
// data, tree sums of a UB buffer with count-form vector instructions, index vectors and the offset
// tables that replicate a short vector with Gather. Ascend C only (kernel_operator.h).
#pragma once
#include <cstdint>
#include <type_traits>

#include "kernel_operator.h"

namespace nn_kernels {

// A kernel body: Op's Init(gm args..., tiling) then Process() (for entry points that pick Op by a
// tiling field, e.g. the index dtype).
template <class Op, typename Tiling, typename... Gm>
__aicore__ inline void RunOp(const Tiling& t, Gm... gm) {
  Op op;
  op.Init(gm..., t);
  op.Process();
}

// Pipe-to-pipe synchronisation on event id 0 (set, then wait), shared by the nn kernels.
template <AscendC::HardEvent E>
__aicore__ inline void SyncPipes() {
  AscendC::SetFlag<E>(0);
  AscendC::WaitFlag<E>(0);
}
__aicore__ inline void SyncMte2ToS() { SyncPipes<AscendC::HardEvent::MTE2_S>(); }
__aicore__ inline void SyncMte2ToV() { SyncPipes<AscendC::HardEvent::MTE2_V>(); }
__aicore__ inline void SyncMte3ToV() { SyncPipes<AscendC::HardEvent::MTE3_V>(); }
__aicore__ inline void SyncSToMte2() { SyncPipes<AscendC::HardEvent::S_MTE2>(); }
__aicore__ inline void SyncSToMte3() { SyncPipes<AscendC::HardEvent::S_MTE3>(); }
__aicore__ inline void SyncSToV() { SyncPipes<AscendC::HardEvent::S_V>(); }
__aicore__ inline void SyncVToMte2() { SyncPipes<AscendC::HardEvent::V_MTE2>(); }
__aicore__ inline void SyncVToMte3() { SyncPipes<AscendC::HardEvent::V_MTE3>(); }
__aicore__ inline void SyncVToS() { SyncPipes<AscendC::HardEvent::V_S>(); }

using namespace AscendC;

// `src` as float: the tensor itself for float, else widened into `work`.
template <typename T>
__aicore__ inline LocalTensor<float> AsFloat(const LocalTensor<float>& work, const LocalTensor<T>& src, uint32_t n) {
  if constexpr (std::is_same_v<T, float>) {
    (void)work;
    (void)n;
    return src;
  } else {
    Cast(work, src, RoundMode::CAST_NONE, n);
    return work;
  }
}

// dst (T) = src (float), rounding to nearest even for 16-bit types (a copy for float when they differ).
template <typename T>
__aicore__ inline void StoreFloat(const LocalTensor<T>& dst, const LocalTensor<float>& src, uint32_t n) {
  if constexpr (std::is_same_v<T, float>) {
    if (dst.HostPtr() != src.HostPtr()) Adds(dst, src, 0.0f, n);
  } else {
    Cast(dst, src, RoundMode::CAST_RINT, n);
  }
}

// Sum of buf[0, n) where n is a multiple of 64 (the caller zero-fills up to it). Folds the upper part
// onto the lower one with count-form Adds (a fixed tree: results do not depend on anything but n),
// then one WholeReduceSum of the last 64 lanes into scratch[0]. Destroys buf.
__aicore__ inline float FoldSum(const LocalTensor<float>& buf, const LocalTensor<float>& scratch, uint32_t n) {
  if (n == 0) return 0.0f;
  while (n > 64) {
    const uint32_t h = (n / 64 + 1) / 2 * 64;
    Add(buf, buf, buf[h], static_cast<int32_t>(n - h));
    n = h;
  }
  WholeReduceSum(scratch, buf, static_cast<int32_t>(n), 1, 1, 1, 8);
  return scratch.GetValue(0);
}

// Folds `rows` rows of `width` floats (row pitch `pitch`, a multiple of 8) onto row 0 with a fixed
// tree of count-form Adds: row 0 ends up holding the column sums.
__aicore__ inline void FoldRows(const LocalTensor<float>& buf, uint32_t rows, uint32_t pitch, uint32_t width) {
  while (rows > 1) {
    const uint32_t h = (rows + 1) / 2;
    const uint32_t moved = rows - h;
    if (width == pitch) {
      Add(buf, buf, buf[h * pitch], static_cast<int32_t>(moved * pitch));
    } else {
      for (uint32_t r = 0; r < moved; ++r) Add(buf[r * pitch], buf[r * pitch], buf[(h + r) * pitch], width);
    }
    rows = h;
  }
}

// This core's share [begin, end) of `total` work items handed out `per_core` to a core (tiling's split).
struct CoreShare {
  uint64_t begin, end;
};
__aicore__ inline CoreShare ShareOfThisCore(uint64_t total, uint64_t per_core) {
  const uint64_t b = uint64_t(AscendC::GetBlockIdx()) * per_core;
  const uint64_t e = b + per_core < total ? b + per_core : total;
  return {b, e < b ? b : e};
}

// gm[at, at + n) -> buf[0, n): one contiguous DataCopyPad (the caller synchronizes).
template <typename T>
__aicore__ inline void CopyRun(const LocalTensor<T>& buf, const GlobalTensor<T>& gm, uint64_t at, uint32_t n) {
  DataCopyPad(buf, gm[at], DataCopyExtParams(1, uint32_t(n * sizeof(T)), 0, 0, 0), DataCopyPadExtParams<T>(false, 0, 0, 0));
}

// t[i] = start + i for i < n (n > 0): eight scalar seeds, then doubling with Adds.
__aicore__ inline void Iota(const LocalTensor<int32_t>& t, uint32_t n, int32_t start = 0) {
  for (uint32_t i = 0; i < 8; ++i) t.SetValue(i, start + static_cast<int32_t>(i));
  for (uint32_t len = 8; len < n; len *= 2) {
    const uint32_t cnt = n - len < len ? n - len : len;
    Adds(t[len], t, static_cast<int32_t>(len), static_cast<int32_t>(cnt));
  }
}

// offs[j] = (j % period) * elem_bytes for j < n, with vector instructions (q = floor((j + 0.5) / period)
// in float is exact while n * period < 2^22). `tmp` holds n floats.
__aicore__ inline void PeriodicOffsets(const LocalTensor<uint32_t>& offs, const LocalTensor<float>& tmp, uint32_t n,
                                       uint32_t period, uint32_t elem_bytes) {
  LocalTensor<int32_t> oi = offs.ReinterpretCast<int32_t>();
  LocalTensor<int32_t> ti = tmp.ReinterpretCast<int32_t>();
  Iota(oi, n);
  Cast(tmp, oi, RoundMode::CAST_NONE, n);
  Adds(tmp, tmp, 0.5f, static_cast<int32_t>(n));
  Muls(tmp, tmp, 1.0f / static_cast<float>(period), static_cast<int32_t>(n));
  Cast(ti, tmp, RoundMode::CAST_FLOOR, n);
  Muls(ti, ti, static_cast<int32_t>(period), static_cast<int32_t>(n));
  Sub(oi, oi, ti, static_cast<int32_t>(n));
  Muls(oi, oi, static_cast<int32_t>(elem_bytes), static_cast<int32_t>(n));
}

// offs[j] = floor(j / period) * elem_bytes for j < n (the row of lane j), as PeriodicOffsets.
__aicore__ inline void RowOffsets(const LocalTensor<uint32_t>& offs, const LocalTensor<float>& tmp, uint32_t n,
                                  uint32_t period, uint32_t elem_bytes) {
  LocalTensor<int32_t> oi = offs.ReinterpretCast<int32_t>();
  Iota(oi, n);
  Cast(tmp, oi, RoundMode::CAST_NONE, n);
  Adds(tmp, tmp, 0.5f, static_cast<int32_t>(n));
  Muls(tmp, tmp, 1.0f / static_cast<float>(period), static_cast<int32_t>(n));
  Cast(oi, tmp, RoundMode::CAST_FLOOR, n);
  Muls(oi, oi, static_cast<int32_t>(elem_bytes), static_cast<int32_t>(n));
}

template <typename T>
__aicore__ inline T FromFloatScalar(float v) {
  return T(v);
}

template <typename T>
__aicore__ inline uint32_t BlockElems() {
  return 32 / sizeof(T);
}

}  // namespace nn_kernels
