// Batch norm in Ascend C: three vector kernels.
//
//   reduce   per work unit, per-channel partial sums in float: forward sum(x-K) and sum((x-K)^2) with K a
//            value of the channel (a shift that keeps the one-pass variance accurate); backward sum(go) and
//            sum(go*(x-mean)). Units: NCHW (channel, n-split, hw-split) with strided DataCopyPad of whole
//            planes; NHWC (channels_last) row ranges with per-channel vectors replicated by Gather.
//   finalize one core: sums the partials in a fixed order (deterministic), computes mean/invstd, the
//            running-stat update (unbiased variance), and the per-channel coefficients of apply.
//   apply    y = x*scale + shift (forward), grad_in = A*go + B*x + C (backward), same units as reduce.
// All arithmetic runs in float; 16-bit inputs are widened in UB and rounded once at the store.
#include "norm.h"

#include "kernel_operator.h"
#include "norm_util.h"

using namespace AscendC;

namespace npu_kernels {

uint64_t batch_norm_nhwc_max_channels(uint32_t elem_bytes, const SocInfo& soc) {
  BatchNormTiling t = batch_norm_tiling(kBnNhwc, kBnBwdTrain, 1, 1, 1, elem_bytes, soc);
  return t.tile;
}

BatchNormTiling batch_norm_tiling(uint32_t layout, uint32_t mode, uint64_t n, uint64_t c, uint64_t hw,
                                  uint32_t elem_bytes, const SocInfo& soc) {
  BatchNormTiling t{};
  t.layout = layout;
  t.mode = mode;
  t.n = n;
  t.c = c;
  t.hw = hw;
  t.count = n * hw;
  const uint64_t cores = static_cast<uint64_t>(soc.vector_cores > 0 ? soc.vector_cores : 1);
  const uint64_t min_work = 16384;  // elements a unit should have before another core pays off
  // UB per tile element: x and go input queues and the output queue (double buffered, dtype), two
  // float work and two float accumulators; NHWC adds three replicated vectors and an offset table.
  const uint32_t per = 6 * elem_bytes + 16 + (layout == kBnNhwc ? 16 : 0);
  uint32_t tile = AlignDown<uint32_t>((soc.ub_bytes - 16 * 1024) / per, 64);
  if (tile > 16384) tile = 16384;
  // NCHW tiles follow the host's L1d; an NHWC tile is a row of channels (its channel limit), kept whole.
  const uint64_t host = HostCacheTile(8ull * per, 64);
  if (layout == kBnNchw && tile > host) tile = static_cast<uint32_t>(host);
  if (tile < 64) tile = 64;
  t.tile = tile;
  if (layout == kBnNchw) {
    const uint64_t hw_align = kBlockBytes / elem_bytes;
    uint64_t sn = 1, sh = 1;
    if (c < cores) {
      uint64_t s = CeilDivU<uint64_t>(cores, c);
      const uint64_t max_s = CeilDivU<uint64_t>(t.count, min_work);
      if (s > max_s) s = max_s;
      if (s < 1) s = 1;
      sn = s < n ? s : n;
      if (sn < 1) sn = 1;
      sh = CeilDivU<uint64_t>(s, sn);
      const uint64_t hw_blocks = CeilDivU<uint64_t>(hw, hw_align);
      if (sh > hw_blocks) sh = hw_blocks;
      if (sh < 1) sh = 1;
    }
    t.n_per = CeilDivU<uint64_t>(n, sn);
    t.sn = static_cast<uint32_t>(CeilDivU<uint64_t>(n, t.n_per));
    t.hw_per = AlignUp<uint64_t>(CeilDivU<uint64_t>(hw, sh), hw_align);
    t.sh = static_cast<uint32_t>(CeilDivU<uint64_t>(hw, t.hw_per));
    t.units = c * t.sn * t.sh;
    t.partials = t.sn * t.sh;
  } else {
    const uint64_t rows = n * hw;
    uint32_t r = 1;
    while (static_cast<uint64_t>(r) * 2 * c <= tile && r < 4096) r *= 2;
    t.rows_tile = r;
    uint64_t u = CeilDivU<uint64_t>(rows * c, min_work);
    if (u > cores) u = cores;
    if (u < 1) u = 1;
    t.rows_per = CeilDivU<uint64_t>(rows, u);
    t.units = CeilDivU<uint64_t>(rows, t.rows_per);
    // Fold the R tile rows of the accumulators while the halves stay 32-byte aligned.
    uint32_t ro = r;
    while (ro > 1 && ((ro / 2) * c) % 8 == 0) ro /= 2;
    t.rows_out = ro;
    t.partials = static_cast<uint32_t>(t.units * ro);
  }
  t.units_per_core = CeilDivU<uint64_t>(t.units, cores);
  t.block_dim = static_cast<uint32_t>(CeilDivU<uint64_t>(t.units, t.units_per_core));
  if (layout == kBnNchw) {
    // Apply over planes that fit a tile: a unit takes apply_cb whole planes of one image in one strided
    // DataCopyPad and their coefficients in one copy each (the reduce units, one plane each, spent
    // their time on set-up - coefficient loads, syncs - for a few dozen elements at ResNet-18's 7x7).
    // Units are channel-block major, so the images of one block reuse its coefficients.
    const uint64_t hwp = AlignUp<uint64_t>(hw, kBlockBytes / elem_bytes);
    // Backward replicates three coefficient vectors (A, B, C) over a unit's planes in the two-tile
    // share the forward's two use: its units take at most 2/3 of a tile.
    const bool bwd = mode == kBnBwdTrain || mode == kBnBwdEval;
    const uint64_t cb = hwp > 0 ? (bwd ? tile / 3 * 2 : tile) / hwp : 0;
    if (cb >= 1) {
      t.apply_cb = static_cast<uint32_t>(cb < c ? cb : c);
      if (t.apply_cb > 512) t.apply_cb = 512;  // the coefficient scratch (6 KB of the UB slack)
      t.apply_units = n * CeilDivU<uint64_t>(c, t.apply_cb);
      // Units of at least ~min_work elements each before another core is used.
      uint64_t cores_used = CeilDivU<uint64_t>(n * c * hw, min_work);
      if (cores_used > cores) cores_used = cores;
      if (cores_used < 1) cores_used = 1;
      t.apply_units_per_core = CeilDivU<uint64_t>(t.apply_units, cores_used);
      t.apply_block_dim = static_cast<uint32_t>(CeilDivU<uint64_t>(t.apply_units, t.apply_units_per_core));
    }
  }
  // Finalize: two partial blocks [partials][chunk] plus about 16 float vectors of chunk.
  uint64_t fc = (soc.ub_bytes - 16 * 1024) / (4ull * (2ull * t.partials + 16));
  fc = AlignDown<uint64_t>(fc, 8);
  if (fc > 4096) fc = 4096;
  if (fc < 8) fc = 8;
  t.fin_chunk = static_cast<uint32_t>(fc);
  return t;
}

}  // namespace npu_kernels

