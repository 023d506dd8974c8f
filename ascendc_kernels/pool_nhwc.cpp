// Max pooling with indices (or, values_only, without: aten::max_pool2d), forward, on NHWC
// (channels_last) float32 inputs, in Ascend C.
//
// A work item is one output row (n, oh) of one channel chunk of cc channels; cores take contiguous
// ranges of items (chunk-major). Each input row the window reaches is copied from GM split by stride
// phase: padded column j = iw + pW goes to phase buffer j % sW at column j / sW, whose padding columns
// hold -inf. The values of tap (kh, kw) for all ow are then one dense [OW][cc] slice of one phase
// buffer (phase (kw*dW) % sW from column (kw*dW) / sW), used in place; over its OW*cc lanes: upd = (v > M) | (v != v); M = upd ? v : M; I = upd ? tap : I. This is PyTorch's CPU
// scan (kh outer, kw inner, strict >, NaN always taken so the last NaN wins). I is kept relative to
// the lane's column base ow*sW so that a tap's index is one scalar (ih*W + kw*dW - pW); it starts at
// the window's first valid element (PyTorch's index when every valid value is -inf) and gets
// ow*sW added at the end. Indices are exact in float (planes < 2^24 elements, checked by the op).
#include "pool_nhwc.h"

#include "kernel_operator.h"
#include "norm_util.h"

using namespace AscendC;

namespace npu_kernels {

namespace {
uint64_t NhwcUbBytes(uint32_t qcols, uint32_t sw, uint32_t cc, uint32_t ow) {
  const uint64_t lanes = AlignUp<uint64_t>(static_cast<uint64_t>(ow) * cc, 64);
  // phase buffers; M, I, column table, init table (float); int32 indices (+ a zero block), their
  // widening offsets and the int64 indices; two masks
  return static_cast<uint64_t>(sw) * (static_cast<uint64_t>(qcols) * cc + 64) * 4 + lanes * (4 * 4 + 4 + 8 + 8) +
         2 * AlignUp<uint64_t>(lanes / 8, 32) + 1024;
}
}  // namespace

PoolNhwcTiling pool_nhwc_tiling(uint64_t n, uint32_t c, uint32_t h, uint32_t w, uint32_t oh, uint32_t ow,
                                uint32_t kh, uint32_t kw, uint32_t sh, uint32_t sw, uint32_t ph, uint32_t pw,
                                uint32_t dh, uint32_t dw, uint32_t elem_bytes, const SocInfo& soc) {
  PoolNhwcTiling t{};
  t.n = n;
  t.c = c;
  SetPoolWindow(t, h, w, oh, ow, kh, kw, sh, sw, ph, pw, dh, dw);
  t.block_dim = 1;
  // Limits: float only, whole 32-byte pixels, DataCopy block counts (<= 4095) and gaps (uint16 blocks).
  if (elem_bytes != 4 || c == 0 || c % 8 != 0 || w > 4095 || ow > 4095 || ow == 0 || oh == 0 || n == 0) return t;
  const uint64_t right = static_cast<uint64_t>(ow - 1) * sw + static_cast<uint64_t>(kw - 1) * dw + 1;
  const uint64_t wcols = right > static_cast<uint64_t>(pw) + w ? right : static_cast<uint64_t>(pw) + w;
  if (wcols > 65535) return t;
  t.wcols = static_cast<uint32_t>(wcols);
  t.qcols = CeilDivU<uint32_t>(t.wcols, sw);
  // Widest chunk whose tiles fit the UB.
  if (static_cast<uint64_t>(sw) * c * 4 > 0xFFFFFFFFull) return t;  // GM stride of the phase copies
  uint32_t cc = c;
  while (cc >= 8 && NhwcUbBytes(t.qcols, sw, cc, ow) > soc.ub_bytes) cc -= 8;
  if (cc < 8) return t;
  t.cc = cc;
  t.phase_pitch = t.qcols * cc + 64;
  t.chunks = CeilDivU<uint32_t>(c, cc);
  t.lanes = AlignUp<uint32_t>(ow * cc, 64);
  t.items = static_cast<uint64_t>(t.chunks) * n * oh;
  const uint64_t cores = static_cast<uint64_t>(soc.vector_cores > 0 ? soc.vector_cores : 1);
  // A core gets at least ~16K window-lane taps of work.
  const uint64_t per_item = static_cast<uint64_t>(ow) * cc * kh * kw;
  const uint64_t min_items = CeilDivU<uint64_t>(16384, per_item ? per_item : 1);
  uint64_t per = CeilDivU<uint64_t>(t.items, cores);
  if (per < min_items) per = min_items;
  t.items_per_core = per;
  t.block_dim = static_cast<uint32_t>(CeilDivU<uint64_t>(t.items, per));
  t.ok = 1;
  return t;
}

}  // namespace npu_kernels

