// Depthwise convolution on the vector cores (see conv_dw.h).
#include "conv_depthwise.h"

#include <type_traits>

#include "kernel_operator.h"
#include "norm_util.h"

using namespace AscendC;

namespace npu_kernels {

ConvDepthwiseTiling conv_depthwise_tiling(uint32_t n, uint32_t c, uint32_t h, uint32_t w, uint32_t kh, uint32_t kw,
                                          uint32_t sh, uint32_t sw, uint32_t dh, uint32_t dw, uint32_t pt, uint32_t pb,
                                          uint32_t pl, uint32_t pr, uint32_t elem_bytes, bool grad_weight,
                                          const SocInfo& soc) {
  ConvDepthwiseTiling t{};
  t.grad_weight = grad_weight ? 1 : 0;
  t.n = n; t.c = c; t.h = h; t.w = w; t.kh = kh; t.kw = kw; t.dh = dh; t.dw = dw; t.pt = pt; t.pl = pl;
  t.sh = sh; t.sw = sw;
  t.elem_bytes = elem_bytes;
  const uint64_t effh = uint64_t(kh - 1) * dh + 1, effw = uint64_t(kw - 1) * dw + 1;
  if (kh == 0 || kw == 0 || sh == 0 || sw == 0 || h + pt + pb < effh || w + pl + pr < effw) return t;
  t.ho = uint32_t((h + pt + pb - effh) / sh + 1);
  t.wo = uint32_t((w + pl + pr - effw) / sw + 1);
  const uint64_t stage = elem_bytes == 4 ? 0 : elem_bytes;  // the 16-bit staging copy of a float buffer
  const uint64_t budget = soc.ub_bytes - 8 * 1024;
  // Per output row besides O: grad_weight's G (+ staging) and ReduceSum's tmp (1/64 of a row, rounded).
  const uint64_t gw_row = grad_weight ? uint64_t(AlignUp<uint32_t>(t.wo, 16)) * (4 + stage + 1) : 0;
  uint64_t rows = 0;
  if (sh == 1 && sw == 1) {
    // Every tap column's row starts inside the input (or in the left padding, <= 32 B of zeros).
    if (uint64_t(pl) * elem_bytes > 32 || uint64_t(kw - 1) * dw >= uint64_t(pl) + w) return t;
    t.pitch = AlignUp<uint32_t>(t.wo > w + pl ? t.wo : w + pl, 16);
    const uint64_t per_row = uint64_t(t.pitch) * (4 + stage);
    // kw input buffers of rows + (kh - 1) * dh rows, and the output rows.
    const uint64_t halo = uint64_t(kh - 1) * dh;
    if ((kw * (halo + 1) + 1) * per_row + gw_row > budget) return t;
    rows = (budget - kw * halo * per_row) / ((kw + 1) * per_row + gw_row);
    if (rows > 4095 - halo) rows = 4095 - halo;  // DataCopyPad's blockCount
  } else {
    t.strided = 1;
    t.pitch = AlignUp<uint32_t>(t.wo, 16);
    t.lead = AlignUp<uint32_t>(pl, 16);
    t.bpitch = AlignUp<uint32_t>(t.lead + w + pr + sw, 16);
    for (uint32_t i = 0; i < kh; ++i) t.phase_mask |= 1u << ((i * dh) % sh);
    if (sh > 32) return t;
    uint32_t phases = 0;
    for (uint32_t a = 0; a < sh; ++a) phases += (t.phase_mask >> a) & 1u;
    const uint64_t shift = uint64_t(kh - 1) * dh / sh;
    // B: (rows + shift) * sh rows; X: phases * kw buffers of rows + shift rows; O: rows; the table.
    auto need = [&](uint64_t r) {
      return (r + shift) * sh * t.bpitch * (4 + stage) + uint64_t(phases) * kw * (r + shift) * t.pitch * 4 +
             r * t.pitch * (4 + stage) + (r + shift) * t.pitch * 4 + r * gw_row;
    };
    if (need(1) > budget) return t;
    rows = 1;
    while (rows < t.ho && need(rows * 2) <= budget) rows *= 2;
    while (rows < t.ho && need(rows + 1) <= budget) ++rows;
    if ((rows + shift) * sh > 4095) return t;
    t.u_rows = uint32_t(rows + shift);
    t.b_rows = uint32_t((rows + shift) * sh);
  }
  if (rows > t.ho) rows = t.ho;
  if (rows == 0) return t;
  t.rows = uint32_t(rows);
  t.in_rows = uint32_t(rows + uint64_t(kh - 1) * dh);
  if (t.strided) {
    t.u_rows = uint32_t(rows + uint64_t(kh - 1) * dh / sh);
    t.b_rows = t.u_rows * sh;
  }
  t.chunks = CeilDivU<uint32_t>(t.ho, t.rows);
  t.units = uint64_t(n) * c * t.chunks;
  const ItemSplit sp = SplitItems(t.units, t.units * t.rows * t.pitch * 4 * kh * kw, soc.vector_cores, 16 * 1024);
  t.units_per_core = sp.per_core;
  t.block_dim = sp.block_dim;
  t.ok = 1;
  return t;
}

void conv_depthwise_offsets(const ConvDepthwiseTiling& t, uint32_t* out) {
  for (uint32_t u = 0; u < t.u_rows; ++u)
    for (uint32_t v = 0; v < t.pitch; ++v)
      out[uint64_t(u) * t.pitch + v] = v < t.wo ? (u * t.sh * t.bpitch + v * t.sw) * 4 : 0;
}

}  // namespace npu_kernels

