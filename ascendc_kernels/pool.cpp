// 2-D pooling in Ascend C over NCHW planes (each core takes a range of planes).
//
// A plane is processed in bands of output rows. The input rows a band reads are copied into UB with
// their padding (-inf for max, 0 for average) at a 32-byte aligned column offset, widened to float.
// One Gather per window tap, with a per-core table of lane offsets and the tap's constant offset as the
// base address, brings every output's tap value into lane order; the taps then combine with count-form
// Max / Add. Max pooling finds the PyTorch index (first maximum in scan order) in a second pass that
// compares each tap with the maximum and selects its flat index h*W+w, taps in reverse order.
// Backward scatters: for each tap, the lanes' contributions are added at their input positions with
// Gather + Add + Scatter (positions of one tap never repeat), into a float band of input rows that is
// flushed to GM as later bands no longer reach it.
// Average pooling divisors follow PyTorch (count_include_pad, divisor_override, clipped borders).
// kPoolMean is adaptive pooling to 1x1: each plane's mean.
#include "pool.h"

#include "kernel_operator.h"
#include "norm_util.h"

using namespace AscendC;

namespace npu_kernels {

uint32_t AdaptiveMaxLen(uint32_t in, uint32_t out) {
  uint32_t m = 0;
  for (uint32_t i = 0; i < out; ++i) {
    const uint32_t len = AdaptiveEnd(i, in, out) - AdaptiveStart(i, in, out);
    if (len > m) m = len;
  }
  return m;
}

namespace {
// UB bytes a band geometry needs (see PoolKernel::Init).
uint64_t PoolUbBytes(const PoolTiling& t, bool backward, uint32_t esz, uint32_t rows) {
  const uint64_t lanes = AlignUp<uint64_t>(static_cast<uint64_t>(rows) * t.ow, 64);
  uint32_t in_rows;
  if (t.kind == kPoolAdaptive) {
    in_rows = 0;
    for (uint32_t o = 0; o < t.oh; o += rows) {
      const uint32_t last = o + rows < t.oh ? o + rows - 1 : t.oh - 1;
      const uint32_t span = AdaptiveStart(last, t.h, t.oh) + t.kh - AdaptiveStart(o, t.h, t.oh);
      if (span > in_rows) in_rows = span;
    }
  } else {
    in_rows = (rows - 1) * t.sh + (t.kh - 1) * t.dh + 1;
  }
  // float band (+ NaN-check mask, half and float copies of 1/8 of it) and the dtype band
  const uint64_t band = static_cast<uint64_t>(in_rows) * t.wpad * (4 + esz) + (static_cast<uint64_t>(in_rows) * t.wpad) + 1024;
  const uint64_t small = 4ull * 4 * AlignUp<uint64_t>(lanes / (t.ow ? t.ow : 1) + 2 + t.ow, 16);
  // per lane: 5 int/float tables, v, acc, I (+zeros), ik, mask, out (esz), idx64 (8), widen (8) /
  // backward: g, idx32, c, a, pos, go (esz), idx64 (8), low offsets.
  uint64_t per_lane = backward ? 5 * 4 + 6 * 4 + esz + 8 + 4 + 1 : 5 * 4 + 5 * 4 + esz + 8 + 8 + 1;
  uint64_t extra = 0;
  if (backward && t.kind == kPoolMax) {  // phase-ordered lane tables (7 vectors, blocks padded to 8)
    const uint64_t phases = static_cast<uint64_t>(((t.kh - 1) * t.dh + t.sh) / t.sh) * (((t.kw - 1) * t.dw + t.sw) / t.sw);
    per_lane += 7 * 4;
    extra = 7 * 4 * 8 * phases;
  }
  return band + small + lanes * per_lane + extra + 4096;
}
}  // namespace

PoolTiling pool_tiling(uint32_t kind, uint64_t planes, uint32_t h, uint32_t w, uint32_t oh, uint32_t ow, uint32_t kh,
                       uint32_t kw, uint32_t sh, uint32_t sw, uint32_t ph, uint32_t pw, uint32_t dh, uint32_t dw,
                       bool backward, uint32_t elem_bytes, const SocInfo& soc) {
  PoolTiling t{};
  t.kind = kind;
  t.planes = planes;
  SetPoolWindow(t, h, w, oh, ow, kh, kw, sh, sw, ph, pw, dh, dw);
  const uint64_t cores = static_cast<uint64_t>(soc.vector_cores > 0 ? soc.vector_cores : 1);
  const uint64_t plane_elems = static_cast<uint64_t>(h) * w;
  // Enough planes per core that a core has some 8K elements of work.
  uint64_t min_planes = plane_elems ? CeilDivU<uint64_t>(8192, plane_elems) : 1;
  if (min_planes < 1) min_planes = 1;
  uint64_t ppc = CeilDivU<uint64_t>(planes, cores);
  if (ppc < min_planes) ppc = min_planes;
  t.planes_per_core = ppc;
  t.block_dim = static_cast<uint32_t>(planes ? CeilDivU<uint64_t>(planes, ppc) : 1);
  const uint64_t budget = soc.ub_bytes;
  if (kind == kPoolMean) {
    const uint32_t hw = h * w;
    const uint32_t hwp = hw <= 64 ? AlignUp<uint32_t>(hw, kBlockBytes / elem_bytes) : AlignUp<uint32_t>(hw, 64);
    // x (dtype, double buffered) + float work + dtype out + offsets/sums; at least one plane.
    uint64_t per_plane = static_cast<uint64_t>(hwp) * (2 * elem_bytes + 4 + elem_bytes + 4) + 16;
    uint64_t mp = (budget - 16 * 1024) / per_plane;
    if (mp > 4095) mp = 4095;
    if (mp > 255 && hwp <= 64) mp = 255;
    t.mean_planes = static_cast<uint32_t>(mp);
    t.ok = mp >= 1;
    return t;
  }
  if (kind == kPoolAdaptive) {
    t.lpad = 0;
    t.wpad = AlignUp<uint32_t>(w + kw, 16);
  } else {
    t.lpad = AlignUp<uint32_t>(pw, 16);
    const uint32_t right = (ow - 1) * sw + (kw - 1) * dw + t.lpad - pw + 1;
    const uint32_t need = right > t.lpad + w ? right : t.lpad + w;
    t.wpad = AlignUp<uint32_t>(need, 16);
  }
  uint32_t rows = oh;
  while (rows > 1 && PoolUbBytes(t, backward, elem_bytes, rows) > budget) rows = (rows + 1) / 2;
  while (rows < oh && PoolUbBytes(t, backward, elem_bytes, rows + 1) <= budget) ++rows;
  t.ok = PoolUbBytes(t, backward, elem_bytes, rows) <= budget;
  t.rows = rows;
  t.lanes = AlignUp<uint32_t>(rows * ow, 64);
  if (kind == kPoolAdaptive) {
    uint32_t in_rows = 0;
    for (uint32_t o = 0; o < oh; o += rows) {
      const uint32_t last = o + rows < oh ? o + rows - 1 : oh - 1;
      const uint32_t span = AdaptiveStart(last, h, oh) + kh - AdaptiveStart(o, h, oh);
      if (span > in_rows) in_rows = span;
    }
    t.in_rows = in_rows;
  } else {
    t.in_rows = (rows - 1) * sh + (kh - 1) * dh + 1;
  }
  return t;
}

}  // namespace npu_kernels

