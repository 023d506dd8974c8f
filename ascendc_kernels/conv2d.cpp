// 2-D convolution on the cube (see conv2d.h). Each core takes a contiguous range of output tiles
// (image, group, pixel tile, channel tile); per tile the L0C accumulator stays resident while
// K = C1 * kh * kw * C0 streams through L1 in chunks of c1_chunk channel groups.
#include "conv2d.h"

#include "kernel_operator.h"
#include "matmul_cube.h"

using namespace AscendC;

namespace npu_kernels {

Conv2dTiling conv2d_tiling(uint32_t n, uint32_t c, uint32_t h, uint32_t w, uint32_t cout, uint32_t groups,
                           uint32_t kh, uint32_t kw, uint32_t sh, uint32_t sw, uint32_t dh, uint32_t dw, uint32_t pt,
                           uint32_t pb, uint32_t pl, uint32_t pr, uint32_t elem_bytes, uint32_t form,
                           const SocInfo& soc) {
  Conv2dTiling t{};
  t.n = n; t.c = c; t.h = h; t.w = w; t.groups = groups; t.cg = c / groups; t.cout = cout; t.cog = cout / groups;
  t.kh = kh; t.kw = kw; t.sh = sh; t.sw = sw; t.dh = dh; t.dw = dw;
  t.pt = pt; t.pb = pb; t.pl = pl; t.pr = pr;
  const uint32_t effh = (kh - 1) * dh + 1, effw = (kw - 1) * dw + 1;
  t.ho = (h + pt + pb - effh) / sh + 1;
  t.wo = (w + pl + pr - effw) / sw + 1;
  t.elem_bytes = elem_bytes;
  const uint32_t c0 = 32 / elem_bytes;
  t.c1g = CeilDivU(t.cg, c0);
  t.taps = kh * kw;
  t.form = form;
  t.x_batch = uint64_t(h) * w * c;
  t.w_co_stride = uint64_t(t.taps) * t.cg;
  const uint32_t m = t.ho * t.wo;
  t.out_no_l2 = uint64_t(n) * cout * m * elem_bytes >= kNoL2OutputBytes;
  // L0 blocking: the operand in L0A is double buffered (<= l0a/2), the one in L0B single.
  t.base_k = elem_bytes == 4 ? 64 : 128;
  uint32_t tile_pix = form == 0 ? 128 : 256;
  uint32_t tile_co = form == 0 ? 256 : 128;
  if (AlignUp<uint32_t>(t.cog, 16) < tile_co) tile_co = AlignUp<uint32_t>(t.cog, 16);
  // The weights' Nd2Nz column-block step (taps * co16, in 32 B units) is at most 16384.
  while (t.taps * AlignUp<uint32_t>(tile_co, 16) > 16384 && tile_co > 16) tile_co = AlignUp<uint32_t>(tile_co / 2, 16);
  if (AlignUp<uint32_t>(m, 16) < tile_pix) tile_pix = AlignUp<uint32_t>(m, 16);
  auto tiles = [&] {
    return uint64_t(n) * groups * CeilDivU(m, tile_pix) * CeilDivU(t.cog, tile_co);
  };
  while (tiles() < uint64_t(soc.cube_cores) && tile_pix > 64) tile_pix = AlignUp<uint32_t>(tile_pix / 2, 16);
  // Small pixel tiles against 256 channels: L0C holds only two 64 x 256 accumulators, so every
  // 128 pixels stream the whole weight tile GM -> L1 -> L0B again. 128-channel tiles let four
  // sub-tiles share each weight pass for twice the img2col work; that pays at stride 1 (img2col
  // copies whole runs of pixels) and measured 3-6% faster on ResNet-50's 14x14 and 7x7 layers, but
  // 4-7% slower at stride 2, where img2col gathers every other pixel.
  if (form == 0 && sh == 1 && sw == 1 && tile_co == 256 && tile_pix <= 64) tile_co = 128;
  // L1: slab of input rows for one pixel tile + the weights of one co tile, per C1 group.
  for (;;) {
    const uint32_t orows = (tile_pix + t.wo - 2) / t.wo + 1 < t.ho ? (tile_pix + t.wo - 2) / t.wo + 1 : t.ho;
    uint32_t rows = (orows - 1) * sh + effh;
    if (rows > h) rows = h;
    const uint64_t slab = uint64_t(rows) * w;
    const uint64_t per_c1 = (slab + uint64_t(t.taps) * AlignUp<uint32_t>(tile_co, 16)) * 32;
    uint64_t chunk = per_c1 ? soc.l1_bytes / per_c1 : 0;
    if (chunk > t.c1g) chunk = t.c1g;
    if (chunk >= 1 && slab <= 16384) {
      t.slab_pix_max = uint32_t(slab);
      t.c1_chunk = uint32_t(chunk);
      t.ok = 1;
      break;
    }
    if (slab <= 16384 && uint64_t(t.taps) * AlignUp<uint32_t>(tile_co, 16) * 32 > soc.l1_bytes / 2 && tile_co > 16) {
      tile_co = AlignUp<uint32_t>(tile_co / 2, 16);  // the weights dominate: narrower channel tiles
      continue;
    }
    if (tile_pix <= 16) break;
    tile_pix = AlignUp<uint32_t>(tile_pix / 2, 16);
  }
  t.tile_pix = tile_pix;
  t.tile_co = tile_co;
  // float: a 128-deep k-step with one L0A buffer when both L0 operands fit (half the Mmad calls, each
  // twice the work per accumulator pass), else 64-deep and double buffered.
  t.a2_bufs = 2;
  if (elem_bytes == 4) {
    const uint64_t a_rows = AlignUp<uint32_t>(form == 0 ? tile_pix : tile_co, 16);
    const uint64_t b_cols = AlignUp<uint32_t>(form == 0 ? tile_co : tile_pix, 16);
    if (a_rows * 128 * 4 <= soc.l0a_bytes && b_cols * 128 * 4 <= soc.l0b_bytes) {
      t.base_k = 128;
      t.a2_bufs = 1;
    }
  }
  t.tiles_pix = CeilDivU(m, tile_pix);
  t.tiles_co = CeilDivU(t.cog, tile_co);
  t.total_tiles = tiles();
  if (t.ok) {
    // Sub-tiles: accumulators that fit L0C together, each with its own slab in L1 next to the
    // weight chunk, so every weight micro-panel is moved to L0 once for all of them.
    const uint64_t acc = uint64_t(AlignUp<uint32_t>(tile_pix, 16)) * AlignUp<uint32_t>(tile_co, 16) * 4;
    uint64_t sub = acc ? soc.l0c_bytes / acc : 1;
    if (sub > 32) sub = 32;
    const uint64_t per_wt = uint64_t(n) * t.tiles_pix;  // tiles sharing one weight tile
    if (sub > per_wt) sub = per_wt;
    if (sub < 1) sub = 1;
    const uint64_t w_c1 = uint64_t(t.taps) * AlignUp<uint32_t>(tile_co, 16) * 32;
    while (sub > 1 && sub * t.slab_pix_max * 32 + w_c1 > soc.l1_bytes) --sub;
    const uint64_t per_c1 = sub * t.slab_pix_max * 32 + w_c1;
    uint64_t chunk = soc.l1_bytes / per_c1;
    if (chunk > t.c1g) chunk = t.c1g;
    if (chunk >= 1) t.c1_chunk = uint32_t(chunk);
    t.sub_tiles = uint32_t(sub);
  } else {
    t.sub_tiles = 1;
  }
  const uint64_t want = uint64_t(soc.cube_cores);
  const uint64_t total = t.total_tiles ? t.total_tiles : 1;
  const uint64_t cores = total < want ? total : want;
  t.tiles_per_core = CeilDivU<uint64_t>(total, cores);
  if (t.ok && t.tiles_per_core < t.sub_tiles) {
    // Weight-heavy tiles (few pixels, many channels: ResNet's 7x7 layers stream 4.7 MB of weights
    // per tile for a 100 KB input slab): with one tile per core every tile streams its weights
    // GM -> L1 -> L0B. Grouping the tiles that share a channel tile into one core's sub-tiles streams
    // them once per group, fewer cores each doing more of the same weights.
    const uint64_t w_tile = uint64_t(t.taps) * t.cg * t.tile_co * elem_bytes;
    const uint64_t x_tile = uint64_t(t.slab_pix_max) * t.c1g * 32;
    const uint64_t per_wt = uint64_t(n) * t.tiles_pix;
    if (w_tile >= 8 * x_tile && per_wt >= 2) {
      uint64_t k = t.sub_tiles < per_wt ? t.sub_tiles : per_wt;
      while (k > 1 && per_wt % k != 0) --k;  // groups never straddle two channel tiles
      if (k > t.tiles_per_core) t.tiles_per_core = k;
    }
  }
  t.block_dim = uint32_t(CeilDivU<uint64_t>(total, t.tiles_per_core));
  return t;
}

}  // namespace npu_kernels

