// nll_loss / nll_loss2d in Ascend C.
//
// Lanes are samples; each core takes a range of them. A tile of lanes reads its int64 targets (low words
// by Gather), checks them (out of range and not ignore_index -> ascendc_assert with the numbers), and for
// each block of classes in UB ([lanes x classes] for [N, C], [classes x pixels] for [N, C, HW]) gathers
// x[lane, target] and the class weight. All masks are 0/1 floats built with vector arithmetic. The
// forward of [N, C] with many classes (tiling.pick) reads each lane's x[lane, target] with the scalar
// unit instead: a lane's whole row of C values would cross GM -> UB for one of them.
// Reductions: per-core partial sums of loss and weight (fixed order), then a one-core kernel that adds
// them in core order and divides for 'mean'. Backward: each block is zero-filled, the lanes' gradients
// are scattered at their target (lanes whose target lies in another block go to a dummy cell), and the
// block is written out.
#include "loss.h"

#include "kernel_operator.h"
#include "norm_util.h"

using namespace AscendC;

namespace npu_kernels {

NllTiling nll_tiling(uint32_t layout, uint32_t reduction, uint64_t n, uint64_t c, uint64_t hw, uint32_t elem_bytes,
                     const SocInfo& soc, bool forward) {
  NllTiling t{};
  t.layout = layout;
  t.reduction = reduction;
  t.n = n;
  t.c = c;
  t.hw = hw;
  const uint64_t lanes = n * hw;
  const uint64_t cores = static_cast<uint64_t>(soc.vector_cores > 0 ? soc.vector_cores : 1);
  uint64_t per = AlignUp<uint64_t>(CeilDivU<uint64_t>(lanes, cores), 64);
  if (per < 256) per = 256;
  t.lanes_per_core = per;
  t.block_dim = static_cast<uint32_t>(lanes ? CeilDivU<uint64_t>(lanes, per) : 1);
  uint64_t tile = per < 1024 ? per : 1024;
  if (layout == kNllPlanes && tile > AlignUp<uint64_t>(hw, 64)) tile = AlignUp<uint64_t>(hw, 64);
  t.tile = static_cast<uint32_t>(tile);
  // UB: about 96 B of per-lane vectors, the rest for a block of classes (dtype) and its weights.
  const uint64_t budget = soc.ub_bytes - 16 * 1024 - 96 * tile;
  uint64_t chunk = budget / (tile * elem_bytes + 4);
  chunk = AlignDown<uint64_t>(chunk, 16);
  if (chunk > c) chunk = c;
  if (chunk < 1) chunk = 1;
  t.chunk = static_cast<uint32_t>(chunk);
  if (forward && layout == kNllRows && c >= kNllPickMinClasses) {
    // Only the class weights move in blocks: as many classes per block as their floats fit.
    t.pick = 1;
    chunk = AlignDown<uint64_t>(budget / 4, 16);
    t.chunk = static_cast<uint32_t>(chunk < c ? chunk : c);
  }
  return t;
}

}  // namespace npu_kernels

