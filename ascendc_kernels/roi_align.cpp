// RoIAlign forward in Ascend C (see roi_align.h for the design).
#include "roi_align.h"

#include <cmath>

#include "kernel_operator.h"
#include "norm_util.h"
#include "reduce_helpers.h"

using namespace AscendC;

namespace npu_kernels {

RoiAlignTiling roi_align_tiling(uint32_t rois, uint32_t batch, uint32_t c, uint32_t h, uint32_t w, uint32_t ph,
                                uint32_t pw, int32_t sampling, bool aligned, double spatial_scale,
                                const SocInfo& soc) {
  RoiAlignTiling t{};
  t.rois = rois;
  t.batch = batch;
  t.c = c;
  t.h = h;
  t.w = w;
  t.ph = ph;
  t.pw = pw;
  t.sampling = sampling;
  t.aligned = aligned ? 1 : 0;
  t.spatial_scale = spatial_scale;
  if (rois == 0 || c == 0 || h == 0 || w == 0 || ph == 0 || pw == 0) return t;
  const uint64_t floats = (soc.ub_bytes - 8 * 1024) / 4 - 64;  // 64: the RoI's five values
  const uint64_t cp = AlignUp<uint64_t>(c, 8);
  uint64_t acc = uint64_t(pw) * cp;
  if (acc > floats / 4) acc = AlignDown<uint64_t>(floats / 4, 8);
  if (acc < uint64_t(pw) * 8) return t;
  const uint64_t rows = AlignDown<uint64_t>(floats - acc, 8);
  if (rows < uint64_t(2) * w * 8) return t;  // two whole map rows of 8 channels
  t.acc_floats = static_cast<uint32_t>(acc);
  t.row_floats = static_cast<uint32_t>(rows);
  const ItemSplit sp = SplitItems(rois, uint64_t(rois) * ph * pw * c * 16, soc.vector_cores, 64 * 1024);
  t.rois_per_core = static_cast<uint32_t>(sp.per_core);
  t.block_dim = sp.block_dim;
  // Backward: channel chunks of >= 64 (Axpy length) while the images alone leave cores idle.
  uint32_t chunks = 1;
  if (batch < uint32_t(soc.vector_cores)) chunks = CeilDivU<uint32_t>(uint32_t(soc.vector_cores), batch);
  const uint32_t by_width = CeilDivU<uint32_t>(c, 64);
  if (chunks > by_width) chunks = by_width;
  if (chunks < 1) chunks = 1;
  t.chunk = AlignUp<uint32_t>(CeilDivU<uint32_t>(c, chunks), 8);
  t.chunks = CeilDivU<uint32_t>(c, t.chunk);
  const uint64_t items = uint64_t(batch) * t.chunks;
  const ItemSplit gs = SplitItems(items, items * 64 * 1024, soc.vector_cores, 64 * 1024);
  t.items_per_core = static_cast<uint32_t>(gs.per_core);
  t.grad_block_dim = gs.block_dim;
  t.ok = 1;
  return t;
}

}  // namespace npu_kernels

namespace {

using npu_kernels::RoiAlignTiling;
using namespace nn_kernels;
using namespace npu_kernels::reduce_helpers;

// One sample coordinate along a dim of `size`, as torchvision's bilinear_interpolate: invalid
// (outside [-1, size]) or the low / high source index and the weight of the high one.
struct Tap {
  bool valid;
  int32_t lo, hi;
  float l;  // weight of hi; lo's is 1 - l
};

__aicore__ inline Tap MakeTap(float v, int32_t size) {
  Tap t{false, 0, 0, 0.0f};
  if (!(v >= -1.0f && v <= static_cast<float>(size))) return t;  // (NaN too: the host rejects it anyway)
  if (v <= 0.0f) v = 0.0f;
  t.valid = true;
  t.lo = static_cast<int32_t>(v);
  if (t.lo >= size - 1) {
    t.lo = t.hi = size - 1;
    v = static_cast<float>(t.lo);
  } else {
    t.hi = t.lo + 1;
  }
  t.l = v - static_cast<float>(t.lo);
  return t;
}

// A RoI's geometry and sampling grid, as torchvision's CPU kernel computes them (float, its order of
// operations; the coordinates times the double scale rounded to float as there).
struct RoiGeom {
  int32_t b;
  float start_w, start_h, bin_w, bin_h, count;
  uint32_t gh, gw;
  int32_t xmin, xmax;  // the column window every valid sample reads (xmax < xmin: none)