namespace {

using npu_kernels::Conv2dTiling;
namespace cube = npu_kernels::cube;

template <typename T>
class Conv2dKernel {
 public:
  __aicore__ inline void Init(GM_ADDR x, GM_ADDR wt, GM_ADDR y, GM_ADDR scale, GM_ADDR shift, GM_ADDR residual,
                              const Conv2dTiling& t) {
    t_ = t;
    if constexpr (std::is_same_v<T, float>) SetHF32Mode(t.hf32 ? HF32Mode::ENABLE : HF32Mode::DISABLE);
    xGm_.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(x));
    wGm_.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(wt));
    yGm_.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(y));
    if (t.out_no_l2) yGm_.SetL2CacheHint(CacheMode::CACHE_MODE_DISABLE);
    if (t.has_scale) scaleGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(scale), t.cout);
    if (t.has_shift) shiftGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(shift), t.cout);
    if (t.has_residual) resGm_.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(residual));
    const uint32_t co16 = cube::Align16(t.tile_co), pix16 = cube::Align16(t.tile_pix);
    slabElems_ = t.slab_pix_max * t.c1_chunk * 32 / sizeof(T);
    pipe_.InitBuffer(fmBuf_, t.sub_tiles * slabElems_ * sizeof(T));
    pipe_.InitBuffer(w1Buf_, t.c1_chunk * t.taps * co16 * 32);
    // form 0: L0A = pixels x k (double buffered), L0B = k x co; form 1: L0A = co x k, L0B = k x pixels.
    const uint32_t a_rows = t.form == 0 ? pix16 : co16, b_cols = t.form == 0 ? co16 : pix16;
    pipe_.InitBuffer(qA2_, t.a2_bufs, a_rows * t.base_k * sizeof(T));
    pipe_.InitBuffer(qB2_, 1, t.base_k * b_cols * sizeof(T));
    accElems_ = pix16 * co16;
    pipe_.InitBuffer(qC_, 1, t.sub_tiles * accElems_ * sizeof(float));
  }

  __aicore__ inline void Process() {
    const uint64_t first = uint64_t(GetBlockIdx()) * t_.tiles_per_core;
    uint64_t last = first + t_.tiles_per_core;
    if (last > t_.total_tiles) last = t_.total_tiles;
    // Tiles are ordered (group, co tile, image, pixel tile): consecutive tiles of one (group, co
    // tile) share the weights, so up to sub_tiles of them are computed together.
    const uint64_t per_wt = uint64_t(t_.n) * t_.tiles_pix;
    for (uint64_t tile = first; tile < last;) {
      uint64_t end = tile + t_.sub_tiles;
      const uint64_t run_end = (tile / per_wt + 1) * per_wt;
      if (end > run_end) end = run_end;
      if (end > last) end = last;
      ComputeGroup(tile, uint32_t(end - tile));
      tile = end;
    }
  }

 private:
  static constexpr uint32_t kC0 = cube::C0Of<T>();
  static constexpr uint32_t kMaxSlabPix = 16384;  // Nd2Nz's nValue limit (pixels of one slab)

  struct TileGeo {
    uint32_t nb, m0, mt, oh0, rows, top, bottom, pix;
    int64_t lo_c;
  };

  __aicore__ inline TileGeo Geometry(uint64_t tile) const {
    const uint32_t tp = uint32_t(tile % t_.tiles_pix);
    const uint32_t mtot = t_.ho * t_.wo;
    const uint32_t m0 = tp * t_.tile_pix;
    return PixelRange(uint32_t((tile / t_.tiles_pix) % t_.n), m0, mtot - m0 < t_.tile_pix ? mtot - m0 : t_.tile_pix);
  }
  // The slab two tiles of one image (a before b) share: the window of their pixel range together.
  __aicore__ inline TileGeo Union(const TileGeo& a, const TileGeo& b) const {
    return PixelRange(a.nb, a.m0, b.m0 + b.mt - a.m0);
  }
  // Output pixels [m0, m0 + mt) of image nb: the input rows they read (clipped to the image; the
  // rest is Load3D padding).
  __aicore__ inline TileGeo PixelRange(uint32_t nb, uint32_t m0, uint32_t mt) const {
    TileGeo q{};
    q.nb = nb;
    q.m0 = m0;
    q.mt = mt;
    q.oh0 = q.m0 / t_.wo;
    const uint32_t oh1 = (q.m0 + q.mt - 1) / t_.wo;
    const int64_t lo = int64_t(q.oh0) * t_.sh - t_.pt;
    const int64_t hi = int64_t(oh1) * t_.sh - t_.pt + int64_t(t_.kh - 1) * t_.dh;
    q.lo_c = lo < 0 ? 0 : lo;
    const int64_t hi_c = hi > int64_t(t_.h) - 1 ? int64_t(t_.h) - 1 : hi;
    q.rows = uint32_t(hi_c - q.lo_c + 1);
    q.top = uint32_t(q.lo_c - lo);
    const int64_t need = int64_t(oh1 - q.oh0) * t_.sh + int64_t(t_.kh - 1) * t_.dh + 1;
    q.bottom = need > int64_t(q.rows) + q.top ? uint32_t(need - q.rows - q.top) : 0;
    q.pix = q.rows * t_.w;
    return q;
  }

  // Weights [co][tap][c] -> L1 fractal grid [c1][tap][co16][C0] (K = (c1, tap, c0) rows of co),
  // unless that chunk is already resident.
  __aicore__ inline void LoadWeights(const LocalTensor<T>& w1, uint32_t g, uint32_t co0, uint32_t ct, uint32_t c1a,
                                     uint32_t cvalid) {
    const uint64_t key = ((uint64_t(g) * t_.tiles_co + co0 / t_.tile_co) * t_.c1g + c1a) + 1;
    if (key == wKey_) return;
    wKey_ = key;
    const uint32_t ct16 = cube::Align16(ct);
    if (t_.w_fractal && !t_.flip) {
      // One block of ct16 rows x C0 per (c1, tap); consecutive in L1, cog16 rows apart in GM.
      const uint32_t c1n = t_.c1g - c1a < t_.c1_chunk ? t_.c1g - c1a : t_.c1_chunk;
      const uint64_t src = ((uint64_t(g) * t_.c1g + c1a) * t_.taps * t_.w_cog16 + co0) * kC0;
      DataCopy(w1, wGm_[src], DataCopyParams(uint16_t(c1n * t_.taps), uint16_t(ct16), uint16_t(t_.w_cog16 - ct16), 0));
      (void)cvalid;
      return;
    }
    const uint64_t w_off = (uint64_t(g) * t_.cog + co0) * t_.w_co_stride + c1a * kC0;
    const uint16_t c0_stride = uint16_t(t_.taps * ct16), n_stride = uint16_t(ct16);
    // One Nd2Nz per tap when the taps are reversed, per output channel when the channel step
    // exceeds Nd2Nz's 16-bit matrix stride.
    const bool per_co = t_.w_co_stride > 65535;
    const uint32_t ncall = per_co ? ct : 1;
    for (uint32_t q = 0; q < ncall; ++q) {
      const uint64_t wq = w_off + uint64_t(q) * t_.w_co_stride;
      const uint16_t nd = uint16_t(per_co ? 1 : ct);
      const uint16_t mstride = uint16_t(per_co ? 0 : t_.w_co_stride);
      LocalTensor<T> wdst = w1[q * kC0];
      if (!t_.flip) {
        DataCopy(wdst, wGm_[wq], Nd2NzParams(nd, uint16_t(t_.taps), uint16_t(cvalid), mstride, uint16_t(t_.cg),
                                             c0_stride, n_stride, uint16_t(kC0)));
      } else {
        for (uint32_t tap = 0; tap < t_.taps; ++tap)
          DataCopy(wdst[(t_.taps - 1 - tap) * ct16 * kC0], wGm_[wq + uint64_t(tap) * t_.cg],
                   Nd2NzParams(nd, 1, uint16_t(cvalid), mstride, uint16_t(t_.cg), c0_stride, n_stride,
                               uint16_t(kC0)));
      }
    }
  }

  __aicore__ inline void ComputeGroup(uint64_t tile0, uint32_t count) {
    const uint64_t rest = tile0 / (uint64_t(t_.n) * t_.tiles_pix);
    const uint32_t tc = uint32_t(rest % t_.tiles_co);
    const uint32_t g = uint32_t(rest / t_.tiles_co);
    const uint32_t co0 = tc * t_.tile_co;
    const uint32_t ct = t_.cog - co0 < t_.tile_co ? t_.cog - co0 : t_.tile_co;
    LocalTensor<float> acc = qC_.template AllocTensor<float>();
    LocalTensor<T> w1 = w1Buf_.template Get<T>();
    for (uint32_t c1a = 0; c1a < t_.c1g; c1a += t_.c1_chunk) {
      const uint32_t c1n = t_.c1g - c1a < t_.c1_chunk ? t_.c1g - c1a : t_.c1_chunk;
      const uint32_t cvalid = t_.cg - c1a * kC0 < c1n * kC0 ? t_.cg - c1a * kC0 : c1n * kC0;
      LoadWeights(w1, g, co0, ct, c1a, cvalid);
      const uint32_t kt = c1n * t_.taps * kC0;
      // Feature slabs: NHWC rows [lo_c, lo_c + rows) -> L1 C1HWC0 (c1n planes of `pix` pixels each),
      // one per run of sub-tiles of the same image: consecutive pixel tiles share their halo rows,
      // so a run's slab covers the union of its tiles' windows and each tile's img2col starts at its
      // own first pixel within it.
      LocalTensor<T> fmAll = fmBuf_.template Get<T>();
      uint64_t slab_off = 0;
      for (uint32_t j0 = 0; j0 < count;) {
        const TileGeo first = Geometry(tile0 + j0);
        TileGeo q = first;
        uint32_t j1 = j0 + 1;
        for (; j1 < count; ++j1) {
          const TileGeo next = Geometry(tile0 + j1);
          if (next.nb != first.nb) break;
          // (never larger than the two slabs apart, so the runs fit the sub-tiles' L1 space)
          const TileGeo u = Union(first, next);
          if (u.pix > kMaxSlabPix || u.pix > q.pix + next.pix) break;
          q = u;
        }
        LocalTensor<T> slab = fmAll[slab_off];
        if (t_.x_5hd) {
          // C1 planes of h * w pixels (32 B each): the slab's rows are contiguous in each plane.
          const uint64_t plane = uint64_t(t_.h) * t_.w;
          DataCopy(slab, xGm_[((uint64_t(q.nb) * t_.c1g + c1a) * plane + uint64_t(q.lo_c) * t_.w) * kC0],
                   DataCopyParams(uint16_t(c1n), uint16_t(q.pix), uint16_t(plane - q.pix), 0));
        } else {
          const uint64_t x_off = uint64_t(q.nb) * t_.x_batch + uint64_t(q.lo_c) * t_.w * t_.c + uint64_t(g) * t_.cg +
                                 c1a * kC0;
          DataCopy(slab, xGm_[x_off],
                   Nd2NzParams(1, uint16_t(q.pix), uint16_t(cvalid), 0, uint16_t(t_.c), uint16_t(q.pix), 1, 0));
        }
        for (uint32_t j = j0; j < j1; ++j) {
          const TileGeo tj = Geometry(tile0 + j);
          LoadData3DParamsV2<T>& p3 = p3_[j];
          p3 = LoadData3DParamsV2<T>();
          p3.padList[0] = uint8_t(t_.pl); p3.padList[1] = uint8_t(t_.pr);
          p3.padList[2] = uint8_t(q.top); p3.padList[3] = uint8_t(q.bottom);
          p3.l1H = uint16_t(q.rows); p3.l1W = uint16_t(t_.w); p3.channelSize = uint16_t(c1n * kC0);
          p3.mExtension = uint16_t(tj.mt); p3.mStartPt = uint16_t(tj.m0 - q.oh0 * t_.wo);
          p3.strideW = uint8_t(t_.sw); p3.strideH = uint8_t(t_.sh);
          p3.filterW = uint8_t(t_.kw & 255); p3.filterH = uint8_t(t_.kh & 255);
          p3.filterSizeW = t_.kw >= 256; p3.filterSizeH = t_.kh >= 256;
          p3.dilationFilterW = uint8_t(t_.dw); p3.dilationFilterH = uint8_t(t_.dh);
          p3.padValue = T(0);
          mt_[j] = tj.mt;
          slabAt_[j] = slab_off;
        }
        slab_off += uint64_t(q.pix) * c1n * kC0;
        j0 = j1;
      }
      // Weight micro-panel to L0 once per k-step, then the im2col window and Mmad of every sub-tile.
      for (uint32_t kk = 0; kk < kt; kk += t_.base_k) {
        const uint32_t kb = kt - kk < t_.base_k ? kt - kk : t_.base_k;
        const bool init = c1a == 0 && kk == 0;
        if (t_.form == 0) {
          LocalTensor<T> b2 = qB2_.template AllocTensor<T>();
          cube::LoadBToL0(b2, w1, true, ct, kt, kk, kb);          // weights as B (Zn)
          qB2_.EnQue(b2);
          b2 = qB2_.template DeQue<T>();
          for (uint32_t j = 0; j < count; ++j) {
            p3_[j].kStartPt = uint16_t(kk);
            p3_[j].kExtension = uint16_t(kb);
            LocalTensor<T> a2 = qA2_.template AllocTensor<T>();
            LoadData(a2, fmAll[slabAt_[j]], p3_[j]);           // im2col window, Zz
            qA2_.EnQue(a2);
            a2 = qA2_.template DeQue<T>();
            cube::MmadStep(acc[j * accElems_], a2, b2, mt_[j], ct, kb, init, false);
            qA2_.FreeTensor(a2);
          }
          qB2_.FreeTensor(b2);
        } else {
          LocalTensor<T> a2 = qA2_.template AllocTensor<T>();
          cube::LoadAToL0(a2, w1, false, ct, kt, kk, kb);         // weights as A (Zz)
          qA2_.EnQue(a2);
          a2 = qA2_.template DeQue<T>();
          for (uint32_t j = 0; j < count; ++j) {
            p3_[j].kStartPt = uint16_t(kk);
            p3_[j].kExtension = uint16_t(kb);
            LocalTensor<T> b2 = qB2_.template AllocTensor<T>();
            LoadData(b2, fmAll[slabAt_[j]], p3_[j]);           // im2col^T window
            qB2_.EnQue(b2);
            b2 = qB2_.template DeQue<T>();
            cube::MmadStep(acc[j * accElems_], a2, b2, ct, mt_[j], kb, init, true);
            qB2_.FreeTensor(b2);
          }
          qA2_.FreeTensor(a2);
        }
      }
    }
    // Another chunk will replace this one next time unless K fit in a single chunk.
    if (t_.c1_chunk < t_.c1g) wKey_ = 0;
    qC_.EnQue(acc);
    acc = qC_.template DeQue<float>();
    for (uint32_t j = 0; j < count; ++j) {
      const TileGeo q = Geometry(tile0 + j);
      WriteOut(acc[j * accElems_], q.nb, g, q.m0, q.mt, co0, ct);
    }
    qC_.FreeTensor(acc);
  }

  __aicore__ inline void WriteOut(const LocalTensor<float>& acc, uint32_t nb, uint32_t g, uint32_t m0, uint32_t mt,
                                  uint32_t co0, uint32_t ct) {
    const uint64_t hw = uint64_t(t_.ho) * t_.wo;
    const uint32_t cabs = g * t_.cog + co0;
    uint64_t off, stride;
    uint32_t rows, cols;
    if (t_.form == 0) {
      off = (uint64_t(nb) * hw + m0) * t_.cout + cabs;
      stride = t_.cout;
      rows = mt;
      cols = ct;
    } else {
      off = (uint64_t(nb) * t_.cout + cabs) * hw + m0;
      stride = hw;
      rows = ct;
      cols = mt;
    }
    FixpipeParamsV220 fp(uint16_t(cols), uint16_t(rows), uint16_t(cube::Align16(rows < 2 ? 2 : rows)),
                         uint32_t(stride), t_.relu != 0);
    fp.quantPre = cube::QuantFor<T>();
    if (t_.has_scale || t_.has_shift || t_.has_residual) {
      ext::FixpipeEpilogue<T> e;
      if (t_.has_scale) e.scale = scaleGm_[cabs];
      if (t_.has_shift) e.shift = shiftGm_[cabs];
      if (t_.has_residual) {
        e.residual = resGm_[off];
        e.residualStride = stride;
      }
      e.relu = t_.relu != 0;
      e.rowwise = t_.form == 1;
      ext::FixpipeWithEpilogue(yGm_[off], acc, fp, e);
    } else {
      Fixpipe(yGm_[off], acc, fp);
    }
  }

  Conv2dTiling t_{};
  TPipe pipe_;
  TBuf<TPosition::A1> fmBuf_;  // one feature slab per sub-tile
  TBuf<TPosition::B1> w1Buf_;  // resident weight chunk (reused while the same chunk is needed)
  uint64_t wKey_ = 0;
  uint32_t accElems_ = 0, slabElems_ = 0;
  LoadData3DParamsV2<T> p3_[32];
  uint32_t mt_[32] = {};
  uint64_t slabAt_[32] = {};  // each sub-tile's slab (element offset in fmBuf_)
  TQue<TPosition::A2, 1> qA2_;
  TQue<TPosition::B2, 1> qB2_;
  TQue<TPosition::CO1, 1> qC_;
  GlobalTensor<T> xGm_, wGm_, yGm_, resGm_;
  GlobalTensor<float> scaleGm_, shiftGm_;
};