namespace {

using npu_kernels::NllTiling;
using namespace nn_kernels;


// y = clamp(x, 0, 1) in place
__aicore__ inline void Clamp01(const LocalTensor<float>& x, int32_t n) {
  Maxs(x, x, 0.0f, n);
  Mins(x, x, 1.0f, n);
}

template <typename T>
class NllKernel {
 public:
  __aicore__ inline void Init(GM_ADDR x, GM_ADDR target, GM_ADDR weight, GM_ADDR go, GM_ADDR total_weight,
                              GM_ADDR out, GM_ADDR partial, const NllTiling& t, bool backward) {
    t_ = t;
    bwd_ = backward;
    const uint64_t lanes = t.n * t.hw;
    if (x) xGm_.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(x), lanes * t.c);
    tGm_.SetGlobalBuffer(reinterpret_cast<__gm__ int64_t*>(target), lanes);
    if (weight) wGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(weight), t.c);
    if (go) goGm_.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(go), t.reduction == npu_kernels::kNllNone ? lanes : 1);
    if (total_weight) twGm_.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(total_weight), 1);
    if (out) outGm_.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(out), backward ? lanes * t.c : lanes);
    if (partial) partialGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(partial), 8ull * t.block_dim);
    P_ = t.tile;
    cc_ = t.chunk;
    ccp_ = npu_kernels::AlignUp<uint32_t>(cc_, 32 / sizeof(T));
    pp_ = npu_kernels::AlignUp<uint32_t>(P_, 32 / sizeof(T));
    blockElems_ = t.pick ? 32 / sizeof(T) : t.layout == npu_kernels::kNllRows ? P_ * ccp_ : cc_ * pp_;
    pipe_.InitBuffer(blk_, blockElems_ * sizeof(T) + 64);
    pipe_.InitBuffer(wblk_, npu_kernels::AlignUp<uint32_t>(cc_, 16) * sizeof(float));
    pipe_.InitBuffer(traw_, P_ * 8);
    pipe_.InitBuffer(lanes_, kLaneBufs * P_ * sizeof(float));
    pipe_.InitBuffer(small_, 256);
    // per-core tables: low-word offsets (8j) and the lane index j as float
    LocalTensor<int32_t> low = Lane(kLow).template ReinterpretCast<int32_t>();
    Iota(low, P_);
    LocalTensor<float> jf = Lane(kIota);
    Cast(jf, low, RoundMode::CAST_NONE, P_);
    Muls(low, low, 8, static_cast<int32_t>(P_));
  }

  __aicore__ inline void Process() {
    const uint64_t lanes = t_.n * t_.hw;
    const uint64_t l0 = t_.lanes_per_core * GetBlockIdx();
    uint64_t l1 = l0 + t_.lanes_per_core;
    if (l1 > lanes) l1 = lanes;
    const int32_t n = static_cast<int32_t>(P_);
    Duplicate(Lane(kAccL), 0.0f, n);
    Duplicate(Lane(kAccW), 0.0f, n);
    if (bwd_) LoadGradScalars();
    for (uint64_t l = l0; l < l1;) {
      uint64_t np = l1 - l < P_ ? l1 - l : P_;
      if (t_.layout == npu_kernels::kNllPlanes) {
        const uint64_t img_end = (l / t_.hw + 1) * t_.hw;
        if (l + np > img_end) np = img_end - l;
      }
      Tile(l, static_cast<uint32_t>(np));
      l += np;
    }
    if (!bwd_ && t_.reduction != npu_kernels::kNllNone) {
      LocalTensor<float> sm = small_.Get<float>();
      const float sl = FoldSum(Lane(kAccL), sm, P_);
      const float sw = FoldSum(Lane(kAccW), sm, P_);
      SyncVToS();
      sm.SetValue(8, sl);
      sm.SetValue(9, sw);
      SetFlag<HardEvent::S_MTE3>(0);
      WaitFlag<HardEvent::S_MTE3>(0);
      DataCopyPad(partialGm_[8 * GetBlockIdx()], sm[8], DataCopyExtParams{1, 8, 0, 0, 0});
    }
  }

 private:
  enum LaneBuf { kLow = 0, kIota, kT, kTf, kKeep, kIn, kOff, kVal, kW, kAccL, kAccW, kTmp, kWg, kXt, kLaneBufs };
  __aicore__ inline LocalTensor<float> Lane(int k) { return lanes_.Get<float>()[k * P_]; }

  __aicore__ inline void LoadGradScalars() {
    LocalTensor<T> s = small_.Get<T>()[128 / sizeof(T)];
    g_ = 1.0f;
    if (t_.reduction != npu_kernels::kNllNone) {
      DataCopyPad(s, goGm_, DataCopyExtParams{1, sizeof(T), 0, 0, 0}, DataCopyPadExtParams<T>{false, 0, 0, T(0)});
      SyncMte2ToS();
      g_ = static_cast<float>(s.GetValue(0));
      if (t_.reduction == npu_kernels::kNllMean) {
        DataCopyPad(s, twGm_, DataCopyExtParams{1, sizeof(T), 0, 0, 0}, DataCopyPadExtParams<T>{false, 0, 0, T(0)});
        SyncMte2ToS();
        g_ = g_ / static_cast<float>(s.GetValue(0));
      }
    }
  }

  // Targets of lanes [l, l + np): t (int32), tf (float), keep = valid lane and not ignored; asserts range.
  __aicore__ inline void Targets(uint64_t l, uint32_t np) {
    const int32_t n = static_cast<int32_t>(P_);
    LocalTensor<int64_t> raw = traw_.Get<int64_t>();
    LocalTensor<int32_t> t = Lane(kT).template ReinterpretCast<int32_t>();
    LocalTensor<float> tf = Lane(kTf), keep = Lane(kKeep), tmp = Lane(kTmp), bad = Lane(kIn);
    Duplicate(raw.template ReinterpretCast<int32_t>(), 0, static_cast<int32_t>(2 * P_));
    SyncVToMte2();
    DataCopyPad(raw, tGm_[l], DataCopyExtParams{1, np * 8, 0, 0, 0}, DataCopyPadExtParams<int64_t>{false, 0, 0, 0});
    SyncMte2ToV();
    Gather(t, raw.template ReinterpretCast<int32_t>(), Lane(kLow).template ReinterpretCast<uint32_t>(), 0u, P_);
    Cast(tf, t, RoundMode::CAST_NONE, P_);
    // keep = [j < np]
    Muls(keep, Lane(kIota), -1.0f, n);
    Adds(keep, keep, static_cast<float>(np), n);
    Clamp01(keep, n);
    if (t_.has_ignore) {
      // keep *= 1 - [t == ignore_index]
      Adds(tmp, tf, -static_cast<float>(t_.ignore_index), n);
      Abs(tmp, tmp, n);
      Mins(tmp, tmp, 1.0f, n);
      Mul(keep, keep, tmp, n);
    }
    // bad = keep * ([t < 0] + [t > C-1])
    Muls(bad, tf, -1.0f, n);
    Clamp01(bad, n);
    Adds(tmp, tf, -static_cast<float>(t_.c - 1), n);
    Clamp01(tmp, n);
    Add(bad, bad, tmp, n);
    Mul(bad, bad, keep, n);
    Adds(tmp, bad, 0.0f, n);
    const float any = FoldSum(tmp, small_.Get<float>(), P_);
    SyncVToS();
    if (any > 0.0f) {
      for (uint32_t j = 0; j < np; ++j) {
        if (bad.GetValue(j) > 0.0f) {
          const int64_t target = raw.GetValue(j);
          const int64_t classes = static_cast<int64_t>(t_.c);
          ascendc_assert(target >= 0 && target < classes,
                         "nll_loss: target %lld is out of bounds for %lld classes [0, %lld) at sample %llu",
                         static_cast<long long>(target), static_cast<long long>(classes),
                         static_cast<long long>(classes), static_cast<unsigned long long>(l + j));
        }
      }
    }
  }

  // in = keep * [c0 <= t < c0 + cc]; off = byte offset of (lane, t - c0) in the block (clamped).
  __aicore__ inline void ChunkMask(uint32_t c0, uint32_t cc) {
    const int32_t n = static_cast<int32_t>(P_);
    LocalTensor<float> tf = Lane(kTf), in = Lane(kIn), tmp = Lane(kTmp);
    if (cc == t_.c) {
      Adds(in, Lane(kKeep), 0.0f, n);
    } else {
      Adds(in, tf, 1.0f - static_cast<float>(c0), n);
      Clamp01(in, n);
      Muls(tmp, tf, -1.0f, n);
      Adds(tmp, tmp, static_cast<float>(c0 + cc), n);
      Clamp01(tmp, n);
      Mul(in, in, tmp, n);
      Mul(in, in, Lane(kKeep), n);
    }
    LocalTensor<int32_t> off = Lane(kOff).template ReinterpretCast<int32_t>();
    LocalTensor<int32_t> t = Lane(kT).template ReinterpretCast<int32_t>();
    Adds(off, t, -static_cast<int32_t>(c0), n);
    Maxs(off, off, 0, n);
    Mins(off, off, static_cast<int32_t>(cc - 1), n);
    LocalTensor<int32_t> j = Lane(kLow).template ReinterpretCast<int32_t>();  // 8j
    LocalTensor<int32_t> tmpi = tmp.template ReinterpretCast<int32_t>();
    const int32_t esz = static_cast<int32_t>(sizeof(T));
    if (t_.layout == npu_kernels::kNllRows) {
      // (j * ccp + tl) * esz = 8j * (ccp * esz / 8) + tl * esz  (ccp * esz is a multiple of 32)
      Muls(off, off, esz, n);
      Muls(tmpi, j, static_cast<int32_t>(ccp_) * esz / 8, n);
    } else {
      // (tl * pp + j) * esz = tl * pp * esz + (8j * esz) >> 3
      Muls(off, off, static_cast<int32_t>(pp_) * esz, n);
      Muls(tmpi, j, esz, n);
      ShiftRight(tmpi.template ReinterpretCast<uint32_t>(), tmpi.template ReinterpretCast<uint32_t>(), 3u, n);
    }
    Add(off, off, tmpi, n);
  }

  // Block of classes [c0, c0 + cc) for lanes [l, l + np) (rows: [np x ccp]; planes: [cc x pp]).
  __aicore__ inline DataCopyExtParams BlockParams(uint32_t np, uint32_t cc) const {
    const uint32_t esz = sizeof(T);
    if (t_.layout == npu_kernels::kNllRows) {
      return DataCopyExtParams{static_cast<uint16_t>(np), cc * esz, static_cast<uint32_t>((t_.c - cc) * esz),
                               (ccp_ * esz - npu_kernels::AlignUp<uint32_t>(cc * esz, 32)) / 32, 0};
    }
    return DataCopyExtParams{static_cast<uint16_t>(cc), np * esz, static_cast<uint32_t>((t_.hw - np) * esz),
                             (pp_ * esz - npu_kernels::AlignUp<uint32_t>(np * esz, 32)) / 32, 0};
  }
  __aicore__ inline uint64_t BlockGmOffset(uint64_t l, uint32_t c0) const {
    if (t_.layout == npu_kernels::kNllRows) return l * t_.c + c0;
    const uint64_t img = l / t_.hw, pix = l % t_.hw;
    return (img * t_.c + c0) * t_.hw + pix;
  }

  __aicore__ inline void Tile(uint64_t l, uint32_t np) {
    const int32_t n = static_cast<int32_t>(P_);
    Targets(l, np);
    LocalTensor<float> val = Lane(kVal), wv = Lane(kW), in = Lane(kIn), tmp = Lane(kTmp);
    LocalTensor<T> blk = blk_.Get<T>();
    LocalTensor<float> wblk = wblk_.Get<float>();
    Duplicate(val, 0.0f, n);
    Duplicate(wv, 0.0f, n);
    if (bwd_) {
      // value to scatter: -g * w[t] (per lane g for 'none')
      if (t_.reduction == npu_kernels::kNllNone) {
        LocalTensor<T> gt = blk_.Get<T>();
        SyncVToMte2();
        DataCopyPad(gt, goGm_[l], DataCopyExtParams{1, static_cast<uint32_t>(np * sizeof(T)), 0, 0, 0},
                    DataCopyPadExtParams<T>{false, 0, 0, T(0)});
        SyncMte2ToV();
        if constexpr (std::is_same_v<T, float>) Muls(val, gt, -1.0f, static_cast<int32_t>(np));
        else {
          Cast(val, gt, RoundMode::CAST_NONE, np);
          Muls(val, val, -1.0f, static_cast<int32_t>(np));
        }
      } else {
        Duplicate(val, -g_, n);
      }
    }
    for (uint32_t c0 = 0; c0 < t_.c; c0 += cc_) {
      const uint32_t cc = static_cast<uint32_t>(t_.c - c0 < cc_ ? t_.c - c0 : cc_);
      ChunkMask(c0, cc);
      LocalTensor<uint32_t> off = Lane(kOff).template ReinterpretCast<uint32_t>();
      if (t_.has_weight) {
        SyncVToMte2();
        DataCopyPad(wblk, wGm_[c0], DataCopyExtParams{1, cc * 4, 0, 0, 0},
                    DataCopyPadExtParams<float>{false, 0, 0, 0.0f});
        SyncMte2ToV();
        // weight offsets: tl * 4 from the block offset
        LocalTensor<int32_t> wo = Lane(kTmp).template ReinterpretCast<int32_t>();
        Adds(wo, Lane(kT).template ReinterpretCast<int32_t>(), -static_cast<int32_t>(c0), n);
        Maxs(wo, wo, 0, n);
        Mins(wo, wo, static_cast<int32_t>(cc - 1), n);
        Muls(wo, wo, 4, n);
        LocalTensor<float> wg = Lane(kWg);  // this block's share: in * w[t]
        Gather(wg, wblk, wo.template ReinterpretCast<uint32_t>(), 0u, P_);
        Mul(wg, wg, in, n);
        Add(wv, wv, wg, n);
      } else {
        Add(wv, wv, in, n);
      }
      if (!bwd_ && !t_.pick) {  // (pick: x[lane, target] is read after the loop)
        // lanes past the tile gather from the block too: keep them finite (0 * NaN would poison sums)
        if (np < P_) Duplicate(blk, T(0), static_cast<int32_t>(blockElems_));
        SyncVToMte2();
        DataCopyPad(blk, xGm_[BlockGmOffset(l, c0)], BlockParams(np, cc), DataCopyPadExtParams<T>{true, 0, 0, T(0)});
        SyncMte2ToV();
        LocalTensor<T> xt = Lane(kXt).template ReinterpretCast<T>();
        Gather(xt, blk, off, 0u, P_);
        LocalTensor<float> xf = AsFloat(tmp, xt, P_);
        Mul(tmp, xf, in, n);
        Add(val, val, tmp, n);
      } else if (bwd_) {
        // gradient block: zeros, then -g*w at the targets of this block's lanes
        Duplicate(blk, T(0), static_cast<int32_t>(blockElems_));
        // off = dummy + in * (off - dummy)
        LocalTensor<float> of = tmp;
        LocalTensor<int32_t> offi = Lane(kOff).template ReinterpretCast<int32_t>();
        const float dummy = static_cast<float>(blockElems_ * sizeof(T));
        Cast(of, offi, RoundMode::CAST_NONE, P_);
        Adds(of, of, -dummy, n);
        Mul(of, of, in, n);
        Adds(of, of, dummy, n);
        Cast(offi, of, RoundMode::CAST_RINT, P_);
        // gradient values of this block's lanes: -g * (in * w[t])
        LocalTensor<float> wc = Lane(kAccL);
        Mul(wc, t_.has_weight ? Lane(kWg) : in, val, n);
        LocalTensor<T> vt = Lane(kXt).template ReinterpretCast<T>();
        StoreFloat(vt, wc, P_);
        Scatter(blk, vt, off, 0u, np);
        SyncVToMte3();
        const DataCopyExtParams bp = BlockParams(np, cc);
        DataCopyPad(outGm_[BlockGmOffset(l, c0)], blk,
                    DataCopyExtParams{bp.blockCount, bp.blockLen, bp.dstStride, bp.srcStride, 0});
        SyncMte3ToV();
      }
    }
    if (bwd_) return;
    if (t_.pick) PickValues(l, np);
    // loss = -val * w[t]  (val and wv are masked by keep)
    LocalTensor<float> loss = tmp;
    Mul(loss, val, wv, n);
    if (!t_.has_weight) Adds(loss, val, 0.0f, n);
    Muls(loss, loss, -1.0f, n);
    if (t_.reduction == npu_kernels::kNllNone) {
      LocalTensor<T> ot = Lane(kVal).template ReinterpretCast<T>();
      StoreFloat(ot, loss, P_);
      SyncVToMte3();
      DataCopyPad(outGm_[l], ot, DataCopyExtParams{1, static_cast<uint32_t>(np * sizeof(T)), 0, 0, 0});
      SyncMte3ToV();
    } else {
      Add(Lane(kAccL), Lane(kAccL), loss, n);
      Add(Lane(kAccW), Lane(kAccW), wv, n);
    }
  }

  // val[j] = x[l + j, t[j]] for the kept lanes with a target in [0, C) (an out-of-range one has been
  // reported by Targets' assert), else 0.
  __aicore__ inline void PickValues(uint64_t l, uint32_t np) {
    LocalTensor<float> val = Lane(kVal), keep = Lane(kKeep);
    LocalTensor<int32_t> t = Lane(kT).template ReinterpretCast<int32_t>();
    SyncVToS();
    for (uint32_t j = 0; j < np; ++j) {
      const int32_t c = t.GetValue(j);
      float v = 0.0f;
      if (keep.GetValue(j) > 0.0f && c >= 0 && uint64_t(c) < t_.c) v = static_cast<float>(xGm_.GetValue((l + j) * t_.c + uint64_t(c)));
      val.SetValue(j, v);
    }
    SyncSToV();
  }

  NllTiling t_;
  bool bwd_ = false;
  uint32_t P_ = 0, cc_ = 0, ccp_ = 0, pp_ = 0, blockElems_ = 0;
  float g_ = 1.0f;
  TPipe pipe_;
  TBuf<TPosition::VECCALC> blk_, wblk_, traw_, lanes_, small_;
  GlobalTensor<T> xGm_, goGm_, twGm_, outGm_;
  GlobalTensor<int64_t> tGm_;
  GlobalTensor<float> wGm_, partialGm_;
};

