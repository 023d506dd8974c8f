// Small-M matrix products on the vector cores (see gemv.h for when and why).
//
// Per work item (batch matrix b, columns [n0, n0 + w)): the M x w float accumulator lives in UB;
// B streams in kc-row tiles (one DataCopyPad of kc rows of w elements, double buffered through the
// VECIN queue), widened to float once per tile for 16-bit types, and each tile row k is added into
// every accumulator row m with one Axpy(acc[m], B[k], A[m][k]). A's kc-column chunk comes in beside
// it and is read on the scalar pipe. The epilogue (scale, shift, residual, ReLU) runs on the
// accumulator rows, which leave through the VECOUT queue, rounded to the output dtype.
#include "gemv.h"

#include "kernel_operator.h"
#include "norm_util.h"

using namespace AscendC;

namespace npu_kernels {

GemvTiling gemv_tiling(uint32_t batch, uint32_t m, uint32_t n, uint32_t k, uint32_t elem_bytes, const SocInfo& soc) {
  GemvTiling t{};
  t.batch = batch;
  t.m = m;
  t.n = n;
  t.k = k;
  t.elem_bytes = elem_bytes;
  if (!GemvFits(m, k, n, elem_bytes) || batch == 0 || (elem_bytes != 2 && elem_bytes != 4)) return t;
  const uint32_t lanes = kBlockBytes / elem_bytes;  // elements per 32 B
  // Column chunks as wide as the UB allows (up to 4096): B is then read in whole rows, contiguous in
  // GM. Per column: the float accumulator's m rows, three float epilogue rows, a residual row and an
  // output row; besides them 64 KB of B tiles and up to 16 KB of A.
  const uint32_t per_col = 4 * m + 12 + 2 * elem_bytes;
  const uint32_t fixed = 64 * 1024 + 16 * 1024 + 4 * 1024;
  uint32_t max_w = soc.ub_bytes > fixed ? (soc.ub_bytes - fixed) / per_col : 16;
  if (max_w > 4096) max_w = 4096;
  max_w = max_w < 16 ? 16 : AlignDown<uint32_t>(max_w, 16);
  t.chunks_n = CeilDivU<uint32_t>(n, max_w);
  t.nw = AlignUp<uint32_t>(CeilDivU<uint32_t>(n, t.chunks_n), 16);
  t.chunks_n = CeilDivU<uint32_t>(n, t.nw);
  t.pitch = AlignUp<uint32_t>(t.nw, lanes);
  // UB: two raw B tiles + (16-bit) their float copy, kc * pitch elements each: 64 KB in all.
  constexpr uint32_t kTileElems = 8192;
  uint32_t kc = kTileElems / t.pitch;
  if (kc < 1) kc = 1;
  if (kc > k) kc = k;
  t.kc = kc;
  // Split K while the cores are short of items and each item keeps >= 128 KB of B (the partial
  // sums' extra traffic, m * nw floats per item, stays small against it).
  const uint64_t chunk_items = uint64_t(batch) * t.chunks_n;
  const uint64_t chunk_bytes = uint64_t(t.nw) * k * elem_bytes;
  uint64_t splits = 1;
  const uint64_t want = static_cast<uint64_t>(soc.vector_cores);
  if (chunk_items < want) {
    splits = want / chunk_items;
    const uint64_t by_bytes = chunk_bytes / (128 * 1024);
    if (splits > by_bytes) splits = by_bytes;
    const uint64_t by_rows = CeilDivU<uint64_t>(k, kc);
    if (splits > by_rows) splits = by_rows;
    if (splits < 1) splits = 1;
  }
  t.k_split = AlignUp<uint32_t>(static_cast<uint32_t>(CeilDivU<uint64_t>(k, splits)), kc);
  t.splits = CeilDivU<uint32_t>(k, t.k_split);
  t.items = chunk_items * t.splits;
  const ItemSplit sp = SplitItems(t.items, t.items * uint64_t(t.nw) * t.k_split * elem_bytes, soc.vector_cores,
                                  64 * 1024);
  t.items_per_core = sp.per_core;
  t.block_dim = sp.block_dim;
  // Reduce pieces of >= 32 KB of partial sums each, up to one per core.
  uint64_t red_chunks = CeilDivU<uint64_t>(uint64_t(t.splits) * m * n * 4, 32 * 1024);
  if (red_chunks * batch > want) red_chunks = want / batch;
  if (red_chunks < t.chunks_n) red_chunks = t.chunks_n;
  t.red_nw = AlignUp<uint32_t>(static_cast<uint32_t>(CeilDivU<uint64_t>(n, red_chunks)), 16);
  if (t.red_nw > t.nw) t.red_nw = t.nw;
  t.red_chunks_n = CeilDivU<uint32_t>(n, t.red_nw);
  t.red_items = uint64_t(batch) * t.red_chunks_n;
  const ItemSplit rs = SplitItems(t.red_items, t.red_items * t.splits * m * t.red_nw * 4, soc.vector_cores, 16 * 1024);
  t.red_items_per_core = rs.per_core;
  t.red_block_dim = rs.block_dim;
  t.ok = 1;
  return t;
}

}  // namespace npu_kernels