template <typename T>
__aicore__ inline void RunConv2d(GM_ADDR x, GM_ADDR wt, GM_ADDR y, GM_ADDR scale, GM_ADDR shift, GM_ADDR residual,
                                 GM_ADDR tiling) {
  GET_TILING_DATA_WITH_STRUCT(Conv2dTiling, t, tiling);
  Conv2dKernel<T> op;
  op.Init(x, wt, y, scale, shift, residual, t);
  op.Process();
}

}  // namespace

extern "C" __global__ __aicore__ void conv2d_kernel_float(GM_ADDR x, GM_ADDR wt, GM_ADDR y, GM_ADDR scale,
                                                          GM_ADDR shift, GM_ADDR residual, GM_ADDR tiling) {
  RunConv2d<float>(x, wt, y, scale, shift, residual, tiling);
}
extern "C" __global__ __aicore__ void conv2d_kernel_half(GM_ADDR x, GM_ADDR wt, GM_ADDR y, GM_ADDR scale,
                                                         GM_ADDR shift, GM_ADDR residual, GM_ADDR tiling) {
  RunConv2d<half>(x, wt, y, scale, shift, residual, tiling);
}
extern "C" __global__ __aicore__ void conv2d_kernel_bf16(GM_ADDR x, GM_ADDR wt, GM_ADDR y, GM_ADDR scale,
                                                         GM_ADDR shift, GM_ADDR residual, GM_ADDR tiling) {
  RunConv2d<bfloat16_t>(x, wt, y, scale, shift, residual, tiling);
}

