// Layer norm in Ascend C: one row of d elements per step, in float. The row sums are count-form
// ReduceSum (per-64-lane trees added in order), so results depend only on d. Backward writes grad_input per
// row and keeps per-core column sums for grad_weight / grad_bias, folded in core order afterwards.
#include <cmath>

#include "kernel_operator.h"
#include "norm.h"
#include "norm_util.h"

using namespace AscendC;

namespace npu_kernels {

LayerNormTiling layer_norm_tiling(uint64_t rows, uint64_t d, bool backward, uint32_t elem_bytes, const SocInfo& soc) {
  LayerNormTiling t{};
  t.rows = rows;
  t.d = d;
  t.dpad = static_cast<uint32_t>(AlignUp<uint64_t>(d, 64));
  const uint64_t cores = static_cast<uint64_t>(soc.vector_cores > 0 ? soc.vector_cores : 1);
  // Enough rows per core for ~64K elements of work: each core loads weight and bias (2d floats) once, so
  // fewer, fuller cores move less.
  uint64_t min_rows = d ? CeilDivU<uint64_t>(65536, d) : 1;
  uint64_t rpc = CeilDivU<uint64_t>(rows, cores);
  if (rpc < min_rows) rpc = min_rows;
  if (rpc < 1) rpc = 1;
  t.rows_per_core = rpc;
  t.block_dim = static_cast<uint32_t>(rows ? CeilDivU<uint64_t>(rows, rpc) : 1);
  // UB: 4 float rows (x, tmp, w, b) forward, 6 backward (x, tmp, w, go, two column sums), plus two
  // dtype rows for 16-bit inputs (float rows are copied straight into the float buffers).
  const uint64_t per = (elem_bytes == 4 ? 0 : 2 * elem_bytes) + (backward ? 6 : 4) * 4;
  t.ok = static_cast<uint64_t>(t.dpad) * per + 8 * 1024 <= soc.ub_bytes;
  // As many rows per step as 4 float rows (+ 2 dtype rows) per row fit, up to 64 (the stats buffers):
  // one DMA each way and one Mul / Add of weight and bias per block instead of per row, one scalar wait
  // per statistic per block.
  // Backward: 4 float rows (x, g, tmp, w) + 2 dtype rows per row of a block, plus the two accumulator
  // rows once.
  t.batch = 1;
  const uint64_t per_block_row = (elem_bytes == 4 ? 0 : 2 * elem_bytes) + 4 * 4;
  const uint64_t fixed = 8 * 1024 + (backward ? 2ull * t.dpad * 4 : 0);
  if (t.ok && soc.ub_bytes > fixed) {
    uint64_t b = (soc.ub_bytes - fixed) / (static_cast<uint64_t>(t.dpad) * per_block_row);
    if (b > 64) b = 64;
    if (b > rpc) b = rpc;
    if (const uint64_t h = HostCacheRows(static_cast<uint64_t>(t.dpad) * per_block_row); b > h) b = h;
    if (b > 1) t.batch = static_cast<uint32_t>(b);
  }
  return t;
}

FoldTiling fold_tiling(uint64_t rows, uint64_t cols, const SocInfo& soc) {
  FoldTiling t{};
  t.rows = rows;
  t.cols = cols;
  uint64_t chunk = (soc.ub_bytes - 8 * 1024) / (4 * 2 * (rows + 1));
  chunk = AlignDown<uint64_t>(chunk, 8);
  if (chunk > 8192) chunk = 8192;
  if (chunk < 8) chunk = 8;
  t.chunk = static_cast<uint32_t>(chunk);
  return t;
}

}  // namespace npu_kernels