template <typename T>
__aicore__ inline void NllReduce(GM_ADDR partial, GM_ADDR out, GM_ADDR total_weight, GM_ADDR tiling) {
  GET_TILING_DATA_WITH_STRUCT(NllTiling, t, tiling);
  TPipe pipe;
  TBuf<TPosition::VECCALC> buf;
  pipe.InitBuffer(buf, 8 * 4 * (t.block_dim + 8) + 256);
  GlobalTensor<float> pg;
  pg.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(partial), 8ull * t.block_dim);
  GlobalTensor<T> og, tg;
  og.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(out), 1);
  tg.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(total_weight), 1);
  LocalTensor<float> p = buf.Get<float>();
  DataCopyPad(p, pg, DataCopyExtParams{1, 32 * t.block_dim, 0, 0, 0}, DataCopyPadExtParams<float>{false, 0, 0, 0.0f});
  SyncMte2ToV();
  FoldRows(p, t.block_dim, 8, 8);  // row 0: (loss sum, weight sum)
  LocalTensor<float> r = buf.Get<float>()[8 * (t.block_dim + 4)];
  LocalTensor<float> w = r[8];
  Duplicate(w, 0.0f, 8);
  SyncVToS();
  const float sl = p.GetValue(0), sw = p.GetValue(1);
  r.SetValue(0, sl);
  w.SetValue(0, sw);
  SyncSToV();
  if (t.reduction == npu_kernels::kNllMean) Div(r, r, w, 1);
  LocalTensor<T> ot = buf.Get<T>()[(8 * (t.block_dim + 6)) * 4 / sizeof(T)];
  StoreFloat(ot, r, 1);
  StoreFloat(ot[32 / sizeof(T)], w, 1);
  SyncVToMte3();
  DataCopyPad(og, ot, DataCopyExtParams{1, sizeof(T), 0, 0, 0});
  DataCopyPad(tg, ot[32 / sizeof(T)], DataCopyExtParams{1, sizeof(T), 0, 0, 0});
}

}  // namespace

