// Depthwise convolution on the vector cores (see conv_dw.h).
#include "conv_depthwise.h"

#include <type_traits>

#include "kernel_operator.h"
#include "norm_util.h"

using namespace AscendC;

namespace npu_kernels {

ConvDepthwiseTiling conv_depthwise_tiling(uint32_t n, uint32_t c, uint32_t h, uint32_t w, uint32_t kh, uint32_t kw, uint32_t dh,
                            uint32_t dw, uint32_t pt, uint32_t pb, uint32_t pl, uint32_t pr, uint32_t elem_bytes,
                            const SocInfo& soc) {
  ConvDepthwiseTiling t{};
  t.n = n; t.c = c; t.h = h; t.w = w; t.kh = kh; t.kw = kw; t.dh = dh; t.dw = dw; t.pt = pt; t.pl = pl;
  t.elem_bytes = elem_bytes;
  const uint64_t effh = uint64_t(kh - 1) * dh + 1, effw = uint64_t(kw - 1) * dw + 1;
  if (h + pt + pb < effh || w + pl + pr < effw || kh == 0 || kw == 0) return t;
  t.ho = uint32_t(h + pt + pb - effh + 1);
  t.wo = uint32_t(w + pl + pr - effw + 1);
  // Every tap column's row starts inside the input (or in the left padding, <= 32 B of zeros).
  if (uint64_t(pl) * elem_bytes > 32 || uint64_t(kw - 1) * dw >= uint64_t(pl) + w) return t;
  t.pitch = AlignUp<uint32_t>(t.wo > w + pl ? t.wo : w + pl, 16);
  const uint64_t per_row = uint64_t(t.pitch) * (4 + (elem_bytes == 4 ? 0 : elem_bytes));  // float + staging
  const uint64_t budget = soc.ub_bytes - 8 * 1024;
  // kw input buffers of rows + (kh - 1) * dh rows, and the output rows.
  const uint64_t halo = uint64_t(kh - 1) * dh;
  if ((kw * (halo + 1) + 1) * per_row > budget) return t;
  uint64_t rows = (budget / per_row - kw * halo) / (kw + 1);
  if (rows > t.ho) rows = t.ho;
  if (rows > 4095 - halo) rows = 4095 - halo;  // DataCopyPad's blockCount
  t.rows = uint32_t(rows);
  t.in_rows = uint32_t(rows + halo);
  t.chunks = CeilDivU<uint32_t>(t.ho, t.rows);
  t.units = uint64_t(n) * c * t.chunks;
  const ItemSplit sp = SplitItems(t.units, t.units * t.rows * t.pitch * 4 * kh * kw, soc.vector_cores, 16 * 1024);
  t.units_per_core = sp.per_core;
  t.block_dim = sp.block_dim;
  t.ok = 1;
  return t;
}

}  // namespace npu_kernels