namespace {

using npu_kernels::FoldTiling;
using npu_kernels::LayerNormTiling;
using namespace nn_kernels;


template <typename T>
class LayerNormKernel {
 public:
  __aicore__ inline void Init(GM_ADDR x, GM_ADDR go, GM_ADDR weight, GM_ADDR bias, GM_ADDR y, GM_ADDR mean,
                              GM_ADDR rstd, GM_ADDR partial, const LayerNormTiling& t, bool backward) {
    t_ = t;
    bwd_ = backward;
    const uint64_t total = t.rows * t.d;
    xGm_.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(x), total);
    if (go) goGm_.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(go), total);
    if (weight) wGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(weight), t.d);
    if (bias) bGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(bias), t.d);
    if (y) yGm_.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(y), total);
    meanGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(mean), t.rows);
    rstdGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(rstd), t.rows);
    if (partial) partialGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(partial), 2ull * t.block_dim * t.d);
    const uint32_t dp = t.dpad, nb = t.batch;
    if constexpr (!std::is_same_v<T, float>) pipe_.InitBuffer(inT_, 2 * nb * dp * sizeof(T));
    pipe_.InitBuffer(rows_, (nb > 1 ? 4 * nb + (backward ? 2 : 0) : (backward ? 6 : 4)) * dp * sizeof(float));
    pipe_.InitBuffer(small_, 2 * 64 * sizeof(float) + 256);
    // ReduceSum's sharedTmpBuffer: one value per 64-lane repeat of a row.
    pipe_.InitBuffer(red_, (dp / 64 + 64) * sizeof(float));
    // The accumulators start at zero.
    if (backward) Duplicate(AccW(), 0.0f, static_cast<int32_t>(2 * dp));
    const uint32_t db = static_cast<uint32_t>(t.d * 4);
    if (nb > 1) {  // weight (and bias) repeated for every row of a block (padding columns never stored)
      for (uint32_t k = 0; k < nb; ++k) {
        if (weight) DataCopyPad(B(kW)[k * dp], wGm_, DataCopyExtParams{1, db, 0, 0, 0}, DataCopyPadExtParams<float>{false, 0, 0, 0.0f});
        if (bias && !backward) DataCopyPad(B(kB)[k * dp], bGm_, DataCopyExtParams{1, db, 0, 0, 0}, DataCopyPadExtParams<float>{false, 0, 0, 0.0f});
      }
      SyncMte2ToV();
      return;
    }
    if (weight) DataCopyPad(R(kW), wGm_, DataCopyExtParams{1, db, 0, 0, 0}, DataCopyPadExtParams<float>{false, 0, 0, 0.0f});
    else Duplicate(R(kW), 1.0f, static_cast<int32_t>(t.d));
    if (!backward) {
      if (bias) DataCopyPad(R(kB), bGm_, DataCopyExtParams{1, db, 0, 0, 0}, DataCopyPadExtParams<float>{false, 0, 0, 0.0f});
      else Duplicate(R(kB), 0.0f, static_cast<int32_t>(t.d));
    }
    SyncMte2ToV();
  }

  __aicore__ inline void Process() {
    const uint64_t r0 = t_.rows_per_core * GetBlockIdx();
    uint64_t r1 = r0 + t_.rows_per_core;
    if (r1 > t_.rows) r1 = t_.rows;
    if (t_.batch > 1) {
      // The statistics of whole blocks up to 64 rows move in one DMA each way (as RowByRow's).
      const uint64_t group = 64 / t_.batch * t_.batch;
      for (uint64_t g0 = r0; g0 < r1; g0 += group) {
        const uint64_t g1 = r1 - g0 < group ? r1 : g0 + group;
        if (bwd_) LoadStats(g0, static_cast<uint32_t>(g1 - g0));
        for (uint64_t r = g0; r < g1; r += t_.batch) {
          const uint32_t nb = static_cast<uint32_t>(g1 - r < t_.batch ? g1 - r : t_.batch);
          const uint32_t s0 = static_cast<uint32_t>(r - g0);
          if (bwd_) BackwardBlock(r, nb, s0);
          else ForwardBlock(r, nb, s0);
        }
        if (!bwd_) StoreStats(g0, static_cast<uint32_t>(g1 - g0));
      }
    } else {
      RowByRow(r0, r1);
    }
    if (bwd_ && partialGm_.GetPhyAddr() != nullptr) {
      SyncVToMte3();
      const uint32_t db = static_cast<uint32_t>(t_.d * 4);
      // partial[k][core][:] (k = 0 grad_weight, 1 grad_bias), folded by partial_rows_fold_kernel
      const uint64_t at = GetBlockIdx() * t_.d;
      DataCopyPad(partialGm_[at], AccW(), DataCopyExtParams{1, db, 0, 0, 0});
      DataCopyPad(partialGm_[t_.block_dim * t_.d + at], AccB(), DataCopyExtParams{1, db, 0, 0, 0});
    }
  }

 private:
  __aicore__ inline void RowByRow(uint64_t r0, uint64_t r1) {
    for (uint64_t r = r0; r < r1; r += 64) {
      const uint32_t nr = static_cast<uint32_t>(r1 - r < 64 ? r1 - r : 64);
      if (bwd_) LoadStats(r, nr);
      for (uint32_t k = 0; k < nr; ++k) {
        if (bwd_) BackwardRow(r + k, k);
        else ForwardRow(r + k, k);
      }
      if (!bwd_) StoreStats(r, nr);
    }
  }

  enum Row { kX = 0, kTmp = 1, kW = 2, kB = 3, kG = 3, kAccW = 4, kAccB = 5 };
  __aicore__ inline LocalTensor<float> R(int k) { return rows_.Get<float>()[k * t_.dpad]; }
  __aicore__ inline LocalTensor<float> Stat(int k) { return small_.Get<float>()[k * 64]; }
  // Block layout (batch > 1): four regions of batch rows of dpad floats (x, tmp, w, b / g), then the
  // backward's two accumulator rows.
  __aicore__ inline LocalTensor<float> B(int k) { return rows_.Get<float>()[k * t_.batch * t_.dpad]; }
  __aicore__ inline LocalTensor<float> AccW() { return t_.batch > 1 ? B(4) : R(kAccW); }
  __aicore__ inline LocalTensor<float> AccB() { return t_.batch > 1 ? B(4)[t_.dpad] : R(kAccB); }

  // The backward of nb consecutive rows as one block (BackwardRow's math, see there); their statistics
  // are at s0 of the loaded stats.
  __aicore__ inline void BackwardBlock(uint64_t r, uint32_t nb, uint32_t s0) {
    const uint32_t dp = t_.dpad, n = nb * dp;
    const int32_t d = static_cast<int32_t>(t_.d);
    const float inv_d = 1.0f / static_cast<float>(t_.d);
    LocalTensor<float> x = B(kX), tmp = B(kTmp), g = B(kG);
    LoadBlock(x, xGm_, r, nb, 0);
    LoadBlock(g, goGm_, r, nb, 1);
    float rstd[64];
    for (uint32_t k = 0; k < nb; ++k) {  // xhat
      rstd[k] = Stat(1).GetValue(s0 + k);
      Adds(x[k * dp], x[k * dp], -Stat(0).GetValue(s0 + k), d);
      Muls(x[k * dp], x[k * dp], rstd[k], d);
    }
    if (t_.need_gw) {
      Mul(tmp, g, x, n);
      for (uint32_t k = 0; k < nb; ++k) Add(AccW(), AccW(), tmp[k * dp], d);
    }
    if (t_.need_gb)
      for (uint32_t k = 0; k < nb; ++k) Add(AccB(), AccB(), g[k * dp], d);
    if (!t_.need_gx) return;
    if (t_.has_weight) Mul(g, g, B(kW), n);
    LocalTensor<float> sums = small_.Get<float>()[128];
    for (uint32_t k = 0; k < nb; ++k) ReduceSum(sums[k], g[k * dp], red_.Get<float>(), d);
    SyncVToS();
    float s1[64];
    for (uint32_t k = 0; k < nb; ++k) s1[k] = sums.GetValue(k) * inv_d;
    Mul(tmp, g, x, n);
    for (uint32_t k = 0; k < nb; ++k) ReduceSum(sums[k], tmp[k * dp], red_.Get<float>(), d);
    SyncVToS();
    for (uint32_t k = 0; k < nb; ++k) Muls(x[k * dp], x[k * dp], -sums.GetValue(k) * inv_d, d);
    Add(x, x, g, n);
    for (uint32_t k = 0; k < nb; ++k) {
      Adds(x[k * dp], x[k * dp], -s1[k], d);
      Muls(x[k * dp], x[k * dp], rstd[k], d);
    }
    StoreBlock(x, r, nb);
  }

  // nb consecutive rows as one block: one DMA in and out, per-row sums and scalings, the affine step once;
  // the statistics go to s0 of the stats buffers.
  __aicore__ inline void ForwardBlock(uint64_t r, uint32_t nb, uint32_t s0) {
    const uint32_t dp = t_.dpad, n = nb * dp;
    const int32_t d = static_cast<int32_t>(t_.d);
    const float inv_d = 1.0f / static_cast<float>(t_.d);
    LocalTensor<float> x = B(kX), tmp = B(kTmp);
    LoadBlock(x, xGm_, r, nb, 0);
    LocalTensor<float> sums = small_.Get<float>()[128];
    for (uint32_t k = 0; k < nb; ++k) ReduceSum(sums[k], x[k * dp], red_.Get<float>(), d);
    SyncVToS();
    for (uint32_t k = 0; k < nb; ++k) {
      const float mean = sums.GetValue(k) * inv_d;
      Stat(0).SetValue(s0 + k, mean);
      Adds(x[k * dp], x[k * dp], -mean, d);
    }
    Mul(tmp, x, x, n);
    for (uint32_t k = 0; k < nb; ++k) ReduceSum(sums[k], tmp[k * dp], red_.Get<float>(), d);
    SyncVToS();
    for (uint32_t k = 0; k < nb; ++k) {
      const float rstd = 1.0f / std::sqrt(sums.GetValue(k) * inv_d + t_.eps);
      Stat(1).SetValue(s0 + k, rstd);
      Muls(x[k * dp], x[k * dp], rstd, d);
    }
    if (t_.has_weight) Mul(x, x, B(kW), n);
    if (t_.has_bias) Add(x, x, B(kB), n);
    StoreBlock(x, r, nb);
  }

  // Block DMA: nb rows of d elements, back to back in GM, dpad apart in UB (the gap after each row's
  // 32 B-aligned end, in 32 B blocks). 16-bit rows go through dtype tile `slot` (of 2) and a Cast.
  __aicore__ inline uint32_t RowBytes() const { return static_cast<uint32_t>(t_.d * sizeof(T)); }
  __aicore__ inline uint32_t RowGap() const {
    return (t_.dpad * static_cast<uint32_t>(sizeof(T)) - AlignUpU(RowBytes(), 32)) / 32;
  }
  __aicore__ inline void LoadBlock(const LocalTensor<float>& dst, const GlobalTensor<T>& gm, uint64_t r, uint32_t nb,
                                   int slot) {
    const DataCopyExtParams p{static_cast<uint16_t>(nb), RowBytes(), 0, RowGap(), 0};
    SyncVToMte2();
    if constexpr (std::is_same_v<T, float>) {
      DataCopyPad(dst, gm[r * t_.d], p, DataCopyPadExtParams<T>{true, 0, 0, T(0)});
      SyncMte2ToV();
    } else {
      LocalTensor<T> stage = inT_.Get<T>()[slot * nb * t_.dpad];
      DataCopyPad(stage, gm[r * t_.d], p, DataCopyPadExtParams<T>{true, 0, 0, T(0)});
      SyncMte2ToV();
      Cast(dst, stage, RoundMode::CAST_NONE, nb * t_.dpad);
    }
  }
  __aicore__ inline void StoreBlock(const LocalTensor<float>& src, uint64_t r, uint32_t nb) {
    LocalTensor<T> out = src.template ReinterpretCast<T>();
    if constexpr (!std::is_same_v<T, float>) {
      out = inT_.Get<T>()[nb * t_.dpad];  // the second dtype tile (the loads are done with it)
      StoreFloat(out, src, nb * t_.dpad);
    }
    SyncVToMte3();
    DataCopyPad(yGm_[r * t_.d], out, DataCopyExtParams{static_cast<uint16_t>(nb), RowBytes(), RowGap(), 0, 0});
    SyncMte3ToV();
  }
  static __aicore__ inline uint32_t AlignUpU(uint32_t v, uint32_t a) { return (v + a - 1) / a * a; }

  __aicore__ inline LocalTensor<float> LoadRow(const GlobalTensor<T>& gm, uint64_t row, int slot, int dst) {
    SyncVToMte2();
    if constexpr (std::is_same_v<T, float>) {
      DataCopyPad(R(dst), gm[row * t_.d], DataCopyExtParams{1, static_cast<uint32_t>(t_.d * sizeof(T)), 0, 0, 0},
                  DataCopyPadExtParams<T>{true, 0, 0, T(0)});
      SyncMte2ToV();
      return R(dst);
    }
    LocalTensor<T> in = inT_.Get<T>()[slot * t_.dpad];
    DataCopyPad(in, gm[row * t_.d], DataCopyExtParams{1, static_cast<uint32_t>(t_.d * sizeof(T)), 0, 0, 0},
                DataCopyPadExtParams<T>{true, 0, 0, T(0)});
    SyncMte2ToV();
    LocalTensor<float> f = R(dst);
    Cast(f, in, RoundMode::CAST_NONE, static_cast<uint32_t>(t_.d));
    return f;
  }

  // Sum of src[0, d): one count-form ReduceSum (a single read pass; the result depends only on d).
  __aicore__ inline float RowSum(const LocalTensor<float>& src) {
    LocalTensor<float> out = small_.Get<float>()[128];
    ReduceSum(out, src, red_.Get<float>(), static_cast<int32_t>(t_.d));
    SyncVToS();
    return out.GetValue(0);
  }

  __aicore__ inline void StoreRow(uint64_t row, const LocalTensor<float>& f) {
    const int32_t d = static_cast<int32_t>(t_.d);
    LocalTensor<T> out = f.template ReinterpretCast<T>();
    if constexpr (!std::is_same_v<T, float>) {
      out = inT_.Get<T>()[t_.dpad];
      StoreFloat(out, f, static_cast<uint32_t>(d));
    }
    SyncVToMte3();
    DataCopyPad(yGm_[row * t_.d], out, DataCopyExtParams{1, static_cast<uint32_t>(t_.d * sizeof(T)), 0, 0, 0});
    SyncMte3ToV();
  }

  __aicore__ inline void ForwardRow(uint64_t row, uint32_t k) {
    const int32_t d = static_cast<int32_t>(t_.d);
    const float inv_d = 1.0f / static_cast<float>(t_.d);
    LocalTensor<float> x = LoadRow(xGm_, row, 0, kX);
    const float mean = RowSum(x) * inv_d;
    Adds(x, x, -mean, d);
    LocalTensor<float> tmp = R(kTmp);
    Mul(tmp, x, x, d);
    const float var = RowSum(tmp) * inv_d;
    const float rstd = 1.0f / std::sqrt(var + t_.eps);
    Stat(0).SetValue(k, mean);
    Stat(1).SetValue(k, rstd);
    Muls(x, x, rstd, d);
    if (t_.has_weight) Mul(x, x, R(kW), d);
    if (t_.has_bias) Add(x, x, R(kB), d);
    StoreRow(row, x);
  }

  __aicore__ inline void StoreStats(uint64_t r, uint32_t nr) {
    SyncSToMte3();
    DataCopyPad(meanGm_[r], Stat(0), DataCopyExtParams{1, nr * 4, 0, 0, 0});
    DataCopyPad(rstdGm_[r], Stat(1), DataCopyExtParams{1, nr * 4, 0, 0, 0});
    SyncMte3ToV();
  }
  __aicore__ inline void LoadStats(uint64_t r, uint32_t nr) {
    SyncVToMte2();
    DataCopyPad(Stat(0), meanGm_[r], DataCopyExtParams{1, nr * 4, 0, 0, 0}, DataCopyPadExtParams<float>{false, 0, 0, 0.0f});
    DataCopyPad(Stat(1), rstdGm_[r], DataCopyExtParams{1, nr * 4, 0, 0, 0}, DataCopyPadExtParams<float>{false, 0, 0, 0.0f});
    SetFlag<HardEvent::MTE2_S>(0);
    WaitFlag<HardEvent::MTE2_S>(0);
  }

  // xhat = (x - mean) * rstd; dxh = go * w;
  // grad_in = rstd * (dxh - mean(dxh) - xhat * mean(dxh * xhat)); acc_w += go * xhat; acc_b += go.
  __aicore__ inline void BackwardRow(uint64_t row, uint32_t k) {
    const int32_t d = static_cast<int32_t>(t_.d);
    const float inv_d = 1.0f / static_cast<float>(t_.d);
    const float mean = Stat(0).GetValue(k), rstd = Stat(1).GetValue(k);
    LocalTensor<float> x = LoadRow(xGm_, row, 0, kX);
    LocalTensor<float> g = LoadRow(goGm_, row, 1, kG);
    LocalTensor<float> tmp = R(kTmp);
    Adds(x, x, -mean, d);
    Muls(x, x, rstd, d);
    if (t_.need_gw) {
      Mul(tmp, g, x, d);
      Add(R(kAccW), R(kAccW), tmp, d);
    }
    if (t_.need_gb) Add(R(kAccB), R(kAccB), g, d);
    if (!t_.need_gx) return;
    if (t_.has_weight) Mul(g, g, R(kW), d);
    const float s1 = RowSum(g) * inv_d;
    Mul(tmp, g, x, d);
    const float s2 = RowSum(tmp) * inv_d;
    Muls(x, x, -s2, d);
    Add(x, x, g, d);
    Adds(x, x, -s1, d);
    Muls(x, x, rstd, d);
    StoreRow(row, x);
  }

  LayerNormTiling t_;
  bool bwd_ = false;
  TPipe pipe_;
  TBuf<TPosition::VECCALC> inT_, rows_, small_, red_;
  GlobalTensor<T> xGm_, goGm_, yGm_;
  GlobalTensor<float> wGm_, bGm_, meanGm_, rstdGm_, partialGm_;
};

}  // namespace