// =================================================================================================
// grad_weight (see conv2d.h).
namespace npu_kernels {

Conv2dDwTiling conv2d_dw_tiling(uint32_t n, uint32_t c, uint32_t h, uint32_t w, uint32_t cout, uint32_t groups,
                                uint32_t kh, uint32_t kw, uint32_t sh, uint32_t sw, uint32_t dh, uint32_t dw,
                                uint32_t pt, uint32_t pb, uint32_t pl, uint32_t pr, uint32_t elem_bytes, bool go_cl,
                                const SocInfo& soc) {
  Conv2dDwTiling t{};
  t.n = n; t.c = c; t.h = h; t.w = w; t.groups = groups; t.cg = c / groups; t.cout = cout; t.cog = cout / groups;
  t.kh = kh; t.kw = kw; t.sh = sh; t.sw = sw; t.dh = dh; t.dw = dw; t.pt = pt; t.pb = pb; t.pl = pl; t.pr = pr;
  const uint32_t effh = (kh - 1) * dh + 1, effw = (kw - 1) * dw + 1;
  t.ho = (h + pt + pb - effh) / sh + 1;
  t.wo = (w + pl + pr - effw) / sw + 1;
  t.elem_bytes = elem_bytes;
  const uint32_t c0 = 32 / elem_bytes;
  t.c1g = CeilDivU(t.cg, c0);
  t.taps = kh * kw;
  t.go_cl = go_cl;
  const uint32_t per_c1 = t.taps * c0;  // K rows per channel group
  // K rows per tile: L0C holds rows x co floats; split K finer while there are fewer tiles than cores.
  uint32_t c1t = per_c1 >= 256 ? 1 : 256 / per_c1;
  if (c1t > t.c1g) c1t = t.c1g;
  auto tiles = [&](uint32_t c1, uint32_t co) {
    return uint64_t(groups) * CeilDivU(t.c1g, c1) * CeilDivU(t.cog, co);
  };
  uint32_t rows16 = AlignUp<uint32_t>(c1t * per_c1, 16);
  uint32_t co = AlignUp<uint32_t>(t.cog, 16);
  if (co > 128) co = 128;
  // Fewer tiles than cores: split K (below) before shrinking the channel tile (a thin tile feeds
  // each Mmad fewer rows per im2col window moved: ResNet-18's 3x3 grad_weights 10-25% slower).
  // Shrink only while even the split leaves half the cores idle (few images of few pixels); the
  // estimate counts chunks of the largest pix_l1 (2048), so it never over-promises splits.
  {
    const uint64_t m_est = uint64_t(t.ho) * t.wo, chunks_est = uint64_t(n) * CeilDivU<uint64_t>(m_est, 2048);
    auto filled = [&](uint32_t c1) {
      const uint64_t tl = tiles(c1, co);
      uint64_t sp = tl < uint64_t(soc.cube_cores) ? uint64_t(soc.cube_cores) / tl : 1;
      if (sp > chunks_est) sp = chunks_est ? chunks_est : 1;
      return tl * sp;
    };
    while (c1t > 1 && 2 * filled(c1t) <= uint64_t(soc.cube_cores)) --c1t;
  }
  rows16 = AlignUp<uint32_t>(c1t * per_c1, 16);
  while (rows16 * co * 4 > soc.l0c_bytes && co > 16) co = AlignUp<uint32_t>(co / 2, 16);
  if (rows16 * co * 4 > soc.l0c_bytes || rows16 > 4080) return t;  // ok = 0
  // Pixels per L0 step (the reduction): L0A holds rows x step (double buffered), L0B step x co.
  // One L0A buffer instead when that at least doubles the step: each Mmad call reads and writes the
  // whole rows x co accumulator, so a k-step of one AMX chunk (32 pixels: 224 x 128 accumulators
  // moved for 3 tile products each) spent most of ResNet-18's grad_weights there. That step is a
  // multiple of 32, the AMX k-chunk, so chunk boundaries (and results) stay where 32-steps put them.
  auto step_for = [&](uint32_t bufs) -> uint32_t {
    auto fits = [&](uint32_t s) {
      return bufs * rows16 * s * elem_bytes <= soc.l0a_bytes && s * co * elem_bytes <= soc.l0b_bytes;
    };
    uint32_t s = 128;
    while (s > 16 && !fits(s)) s -= 16;
    return fits(s) ? s : 0;
  };
  uint32_t step = step_for(2);
  t.a2_bufs = 2;
  if (step_for(1) / 32 * 32 >= 2 * step) {
    step = step_for(1) / 32 * 32;
    t.a2_bufs = 1;
  }
  if (step == 0) return t;
  // Pixels per L1 chunk: the input slab for them (c1t planes) + the grad_output chunk.
  const uint32_t m = t.ho * t.wo;
  uint32_t pix_l1 = AlignUp<uint32_t>(m < 2048 ? m : 2048, step);
  for (;;) {
    const uint32_t orows = (pix_l1 + t.wo - 2) / t.wo + 1 < t.ho ? (pix_l1 + t.wo - 2) / t.wo + 1 : t.ho;
    uint32_t rows = (orows - 1) * sh + effh;
    if (rows > h) rows = h;
    const uint64_t slab = uint64_t(rows) * w;
    const uint64_t bytes = slab * c1t * 32 + uint64_t(AlignUp<uint32_t>(pix_l1, 16)) * co * elem_bytes;
    if (slab <= 16384 && bytes <= soc.l1_bytes) {
      t.slab_pix_max = uint32_t(slab);
      t.ok = 1;
      break;
    }
    if (pix_l1 <= step) break;
    pix_l1 = AlignUp<uint32_t>(pix_l1 / 2, step);
  }
  t.tile_c1 = c1t;
  t.tile_co = co;
  t.pix_step = step;
  t.pix_l1 = pix_l1;
  t.tiles_kc = CeilDivU(t.c1g, c1t);
  t.tiles_co = CeilDivU(t.cog, co);
  t.total_tiles = tiles(c1t, co);
  const uint64_t want = uint64_t(soc.cube_cores);
  // Split-K over images x pixel chunks when the tiles leave cores idle (a first layer's few input
  // channels make one tile: one core summed all N * Ho * Wo pixels).
  t.chunks_img = CeilDivU(m, pix_l1);
  const uint64_t chunks = uint64_t(n) * t.chunks_img;
  uint64_t splits = t.total_tiles && t.total_tiles < want ? want / t.total_tiles : 1;
  if (splits > chunks) splits = chunks ? chunks : 1;
  t.chunks_per_split = uint32_t(CeilDivU<uint64_t>(chunks ? chunks : 1, splits));
  t.splits = uint32_t(CeilDivU<uint64_t>(chunks ? chunks : 1, t.chunks_per_split));
  t.total_tiles *= t.splits;
  const uint64_t total = t.total_tiles ? t.total_tiles : 1;
  const uint64_t cores = total < want ? total : want;
  t.tiles_per_core = CeilDivU<uint64_t>(total, cores);
  t.block_dim = uint32_t(CeilDivU<uint64_t>(total, t.tiles_per_core));
  return t;
}

}  // namespace npu_kernels

