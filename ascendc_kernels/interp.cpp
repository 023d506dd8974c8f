// Separable 2-D interpolation in Ascend C (see interp.h for the design).
#include "interp.h"

#include <type_traits>

#include "kernel_operator.h"
#include "norm_util.h"
#include "reduce_helpers.h"

using namespace AscendC;

namespace npu_kernels {

namespace {
constexpr uint32_t kUbReserve = 4 * 1024;
constexpr uint32_t kMaxPlanesPerTile = 1024;
constexpr uint32_t kMinRowsPerItem = 8;
}  // namespace

InterpTiling interp_tiling(uint64_t planes, uint32_t h, uint32_t w, uint32_t oh, uint32_t ow, uint32_t taps_h,
                           uint32_t taps_w, uint32_t elem_bytes, const SocInfo& soc) {
  InterpTiling t{};
  t.planes = planes;
  t.h = h;
  t.w = w;
  t.oh = oh;
  t.ow = ow;
  t.taps_h = taps_h;
  t.taps_w = taps_w;
  if (planes == 0 || h == 0 || w == 0 || oh == 0 || ow == 0 || (elem_bytes != 2 && elem_bytes != 4)) return t;
  t.wp = AlignUp<uint32_t>(w, 16);
  t.owp = AlignUp<uint32_t>(ow, 16);
  t.ohp = AlignUp<uint32_t>(oh, 8);
  const uint64_t fixed = uint64_t(2) * taps_h * t.ohp * 4 + kUbReserve;
  if (fixed >= soc.ub_bytes) return t;
  const bool narrow = elem_bytes != 4;
  // Per plane of a tile: the double-buffered input row and its float copy, the W tap tables (offsets
  // and weights), the row cache (taps_h + 1 slots, or none for a copy along H), the gather scratch,
  // the float result row (16-bit output) and the double-buffered output row.
  const uint32_t slots = taps_h == 1 ? 0 : taps_h + 1;
  const uint64_t per_plane = uint64_t(2) * t.wp * elem_bytes + (narrow ? t.wp * 4 : 0) + uint64_t(2) * taps_w * t.owp * 4 +
                             uint64_t(slots) * t.owp * 4 + t.owp * 4 + (narrow ? t.owp * 4 : 0) +
                             uint64_t(2) * t.owp * elem_bytes;
  uint64_t kp = (soc.ub_bytes - fixed) / per_plane;
  if (kp < 1) return t;
  if (kp > kMaxPlanesPerTile) kp = kMaxPlanesPerTile;
  if (kp > planes) kp = planes;
  // Few planes, many cores: fewer planes per tile spread them (a tile keeps >= 16 planes).
  const uint64_t cores = static_cast<uint64_t>(soc.vector_cores);
  if (CeilDivU<uint64_t>(planes, kp) < cores) {
    const uint64_t spread = CeilDivU<uint64_t>(planes, cores);
    const uint64_t floor = planes < 16 ? planes : 16;
    const uint64_t want = spread > floor ? spread : floor;
    if (want < kp) kp = want;
  }
  t.kp = static_cast<uint32_t>(kp);
  t.groups = static_cast<uint32_t>(CeilDivU<uint64_t>(planes, kp));
  // Output rows per item: all of them, unless the plane groups leave cores idle.
  t.row_chunk = oh;
  if (t.groups < cores) {
    const uint32_t per = static_cast<uint32_t>(CeilDivU<uint64_t>(cores, t.groups));
    uint32_t rc = CeilDivU<uint32_t>(oh, per);
    const uint32_t min_rows = oh < kMinRowsPerItem ? oh : kMinRowsPerItem;
    if (rc < min_rows) rc = min_rows;
    t.row_chunk = rc;
  }
  t.row_chunks = CeilDivU<uint32_t>(oh, t.row_chunk);
  t.items = uint64_t(t.groups) * t.row_chunks;
  const ItemSplit sp = SplitItems(t.items, planes * (uint64_t(h) * w + uint64_t(oh) * ow) * elem_bytes, soc.vector_cores,
                                  64 * 1024);
  t.items_per_core = sp.per_core;
  t.block_dim = sp.block_dim;
  t.ok = 1;
  return t;
}

}  // namespace npu_kernels

