// Group norm in Ascend C. A row is (n, group): cg channels of hw elements, loaded as cg segments of hwp
// (padded with zeros) so that per-channel work is aligned. Forward: mean/rstd of the row (count-form
// ReduceSum, float rows DMA'd straight into the float buffer),
// then y = x * a_c + b_c per channel segment. Backward, per row: per-channel sums ds = sum(go * x) and
// db = sum(go) (WholeReduceSum per segment when hwp <= 64, else FoldSum), grad_input from them (PyTorch's
// formula), and per-(n, c) partials of grad_weight / grad_bias folded over n by partial_rows_fold_kernel.
#include <cmath>

#include "kernel_operator.h"
#include "norm.h"
#include "norm_util.h"

using namespace AscendC;

namespace npu_kernels {

GroupNormTiling group_norm_tiling(uint64_t n, uint64_t c, uint64_t hw, uint64_t groups, bool backward,
                                  uint32_t elem_bytes, const SocInfo& soc) {
  GroupNormTiling t{};
  t.n = n;
  t.c = c;
  t.hw = hw;
  t.groups = groups;
  t.cg = groups ? c / groups : 0;
  t.hwp = static_cast<uint32_t>(hw <= 64 ? AlignUp<uint64_t>(hw, kBlockBytes / elem_bytes) : AlignUp<uint64_t>(hw, 64));
  const uint64_t rows = n * groups;
  const uint64_t cores = static_cast<uint64_t>(soc.vector_cores > 0 ? soc.vector_cores : 1);
  const uint64_t d = t.cg * hw;
  uint64_t min_rows = d ? CeilDivU<uint64_t>(8192, d) : 1;
  uint64_t rpc = CeilDivU<uint64_t>(rows, cores);
  if (rpc < min_rows) rpc = min_rows;
  if (rpc < 1) rpc = 1;
  t.rows_per_core = rpc;
  t.block_dim = static_cast<uint32_t>(rows ? CeilDivU<uint64_t>(rows, rpc) : 1);
  // UB: two dtype slots and four float rows of kc segments, plus four per-channel vectors.
  const uint64_t per = 2 * elem_bytes + 4 * 4;
  const uint64_t fixed = 4 * AlignUp<uint64_t>(c, 64) * 4 + 16 * 1024 + 64 * per;
  uint64_t kc = soc.ub_bytes > fixed ? (soc.ub_bytes - fixed) / (static_cast<uint64_t>(t.hwp) * per) : 0;
  if (const uint64_t h = HostCacheRows(static_cast<uint64_t>(t.hwp) * per); kc > h) kc = h;  // whole planes
  if (kc > t.cg) kc = t.cg;
  t.kc = static_cast<uint32_t>(kc);
  t.ok = kc >= 1;
  return t;
}

}  // namespace npu_kernels

