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
  if (v < -1.0f || v > static_cast<float>(size)) return t;
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
  // x in [0, pw * gw) of the bin column / sample column order, as the CPU computes it.
  __aicore__ inline float SampleX(uint32_t p, uint32_t i) const {
    return start_w_ + static_cast<float>(p) * bin_w_ + static_cast<float>(i + .5f) * bin_w_ / static_cast<float>(gw_);
  }
  __aicore__ inline float SampleY(uint32_t p, uint32_t i) const {
    return start_h_ + static_cast<float>(p) * bin_h_ + static_cast<float>(i + .5f) * bin_h_ / static_cast<float>(gh_);
  }

  __aicore__ inline void Roi(uint64_t k) {
    LocalTensor<float> r = roi_.Get<float>();
    SyncSToMte2();  // the previous RoI's scalar reads are done
    CopyInContiguous(r, rGm_[k * 5], 5);
    SyncMte2ToS();
    const int32_t b = static_cast<int32_t>(r.GetValue(0));  // checked in range by the host
    // torchvision: the coordinates times the (double) scale, minus the offset, rounded to float.
    const double off = t_.aligned ? 0.5 : 0.0;
    start_w_ = static_cast<float>(double(r.GetValue(1)) * t_.spatial_scale - off);
    start_h_ = static_cast<float>(double(r.GetValue(2)) * t_.spatial_scale - off);
    const float end_w = static_cast<float>(double(r.GetValue(3)) * t_.spatial_scale - off);
    const float end_h = static_cast<float>(double(r.GetValue(4)) * t_.spatial_scale - off);
    float rw = end_w - start_w_, rh = end_h - start_h_;
    if (!t_.aligned) {
      rw = rw > 1.0f ? rw : 1.0f;
      rh = rh > 1.0f ? rh : 1.0f;
    }
    bin_h_ = rh / static_cast<float>(t_.ph);
    bin_w_ = rw / static_cast<float>(t_.pw);
    gh_ = t_.sampling > 0 ? uint32_t(t_.sampling) : uint32_t(std::ceil(rh / static_cast<float>(t_.ph)));
    gw_ = t_.sampling > 0 ? uint32_t(t_.sampling) : uint32_t(std::ceil(rw / static_cast<float>(t_.pw)));
    const uint32_t g = gh_ * gw_;
    const float count = static_cast<float>(g > 1 ? g : 1);
    // The column window every valid sample reads.
    int32_t xmin = static_cast<int32_t>(t_.w), xmax = -1;
    for (uint32_t p = 0; p < t_.pw; ++p)
      for (uint32_t i = 0; i < gw_; ++i) {
        const Tap tx = MakeTap(SampleX(p, i), static_cast<int32_t>(t_.w));
        if (!tx.valid) continue;
        if (tx.lo < xmin) xmin = tx.lo;
        if (tx.hi > xmax) xmax = tx.hi;
      }
    const uint32_t ww = xmax >= xmin ? uint32_t(xmax - xmin + 1) : 1;
    // Channels per pass: what the two rows of the window and the accumulators leave room for.
    uint32_t cc = t_.row_floats / (2 * ww);
    const uint32_t cc_acc = t_.acc_floats / t_.pw;
    if (cc > cc_acc) cc = cc_acc;
    cc = cc / 8 * 8;
    const uint32_t cp = npu_kernels::AlignUp<uint32_t>(t_.c, 8);
    if (cc > cp) cc = cp;
    LocalTensor<float> rows = rows_.Get<float>(), acc = acc_.Get<float>();
    const uint64_t plane = uint64_t(t_.h) * t_.w * t_.c;
    for (uint32_t c0 = 0; c0 < t_.c; c0 += cc) {
      const uint32_t n = t_.c - c0 < cc ? t_.c - c0 : cc;  // channels this pass
      const uint32_t np = npu_kernels::AlignUp<uint32_t>(n, 8);
      const LocalTensor<float> ra = rows, rb = rows[ww * np];
      for (uint32_t py = 0; py < t_.ph; ++py) {
        SyncMte3ToV();  // the previous bin row has left
        Duplicate(acc, 0.0f, static_cast<int32_t>(t_.pw * np));
        for (uint32_t iy = 0; iy < gh_; ++iy) {
          const Tap ty = MakeTap(SampleY(py, iy), static_cast<int32_t>(t_.h));
          if (!ty.valid || xmax < xmin) continue;
          SyncVToMte2();  // the previous sample row's Axpys have read the rows
          const uint64_t base = uint64_t(b) * plane + uint64_t(xmin) * t_.c + c0;
          CopyInRows(ra, xGm_[base + uint64_t(ty.lo) * t_.w * t_.c], ww, n, t_.c, np);
          if (ty.hi != ty.lo) CopyInRows(rb, xGm_[base + uint64_t(ty.hi) * t_.w * t_.c], ww, n, t_.c, np);
          SyncMte2ToV();
          const LocalTensor<float>& rh_row = ty.hi != ty.lo ? rb : ra;
          const float ly = ty.l, hy = 1.0f - ty.l;
          for (uint32_t px = 0; px < t_.pw; ++px) {
            const LocalTensor<float> a = acc[px * np];
            for (uint32_t ix = 0; ix < gw_; ++ix) {
              const Tap tx = MakeTap(SampleX(px, ix), static_cast<int32_t>(t_.w));
              if (!tx.valid) continue;
              const float lx = tx.l, hx = 1.0f - tx.l;
              const uint32_t lo = uint32_t(tx.lo - xmin) * np, hi = uint32_t(tx.hi - xmin) * np;
              Axpy(a, ra[lo], hy * hx, static_cast<int32_t>(n));
              Axpy(a, ra[hi], hy * lx, static_cast<int32_t>(n));
              Axpy(a, rh_row[lo], ly * hx, static_cast<int32_t>(n));
              Axpy(a, rh_row[hi], ly * lx, static_cast<int32_t>(n));
            }
          }
        }
        Muls(acc, acc, 1.0f / count, static_cast<int32_t>(t_.pw * np));
        SyncVToMte3();
        CopyOutRows(yGm_[(k * t_.ph + py) * t_.pw * t_.c + c0], acc, t_.pw, n, t_.c, np);
      }
    }
  }

  RoiAlignTiling t_;
  float start_w_ = 0, start_h_ = 0, bin_w_ = 0, bin_h_ = 0;
  uint32_t gh_ = 1, gw_ = 1;
  TPipe pipe_;
  TBuf<TPosition::VECCALC> rows_, acc_, roi_;
  GlobalTensor<float> xGm_, rGm_, yGm_;
};

}  // namespace

extern "C" __global__ __aicore__ void roi_align_kernel(GM_ADDR x, GM_ADDR rois, GM_ADDR y, GM_ADDR tiling) {
  GET_TILING_DATA_WITH_STRUCT(RoiAlignTiling, t, tiling);
  RoiAlignKernel op;
  op.Init(x, rois, y, t);
  op.Process();
}