  __aicore__ inline float SampleX(uint32_t p, uint32_t i) const {
    return start_w + static_cast<float>(p) * bin_w + static_cast<float>(i + .5f) * bin_w / static_cast<float>(gw);
  }
  __aicore__ inline float SampleY(uint32_t p, uint32_t i) const {
    return start_h + static_cast<float>(p) * bin_h + static_cast<float>(i + .5f) * bin_h / static_cast<float>(gh);
  }
};

__aicore__ inline RoiGeom MakeGeom(const LocalTensor<float>& r, const RoiAlignTiling& t) {
  RoiGeom g{};
  g.b = static_cast<int32_t>(r.GetValue(0));  // checked in range by the host
  const double off = t.aligned ? 0.5 : 0.0;
  g.start_w = static_cast<float>(double(r.GetValue(1)) * t.spatial_scale - off);
  g.start_h = static_cast<float>(double(r.GetValue(2)) * t.spatial_scale - off);
  const float end_w = static_cast<float>(double(r.GetValue(3)) * t.spatial_scale - off);
  const float end_h = static_cast<float>(double(r.GetValue(4)) * t.spatial_scale - off);
  float rw = end_w - g.start_w, rh = end_h - g.start_h;
  if (!t.aligned) {
    rw = rw > 1.0f ? rw : 1.0f;
    rh = rh > 1.0f ? rh : 1.0f;
  }
  g.bin_h = rh / static_cast<float>(t.ph);
  g.bin_w = rw / static_cast<float>(t.pw);
  g.gh = t.sampling > 0 ? uint32_t(t.sampling) : uint32_t(std::ceil(rh / static_cast<float>(t.ph)));
  g.gw = t.sampling > 0 ? uint32_t(t.sampling) : uint32_t(std::ceil(rw / static_cast<float>(t.pw)));
  const uint32_t n = g.gh * g.gw;
  g.count = static_cast<float>(n > 1 ? n : 1);
  g.xmin = static_cast<int32_t>(t.w);
  g.xmax = -1;
  for (uint32_t p = 0; p < t.pw; ++p)
    for (uint32_t i = 0; i < g.gw; ++i) {
      const Tap tx = MakeTap(g.SampleX(p, i), static_cast<int32_t>(t.w));
      if (!tx.valid) continue;
      if (tx.lo < g.xmin) g.xmin = tx.lo;
      if (tx.hi > g.xmax) g.xmax = tx.hi;
    }
  return g;
}

// Channels per pass for a window of ww columns: what two window rows and the bin rows leave room for.
__aicore__ inline uint32_t PassChannels(const RoiAlignTiling& t, uint32_t ww, uint32_t limit) {
  uint32_t cc = t.row_floats / (2 * ww);
  const uint32_t cc_acc = t.acc_floats / t.pw;
  if (cc > cc_acc) cc = cc_acc;
  cc = cc / 8 * 8;
  const uint32_t cp = npu_kernels::AlignUp<uint32_t>(limit, 8);
  return cc > cp ? cp : cc;
}

class RoiAlignKernel {
 public:
  __aicore__ inline void Init(GM_ADDR x, GM_ADDR rois, GM_ADDR y, const RoiAlignTiling& t) {
    t_ = t;
    xGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(x), uint64_t(t.batch) * t.h * t.w * t.c);
    rGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(rois), uint64_t(t.rois) * 5);
    yGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(y), uint64_t(t.rois) * t.ph * t.pw * t.c);
    pipe_.InitBuffer(rows_, t.row_floats * sizeof(float));
    pipe_.InitBuffer(acc_, t.acc_floats * sizeof(float));
    pipe_.InitBuffer(roi_, 8 * sizeof(float));
  }

  __aicore__ inline void Process() {
    const uint64_t first = uint64_t(GetBlockIdx()) * t_.rois_per_core;
    uint64_t last = first + t_.rois_per_core;
    if (last > t_.rois) last = t_.rois;
    for (uint64_t k = first; k < last; ++k) Roi(k);
  }

 private:
  __aicore__ inline void Roi(uint64_t k) {
    LocalTensor<float> r = roi_.Get<float>();
    SyncSToMte2();  // the previous RoI's scalar reads are done
    CopyInContiguous(r, rGm_[k * 5], 5);
    SyncMte2ToS();
    const RoiGeom g = MakeGeom(r, t_);
    const uint32_t ww = g.xmax >= g.xmin ? uint32_t(g.xmax - g.xmin + 1) : 1;
    const uint32_t cc = PassChannels(t_, ww, t_.c);
    LocalTensor<float> rows = rows_.Get<float>(), acc = acc_.Get<float>();
    const uint64_t plane = uint64_t(t_.h) * t_.w * t_.c;
    for (uint32_t c0 = 0; c0 < t_.c; c0 += cc) {
      const uint32_t n = t_.c - c0 < cc ? t_.c - c0 : cc;  // channels this pass
      const uint32_t np = npu_kernels::AlignUp<uint32_t>(n, 8);
      const LocalTensor<float> ra = rows, rb = rows[ww * np];
      for (uint32_t py = 0; py < t_.ph; ++py) {
        SyncMte3ToV();  // the previous bin row has left
        Duplicate(acc, 0.0f, static_cast<int32_t>(t_.pw * np));
        for (uint32_t iy = 0; iy < g.gh; ++iy) {
          const Tap ty = MakeTap(g.SampleY(py, iy), static_cast<int32_t>(t_.h));
          if (!ty.valid || g.xmax < g.xmin) continue;
          SyncVToMte2();  // the previous sample row's Axpys have read the rows
          const uint64_t base = uint64_t(g.b) * plane + uint64_t(g.xmin) * t_.c + c0;
          CopyInRows(ra, xGm_[base + uint64_t(ty.lo) * t_.w * t_.c], ww, n, t_.c, np);
          if (ty.hi != ty.lo) CopyInRows(rb, xGm_[base + uint64_t(ty.hi) * t_.w * t_.c], ww, n, t_.c, np);
          SyncMte2ToV();
          const LocalTensor<float>& rh_row = ty.hi != ty.lo ? rb : ra;
          const float ly = ty.l, hy = 1.0f - ty.l;
          for (uint32_t px = 0; px < t_.pw; ++px) {
            const LocalTensor<float> a = acc[px * np];
            for (uint32_t ix = 0; ix < g.gw; ++ix) {
              const Tap tx = MakeTap(g.SampleX(px, ix), static_cast<int32_t>(t_.w));
              if (!tx.valid) continue;
              const float lx = tx.l, hx = 1.0f - tx.l;
              const uint32_t lo = uint32_t(tx.lo - g.xmin) * np, hi = uint32_t(tx.hi - g.xmin) * np;
              Axpy(a, ra[lo], hy * hx, static_cast<int32_t>(n));
              Axpy(a, ra[hi], hy * lx, static_cast<int32_t>(n));
              Axpy(a, rh_row[lo], ly * hx, static_cast<int32_t>(n));
              Axpy(a, rh_row[hi], ly * lx, static_cast<int32_t>(n));
            }
          }
        }
        Muls(acc, acc, 1.0f / g.count, static_cast<int32_t>(t_.pw * np));
        SyncVToMte3();
        CopyOutRows(yGm_[(k * t_.ph + py) * t_.pw * t_.c + c0], acc, t_.pw, n, t_.c, np);
      }
    }
  }

  RoiAlignTiling t_;
  TPipe pipe_;
  TBuf<TPosition::VECCALC> rows_, acc_, roi_;
  GlobalTensor<float> xGm_, rGm_, yGm_;
};