namespace {

using npu_kernels::BatchNormTiling;
using namespace nn_kernels;

constexpr int32_t kBufferNum = 2;


// One rectangle of an NCHW channel: n in [n0, n1), hw in [h0, h1).
struct Rect {
  uint64_t c, n0, n1, h0, h1;
};

__aicore__ inline Rect UnitRect(const BatchNormTiling& t, uint64_t u) {
  const uint64_t per_c = static_cast<uint64_t>(t.sn) * t.sh;
  Rect r;
  r.c = u / per_c;
  const uint64_t k = u % per_c;
  const uint64_t sn = k / t.sh, sh = k % t.sh;
  r.n0 = sn * t.n_per;
  r.n1 = r.n0 + t.n_per < t.n ? r.n0 + t.n_per : t.n;
  r.h0 = sh * t.hw_per;
  r.h1 = r.h0 + t.hw_per < t.hw ? r.h0 + t.hw_per : t.hw;
  return r;
}

// The tiles of a rectangle: nb planes of hc elements (each UB row padded to a 32-byte block).
struct RectTiles {
  uint64_t hc;   // hw elements per tile row
  uint64_t nb;   // planes per tile
};

template <typename T>
__aicore__ inline RectTiles TilesOf(const Rect& r, uint32_t tile) {
  RectTiles s;
  const uint64_t hh = r.h1 - r.h0;
  s.hc = hh < tile ? hh : tile;
  const uint64_t hcp = npu_kernels::AlignUp<uint64_t>(s.hc, BlockElems<T>());
  uint64_t nb = tile / hcp;
  const uint64_t nn = r.n1 - r.n0;
  if (nb > nn) nb = nn;
  if (nb > 4095) nb = 4095;
  if (nb < 1) nb = 1;
  s.nb = nb;
  return s;
}

// ------------------------------------------------------------------ reduce
template <typename T>
class BnReduceKernel {
 public:
  __aicore__ inline void Init(GM_ADDR x, GM_ADDR go, GM_ADDR shift, GM_ADDR partial, GM_ADDR kshift,
                              const BatchNormTiling& t) {
    t_ = t;
    bwd_ = t.mode == npu_kernels::kBnBwdTrain || t.mode == npu_kernels::kBnBwdEval;
    const uint64_t total = t.n * t.c * t.hw;
    xGm_.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(x), total);
    if (bwd_) goGm_.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(go), total);
    if (shift) shiftGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(shift), t.c);
    partialGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(partial), 2ull * t.partials * t.c);
    if (kshift) kshiftGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(kshift), t.c);
    pipe_.InitBuffer(xQ_, kBufferNum, t.tile * sizeof(T));
    if (bwd_) pipe_.InitBuffer(goQ_, kBufferNum, t.tile * sizeof(T));
    pipe_.InitBuffer(work_, 2 * t.tile * sizeof(float));
    pipe_.InitBuffer(acc_, 2 * t.tile * sizeof(float));
    pipe_.InitBuffer(small_, 512);
    if (t.layout == npu_kernels::kBnNhwc) {
      const uint32_t cp = npu_kernels::AlignUp<uint32_t>(static_cast<uint32_t>(t.c), 16);
      pipe_.InitBuffer(rep_, t.tile * sizeof(float));
      pipe_.InitBuffer(offs_, t.tile * sizeof(uint32_t));
      pipe_.InitBuffer(vec_, cp * sizeof(float) + (sizeof(T) == 2 ? cp * sizeof(T) : 0));
    }
  }

  __aicore__ inline void Process() {
    const uint64_t u0 = t_.units_per_core * GetBlockIdx();
    uint64_t u1 = u0 + t_.units_per_core;
    if (u1 > t_.units) u1 = t_.units;
    if (t_.layout == npu_kernels::kBnNchw) {
      for (uint64_t u = u0; u < u1; ++u) NchwUnit(u);
    } else {
      if (u0 >= u1) return;
      NhwcPrepare(u0 == 0);
      for (uint64_t u = u0; u < u1; ++u) NhwcUnit(u);
    }
  }

 private:
  __aicore__ inline LocalTensor<float> Acc(int k) { return acc_.Get<float>()[k * t_.tile]; }
  __aicore__ inline LocalTensor<float> Work(int k) { return work_.Get<float>()[k * t_.tile]; }

  // Loads a tile (nb planes x hc elements) of `gm` at plane (n, c), hw offset h.
  __aicore__ inline void LoadRect(TQue<TPosition::VECIN, 1>& q, const GlobalTensor<T>& gm, uint64_t n, uint64_t c,
                                  uint64_t h, uint64_t nb, uint64_t hc, T pad) {
    LocalTensor<T> in = q.template AllocTensor<T>();
    const uint64_t plane = t_.c * t_.hw;
    DataCopyExtParams p{static_cast<uint16_t>(nb), static_cast<uint32_t>(hc * sizeof(T)),
                        static_cast<uint32_t>((plane - hc) * sizeof(T)), 0, 0};
    DataCopyPad(in, gm[(n * t_.c + c) * t_.hw + h], p, DataCopyPadExtParams<T>{true, 0, 0, pad});
    q.EnQue(in);
  }

  __aicore__ inline void WritePartial(uint64_t p, uint64_t c, float s1, float s2) {
    LocalTensor<float> sm = small_.Get<float>();
    sm.SetValue(8, s1);
    sm.SetValue(16, s2);
    SyncSToMte3();
    const uint64_t block = static_cast<uint64_t>(t_.partials) * t_.c;
    DataCopyPad(partialGm_[p * t_.c + c], sm[8], DataCopyExtParams{1, 4, 0, 0, 0});
    DataCopyPad(partialGm_[block + p * t_.c + c], sm[16], DataCopyExtParams{1, 4, 0, 0, 0});
    SyncMte3ToV();
  }

  __aicore__ inline void NchwUnit(uint64_t u) {
    const Rect r = UnitRect(t_, u);
    const RectTiles s = TilesOf<T>(r, t_.tile);
    const uint32_t epb = BlockElems<T>();
    LocalTensor<float> acc1 = Acc(0), acc2 = Acc(1);
    // Zero only what this unit's tiles reach (its first tile is its largest): at ResNet's 7x7 maps a
    // unit is 8 planes of 49, and zeroing whole 16K-element accumulators cost more than the sums.
    const int32_t reach = static_cast<int32_t>(
        npu_kernels::AlignUp<uint64_t>(s.nb * npu_kernels::AlignUp<uint64_t>(s.hc, epb), 64));
    Duplicate(acc1, 0.0f, reach);
    Duplicate(acc2, 0.0f, reach);
    float shift = 0.0f;
    T pad = T(0);
    LocalTensor<float> sm = small_.Get<float>();
    if (!bwd_) {
      // K = x[0, c, 0]: every split of the channel uses the same shift.
      LocalTensor<T> kb = small_.Get<T>()[256 / sizeof(T)];
      DataCopyPad(kb, xGm_[r.c * t_.hw], DataCopyExtParams{1, sizeof(T), 0, 0, 0},
                  DataCopyPadExtParams<T>{false, 0, 0, T(0)});
      SyncMte2ToS();
      pad = kb.GetValue(0);
      shift = static_cast<float>(pad);
      if (r.n0 == 0 && r.h0 == 0 && kshiftGm_.GetPhyAddr() != nullptr) {
        sm.SetValue(24, shift);
        SyncSToMte3();
        DataCopyPad(kshiftGm_[r.c], sm[24], DataCopyExtParams{1, 4, 0, 0, 0});
      }
    } else {
      DataCopyPad(sm[32], shiftGm_[r.c], DataCopyExtParams{1, 4, 0, 0, 0},
                  DataCopyPadExtParams<float>{false, 0, 0, 0.0f});
      SyncMte2ToS();
      shift = sm.GetValue(32);
    }
    uint32_t used = 0;
    for (uint64_t n = r.n0; n < r.n1; n += s.nb) {
      const uint64_t nb = r.n1 - n < s.nb ? r.n1 - n : s.nb;
      for (uint64_t h = r.h0; h < r.h1; h += s.hc) {
        const uint64_t hc = r.h1 - h < s.hc ? r.h1 - h : s.hc;
        const uint32_t cnt = static_cast<uint32_t>(nb * npu_kernels::AlignUp<uint64_t>(hc, epb));
        if (cnt > used) used = cnt;
        LoadRect(xQ_, xGm_, n, r.c, h, nb, hc, pad);
        if (bwd_) LoadRect(goQ_, goGm_, n, r.c, h, nb, hc, T(0));
        Accumulate(cnt, shift);
      }
    }
    const uint32_t fold = npu_kernels::AlignUp<uint32_t>(used, 64);
    const float s1 = FoldSum(acc1, sm, fold);
    const float s2 = FoldSum(acc2, sm, fold);
    SyncVToS();
    const uint64_t p = u % t_.partials;
    WritePartial(p, r.c, s1, s2);
  }

  // acc1 += d, acc2 += d*d with d = x - shift (forward); acc1 += go, acc2 += go*(x - mean) (backward).
  __aicore__ inline void Accumulate(uint32_t cnt, float shift) {
    LocalTensor<T> xin = xQ_.template DeQue<T>();
    LocalTensor<float> acc1 = Acc(0), acc2 = Acc(1);
    LocalTensor<float> d = AsFloat(Work(0), xin, cnt);
    const int32_t n = static_cast<int32_t>(cnt);
    if (!bwd_) {
      if (std::is_same_v<T, float>) {
        Adds(Work(0), d, -shift, n);
        d = Work(0);
      } else {
        Adds(d, d, -shift, n);
      }
      Add(acc1, acc1, d, n);
      Mul(d, d, d, n);
      Add(acc2, acc2, d, n);
    } else {
      LocalTensor<T> gin = goQ_.template DeQue<T>();
      LocalTensor<float> g = AsFloat(Work(1), gin, cnt);
      LocalTensor<float> w = Work(0);
      Adds(w, d, -shift, n);
      Mul(w, w, g, n);
      Add(acc2, acc2, w, n);
      Add(acc1, acc1, g, n);
      goQ_.FreeTensor(gin);
    }
    xQ_.FreeTensor(xin);
  }

  // NHWC: the per-channel shift replicated over the rows of a tile.
  __aicore__ inline void NhwcPrepare(bool first_core) {
    const uint32_t c = static_cast<uint32_t>(t_.c);
    const uint32_t n = t_.rows_tile * c;
    const uint32_t cp = npu_kernels::AlignUp<uint32_t>(c, 16);
    LocalTensor<float> kv = vec_.Get<float>(cp);
    if (!bwd_) {
      if constexpr (std::is_same_v<T, float>) {
        DataCopyPad(kv, xGm_, DataCopyExtParams{1, static_cast<uint32_t>(c * 4), 0, 0, 0},
                    DataCopyPadExtParams<float>{false, 0, 0, 0.0f});
        SyncMte2ToV();
      } else {
        LocalTensor<T> kt = vec_.Get<T>()[cp * 2];
        DataCopyPad(kt, xGm_, DataCopyExtParams{1, static_cast<uint32_t>(c * sizeof(T)), 0, 0, 0},
                    DataCopyPadExtParams<T>{false, 0, 0, T(0)});
        SyncMte2ToV();
        Cast(kv, kt, RoundMode::CAST_NONE, c);
      }
      if (first_core && kshiftGm_.GetPhyAddr() != nullptr) {
        SyncVToMte3();
        DataCopyPad(kshiftGm_, kv, DataCopyExtParams{1, static_cast<uint32_t>(c * 4), 0, 0, 0});
        SyncMte3ToV();
      }
    } else {
      DataCopyPad(kv, shiftGm_, DataCopyExtParams{1, static_cast<uint32_t>(c * 4), 0, 0, 0},
                  DataCopyPadExtParams<float>{false, 0, 0, 0.0f});
      SyncMte2ToV();
    }
    LocalTensor<uint32_t> offs = offs_.Get<uint32_t>();
    PeriodicOffsets(offs, Work(0), n, c, 4);
    Gather(rep_.Get<float>(), kv, offs, 0u, n);
  }

  __aicore__ inline void NhwcUnit(uint64_t u) {
    const uint64_t rows = t_.n * t_.hw;
    const uint64_t r0 = u * t_.rows_per;
    const uint64_t r1 = r0 + t_.rows_per < rows ? r0 + t_.rows_per : rows;
    const uint64_t c = t_.c;
    LocalTensor<float> acc1 = Acc(0), acc2 = Acc(1);
    Duplicate(acc1, 0.0f, static_cast<int32_t>(2 * t_.tile));
    LocalTensor<float> rep = rep_.Get<float>();
    for (uint64_t r = r0; r < r1; r += t_.rows_tile) {
      const uint64_t nr = r1 - r < t_.rows_tile ? r1 - r : t_.rows_tile;
      const uint32_t cnt = static_cast<uint32_t>(nr * c);
      const int32_t n = static_cast<int32_t>(cnt);
      LocalTensor<T> xin = xQ_.template AllocTensor<T>();
      DataCopyPad(xin, xGm_[r * c], DataCopyExtParams{1, static_cast<uint32_t>(cnt * sizeof(T)), 0, 0, 0},
                  DataCopyPadExtParams<T>{false, 0, 0, T(0)});
      xQ_.EnQue(xin);
      if (bwd_) {
        LocalTensor<T> gin = goQ_.template AllocTensor<T>();
        DataCopyPad(gin, goGm_[r * c], DataCopyExtParams{1, static_cast<uint32_t>(cnt * sizeof(T)), 0, 0, 0},
                    DataCopyPadExtParams<T>{false, 0, 0, T(0)});
        goQ_.EnQue(gin);
      }
      xin = xQ_.template DeQue<T>();
      LocalTensor<float> xf = AsFloat(Work(0), xin, cnt);
      LocalTensor<float> w = Work(0);
      Sub(w, xf, rep, n);
      if (!bwd_) {
        Add(acc1, acc1, w, n);
        Mul(w, w, w, n);
        Add(acc2, acc2, w, n);
      } else {
        LocalTensor<T> gin = goQ_.template DeQue<T>();
        LocalTensor<float> g = AsFloat(Work(1), gin, cnt);
        Mul(w, w, g, n);
        Add(acc2, acc2, w, n);
        Add(acc1, acc1, g, n);
        goQ_.FreeTensor(gin);
      }
      xQ_.FreeTensor(xin);
    }
    // Fold the tile rows down to rows_out (fixed tree).
    uint32_t rr = t_.rows_tile;
    while (rr > t_.rows_out) {
      const uint32_t h = rr / 2;
      Add(acc1, acc1, acc1[h * c], static_cast<int32_t>(h * c));
      Add(acc2, acc2, acc2[h * c], static_cast<int32_t>(h * c));
      rr = h;
    }
    SyncVToMte3();
    const uint64_t block = static_cast<uint64_t>(t_.partials) * c;
    const uint64_t at = u * t_.rows_out * c;
    const uint32_t bytes = static_cast<uint32_t>(t_.rows_out * c * 4);
    DataCopyPad(partialGm_[at], acc1, DataCopyExtParams{1, bytes, 0, 0, 0});
    DataCopyPad(partialGm_[block + at], acc2, DataCopyExtParams{1, bytes, 0, 0, 0});
    SyncMte3ToV();
  }

  BatchNormTiling t_;
  bool bwd_ = false;
  TPipe pipe_;
  TQue<TPosition::VECIN, 1> xQ_, goQ_;
  TBuf<TPosition::VECCALC> work_, acc_, small_, rep_, offs_, vec_;
  GlobalTensor<T> xGm_, goGm_;
  GlobalTensor<float> shiftGm_, partialGm_, kshiftGm_;
};

