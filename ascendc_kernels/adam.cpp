// Fused Adam / AdamW step on the vector cores (see adam.h).
#include "adam.h"

#include "kernel_operator.h"
#include "norm_util.h"

using namespace AscendC;

namespace npu_kernels {

namespace {

// Elements per core (whole 64-element blocks, split by the bytes each element moves) and a UB tile of
// `bufs` float buffers, shared by the optimizer kernels.
template <typename Tiling>
void SplitElements(Tiling& t, uint64_t n, uint64_t bufs, uint64_t bytes_per_elem, const SocInfo& soc) {
  t.n = n;
  uint64_t tile = AlignDown<uint64_t>((soc.ub_bytes - 8192) / (4 * bufs), 64);
  const uint64_t host = HostCacheTile(32 * bufs, 64);
  if (tile > host) tile = host;
  const ItemSplit sp = SplitItems(CeilDivU<uint64_t>(n, 64), n * bytes_per_elem, soc.vector_cores, 64 * 1024);
  t.per_core = sp.per_core * 64;
  t.block_dim = sp.block_dim;
  if (tile > t.per_core) tile = AlignUp<uint64_t>(t.per_core, 64);
  t.tile = uint32_t(tile ? tile : 64);
}

}  // namespace

AdamTiling adam_tiling(uint64_t n, bool amsgrad, const SocInfo& soc) {
  AdamTiling t;
  t.amsgrad = amsgrad ? 1 : 0;
  // UB: p, g, m, v (+ vmax) and one scratch tile; GM: 4 (5) floats in, 3 (4) out per element.
  SplitElements(t, n, amsgrad ? 6 : 5, amsgrad ? 36 : 28, soc);
  return t;
}

SgdTiling sgd_tiling(uint64_t n, const SocInfo& soc) {
  SgdTiling t;
  // UB: p, g, b; GM: 3 floats in, 2 out per element.
  SplitElements(t, n, 4, 20, soc);
  return t;
}

}  // namespace npu_kernels