namespace {

using npu_kernels::GemvTiling;
using namespace nn_kernels;

template <typename T>
class GemvKernel {
 public:
  __aicore__ inline void Init(GM_ADDR a, GM_ADDR b, GM_ADDR c, GM_ADDR scale, GM_ADDR shift, GM_ADDR residual,
                              GM_ADDR ws, const GemvTiling& t) {
    t_ = t;
    if (t.splits > 1) wsGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(ws));
    aGm_.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(a));
    bGm_.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(b));
    cGm_.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(c));
    const uint32_t nvec = t.rowwise ? t.m : t.n;
    if (t.has_scale) scaleGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(scale), nvec);
    if (t.has_shift) shiftGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(shift), nvec);
    if (t.has_residual) resGm_.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(residual));
    const uint32_t esz = sizeof(T);
    kcp_ = npu_kernels::AlignUp<uint32_t>(t.kc, 16);
    pipe_.InitBuffer(bQ_, 2, t.kc * t.pitch * esz);
    if constexpr (!std::is_same_v<T, float>) pipe_.InitBuffer(bF_, t.kc * t.pitch * sizeof(float));
    pipe_.InitBuffer(aQ_, 1, t.m * kcp_ * esz);
    pipe_.InitBuffer(acc_, t.m * t.pitch * sizeof(float));
    pipe_.InitBuffer(vec_, 3 * t.pitch * sizeof(float));  // epilogue rows: scale, shift, residual
    pipe_.InitBuffer(resQ_, 1, t.pitch * esz);
    pipe_.InitBuffer(outQ_, 1, t.pitch * esz);
  }

  __aicore__ inline void Process() {
    const bool reduce = t_.phase == 1;
    const uint64_t per = reduce ? t_.red_items_per_core : t_.items_per_core;
    const uint64_t total = reduce ? t_.red_items : t_.items;
    const uint64_t first = uint64_t(GetBlockIdx()) * per;
    uint64_t last = first + per;
    if (last > total) last = total;
    for (uint64_t item = first; item < last; ++item) {
      if (reduce) ReduceItem(item);
      else Item(item);
    }
  }

 private:
  // Workspace row of split ks, batch bi, row mi, from column n0.
  __aicore__ inline uint64_t WsOffset(uint32_t ks, uint64_t bi, uint32_t mi, uint32_t n0) const {
    return ((uint64_t(ks) * t_.batch + bi) * t_.m + mi) * t_.n + n0;
  }

  __aicore__ inline void Item(uint64_t item) {
    const uint32_t ks = uint32_t(item % t_.splits);
    const uint64_t chunk = item / t_.splits;
    const uint64_t bi = chunk / t_.chunks_n;
    const uint32_t n0 = uint32_t(chunk % t_.chunks_n) * t_.nw;
    const uint32_t k_begin = ks * t_.k_split;
    const uint32_t k_end = t_.k - k_begin < t_.k_split ? t_.k : k_begin + t_.k_split;
    const uint32_t w = t_.n - n0 < t_.nw ? t_.n - n0 : t_.nw;
    const uint32_t pw = npu_kernels::AlignUp<uint32_t>(w, npu_kernels::kBlockBytes / sizeof(T));  // row pitch
    const uint32_t esz = sizeof(T);
    LocalTensor<float> acc = acc_.Get<float>();
    SyncMte3ToV();  // the previous item's partial sums have left the accumulator
    Duplicate(acc, 0.0f, int32_t(t_.m * pw));
    const uint64_t a_base = bi * t_.a_batch, b_base = bi * t_.b_batch;
    for (uint32_t k0 = k_begin; k0 < k_end; k0 += t_.kc) {
      const uint32_t kt = k_end - k0 < t_.kc ? k_end - k0 : t_.kc;
      // A[:, k0 : k0 + kt] (rows kcp_ apart) for the scalar pipe.
      LocalTensor<T> a = aQ_.template AllocTensor<T>();
      DataCopyPad(a, aGm_[a_base + k0],
                  DataCopyExtParams(uint16_t(t_.m), kt * esz, uint32_t((t_.lda - kt) * esz),
                                    (kcp_ * esz - npu_kernels::AlignUp<uint32_t>(kt * esz, 32)) / 32, 0),
                  DataCopyPadExtParams<T>(false, 0, 0, T(0)));
      // B[k0 : k0 + kt, n0 : n0 + w] (rows pw apart, the row tails zero padded).
      LocalTensor<T> b = bQ_.template AllocTensor<T>();
      DataCopyPad(b, bGm_[b_base + uint64_t(k0) * t_.ldb + n0],
                  DataCopyExtParams(uint16_t(kt), w * esz, uint32_t((t_.ldb - w) * esz), 0, 0),
                  DataCopyPadExtParams<T>(true, 0, uint8_t(pw - w), T(0)));
      aQ_.EnQue(a);
      bQ_.EnQue(b);
      a = aQ_.template DeQue<T>();
      b = bQ_.template DeQue<T>();
      SyncMte2ToS();
      LocalTensor<float> bf;
      if constexpr (std::is_same_v<T, float>) {
        bf = b;
      } else {
        bf = bF_.Get<float>();
        Cast(bf, b, RoundMode::CAST_NONE, kt * pw);
      }
      for (uint32_t kk = 0; kk < kt; ++kk) {
        const LocalTensor<float> row = bf[kk * pw];
        for (uint32_t mi = 0; mi < t_.m; ++mi) Axpy(acc[mi * pw], row, float(a.GetValue(mi * kcp_ + kk)), int32_t(w));
      }
      SyncSToMte2();  // the scalar reads of A are done before the next chunk overwrites it
      bQ_.FreeTensor(b);
      aQ_.FreeTensor(a);
    }
    if (t_.splits == 1) {
      Epilogue(acc, bi, n0, w, pw);
      return;
    }
    SyncVToMte3();
    for (uint32_t mi = 0; mi < t_.m; ++mi)
      DataCopyPad(wsGm_[WsOffset(ks, bi, mi, n0)], acc[mi * pw], DataCopyExtParams(1, w * 4, 0, 0, 0));
  }

  // Phase 1: the column chunk's partial sums over the splits, then the epilogue.
  __aicore__ inline void ReduceItem(uint64_t item) {
    const uint64_t bi = item / t_.red_chunks_n;
    const uint32_t n0 = uint32_t(item % t_.red_chunks_n) * t_.red_nw;
    const uint32_t w = t_.n - n0 < t_.red_nw ? t_.n - n0 : t_.red_nw;
    const uint32_t pw = npu_kernels::AlignUp<uint32_t>(w, npu_kernels::kBlockBytes / sizeof(T));
    const uint32_t pf = npu_kernels::AlignUp<uint32_t>(w, 8);  // float rows of a tile
    LocalTensor<float> acc = acc_.Get<float>();
    SyncVToMte2();  // the previous item's epilogue has read the accumulator
    const uint32_t rows_per_tile = t_.kc * t_.pitch * sizeof(T) / (pf * 4);  // float rows per B tile buffer
    for (uint32_t mi = 0; mi < t_.m; ++mi) {
      const LocalTensor<float> r = acc[mi * pw];
      for (uint32_t s0 = 0; s0 < t_.splits; s0 += rows_per_tile) {
        const uint32_t cnt = t_.splits - s0 < rows_per_tile ? t_.splits - s0 : rows_per_tile;
        LocalTensor<float> p = bQ_.template AllocTensor<T>().template ReinterpretCast<float>();
        DataCopyPad(p, wsGm_[WsOffset(s0, bi, mi, n0)],
                    DataCopyExtParams(uint16_t(cnt), w * 4, uint32_t((uint64_t(t_.batch) * t_.m * t_.n - w) * 4), 0, 0),
                    DataCopyPadExtParams<float>(false, 0, 0, 0.f));
        bQ_.EnQue(p);
        p = bQ_.template DeQue<float>();
        uint32_t j = 0;
        if (s0 == 0) {
          Adds(r, p, 0.0f, int32_t(w));
          j = 1;
        }
        for (; j < cnt; ++j) Add(r, r, p[j * pf], int32_t(w));
        bQ_.FreeTensor(p);
      }
    }
    Epilogue(acc, bi, n0, w, pw);
  }

  __aicore__ inline void Epilogue(const LocalTensor<float>& acc, uint64_t bi, uint32_t n0, uint32_t w, uint32_t pw) {
    const uint32_t esz = sizeof(T);
    const LocalTensor<float> sv = vec_.Get<float>();  // scale (over n, or the m row values)
    const LocalTensor<float> hv = sv[t_.pitch];        // shift
    const LocalTensor<float> rf = sv[2 * t_.pitch];    // a 16-bit residual row widened
    if (t_.has_scale || t_.has_shift) {
      SyncVToMte2();  // the previous item's epilogue has read sv / hv
      const uint32_t off = t_.rowwise ? 0 : n0, cnt = t_.rowwise ? t_.m : w;
      if (t_.has_scale)
        DataCopyPad(sv, scaleGm_[off], DataCopyExtParams(1, cnt * 4, 0, 0, 0), DataCopyPadExtParams<float>(false, 0, 0, 0.f));
      if (t_.has_shift)
        DataCopyPad(hv, shiftGm_[off], DataCopyExtParams(1, cnt * 4, 0, 0, 0), DataCopyPadExtParams<float>(false, 0, 0, 0.f));
      SyncMte2ToV();
      if (t_.rowwise) SyncMte2ToS();
    }
    for (uint32_t mi = 0; mi < t_.m; ++mi) {
      const LocalTensor<float> r = acc[mi * pw];
      if (t_.has_scale) {
        if (t_.rowwise) Muls(r, r, sv.GetValue(mi), int32_t(w));
        else Mul(r, r, sv, int32_t(w));
      }
      if (t_.has_shift) {
        if (t_.rowwise) Adds(r, r, hv.GetValue(mi), int32_t(w));
        else Add(r, r, hv, int32_t(w));
      }
      if (t_.has_residual) {
        LocalTensor<T> res = resQ_.template AllocTensor<T>();
        DataCopyPad(res, resGm_[bi * t_.r_batch + uint64_t(mi) * t_.ldr + n0], DataCopyExtParams(1, w * esz, 0, 0, 0),
                    DataCopyPadExtParams<T>(false, 0, 0, T(0)));
        resQ_.EnQue(res);
        res = resQ_.template DeQue<T>();
        if constexpr (std::is_same_v<T, float>) {
          Add(r, r, res, int32_t(w));
        } else {
          Cast(rf, res, RoundMode::CAST_NONE, w);
          Add(r, r, rf, int32_t(w));
        }
        resQ_.FreeTensor(res);
      }
      if (t_.relu) Relu(r, r, int32_t(w));
      LocalTensor<T> o = outQ_.template AllocTensor<T>();
      if constexpr (std::is_same_v<T, float>) Adds(o, r, 0.0f, int32_t(w));
      else Cast(o, r, RoundMode::CAST_RINT, w);
      outQ_.EnQue(o);
      o = outQ_.template DeQue<T>();
      DataCopyPad(cGm_[bi * t_.c_batch + uint64_t(mi) * t_.ldc + n0], o, DataCopyExtParams(1, w * esz, 0, 0, 0));
      outQ_.FreeTensor(o);
    }
  }

  GemvTiling t_{};
  uint32_t kcp_ = 0;
  TPipe pipe_;
  TQue<TPosition::VECIN, 2> bQ_;
  TQue<TPosition::VECIN, 1> aQ_;
  TQue<TPosition::VECIN, 1> resQ_;
  TQue<TPosition::VECOUT, 1> outQ_;
  TBuf<TPosition::VECCALC> bF_, acc_, vec_;
  GlobalTensor<T> aGm_, bGm_, cGm_, resGm_;
  GlobalTensor<float> scaleGm_, shiftGm_, wsGm_;
};

