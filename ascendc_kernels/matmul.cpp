// Matmul on the cube (see matmul.h for the data path). Each core takes a contiguous range of
// output tiles (batch, m-tile, n-tile; n fastest so consecutive tiles share the A panel), keeps
// the tile's float accumulator in L0C over the whole K loop, streams k_l1-deep panels of A and B
// through L1 and base_k-deep micro-panels through L0A (double buffered) and L0B, and writes the
// tile once through the Fixpipe epilogue.
#include "matmul.h"

#include "kernel_operator.h"
#include "matmul_cube.h"

using namespace AscendC;

namespace npu_kernels {

MatmulTiling matmul_tiling(uint32_t batch, uint32_t m, uint32_t n, uint32_t k, uint32_t elem_bytes, bool a_trans,
                           bool b_trans, const SocInfo& soc) {
  MatmulTiling t{};
  t.batch = batch;
  t.m = m;
  t.n = n;
  t.k = k;
  t.elem_bytes = elem_bytes;
  t.a_trans = a_trans;
  t.b_trans = b_trans;
  // L0C holds one float tile (base_m * base_n * 4 <= l0c); L0A two base_m x base_k buffers;
  // L0B one base_k x base_n buffer; L1 one k_l1-deep panel of each operand.
  // L0C holds the base_m x base_n accumulator; B moves to L0B sub_n columns at a time (float: two
  // 128-column halves, so base_k stays 128 and each Mmad call does twice the work per C access);
  // L0A holds one or two base_m x base_k buffers.
  uint32_t base_n = 256, base_m = 128, base_k = 128;
  while (base_m * base_n * 4 > soc.l0c_bytes && base_n > 16) base_n /= 2;
  uint32_t sub_n = base_n;
  while (base_k * sub_n * elem_bytes > soc.l0b_bytes && sub_n > 64) sub_n /= 2;
  while (base_k * sub_n * elem_bytes > soc.l0b_bytes && base_k > 16) base_k /= 2;
  // A short K (one k-step): L0B holds all of it for more columns, so one load serves the tile.
  const uint32_t k16 = AlignUp<uint32_t>(k, 16);
  if (k16 > 0 && k16 < base_k) {
    base_k = k16;
    sub_n = base_n;
    while (base_k * sub_n * elem_bytes > soc.l0b_bytes && sub_n > 64) sub_n /= 2;
  }
  uint32_t a2_bufs = 2 * base_m * base_k * elem_bytes <= soc.l0a_bytes ? 2 : 1;
  while (a2_bufs * base_m * base_k * elem_bytes > soc.l0a_bytes && base_m > 16) base_m /= 2;
  // Small problems: shrink the tile to the problem so no fractal work is wasted.
  if (AlignUp<uint32_t>(m, 16) < base_m) base_m = AlignUp<uint32_t>(m, 16);
  if (AlignUp<uint32_t>(n, 16) < base_n) base_n = AlignUp<uint32_t>(n, 16);
  if (base_m == 0) base_m = 16;
  if (base_n == 0) base_n = 16;
  // Enough tiles for the cores: split N, then M, while there are fewer tiles than cores.
  auto tiles_of = [&](uint32_t bm, uint32_t bn) { return uint64_t(batch) * CeilDivU(m, bm) * CeilDivU(n, bn); };
  auto tiles = [&] { return tiles_of(base_m, base_n); };
  const uint64_t want = uint64_t(soc.cube_cores);
  // A split is kept only when it shortens the busiest core's work (rounds of tiles x tile area):
  // 16 tiles on 24 cores split into 32 still take two tile-halves per core, and every extra tile
  // re-streams its A and B panels (K too deep to stay resident) for nothing.
  auto makespan = [&](uint32_t bm, uint32_t bn) {
    const uint64_t rows = bm < m ? bm : AlignUp<uint32_t>(m, 16), cols = bn < n ? bn : AlignUp<uint32_t>(n, 16);
    return CeilDivU<uint64_t>(tiles_of(bm, bn), want) * rows * cols;
  };
  while (tiles() < want && base_n > 64) {
    const uint32_t bn = AlignUp<uint32_t>(base_n / 2, 16);
    if (makespan(base_m, bn) >= makespan(base_m, base_n)) break;
    base_n = bn;
  }
  while (tiles() < want && base_m > 32) {
    const uint32_t bm = AlignUp<uint32_t>(base_m / 2, 16);
    if (makespan(bm, base_n) >= makespan(base_m, base_n)) break;
    base_m = bm;
  }
  uint32_t k_l1 = base_k;
  const uint32_t k_need = AlignUp<uint32_t>(k, 16);
  while (k_l1 * 2 <= k_need && (base_m + base_n) * (k_l1 * 2) * elem_bytes <= soc.l1_bytes * 3 / 4) k_l1 *= 2;
  if (k_l1 > AlignUp<uint32_t>(k_need, base_k)) k_l1 = AlignUp<uint32_t>(k_need, base_k);
  t.base_m = base_m;
  t.base_n = base_n;
  t.sub_n = sub_n < base_n ? sub_n : base_n;
  t.a2_bufs = a2_bufs;
  t.base_k = base_k;
  t.k_l1 = k_l1;
  t.tiles_m = CeilDivU(m, base_m);
  t.tiles_n = CeilDivU(n, base_n);
  t.total_tiles = tiles();
  t.resident = k <= k_l1;
  t.out_no_l2 = uint64_t(batch) * m * n * elem_bytes >= kNoL2OutputBytes;
  t.l0b_resident = t.resident && k <= base_k && base_n <= t.sub_n;
  // Panel loads per batch matrix: n fastest reloads B for every tile (A once per m-tile), m
  // fastest reloads A for every tile (B once per n-tile).
  const uint64_t n_fastest_cost = uint64_t(m) * k + uint64_t(n) * k * t.tiles_m;
  const uint64_t m_fastest_cost = uint64_t(n) * k + uint64_t(m) * k * t.tiles_n;
  // K too deep to stay: every tile streams both panels whatever the order, so consecutive tiles
  // share the bigger one (B, base_n >= base_m): the two cores' concurrent tiles then read the same
  // B panel and the A panels cycle through a smaller set. Measured on mm 2048 / 4096 float: 3-6%
  // faster than n fastest (A panels shared), which re-reads every B panel from memory per m-tile.
  t.m_fastest = t.resident ? m_fastest_cost < n_fastest_cost : base_n >= base_m;
  const uint64_t cores = t.total_tiles < want ? (t.total_tiles ? t.total_tiles : 1) : want;
  t.tiles_per_core = CeilDivU<uint64_t>(t.total_tiles ? t.total_tiles : 1, cores);
  t.block_dim = static_cast<uint32_t>(CeilDivU<uint64_t>(t.total_tiles ? t.total_tiles : 1, t.tiles_per_core));
  return t;
}

ScaleCastTiling scale_cast_tiling(uint64_t total, const SocInfo& soc, float scale) {
  ScaleCastTiling t{};
  t.total = total;
  t.scale = scale;
  const CoreSplit split = SplitAcrossCores(total, 4, soc.vector_cores, 8192);
  t.block_dim = split.block_dim;
  t.per_core = split.per_core;
  uint32_t tile = 8192;
  const uint64_t need = AlignUp<uint64_t>(t.per_core, 16);
  if (need < tile) tile = static_cast<uint32_t>(need);
  t.tile = tile == 0 ? 16 : tile;
  return t;
}

}  // namespace npu_kernels