namespace {

using npu_kernels::ConvDepthwiseTiling;
using namespace nn_kernels;

template <typename T>
class ConvDepthwiseKernel {
 public:
  __aicore__ inline void Init(GM_ADDR x, GM_ADDR wt, GM_ADDR scale, GM_ADDR shift, GM_ADDR offsets, GM_ADDR y,
                              const ConvDepthwiseTiling& t) {
    t_ = t;
    xGm_.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(x), uint64_t(t.n) * t.c * t.h * t.w);
    if (!t.grad_weight) {
      yGm_.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(y), uint64_t(t.n) * t.c * t.ho * t.wo);
      wGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(wt), uint64_t(t.c) * t.kh * t.kw);
      DataCacheCleanAndInvalid<float, CacheLine::ENTIRE_DATA_CACHE>(wGm_);  // written by earlier kernels
    }
    if (t.has_scale) sGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(scale), t.c);
    if (t.has_shift) bGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(shift), t.c);
    if (t.grad_weight) {
      goGm_.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(scale), uint64_t(t.n) * t.c * t.ho * t.wo);
      pGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(y), t.units * t.kh * t.kw);
      pipe_.InitBuffer(g_, t.rows * t.pitch * sizeof(float));
      pipe_.InitBuffer(red_, (t.rows * t.pitch / 64 + 64) * sizeof(float));
      pipe_.InitBuffer(res_, (t.kh * t.kw + 8) / 8 * 8 * sizeof(float));
      if constexpr (!std::is_same_v<T, float>) {
        pipe_.InitBuffer(gT_, t.rows * t.pitch * sizeof(T));
        Duplicate(gT_.Get<int16_t>(), int16_t(0), int32_t(t.rows * t.pitch));
      }
      Duplicate(g_.Get<float>(), 0.0f, int32_t(t.rows * t.pitch));  // the columns past wo stay 0
    }
    const uint32_t out_elems = t.rows * t.pitch;
    // Stride 1: kw buffers X_j of in_rows rows (loaded). Strided: B (loaded), and one X_aj of u_rows
    // rows per used row phase a and tap column j (gathered).
    uint32_t load_elems, x_elems = 0;
    if (t.strided) {
      load_elems = t.b_rows * t.bpitch;
      for (uint32_t a = 0; a < t.sh; ++a)
        if ((t.phase_mask >> a) & 1u) phaseSlot_[a] = phases_++;
      x_elems = phases_ * t.kw * t.u_rows * t.pitch;
      pipe_.InitBuffer(x_, x_elems * sizeof(float));
      pipe_.InitBuffer(off_, t.u_rows * t.pitch * sizeof(uint32_t));
      GlobalTensor<uint32_t> offGm;
      offGm.SetGlobalBuffer(reinterpret_cast<__gm__ uint32_t*>(offsets), t.u_rows * t.pitch);
      DataCopy(off_.Get<uint32_t>(), offGm, t.u_rows * t.pitch);
    } else {
      load_elems = t.kw * t.in_rows * t.pitch;
    }
    pipe_.InitBuffer(in_, load_elems * sizeof(float));
    pipe_.InitBuffer(out_, out_elems * sizeof(float));
    if constexpr (!std::is_same_v<T, float>) {
      pipe_.InitBuffer(inT_, load_elems * sizeof(T));
      pipe_.InitBuffer(outT_, out_elems * sizeof(T));
      Duplicate(inT_.Get<int16_t>(), int16_t(0), int32_t(load_elems));
    }
    // The columns past each row's data are the padding: zero, and no load ever writes them.
    Duplicate(in_.Get<float>(), 0.0f, int32_t(load_elems));
    SyncPipes<HardEvent::MTE2_V>();
    SyncVToMte2();
  }

  __aicore__ inline void Process() {
    const CoreShare sh = ShareOfThisCore(t_.units, t_.units_per_core);
    for (uint64_t u = sh.begin; u < sh.end; ++u) Unit(u);
  }

 private:
  static constexpr uint32_t esz = sizeof(T);

  // Stride 1: X_j, row 0 = input row r0 - pt.
  __aicore__ inline LocalTensor<float> X(uint32_t j) { return in_.Get<float>()[j * t_.in_rows * t_.pitch]; }
  __aicore__ inline LocalTensor<T> Staging(uint32_t j) {
    if constexpr (std::is_same_v<T, float>) return X(j);
    else return inT_.Get<T>()[j * t_.in_rows * t_.pitch];
  }
  // Strided: X_aj.
  __aicore__ inline LocalTensor<float> Xs(uint32_t a, uint32_t j) {
    return x_.Get<float>()[(phaseSlot_[a] * t_.kw + j) * t_.u_rows * t_.pitch];
  }
  // The operand of tap (i, j): R rows from output row 0.
  __aicore__ inline LocalTensor<float> Tap(uint32_t i, uint32_t j) {
    if (!t_.strided) return X(j)[i * t_.dh * t_.pitch];
    const uint32_t r = i * t_.dh;
    return Xs(r % t_.sh, j)[(r / t_.sh) * t_.pitch];
  }

  // rows [0, rows) of buf (pitch elements each) hold input rows base.. : zero those outside the image.
  __aicore__ inline void ZeroOutside(const LocalTensor<float>& buf, int64_t base, int64_t v0, int64_t v1, uint32_t rows,
                                     uint32_t pitch) {
    if (v1 <= v0) {
      Duplicate(buf, 0.0f, int32_t(rows * pitch));
      return;
    }
    const uint32_t top = uint32_t(v0 - base), bottom = uint32_t(base + rows - v1);
    if (top > 0) Duplicate(buf, 0.0f, int32_t(top * pitch));
    if (bottom > 0) Duplicate(buf[(rows - bottom) * pitch], 0.0f, int32_t(bottom * pitch));
  }

  // Rows v0..v1 of the plane into dst (pitch elements per row, data from column `left` of the row, the
  // source from input column col), zero-padded to the 32 B block.
  __aicore__ inline void LoadRows(const LocalTensor<T>& dst, uint64_t plane, int64_t v0, int64_t v1, uint32_t col,
                                  uint32_t left, uint32_t pitch) {
    const uint32_t len = t_.w - col;
    const uint32_t ub_row = (left * esz + len * esz + 31) / 32 * 32;
    DataCopyPad(dst, xGm_[(plane * t_.h + uint64_t(v0)) * t_.w + col],
                DataCopyExtParams(uint16_t(v1 - v0), len * esz, (t_.w - len) * esz, (pitch * esz - ub_row) / 32, 0),
                DataCopyPadExtParams<T>(true, uint8_t(left), uint8_t(ub_row / esz - left - len), T(0)));
  }

  __aicore__ inline void Unit(uint64_t u) {
    const uint64_t plane = u / t_.chunks;
    const uint32_t r0 = uint32_t(u % t_.chunks) * t_.rows;
    const uint32_t R = t_.ho - r0 < t_.rows ? t_.ho - r0 : t_.rows;
    const uint32_t ch = uint32_t(plane % t_.c);
    SyncVToMte2();  // the previous unit's vector ops have read the buffers
    if (t_.grad_weight) LoadGradOutput(plane, r0, R);
    if (t_.strided) LoadStrided(plane, r0, R);
    else LoadStride1(plane, r0, R);
    SyncMte3ToV();  // the previous unit's output has left UB
    if (t_.grad_weight) return WeightGradient(u, R);
    LocalTensor<float> o = out_.Get<float>();
    const int32_t cnt = int32_t(R * t_.pitch);
    const uint64_t w0 = uint64_t(ch) * t_.kh * t_.kw;
    for (uint32_t i = 0; i < t_.kh; ++i)
      for (uint32_t j = 0; j < t_.kw; ++j) {
        const float wv = t_.flip ? wGm_.GetValue(w0 + (t_.kh - 1 - i) * t_.kw + (t_.kw - 1 - j))
                                 : wGm_.GetValue(w0 + i * t_.kw + j);
        if (i == 0 && j == 0) Muls(o, Tap(i, j), wv, cnt);
        else Axpy(o, Tap(i, j), wv, cnt);
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

  // grad_output rows r0.. of the plane into G (columns past wo: 0).
  __aicore__ inline void LoadGradOutput(uint64_t plane, uint32_t r0, uint32_t R) {
    const uint32_t ub_row = (t_.wo * esz + 31) / 32 * 32;
    LocalTensor<T> gs = g_.Get<float>().template ReinterpretCast<T>();
    if constexpr (!std::is_same_v<T, float>) gs = gT_.Get<T>();
    DataCopyPad(gs, goGm_[(plane * t_.ho + r0) * t_.wo],
                DataCopyExtParams(uint16_t(R), t_.wo * esz, 0, (t_.pitch * esz - ub_row) / 32, 0),
                DataCopyPadExtParams<T>(true, 0, uint8_t(ub_row / esz - t_.wo), T(0)));
  }

  // Per tap the sum of G * X_tap over the unit's rows into res_, then one write of the partials.
  __aicore__ inline void WeightGradient(uint64_t u, uint32_t R) {
    const int32_t cnt = int32_t(R * t_.pitch);
    LocalTensor<float> g = g_.Get<float>(), prod = out_.Get<float>(), res = res_.Get<float>();
    if constexpr (!std::is_same_v<T, float>) Cast(g, gT_.Get<T>(), RoundMode::CAST_NONE, uint32_t(cnt));
    for (uint32_t i = 0; i < t_.kh; ++i)
      for (uint32_t j = 0; j < t_.kw; ++j) {
        Mul(prod, g, Tap(i, j), cnt);
        ReduceSum(res[i * t_.kw + j], prod, red_.Get<float>(), cnt);
      }
    SyncVToMte3();
    DataCopyPad(pGm_[u * t_.kh * t_.kw], res, DataCopyExtParams(1, t_.kh * t_.kw * 4, 0, 0, 0));
  }

  // X_j[r][col] = x_padded[r0 - pt + r][col + j * dw] by one load per tap column.
  __aicore__ inline void LoadStride1(uint64_t plane, uint32_t r0, uint32_t R) {
    const uint32_t in_rows = R + (t_.kh - 1) * t_.dh;
    const int64_t base = int64_t(r0) - int64_t(t_.pt);
    const int64_t v0 = base < 0 ? 0 : base;
    const int64_t v1 = base + in_rows < int64_t(t_.h) ? base + in_rows : int64_t(t_.h);
    if (v1 > v0) {
      for (uint32_t j = 0; j < t_.kw; ++j) {
        const int64_t s = int64_t(j) * t_.dw - int64_t(t_.pl);  // input column of X_j's column 0
        LoadRows(Staging(j)[uint32_t(v0 - base) * t_.pitch], plane, v0, v1, s < 0 ? 0u : uint32_t(s),
                 s < 0 ? uint32_t(-s) : 0u, t_.pitch);
      }
    }
    SyncMte2ToV();
    for (uint32_t j = 0; j < t_.kw; ++j) {
      if constexpr (!std::is_same_v<T, float>)
        if (v1 > v0) Cast(X(j), Staging(j), RoundMode::CAST_NONE, in_rows * t_.pitch);
      ZeroOutside(X(j), base, v0, v1, in_rows, t_.pitch);
    }
  }

  // B[r][lead + col] = x[r0 * sh - pt + r][col], then X_aj by Gathers.
  __aicore__ inline void LoadStrided(uint64_t plane, uint32_t r0, uint32_t R) {
    const uint32_t U = R + (t_.kh - 1) * t_.dh / t_.sh, rows = U * t_.sh;
    const int64_t base = int64_t(r0) * t_.sh - int64_t(t_.pt);
    const int64_t v0 = base < 0 ? 0 : base;
    const int64_t v1 = base + rows < int64_t(t_.h) ? base + rows : int64_t(t_.h);
    LocalTensor<float> b = in_.Get<float>();
    LocalTensor<T> bs = b.template ReinterpretCast<T>();
    if constexpr (!std::is_same_v<T, float>) bs = inT_.Get<T>();
    if (v1 > v0) LoadRows(bs[uint32_t(v0 - base) * t_.bpitch + t_.lead], plane, v0, v1, 0, 0, t_.bpitch);
    SyncMte2ToV();
    if constexpr (!std::is_same_v<T, float>)
      if (v1 > v0) Cast(b, bs, RoundMode::CAST_NONE, rows * t_.bpitch);
    ZeroOutside(b, base, v0, v1, rows, t_.bpitch);
    const LocalTensor<uint32_t> off = off_.Get<uint32_t>();
    for (uint32_t a = 0; a < t_.sh; ++a) {
      if (!((t_.phase_mask >> a) & 1u)) continue;
      for (uint32_t j = 0; j < t_.kw; ++j)
        Gather(Xs(a, j), b, off, (a * t_.bpitch + j * t_.dw + t_.lead - t_.pl) * 4u, U * t_.pitch);
    }
  }

  ConvDepthwiseTiling t_{};
  TPipe pipe_;
  TBuf<TPosition::VECCALC> in_, out_, inT_, outT_, x_, off_, g_, gT_, red_, res_;
  uint32_t phaseSlot_[32] = {};
  uint32_t phases_ = 0;
  GlobalTensor<T> xGm_, yGm_, goGm_;
  GlobalTensor<float> wGm_, sGm_, bGm_, pGm_;
};

template <typename T>
__aicore__ inline void RunConvDepthwise(GM_ADDR x, GM_ADDR wt, GM_ADDR scale, GM_ADDR shift, GM_ADDR offsets,
                                        GM_ADDR y, GM_ADDR tiling) {
  GET_TILING_DATA_WITH_STRUCT(ConvDepthwiseTiling, t, tiling);
  ConvDepthwiseKernel<T> op;
  op.Init(x, wt, scale, shift, offsets, y, t);
  op.Process();
}

}  // namespace

extern "C" __global__ __aicore__ void conv_depthwise_kernel_float(GM_ADDR x, GM_ADDR wt, GM_ADDR scale, GM_ADDR shift,
                                                    GM_ADDR offsets, GM_ADDR y, GM_ADDR tiling) {
  RunConvDepthwise<float>(x, wt, scale, shift, offsets, y, tiling);
}
extern "C" __global__ __aicore__ void conv_depthwise_kernel_half(GM_ADDR x, GM_ADDR wt, GM_ADDR scale, GM_ADDR shift,
                                                    GM_ADDR offsets, GM_ADDR y, GM_ADDR tiling) {
  RunConvDepthwise<half>(x, wt, scale, shift, offsets, y, tiling);
}
extern "C" __global__ __aicore__ void conv_depthwise_kernel_bf16(GM_ADDR x, GM_ADDR wt, GM_ADDR scale, GM_ADDR shift,
                                                    GM_ADDR offsets, GM_ADDR y, GM_ADDR tiling) {
  RunConvDepthwise<bfloat16_t>(x, wt, scale, shift, offsets, y, tiling);
}
