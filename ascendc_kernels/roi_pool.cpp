// RoIPool forward in Ascend C (see roi_pool.h for the design).
#include "roi_pool.h"

#include <cfloat>
#include <cmath>

#include "kernel_operator.h"
#include "norm_util.h"
#include "reduce_helpers.h"

using namespace AscendC;

namespace npu_kernels {

RoiPoolTiling roi_pool_tiling(uint32_t rois, uint32_t batch, uint32_t c, uint32_t h, uint32_t w, uint32_t ph,
                              uint32_t pw, float spatial_scale, const SocInfo& soc) {
  RoiPoolTiling t{};
  t.rois = rois;
  t.batch = batch;
  t.c = c;
  t.h = h;
  t.w = w;
  t.ph = ph;
  t.pw = pw;
  t.spatial_scale = spatial_scale;
  if (rois == 0 || c == 0 || h == 0 || w == 0 || ph == 0 || pw == 0) return t;
  // Channels per pass: 64 at least; the bins' maxima and positions for pw bins, a window row of w pixels.
  const uint64_t floats = (soc.ub_bytes - 8 * 1024) / 4 - 64;
  const uint64_t cp = AlignUp<uint64_t>(c, 64);
  uint64_t acc = uint64_t(3) * pw * cp;  // maxima, float positions, int32 positions
  if (acc > floats / 2) acc = AlignDown<uint64_t>(floats / 2, 64);
  if (acc < uint64_t(3) * pw * 64) return t;
  const uint64_t rows = floats - acc;
  if (rows < uint64_t(w) * 64) return t;
  t.cp = static_cast<uint32_t>(acc / (3 * pw) / 64 * 64);  // channel pitch of a pass
  t.row_floats = static_cast<uint32_t>(rows);
  const ItemSplit sp = SplitItems(rois, uint64_t(rois) * ph * pw * c * 16, soc.vector_cores, 64 * 1024);
  t.rois_per_core = static_cast<uint32_t>(sp.per_core);
  t.block_dim = sp.block_dim;
  t.ok = 1;
  return t;
}

}  // namespace npu_kernels