namespace {

using npu_kernels::MatmulTiling;
namespace cube = npu_kernels::cube;

template <typename T>
class MatmulKernel {
 public:
  __aicore__ inline void Init(GM_ADDR a, GM_ADDR b, GM_ADDR c, GM_ADDR scale, GM_ADDR shift, GM_ADDR residual,
                              const MatmulTiling& t) {
    t_ = t;
    if constexpr (std::is_same_v<T, float>) SetHF32Mode(t.hf32 ? HF32Mode::ENABLE : HF32Mode::DISABLE);
    aGm_.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(a));
    bGm_.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(b));
    cGm_.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(c));
    if (t.out_no_l2) cGm_.SetL2CacheHint(CacheMode::CACHE_MODE_DISABLE);
    const uint32_t nvec = t.rowwise ? t.m : t.n;
    if (t.has_scale) scaleGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(scale), nvec);
    if (t.has_shift) shiftGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(shift), nvec);
    if (t.has_residual) resGm_.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(residual));
    const uint32_t esz = sizeof(T);
    pipe_.InitBuffer(qA1_, 1, t.base_m * t.k_l1 * esz);
    pipe_.InitBuffer(qB1_, 1, t.base_n * t.k_l1 * esz);
    pipe_.InitBuffer(qA2_, t.a2_bufs, t.base_m * t.base_k * esz);
    pipe_.InitBuffer(qB2_, 1, t.base_k * t.sub_n * esz);
    pipe_.InitBuffer(qC_, 1, t.base_m * t.base_n * sizeof(float));
  }

  __aicore__ inline void Process() {
    const uint64_t first = uint64_t(GetBlockIdx()) * t_.tiles_per_core;
    uint64_t last = first + t_.tiles_per_core;
    if (last > t_.total_tiles) last = t_.total_tiles;
    for (uint64_t tile = first; tile < last; ++tile) ComputeTile(tile);
    ReleasePanels();
  }

 private:
  // GM -> L1 panel of A or B unless the resident one is that panel (key != 0 only when K fits one
  // panel). The queue's EnQue/DeQue order the load before the L0 loads; the panel is freed (and its
  // buffer's next AllocTensor waits for the readers) only when it is replaced.
  __aicore__ inline void ReleasePanels() {
    if (a1_.have) qA1_.FreeTensor(a1_.t);
    if (b1_.have) qB1_.FreeTensor(b1_.t);
    if (b2_.have) qB2_.FreeTensor(b2_.t);
    a1_.have = b1_.have = b2_.have = false;
  }
  struct Panel {
    LocalTensor<T> t;
    bool have = false;
    uint64_t key = 0;
  };
  template <class Q, class Load>
  __aicore__ inline void LoadPanel(Q& q, Panel& p, uint64_t key, Load&& load) {
    if (key && p.have && key == p.key) return;
    if (p.have) q.FreeTensor(p.t);
    p.t = q.template AllocTensor<T>();
    load(p.t);
    q.EnQue(p.t);
    p.t = q.template DeQue<T>();
    p.have = true;
    p.key = key;
  }

  __aicore__ inline void ComputeTile(uint64_t tile) {
    uint32_t tm, tn;
    uint64_t bi;
    if (t_.m_fastest) {
      tm = uint32_t(tile % t_.tiles_m);
      const uint64_t rest = tile / t_.tiles_m;
      tn = uint32_t(rest % t_.tiles_n);
      bi = rest / t_.tiles_n;
    } else {
      tn = uint32_t(tile % t_.tiles_n);
      const uint64_t rest = tile / t_.tiles_n;
      tm = uint32_t(rest % t_.tiles_m);
      bi = rest / t_.tiles_m;
    }
    const uint32_t m0 = tm * t_.base_m, n0 = tn * t_.base_n;
    const uint32_t mt = t_.m - m0 < t_.base_m ? t_.m - m0 : t_.base_m;
    const uint32_t nt = t_.n - n0 < t_.base_n ? t_.n - n0 : t_.base_n;
    const uint64_t a_base = bi * t_.a_batch, b_base = bi * t_.b_batch;
    LocalTensor<float> acc = qC_.template AllocTensor<float>();
    const uint32_t mt16 = cube::Align16(mt < 2 ? 2 : mt);
    bool init = true;
    for (uint32_t k0 = 0; k0 < t_.k; k0 += t_.k_l1) {
      const uint32_t kt = t_.k - k0 < t_.k_l1 ? t_.k - k0 : t_.k_l1;
      // GM -> L1 panels (kept while the next tiles share them).
      const uint64_t a_off = t_.a_trans ? a_base + uint64_t(k0) * t_.lda + m0 : a_base + uint64_t(m0) * t_.lda + k0;
      const uint64_t b_off = t_.b_trans ? b_base + uint64_t(n0) * t_.ldb + k0 : b_base + uint64_t(k0) * t_.ldb + n0;
      // Batch matrices that broadcast (a_batch / b_batch 0) share their panels too.
      const uint64_t a_key = t_.resident ? (t_.a_batch ? bi : 0) * t_.tiles_m + tm + 1 : 0;
      const uint64_t b_key = t_.resident ? (t_.b_batch ? bi : 0) * t_.tiles_n + tn + 1 : 0;
      LoadPanel(qA1_, a1_, a_key, [&](const LocalTensor<T>& t) {
        cube::LoadAToL1(t, aGm_[a_off], t_.a_trans != 0, mt, kt, t_.lda);
      });
      LoadPanel(qB1_, b1_, b_key, [&](const LocalTensor<T>& t) {
        if (t_.b_nz) {
          constexpr uint32_t c0 = cube::C0Of<T>();
          const uint32_t nt16 = cube::Align16(nt);
          DataCopy(t, bGm_[(uint64_t(k0 / c0) * t_.b_n16 + n0) * c0],
                   DataCopyParams(uint16_t(cube::Ceil(kt, c0)), uint16_t(nt16), uint16_t(t_.b_n16 - nt16), 0));
        } else {
          cube::LoadBToL1(t, bGm_[b_off], t_.b_trans != 0, nt, kt, t_.ldb);
        }
      });
      const LocalTensor<T>& a1 = a1_.t;
      const LocalTensor<T>& b1 = b1_.t;
      // L1 -> L0 micro-panels, Mmad into the resident accumulator.
      for (uint32_t kk = 0; kk < kt; kk += t_.base_k) {
        const uint32_t kb = kt - kk < t_.base_k ? kt - kk : t_.base_k;
        LocalTensor<T> a2 = qA2_.template AllocTensor<T>();
        cube::LoadAToL0(a2, a1, t_.a_trans != 0, mt, kt, kk, kb);
        qA2_.EnQue(a2);
        a2 = qA2_.template DeQue<T>();
        // The accumulator's Nz layout is column blocks of mt16 rows, so the sub-tile of columns
        // [ns, ns + nw) is itself an Nz accumulator starting at ns * mt16.
        for (uint32_t ns = 0; ns < nt; ns += t_.sub_n) {
          const uint32_t nw = nt - ns < t_.sub_n ? nt - ns : t_.sub_n;
          // With one k-step and one column load per tile, the L0B panel stays while B does.
          LoadPanel(qB2_, b2_, t_.l0b_resident ? b_key : 0, [&](const LocalTensor<T>& t) {
            cube::LoadBToL0(t, b1, t_.b_trans != 0, nt, kt, kk, kb, ns / 16, nw);
          });
          cube::MmadStep(acc[ns * mt16], a2, b2_.t, mt, nw, kb, init);
          if (!t_.l0b_resident) {
            qB2_.FreeTensor(b2_.t);
            b2_.have = false;
          }
        }
        init = false;
        qA2_.FreeTensor(a2);
      }
      if (!t_.resident) ReleasePanels();
    }
    qC_.EnQue(acc);
    acc = qC_.template DeQue<float>();
    FixpipeParamsV220 fp(uint16_t(nt), uint16_t(mt), uint16_t(cube::Align16(mt < 2 ? 2 : mt)),
                         uint32_t(t_.ldc), t_.relu != 0);
    fp.quantPre = cube::QuantFor<T>();
    const uint64_t c_off = bi * t_.c_batch + uint64_t(m0) * t_.ldc + n0;
    if (t_.has_scale || t_.has_shift || t_.has_residual) {
      ext::FixpipeEpilogue<T> e;
      const uint32_t v0 = t_.rowwise ? m0 : n0;
      if (t_.has_scale) e.scale = scaleGm_[v0];
      if (t_.has_shift) e.shift = shiftGm_[v0];
      e.rowwise = t_.rowwise != 0;
      if (t_.has_residual) {
        e.residual = resGm_[bi * t_.r_batch + uint64_t(m0) * t_.ldr + n0];
        e.residualStride = t_.ldr;
      }
      e.relu = t_.relu != 0;
      ext::FixpipeWithEpilogue(cGm_[c_off], acc, fp, e);
    } else {
      Fixpipe(cGm_[c_off], acc, fp);
    }
    qC_.FreeTensor(acc);
  }

  MatmulTiling t_{};
  TPipe pipe_;
  Panel a1_, b1_;  // the L1 panels in use (resident across tiles when t_.resident)
  Panel b2_;       // the L0B micro-panel (resident across tiles when t_.l0b_resident)
  TQue<TPosition::A1, 1> qA1_;
  TQue<TPosition::B1, 1> qB1_;
  TQue<TPosition::A2, 1> qA2_;
  TQue<TPosition::B2, 1> qB2_;
  TQue<TPosition::CO1, 1> qC_;
  GlobalTensor<T> aGm_, bGm_, cGm_, resGm_;
  GlobalTensor<float> scaleGm_, shiftGm_;
};