#define NPU_NLL_ENTRY(NAME, T)                                                                                  \
  extern "C" __global__ __aicore__ void nll_fwd_kernel_##NAME(GM_ADDR x, GM_ADDR target, GM_ADDR weight,         \
                                                              GM_ADDR out, GM_ADDR partial, GM_ADDR tiling) {    \
    GET_TILING_DATA_WITH_STRUCT(NllTiling, t, tiling);                                                          \
    NllKernel<T> op;                                                                                            \
    op.Init(x, target, weight, nullptr, nullptr, out, partial, t, false);                                       \
    op.Process();                                                                                               \
  }                                                                                                             \
  extern "C" __global__ __aicore__ void nll_reduce_kernel_##NAME(GM_ADDR partial, GM_ADDR out,                   \
                                                                 GM_ADDR total_weight, GM_ADDR tiling) {        \
    NllReduce<T>(partial, out, total_weight, tiling);                                                           \
  }                                                                                                             \
  extern "C" __global__ __aicore__ void nll_bwd_kernel_##NAME(GM_ADDR go, GM_ADDR target, GM_ADDR weight,        \
                                                              GM_ADDR total_weight, GM_ADDR gx, GM_ADDR tiling) { \
    GET_TILING_DATA_WITH_STRUCT(NllTiling, t, tiling);                                                          \
    NllKernel<T> op;                                                                                            \
    op.Init(nullptr, target, weight, go, total_weight, gx, nullptr, t, true);                                   \
    op.Process();                                                                                               \
  }
NPU_NLL_ENTRY(float, float)
NPU_NLL_ENTRY(half, half)
NPU_NLL_ENTRY(bf16, bfloat16_t)
#undef NPU_NLL_ENTRY