#define NPU_LN_ENTRY(NAME, T)                                                                                  \
  extern "C" __global__ __aicore__ void layer_norm_fwd_kernel_##NAME(GM_ADDR x, GM_ADDR weight, GM_ADDR bias,   \
                                                                     GM_ADDR y, GM_ADDR mean, GM_ADDR rstd,     \
                                                                     GM_ADDR tiling) {                          \
    GET_TILING_DATA_WITH_STRUCT(LayerNormTiling, t, tiling);                                                    \
    LayerNormKernel<T> op;                                                                                      \
    op.Init(x, nullptr, weight, bias, y, mean, rstd, nullptr, t, false);                                        \
    op.Process();                                                                                               \
  }                                                                                                             \
  extern "C" __global__ __aicore__ void layer_norm_bwd_kernel_##NAME(GM_ADDR go, GM_ADDR x, GM_ADDR mean,        \
                                                                     GM_ADDR rstd, GM_ADDR weight, GM_ADDR gx,  \
                                                                     GM_ADDR partial, GM_ADDR tiling) {         \
    GET_TILING_DATA_WITH_STRUCT(LayerNormTiling, t, tiling);                                                    \
    LayerNormKernel<T> op;                                                                                      \
    op.Init(x, go, weight, nullptr, gx, mean, rstd, partial, t, true);                                          \
    op.Process();                                                                                               \
  }