namespace {

using npu_kernels::PoolNhwcTiling;
using namespace nn_kernels;

class MaxPoolNhwcKernel {
 public:
  __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, GM_ADDR idx, const PoolNhwcTiling& t) {
    t_ = t;
    const uint64_t in_total = t.n * t.h * t.w * t.c, out_total = t.n * t.oh * t.ow * t.c;
    xGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(x), in_total);
    yGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(y), out_total);
    if (!t.values_only) idxGm_.SetGlobalBuffer(reinterpret_cast<__gm__ int64_t*>(idx), out_total);
    const uint32_t L = t.lanes;
    pipe_.InitBuffer(row_, t.sw * t.phase_pitch * 4);
    pipe_.InitBuffer(m_, L * 4);
    pipe_.InitBuffer(i_, L * 4);
    pipe_.InitBuffer(col_, L * 4);
    pipe_.InitBuffer(init_, L * 4);
    pipe_.InitBuffer(i64_, L * 8);
    pipe_.InitBuffer(i32_, L * 4 + 32);
    pipe_.InitBuffer(widen_, L * 8);
    pipe_.InitBuffer(mask1_, npu_kernels::AlignUp<uint32_t>(L / 8, 32));
    pipe_.InitBuffer(mask2_, npu_kernels::AlignUp<uint32_t>(L / 8, 32));
    if (!t.values_only) BuildWiden();
  }

  __aicore__ inline void Process() {
    const uint64_t i0 = t_.items_per_core * GetBlockIdx();
    uint64_t i1 = i0 + t_.items_per_core;
    if (i1 > t_.items) i1 = t_.items;
    const uint64_t rows = t_.n * t_.oh;
    for (uint64_t it = i0; it < i1; ++it) {
      const uint32_t chunk = static_cast<uint32_t>(it / rows);
      const uint64_t r = it % rows;
      const uint32_t c0 = chunk * t_.cc;
      const uint32_t wc = t_.c - c0 < t_.cc ? t_.c - c0 : t_.cc;
      if (wc != pitch_) Prepare(wc);
      Item(r / t_.oh, static_cast<uint32_t>(r % t_.oh), c0, wc);
    }
  }

 private:
  // widen[2j] = 4j (I32[j]), widen[2j+1] = 4L (a zero slot after I32): one Gather of I32 through it writes
  // the int64 indices (little-endian low word, zero high word; indices are non-negative).
  __aicore__ inline void BuildWiden() {
    const uint32_t L = t_.lanes;
    LocalTensor<int32_t> w = widen_.Get<int32_t>();
    LocalTensor<int32_t> par = i64_.Get<int32_t>();
    // par = j % 2 and e = j - par, for j < 2L, from Iota in two halves of L (L is a multiple of 64)
    for (uint32_t half = 0; half < 2; ++half) {
      LocalTensor<int32_t> e = w[half * L];
      Iota(e, L, static_cast<int32_t>(half * L));
      PeriodicOffsets(par.ReinterpretCast<uint32_t>(), m_.Get<float>(), L, 2, 1);  // parity of j (L even)
      LocalTensor<int32_t> d = i_.Get<int32_t>();
      Sub(e, e, par, static_cast<int32_t>(L));
      Muls(e, e, 2, static_cast<int32_t>(L));                         // 4 * (j / 2)
      Muls(d, e, -1, static_cast<int32_t>(L));
      Adds(d, d, static_cast<int32_t>(4 * L), static_cast<int32_t>(L));
      Mul(d, d, par, static_cast<int32_t>(L));                        // par * (4L - e)
      Add(e, e, d, static_cast<int32_t>(L));
    }
    Duplicate(i32_.Get<int32_t>()[L], 0, 8);
  }

  // Per-lane index tables (not in values-only mode) and the row buffer's -inf padding for chunks of
  // wc channels.
  __aicore__ inline void Prepare(uint32_t wc) {
    pitch_ = wc;
    SyncMte3ToV();
    if (!t_.values_only) IndexTables(wc);
    SyncMte2ToV();
    Duplicate(row_.Get<float>(), -__builtin_inff(), static_cast<int32_t>(t_.sw * t_.phase_pitch));
  }
  // col: each lane's column base ow*sW; init: its window's first valid column relative to that base.
  __aicore__ inline void IndexTables(uint32_t wc) {
    const int32_t L = static_cast<int32_t>(t_.lanes);
    LocalTensor<float> col = col_.Get<float>(), init = init_.Get<float>();
    Duplicate(col, 0.0f, L);
    Duplicate(init, 0.0f, L);
    SyncVToS();
    for (uint32_t o = 0; o < t_.ow; ++o) {
      const int64_t ws = static_cast<int64_t>(o) * t_.sw - t_.pw;
      int64_t fix = 0;  // first tap column >= 0 (PyTorch: while (wstart < 0) wstart += dilation)
      if (ws < 0) fix = (-ws + t_.dw - 1) / t_.dw * t_.dw;
      Duplicate(col[o * wc], static_cast<float>(static_cast<int64_t>(o) * t_.sw), static_cast<int32_t>(wc));
      Duplicate(init[o * wc], static_cast<float>(fix - static_cast<int64_t>(t_.pw)), static_cast<int32_t>(wc));
    }
  }

  // Input row ih of image n, channels [c0, c0 + wc), into the phase buffers (padded column j = iw + pw
  // to phase j % sw, column j / sw).
  __aicore__ inline void LoadRow(const LocalTensor<float>& row, uint64_t n, uint32_t ih, uint32_t c0, uint32_t wc) {
    const uint64_t g = ((n * t_.h + ih) * t_.w) * t_.c + c0;
    for (uint32_t p = 0; p < t_.sw; ++p) {
      const uint32_t iw0 = (p + t_.sw - t_.pw % t_.sw) % t_.sw;  // first iw with (iw + pw) % sw == p
      if (iw0 >= t_.w) continue;
      const uint32_t cnt = (t_.w - iw0 + t_.sw - 1) / t_.sw;
      const uint32_t q0 = (iw0 + t_.pw) / t_.sw;
      LocalTensor<float> dst = row[p * t_.phase_pitch + q0 * wc];
      if (t_.sw * t_.c == wc) {  // the phase's pixels are contiguous in GM
        DataCopyPad(dst, xGm_[g + iw0 * t_.c], DataCopyExtParams{1, cnt * wc * 4, 0, 0, 0},
                    DataCopyPadExtParams<float>{false, 0, 0, 0.0f});
      } else {
        DataCopyPad(dst, xGm_[g + iw0 * t_.c],
                    DataCopyExtParams{static_cast<uint16_t>(cnt), wc * 4, (t_.sw * t_.c - wc) * 4, 0, 0},
                    DataCopyPadExtParams<float>{false, 0, 0, 0.0f});
      }
    }
  }

  __aicore__ inline void Item(uint64_t n, uint32_t oh, uint32_t c0, uint32_t wc) {
    const uint32_t Lc = npu_kernels::AlignUp<uint32_t>(t_.ow * wc, 64);
    const int32_t nL = static_cast<int32_t>(Lc);
    LocalTensor<float> row = row_.Get<float>(), M = m_.Get<float>(), I = i_.Get<float>();
    LocalTensor<uint8_t> m1 = mask1_.Get<uint8_t>(), m2 = mask2_.Get<uint8_t>();
    LocalTensor<uint16_t> m1h = m1.ReinterpretCast<uint16_t>(), m2h = m2.ReinterpretCast<uint16_t>();
    const int64_t hs = static_cast<int64_t>(oh) * t_.sh - t_.ph;
    int64_t h0 = hs;
    if (h0 < 0) h0 += (-h0 + t_.dh - 1) / t_.dh * t_.dh;
    SyncMte3ToV();  // the previous item's outputs have left M / I
    Duplicate(M, -__builtin_inff(), nL);
    if (!t_.values_only) Adds(I, init_.Get<float>(), static_cast<float>(h0 * static_cast<int64_t>(t_.w)), nL);
    for (uint32_t kh = 0; kh < t_.kh; ++kh) {
      const int64_t ih = hs + static_cast<int64_t>(kh) * t_.dh;
      if (ih < 0 || ih >= static_cast<int64_t>(t_.h)) continue;  // padding rows never win
      SyncVToMte2();  // the previous row's taps are read
      LoadRow(row, n, static_cast<uint32_t>(ih), c0, wc);
      SyncMte2ToV();
      for (uint32_t kw = 0; kw < t_.kw; ++kw) {
        const uint32_t j = kw * t_.dw;
        LocalTensor<float> v = row[(j % t_.sw) * t_.phase_pitch + (j / t_.sw) * wc];
        Compare(m1, v, M, CMPMODE::GT, Lc);
        Compare(m2, v, v, CMPMODE::NE, Lc);
        Or(m1h, m1h, m2h, static_cast<int32_t>(Lc / 16));
        Select(M, m1, v, M, SELMODE::VSEL_TENSOR_TENSOR_MODE, Lc);
        if (t_.values_only) continue;
        Not(m1h, m1h, static_cast<int32_t>(Lc / 16));
        const float tap = static_cast<float>(ih * static_cast<int64_t>(t_.w) + static_cast<int64_t>(kw) * t_.dw -
                                             static_cast<int64_t>(t_.pw));
        Select(I, m1, I, tap, SELMODE::VSEL_TENSOR_SCALAR_MODE, Lc);
      }
    }
    const uint64_t o = ((n * t_.oh + oh) * t_.ow) * t_.c + c0;
    if (t_.values_only) {
      SyncVToMte3();
      if (wc == t_.c) DataCopyPad(yGm_[o], M, DataCopyExtParams{1, t_.ow * wc * 4, 0, 0, 0});
      else DataCopyPad(yGm_[o], M, DataCopyExtParams{static_cast<uint16_t>(t_.ow), wc * 4, 0, (t_.c - wc) * 4, 0});
      return;
    }
    Add(I, I, col_.Get<float>(), nL);
    LocalTensor<int64_t> i64 = i64_.Get<int64_t>();
    LocalTensor<int32_t> i32 = i32_.Get<int32_t>();
    Cast(i32, I, RoundMode::CAST_RINT, Lc);
    Gather(i64.ReinterpretCast<int32_t>(), i32, widen_.Get<uint32_t>(), 0u, 2 * Lc);
    SyncVToMte3();
    if (wc == t_.c) {
      DataCopyPad(yGm_[o], M, DataCopyExtParams{1, t_.ow * wc * 4, 0, 0, 0});
      DataCopyPad(idxGm_[o], i64, DataCopyExtParams{1, t_.ow * wc * 8, 0, 0, 0});
    } else {
      DataCopyPad(yGm_[o], M, DataCopyExtParams{static_cast<uint16_t>(t_.ow), wc * 4, 0, (t_.c - wc) * 4, 0});
      DataCopyPad(idxGm_[o], i64, DataCopyExtParams{static_cast<uint16_t>(t_.ow), wc * 8, 0, (t_.c - wc) * 8, 0});
    }
  }

  PoolNhwcTiling t_;
  uint32_t pitch_ = 0;
  TPipe pipe_;
  TBuf<TPosition::VECCALC> row_, m_, i_, col_, init_, i64_, i32_, widen_, mask1_, mask2_;
  GlobalTensor<float> xGm_, yGm_;
  GlobalTensor<int64_t> idxGm_;
};

}  // namespace

extern "C" __global__ __aicore__ void pool_nhwc_fwd_kernel_float(GM_ADDR x, GM_ADDR y, GM_ADDR idx, GM_ADDR tiling) {
  GET_TILING_DATA_WITH_STRUCT(PoolNhwcTiling, t, tiling);
  MaxPoolNhwcKernel op;
  op.Init(x, y, idx, t);
  op.Process();
}