namespace {

using npu_kernels::GroupNormTiling;
using namespace nn_kernels;


template <typename T>
class GroupNormKernel {
 public:
  __aicore__ inline void Init(GM_ADDR x, GM_ADDR go, GM_ADDR weight, GM_ADDR bias, GM_ADDR y, GM_ADDR mean,
                              GM_ADDR rstd, GM_ADDR partial, const GroupNormTiling& t, bool backward) {
    t_ = t;
    bwd_ = backward;
    const uint64_t total = t.n * t.c * t.hw;
    const uint64_t rows = t.n * t.groups;
    xGm_.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(x), total);
    if (go) goGm_.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(go), total);
    if (y) yGm_.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(y), total);
    meanGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(mean), rows);
    rstdGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(rstd), rows);
    if (partial) partialGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(partial), 2 * t.n * t.c);
    row_ = npu_kernels::AlignUp<uint32_t>(static_cast<uint32_t>(t.kc * t.hwp), 64);
    const uint32_t cpad = npu_kernels::AlignUp<uint32_t>(static_cast<uint32_t>(t.c), 64);
    pipe_.InitBuffer(inT_, 2 * row_ * sizeof(T));
    pipe_.InitBuffer(rows_, 4 * row_ * sizeof(float));
    pipe_.InitBuffer(vec_, 4 * cpad * sizeof(float));
    pipe_.InitBuffer(small_, 1024);
    Duplicate(rows_.Get<float>(), 0.0f, static_cast<int32_t>(4 * row_));
    LocalTensor<float> w = V(0), b = V(1);
    const uint32_t cb = static_cast<uint32_t>(t.c * 4);
    if (weight) {
      GlobalTensor<float> wg;
      wg.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(weight), t.c);
      DataCopyPad(w, wg, DataCopyExtParams{1, cb, 0, 0, 0}, DataCopyPadExtParams<float>{false, 0, 0, 0.0f});
    } else {
      Duplicate(w, 1.0f, static_cast<int32_t>(t.c));
    }
    if (bias) {
      GlobalTensor<float> bg;
      bg.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(bias), t.c);
      DataCopyPad(b, bg, DataCopyExtParams{1, cb, 0, 0, 0}, DataCopyPadExtParams<float>{false, 0, 0, 0.0f});
    } else {
      Duplicate(b, 0.0f, static_cast<int32_t>(t.c));
    }
    SyncMte2ToV();
    SyncVToS();
  }

  __aicore__ inline void Process() {
    const uint64_t rows = t_.n * t_.groups;
    const uint64_t r0 = t_.rows_per_core * GetBlockIdx();
    uint64_t r1 = r0 + t_.rows_per_core;
    if (r1 > rows) r1 = rows;
    for (uint64_t r = r0; r < r1; ++r) {
      if (bwd_) BackwardRow(r);
      else ForwardRow(r);
    }
  }

 private:
  __aicore__ inline LocalTensor<float> R(int k) { return rows_.Get<float>()[k * row_]; }
  __aicore__ inline LocalTensor<float> V(int k) {
    return vec_.Get<float>()[k * npu_kernels::AlignUp<uint32_t>(static_cast<uint32_t>(t_.c), 64)];
  }
  __aicore__ inline uint32_t Gap() const {
    return (t_.hwp * sizeof(T) - npu_kernels::AlignUp<uint32_t>(static_cast<uint32_t>(t_.hw * sizeof(T)), 32)) / 32;
  }
  // Channels [k0, k0 + nk) of row r (n, g) of gm as float segments in R(dst); pads are zero.
  __aicore__ inline LocalTensor<float> Load(const GlobalTensor<T>& gm, uint64_t r, uint32_t k0, uint32_t nk, int slot,
                                            int dst) {
    const uint32_t cnt = nk * t_.hwp;
    // float rows land in the float row buffer directly (no copy pass); 16-bit ones are widened.
    LocalTensor<float> f = R(dst);
    LocalTensor<T> in;
    if constexpr (std::is_same_v<T, float>) in = f;
    else in = inT_.Get<T>()[slot * row_];
    SyncVToMte2();
    if (Gap() != 0) {
      Duplicate(in, T(0), static_cast<int32_t>(cnt));
      SyncVToMte2();
    }
    DataCopyPad(in, gm[(r * t_.cg + k0) * t_.hw],
                DataCopyExtParams{static_cast<uint16_t>(nk), static_cast<uint32_t>(t_.hw * sizeof(T)), 0, Gap(), 0},
                DataCopyPadExtParams<T>{true, 0, 0, T(0)});
    SyncMte2ToV();
    if constexpr (!std::is_same_v<T, float>) Cast(f, in, RoundMode::CAST_NONE, cnt);
    return f;
  }
  __aicore__ inline void Store(uint64_t r, uint32_t k0, uint32_t nk, const LocalTensor<float>& f) {
    const uint32_t cnt = nk * t_.hwp;
    LocalTensor<T> out = inT_.Get<T>()[row_];
    StoreFloat(out, f, cnt);
    SyncVToMte3();
    DataCopyExtParams p{static_cast<uint16_t>(nk), static_cast<uint32_t>(t_.hw * sizeof(T)), Gap(), 0, 0};
    DataCopyPad(yGm_[(r * t_.cg + k0) * t_.hw], std::is_same_v<T, float> ? f.template ReinterpretCast<T>() : out, p);
    SyncMte3ToV();
  }
  // Sum of buf[0, cnt) in one count-form ReduceSum (R(2) its work area; buf is kept).
  __aicore__ inline float SumN(const LocalTensor<float>& buf, uint32_t cnt) {
    LocalTensor<float> sm = small_.Get<float>();
    ReduceSum(sm, buf, R(2), static_cast<int32_t>(cnt));
    SyncVToS();
    const float s = sm.GetValue(0);
    SyncSToV();
    return s;
  }
  // seg[k] = sum of segment k of buf, k < cg (destroys buf when hwp > 64).
  __aicore__ inline void SegmentSums(const LocalTensor<float>& buf, const LocalTensor<float>& seg, uint32_t cg) {
    if (t_.hwp <= 64) {
      WholeReduceSum(seg, buf, static_cast<int32_t>(t_.hwp), static_cast<int32_t>(cg), 1, 1,
                     static_cast<int32_t>(t_.hwp / 8));
      SyncVToS();
    } else {
      for (uint32_t k = 0; k < cg; ++k) {
        const float s = FoldSum(buf[k * t_.hwp], small_.Get<float>(), t_.hwp);
        SyncVToS();
        seg.SetValue(k, s);
      }
    }
  }

  // R(3) (unused by the forward) = 1 on each segment's hw data lanes, 0 on its pads; built once per block.
  // (One segment's pattern, its pad lanes written by the scalar unit as they need not be 32 B aligned,
  // then doubled by aligned vector copies.)
  __aicore__ inline void BuildPadMask() {
    LocalTensor<float> m = R(3);
    const uint32_t hwp = t_.hwp, total = t_.kc * hwp;
    Duplicate(m, 1.0f, static_cast<int32_t>(hwp));
    SyncVToS();
    for (uint32_t i = static_cast<uint32_t>(t_.hw); i < hwp; ++i) m.SetValue(i, 0.0f);
    SyncSToV();
    for (uint32_t len = hwp; len < total; len *= 2)
      Adds(m[len], m, 0.0f, static_cast<int32_t>(total - len < len ? total - len : len));
    maskReady_ = true;
  }

  __aicore__ inline void ForwardRow(uint64_t r) {
    const uint32_t cg = static_cast<uint32_t>(t_.cg), kc = t_.kc;
    const bool single = kc >= cg;
    const float cntv = static_cast<float>(t_.cg * t_.hw);
    LocalTensor<float> x = R(0), xc = R(1);
    float sum = 0.0f;
    for (uint32_t k0 = 0; k0 < cg; k0 += kc) {
      const uint32_t nk = cg - k0 < kc ? cg - k0 : kc;
      Load(xGm_, r, k0, nk, 0, 0);
      sum += SumN(x, nk * t_.hwp);
    }
    const float mean = sum / cntv;
    float ss = 0.0f;
    const bool padded = t_.hwp != t_.hw;
    if (padded && !maskReady_) BuildPadMask();
    for (uint32_t k0 = 0; k0 < cg; k0 += kc) {
      const uint32_t nk = cg - k0 < kc ? cg - k0 : kc;
      if (!single) Load(xGm_, r, k0, nk, 0, 0);
      const int32_t n = static_cast<int32_t>(nk * t_.hwp);
      if (padded) {
        // x - mean on the data lanes, 0 on the pads (their zeros must not count: subtracting
        // pads * mean^2 afterwards cancels catastrophically when the variance is small beside mean^2)
        Muls(xc, R(3), -mean, n);
        Add(xc, xc, x, n);
      } else {
        Adds(xc, x, -mean, n);
      }
      Mul(xc, xc, xc, n);
      ss += SumN(xc, static_cast<uint32_t>(n));
    }
    const float var = ss / cntv > 0.0f ? ss / cntv : 0.0f;
    const float rstd = 1.0f / std::sqrt(var + t_.eps);
    const uint64_t c0 = (r % t_.groups) * t_.cg;
    LocalTensor<float> w = V(0), b = V(1);
    for (uint32_t k0 = 0; k0 < cg; k0 += kc) {
      const uint32_t nk = cg - k0 < kc ? cg - k0 : kc;
      if (!single) Load(xGm_, r, k0, nk, 0, 0);
      for (uint32_t k = 0; k < nk; ++k) {
        const float a = rstd * w.GetValue(c0 + k0 + k);
        const float bb = b.GetValue(c0 + k0 + k) - mean * a;
        Muls(x[k * t_.hwp], x[k * t_.hwp], a, static_cast<int32_t>(t_.hw));
        Adds(x[k * t_.hwp], x[k * t_.hwp], bb, static_cast<int32_t>(t_.hw));
      }
      Store(r, k0, nk, x);
    }
    LocalTensor<float> sm = small_.Get<float>();
    sm.SetValue(64, mean);
    sm.SetValue(72, rstd);
    SyncSToMte3();
    DataCopyPad(meanGm_[r], sm[64], DataCopyExtParams{1, 4, 0, 0, 0});
    DataCopyPad(rstdGm_[r], sm[72], DataCopyExtParams{1, 4, 0, 0, 0});
    SyncMte3ToV();
  }

  __aicore__ inline void BackwardRow(uint64_t r) {
    const uint32_t cg = static_cast<uint32_t>(t_.cg), kc = t_.kc;
    const bool single = kc >= cg;
    const float D = static_cast<float>(t_.cg * t_.hw);
    LocalTensor<float> sm = small_.Get<float>();
    SyncVToMte2();
    DataCopyPad(sm[64], meanGm_[r], DataCopyExtParams{1, 4, 0, 0, 0}, DataCopyPadExtParams<float>{false, 0, 0, 0.0f});
    DataCopyPad(sm[72], rstdGm_[r], DataCopyExtParams{1, 4, 0, 0, 0}, DataCopyPadExtParams<float>{false, 0, 0, 0.0f});
    SyncMte2ToS();
    const float mean = sm.GetValue(64), rstd = sm.GetValue(72);
    LocalTensor<float> x = R(0), g = R(1), p = R(2), q = R(3);
    // ds_k = sum(go * x), db_k = sum(go) per channel of the group (segment sums)
    LocalTensor<float> dsv = V(2), dbv = V(3);
    for (uint32_t k0 = 0; k0 < cg; k0 += kc) {
      const uint32_t nk = cg - k0 < kc ? cg - k0 : kc;
      const int32_t n = static_cast<int32_t>(nk * t_.hwp);
      Load(xGm_, r, k0, nk, 0, 0);
      Load(goGm_, r, k0, nk, 1, 1);
      Mul(p, g, x, n);
      SegmentSums(p, dsv[k0], nk);
      Adds(q, g, 0.0f, n);
      SegmentSums(q, dbv[k0], nk);
    }
    const uint64_t img = r / t_.groups;
    const uint64_t c0 = (r % t_.groups) * t_.cg;
    LocalTensor<float> w = V(0);
    float c1 = 0.0f, c2 = 0.0f;
    for (uint32_t k = 0; k < cg; ++k) {
      const float wk = w.GetValue(c0 + k);
      c1 += wk * dsv.GetValue(k);
      c2 += wk * dbv.GetValue(k);
    }
    SyncSToV();
    if (t_.need_gx) {
      const float b1 = (mean * c2 - c1) * rstd * rstd * rstd / D;
      const float b2 = -mean * b1 - rstd * c2 / D;
      for (uint32_t k0 = 0; k0 < cg; k0 += kc) {
        const uint32_t nk = cg - k0 < kc ? cg - k0 : kc;
        if (!single) {
          Load(xGm_, r, k0, nk, 0, 0);
          Load(goGm_, r, k0, nk, 1, 1);
        }
        for (uint32_t k = 0; k < nk; ++k) {
          const float a = rstd * w.GetValue(c0 + k0 + k);
          Muls(g[k * t_.hwp], g[k * t_.hwp], a, static_cast<int32_t>(t_.hw));
          Axpy(g[k * t_.hwp], x[k * t_.hwp], b1, static_cast<int32_t>(t_.hw));
          Adds(g[k * t_.hwp], g[k * t_.hwp], b2, static_cast<int32_t>(t_.hw));
        }
        Store(r, k0, nk, g);
      }
    }
    if (partialGm_.GetPhyAddr() != nullptr) {
      // partial[0][n][c] = (ds - db*mean) * rstd, partial[1][n][c] = db
      Axpy(dsv, dbv, -mean, static_cast<int32_t>(cg));
      Muls(dsv, dsv, rstd, static_cast<int32_t>(cg));
      SyncVToMte3();
      DataCopyPad(partialGm_[img * t_.c + c0], dsv, DataCopyExtParams{1, cg * 4, 0, 0, 0});
      DataCopyPad(partialGm_[t_.n * t_.c + img * t_.c + c0], dbv, DataCopyExtParams{1, cg * 4, 0, 0, 0});
      SyncMte3ToV();
    }
  }

  GroupNormTiling t_;
  bool bwd_ = false;
  bool maskReady_ = false;
  uint32_t row_ = 0;
  TPipe pipe_;
  TBuf<TPosition::VECCALC> inT_, rows_, vec_, small_;
  GlobalTensor<T> xGm_, goGm_, yGm_;
  GlobalTensor<float> meanGm_, rstdGm_, partialGm_;
};

}  // namespace