namespace {

using npu_kernels::InterpTiling;
using namespace npu_kernels::reduce_helpers;

template <typename T>
class InterpKernel {
 public:
  __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, GM_ADDR woff, GM_ADDR wwt, GM_ADDR hidx, GM_ADDR hwt,
                              const InterpTiling& t) {
    t_ = t;
    xGm_.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(x), t.planes * t.h * t.w);
    yGm_.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(y), t.planes * t.oh * t.ow);
    const uint32_t tile_in = t.kp * t.wp, tile_out = t.kp * t.owp;
    pipe_.InitBuffer(inQ_, 2, tile_in * sizeof(T));
    if constexpr (!std::is_same_v<T, float>) {
      pipe_.InitBuffer(fin_, tile_in * sizeof(float));
      pipe_.InitBuffer(acc_, tile_out * sizeof(float));
    }
    pipe_.InitBuffer(wtab_, 2 * t.taps_w * tile_out * 4);
    slots_ = t.taps_h == 1 ? 0 : t.taps_h + 1;
    if (slots_) pipe_.InitBuffer(cache_, slots_ * tile_out * sizeof(float));
    pipe_.InitBuffer(gtmp_, tile_out * sizeof(float));
    pipe_.InitBuffer(outQ_, 2, tile_out * sizeof(T));
    pipe_.InitBuffer(htab_, 2 * t.taps_h * t.ohp * 4);
    // The tables, once per core: W offsets and weights for kp rows, H indices and weights.
    GlobalTensor<uint32_t> woffGm;
    GlobalTensor<float> wwtGm, hwtGm;
    GlobalTensor<int32_t> hidxGm;
    woffGm.SetGlobalBuffer(reinterpret_cast<__gm__ uint32_t*>(woff), uint64_t(t.taps_w) * tile_out);
    wwtGm.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(wwt), uint64_t(t.taps_w) * tile_out);
    hidxGm.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t*>(hidx), uint64_t(t.taps_h) * t.ohp);
    hwtGm.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(hwt), uint64_t(t.taps_h) * t.ohp);
    LocalTensor<uint32_t> wt = wtab_.Get<uint32_t>();
    DataCopy(wt, woffGm, t.taps_w * tile_out);
    DataCopy(wt[t.taps_w * tile_out].template ReinterpretCast<float>(), wwtGm, t.taps_w * tile_out);
    LocalTensor<int32_t> ht = htab_.Get<int32_t>();
    DataCopy(ht, hidxGm, t.taps_h * t.ohp);
    DataCopy(ht[t.taps_h * t.ohp].template ReinterpretCast<float>(), hwtGm, t.taps_h * t.ohp);
    nn_kernels::SyncMte2ToV();  // the vector and scalar units read what MTE2 wrote
    nn_kernels::SyncMte2ToS();
  }

  __aicore__ inline void Process() {
    const uint64_t first = uint64_t(GetBlockIdx()) * t_.items_per_core;
    uint64_t last = first + t_.items_per_core;
    if (last > t_.items) last = t_.items;
    for (uint64_t item = first; item < last; ++item) Item(item);
  }

 private:
  __aicore__ inline LocalTensor<uint32_t> WOff(uint32_t tap) {
    return wtab_.Get<uint32_t>()[tap * t_.kp * t_.owp];
  }
  __aicore__ inline LocalTensor<float> WWt(uint32_t tap) {
    return wtab_.Get<uint32_t>()[(t_.taps_w + tap) * t_.kp * t_.owp].template ReinterpretCast<float>();
  }
  __aicore__ inline int32_t HIdx(uint32_t tap, uint32_t oy) { return htab_.Get<int32_t>().GetValue(tap * t_.ohp + oy); }
  __aicore__ inline float HWt(uint32_t tap, uint32_t oy) {
    return htab_.Get<int32_t>()[(t_.taps_h + tap) * t_.ohp].template ReinterpretCast<float>().GetValue(oy);
  }

  // dst[r, :] = sum_tw ww[tw] * x[p0 + r, iy, iw[tw]] for the k planes of the group (float).
  __aicore__ inline void HRow(const LocalTensor<float>& dst, uint64_t p0, uint32_t k, uint32_t iy) {
    LocalTensor<T> in = inQ_.template AllocTensor<T>();
    CopyInRows(in, xGm_[p0 * t_.h * t_.w + uint64_t(iy) * t_.w], k, t_.w, uint64_t(t_.h) * t_.w, t_.wp);
    inQ_.EnQue(in);
    in = inQ_.template DeQue<T>();
    LocalTensor<float> src;
    if constexpr (std::is_same_v<T, float>) {
      src = in;
    } else {
      src = fin_.Get<float>();
      Cast(src, in, RoundMode::CAST_NONE, k * t_.wp);
    }
    const uint32_t n = k * t_.owp;
    if (t_.taps_w == 1) {
      Gather(dst, src, WOff(0), 0u, n);
    } else {
      LocalTensor<float> g = gtmp_.Get<float>();
      Gather(g, src, WOff(0), 0u, n);
      Mul(dst, g, WWt(0), n);
      for (uint32_t tw = 1; tw < t_.taps_w; ++tw) {
        Gather(g, src, WOff(tw), 0u, n);
        Mul(g, g, WWt(tw), n);
        Add(dst, dst, g, n);
      }
    }
    inQ_.FreeTensor(in);
  }

  __aicore__ inline void Item(uint64_t item) {
    const uint64_t grp = item / t_.row_chunks;
    const uint32_t oy0 = static_cast<uint32_t>(item % t_.row_chunks) * t_.row_chunk;
    const uint32_t oy1 = t_.oh - oy0 < t_.row_chunk ? t_.oh : oy0 + t_.row_chunk;
    const uint64_t p0 = grp * t_.kp;
    const uint32_t k = static_cast<uint32_t>(t_.planes - p0 < t_.kp ? t_.planes - p0 : t_.kp);
    const uint32_t n = k * t_.owp;
    int32_t key[5] = {-1, -1, -1, -1, -1};  // input row held by each cache slot
    LocalTensor<float> cache;
    if (slots_) cache = cache_.Get<float>();
    for (uint32_t oy = oy0; oy < oy1; ++oy) {
      LocalTensor<T> out = outQ_.template AllocTensor<T>();
      LocalTensor<float> res;
      if constexpr (std::is_same_v<T, float>) res = out;
      else res = acc_.Get<float>();
      if (slots_ == 0) {
        HRow(res, p0, k, HIdx(0, oy));
      } else {
        uint32_t used = 0;  // slots holding this row's taps
        for (uint32_t th = 0; th < t_.taps_h; ++th) {
          const int32_t iy = HIdx(th, oy);
          uint32_t s = slots_;
          for (uint32_t j = 0; j < slots_; ++j)
            if (key[j] == iy) s = j;
          if (s == slots_) {  // miss: replace the slot of the lowest row not used by this output row
            for (uint32_t j = 0; j < slots_; ++j)
              if (!(used >> j & 1u) && (s == slots_ || key[j] < key[s])) s = j;
            HRow(cache[s * t_.kp * t_.owp], p0, k, static_cast<uint32_t>(iy));
            key[s] = iy;
          }
          used |= 1u << s;
          const LocalTensor<float> row = cache[s * t_.kp * t_.owp];
          if (th == 0) Muls(res, row, HWt(0, oy), n);
          else Axpy(res, row, HWt(th, oy), n);
        }
      }
      if constexpr (!std::is_same_v<T, float>) Cast(out, res, RoundMode::CAST_RINT, n);
      outQ_.EnQue(out);
      out = outQ_.template DeQue<T>();
      CopyOutRows(yGm_[p0 * t_.oh * t_.ow + uint64_t(oy) * t_.ow], out, k, t_.ow, uint64_t(t_.oh) * t_.ow, t_.owp);
      outQ_.FreeTensor(out);
    }
  }

  InterpTiling t_;
  uint32_t slots_ = 0;
  TPipe pipe_;
  TQue<TPosition::VECIN, 1> inQ_;
  TQue<TPosition::VECOUT, 1> outQ_;
  TBuf<TPosition::VECCALC> fin_, acc_, wtab_, cache_, gtmp_, htab_;
  GlobalTensor<T> xGm_, yGm_;
};