// ------------------------------------------------------------------ finalize (one core)
class BnFinalizeKernel {
 public:
  __aicore__ inline void Init(GM_ADDR partial, GM_ADDR kshift, GM_ADDR weight, GM_ADDR bias, GM_ADDR mean_in,
                              GM_ADDR var_in, GM_ADDR out, const BatchNormTiling& t) {
    t_ = t;
    const uint64_t c = t.c;
    if (partial) partialGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(partial), 2ull * t.partials * c);
    if (kshift) kshiftGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(kshift), c);
    if (weight) weightGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(weight), c);
    if (bias) biasGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(bias), c);
    if (mean_in) meanGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(mean_in), c);
    if (var_in) varGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(var_in), c);
    outGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(out), npu_kernels::kBnSlots * c);
    const uint32_t fc = t.fin_chunk;
    if (t.mode != npu_kernels::kBnFwdEval) pipe_.InitBuffer(part_, 2 * t.partials * fc * sizeof(float));
    pipe_.InitBuffer(vecs_, 14 * fc * sizeof(float));
  }

  __aicore__ inline void Process() {
    for (uint64_t c0 = 0; c0 < t_.c; c0 += t_.fin_chunk) {
      const uint32_t cc = static_cast<uint32_t>(t_.c - c0 < t_.fin_chunk ? t_.c - c0 : t_.fin_chunk);
      Chunk(c0, cc);
    }
  }

 private:
  __aicore__ inline LocalTensor<float> V(int k) { return vecs_.Get<float>()[k * t_.fin_chunk]; }

  __aicore__ inline void Load(const LocalTensor<float>& dst, const GlobalTensor<float>& src, uint64_t c0, uint32_t cc) {
    DataCopyPad(dst, src[c0], DataCopyExtParams{1, cc * 4, 0, 0, 0}, DataCopyPadExtParams<float>{false, 0, 0, 0.0f});
  }
  __aicore__ inline void Store(uint32_t slot, const LocalTensor<float>& src, uint64_t c0, uint32_t cc) {
    DataCopyPad(outGm_[slot * t_.c + c0], src, DataCopyExtParams{1, cc * 4, 0, 0, 0});
  }

  __aicore__ inline void Chunk(uint64_t c0, uint32_t cc) {
    using namespace npu_kernels;
    const int32_t n = static_cast<int32_t>(cc);
    const uint32_t fc = t_.fin_chunk;
    const float cnt = static_cast<float>(t_.count);
    LocalTensor<float> s1 = V(0), s2 = V(1), w = V(2), b = V(3), mean = V(4), var = V(5), invstd = V(6),
                       ta = V(7), tb = V(8), tc = V(9), ones = V(10), tmp = V(11);
    if (t_.mode != kBnFwdEval) {
      // Partial rows [partials][cc] for both sums, folded in a fixed order.
      const uint32_t pitch = AlignUp<uint32_t>(cc, 8);
      LocalTensor<float> p1 = part_.Get<float>(), p2 = part_.Get<float>()[t_.partials * fc];
      const uint64_t block = static_cast<uint64_t>(t_.partials) * t_.c;
      DataCopyExtParams pp{static_cast<uint16_t>(t_.partials), cc * 4, static_cast<uint32_t>((t_.c - cc) * 4), 0, 0};
      DataCopyPad(p1, partialGm_[c0], pp, DataCopyPadExtParams<float>{true, 0, 0, 0.0f});
      DataCopyPad(p2, partialGm_[block + c0], pp, DataCopyPadExtParams<float>{true, 0, 0, 0.0f});
      SyncMte2ToV();
      FoldRows(p1, t_.partials, pitch, pitch);
      FoldRows(p2, t_.partials, pitch, pitch);
      Adds(s1, p1, 0.0f, n);
      Adds(s2, p2, 0.0f, n);
    }
    Duplicate(ones, 1.0f, n);
    if (t_.has_weight) Load(w, weightGm_, c0, cc);
    else Duplicate(w, 1.0f, n);
    if (t_.has_bias) Load(b, biasGm_, c0, cc);
    else Duplicate(b, 0.0f, n);
    SyncMte2ToV();

    if (t_.mode == kBnFwdTrain) {
      Load(tmp, kshiftGm_, c0, cc);
      SyncMte2ToV();
      Muls(ta, s1, 1.0f / cnt, n);        // E[x - K]
      Add(mean, ta, tmp, n);              // mean
      Muls(var, s2, 1.0f / cnt, n);       // E[(x - K)^2]
      Mul(tb, ta, ta, n);
      Sub(var, var, tb, n);
      Maxs(var, var, 0.0f, n);            // biased variance
      Adds(tb, var, t_.eps, n);
      Sqrt(tb, tb, n);
      Div(invstd, ones, tb, n);
      Store(kBnSaveMean, mean, c0, cc);
      Store(kBnSaveInvstd, invstd, c0, cc);
      if (t_.has_running) {
        Load(ta, meanGm_, c0, cc);
        Load(tb, varGm_, c0, cc);
        SyncMte2ToV();
        const float m = t_.momentum;
        Muls(ta, ta, 1.0f - m, n);
        Axpy(ta, mean, m, n);
        const float unbias = t_.count > 1 ? cnt / (cnt - 1.0f) : __builtin_inff();
        Muls(tb, tb, 1.0f - m, n);
        Muls(tc, var, m * unbias, n);
        Add(tb, tb, tc, n);
        SyncVToMte3();
        Store(kBnRunMean, ta, c0, cc);
        Store(kBnRunVar, tb, c0, cc);
        SyncMte3ToV();
      }
      Mul(ta, w, invstd, n);               // scale
      Mul(tb, mean, ta, n);
      Sub(tb, b, tb, n);                   // shift
      SyncVToMte3();
      Store(kBnCoefA, ta, c0, cc);
      Store(kBnCoefB, tb, c0, cc);
    } else if (t_.mode == kBnFwdEval) {
      Load(mean, meanGm_, c0, cc);
      Load(var, varGm_, c0, cc);
      SyncMte2ToV();
      Adds(tb, var, t_.eps, n);
      Sqrt(tb, tb, n);
      Div(invstd, ones, tb, n);
      Mul(ta, w, invstd, n);
      Mul(tb, mean, ta, n);
      Sub(tb, b, tb, n);
      SyncVToMte3();
      Store(kBnCoefA, ta, c0, cc);
      Store(kBnCoefB, tb, c0, cc);
    } else {
      Load(mean, meanGm_, c0, cc);
      Load(var, varGm_, c0, cc);
      SyncMte2ToV();
      if (t_.mode == kBnBwdTrain) {
        Adds(invstd, var, 0.0f, n);        // var_in holds save_invstd
      } else {
        Adds(tb, var, t_.eps, n);
        Sqrt(tb, tb, n);
        Div(invstd, ones, tb, n);
      }
      Mul(tc, s2, invstd, n);              // grad_weight = sum(go * xhat)
      SyncVToMte3();
      Store(kBnSaveMean, tc, c0, cc);
      Store(kBnSaveInvstd, s1, c0, cc);    // grad_bias = sum(go)
      SyncMte3ToV();
      Mul(ta, w, invstd, n);               // A
      if (t_.mode == kBnBwdTrain) {
        Mul(tb, invstd, invstd, n);
        Mul(tb, tb, s2, n);
        Muls(tb, tb, 1.0f / cnt, n);       // k = invstd^2 * sum(go*(x-mean)) / count
        Mul(tc, tb, mean, n);
        Muls(tmp, s1, 1.0f / cnt, n);
        Sub(tc, tc, tmp, n);
        Mul(tc, tc, ta, n);                // C = A * (k*mean - mean(go))
        Mul(tb, tb, ta, n);
        Muls(tb, tb, -1.0f, n);            // B = -A*k
      } else {
        Duplicate(tb, 0.0f, n);
        Duplicate(tc, 0.0f, n);
      }
      SyncVToMte3();
      Store(kBnCoefA, ta, c0, cc);
      Store(kBnCoefB, tb, c0, cc);
      Store(kBnCoefC, tc, c0, cc);
    }
    SyncMte3ToV();
  }

  BatchNormTiling t_;
  TPipe pipe_;
  TBuf<TPosition::VECCALC> part_, vecs_;
  GlobalTensor<float> partialGm_, kshiftGm_, weightGm_, biasGm_, meanGm_, varGm_, outGm_;
};