namespace {

using npu_kernels::AdamTiling;
using namespace nn_kernels;

// One float of GM into the scalar scratch at `slot` (the caller syncs MTE2 -> S once for all of them).
__aicore__ inline void LoadScalar(const LocalTensor<float>& sm, uint32_t slot, const GlobalTensor<float>& gm) {
  DataCopyPad(sm[slot], gm, DataCopyExtParams{1, 4, 0, 0, 0}, DataCopyPadExtParams<float>{false, 0, 0, 0.0f});
}

// b^t for a whole t >= 0, by squaring.
__aicore__ inline double PowInt(double b, double t) {
  uint64_t e = t > 0 ? static_cast<uint64_t>(t) : 0;
  double r = 1.0;
  while (e) {
    if (e & 1) r *= b;
    b *= b;
    e >>= 1;
  }
  return r;
}

class AdamKernel {
 public:
  __aicore__ inline void Init(GM_ADDR p, GM_ADDR g, GM_ADDR m, GM_ADDR v, GM_ADDR vmax, GM_ADDR step,
                              GM_ADDR scale, const AdamTiling& t) {
    t_ = t;
    pGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(p), t.n);
    gGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(g), t.n);
    mGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(m), t.n);
    vGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(v), t.n);
    if (t.amsgrad) xGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(vmax), t.n);
    stepGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(step), 1);
    if (t.has_scale) scaleGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(scale), 1);
    for (int k = 0; k < (t.amsgrad ? 6 : 5); ++k) pipe_.InitBuffer(buf_[k], t.tile * 4);
    pipe_.InitBuffer(small_, 64);
  }

  __aicore__ inline void Process() {
    const CoreShare r = ShareOfThisCore(t_.n, t_.per_core);
    if (r.begin >= r.end) return;
    // The step and the gradient scale on the scalar unit.
    LocalTensor<float> sm = small_.Get<float>();
    LoadScalar(sm, 0, stepGm_);
    if (t_.has_scale) LoadScalar(sm, 8, scaleGm_);
    SyncMte2ToS();
    const double step = sm.GetValue(0);
    inv_scale_ = t_.has_scale ? 1.0f / sm.GetValue(8) : 1.0f;
    const double bc1 = 1.0 - PowInt(t_.beta1, step), bc2 = 1.0 - PowInt(t_.beta2, step);
    step_size_ = static_cast<float>(double(t_.lr) / bc1);
    inv_bc2_sqrt_ = static_cast<float>(1.0 / __builtin_sqrt(bc2));
    for (uint64_t o = r.begin; o < r.end; o += t_.tile)
      Tile(o, static_cast<uint32_t>(r.end - o < t_.tile ? r.end - o : t_.tile));
  }

 private:
  __aicore__ inline void Load(const LocalTensor<float>& dst, const GlobalTensor<float>& src, uint64_t o, uint32_t n) {
    DataCopyPad(dst, src[o], DataCopyExtParams{1, n * 4, 0, 0, 0}, DataCopyPadExtParams<float>{false, 0, 0, 0.0f});
  }
  __aicore__ inline void Store(const GlobalTensor<float>& dst, const LocalTensor<float>& src, uint64_t o, uint32_t n) {
    DataCopyPad(dst[o], src, DataCopyExtParams{1, n * 4, 0, 0, 0});
  }

  __aicore__ inline void Tile(uint64_t o, uint32_t n) {
    LocalTensor<float> p = buf_[0].Get<float>(), g = buf_[1].Get<float>(), m = buf_[2].Get<float>(),
                       v = buf_[3].Get<float>(), w = buf_[4].Get<float>();
    LocalTensor<float> x = t_.amsgrad ? buf_[5].Get<float>() : w;
    const int32_t L = static_cast<int32_t>(npu_kernels::AlignUp<uint32_t>(n, 64));
    Load(p, pGm_, o, n);
    Load(g, gGm_, o, n);
    Load(m, mGm_, o, n);
    Load(v, vGm_, o, n);
    if (t_.amsgrad) Load(x, xGm_, o, n);
    SyncMte2ToV();
    if (t_.has_scale) {
      Muls(g, g, inv_scale_, L);
      SyncVToMte3();
      Store(gGm_, g, o, n);  // the unscaled gradient, as the fused kernels leave it
    }
    if (t_.maximize) Muls(g, g, -1.0f, L);
    if (t_.weight_decay != 0.0f) {
      if (t_.adamw) Muls(p, p, 1.0f - t_.lr * t_.weight_decay, L);
      else Axpy(g, p, t_.weight_decay, L);  // g += wd * p
    }
    // m = beta1 m + (1 - beta1) g;  v = beta2 v + (1 - beta2) g^2
    Muls(m, m, t_.beta1, L);
    Axpy(m, g, 1.0f - t_.beta1, L);
    Mul(w, g, g, L);
    Muls(v, v, t_.beta2, L);
    Axpy(v, w, 1.0f - t_.beta2, L);
    LocalTensor<float> src = v;
    if (t_.amsgrad) {
      Max(x, x, v, L);
      src = x;
    }
    // p -= step_size * m / (sqrt(src) / sqrt(bc2) + eps)
    Sqrt(w, src, L);
    Muls(w, w, inv_bc2_sqrt_, L);
    Adds(w, w, t_.eps, L);
    Div(w, m, w, L);
    Axpy(p, w, -step_size_, L);
    SyncVToMte3();
    Store(pGm_, p, o, n);
    Store(mGm_, m, o, n);
    Store(vGm_, v, o, n);
    if (t_.amsgrad) Store(xGm_, x, o, n);
    SyncPipes<HardEvent::MTE3_MTE2>();  // the next tile's loads wait for these stores to leave UB
    SyncPipes<HardEvent::MTE3_V>();
  }

  AdamTiling t_;
  float inv_scale_ = 1.0f, step_size_ = 0.0f, inv_bc2_sqrt_ = 1.0f;
  TPipe pipe_;
  TBuf<TPosition::VECCALC> buf_[6], small_;
  GlobalTensor<float> pGm_, gGm_, mGm_, vGm_, xGm_, stepGm_, scaleGm_;
};