template <typename T>
__aicore__ inline void RunInterp(GM_ADDR x, GM_ADDR y, GM_ADDR woff, GM_ADDR wwt, GM_ADDR hidx, GM_ADDR hwt,
                                 GM_ADDR tiling) {
  GET_TILING_DATA_WITH_STRUCT(InterpTiling, t, tiling);
  InterpKernel<T> op;
  op.Init(x, y, woff, wwt, hidx, hwt, t);
  op.Process();
}

}  // namespace

extern "C" __global__ __aicore__ void interp2d_kernel_float(GM_ADDR x, GM_ADDR y, GM_ADDR woff, GM_ADDR wwt,
                                                            GM_ADDR hidx, GM_ADDR hwt, GM_ADDR tiling) {
  RunInterp<float>(x, y, woff, wwt, hidx, hwt, tiling);
}
extern "C" __global__ __aicore__ void interp2d_kernel_half(GM_ADDR x, GM_ADDR y, GM_ADDR woff, GM_ADDR wwt,
                                                           GM_ADDR hidx, GM_ADDR hwt, GM_ADDR tiling) {
  RunInterp<half>(x, y, woff, wwt, hidx, hwt, tiling);
}
extern "C" __global__ __aicore__ void interp2d_kernel_bf16(GM_ADDR x, GM_ADDR y, GM_ADDR woff, GM_ADDR wwt,
                                                           GM_ADDR hidx, GM_ADDR hwt, GM_ADDR tiling) {
  RunInterp<bfloat16_t>(x, y, woff, wwt, hidx, hwt, tiling);
}