class RoiAlignGradKernel {
 public:
  __aicore__ inline void Init(GM_ADDR gout, GM_ADDR rois, GM_ADDR gin, const RoiAlignTiling& t) {
    t_ = t;
    gGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(gout), uint64_t(t.rois) * t.ph * t.pw * t.c);
    rGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(rois), uint64_t(t.rois) * 5);
    xGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(gin), uint64_t(t.batch) * t.h * t.w * t.c);
    pipe_.InitBuffer(rows_, t.row_floats * sizeof(float));
    pipe_.InitBuffer(acc_, t.acc_floats * sizeof(float));
    pipe_.InitBuffer(roi_, 8 * sizeof(float));
  }

  __aicore__ inline void Process() {
    const uint64_t items = uint64_t(t_.batch) * t_.chunks;
    const uint64_t first = uint64_t(GetBlockIdx()) * t_.items_per_core;
    uint64_t last = first + t_.items_per_core;
    if (last > items) last = items;
    for (uint64_t it = first; it < last; ++it) {
      const int32_t b = static_cast<int32_t>(it / t_.chunks);
      const uint32_t c0 = static_cast<uint32_t>(it % t_.chunks) * t_.chunk;
      const uint32_t cn = t_.c - c0 < t_.chunk ? t_.c - c0 : t_.chunk;
      for (uint64_t k = 0; k < t_.rois; ++k) Roi(k, b, c0, cn);
    }
  }

 private:
  __aicore__ inline void Roi(uint64_t k, int32_t b, uint32_t c_begin, uint32_t c_count) {
    LocalTensor<float> r = roi_.Get<float>();
    SyncSToMte2();
    CopyInContiguous(r, rGm_[k * 5], 5);
    SyncMte2ToS();
    if (static_cast<int32_t>(r.GetValue(0)) != b) return;
    const RoiGeom g = MakeGeom(r, t_);
    if (g.xmax < g.xmin) return;
    const uint32_t ww = uint32_t(g.xmax - g.xmin + 1);
    const uint32_t cc = PassChannels(t_, ww, c_count);
    LocalTensor<float> rows = rows_.Get<float>(), acc = acc_.Get<float>();
    const uint64_t plane = uint64_t(t_.h) * t_.w * t_.c;
    for (uint32_t c0 = c_begin; c0 < c_begin + c_count; c0 += cc) {
      const uint32_t n = c_begin + c_count - c0 < cc ? c_begin + c_count - c0 : cc;
      const uint32_t np = npu_kernels::AlignUp<uint32_t>(n, 8);
      const LocalTensor<float> ra = rows, rb = rows[ww * np];
      const int32_t cnt = static_cast<int32_t>(n);
      for (uint32_t py = 0; py < t_.ph; ++py) {
        // This bin row's gradient over the sample count: [pw][n].
        SyncVToMte2();
        CopyInRows(acc, gGm_[(k * t_.ph + py) * t_.pw * t_.c + c0], t_.pw, n, t_.c, np);
        SyncMte2ToV();
        Muls(acc, acc, 1.0f / g.count, static_cast<int32_t>(t_.pw * np));
        for (uint32_t iy = 0; iy < g.gh; ++iy) {
          const Tap ty = MakeTap(g.SampleY(py, iy), static_cast<int32_t>(t_.h));
          if (!ty.valid) continue;
          // Read-modify-write of the two gradient rows of the window (this item owns them).
          SyncVToMte2();
          SyncMte3ToMte2();  // the previous sample row's write-back has landed
          const uint64_t base = uint64_t(g.b) * plane + uint64_t(g.xmin) * t_.c + c0;
          const uint64_t lo_at = base + uint64_t(ty.lo) * t_.w * t_.c, hi_at = base + uint64_t(ty.hi) * t_.w * t_.c;
          CopyInRows(ra, xGm_[lo_at], ww, n, t_.c, np);
          if (ty.hi != ty.lo) CopyInRows(rb, xGm_[hi_at], ww, n, t_.c, np);
          SyncMte2ToV();
          const LocalTensor<float>& rh_row = ty.hi != ty.lo ? rb : ra;
          const float ly = ty.l, hy = 1.0f - ty.l;
          for (uint32_t px = 0; px < t_.pw; ++px) {
            const LocalTensor<float> gb = acc[px * np];
            for (uint32_t ix = 0; ix < g.gw; ++ix) {
              const Tap tx = MakeTap(g.SampleX(px, ix), static_cast<int32_t>(t_.w));
              if (!tx.valid) continue;
              const float lx = tx.l, hx = 1.0f - tx.l;
              const uint32_t lo = uint32_t(tx.lo - g.xmin) * np, hi = uint32_t(tx.hi - g.xmin) * np;
              Axpy(ra[lo], gb, hy * hx, cnt);
              Axpy(ra[hi], gb, hy * lx, cnt);
              Axpy(rh_row[lo], gb, ly * hx, cnt);
              Axpy(rh_row[hi], gb, ly * lx, cnt);
            }
          }
          SyncVToMte3();
          CopyOutRows(xGm_[lo_at], ra, ww, n, t_.c, np);
          if (ty.hi != ty.lo) CopyOutRows(xGm_[hi_at], rb, ww, n, t_.c, np);
        }
      }
    }
    SyncMte3ToMte2();  // the last write-back lands before the next RoI reads
  }

  __aicore__ inline void SyncMte3ToMte2() { SyncPipes<HardEvent::MTE3_MTE2>(); }

  RoiAlignTiling t_;
  TPipe pipe_;
  TBuf<TPosition::VECCALC> rows_, acc_, roi_;
  GlobalTensor<float> gGm_, rGm_, xGm_;
};

}  // namespace

extern "C" __global__ __aicore__ void roi_align_kernel(GM_ADDR x, GM_ADDR rois, GM_ADDR y, GM_ADDR tiling) {
  GET_TILING_DATA_WITH_STRUCT(RoiAlignTiling, t, tiling);
  RoiAlignKernel op;
  op.Init(x, rois, y, t);
  op.Process();
}
extern "C" __global__ __aicore__ void roi_align_grad_kernel(GM_ADDR gout, GM_ADDR rois, GM_ADDR gin, GM_ADDR tiling) {
  GET_TILING_DATA_WITH_STRUCT(RoiAlignTiling, t, tiling);
  RoiAlignGradKernel op;
  op.Init(gout, rois, gin, t);
  op.Process();
}