NPU_LN_ENTRY(float, float)
NPU_LN_ENTRY(half, half)
NPU_LN_ENTRY(bf16, bfloat16_t)
#undef NPU_LN_ENTRY

// Column sums of partial rows (one core, row order): out_k = sum_r partial[k][r][:].
extern "C" __global__ __aicore__ void partial_rows_fold_kernel(GM_ADDR partial, GM_ADDR out0, GM_ADDR out1,
                                                               GM_ADDR tiling) {
  GET_TILING_DATA_WITH_STRUCT(FoldTiling, t, tiling);
  TPipe pipe;
  TBuf<TPosition::VECCALC> buf;
  pipe.InitBuffer(buf, static_cast<uint32_t>(t.rows) * t.chunk * 4);
  GlobalTensor<float> pg, o[2];
  pg.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(partial), 2 * t.rows * t.cols);
  o[0].SetGlobalBuffer(reinterpret_cast<__gm__ float*>(out0), t.cols);
  o[1].SetGlobalBuffer(reinterpret_cast<__gm__ float*>(out1), t.cols);
  LocalTensor<float> b = buf.Get<float>();
  for (int k = 0; k < 2; ++k) {
    if (o[k].GetPhyAddr() == nullptr) continue;
    for (uint64_t c0 = 0; c0 < t.cols; c0 += t.chunk) {
      const uint32_t cc = static_cast<uint32_t>(t.cols - c0 < t.chunk ? t.cols - c0 : t.chunk);
      const uint32_t pitch = npu_kernels::AlignUp<uint32_t>(cc, 8);
      SyncVToMte2();
      // Rows of `cols` floats: partial[k][r] starts at (k * rows + r) * cols.
      DataCopyPad(b, pg[k * t.rows * t.cols + c0],
                  DataCopyExtParams{static_cast<uint16_t>(t.rows), cc * 4, static_cast<uint32_t>((t.cols - cc) * 4),
                                    (t.chunk * 4 - pitch * 4) / 32 + 0, 0},
                  DataCopyPadExtParams<float>{true, 0, 0, 0.0f});
      SyncMte2ToV();
      FoldRows(b, static_cast<uint32_t>(t.rows), t.chunk, pitch);
      SyncVToMte3();
      DataCopyPad(o[k][c0], b, DataCopyExtParams{1, cc * 4, 0, 0, 0});
      SyncMte3ToV();
    }
  }
}