template <typename T>
__aicore__ inline void RunGemv(GM_ADDR a, GM_ADDR b, GM_ADDR c, GM_ADDR scale, GM_ADDR shift, GM_ADDR residual,
                               GM_ADDR ws, GM_ADDR tiling) {
  GET_TILING_DATA_WITH_STRUCT(GemvTiling, t, tiling);
  GemvKernel<T> op;
  op.Init(a, b, c, scale, shift, residual, ws, t);
  op.Process();
}

}  // namespace

extern "C" __global__ __aicore__ void gemv_kernel_float(GM_ADDR a, GM_ADDR b, GM_ADDR c, GM_ADDR scale, GM_ADDR shift,
                                                        GM_ADDR residual, GM_ADDR ws, GM_ADDR tiling) {
  RunGemv<float>(a, b, c, scale, shift, residual, ws, tiling);
}
extern "C" __global__ __aicore__ void gemv_kernel_half(GM_ADDR a, GM_ADDR b, GM_ADDR c, GM_ADDR scale, GM_ADDR shift,
                                                       GM_ADDR residual, GM_ADDR ws, GM_ADDR tiling) {
  RunGemv<half>(a, b, c, scale, shift, residual, ws, tiling);
}
extern "C" __global__ __aicore__ void gemv_kernel_bf16(GM_ADDR a, GM_ADDR b, GM_ADDR c, GM_ADDR scale, GM_ADDR shift,
                                                       GM_ADDR residual, GM_ADDR ws, GM_ADDR tiling) {
  RunGemv<bfloat16_t>(a, b, c, scale, shift, residual, ws, tiling);
}