// ------------------------------------------------------------------ apply
template <typename T>
class BnApplyKernel {
 public:
  __aicore__ inline void Init(GM_ADDR x, GM_ADDR go, GM_ADDR coef, GM_ADDR y, const BatchNormTiling& t) {
    t_ = t;
    bwd_ = t.mode == npu_kernels::kBnBwdTrain || t.mode == npu_kernels::kBnBwdEval;
    const uint64_t total = t.n * t.c * t.hw;
    xGm_.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(x), total);
    if (bwd_) goGm_.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(go), total);
    coefGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(coef), npu_kernels::kBnSlots * t.c);
    yGm_.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(y), total);
    pipe_.InitBuffer(xQ_, kBufferNum, t.tile * sizeof(T));
    if (bwd_) pipe_.InitBuffer(goQ_, kBufferNum, t.tile * sizeof(T));
    pipe_.InitBuffer(yQ_, kBufferNum, t.tile * sizeof(T));
    pipe_.InitBuffer(work_, 2 * t.tile * sizeof(float));
    pipe_.InitBuffer(small_, 256);
    if (t.apply_cb > 0) pipe_.InitBuffer(coefs_, 3 * npu_kernels::AlignUp<uint32_t>(t.apply_cb, 8) * sizeof(float));
    // Forward over blocks of several small planes: the coefficients replicated over a tile (the
    // budget's accumulator share, unused by the apply), so an image takes two whole-tile
    // instructions instead of two per plane.
    if (t.apply_cb > 1 && t.layout == npu_kernels::kBnNchw) pipe_.InitBuffer(rep_, 2 * t.tile * sizeof(float));
    if (t.layout == npu_kernels::kBnNhwc) {
      const uint32_t cp = npu_kernels::AlignUp<uint32_t>(static_cast<uint32_t>(t.c), 16);
      pipe_.InitBuffer(rep_, 3 * t.tile * sizeof(float));
      pipe_.InitBuffer(offs_, t.tile * sizeof(uint32_t));
      pipe_.InitBuffer(vec_, 3 * cp * sizeof(float));
    }
  }

  __aicore__ inline void Process() {
    if (t_.apply_cb > 0) {
      const uint64_t u0 = t_.apply_units_per_core * GetBlockIdx();
      uint64_t u1 = u0 + t_.apply_units_per_core;
      if (u1 > t_.apply_units) u1 = t_.apply_units;
      if (u0 >= u1) return;
      const uint32_t hwp = npu_kernels::AlignUp<uint32_t>(static_cast<uint32_t>(t_.hw), BlockElems<T>());
      u0_ = u0;
      u1_ = u1;
      for (uint64_t u = u0; u < u1; ++u) PlanesUnit(u, hwp);
      return;
    }
    const uint64_t u0 = t_.units_per_core * GetBlockIdx();
    uint64_t u1 = u0 + t_.units_per_core;
    if (u1 > t_.units) u1 = t_.units;
    if (u0 >= u1) return;
    if (t_.layout == npu_kernels::kBnNchw) {
      for (uint64_t u = u0; u < u1; ++u) NchwUnit(u);
    } else {
      NhwcPrepare();
      for (uint64_t u = u0; u < u1; ++u) NhwcUnit(u);
    }
  }

 private:
  __aicore__ inline LocalTensor<float> Work(int k) { return work_.Get<float>()[k * t_.tile]; }

  __aicore__ inline void NchwUnit(uint64_t u) {
    const Rect r = UnitRect(t_, u);
    const RectTiles s = TilesOf<T>(r, t_.tile);
    const uint32_t epb = BlockElems<T>();
    LocalTensor<float> sm = small_.Get<float>();
    for (uint32_t k = 0; k < 3; ++k) {
      DataCopyPad(sm[8 * k], coefGm_[(npu_kernels::kBnCoefA + k) * t_.c + r.c], DataCopyExtParams{1, 4, 0, 0, 0},
                  DataCopyPadExtParams<float>{false, 0, 0, 0.0f});
    }
    SyncMte2ToS();
    const float a = sm.GetValue(0), b = sm.GetValue(8), cc = bwd_ ? sm.GetValue(16) : 0.0f;
    const uint64_t plane = t_.c * t_.hw;
    for (uint64_t n = r.n0; n < r.n1; n += s.nb) {
      const uint64_t nb = r.n1 - n < s.nb ? r.n1 - n : s.nb;
      for (uint64_t h = r.h0; h < r.h1; h += s.hc) {
        const uint64_t hc = r.h1 - h < s.hc ? r.h1 - h : s.hc;
        const uint32_t cnt = static_cast<uint32_t>(nb * npu_kernels::AlignUp<uint64_t>(hc, epb));
        const uint64_t at = (n * t_.c + r.c) * t_.hw + h;
        DataCopyExtParams gp{static_cast<uint16_t>(nb), static_cast<uint32_t>(hc * sizeof(T)),
                             static_cast<uint32_t>((plane - hc) * sizeof(T)), 0, 0};
        LocalTensor<T> xin = xQ_.template AllocTensor<T>();
        DataCopyPad(xin, xGm_[at], gp, DataCopyPadExtParams<T>{true, 0, 0, T(0)});
        xQ_.EnQue(xin);
        if (bwd_) {
          LocalTensor<T> gin = goQ_.template AllocTensor<T>();
          DataCopyPad(gin, goGm_[at], gp, DataCopyPadExtParams<T>{true, 0, 0, T(0)});
          goQ_.EnQue(gin);
        }
        ComputeScalar(cnt, a, b, cc);
        LocalTensor<T> yout = yQ_.template DeQue<T>();
        DataCopyExtParams op{static_cast<uint16_t>(nb), static_cast<uint32_t>(hc * sizeof(T)), 0,
                             static_cast<uint32_t>((plane - hc) * sizeof(T)), 0};
        DataCopyPad(yGm_[at], yout, op);
        yQ_.FreeTensor(yout);
      }
    }
  }

  // NCHW, apply_cb planes of image n per unit: one strided copy brings the planes (each padded to a
  // 32-byte block in UB), then two or three scalar-form instructions per plane with its coefficients.
  __aicore__ inline void PlanesUnit(uint64_t u, uint32_t hwp) {
    const uint64_t blk = u / t_.n, n = u % t_.n;
    const uint64_t c0 = blk * t_.apply_cb;
    const uint32_t cc = static_cast<uint32_t>(t_.c - c0 < t_.apply_cb ? t_.c - c0 : t_.apply_cb);
    const uint32_t cp = npu_kernels::AlignUp<uint32_t>(t_.apply_cb, 8);
    LocalTensor<float> co = coefs_.Get<float>();
    if (static_cast<int64_t>(blk) != coefBlock_) {
      if (coefBlock_ >= 0) SyncSToMte2();  // the scalar reads of the previous block are done
      for (uint32_t k = 0; k < (bwd_ ? 3u : 2u); ++k) {
        DataCopyPad(co[k * cp], coefGm_[(npu_kernels::kBnCoefA + k) * t_.c + c0], DataCopyExtParams{1, cc * 4, 0, 0, 0},
                    DataCopyPadExtParams<float>{false, 0, 0, 0.0f});
      }
      SyncMte2ToS();
      coefBlock_ = static_cast<int64_t>(blk);
      // Images of this block on this core: with two or more, replicate the coefficients once.
      const uint64_t first = blk * t_.n > u0_ ? blk * t_.n : u0_;
      const uint64_t last = (blk + 1) * t_.n < u1_ ? (blk + 1) * t_.n : u1_;
      replicated_ = t_.apply_cb > 1 && cc > 1 && last - first >= 2;
      if (replicated_) {
        // Forward: A, B a tile apart; backward: A, B, C apply_cb * hwp apart (<= 2/3 tile each).
        const uint32_t span = bwd_ ? t_.apply_cb * hwp : static_cast<uint32_t>(t_.tile);
        LocalTensor<float> rep = rep_.Get<float>();
        for (uint32_t k = 0; k < (bwd_ ? 3u : 2u); ++k)
          for (uint32_t ch = 0; ch < cc; ++ch)
            Duplicate(rep[k * span + ch * hwp], co.GetValue(k * cp + ch), static_cast<int32_t>(hwp));
      }
    }
    const uint64_t at = (n * t_.c + c0) * t_.hw;
    const DataCopyExtParams gp{static_cast<uint16_t>(cc), static_cast<uint32_t>(t_.hw * sizeof(T)), 0, 0, 0};
    LocalTensor<T> xin = xQ_.template AllocTensor<T>();
    DataCopyPad(xin, xGm_[at], gp, DataCopyPadExtParams<T>{true, 0, 0, T(0)});
    xQ_.EnQue(xin);
    LocalTensor<T> gin;
    if (bwd_) {
      gin = goQ_.template AllocTensor<T>();
      DataCopyPad(gin, goGm_[at], gp, DataCopyPadExtParams<T>{true, 0, 0, T(0)});
      goQ_.EnQue(gin);
      gin = goQ_.template DeQue<T>();
    }
    xin = xQ_.template DeQue<T>();
    LocalTensor<T> yout = yQ_.template AllocTensor<T>();
    const uint32_t cnt = cc * hwp;
    LocalTensor<float> d;
    if constexpr (std::is_same_v<T, float>) d = yout;
    else d = Work(0);
    LocalTensor<float> xf = AsFloat(bwd_ ? Work(1) : Work(0), xin, cnt);
    LocalTensor<float> gf;
    if (bwd_) gf = AsFloat(Work(0), gin, cnt);
    if (replicated_ && !bwd_) {
      Mul(d, xf, rep_.Get<float>(), static_cast<int32_t>(cnt));
      Add(d, d, rep_.Get<float>()[t_.tile], static_cast<int32_t>(cnt));
    } else if (replicated_) {
      // grad_in = A*go + B*x + C: xf is this unit's float copy (Work(1)), so it takes B*x in place.
      const uint32_t span = t_.apply_cb * hwp;
      const LocalTensor<float> rep = rep_.Get<float>();
      const int32_t n = static_cast<int32_t>(cnt);
      Mul(d, gf, rep, n);
      Mul(xf, xf, rep[span], n);
      Add(d, d, xf, n);
      Add(d, d, rep[2 * span], n);
    } else {
      for (uint32_t ch = 0; ch < cc; ++ch) {
        const uint32_t o = ch * hwp;
        ApplyScalars(d[o], xf[o], bwd_ ? gf[o] : xf[o], co.GetValue(ch), co.GetValue(cp + ch),
                     bwd_ ? co.GetValue(2 * cp + ch) : 0.0f, static_cast<int32_t>(hwp));
      }
    }
    if constexpr (!std::is_same_v<T, float>) StoreFloat(yout, d, cnt);
    if (bwd_) goQ_.FreeTensor(gin);
    xQ_.FreeTensor(xin);
    yQ_.EnQue(yout);
    yout = yQ_.template DeQue<T>();
    DataCopyPad(yGm_[at], yout, gp);
    yQ_.FreeTensor(yout);
  }

  // y (or grad_in) = x*ra + rb (or go*ra + x*rb + rc) over cnt elements with the replicated vectors.
  __aicore__ inline void ComputeReplicated(uint32_t cnt) {
    const int32_t n = static_cast<int32_t>(cnt);
    LocalTensor<float> ra = rep_.Get<float>(), rb = rep_.Get<float>()[t_.tile], rc = rep_.Get<float>()[2 * t_.tile];
    LocalTensor<T> xin = xQ_.template DeQue<T>();
    LocalTensor<T> yout = yQ_.template AllocTensor<T>();
    LocalTensor<float> d;
    if constexpr (std::is_same_v<T, float>) d = yout;
    else d = Work(0);
    if (!bwd_) {
      LocalTensor<float> xf = AsFloat(Work(0), xin, cnt);
      Mul(d, xf, ra, n);
      Add(d, d, rb, n);
    } else {
      LocalTensor<T> gin = goQ_.template DeQue<T>();
      LocalTensor<float> gf = AsFloat(Work(0), gin, cnt);
      Mul(d, gf, ra, n);
      LocalTensor<float> xf = AsFloat(Work(1), xin, cnt);
      LocalTensor<float> e = Work(1);
      Mul(e, xf, rb, n);
      Add(d, d, e, n);
      Add(d, d, rc, n);
      goQ_.FreeTensor(gin);
    }
    if constexpr (!std::is_same_v<T, float>) StoreFloat(yout, d, cnt);
    xQ_.FreeTensor(xin);
    yQ_.EnQue(yout);
  }

  // d = x*a + b (forward) or go*a + x*b + c (backward) over n floats (g unused forward).
  __aicore__ inline void ApplyScalars(const LocalTensor<float>& d, const LocalTensor<float>& x,
                                      const LocalTensor<float>& g, float a, float b, float c, int32_t n) {
    if (!bwd_) {
      Muls(d, x, a, n);
      Adds(d, d, b, n);
    } else {
      Muls(d, g, a, n);
      Axpy(d, x, b, n);
      Adds(d, d, c, n);
    }
  }

  __aicore__ inline void ComputeScalar(uint32_t cnt, float a, float b, float cc) {
    LocalTensor<T> xin = xQ_.template DeQue<T>();
    LocalTensor<T> yout = yQ_.template AllocTensor<T>();
    // float: compute straight into the output tile (no copy pass at the end).
    LocalTensor<float> d;
    if constexpr (std::is_same_v<T, float>) d = yout;
    else d = Work(0);
    LocalTensor<T> gin;
    LocalTensor<float> gf;
    if (bwd_) {
      gin = goQ_.template DeQue<T>();
      gf = AsFloat(Work(0), gin, cnt);
    }
    const LocalTensor<float> xf = AsFloat(bwd_ ? Work(1) : Work(0), xin, cnt);
    ApplyScalars(d, xf, gf, a, b, cc, static_cast<int32_t>(cnt));
    if (bwd_) goQ_.FreeTensor(gin);
    if constexpr (!std::is_same_v<T, float>) StoreFloat(yout, d, cnt);
    yQ_.EnQue(yout);
    xQ_.FreeTensor(xin);
  }

  __aicore__ inline void NhwcPrepare() {
    const uint32_t c = static_cast<uint32_t>(t_.c);
    const uint32_t n = t_.rows_tile * c;
    const uint32_t cp = npu_kernels::AlignUp<uint32_t>(c, 16);
    LocalTensor<float> v = vec_.Get<float>();
    for (uint32_t k = 0; k < 3; ++k) {
      DataCopyPad(v[k * cp], coefGm_[(npu_kernels::kBnCoefA + k) * t_.c], DataCopyExtParams{1, c * 4, 0, 0, 0},
                  DataCopyPadExtParams<float>{false, 0, 0, 0.0f});
    }
    SyncMte2ToV();
    LocalTensor<uint32_t> offs = offs_.Get<uint32_t>();
    PeriodicOffsets(offs, Work(0), n, c, 4);
    for (uint32_t k = 0; k < (bwd_ ? 3u : 2u); ++k) Gather(rep_.Get<float>()[k * t_.tile], v[k * cp], offs, 0u, n);
  }

  __aicore__ inline void NhwcUnit(uint64_t u) {
    const uint64_t rows = t_.n * t_.hw;
    const uint64_t r0 = u * t_.rows_per;
    const uint64_t r1 = r0 + t_.rows_per < rows ? r0 + t_.rows_per : rows;
    const uint64_t c = t_.c;
    for (uint64_t r = r0; r < r1; r += t_.rows_tile) {
      const uint64_t nr = r1 - r < t_.rows_tile ? r1 - r : t_.rows_tile;
      const uint32_t cnt = static_cast<uint32_t>(nr * c);
      const DataCopyExtParams gp{1, static_cast<uint32_t>(cnt * sizeof(T)), 0, 0, 0};
      LocalTensor<T> xin = xQ_.template AllocTensor<T>();
      DataCopyPad(xin, xGm_[r * c], gp, DataCopyPadExtParams<T>{false, 0, 0, T(0)});
      xQ_.EnQue(xin);
      if (bwd_) {
        LocalTensor<T> gin = goQ_.template AllocTensor<T>();
        DataCopyPad(gin, goGm_[r * c], gp, DataCopyPadExtParams<T>{false, 0, 0, T(0)});
        goQ_.EnQue(gin);
      }
      ComputeReplicated(cnt);
      LocalTensor<T> yout = yQ_.template DeQue<T>();
      DataCopyPad(yGm_[r * c], yout, gp);
      yQ_.FreeTensor(yout);
    }
  }

  BatchNormTiling t_;
  bool bwd_ = false;
  int64_t coefBlock_ = -1;  // channel block whose coefficients coefs_ holds (PlanesUnit)
  bool replicated_ = false;  // rep_ holds coefBlock_'s coefficients replicated over its planes
  uint64_t u0_ = 0, u1_ = 0;  // this core's units (PlanesUnit)
  TPipe pipe_;
  TQue<TPosition::VECIN, 1> xQ_, goQ_;
  TQue<TPosition::VECOUT, 1> yQ_;
  TBuf<TPosition::VECCALC> work_, small_, rep_, offs_, vec_, coefs_;
  GlobalTensor<T> xGm_, goGm_, yGm_;
  GlobalTensor<float> coefGm_;
};