class SgdKernel {
 public:
  __aicore__ inline void Init(GM_ADDR p, GM_ADDR g, GM_ADDR b, GM_ADDR lr, GM_ADDR scale,
                              const npu_kernels::SgdTiling& t) {
    t_ = t;
    mom_ = t.momentum != 0.0f;
    pGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(p), t.n);
    gGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(g), t.n);
    if (mom_) bGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(b), t.n);
    if (t.has_lr_tensor) lrGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(lr), 1);
    if (t.has_scale) scaleGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(scale), 1);
    for (int k = 0; k < 3; ++k) pipe_.InitBuffer(buf_[k], t.tile * 4);
    pipe_.InitBuffer(small_, 64);
  }

  __aicore__ inline void Process() {
    const CoreShare r = ShareOfThisCore(t_.n, t_.per_core);
    if (r.begin >= r.end) return;
    lr_ = t_.lr;
    inv_scale_ = 1.0f;
    if (t_.has_lr_tensor || t_.has_scale) {
      LocalTensor<float> sm = small_.Get<float>();
      if (t_.has_lr_tensor) LoadScalar(sm, 0, lrGm_);
      if (t_.has_scale) LoadScalar(sm, 8, scaleGm_);
      SyncMte2ToS();
      if (t_.has_lr_tensor) lr_ = sm.GetValue(0);
      if (t_.has_scale) inv_scale_ = 1.0f / sm.GetValue(8);
    }
    for (uint64_t o = r.begin; o < r.end; o += t_.tile)
      Tile(o, static_cast<uint32_t>(r.end - o < t_.tile ? r.end - o : t_.tile));
  }

 private:
  __aicore__ inline void Tile(uint64_t o, uint32_t n) {
    LocalTensor<float> p = buf_[0].Get<float>(), g = buf_[1].Get<float>(), b = buf_[2].Get<float>();
    const int32_t L = static_cast<int32_t>(npu_kernels::AlignUp<uint32_t>(n, 64));
    const DataCopyExtParams cp{1, n * 4, 0, 0, 0};
    const DataCopyPadExtParams<float> pad{false, 0, 0, 0.0f};
    DataCopyPad(p, pGm_[o], cp, pad);
    DataCopyPad(g, gGm_[o], cp, pad);
    if (mom_ && !t_.first_step) DataCopyPad(b, bGm_[o], cp, pad);
    SyncMte2ToV();
    if (t_.has_scale) {
      Muls(g, g, inv_scale_, L);
      SyncVToMte3();
      DataCopyPad(gGm_[o], g, cp);  // the unscaled gradient, as the fused kernel leaves it
    }
    if (t_.maximize) Muls(g, g, -1.0f, L);
    if (t_.weight_decay != 0.0f) Axpy(g, p, t_.weight_decay, L);
    if (mom_) {
      if (t_.first_step) {
        Adds(b, g, 0.0f, L);
      } else {
        Muls(b, b, t_.momentum, L);
        Axpy(b, g, 1.0f - t_.dampening, L);
      }
      if (t_.nesterov) Axpy(g, b, t_.momentum, L);
      else Adds(g, b, 0.0f, L);
    }
    Axpy(p, g, -lr_, L);
    SyncVToMte3();
    DataCopyPad(pGm_[o], p, cp);
    if (mom_) DataCopyPad(bGm_[o], b, cp);
    SyncPipes<HardEvent::MTE3_MTE2>();
    SyncPipes<HardEvent::MTE3_V>();
  }

  npu_kernels::SgdTiling t_;
  bool mom_ = false;
  float lr_ = 0.0f, inv_scale_ = 1.0f;
  TPipe pipe_;
  TBuf<TPosition::VECCALC> buf_[3], small_;
  GlobalTensor<float> pGm_, gGm_, bGm_, lrGm_, scaleGm_;
};

}  // namespace

extern "C" __global__ __aicore__ void sgd_kernel(GM_ADDR p, GM_ADDR g, GM_ADDR b, GM_ADDR lr, GM_ADDR scale,
                                                 GM_ADDR tiling) {
  GET_TILING_DATA_WITH_STRUCT(npu_kernels::SgdTiling, t, tiling);
  SgdKernel op;
  op.Init(p, g, b, lr, scale, t);
  op.Process();
}

extern "C" __global__ __aicore__ void adam_kernel(GM_ADDR p, GM_ADDR g, GM_ADDR m, GM_ADDR v, GM_ADDR vmax,
                                                  GM_ADDR step, GM_ADDR scale, GM_ADDR tiling) {
  GET_TILING_DATA_WITH_STRUCT(AdamTiling, t, tiling);
  AdamKernel op;
  op.Init(p, g, m, v, vmax, step, scale, t);
  op.Process();
}