#define NPU_GN_ENTRY(NAME, T)                                                                                  \
  extern "C" __global__ __aicore__ void group_norm_fwd_kernel_##NAME(GM_ADDR x, GM_ADDR weight, GM_ADDR bias,   \
                                                                     GM_ADDR y, GM_ADDR mean, GM_ADDR rstd,     \
                                                                     GM_ADDR tiling) {                          \
    GET_TILING_DATA_WITH_STRUCT(GroupNormTiling, t, tiling);                                                    \
    GroupNormKernel<T> op;                                                                                      \
    op.Init(x, nullptr, weight, bias, y, mean, rstd, nullptr, t, false);                                        \
    op.Process();                                                                                               \
  }                                                                                                             \
  extern "C" __global__ __aicore__ void group_norm_bwd_kernel_##NAME(GM_ADDR go, GM_ADDR x, GM_ADDR mean,        \
                                                                     GM_ADDR rstd, GM_ADDR weight, GM_ADDR gx,  \
                                                                     GM_ADDR partial, GM_ADDR tiling) {         \
    GET_TILING_DATA_WITH_STRUCT(GroupNormTiling, t, tiling);                                                    \
    GroupNormKernel<T> op;                                                                                      \
    op.Init(x, go, weight, nullptr, gx, mean, rstd, partial, t, true);                                          \
    op.Process();                                                                                               \
  }
NPU_GN_ENTRY(float, float)
NPU_GN_ENTRY(half, half)
NPU_GN_ENTRY(bf16, bfloat16_t)
#undef NPU_GN_ENTRY