namespace {

using npu_kernels::ConvDepthwiseTiling;
using namespace nn_kernels;

template <typename T>
class ConvDepthwiseKernel {
 public:
  __aicore__ inline void Init(GM_ADDR x, GM_ADDR wt, GM_ADDR scale, GM_ADDR shift, GM_ADDR y, const ConvDepthwiseTiling& t) {
    t_ = t;
    xGm_.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(x), uint64_t(t.n) * t.c * t.h * t.w);
    yGm_.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(y), uint64_t(t.n) * t.c * t.ho * t.wo);
    wGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(wt), uint64_t(t.c) * t.kh * t.kw);
    if (t.has_scale) sGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(scale), t.c);
    if (t.has_shift) bGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(shift), t.c);
    DataCacheCleanAndInvalid<float, CacheLine::ENTIRE_DATA_CACHE>(wGm_);  // written by earlier kernels
    const uint32_t in_elems = t.in_rows * t.pitch, out_elems = t.rows * t.pitch;
    pipe_.InitBuffer(in_, t.kw * in_elems * sizeof(float));
    pipe_.InitBuffer(out_, out_elems * sizeof(float));
    if constexpr (!std::is_same_v<T, float>) {
      pipe_.InitBuffer(inT_, t.kw * in_elems * sizeof(T));
      pipe_.InitBuffer(outT_, out_elems * sizeof(T));
      Duplicate(inT_.Get<int16_t>(), int16_t(0), int32_t(t.kw * in_elems));
    }
    // The columns past each row's data are the padding: zero, and no load ever writes them.
    Duplicate(in_.Get<float>(), 0.0f, int32_t(t.kw * in_elems));
    SyncVToMte2();
  }

  __aicore__ inline void Process() {
    const CoreShare sh = ShareOfThisCore(t_.units, t_.units_per_core);
    for (uint64_t u = sh.begin; u < sh.end; ++u) Unit(u);
  }

 private:
  __aicore__ inline LocalTensor<float> X(uint32_t j) { return in_.Get<float>()[j * t_.in_rows * t_.pitch]; }

  __aicore__ inline void Unit(uint64_t u) {
    const uint64_t plane = u / t_.chunks;
    const uint32_t r0 = uint32_t(u % t_.chunks) * t_.rows;
    const uint32_t R = t_.ho - r0 < t_.rows ? t_.ho - r0 : t_.rows;
    const uint32_t ch = uint32_t(plane % t_.c);
    const uint32_t in_rows = R + (t_.kh - 1) * t_.dh;
    // Input rows base .. base + in_rows - 1 (base may be negative: top padding); the valid ones load.
    const int64_t base = int64_t(r0) - int64_t(t_.pt);
    const int64_t v0 = base < 0 ? 0 : base;
    const int64_t v1 = base + in_rows < int64_t(t_.h) ? base + in_rows : int64_t(t_.h);
    constexpr uint32_t esz = sizeof(T);
    SyncVToMte2();  // the previous unit's taps have read the buffers
    if (v1 > v0) {
      for (uint32_t j = 0; j < t_.kw; ++j) {
        const int64_t s = int64_t(j) * t_.dw - int64_t(t_.pl);  // input column of X_j's column 0
        const uint32_t left = s < 0 ? uint32_t(-s) : 0u, col = s < 0 ? 0u : uint32_t(s);
        const uint32_t len = t_.w - col;
        const uint32_t ub_row = (left * esz + len * esz + 31) / 32 * 32;
        const uint8_t right = uint8_t(ub_row / esz - left - len);
        LocalTensor<T> dst = Staging(j)[uint32_t(v0 - base) * t_.pitch];
        DataCopyPad(dst, xGm_[(plane * t_.h + uint64_t(v0)) * t_.w + col],
                    DataCopyExtParams(uint16_t(v1 - v0), len * esz, (t_.w - len) * esz,
                                      (t_.pitch * esz - ub_row) / 32, 0),
                    DataCopyPadExtParams<T>(true, uint8_t(left), right, T(0)));
      }
    }
    SyncMte2ToV();
    for (uint32_t j = 0; j < t_.kw; ++j) {
      if (v1 <= v0) {  // all padding
        Duplicate(X(j), 0.0f, int32_t(in_rows * t_.pitch));
        continue;
      }
      if constexpr (!std::is_same_v<T, float>) Cast(X(j), Staging(j), RoundMode::CAST_NONE, in_rows * t_.pitch);
      // Rows above / below the image: zero (all of a row: their columns too).
      const uint32_t top = uint32_t(v0 - base), bottom = uint32_t(base + in_rows - v1);
      if (top > 0) Duplicate(X(j), 0.0f, int32_t(top * t_.pitch));
      if (bottom > 0) Duplicate(X(j)[(in_rows - bottom) * t_.pitch], 0.0f, int32_t(bottom * t_.pitch));
    }
    SyncMte3ToV();  // the previous unit's output has left UB
    LocalTensor<float> o = out_.Get<float>();
    const int32_t cnt = int32_t(R * t_.pitch);
    const uint64_t w0 = uint64_t(ch) * t_.kh * t_.kw;
    for (uint32_t i = 0; i < t_.kh; ++i)
      for (uint32_t j = 0; j < t_.kw; ++j) {
        const float wv = wGm_.GetValue(w0 + i * t_.kw + j);
        const LocalTensor<float> src = X(j)[i * t_.dh * t_.pitch];
        if (i == 0 && j == 0) Muls(o, src, wv, cnt);
        else Axpy(o, src, wv, cnt);
      }
    if (t_.has_scale) Muls(o, o, sGm_.GetValue(ch), cnt);
    if (t_.has_shift) Adds(o, o, bGm_.GetValue(ch), cnt);
    if (t_.relu) Maxs(o, o, 0.0f, cnt);
    LocalTensor<T> out = o.template ReinterpretCast<T>();
    if constexpr (!std::is_same_v<T, float>) {
      out = outT_.Get<T>();
      Cast(out, o, RoundMode::CAST_RINT, uint32_t(cnt));
    }
    SyncVToMte3();
    const uint32_t ub_row = (t_.wo * esz + 31) / 32 * 32;
    DataCopyPad(yGm_[(plane * t_.ho + r0) * t_.wo], out,
                DataCopyExtParams(uint16_t(R), t_.wo * esz, (t_.pitch * esz - ub_row) / 32, 0, 0));
  }

  __aicore__ inline LocalTensor<T> Staging(uint32_t j) {
    if constexpr (std::is_same_v<T, float>) return X(j);
    else return inT_.Get<T>()[j * t_.in_rows * t_.pitch];
  }

  ConvDepthwiseTiling t_{};
  TPipe pipe_;
  TBuf<TPosition::VECCALC> in_, out_, inT_, outT_;
  GlobalTensor<T> xGm_, yGm_;
  GlobalTensor<float> wGm_, sGm_, bGm_;
};

template <typename T>
__aicore__ inline void RunConvDepthwise(GM_ADDR x, GM_ADDR wt, GM_ADDR scale, GM_ADDR shift, GM_ADDR y, GM_ADDR tiling) {
  GET_TILING_DATA_WITH_STRUCT(ConvDepthwiseTiling, t, tiling);
  ConvDepthwiseKernel<T> op;
  op.Init(x, wt, scale, shift, y, t);
  op.Process();
}

}  // namespace

extern "C" __global__ __aicore__ void conv_depthwise_kernel_float(GM_ADDR x, GM_ADDR wt, GM_ADDR scale, GM_ADDR shift,
                                                           GM_ADDR y, GM_ADDR tiling) {
  RunConvDepthwise<float>(x, wt, scale, shift, y, tiling);
}
extern "C" __global__ __aicore__ void conv_depthwise_kernel_half(GM_ADDR x, GM_ADDR wt, GM_ADDR scale, GM_ADDR shift,
                                                          GM_ADDR y, GM_ADDR tiling) {
  RunConvDepthwise<half>(x, wt, scale, shift, y, tiling);
}
extern "C" __global__ __aicore__ void conv_depthwise_kernel_bf16(GM_ADDR x, GM_ADDR wt, GM_ADDR scale, GM_ADDR shift,
                                                          GM_ADDR y, GM_ADDR tiling) {
  RunConvDepthwise<bfloat16_t>(x, wt, scale, shift, y, tiling);
}