template <typename T>
__aicore__ inline void RunMatmul(GM_ADDR a, GM_ADDR b, GM_ADDR c, GM_ADDR scale, GM_ADDR shift, GM_ADDR residual,
                                 GM_ADDR tiling) {
  GET_TILING_DATA_WITH_STRUCT(MatmulTiling, t, tiling);
  MatmulKernel<T> op;
  op.Init(a, b, c, scale, shift, residual, t);
  op.Process();
}

// y = scale * x with a dtype change, on the vector cores: GM -> UB, Cast to float, Muls, Cast.
template <typename TIn, typename TOut>
class ScaleCastKernel {
 public:
  __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, const npu_kernels::ScaleCastTiling& t) {
    const uint64_t start = t.per_core * GetBlockIdx();
    count_ = start >= t.total ? 0 : (t.total - start < t.per_core ? t.total - start : t.per_core);
    tile_ = t.tile;
    scale_ = t.scale;
    xGm_.SetGlobalBuffer(reinterpret_cast<__gm__ TIn*>(x) + start, count_);
    yGm_.SetGlobalBuffer(reinterpret_cast<__gm__ TOut*>(y) + start, count_);
    pipe_.InitBuffer(inQ_, 2, tile_ * sizeof(TIn));
    pipe_.InitBuffer(outQ_, 2, tile_ * sizeof(TOut));
    pipe_.InitBuffer(work_, tile_ * sizeof(float));
  }
  __aicore__ inline void Process() {
    for (uint64_t off = 0; off < count_; off += tile_) {
      const uint32_t n = static_cast<uint32_t>(count_ - off < tile_ ? count_ - off : tile_);
      LocalTensor<TIn> x = inQ_.template AllocTensor<TIn>();
      DataCopyPad(x, xGm_[off], DataCopyExtParams{1, static_cast<uint32_t>(n * sizeof(TIn)), 0, 0, 0},
                  DataCopyPadExtParams<TIn>{false, 0, 0, TIn(0)});
      inQ_.EnQue(x);
      x = inQ_.template DeQue<TIn>();
      LocalTensor<TOut> y = outQ_.template AllocTensor<TOut>();
      if constexpr (std::is_same_v<TOut, float>) {
        if constexpr (std::is_same_v<TIn, float>) {
          Muls(y, x, scale_, n);
        } else {
          Cast(y, x, RoundMode::CAST_NONE, n);
          Muls(y, y, scale_, n);
        }
      } else {
        LocalTensor<float> w = work_.template Get<float>();
        Cast(w, x, RoundMode::CAST_NONE, n);
        Muls(w, w, scale_, n);
        Cast(y, w, RoundMode::CAST_RINT, n);
      }
      outQ_.EnQue(y);
      inQ_.FreeTensor(x);
      y = outQ_.template DeQue<TOut>();
      DataCopyPad(yGm_[off], y, DataCopyExtParams{1, static_cast<uint32_t>(n * sizeof(TOut)), 0, 0, 0});
      outQ_.FreeTensor(y);
    }
  }

 private:
  TPipe pipe_;
  TQue<TPosition::VECIN, 1> inQ_;
  TQue<TPosition::VECOUT, 1> outQ_;
  TBuf<TPosition::VECCALC> work_;
  GlobalTensor<TIn> xGm_;
  GlobalTensor<TOut> yGm_;
  uint64_t count_ = 0;
  uint32_t tile_ = 0;
  float scale_ = 1.f;
};

