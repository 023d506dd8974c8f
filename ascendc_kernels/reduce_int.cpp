// Exact integer sums in Ascend C (see IntSumTiling in reduce.h): int32 words -> 16-bit digits -> int32
// digit accumulators, normalized after every tile -> int64 result as lo/hi int32 planes.
#include <cstdint>

#include "kernel_operator.h"
#include "reduce.h"
#include "reduce_helpers.h"

using namespace AscendC;
using namespace npu_kernels::reduce_helpers;

namespace npu_kernels {

IntSumTiling int_sum_tiling(uint64_t outer, uint64_t R, uint64_t inner, bool a_unsigned, bool has_b,
                            const SocInfo& soc) {
  IntSumTiling t{};
  t.outer = outer;
  t.R = R;
  t.inner = inner;
  t.a_unsigned = a_unsigned ? 1 : 0;
  t.has_b = has_b ? 1 : 0;
  const uint64_t total = outer * R * inner;
  uint64_t cores = total / (32 * 1024);
  if (cores < 1) cores = 1;
  if (cores > static_cast<uint64_t>(soc.vector_cores)) cores = static_cast<uint64_t>(soc.vector_cores);
  uint64_t w = inner < 1024 ? inner : 1024;
  if (outer * CeilDivU<uint64_t>(inner, w) < cores && inner > 128) {
    uint64_t nw = AlignUp<uint64_t>(CeilDivU<uint64_t>(inner, CeilDivU<uint64_t>(cores, outer)), 64);
    if (nw < w) w = nw;
  }
  t.chunk_w = static_cast<uint32_t>(w);
  t.chunks = CeilDivU<uint64_t>(inner, w);
  t.row_stride = AlignUp<uint32_t>(t.chunk_w, 8);
  // UB: inputs (2 buffers per plane), two digit tiles; fixed: 5 digit/carry vectors + 2 output vectors.
  const uint32_t budget = soc.ub_bytes - 10 * 1024 - 7 * t.row_stride * 4;
  const uint32_t per_row = t.row_stride * 4 * (2 * (has_b ? 2 : 1) + 2);
  uint64_t rows = budget / per_row;
  if (rows > 4095) rows = 4095;
  if (rows > R) rows = R;
  if (rows < 1) rows = 1;
  t.tile = static_cast<uint32_t>(rows);
  t.items = outer * t.chunks;
  if (cores > t.items) cores = t.items;
  if (cores < 1) cores = 1;
  t.items_per_core = t.items == 0 ? 1 : CeilDivU<uint64_t>(t.items, cores);
  t.block_dim = t.items == 0 ? 1 : static_cast<uint32_t>(CeilDivU<uint64_t>(t.items, t.items_per_core));
  return t;
}

}  // namespace npu_kernels