template <typename T>
__aicore__ inline void RunReduce(GM_ADDR x, GM_ADDR go, GM_ADDR shift, GM_ADDR partial, GM_ADDR kshift,
                                 GM_ADDR tiling) {
  GET_TILING_DATA_WITH_STRUCT(BatchNormTiling, t, tiling);
  BnReduceKernel<T> op;
  op.Init(x, go, shift, partial, kshift, t);
  op.Process();
}
template <typename T>
__aicore__ inline void RunApply(GM_ADDR x, GM_ADDR go, GM_ADDR coef, GM_ADDR y, GM_ADDR tiling) {
  GET_TILING_DATA_WITH_STRUCT(BatchNormTiling, t, tiling);
  BnApplyKernel<T> op;
  op.Init(x, go, coef, y, t);
  op.Process();
}

}  // namespace

#define NPU_BN_ENTRY(NAME, T)                                                                                \
  extern "C" __global__ __aicore__ void bn_reduce_kernel_##NAME(GM_ADDR x, GM_ADDR go, GM_ADDR shift,        \
                                                                GM_ADDR partial, GM_ADDR kshift,             \
                                                                GM_ADDR tiling) {                            \
    RunReduce<T>(x, go, shift, partial, kshift, tiling);                                                     \
  }                                                                                                          \
  extern "C" __global__ __aicore__ void bn_apply_kernel_##NAME(GM_ADDR x, GM_ADDR go, GM_ADDR coef, GM_ADDR y, \
                                                               GM_ADDR tiling) {                             \
    RunApply<T>(x, go, coef, y, tiling);                                                                     \
  }
NPU_BN_ENTRY(float, float)
NPU_BN_ENTRY(half, half)
NPU_BN_ENTRY(bf16, bfloat16_t)
#undef NPU_BN_ENTRY

extern "C" __global__ __aicore__ void bn_finalize_kernel(GM_ADDR partial, GM_ADDR kshift, GM_ADDR weight, GM_ADDR bias,
                                                         GM_ADDR mean_in, GM_ADDR var_in, GM_ADDR out,
                                                         GM_ADDR tiling) {
  GET_TILING_DATA_WITH_STRUCT(BatchNormTiling, t, tiling);
  BnFinalizeKernel op;
  op.Init(partial, kshift, weight, bias, mean_in, var_in, out, t);
  op.Process();
}