template <typename TIn, typename TOut>
__aicore__ inline void RunScaleCast(GM_ADDR x, GM_ADDR y, GM_ADDR tiling) {
  GET_TILING_DATA_WITH_STRUCT(npu_kernels::ScaleCastTiling, t, tiling);
  ScaleCastKernel<TIn, TOut> op;
  op.Init(x, y, t);
  op.Process();
}

}  // namespace

extern "C" __global__ __aicore__ void matmul_kernel_float(GM_ADDR a, GM_ADDR b, GM_ADDR c, GM_ADDR scale,
                                                          GM_ADDR shift, GM_ADDR residual, GM_ADDR tiling) {
  RunMatmul<float>(a, b, c, scale, shift, residual, tiling);
}
extern "C" __global__ __aicore__ void matmul_kernel_half(GM_ADDR a, GM_ADDR b, GM_ADDR c, GM_ADDR scale,
                                                         GM_ADDR shift, GM_ADDR residual, GM_ADDR tiling) {
  RunMatmul<half>(a, b, c, scale, shift, residual, tiling);
}
extern "C" __global__ __aicore__ void matmul_kernel_bf16(GM_ADDR a, GM_ADDR b, GM_ADDR c, GM_ADDR scale,
                                                         GM_ADDR shift, GM_ADDR residual, GM_ADDR tiling) {
  RunMatmul<bfloat16_t>(a, b, c, scale, shift, residual, tiling);
}
extern "C" __global__ __aicore__ void scale_cast_kernel_float_to_float(GM_ADDR x, GM_ADDR y, GM_ADDR tiling) {
  RunScaleCast<float, float>(x, y, tiling);
}
extern "C" __global__ __aicore__ void scale_cast_kernel_half_to_float(GM_ADDR x, GM_ADDR y, GM_ADDR tiling) {
  RunScaleCast<half, float>(x, y, tiling);
}
extern "C" __global__ __aicore__ void scale_cast_kernel_bf16_to_float(GM_ADDR x, GM_ADDR y, GM_ADDR tiling) {
  RunScaleCast<bfloat16_t, float>(x, y, tiling);
}
extern "C" __global__ __aicore__ void scale_cast_kernel_half_same(GM_ADDR x, GM_ADDR y, GM_ADDR tiling) {
  RunScaleCast<half, half>(x, y, tiling);
}
extern "C" __global__ __aicore__ void scale_cast_kernel_bf16_same(GM_ADDR x, GM_ADDR y, GM_ADDR tiling) {
  RunScaleCast<bfloat16_t, bfloat16_t>(x, y, tiling);
}