namespace {

using npu_kernels::RoiPoolTiling;
using namespace nn_kernels;
using namespace npu_kernels::reduce_helpers;

__aicore__ inline int32_t ClampI(int32_t v, int32_t lo, int32_t hi) { return v < lo ? lo : (v > hi ? hi : v); }

class RoiPoolKernel {
 public:
  __aicore__ inline void Init(GM_ADDR x, GM_ADDR rois, GM_ADDR y, GM_ADDR argmax, const RoiPoolTiling& t) {
    t_ = t;
    xGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(x), uint64_t(t.batch) * t.h * t.w * t.c);
    rGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(rois), uint64_t(t.rois) * 5);
    const uint64_t n = uint64_t(t.rois) * t.ph * t.pw * t.c;
    yGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(y), n);
    aGm_.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t*>(argmax), n);
    pipe_.InitBuffer(row_, t.row_floats * sizeof(float));
    pipe_.InitBuffer(acc_, t.pw * t.cp * sizeof(float));
    pipe_.InitBuffer(idx_, t.pw * t.cp * sizeof(float));
    pipe_.InitBuffer(idxi_, t.pw * t.cp * sizeof(int32_t));
    pipe_.InitBuffer(bits_, t.cp / 8 < 32 ? 32 : t.cp / 8);
    pipe_.InitBuffer(roi_, 8 * sizeof(float));
  }

  __aicore__ inline void Process() {
    const uint64_t first = uint64_t(GetBlockIdx()) * t_.rois_per_core;
    uint64_t last = first + t_.rois_per_core;
    if (last > t_.rois) last = t_.rois;
    for (uint64_t k = first; k < last; ++k) Roi(k);
  }

 private:
  // torchvision's bin bounds along one dim: [start, end) clamped into [0, size].
  __aicore__ inline void Bin(uint32_t p, float bin, int32_t roi_start, int32_t size, int32_t* s, int32_t* e) const {
    const int32_t a = static_cast<int32_t>(std::floor(static_cast<float>(p) * bin));
    const int32_t b = static_cast<int32_t>(std::ceil(static_cast<float>(p + 1) * bin));
    *s = ClampI(a + roi_start, 0, size);
    *e = ClampI(b + roi_start, 0, size);
  }

  __aicore__ inline void Roi(uint64_t k) {
    LocalTensor<float> r = roi_.Get<float>();
    SyncSToMte2();
    CopyInContiguous(r, rGm_[k * 5], 5);
    SyncMte2ToS();
    const int32_t b = static_cast<int32_t>(r.GetValue(0));  // checked in range by the host
    const float sc = t_.spatial_scale;
    const int32_t sw = static_cast<int32_t>(std::round(r.GetValue(1) * sc));
    const int32_t sh = static_cast<int32_t>(std::round(r.GetValue(2) * sc));
    const int32_t ew = static_cast<int32_t>(std::round(r.GetValue(3) * sc));
    const int32_t eh = static_cast<int32_t>(std::round(r.GetValue(4) * sc));
    const int32_t rw = ew - sw + 1 > 1 ? ew - sw + 1 : 1, rh = eh - sh + 1 > 1 ? eh - sh + 1 : 1;
    const float bin_h = static_cast<float>(rh) / static_cast<float>(t_.ph);
    const float bin_w = static_cast<float>(rw) / static_cast<float>(t_.pw);
    const int32_t H = static_cast<int32_t>(t_.h), W = static_cast<int32_t>(t_.w);
    // The column window of all bins.
    int32_t wmin = W, wmax = 0;
    for (uint32_t px = 0; px < t_.pw; ++px) {
      int32_t s, e;
      Bin(px, bin_w, sw, W, &s, &e);
      if (e > s) {
        if (s < wmin) wmin = s;
        if (e > wmax) wmax = e;
      }
    }
    const uint32_t ww = wmax > wmin ? uint32_t(wmax - wmin) : 1;
    uint32_t cc = t_.row_floats / ww / 64 * 64;
    if (cc > t_.cp) cc = t_.cp;
    LocalTensor<float> row = row_.Get<float>(), acc = acc_.Get<float>(), idx = idx_.Get<float>();
    LocalTensor<uint8_t> bits = bits_.Get<uint8_t>();
    const uint64_t plane = uint64_t(t_.h) * t_.w * t_.c;
    for (uint32_t c0 = 0; c0 < t_.c; c0 += cc) {
      const uint32_t n = t_.c - c0 < cc ? t_.c - c0 : cc;
      const uint32_t np = npu_kernels::AlignUp<uint32_t>(n, 64);
      const int32_t nc = static_cast<int32_t>(np);
      for (uint32_t py = 0; py < t_.ph; ++py) {
        int32_t hs, he;
        Bin(py, bin_h, sh, H, &hs, &he);
        SyncMte3ToV();  // the previous bin row has left
        for (uint32_t px = 0; px < t_.pw; ++px) {
          int32_t s, e;
          Bin(px, bin_w, sw, W, &s, &e);
          const bool empty = he <= hs || e <= s;
          Duplicate(acc[px * np], empty ? 0.0f : -FLT_MAX, nc);
          Duplicate(idx[px * np], -1.0f, nc);
        }
        for (int32_t hy = hs; hy < he && wmax > wmin; ++hy) {
          SyncVToMte2();  // the previous row's compares have read the window
          CopyInRows(row, xGm_[uint64_t(b) * plane + (uint64_t(hy) * t_.w + uint64_t(wmin)) * t_.c + c0], ww, n,
                     t_.c, np);
          SyncMte2ToV();
          for (uint32_t px = 0; px < t_.pw; ++px) {
            int32_t s, e;
            Bin(px, bin_w, sw, W, &s, &e);
            const LocalTensor<float> a = acc[px * np], ix = idx[px * np];
            for (int32_t wx = s; wx < e; ++wx) {
              const LocalTensor<float> v = row[uint32_t(wx - wmin) * np];
              Compare(bits, v, a, CMPMODE::GT, np);  // strictly greater: the first maximum; NaN never
              Select(a, bits, v, a, SELMODE::VSEL_TENSOR_TENSOR_MODE, np);
              Not(bits.ReinterpretCast<uint16_t>(), bits.ReinterpretCast<uint16_t>(), nc / 16);
              Select(ix, bits, ix, static_cast<float>(hy * W + wx), SELMODE::VSEL_TENSOR_SCALAR_MODE, np);
            }
          }
        }
        // Positions as int32 (exact: below 2^24).
        const LocalTensor<int32_t> ii = idxi_.Get<int32_t>();
        Cast(ii, idx, RoundMode::CAST_RINT, t_.pw * np);
        SyncVToMte3();
        const uint64_t o = (k * t_.ph + py) * t_.pw * t_.c + c0;
        CopyOutRows(yGm_[o], acc, t_.pw, n, t_.c, np);
        CopyOutRows(aGm_[o], ii, t_.pw, n, t_.c, np);
      }
    }
  }

  RoiPoolTiling t_;
  TPipe pipe_;
  TBuf<TPosition::VECCALC> row_, acc_, idx_, idxi_, bits_, roi_;
  GlobalTensor<float> xGm_, rGm_, yGm_;
  GlobalTensor<int32_t> aGm_;
};

}  // namespace

extern "C" __global__ __aicore__ void roi_pool_kernel(GM_ADDR x, GM_ADDR rois, GM_ADDR y, GM_ADDR argmax,
                                                      GM_ADDR tiling) {
  GET_TILING_DATA_WITH_STRUCT(RoiPoolTiling, t, tiling);
  RoiPoolKernel op;
  op.Init(x, rois, y, argmax, t);
  op.Process();
}