namespace {

using npu_kernels::PoolTiling;
using namespace nn_kernels;

constexpr float kFltMax = 3.402823466e38f;


template <typename T>
class PoolKernel {
 public:
  __aicore__ inline void Init(GM_ADDR a, GM_ADDR b, GM_ADDR c, const PoolTiling& t, bool backward) {
    t_ = t;
    bwd_ = backward;
    max_ = t.kind == npu_kernels::kPoolMax;
    adaptive_ = t.kind == npu_kernels::kPoolAdaptive;
    const uint64_t in_total = t.planes * t.h * t.w, out_total = t.planes * t.oh * t.ow;
    if (!backward) {
      xGm_.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(a), in_total);
      yGm_.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(b), out_total);
      if (max_ && c) idxGm_.SetGlobalBuffer(reinterpret_cast<__gm__ int64_t*>(c), out_total);
    } else {
      goGm_.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(a), out_total);
      if (max_) idxGm_.SetGlobalBuffer(reinterpret_cast<__gm__ int64_t*>(b), out_total);
      gxGm_.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(c), in_total);
    }
    if (t.kind == npu_kernels::kPoolMean) {
      const uint32_t hwp = MeanPitch();
      const uint32_t n = t.mean_planes * hwp;
      const uint32_t mp = npu_kernels::AlignUp<uint32_t>(t.mean_planes, 64);
      pipe_.InitBuffer(inQ_, 2, (bwd_ ? mp : n) * sizeof(T));
      pipe_.InitBuffer(bandF_, n * sizeof(float));
      pipe_.InitBuffer(bandT_, n * sizeof(T));
      pipe_.InitBuffer(tabA_, (bwd_ ? n : mp) * sizeof(float));
      pipe_.InitBuffer(tabB_, mp * sizeof(float));
      pipe_.InitBuffer(small_, 256);
      return;
    }
    L_ = t.lanes;
    const uint32_t band = t.in_rows * t.wpad;
    // + a dummy cell for masked scatter lanes, and lanes up to a multiple of 64 for the NaN check
    bandAligned_ = npu_kernels::AlignUp<uint32_t>(band, 64);
    pipe_.InitBuffer(bandF_, (bandAligned_ + 64) * sizeof(float));
    Duplicate(bandF_.Get<float>(), 0.0f, static_cast<int32_t>(bandAligned_ + 64));
    if (max_ && !backward) {
      const uint32_t bits = bandAligned_ / 8;  // one mask byte per 8 band elements
      pipe_.InitBuffer(nanMask_, bits + 32);
      pipe_.InitBuffer(nanHalf_, npu_kernels::AlignUp<uint32_t>(bits, 16) * 2);
      pipe_.InitBuffer(nanF_, npu_kernels::AlignUp<uint32_t>(bits, 64) * 4);
    }
    pipe_.InitBuffer(bandT_, band * sizeof(T));
    smallN_ = npu_kernels::AlignUp<uint32_t>(L_ / t.ow + 2 + t.ow, 16);
    pipe_.InitBuffer(small_, 4 * smallN_ * sizeof(float));
    pipe_.InitBuffer(rowlane_, L_ * 4);
    pipe_.InitBuffer(goff_, L_ * 4);
    pipe_.InitBuffer(tabA_, L_ * 4);
    pipe_.InitBuffer(tabB_, L_ * 4);
    pipe_.InitBuffer(tabC_, L_ * 4);
    pipe_.InitBuffer(v_, L_ * 4);
    pipe_.InitBuffer(acc_, L_ * 4);
    pipe_.InitBuffer(iv_, (L_ + 64) * 4);
    pipe_.InitBuffer(ik_, L_ * 4);
    pipe_.InitBuffer(mask_, L_ / 8 + 32);
    pipe_.InitBuffer(outT_, npu_kernels::AlignUp<uint32_t>(L_ * sizeof(T), 32));
    pipe_.InitBuffer(w64_, L_ * 8);
    pipe_.InitBuffer(wide_, L_ * 8);
    if (max_ && backward) {
      Lp_ = 0;
      for (uint32_t ph = 0; ph < PhaseRows() * PhaseCols(); ++ph) Lp_ += npu_kernels::AlignUp<uint32_t>(PhaseLanes(ph, t.rows), 8);
      Lp_ = npu_kernels::AlignUp<uint32_t>(Lp_, 64);
      pipe_.InitBuffer(ph_, 7 * Lp_ * 4);
    }
    BuildTables();
  }

  __aicore__ inline void Process() {
    const uint64_t p0 = t_.planes_per_core * GetBlockIdx();
    uint64_t p1 = p0 + t_.planes_per_core;
    if (p1 > t_.planes) p1 = t_.planes;
    if (t_.kind == npu_kernels::kPoolMean) {
      for (uint64_t p = p0; p < p1; p += t_.mean_planes) {
        const uint32_t np = static_cast<uint32_t>(p1 - p < t_.mean_planes ? p1 - p : t_.mean_planes);
        if (bwd_) MeanBackward(p, np);
        else MeanForward(p, np);
      }
      return;
    }
    for (uint64_t p = p0; p < p1; ++p) {
      if (bwd_) BackwardPlane(p);
      else ForwardPlane(p);
    }
  }

 private:
  // ---------------------------------------------------------------- tables (once per core)
  __aicore__ inline void BuildTables() {
    const uint32_t L = L_, OW = t_.ow;
    const int32_t n = static_cast<int32_t>(L);
    LocalTensor<uint32_t> rowlane = rowlane_.Get<uint32_t>();
    LocalTensor<int32_t> r = ik_.Get<int32_t>();      // lane row
    LocalTensor<int32_t> col = tabC_.Get<int32_t>();  // lane column
    LocalTensor<float> tmp = v_.Get<float>();
    RowOffsets(rowlane, tmp, L, OW, 4);
    RowOffsets(r.ReinterpretCast<uint32_t>(), tmp, L, OW, 1);
    Mins(r, r, static_cast<int32_t>(t_.rows - 1), n);  // lanes past the band reuse its last row
    PeriodicOffsets(col.ReinterpretCast<uint32_t>(), tmp, L, OW, 1);
    LocalTensor<int32_t> goff = goff_.Get<int32_t>();
    LocalTensor<int32_t> a = tabA_.Get<int32_t>(), b = tabB_.Get<int32_t>();
    LocalTensor<int32_t> t1 = acc_.Get<int32_t>();
    if (!adaptive_) {
      // goff = ((r*sh)*wpad + col*sw + lpad - pw) * 4
      Muls(goff, r, static_cast<int32_t>(t_.sh * t_.wpad), n);
      Muls(t1, col, static_cast<int32_t>(t_.sw), n);
      Add(goff, goff, t1, n);
      Adds(goff, goff, static_cast<int32_t>(t_.lpad) - static_cast<int32_t>(t_.pw), n);
      Muls(goff, goff, 4, n);
    }
    if (max_) {
      // a = ibase = r*sh*W + col*sw - pw;  b = ibase + first valid column shift (left padding)
      Muls(a, r, static_cast<int32_t>(t_.sh * t_.w), n);
      Add(a, a, t1, n);
      Adds(a, a, -static_cast<int32_t>(t_.pw), n);
      // colfix = dw * ceil(max(0, pw - col*sw) / dw)
      Muls(b, t1, -1, n);
      Adds(b, b, static_cast<int32_t>(t_.pw), n);
      Maxs(b, b, 0, n);
      Cast(tmp, b, RoundMode::CAST_NONE, L);
      Adds(tmp, tmp, static_cast<float>(t_.dw) - 0.5f, n);
      Muls(tmp, tmp, 1.0f / static_cast<float>(t_.dw), n);
      Cast(b, tmp, RoundMode::CAST_FLOOR, L);
      Muls(b, b, static_cast<int32_t>(t_.dw), n);
      Add(b, b, a, n);
      // phase id of a lane for the backward scatter: (r % phh) * phw + col % phw (windows of one phase
      // do not overlap, so their argmax positions are distinct)
      const uint32_t phh = PhaseRows(), phw = PhaseCols();
      LocalTensor<float> pid = tabC_.Get<float>();
      LocalTensor<float> rf = w64_.Get<float>(), cf = wide_.Get<float>();
      Cast(rf, r, RoundMode::CAST_NONE, L);
      Cast(cf, col, RoundMode::CAST_NONE, L);
      FloatMod(rf, phh);
      FloatMod(cf, phw);
      Muls(pid, rf, static_cast<float>(phw), n);
      Add(pid, pid, cf, n);
      Cast(a.ReinterpretCast<float>(), a, RoundMode::CAST_NONE, L);
      Cast(b.ReinterpretCast<float>(), b, RoundMode::CAST_NONE, L);
      if (bwd_) {
        BuildPhaseOrder();
      } else {
        BuildWidenOffsets();
      }
    } else if (!adaptive_) {
      // a = column divisor factor (float)
      LocalTensor<int32_t> ws = t1, we = b;
      Adds(ws, t1, -static_cast<int32_t>(t_.pw), n);                       // wstart = col*sw - pw
      Adds(we, ws, static_cast<int32_t>(t_.kw), n);
      Mins(we, we, static_cast<int32_t>(t_.w + t_.pw), n);                 // wend
      if (t_.count_include_pad) {
        Sub(a, we, ws, n);
      } else {
        Maxs(ws, ws, 0, n);
        Mins(we, we, static_cast<int32_t>(t_.w), n);
        Sub(a, we, ws, n);
      }
      Cast(a.ReinterpretCast<float>(), a, RoundMode::CAST_NONE, L);
    } else {
      // adaptive: a = column start (elements), b = column length (float); goff gets the row part per band
      LocalTensor<float> sm = small_.Get<float>()[2 * smallN_];
      LocalTensor<int32_t> smi = sm.ReinterpretCast<int32_t>();
      LocalTensor<float> sm2 = small_.Get<float>()[3 * smallN_];
      for (uint32_t o = 0; o < OW; ++o) {
        const uint32_t s = npu_kernels::AdaptiveStart(o, t_.w, OW);
        smi.SetValue(o, static_cast<int32_t>(s));
        sm2.SetValue(o, static_cast<float>(npu_kernels::AdaptiveEnd(o, t_.w, OW) - s));
      }
      SyncSToV();
      LocalTensor<uint32_t> coffs = goff_.Get<uint32_t>();
      PeriodicOffsets(coffs, tmp, L, OW, 4);
      Gather(a, smi, coffs, 0u, L);
      Gather(b.ReinterpretCast<float>(), sm2, coffs, 0u, L);
    }
  }

  __aicore__ inline uint32_t PhaseRows() const { return ((t_.kh - 1) * t_.dh + t_.sh) / t_.sh; }
  __aicore__ inline uint32_t PhaseCols() const { return ((t_.kw - 1) * t_.dw + t_.sw) / t_.sw; }
  // Lanes of phase ph (rows r % phh == a, columns c % phw == b) among `rows` band rows.
  __aicore__ inline uint32_t PhaseCols(uint32_t ph) const {
    const uint32_t b = ph % PhaseCols();
    return t_.ow > b ? (t_.ow - b + PhaseCols() - 1) / PhaseCols() : 0;
  }
  __aicore__ inline uint32_t PhaseLanes(uint32_t ph, uint32_t rows) const {
    const uint32_t a = ph / PhaseCols();
    const uint32_t nr = rows > a ? (rows - a + PhaseRows() - 1) / PhaseRows() : 0;
    return nr * PhaseCols(ph);
  }
  __aicore__ inline LocalTensor<float> Ph(int k) { return ph_.Get<float>()[k * Lp_]; }
  enum PhaseBuf { kPerm8 = 0, kPermG, kGp, kIdx, kPos, kOffs, kAcc };

  // Phase-ordered lanes for the max backward: block p (start 8-aligned) lists the band lanes of phase
  // p row-major, so each phase is one contiguous, conflict-free Gather/Add/Scatter. kPerm8 / kPermG
  // hold the byte offsets of those lanes in the int64 index and float gradient rows.
  __aicore__ inline void BuildPhaseOrder() {
    LocalTensor<int32_t> p8 = Ph(kPerm8).template ReinterpretCast<int32_t>();
    LocalTensor<int32_t> pg = Ph(kPermG).template ReinterpretCast<int32_t>();
    Duplicate(p8, 0, static_cast<int32_t>(Lp_));
    LocalTensor<int32_t> q = Ph(kIdx).template ReinterpretCast<int32_t>();
    LocalTensor<float> qf = Ph(kPos);
    const uint32_t phw = PhaseCols(), phh = PhaseRows();
    uint32_t start = 0;
    for (uint32_t ph = 0; ph < phh * phw; ++ph) {
      const uint32_t nl = PhaseLanes(ph, t_.rows), cols = PhaseCols(ph);
      if (nl > 0) {
        const int32_t n = static_cast<int32_t>(nl);
        const uint32_t a = ph / phw, b = ph % phw;
        // j in [0, nl): rr = j / cols; lane = j*phw + rr*(phh*OW - phw*cols) + a*OW + b
        LocalTensor<int32_t> j = p8[start];
        Iota(j, nl);
        Cast(qf, j, RoundMode::CAST_NONE, nl);
        Adds(qf, qf, 0.5f, n);
        Muls(qf, qf, 1.0f / static_cast<float>(cols), n);
        Cast(q, qf, RoundMode::CAST_FLOOR, nl);
        Muls(q, q, static_cast<int32_t>(phh * t_.ow) - static_cast<int32_t>(phw * cols), n);
        Muls(j, j, static_cast<int32_t>(phw), n);
        Add(j, j, q, n);
        Adds(j, j, static_cast<int32_t>(a * t_.ow + b), n);
      }
      start += npu_kernels::AlignUp<uint32_t>(nl, 8);
    }
    Muls(pg, p8, 4, static_cast<int32_t>(Lp_));
    Muls(p8, p8, 8, static_cast<int32_t>(Lp_));
  }
  // x = x mod m for small non-negative integral floats.
  __aicore__ inline void FloatMod(const LocalTensor<float>& x, uint32_t m) {
    const int32_t n = static_cast<int32_t>(L_);
    LocalTensor<float> q = v_.Get<float>();
    LocalTensor<int32_t> qi = ik_.Get<int32_t>();
    Adds(q, x, 0.5f, n);
    Muls(q, q, 1.0f / static_cast<float>(m), n);
    Cast(qi, q, RoundMode::CAST_FLOOR, L_);
    Cast(q, qi, RoundMode::CAST_NONE, L_);
    Muls(q, q, -static_cast<float>(m), n);
    Add(x, x, q, n);
  }

  // wide[2j] = 4j (I[j]), wide[2j+1] = 4L (a zero slot after I).
  __aicore__ inline void BuildWidenOffsets() {
    const uint32_t L = L_;
    const int32_t n = static_cast<int32_t>(L);
    LocalTensor<int32_t> wide = wide_.Get<int32_t>();
    LocalTensor<float> tmp = v_.Get<float>();
    // lane j2 in [0, 2L) with parity p: offset = p ? 4L (zero slot) : 2*j2 (= 4 * (j2/2)).
    LocalTensor<int32_t> par = w64_.Get<int32_t>();
    PeriodicOffsets(par.ReinterpretCast<uint32_t>(), tmp, L, 2, 1);  // parity of j (= of j + L: L is even)
    for (uint32_t h = 0; h < 2; ++h) {
      LocalTensor<int32_t> e = acc_.Get<int32_t>();
      Iota(e, L, static_cast<int32_t>(h * L));
      Sub(e, e, par, n);
      Muls(e, e, 2, n);                            // e = 4 * (j2 / 2)
      LocalTensor<int32_t> d = tabC_.Get<int32_t>();
      Muls(d, e, -1, n);
      Adds(d, d, static_cast<int32_t>(4 * L), n);
      Mul(d, d, par, n);                           // p * (4L - e)
      Add(wide[h * L], e, d, n);
    }
    LocalTensor<int32_t> iv = iv_.Get<int32_t>();
    Duplicate(iv[L], 0, 64);
  }

  // ---------------------------------------------------------------- forward
  // Copies input rows [r0, r0 + rows) of plane p (padding outside the plane) into the float band.
  __aicore__ inline void LoadBand(uint64_t p, int64_t r0, uint32_t rows, float pad) {
    const uint32_t n = rows * t_.wpad;
    LocalTensor<T> bt = bandT_.Get<T>();
    LocalTensor<float> bf = bandF_.Get<float>();
    LocalTensor<T> dst = std::is_same_v<T, float> ? bf.ReinterpretCast<T>() : bt;
    Duplicate(dst, T(pad), static_cast<int32_t>(n));
    const int64_t v0 = r0 < 0 ? 0 : r0;
    const int64_t v1 = r0 + rows < static_cast<int64_t>(t_.h) ? r0 + rows : static_cast<int64_t>(t_.h);
    if (v1 > v0) {
      const uint32_t gap = (t_.wpad * sizeof(T) - npu_kernels::AlignUp<uint32_t>(t_.w * sizeof(T), 32)) / 32;
      SetFlag<HardEvent::V_MTE2>(0);
      WaitFlag<HardEvent::V_MTE2>(0);
      DataCopyPad(dst[static_cast<uint32_t>(v0 - r0) * t_.wpad + t_.lpad], xGm_[(p * t_.h + v0) * t_.w],
                  DataCopyExtParams{static_cast<uint16_t>(v1 - v0), static_cast<uint32_t>(t_.w * sizeof(T)), 0, gap, 0},
                  DataCopyPadExtParams<T>{true, 0, 0, T(pad)});
      SyncMte2ToV();
    }
    if constexpr (!std::is_same_v<T, float>) Cast(bf, bt, RoundMode::CAST_NONE, n);
  }

  __aicore__ inline int64_t BandInRow(uint32_t oh0) const {
    if (adaptive_) return npu_kernels::AdaptiveStart(oh0, t_.h, t_.oh);
    return static_cast<int64_t>(oh0) * t_.sh - t_.ph;
  }
  __aicore__ inline uint32_t TapBase(uint32_t kh, uint32_t kw) const {
    return (kh * t_.dh * t_.wpad + kw * t_.dw) * 4;
  }

  // Per-band row tables of average / adaptive pooling (scalars per output row, expanded by Gather).
  __aicore__ inline void BandRowTables(uint32_t oh0, uint32_t rb) {
    const int32_t n = static_cast<int32_t>(L_);
    LocalTensor<float> sm = small_.Get<float>();
    LocalTensor<float> sm1 = small_.Get<float>()[smallN_];
    const uint32_t nrows = L_ / t_.ow + 1;
    for (uint32_t r = 0; r < nrows && r < smallN_; ++r) {
      const uint32_t o = oh0 + (r < rb ? r : rb - 1);
      if (adaptive_) {
        const uint32_t s = npu_kernels::AdaptiveStart(o, t_.h, t_.oh);
        sm.SetValue(r, static_cast<float>(s - npu_kernels::AdaptiveStart(oh0, t_.h, t_.oh)));
        sm1.SetValue(r, static_cast<float>(npu_kernels::AdaptiveEnd(o, t_.h, t_.oh) - s));
      } else if (max_) {
        const int64_t hs = static_cast<int64_t>(o) * t_.sh - t_.ph;
        int64_t fix = 0;
        if (hs < 0) fix = (-hs + t_.dh - 1) / t_.dh * t_.dh;
        sm.ReinterpretCast<int32_t>().SetValue(r, static_cast<int32_t>(fix * t_.w));
      } else {
        int64_t hs = static_cast<int64_t>(o) * t_.sh - t_.ph;
        int64_t he = hs + t_.kh < static_cast<int64_t>(t_.h + t_.ph) ? hs + t_.kh : static_cast<int64_t>(t_.h + t_.ph);
        float f = static_cast<float>(he - hs);
        if (!t_.count_include_pad) {
          hs = hs < 0 ? 0 : hs;
          he = he < static_cast<int64_t>(t_.h) ? he : static_cast<int64_t>(t_.h);
          f = static_cast<float>(he - hs);
        }
        sm.SetValue(r, f);
      }
    }
    SyncSToV();
    LocalTensor<uint32_t> rowlane = rowlane_.Get<uint32_t>();
    if (max_) {
      // iv = colfix'd base + row fix + band row offset: the index PyTorch keeps when no tap beats -inf
      LocalTensor<float> iv = iv_.Get<float>();
      LocalTensor<int32_t> tmp = ik_.Get<int32_t>();
      Gather(tmp, sm.ReinterpretCast<int32_t>(), rowlane, 0u, L_);
      Cast(tmp.ReinterpretCast<float>(), tmp, RoundMode::CAST_NONE, L_);
      Add(iv, tabB_.Get<float>(), tmp.ReinterpretCast<float>(), n);
      Adds(iv, iv, static_cast<float>(BandInRow(oh0) * static_cast<int64_t>(t_.w)), n);
    } else if (adaptive_) {
      // goff = (rowstart*wpad + colstart) * 4; tabC = 1 / (lenh * lenw)
      LocalTensor<float> rs = v_.Get<float>();
      Gather(rs, sm, rowlane, 0u, L_);
      LocalTensor<int32_t> goff = goff_.Get<int32_t>();
      Muls(rs, rs, static_cast<float>(t_.wpad), n);
      Cast(goff, rs, RoundMode::CAST_RINT, L_);
      Add(goff, goff, tabA_.Get<int32_t>(), n);
      Muls(goff, goff, 4, n);
      LocalTensor<float> lh = ik_.Get<float>();
      Gather(lh, sm1, rowlane, 0u, L_);
      LocalTensor<float> rec = tabC_.Get<float>();
      Mul(rec, lh, tabB_.Get<float>(), n);
      Duplicate(acc_.Get<float>(), 1.0f, n);
      Div(rec, acc_.Get<float>(), rec, n);
      // lenh stays in w64_ for the row masks
      Adds(w64_.Get<float>(), lh, 0.0f, n);
    } else {
      LocalTensor<float> rec = tabC_.Get<float>();
      if (t_.divisor_override) {
        Duplicate(rec, 1.0f / static_cast<float>(t_.divisor_override), n);
      } else {
        LocalTensor<float> rf = v_.Get<float>();
        Gather(rf, sm, rowlane, 0u, L_);
        Mul(rec, rf, tabA_.Get<float>(), n);
        Duplicate(rf, 1.0f, n);
        Div(rec, rf, rec, n);
      }
    }
  }

  // Adaptive: weight of tap (kh, kw) per lane = clamp(lenh - kh, 0, 1) * clamp(lenw - kw, 0, 1).
  __aicore__ inline void AdaptiveTapWeight(const LocalTensor<float>& wt, uint32_t kh, uint32_t kw) {
    const int32_t n = static_cast<int32_t>(L_);
    LocalTensor<float> tmp = mask_.Get<float>();  // not used: keep API symmetric
    (void)tmp;
    LocalTensor<float> cw = ik_.Get<float>();
    Adds(wt, w64_.Get<float>(), -static_cast<float>(kh), n);
    Mins(wt, wt, 1.0f, n);
    Maxs(wt, wt, 0.0f, n);
    Adds(cw, tabB_.Get<float>(), -static_cast<float>(kw), n);
    Mins(cw, cw, 1.0f, n);
    Maxs(cw, cw, 0.0f, n);
    Mul(wt, wt, cw, n);
  }

  __aicore__ inline void ForwardPlane(uint64_t p) {
    const int32_t n = static_cast<int32_t>(L_);
    LocalTensor<float> bf = bandF_.Get<float>();
    LocalTensor<uint32_t> goff = goff_.Get<uint32_t>();
    LocalTensor<float> acc = acc_.Get<float>(), v = v_.Get<float>();
    for (uint32_t oh0 = 0; oh0 < t_.oh; oh0 += t_.rows) {
      const uint32_t rb = t_.oh - oh0 < t_.rows ? t_.oh - oh0 : t_.rows;
      const uint32_t cnt = rb * t_.ow;
      const int64_t r0 = BandInRow(oh0);
      BandRowTables(oh0, rb);
      LoadBand(p, r0, t_.in_rows, max_ ? -__builtin_inff() : 0.0f);
      if (max_) {
        MaxWithIndices(r0);
      } else {
        Duplicate(acc, 0.0f, n);
        LocalTensor<float> wt = w64_.Get<float>()[L_];
        for (uint32_t kh = 0; kh < t_.kh; ++kh)
          for (uint32_t kw = 0; kw < t_.kw; ++kw) {
            Gather(v, bf, goff, TapBase(kh, kw), L_);
            if (adaptive_) {
              AdaptiveTapWeight(wt, kh, kw);
              Mul(v, v, wt, n);
            }
            Add(acc, acc, v, n);
          }
        Mul(acc, acc, tabC_.Get<float>(), n);
      }
      LocalTensor<T> out = outT_.Get<T>();
      StoreFloat(out, acc, L_);
      SyncVToMte3();
      const uint64_t at = (p * t_.oh + oh0) * t_.ow;
      DataCopyPad(yGm_[at], out, DataCopyExtParams{1, static_cast<uint32_t>(cnt * sizeof(T)), 0, 0, 0});
      if (max_ && idxGm_.GetPhyAddr() != nullptr) {
        LocalTensor<int64_t> w64 = w64_.Get<int64_t>();
        DataCopyPad(idxGm_[at], w64, DataCopyExtParams{1, static_cast<uint32_t>(cnt * 8), 0, 0, 0});
      }
      SyncMte3ToV();
    }
  }

  // Max pooling in one pass over the taps (scan order): upd = [v > M] as 0/1 without Select
  // (d = v - M scaled past any denormal, clamped to [0, 1]; NaN and -inf - -inf give 0), then
  // I += upd * (index - I), M = max(M, v). Padding is -inf and never beats M, so a window whose valid
  // values are all -inf keeps the first valid index, as PyTorch does. Indices are exact floats (< 2^24).
  __aicore__ inline void MaxWithIndices(int64_t r0) {
    const int32_t n = static_cast<int32_t>(L_);
    LocalTensor<float> acc = acc_.Get<float>(), v = v_.Get<float>();
    LocalTensor<float> bf = bandF_.Get<float>();
    LocalTensor<uint32_t> goff = goff_.Get<uint32_t>();
    LocalTensor<float> iv = iv_.Get<float>(), ik = ik_.Get<float>(), ibase = tabA_.Get<float>();
    LocalTensor<float> d = tabC_.Get<float>();
    if (bwd_) return;
    Duplicate(acc, -__builtin_inff(), n);
    // Track the index relative to the lane's base (ibase + row0): one tap is then a constant.
    const float row0 = static_cast<float>(r0 * static_cast<int64_t>(t_.w));
    Sub(iv, iv, ibase, n);
    Adds(iv, iv, -row0, n);
    for (uint32_t kh = 0; kh < t_.kh; ++kh)
      for (uint32_t kw = 0; kw < t_.kw; ++kw) {
        Gather(v, bf, goff, TapBase(kh, kw), L_);
        Sub(d, v, acc, n);
        Muls(d, d, 1.2676506e30f, n);  // 2^100, twice: any positive difference reaches 1
        Muls(d, d, 1.2676506e30f, n);
        Maxs(d, d, 0.0f, n);
        Mins(d, d, 1.0f, n);
        Adds(ik, iv, -static_cast<float>(kh * t_.dh * t_.w + kw * t_.dw), n);
        Mul(ik, ik, d, n);
        Sub(iv, iv, ik, n);
        Max(acc, acc, v, n);
      }
    Add(iv, iv, ibase, n);
    Adds(iv, iv, row0, n);
    if (BandHasNaN()) {
      // PyTorch: a NaN tap always replaces the running max, so the window's max is NaN and its index
      // is the last NaN in scan order. Rare: an exact Compare/Select pass only for bands holding a NaN.
      LocalTensor<uint8_t> mask = mask_.Get<uint8_t>();
      for (uint32_t kh = 0; kh < t_.kh; ++kh)
        for (uint32_t kw = 0; kw < t_.kw; ++kw) {
          Gather(v, bf, goff, TapBase(kh, kw), L_);
          Compare(mask, v, v, CMPMODE::NE, L_);
          Select(acc, mask, v, acc, SELMODE::VSEL_TENSOR_TENSOR_MODE, L_);
          Adds(ik, ibase, row0 + static_cast<float>(kh * t_.dh * t_.w + kw * t_.dw), n);
          Select(iv, mask, ik, iv, SELMODE::VSEL_TENSOR_TENSOR_MODE, L_);
        }
    }
    if (idxGm_.GetPhyAddr() != nullptr) {
      LocalTensor<int32_t> ivi = iv_.Get<int32_t>();
      Cast(ivi, iv, RoundMode::CAST_RINT, L_);
      // int64 indices: interleave (I, 0)
      Gather(w64_.Get<int32_t>(), ivi, wide_.Get<uint32_t>(), 0u, 2 * L_);
    }
  }

  // Whether the float band holds a NaN: x != x as a bit mask, widened to floats and summed.
  __aicore__ inline bool BandHasNaN() {
    LocalTensor<float> bf = bandF_.Get<float>();
    LocalTensor<uint8_t> m = nanMask_.Get<uint8_t>();
    const uint32_t bits = bandAligned_ / 8;
    Compare(m, bf, bf, CMPMODE::NE, bandAligned_);
    LocalTensor<half> h = nanHalf_.Get<half>();
    LocalTensor<float> f = nanF_.Get<float>();
    const uint32_t fn = npu_kernels::AlignUp<uint32_t>(bits, 64);
    Duplicate(f, 0.0f, static_cast<int32_t>(fn));
    Cast(h, m, RoundMode::CAST_NONE, bits);
    Cast(f, h, RoundMode::CAST_NONE, bits);
    const float any = FoldSum(f, small_.Get<float>(), fn);
    SyncVToS();
    return any > 0.0f;
  }

  // ---------------------------------------------------------------- backward
  // Max pooling backward of one band: every output adds its gradient at its argmax. Outputs of one
  // phase have disjoint windows, so their argmax positions differ: one Gather + Add + Scatter per phase
  // over that phase's contiguous block of phase-ordered lanes.
  __aicore__ inline void MaxBackwardBand(int64_t acc_r0, uint32_t rb, const LocalTensor<float>& grad) {
    const int32_t n = static_cast<int32_t>(Lp_);
    LocalTensor<float> bf = bandF_.Get<float>();
    LocalTensor<float> gp = Ph(kGp), idxf = Ph(kIdx), pos = Ph(kPos), a = Ph(kAcc);
    LocalTensor<int32_t> offs = Ph(kOffs).template ReinterpretCast<int32_t>();
    // gradients and int64 index low words, in phase order
    Gather(gp, grad, Ph(kPermG).template ReinterpretCast<uint32_t>(), 0u, Lp_);
    LocalTensor<int32_t> idx32 = idxf.template ReinterpretCast<int32_t>();
    Gather(idx32, w64_.Get<int32_t>(), Ph(kPerm8).template ReinterpretCast<uint32_t>(), 0u, Lp_);
    // UB byte offset of an index: idx * 4 + floor(idx / W) * (wpad - W) * 4 + (lpad - acc_r0 * wpad) * 4,
    // in int32 but for the row, which comes from float (floor((idx + 0.5) / W) is exact here).
    LocalTensor<int32_t> idx4 = a.template ReinterpretCast<int32_t>();
    Muls(idx4, idx32, 4, n);
    Cast(idxf, idx32, RoundMode::CAST_NONE, Lp_);
    Adds(pos, idxf, 0.5f, n);
    Muls(pos, pos, 1.0f / static_cast<float>(t_.w), n);
    Cast(offs, pos, RoundMode::CAST_FLOOR, Lp_);
    Muls(offs, offs, static_cast<int32_t>((t_.wpad - t_.w) * 4), n);
    Add(offs, offs, idx4, n);
    Adds(offs, offs,
         static_cast<int32_t>((static_cast<int64_t>(t_.lpad) - acc_r0 * static_cast<int64_t>(t_.wpad)) * 4), n);
    LocalTensor<uint32_t> uo = offs.template ReinterpretCast<uint32_t>();
    uint32_t start = 0;
    for (uint32_t ph = 0; ph < PhaseRows() * PhaseCols(); ++ph) {
      const uint32_t nl = PhaseLanes(ph, rb);
      if (nl > 0) {
        Gather(a[start], bf, uo[start], 0u, nl);
        Add(a[start], a[start], gp[start], static_cast<int32_t>(nl));
        Scatter(bf, a[start], uo[start], 0u, nl);
      }
      start += npu_kernels::AlignUp<uint32_t>(PhaseLanes(ph, t_.rows), 8);
    }
  }

  __aicore__ inline void FlushRows(uint64_t p, int64_t acc_r0, int64_t from, int64_t to, bool zeros) {
    if (from < 0) from = 0;
    if (to > static_cast<int64_t>(t_.h)) to = t_.h;
    LocalTensor<T> st = bandT_.Get<T>();
    const uint32_t gap = (t_.wpad * sizeof(T) - npu_kernels::AlignUp<uint32_t>(t_.w * sizeof(T), 32)) / 32;
    while (from < to) {
      const uint32_t nr = static_cast<uint32_t>(to - from < t_.in_rows ? to - from : t_.in_rows);
      uint32_t src_row = 0;
      LocalTensor<T> src = st;
      if (zeros) {
        Duplicate(st, T(0), static_cast<int32_t>(nr * t_.wpad));
      } else {
        src_row = static_cast<uint32_t>(from - acc_r0);
        if constexpr (std::is_same_v<T, float>) {
          src = bandF_.Get<float>()[src_row * t_.wpad];  // float: straight from the accumulator band
        } else {
          StoreFloat(st, bandF_.Get<float>()[src_row * t_.wpad], nr * t_.wpad);
        }
        src_row = 0;
      }
      SyncVToMte3();
      DataCopyPad(gxGm_[(p * t_.h + from) * t_.w], src[src_row * t_.wpad + t_.lpad],
                  DataCopyExtParams{static_cast<uint16_t>(nr), static_cast<uint32_t>(t_.w * sizeof(T)), gap, 0, 0});
      SyncMte3ToV();
      from += nr;
    }
  }

  __aicore__ inline void BackwardPlane(uint64_t p) {
    const int32_t n = static_cast<int32_t>(L_);
    LocalTensor<float> bf = bandF_.Get<float>();
    LocalTensor<uint32_t> goff = goff_.Get<uint32_t>();
    LocalTensor<float> g = acc_.Get<float>(), a = v_.Get<float>();
    const uint32_t band = t_.in_rows * t_.wpad;
    Duplicate(bf, 0.0f, static_cast<int32_t>(band));
    int64_t acc_r0 = BandInRow(0);
    for (uint32_t oh0 = 0; oh0 < t_.oh; oh0 += t_.rows) {
      const uint32_t rb = t_.oh - oh0 < t_.rows ? t_.oh - oh0 : t_.rows;
      const uint32_t cnt = rb * t_.ow;
      const int64_t r0 = BandInRow(oh0);
      // Move the accumulator window to start at r0 (rows before it are final).
      if (r0 > acc_r0) {
        const int64_t keep_from = r0;
        const int64_t acc_end = acc_r0 + t_.in_rows;
        FlushRows(p, acc_r0, acc_r0, keep_from < acc_end ? keep_from : acc_end, false);
        if (keep_from > acc_end) FlushRows(p, acc_r0, acc_end, keep_from, true);
        if (keep_from < acc_end) {
          const uint32_t shift = static_cast<uint32_t>(keep_from - acc_r0);
          const uint32_t keep = t_.in_rows - shift;
          DataCopy(bf, bf[shift * t_.wpad], keep * t_.wpad);
          Duplicate(bf[keep * t_.wpad], 0.0f, static_cast<int32_t>(shift * t_.wpad));
        } else {
          Duplicate(bf, 0.0f, static_cast<int32_t>(band));
        }
        acc_r0 = r0;
      }
      if (!max_) BandRowTables(oh0, rb);
      // grad_out of the band, as float
      const uint64_t at = (p * t_.oh + oh0) * t_.ow;
      LocalTensor<T> gt = outT_.Get<T>();
      SetFlag<HardEvent::V_MTE2>(0);
      WaitFlag<HardEvent::V_MTE2>(0);
      DataCopyPad(gt, goGm_[at], DataCopyExtParams{1, static_cast<uint32_t>(cnt * sizeof(T)), 0, 0, 0},
                  DataCopyPadExtParams<T>{false, 0, 0, T(0)});
      LocalTensor<int32_t> idx32 = iv_.Get<int32_t>();
      if (max_) {
        DataCopyPad(w64_.Get<int64_t>(), idxGm_[at], DataCopyExtParams{1, static_cast<uint32_t>(cnt * 8), 0, 0, 0},
                    DataCopyPadExtParams<int64_t>{false, 0, 0, 0});
      }
      SyncMte2ToV();
      LocalTensor<float> gsrc = g;  // grad_out as float: the loaded tile itself for float
      if constexpr (std::is_same_v<T, float>) {
        gsrc = gt;
      } else {
        Cast(g, gt, RoundMode::CAST_NONE, L_);
      }
      if (max_) {
        MaxBackwardBand(acc_r0, rb, gsrc);
        continue;
      } else {
        Mul(g, gsrc, tabC_.Get<float>(), n);  // 1 / divisor
      }
      LocalTensor<int32_t> pos = ik_.Get<int32_t>();
      LocalTensor<uint8_t> mask = mask_.Get<uint8_t>();
      LocalTensor<float> c = w64_.Get<float>()[L_];
      const int32_t row0 = static_cast<int32_t>(r0 * static_cast<int64_t>(t_.w));
      for (uint32_t kh = 0; kh < t_.kh; ++kh)
        for (uint32_t kw = 0; kw < t_.kw; ++kw) {
          const uint32_t base = TapBase(kh, kw);
          LocalTensor<float> contrib = g;
          if (max_) {
            Adds(pos, tabA_.Get<int32_t>(), row0 + static_cast<int32_t>(kh * t_.dh * t_.w + kw * t_.dw), n);
            Compare(mask, idx32, pos, CMPMODE::EQ, L_);
            Select(c, mask, g, 0.0f, SELMODE::VSEL_TENSOR_SCALAR_MODE, L_);
            contrib = c;
          } else if (adaptive_) {
            AdaptiveTapWeight(c, kh, kw);
            Mul(c, c, g, n);
            contrib = c;
          }
          Gather(a, bf, goff, base, cnt);
          Add(a, a, contrib, static_cast<int32_t>(cnt));
          Scatter(bf, a, goff, base, cnt);
        }
    }
    // Flush what is left, then zeros to the bottom of the plane.

    const int64_t acc_end = acc_r0 + t_.in_rows;
    FlushRows(p, acc_r0, acc_r0, acc_end, false);
    if (acc_end < static_cast<int64_t>(t_.h)) FlushRows(p, acc_r0, acc_end, t_.h, true);
  }

  // ---------------------------------------------------------------- adaptive 1x1 (plane means)
  // Row pitch of a plane in UB: one vector repeat when it fits, else whole 64-lane groups for FoldSum.
  __aicore__ inline uint32_t MeanPitch() const {
    const uint32_t hw = t_.h * t_.w;
    return hw <= 64 ? npu_kernels::AlignUp<uint32_t>(hw, 32 / sizeof(T)) : npu_kernels::AlignUp<uint32_t>(hw, 64);
  }
  __aicore__ inline uint32_t MeanGap() const {
    const uint32_t hw = t_.h * t_.w;
    return (MeanPitch() * sizeof(T) - npu_kernels::AlignUp<uint32_t>(hw * sizeof(T), 32)) / 32;
  }

  __aicore__ inline void MeanForward(uint64_t p, uint32_t np) {
    const uint32_t hw = t_.h * t_.w;
    const uint32_t hwp = MeanPitch();
    const uint32_t n = np * hwp;
    LocalTensor<T> in = inQ_.template AllocTensor<T>();
    if (MeanGap() != 0) {
      Duplicate(in, T(0), static_cast<int32_t>(n));  // the gap blocks are not written by the copy
      SetFlag<HardEvent::V_MTE2>(0);
      WaitFlag<HardEvent::V_MTE2>(0);
    }
    DataCopyPad(in, xGm_[p * hw],
                DataCopyExtParams{static_cast<uint16_t>(np), hw * static_cast<uint32_t>(sizeof(T)), 0, MeanGap(), 0},
                DataCopyPadExtParams<T>{true, 0, 0, T(0)});
    inQ_.EnQue(in);
    in = inQ_.template DeQue<T>();
    LocalTensor<float> bf = bandF_.Get<float>();
    if constexpr (std::is_same_v<T, float>) {
      bf = in;  // reduced in place (FoldSum below destroys it; the tile is freed after)
    } else {
      Cast(bf, in, RoundMode::CAST_NONE, n);
    }
    LocalTensor<float> sums = tabA_.Get<float>();
    if (hwp <= 64) {
      WholeReduceSum(sums, bf, static_cast<int32_t>(hwp), static_cast<int32_t>(np), 1, 1,
                     static_cast<int32_t>(hwp * sizeof(float) / 32));
    } else {
      LocalTensor<float> sm = small_.Get<float>();
      for (uint32_t k = 0; k < np; ++k) {
        const float s = FoldSum(bf[k * hwp], sm, hwp);
        SyncVToS();
        sums.SetValue(k, s);
      }
      SyncSToV();
    }
    inQ_.FreeTensor(in);
    Muls(sums, sums, 1.0f / static_cast<float>(hw), static_cast<int32_t>(np));
    LocalTensor<T> out = bandT_.Get<T>();
    StoreFloat(out, sums, np);
    SyncVToMte3();
    DataCopyPad(yGm_[p], out, DataCopyExtParams{1, np * static_cast<uint32_t>(sizeof(T)), 0, 0, 0});
    SyncMte3ToV();
  }

  __aicore__ inline void MeanBackward(uint64_t p, uint32_t np) {
    const uint32_t hw = t_.h * t_.w;
    const uint32_t hwp = MeanPitch();
    const uint32_t n = np * hwp;
    LocalTensor<T> in = inQ_.template AllocTensor<T>();
    DataCopyPad(in, goGm_[p], DataCopyExtParams{1, np * static_cast<uint32_t>(sizeof(T)), 0, 0, 0},
                DataCopyPadExtParams<T>{false, 0, 0, T(0)});
    inQ_.EnQue(in);
    in = inQ_.template DeQue<T>();
    LocalTensor<float> g = tabB_.Get<float>();
    LocalTensor<float> gf = AsFloat(g, in, np);
    Muls(g, gf, 1.0f / static_cast<float>(hw), static_cast<int32_t>(np));
    inQ_.FreeTensor(in);
    // grad / hw replicated over each plane's lanes with one Gather
    LocalTensor<float> bf = bandF_.Get<float>();
    LocalTensor<uint32_t> offs = tabA_.Get<uint32_t>();
    if (n != meanOffsN_) {  // the same table for every step of np planes
      RowOffsets(offs, bf, n, hwp, 4);
      meanOffsN_ = n;
    }
    LocalTensor<T> out = bandT_.Get<T>();
    if constexpr (std::is_same_v<T, float>) {
      Gather(out, g, offs, 0u, n);
    } else {
      Gather(bf, g, offs, 0u, n);
      StoreFloat(out, bf, n);
    }
    SyncVToMte3();
    DataCopyPad(gxGm_[p * hw], out,
                DataCopyExtParams{static_cast<uint16_t>(np), hw * static_cast<uint32_t>(sizeof(T)), MeanGap(), 0, 0});
    SyncMte3ToV();
  }

  PoolTiling t_;
  bool bwd_ = false, max_ = false, adaptive_ = false;
  uint32_t L_ = 0, smallN_ = 0, bandAligned_ = 0, Lp_ = 0, meanOffsN_ = 0;
  TPipe pipe_;
  TQue<TPosition::VECIN, 1> inQ_;
  TBuf<TPosition::VECCALC> bandF_, bandT_, small_, rowlane_, goff_, tabA_, tabB_, tabC_, v_, acc_, iv_, ik_, mask_,
      outT_, w64_, wide_, nanMask_, nanHalf_, nanF_, ph_;
  GlobalTensor<T> xGm_, yGm_, goGm_, gxGm_;
  GlobalTensor<int64_t> idxGm_;
};

}  // namespace

#define NPU_POOL_ENTRY(NAME, T)                                                                              \
  extern "C" __global__ __aicore__ void pool_fwd_kernel_##NAME(GM_ADDR x, GM_ADDR y, GM_ADDR idx,            \
                                                               GM_ADDR tiling) {                             \
    GET_TILING_DATA_WITH_STRUCT(PoolTiling, t, tiling);                                                      \
    PoolKernel<T> op;                                                                                        \
    op.Init(x, y, idx, t, false);                                                                            \
    op.Process();                                                                                            \
  }                                                                                                          \
  extern "C" __global__ __aicore__ void pool_bwd_kernel_##NAME(GM_ADDR go, GM_ADDR idx, GM_ADDR gx,          \
                                                               GM_ADDR tiling) {                             \
    GET_TILING_DATA_WITH_STRUCT(PoolTiling, t, tiling);                                                      \
    PoolKernel<T> op;                                                                                        \
    op.Init(go, idx, gx, t, true);                                                                           \
    op.Process();                                                                                            \
  }
NPU_POOL_ENTRY(float, float)
NPU_POOL_ENTRY(half, half)
NPU_POOL_ENTRY(bf16, bfloat16_t)
#undef NPU_POOL_ENTRY