namespace {

using npu_kernels::Conv2dDwTiling;

template <typename T>
class Conv2dDwKernel {
 public:
  __aicore__ inline void Init(GM_ADDR x, GM_ADDR go, GM_ADDR ws, const Conv2dDwTiling& t) {
    t_ = t;
    if constexpr (std::is_same_v<T, float>) SetHF32Mode(t.hf32 ? HF32Mode::ENABLE : HF32Mode::DISABLE);
    xGm_.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(x));
    gGm_.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(go));
    wsGm_.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(ws));
    wsF_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(ws));
    rows16_ = cube::Align16(t.tile_c1 * t.taps * kC0);
    pipe_.InitBuffer(qFm_, 1, t.slab_pix_max * t.tile_c1 * 32);
    pipe_.InitBuffer(qG1_, 1, cube::Align16(t.pix_l1) * t.tile_co * sizeof(T));
    pipe_.InitBuffer(qA2_, t.a2_bufs, rows16_ * t.pix_step * sizeof(T));
    pipe_.InitBuffer(qB2_, 1, t.pix_step * t.tile_co * sizeof(T));
    pipe_.InitBuffer(qC_, 1, rows16_ * t.tile_co * sizeof(float));
  }

  __aicore__ inline void Process() {
    const uint64_t first = uint64_t(GetBlockIdx()) * t_.tiles_per_core;
    uint64_t last = first + t_.tiles_per_core;
    if (last > t_.total_tiles) last = t_.total_tiles;
    for (uint64_t tile = first; tile < last; ++tile) ComputeTile(tile);
  }

 private:
  static constexpr uint32_t kC0 = cube::C0Of<T>();

  __aicore__ inline void ComputeTile(uint64_t tile) {
    const uint64_t per_split = t_.total_tiles / t_.splits;
    const uint32_t split = uint32_t(tile / per_split);
    tile %= per_split;
    const uint32_t tc = uint32_t(tile % t_.tiles_co);
    const uint32_t tk = uint32_t((tile / t_.tiles_co) % t_.tiles_kc);
    const uint32_t g = uint32_t(tile / (uint64_t(t_.tiles_co) * t_.tiles_kc));
    const uint32_t c1a = tk * t_.tile_c1;
    const uint32_t c1n = t_.c1g - c1a < t_.tile_c1 ? t_.c1g - c1a : t_.tile_c1;
    const uint32_t cvalid = t_.cg - c1a * kC0 < c1n * kC0 ? t_.cg - c1a * kC0 : c1n * kC0;
    const uint32_t rows_k = c1n * t_.taps * kC0;
    const uint32_t co0 = tc * t_.tile_co;
    const uint32_t ct = t_.cog - co0 < t_.tile_co ? t_.cog - co0 : t_.tile_co;
    const uint32_t m = t_.ho * t_.wo;
    LocalTensor<float> acc = qC_.template AllocTensor<float>();
    bool init = true;
    // This split's chunks: chunk q is image q / chunks_img, pixels from (q % chunks_img) * pix_l1.
    const uint64_t q0 = uint64_t(split) * t_.chunks_per_split;
    const uint64_t q_end = q0 + t_.chunks_per_split < uint64_t(t_.n) * t_.chunks_img
                               ? q0 + t_.chunks_per_split : uint64_t(t_.n) * t_.chunks_img;
    for (uint64_t q = q0; q < q_end; ++q) {
      const uint32_t nb = uint32_t(q / t_.chunks_img);
      {
        const uint32_t p0 = uint32_t(q % t_.chunks_img) * t_.pix_l1;
        const uint32_t pl = m - p0 < t_.pix_l1 ? m - p0 : t_.pix_l1;
        // Input rows these output pixels read (clipped; the rest is Load3D padding).
        const uint32_t oh0 = p0 / t_.wo, oh1 = (p0 + pl - 1) / t_.wo;
        const int64_t lo = int64_t(oh0) * t_.sh - t_.pt;
        const int64_t hi = int64_t(oh1) * t_.sh - t_.pt + int64_t(t_.kh - 1) * t_.dh;
        const int64_t lo_c = lo < 0 ? 0 : lo;
        const int64_t hi_c = hi > int64_t(t_.h) - 1 ? int64_t(t_.h) - 1 : hi;
        const uint32_t rows = uint32_t(hi_c - lo_c + 1), top = uint32_t(lo_c - lo);
        const int64_t need = int64_t(oh1 - oh0) * t_.sh + int64_t(t_.kh - 1) * t_.dh + 1;
        const uint32_t bottom = need > int64_t(rows) + top ? uint32_t(need - rows - top) : 0;
        const uint32_t pix = rows * t_.w;
        LocalTensor<T> fm = qFm_.template AllocTensor<T>();
        if (t_.x_5hd) {
          // One block of pix pixels (32 B each) per C1 plane: L1 gets [c1n][pix][C0] as it is.
          const uint64_t plane = uint64_t(t_.h) * t_.w;
          DataCopy(fm, xGm_[((uint64_t(nb) * t_.c1g + c1a) * plane + uint64_t(lo_c) * t_.w) * kC0],
                   DataCopyParams(uint16_t(c1n), uint16_t(pix), uint16_t(plane - pix), 0));
        } else {
          const uint64_t x_off = ((uint64_t(nb) * t_.h + uint64_t(lo_c)) * t_.w) * t_.c + uint64_t(g) * t_.cg + c1a * kC0;
          DataCopy(fm, xGm_[x_off], Nd2NzParams(1, uint16_t(pix), uint16_t(cvalid), 0, uint16_t(t_.c), uint16_t(pix), 1, 0));
        }
        qFm_.EnQue(fm);
        // grad_output chunk as B (pixels x co): NHWC is row-major, NCHW is its transpose.
        LocalTensor<T> g1 = qG1_.template AllocTensor<T>();
        const uint32_t cabs = g * t_.cog + co0;
        if (t_.go_cl) {
          cube::LoadBToL1(g1, gGm_[(uint64_t(nb) * m + p0) * t_.cout + cabs], false, ct, pl, t_.cout);
        } else {
          cube::LoadBToL1(g1, gGm_[(uint64_t(nb) * t_.cout + cabs) * m + p0], true, ct, pl, m);
        }
        qG1_.EnQue(g1);
        fm = qFm_.template DeQue<T>();
        g1 = qG1_.template DeQue<T>();
        LoadData3DParamsV2<T> p3;
        p3.padList[0] = uint8_t(t_.pl); p3.padList[1] = uint8_t(t_.pr);
        p3.padList[2] = uint8_t(top); p3.padList[3] = uint8_t(bottom);
        p3.l1H = uint16_t(rows); p3.l1W = uint16_t(t_.w); p3.channelSize = uint16_t(c1n * kC0);
        p3.strideW = uint8_t(t_.sw); p3.strideH = uint8_t(t_.sh);
        p3.filterW = uint8_t(t_.kw & 255); p3.filterH = uint8_t(t_.kh & 255);
        p3.filterSizeW = t_.kw >= 256; p3.filterSizeH = t_.kh >= 256;
        p3.dilationFilterW = uint8_t(t_.dw); p3.dilationFilterH = uint8_t(t_.dh);
        p3.kStartPt = 0; p3.kExtension = uint16_t(rows_k);
        p3.enTranspose = true;
        p3.padValue = T(0);
        for (uint32_t kk = 0; kk < pl; kk += t_.pix_step) {
          const uint32_t kb = pl - kk < t_.pix_step ? pl - kk : t_.pix_step;
          p3.mStartPt = uint16_t(p0 + kk - oh0 * t_.wo);
          p3.mExtension = uint16_t(kb);
          LocalTensor<T> a2 = qA2_.template AllocTensor<T>();
          LoadData(a2, fm, p3);                                         // im2col^T window (K x pixels)
          qA2_.EnQue(a2);
          LocalTensor<T> b2 = qB2_.template AllocTensor<T>();
          cube::LoadBToL0(b2, g1, t_.go_cl == 0, ct, pl, kk, kb);      // grad_output (pixels x co)
          qB2_.EnQue(b2);
          a2 = qA2_.template DeQue<T>();
          b2 = qB2_.template DeQue<T>();
          cube::MmadStep(acc, a2, b2, rows_k, ct, kb, init, true);
          init = false;
          qA2_.FreeTensor(a2);
          qB2_.FreeTensor(b2);
        }
        qFm_.FreeTensor(fm);
        qG1_.FreeTensor(g1);
      }
    }
    qC_.EnQue(acc);
    acc = qC_.template DeQue<float>();
    const uint64_t kg = uint64_t(t_.c1g) * t_.taps * kC0;
    FixpipeParamsV220 fp(uint16_t(ct), uint16_t(rows_k), uint16_t(cube::Align16(rows_k)), uint32_t(t_.cog), false);
    const uint64_t at = (uint64_t(g) * kg + uint64_t(c1a) * t_.taps * kC0) * t_.cog + co0;
    if (t_.splits > 1) {  // this split's float partial
      Fixpipe(wsF_[uint64_t(split) * t_.groups * kg * t_.cog + at], acc, fp);
    } else {
      fp.quantPre = cube::QuantFor<T>();
      Fixpipe(wsGm_[at], acc, fp);
    }
    qC_.FreeTensor(acc);
  }

  Conv2dDwTiling t_{};
  uint32_t rows16_ = 0;
  TPipe pipe_;
  TQue<TPosition::A1, 1> qFm_;
  TQue<TPosition::B1, 1> qG1_;
  TQue<TPosition::A2, 1> qA2_;
  TQue<TPosition::B2, 1> qB2_;
  TQue<TPosition::CO1, 1> qC_;
  GlobalTensor<T> xGm_, gGm_, wsGm_;
  GlobalTensor<float> wsF_;
};

template <typename T>
__aicore__ inline void RunConv2dDw(GM_ADDR x, GM_ADDR go, GM_ADDR ws, GM_ADDR tiling) {
  GET_TILING_DATA_WITH_STRUCT(Conv2dDwTiling, t, tiling);
  Conv2dDwKernel<T> op;
  op.Init(x, go, ws, t);
  op.Process();
}

}  // namespace

extern "C" __global__ __aicore__ void conv2d_dw_kernel_float(GM_ADDR x, GM_ADDR go, GM_ADDR ws, GM_ADDR tiling) {
  RunConv2dDw<float>(x, go, ws, tiling);
}
extern "C" __global__ __aicore__ void conv2d_dw_kernel_half(GM_ADDR x, GM_ADDR go, GM_ADDR ws, GM_ADDR tiling) {
  RunConv2dDw<half>(x, go, ws, tiling);
}
extern "C" __global__ __aicore__ void conv2d_dw_kernel_bf16(GM_ADDR x, GM_ADDR go, GM_ADDR ws, GM_ADDR tiling) {
  RunConv2dDw<bfloat16_t>(x, go, ws, tiling);
}