namespace {

using npu_kernels::IntSumTiling;

class IntSumKernel {
 public:
  __aicore__ inline void Init(GM_ADDR a, GM_ADDR b, GM_ADDR lo, GM_ADDR hi, const IntSumTiling& t) {
    t_ = t;
    i0_ = t.items_per_core * GetBlockIdx();
    i1_ = MinU(t.items, i0_ + t.items_per_core);
    const uint64_t n = t.outer * t.R * t.inner;
    aGm_.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t*>(a), n);
    if (t.has_b) bGm_.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t*>(b), n);
    loGm_.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t*>(lo), t.outer * t.inner);
    hiGm_.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t*>(hi), t.outer * t.inner);
    const uint32_t cap = t.tile * t.row_stride;
    pipe_.InitBuffer(aQ_, 2, cap * sizeof(int32_t));
    if (t.has_b) pipe_.InitBuffer(bQ_, 2, cap * sizeof(int32_t));
    pipe_.InitBuffer(lowD_, cap * sizeof(int32_t));
    pipe_.InitBuffer(highD_, cap * sizeof(int32_t));
    pipe_.InitBuffer(acc_, 5 * t.row_stride * sizeof(int32_t));
    pipe_.InitBuffer(outQ_, 1, 2 * t.row_stride * sizeof(int32_t));
  }

  __aicore__ inline void Process() {
    for (uint64_t it = i0_; it < i1_; ++it) Item(it);
  }

 private:
  // v = v & 0xFFFF on int32 lanes (shift left, then logical shift right).
  __aicore__ inline void Low16(const LocalTensor<int32_t>& d, const LocalTensor<int32_t>& s, int32_t n) {
    ShiftLeft(d, s, int32_t(16), n);
    LocalTensor<uint32_t> u = d.template ReinterpretCast<uint32_t>();
    ShiftRight(u, u, uint32_t(16), n);
  }
  __aicore__ inline void High16(const LocalTensor<int32_t>& d, const LocalTensor<int32_t>& s, bool is_unsigned,
                                int32_t n) {
    if (is_unsigned) {
      ShiftRight(d.template ReinterpretCast<uint32_t>(), s.template ReinterpretCast<uint32_t>(), uint32_t(16), n);
    } else {
      ShiftRight(d, s, int32_t(16), n);
    }
  }
  // Pairwise sum of `rows` rows (pitch rs) into row 0.
  __aicore__ inline void FoldRowsI32(const LocalTensor<int32_t>& v, uint32_t rows, uint32_t rs) {
    uint32_t n = rows;
    while (n > 1) {
      const uint32_t h = n / 2;
      Add(v, v, v[(n - h) * rs], static_cast<int32_t>(h * rs));
      n -= h;
    }
  }
  // Adds the digits of k rows of `words` into digit accumulators d_lo, d_hi.
  __aicore__ inline void AccumulatePlane(const LocalTensor<int32_t>& words, uint32_t k, bool is_unsigned,
                                         const LocalTensor<int32_t>& d_lo, const LocalTensor<int32_t>& d_hi) {
    const uint32_t rs = t_.row_stride;
    const int32_t n = static_cast<int32_t>(k * rs);
    LocalTensor<int32_t> L = lowD_.template Get<int32_t>();
    LocalTensor<int32_t> H = highD_.template Get<int32_t>();
    Low16(L, words, n);
    High16(H, words, is_unsigned, n);
    FoldRowsI32(L, k, rs);
    FoldRowsI32(H, k, rs);
    Add(d_lo, d_lo, L, static_cast<int32_t>(rs));
    Add(d_hi, d_hi, H, static_cast<int32_t>(rs));
  }
  // Carries digit i's bits above 16 into digit i + 1 (arithmetic shift: floor for negative digits); the
  // top digit wraps (the sum is taken modulo 2^64, as int64 arithmetic does).
  __aicore__ inline void Normalize(const LocalTensor<int32_t> (&D)[4], const LocalTensor<int32_t>& c) {
    const int32_t n = static_cast<int32_t>(t_.row_stride);
    for (int i = 0; i < 3; ++i) {
      ShiftRight(c, D[i], int32_t(16), n);
      Low16(D[i], D[i], n);
      Add(D[i + 1], D[i + 1], c, n);
    }
    Low16(D[3], D[3], n);
  }

  __aicore__ inline void Item(uint64_t it) {
    const uint64_t o = it / t_.chunks, ch = it % t_.chunks;
    const uint64_t col0 = ch * t_.chunk_w;
    const uint32_t wc = static_cast<uint32_t>(MinU(t_.chunk_w, t_.inner - col0));
    const uint32_t rs = t_.row_stride;
    const int32_t n = static_cast<int32_t>(rs);
    const uint64_t base = o * t_.R * t_.inner + col0;
    LocalTensor<int32_t> acc = acc_.template Get<int32_t>();
    const LocalTensor<int32_t> D[4] = {acc, acc[rs], acc[2 * rs], acc[3 * rs]};
    LocalTensor<int32_t> c = acc[4 * rs];
    Duplicate(acc, int32_t(0), static_cast<int32_t>(4 * rs));
    for (uint64_t r = 0; r < t_.R; r += t_.tile) {
      const uint32_t k = static_cast<uint32_t>(MinU(t_.tile, t_.R - r));
      LocalTensor<int32_t> a = aQ_.template AllocTensor<int32_t>();
      CopyInRows(a, aGm_[base + r * t_.inner], k, wc, t_.inner, rs);
      aQ_.EnQue(a);
      a = aQ_.template DeQue<int32_t>();
      AccumulatePlane(a, k, t_.a_unsigned != 0, D[0], D[1]);
      aQ_.FreeTensor(a);
      if (t_.has_b) {
        LocalTensor<int32_t> b = bQ_.template AllocTensor<int32_t>();
        CopyInRows(b, bGm_[base + r * t_.inner], k, wc, t_.inner, rs);
        bQ_.EnQue(b);
        b = bQ_.template DeQue<int32_t>();
        AccumulatePlane(b, k, false, D[2], D[3]);
        bQ_.FreeTensor(b);
      }
      Normalize(D, c);
    }
    // lo = D0 + (D1 << 16), hi = D2 + (D3 << 16): each digit < 2^16 after Normalize.
    LocalTensor<int32_t> out = outQ_.template AllocTensor<int32_t>();
    LocalTensor<int32_t> lo = out, hi = out[rs];
    ShiftLeft(c, D[1], int32_t(16), n);
    Add(lo, D[0], c, n);
    ShiftLeft(c, D[3], int32_t(16), n);
    Add(hi, D[2], c, n);
    outQ_.EnQue(out);
    out = outQ_.template DeQue<int32_t>();
    const uint64_t dst = o * t_.inner + col0;
    CopyOutContiguous(loGm_[dst], out, wc);
    CopyOutContiguous(hiGm_[dst], out[rs], wc);
    outQ_.FreeTensor(out);
  }

  IntSumTiling t_;
  uint64_t i0_ = 0, i1_ = 0;
  TPipe pipe_;
  TQue<TPosition::VECIN, 1> aQ_, bQ_;
  TQue<TPosition::VECOUT, 1> outQ_;
  TBuf<TPosition::VECCALC> lowD_, highD_, acc_;
  GlobalTensor<int32_t> aGm_, bGm_, loGm_, hiGm_;
};

}  // namespace

extern "C" __global__ __aicore__ void int_sum_kernel(GM_ADDR a, GM_ADDR b, GM_ADDR lo, GM_ADDR hi, GM_ADDR tiling) {
  GET_TILING_DATA_WITH_STRUCT(IntSumTiling, t, tiling);
  IntSumKernel op;
  op.Init(a, b, lo, hi, t);
  op.Process();
}
