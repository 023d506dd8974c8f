// gather / scatter / scatter_add on the vector cores (see gather_scatter.h).
#include "gather_scatter.h"

#include <type_traits>

#include "kernel_operator.h"
#include "norm_util.h"

using namespace AscendC;

namespace npu_kernels {

namespace {
constexpr uint64_t kUbReserve = 8192;
constexpr uint64_t kRowModeMinJ = 32;  // fewer indices per row: the scalar path
}

GatherScatterTiling gather_tiling(uint64_t O, uint64_t D, uint64_t J, uint64_t Q, uint32_t elem_bytes, bool idx64,
                                  const SocInfo& soc) {
  GatherScatterTiling t;
  t.O = O, t.D = D, t.J = J, t.Q = Q;
  t.elem_bytes = elem_bytes;
  t.idx64 = idx64 ? 1 : 0;
  t.units = O * J * Q;
  // Output staging: one UB chunk (a multiple of 32 B).
  t.chunk = AlignDown<uint64_t>((soc.ub_bytes - kUbReserve) / 2, 32) / elem_bytes;
  const ItemSplit sp = SplitItems(t.units, t.units * elem_bytes, soc.vector_cores, 16 * 1024);
  t.units_per_core = sp.per_core;
  t.block_dim = sp.block_dim;
  return t;
}

bool gather_row_mode(GatherScatterTiling& t, const SocInfo& soc) {
  if (t.Q != 1 || t.sd != 1 || t.ij != 1 || (t.elem_bytes != 2 && t.elem_bytes != 4) || t.D == 0 || t.J == 0)
    return false;
  // A row costs a load of D elements and ~20 vector instructions: with a few indices per row the
  // scalar path's two reads per output are cheaper (one index per row of 1000: 0.45 -> 0.005 ms).
  if (t.J < kRowModeMinJ) return false;
  const uint64_t row_bytes = AlignUp<uint64_t>(t.D * t.elem_bytes, 32);
  const uint32_t chunk = 2048;
  // UB: the self row; per chunk the indices (8 B), two offset tables, the words (4 B each), two
  // float copies and a reduction buffer, the output.
  const uint64_t need = row_bytes + uint64_t(chunk) * (8 + 4 + 4 + 4 + 4 + 4 + 4 + t.elem_bytes) + 1024;
  if (need + kUbReserve > soc.ub_bytes || t.D >= (uint64_t(1) << 24)) return false;
  t.row_mode = 1;
  t.row_chunk = chunk;
  t.units = t.O;
  // The work of a row is its load and its outputs.
  const ItemSplit sp = SplitItems(t.O, t.O * (t.D + t.J) * t.elem_bytes, soc.vector_cores, 16 * 1024);
  t.units_per_core = sp.per_core;
  t.block_dim = sp.block_dim;
  return true;
}

IndexLinearTiling index_linear_tiling(uint64_t n, uint32_t q, const SocInfo& soc) {
  IndexLinearTiling t;
  t.n = n;
  t.q = q;
  t.chunk = AlignDown<uint64_t>((soc.ub_bytes - kUbReserve) / 2, 32) / 8;
  const ItemSplit sp = SplitItems(n, n * 8 * (q + 1), soc.vector_cores, 16 * 1024);
  t.units_per_core = sp.per_core;
  t.block_dim = sp.block_dim;
  return t;
}

GatherScatterTiling scatter_tiling(uint64_t O, uint64_t D, uint64_t J, uint64_t Q, uint64_t sd, uint32_t elem_bytes,
                                   bool idx64, const SocInfo& soc) {
  GatherScatterTiling t;
  t.O = O, t.D = D, t.J = J, t.Q = Q;
  t.sd = sd;
  t.elem_bytes = elem_bytes;
  t.idx64 = idx64 ? 1 : 0;
  const uint64_t budget = soc.ub_bytes - kUbReserve;  // one destination tile
  const uint64_t row_min = 32 / elem_bytes;            // elements of one 32 B UB block
  if (Q == 1 && sd == 1) {
    // The destination of one o is a contiguous run of D elements: windows of it.
    t.flat = 1;
    t.qblk = 1;
    t.row_elems = 1;
    const uint64_t cap = AlignDown<uint64_t>(budget / elem_bytes, row_min);
    t.dwin = D < cap ? D : cap;
  } else {
    // Tiles of dwin rows (strided by sd in GM, 32 B-aligned in UB) by qblk columns. Whole columns of
    // D rows first (each unit walks every j of its columns once per window), then as many columns as fit.
    uint64_t dwin = D < 4095 ? D : 4095;  // DataCopyPad's blockCount
    if (dwin > budget / 32) dwin = budget / 32;
    const uint64_t row_bytes = AlignDown<uint64_t>(budget / dwin, 32);
    uint64_t qblk = row_bytes / elem_bytes;
    if (qblk > Q) qblk = Q;
    // Enough tiles for the cores when there are few rows o.
    const uint64_t want = CeilDivU<uint64_t>(uint64_t(soc.vector_cores), O ? O : 1);
    if (want > 1 && CeilDivU<uint64_t>(Q, qblk) < want) {
      const uint64_t q = AlignUp<uint64_t>(CeilDivU<uint64_t>(Q, want), row_min);
      if (q < qblk) qblk = q;
    }
    t.flat = 0;
    t.dwin = dwin;
    t.qblk = qblk;
    t.row_elems = uint32_t(AlignUp<uint64_t>(qblk * elem_bytes, 32) / elem_bytes);
  }
  t.qtiles = CeilDivU<uint64_t>(Q, t.qblk);
  t.dtiles = CeilDivU<uint64_t>(D, t.dwin);
  t.units = O * t.qtiles * t.dtiles;
  uint64_t cores = t.units < uint64_t(soc.vector_cores) ? t.units : uint64_t(soc.vector_cores);
  if (cores < 1) cores = 1;
  t.units_per_core = CeilDivU<uint64_t>(t.units ? t.units : 1, cores);
  t.block_dim = uint32_t(CeilDivU<uint64_t>(t.units ? t.units : 1, t.units_per_core));
  return t;
}

bool scatter_bucket_tiling(GatherScatterTiling& t, bool vrow_ok, const SocInfo& soc) {
  constexpr uint64_t kPairs = 1024, kStageBytes = 32 * 1024, kMaxRowElems = 4096;
  const uint64_t eb = t.elem_bytes, row_min = 32 / eb;
  const bool flat = t.Q == 1 && t.sd == 1;
  // UB: the tile, a chunk of pairs; for the row path the staged src rows and two float rows.
  uint64_t qblk = 1, rs = 1;
  uint64_t budget = soc.ub_bytes - kUbReserve - kPairs * 8;
  if (!flat) {
    qblk = t.Q < kMaxRowElems ? t.Q : kMaxRowElems;
    rs = AlignUp<uint64_t>(qblk * eb, 32) / eb;
    vrow_ok = vrow_ok && qblk >= 8;
    if (vrow_ok) budget -= kStageBytes + 2 * rs * 4;
  } else {
    vrow_ok = false;
  }
  // half / bfloat16 row adds keep a float copy of the tile (rounded once at the end, as the CPU does).
  const uint64_t tile_eb = vrow_ok && eb == 2 ? eb + 4 : eb;
  uint64_t cap = flat ? AlignDown<uint64_t>(budget / eb, row_min) : budget / (rs * tile_eb);
  if (!flat && cap > 4095) cap = 4095;  // DataCopyPad's blockCount
  const uint64_t qtiles = CeilDivU<uint64_t>(t.Q, qblk);
  // Rows per window: enough windows to give every core a few units, at most a tile.
  uint64_t want = CeilDivU<uint64_t>(t.D * t.O * qtiles, uint64_t(soc.vector_cores) * 2);
  if (want > cap) want = cap;
  uint32_t shift = 0;
  while ((uint64_t(2) << shift) <= want) ++shift;
  if (CeilDivU<uint64_t>(t.D, uint64_t(1) << shift) > 2048) return false;
  t.bucket = 1;
  t.shift = shift;
  t.flat = flat ? 1 : 0;
  t.qblk = qblk;
  t.row_elems = uint32_t(rs);
  t.dwin = uint64_t(1) << shift;
  t.vrow = vrow_ok ? 1 : 0;
  t.pairs_chunk = uint32_t(kPairs);
  t.vrow_stage = vrow_ok ? uint32_t(kStageBytes / (rs * eb) < 16 ? kStageBytes / (rs * eb) : 16) : 0;
  if (vrow_ok && t.vrow_stage == 0) t.vrow_stage = 1;
  t.qtiles = qtiles;
  t.dtiles = CeilDivU<uint64_t>(t.D, t.dwin);
  t.units = t.O * t.qtiles * t.dtiles;
  const ItemSplit sp = SplitItems(t.units, t.units, soc.vector_cores, 1);
  t.units_per_core = sp.per_core;
  t.block_dim = sp.block_dim;
  return true;
}

}  // namespace npu_kernels

namespace {

using npu_kernels::GatherScatterTiling;
using namespace nn_kernels;

// Reads of the index (int32 or int64) and of the operands at any element strides, as scalars.
class StridedIndex {
 public:
  __aicore__ inline void Init(GM_ADDR index, const GatherScatterTiling& t) {
    idx64_ = t.idx64 != 0;
    const uint64_t extent = (t.O - 1) * t.io + (t.J - 1) * t.ij + (t.Q - 1) * t.iq + 1;
    i32_.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t*>(index), extent);
    i64_.SetGlobalBuffer(reinterpret_cast<__gm__ int64_t*>(index), extent);
    DataCacheCleanAndInvalid<int64_t, CacheLine::ENTIRE_DATA_CACHE>(i64_);  // data written by earlier kernels
  }
  __aicore__ inline int64_t operator()(uint64_t off) const {
    return idx64_ ? i64_.GetValue(off) : int64_t(i32_.GetValue(off));
  }
  template <typename I>
  __aicore__ inline const GlobalTensor<I>& Typed() const {
    if constexpr (sizeof(I) == 8) return i64_;
    else return i32_;
  }

 private:
  GlobalTensor<int32_t> i32_;
  GlobalTensor<int64_t> i64_;
  bool idx64_ = false;
};

__aicore__ inline void CheckIndex(int64_t i, uint64_t D, uint64_t o, uint64_t j, uint64_t q) {
  ascendc_assert(i >= 0 && i < int64_t(D), "index %lld is out of bounds for dimension with size %llu (at index position [%llu, %llu, %llu] of [outer, dim, inner])",
                 (long long)i, (unsigned long long)D, (unsigned long long)o, (unsigned long long)j,
                 (unsigned long long)q);
}

// T: the element's storage (by size) for gather.
template <typename T>
class GatherKernel {
 public:
  __aicore__ inline void Init(GM_ADDR self, GM_ADDR index, GM_ADDR out, const GatherScatterTiling& t) {
    t_ = t;
    sGm_.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(self), (t.O - 1) * t.so + (t.D - 1) * t.sd + (t.Q - 1) * t.sq + 1);
    oGm_.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(out), t.O * t.J * t.Q);
    index_.Init(index, t);
    if (t.row_mode) {
      const uint32_t C = t.row_chunk;
      iGm_.SetGlobalBuffer(reinterpret_cast<__gm__ uint32_t*>(index), ((t.O - 1) * t.io + t.J) * (t.idx64 ? 2 : 1));
      pipe_.InitBuffer(row_, npu_kernels::AlignUp<uint64_t>(t.D * sizeof(T), 32));
      pipe_.InitBuffer(out_, npu_kernels::AlignUp<uint64_t>(C * sizeof(T), 32));
      pipe_.InitBuffer(idx_, C * 8);
      pipe_.InitBuffer(lo_, C * 4);
      pipe_.InitBuffer(hi_, C * 4);
      pipe_.InitBuffer(even_, C * 4);
      pipe_.InitBuffer(odd_, C * 4);
      pipe_.InitBuffer(f_, C * 4);
      pipe_.InitBuffer(red_, 128);
      pipe_.InitBuffer(work_, C * 4);
      // The scalar path for a chunk with a bad index stages at most C outputs.
      pipe_.InitBuffer(buf_, npu_kernels::AlignUp<uint64_t>(C * sizeof(T), 32));
    } else {
      pipe_.InitBuffer(buf_, t.chunk * sizeof(T));
    }
  }

  __aicore__ inline void Process() {
    if constexpr (sizeof(T) == 2 || sizeof(T) == 4) {
      if (t_.row_mode) return ProcessRows();
    }
    ProcessRange(0, 0);
  }

 private:
  // Output elements [e0, e1) by scalar reads (e1 = 0: this core's share).
  __aicore__ inline void ProcessRange(uint64_t e0, uint64_t e1) {
    if (e1 == 0) {
      const CoreShare sh = ShareOfThisCore(t_.units, t_.units_per_core);
      e0 = sh.begin;
      e1 = sh.end;
    }
    if (e0 >= e1) return;
    uint64_t q = e0 % t_.Q, j = (e0 / t_.Q) % t_.J, o = e0 / (t_.Q * t_.J);
    LocalTensor<T> b = buf_.Get<T>();
    for (uint64_t c = e0; c < e1; c += t_.chunk) {
      const uint64_t n = e1 - c < t_.chunk ? e1 - c : t_.chunk;
      SyncPipes<HardEvent::MTE3_S>();  // the previous chunk has left UB
      for (uint64_t k = 0; k < n; ++k) {
        const int64_t i = index_(o * t_.io + j * t_.ij + q * t_.iq);
        CheckIndex(i, t_.D, o, j, q);
        b.SetValue(uint32_t(k), sGm_.GetValue(o * t_.so + uint64_t(i) * t_.sd + q * t_.sq));
        if (++q == t_.Q) {
          q = 0;
          if (++j == t_.J) j = 0, ++o;
        }
      }
      SyncSToMte3();
      DataCopyPad(oGm_[c], b, DataCopyExtParams(1, uint32_t(n * sizeof(T)), 0, 0, 0));
    }
  }

  // Row mode (see gather_scatter.h): one unit per row o.
  __aicore__ inline void ProcessRows() {
    const CoreShare sh = ShareOfThisCore(t_.units, t_.units_per_core);
    if (sh.begin >= sh.end) return;
    const uint32_t C = t_.row_chunk;
    LocalTensor<T> row = row_.Get<T>(), out = out_.Get<T>();
    LocalTensor<uint32_t> idx = idx_.Get<uint32_t>(), lo = lo_.Get<uint32_t>(), hi = hi_.Get<uint32_t>();
    LocalTensor<uint32_t> even = even_.Get<uint32_t>(), odd = odd_.Get<uint32_t>();
    LocalTensor<float> f = f_.Get<float>(), red = red_.Get<float>(), work = work_.Get<float>();
    // Byte offsets of the low / high words of int64 index k: 8k / 8k + 4, for the lanes a chunk uses.
    if (t_.idx64) {
      const uint64_t used = npu_kernels::AlignUp<uint64_t>(t_.J < C ? t_.J : C, 64);
      for (uint32_t k = 0; k < uint32_t(used); ++k) {
        even.SetValue(k, 8 * k);
        odd.SetValue(k, 8 * k + 4);
      }
    }
    const uint32_t isz = t_.idx64 ? 8 : 4;
    for (uint64_t o = sh.begin; o < sh.end; ++o) {
      SyncPipes<HardEvent::V_MTE2>();  // the previous row's Gathers have read `row`
      DataCopyPad(row, sGm_[o * t_.so], DataCopyExtParams(1, uint32_t(t_.D * sizeof(T)), 0, 0, 0),
                  DataCopyPadExtParams<T>(false, 0, 0, 0));
      for (uint64_t j0 = 0; j0 < t_.J; j0 += C) {
        const uint32_t n = uint32_t(t_.J - j0 < C ? t_.J - j0 : C);
        const int32_t n64 = int32_t((n + 63) / 64 * 64);
        SyncPipes<HardEvent::V_MTE2>();  // the previous chunk's indices are read
        DataCopyPad(idx, iGm_[(o * t_.io + j0) * (isz / 4)], DataCopyExtParams(1, n * isz, 0, 0, 0),
                    DataCopyPadExtParams<uint32_t>(false, 0, 0, 0));
        SyncPipes<HardEvent::MTE2_V>();
        // The index words as int32 (the low words of int64) and, for int64, the high words.
        if (t_.idx64) {
          Gather(lo, idx, even, 0u, uint32_t(n64));
          Gather(hi, idx, odd, 0u, uint32_t(n64));
        } else {
          Adds(lo.ReinterpretCast<int32_t>(), idx.ReinterpretCast<int32_t>(), int32_t(0), n64);
        }
        // Range: every index + 0.5 in (0, D) (never a zero: a max / min of 0 takes the reductions'
        // exact +-0 scan) and, for int64, the high words' absolute sum 0.
        if (t_.idx64) {
          Cast(f, hi.ReinterpretCast<int32_t>(), RoundMode::CAST_NONE, uint32_t(n64));
          Abs(f, f, n64);
          ReduceSum(red[16], f, work, int32_t(n));
        }
        Cast(f, lo.ReinterpretCast<int32_t>(), RoundMode::CAST_NONE, uint32_t(n64));
        Adds(f, f, 0.5f, n64);
        ReduceMax(red, f, work, int32_t(n));
        ReduceMin(red[8], f, work, int32_t(n));
        SyncPipes<HardEvent::V_S>();
        bool ok = red.GetValue(0) < float(t_.D) && red.GetValue(8) > 0.0f;
        if (t_.idx64) ok = ok && red.GetValue(16) == 0.0f;
        if (!ok) {  // the scalar path finds the first bad index and asserts
          ProcessRange(o * t_.J + j0, o * t_.J + j0 + n);
          continue;
        }
        // Byte offsets (exact in float: D < 2^24; the int32 multiply is the slower vector path).
        Adds(f, f, -0.5f, n64);
        Muls(f, f, float(sizeof(T)), n64);
        Cast(lo.ReinterpretCast<int32_t>(), f, RoundMode::CAST_RINT, uint32_t(n64));
        SyncPipes<HardEvent::MTE3_V>();  // the previous output chunk has left
        if constexpr (sizeof(T) == 4)
          Gather(out.template ReinterpretCast<uint32_t>(), row.template ReinterpretCast<uint32_t>(), lo, 0u, n);
        else
          Gather(out.template ReinterpretCast<uint16_t>(), row.template ReinterpretCast<uint16_t>(), lo, 0u, n);
        SyncPipes<HardEvent::V_MTE3>();
        DataCopyPad(oGm_[o * t_.J + j0], out, DataCopyExtParams(1, uint32_t(n * sizeof(T)), 0, 0, 0));
      }
    }
  }

  GatherScatterTiling t_{};
  TPipe pipe_;
  TBuf<TPosition::VECCALC> buf_, row_, out_, idx_, lo_, hi_, even_, odd_, f_, red_, work_;
  StridedIndex index_;
  GlobalTensor<T> sGm_, oGm_;
  GlobalTensor<uint32_t> iGm_;
};

// OP = kScatterAssign: T is the storage by size (scatter). Otherwise T is the dtype and each update
// combines (npu_kernels::ScatterOp); half and bfloat16 combine in float and round once per update, as
// the CPU does. amax / amin propagate NaN from either side, as the CPU's scatter_reduce.
template <int OP, typename A>
__aicore__ inline A Combine(A cur, A x) {
  if constexpr (OP == npu_kernels::kScatterAdd) return cur + x;
  else if constexpr (OP == npu_kernels::kScatterMul) return cur * x;
  else if constexpr (OP == npu_kernels::kScatterMax) return (x != x || x > cur) ? x : cur;  // (x != x: NaN)
  else return (x != x || x < cur) ? x : cur;
}

template <typename T, int OP>
class ScatterKernel {
 public:
  __aicore__ inline void Init(GM_ADDR src, GM_ADDR index, GM_ADDR self, GM_ADDR ws, const GatherScatterTiling& t) {
    t_ = t;
    vGm_.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(src), (t.O - 1) * t.vo + (t.J - 1) * t.vj + (t.Q - 1) * t.vq + 1);
    sGm_.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(self), (t.O - 1) * t.so + (t.D - 1) * t.sd + t.Q);
    pipe_.InitBuffer(tile_, uint64_t(t.dwin) * t.row_elems * sizeof(T));
    if (t.bucket) {
      wsGm_.SetGlobalBuffer(reinterpret_cast<__gm__ uint32_t*>(ws), t.ws_words);
      DataCacheCleanAndInvalid<uint32_t, CacheLine::ENTIRE_DATA_CACHE>(wsGm_);  // written by the bucket kernels
      pipe_.InitBuffer(pairs_, uint64_t(t.pairs_chunk) * 8);
      if (t.vrow) {
        pipe_.InitBuffer(stage_, uint64_t(t.vrow_stage) * t.row_elems * sizeof(T));
        if constexpr (sizeof(T) == 2) {
          pipe_.InitBuffer(tileF_, uint64_t(t.dwin) * t.row_elems * 4);
          pipe_.InitBuffer(fb_, uint64_t(t.row_elems) * 4);
        }
      }
    } else {
      index_.Init(index, t);
    }
  }

  __aicore__ inline void Process() {
    const CoreShare sh = ShareOfThisCore(t_.units, t_.units_per_core);
    for (uint64_t u = sh.begin; u < sh.end; ++u) {
      if (t_.bucket) BucketTile(u);
      else Tile(u);
    }
  }

 private:
  // Unit u's destination tile: self[o, d0:d0+dn, q0:q0+qn] at GM element `at`, its rows rs elements apart
  // in UB (32 B-aligned), moved in and out with `load` / `store`.
  struct Span {
    uint64_t dt, o, d0, dn, q0, qn, at, rs;
    DataCopyExtParams load, store;
  };
  __aicore__ inline Span SpanOf(uint64_t u) const {
    Span s;
    s.dt = u % t_.dtiles;
    const uint64_t qt = (u / t_.dtiles) % t_.qtiles;
    s.o = u / (t_.dtiles * t_.qtiles);
    s.d0 = s.dt * t_.dwin, s.q0 = qt * t_.qblk;
    s.dn = t_.D - s.d0 < t_.dwin ? t_.D - s.d0 : t_.dwin;
    s.qn = t_.Q - s.q0 < t_.qblk ? t_.Q - s.q0 : t_.qblk;
    s.at = s.o * t_.so + s.d0 * t_.sd + s.q0;
    s.rs = t_.flat ? 1 : npu_kernels::AlignUp<uint64_t>(s.qn * sizeof(T), 32) / sizeof(T);
    const uint32_t row = uint32_t(s.qn * sizeof(T)), gap = uint32_t((t_.sd - s.qn) * sizeof(T));
    s.load = t_.flat ? DataCopyExtParams(1, uint32_t(s.dn * sizeof(T)), 0, 0, 0)
                     : DataCopyExtParams(uint16_t(s.dn), row, gap, 0, 0);
    s.store = t_.flat ? s.load : DataCopyExtParams(uint16_t(s.dn), row, 0, gap, 0);
    return s;
  }

  __aicore__ inline void Tile(uint64_t u) {
    const Span s = SpanOf(u);
    LocalTensor<T> tile = tile_.Get<T>();
    SyncPipes<HardEvent::MTE3_MTE2>();  // the previous tile has left UB
    DataCopyPad(tile, sGm_[s.at], s.load, DataCopyPadExtParams<T>(false, 0, 0, T(0)));
    SyncMte2ToS();
    if (t_.idx64) Walk<int64_t>(tile, s.o, s.d0, s.dn, s.q0, s.qn, s.rs);
    else Walk<int32_t>(tile, s.o, s.d0, s.dn, s.q0, s.qn, s.rs);
    SyncSToMte3();
    DataCopyPad(sGm_[s.at], tile, s.store);
  }

  // Every update of row o's columns [q0, q0 + qn) that lands in rows [d0, d0 + dn), in (j, q) order.
  // I: the index dtype (one typed read per update; a single column walks j alone).
  template <typename I>
  __aicore__ inline void Walk(const LocalTensor<T>& tile, uint64_t o, uint64_t d0, uint64_t dn, uint64_t q0,
                              uint64_t qn, uint64_t rs) {
    const GlobalTensor<I>& idx = index_.template Typed<I>();
    const uint64_t J = t_.J, D = t_.D, ij = t_.ij, vj = t_.vj;
    if (qn == 1) {
      const uint64_t ib = o * t_.io + q0 * t_.iq, vb = o * t_.vo + q0 * t_.vq;
      for (uint64_t j = 0; j < J; ++j) {
        const int64_t i = int64_t(idx.GetValue(ib + j * ij));
        if (uint64_t(i) >= D) CheckIndex(i, D, o, j, q0);  // (negative: huge as unsigned)
        const uint64_t r = uint64_t(i) - d0;
        if (r < dn) Update(tile, uint32_t(r * rs), vGm_.GetValue(vb + j * vj));
      }
      return;
    }
    for (uint64_t j = 0; j < J; ++j) {
      for (uint64_t q = q0; q < q0 + qn; ++q) {
        const int64_t i = int64_t(idx.GetValue(o * t_.io + j * ij + q * t_.iq));
        if (uint64_t(i) >= D) CheckIndex(i, D, o, j, q);
        const uint64_t r = uint64_t(i) - d0;
        if (r < dn) Update(tile, uint32_t(r * rs + (q - q0)), vGm_.GetValue(o * t_.vo + j * vj + q * t_.vq));
      }
    }
  }

  // Bucketed: the tile's window is t_.dwin rows; only its pairs (row in window, j), in j order.
  __aicore__ inline void BucketTile(uint64_t u) {
    const Span sp = SpanOf(u);
    const uint64_t s = wsGm_.GetValue(t_.starts_at + sp.dt), e = wsGm_.GetValue(t_.starts_at + sp.dt + 1);
    if (s >= e) return;  // nobody updates this window: it stays as it is in GM
    const uint64_t o = sp.o, dn = sp.dn, q0 = sp.q0, qn = sp.qn, rs = sp.rs;
    LocalTensor<T> tile = tile_.Get<T>();
    LocalTensor<uint32_t> pairs = pairs_.Get<uint32_t>();
    SyncPipes<HardEvent::MTE3_MTE2>();  // the previous tile has left UB
    DataCopyPad(tile, sGm_[sp.at], sp.load, DataCopyPadExtParams<T>(false, 0, 0, T(0)));
    const bool rows = t_.vrow && qn >= 8;
    constexpr bool kWidened = OP == npu_kernels::kScatterAdd && (std::is_same_v<T, half> || std::is_same_v<T, bfloat16_t>);
    if constexpr (kWidened) {
      if (rows) {  // the updates add into a float copy of the tile
        SyncMte2ToV();
        Cast(tileF_.Get<float>(), tile, RoundMode::CAST_NONE, uint32_t(dn * rs));
      }
    }
    for (uint64_t c = s; c < e; c += t_.pairs_chunk) {
      const uint32_t m = uint32_t(e - c < t_.pairs_chunk ? e - c : t_.pairs_chunk);
      SyncSToMte2();  // the previous chunk's pairs are read
      DataCopyPad(pairs, wsGm_[t_.pairs_at + 2 * c], DataCopyExtParams(1, m * 8, 0, 0, 0),
                  DataCopyPadExtParams<uint32_t>(false, 0, 0, 0));
      SyncMte2ToS();
      if (rows) {
        RowUpdates(tile, pairs, m, rs, o * t_.vo + q0 * t_.vq, qn);
        continue;
      }
      if (t_.payload) {
        if constexpr (sizeof(T) <= 4) {
          for (uint32_t k = 0; k < m; ++k) Update(tile, pairs.GetValue(2 * k), FromBits(pairs.GetValue(2 * k + 1)));
        }
        continue;
      }
      for (uint32_t k = 0; k < m; ++k) {
        const uint64_t r = pairs.GetValue(2 * k), j = pairs.GetValue(2 * k + 1);
        for (uint64_t q = q0; q < q0 + qn; ++q)
          Update(tile, uint32_t(r * rs + (q - q0)), vGm_.GetValue(o * t_.vo + j * t_.vj + q * t_.vq));
      }
    }
    if constexpr (kWidened) {
      if (rows) Cast(tile, tileF_.Get<float>(), RoundMode::CAST_RINT, uint32_t(dn * rs));
    }
    if (rows) SyncPipes<HardEvent::V_MTE3>();
    SyncPipes<HardEvent::MTE2_MTE3>();
    SyncSToMte3();
    DataCopyPad(sGm_[sp.at], tile, sp.store);
  }

  // Whole-row updates of m pairs: copies land in the tile row by DMA; adds stage up to vrow_stage src
  // rows, then one vector Add each (half / bfloat16 into the tile's float copy).
  __aicore__ inline void RowUpdates(const LocalTensor<T>& tile, const LocalTensor<uint32_t>& pairs, uint32_t m,
                                    uint64_t rs, uint64_t src0, uint64_t qn) {
    const DataCopyExtParams row(1, uint32_t(qn * sizeof(T)), 0, 0, 0);
    if constexpr (OP == npu_kernels::kScatterAssign) {
      if constexpr (sizeof(T) == 2 || sizeof(T) == 4) {
        if (t_.vj == 0 && t_.vq == 0) {  // one value (scatter_'s value form): a Duplicate per row
          using W = std::conditional_t<sizeof(T) == 2, int16_t, int32_t>;
          const T value = vGm_.GetValue(src0);
          W bits;
          static_assert(sizeof(W) == sizeof(T));
          __builtin_memcpy(&bits, &value, sizeof(T));
          SyncMte2ToV();
          for (uint32_t k = 0; k < m; ++k)
            Duplicate(tile[uint32_t(uint64_t(pairs.GetValue(2 * k)) * rs)].template ReinterpretCast<W>(), bits,
                      int32_t(qn));
          SyncVToS();
          return;
        }
      }
      for (uint32_t k = 0; k < m; ++k) {
        const uint64_t r = pairs.GetValue(2 * k), j = pairs.GetValue(2 * k + 1);
        DataCopyPad(tile[uint32_t(r * rs)], vGm_[src0 + j * t_.vj], row, DataCopyPadExtParams<T>(false, 0, 0, T(0)));
      }
    } else if constexpr (OP == npu_kernels::kScatterAdd &&
                         (std::is_same_v<T, float> || std::is_same_v<T, half> || std::is_same_v<T, bfloat16_t> ||
                          std::is_same_v<T, int32_t>)) {
      LocalTensor<T> stage = stage_.Get<T>();
      for (uint32_t k0 = 0; k0 < m; k0 += t_.vrow_stage) {
        const uint32_t kn = m - k0 < t_.vrow_stage ? m - k0 : t_.vrow_stage;
        SyncVToMte2();  // the previous batch's adds have read the stage
        for (uint32_t k = 0; k < kn; ++k)
          DataCopyPad(stage[uint32_t(k * rs)], vGm_[src0 + uint64_t(pairs.GetValue(2 * (k0 + k) + 1)) * t_.vj], row,
                      DataCopyPadExtParams<T>(false, 0, 0, T(0)));
        SyncMte2ToV();
        for (uint32_t k = 0; k < kn; ++k) {
          const uint32_t at = uint32_t(uint64_t(pairs.GetValue(2 * (k0 + k))) * rs);
          const LocalTensor<T> add = stage[uint32_t(k * rs)];
          if constexpr (std::is_same_v<T, float> || std::is_same_v<T, int32_t>) {
            Add(tile[at], tile[at], add, int32_t(qn));
          } else {
            const LocalTensor<float> dst = tileF_.Get<float>()[at], fb = fb_.Get<float>();
            Cast(fb, add, RoundMode::CAST_NONE, uint32_t(qn));
            Add(dst, dst, fb, int32_t(qn));
          }
        }
      }
      SyncVToS();  // the pairs buffer is reloaded next
    }
  }

  // The element whose bits are the low sizeof(T) bytes of `b` (a pair's payload).
  __aicore__ inline static T FromBits(uint32_t b) {
    union {
      uint32_t word;
      T value;
    } u{b};
    return u.value;
  }

  __aicore__ inline void Update(const LocalTensor<T>& tile, uint32_t k, T v) {
    if constexpr (OP == npu_kernels::kScatterAssign) {
      tile.SetValue(k, v);
    } else if constexpr (std::is_same_v<T, half> || std::is_same_v<T, bfloat16_t>) {
      tile.SetValue(k, T(Combine<OP, float>(float(tile.GetValue(k)), float(v))));
    } else {
      tile.SetValue(k, T(Combine<OP, T>(tile.GetValue(k), v)));
    }
  }

  GatherScatterTiling t_{};
  TPipe pipe_;
  TBuf<TPosition::VECCALC> tile_, pairs_, stage_, tileF_, fb_;
  StridedIndex index_;
  GlobalTensor<T> vGm_, sGm_;
  GlobalTensor<uint32_t> wsGm_;
};

// Integer scatter_add into a private copy (see gather_scatter.h). T: int32_t / int64_t; I: the index type.
template <typename T, typename I>
class ScatterAddPrivate {
 public:
  __aicore__ inline void Init(GM_ADDR src, GM_ADDR index, GM_ADDR partial, const GatherScatterTiling& t) {
    t_ = t;
    vGm_.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(src), (t.J - 1) * t.vj + 1);
    iGm_.SetGlobalBuffer(reinterpret_cast<__gm__ I*>(index), (t.J - 1) * t.ij + 1);
    pGm_.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(partial), uint64_t(t.block_dim) * t.row_elems);
    DataCacheCleanAndInvalid<I, CacheLine::ENTIRE_DATA_CACHE>(iGm_);  // data written by earlier kernels
    pipe_.InitBuffer(tile_, uint64_t(t.row_elems) * sizeof(T));
  }

  __aicore__ inline void Process() {
    const CoreShare sh = ShareOfThisCore(t_.J, t_.units_per_core);
    LocalTensor<T> tile = tile_.Get<T>();
    Duplicate(tile.template ReinterpretCast<int32_t>(), int32_t(0), int32_t(t_.row_elems * sizeof(T) / 4));
    SyncVToS();
    const uint64_t D = t_.D, ij = t_.ij, vj = t_.vj;
    for (uint64_t j = sh.begin; j < sh.end; ++j) {
      const int64_t i = int64_t(iGm_.GetValue(j * ij));
      if (uint64_t(i) >= D) CheckIndex(i, D, 0, j, 0);
      tile.SetValue(uint32_t(i), T(tile.GetValue(uint32_t(i)) + vGm_.GetValue(j * vj)));
    }
    SyncSToMte3();
    DataCopyPad(pGm_[uint64_t(GetBlockIdx()) * t_.row_elems], tile, DataCopyExtParams(1, uint32_t(D * sizeof(T)), 0, 0, 0));
  }

 private:
  GatherScatterTiling t_{};
  TPipe pipe_;
  TBuf<TPosition::VECCALC> tile_;
  GlobalTensor<T> vGm_, pGm_;
  GlobalTensor<I> iGm_;
};

template <typename T>
__aicore__ inline void RunScatterAddPrivate(GM_ADDR src, GM_ADDR index, GM_ADDR partial, GM_ADDR tiling) {
  GET_TILING_DATA_WITH_STRUCT(GatherScatterTiling, t, tiling);
  if (t.idx64) RunOp<ScatterAddPrivate<T, int64_t>>(t, src, index, partial);
  else RunOp<ScatterAddPrivate<T, int32_t>>(t, src, index, partial);
}

class IndexLinearKernel {
 public:
  __aicore__ inline void Init(GM_ADDR idx, GM_ADDR out, const npu_kernels::IndexLinearTiling& t) {
    t_ = t;
    iGm_.SetGlobalBuffer(reinterpret_cast<__gm__ int64_t*>(idx), uint64_t(t.q) * t.n);
    oGm_.SetGlobalBuffer(reinterpret_cast<__gm__ int64_t*>(out), t.n);
    DataCacheCleanAndInvalid<int64_t, CacheLine::ENTIRE_DATA_CACHE>(iGm_);  // written by earlier kernels
    pipe_.InitBuffer(buf_, t.chunk * 8);
  }

  __aicore__ inline void Process() {
    const CoreShare sh = ShareOfThisCore(t_.n, t_.units_per_core);
    LocalTensor<int64_t> b = buf_.Get<int64_t>();
    for (uint64_t c = sh.begin; c < sh.end; c += t_.chunk) {
      const uint64_t n = sh.end - c < t_.chunk ? sh.end - c : t_.chunk;
      SyncPipes<HardEvent::MTE3_S>();  // the previous chunk has left UB
      for (uint64_t k = 0; k < n; ++k) {
        int64_t lin = 0;
        for (uint32_t j = 0; j < t_.q; ++j) {
          const int64_t size = int64_t(t_.sizes[j]), v = iGm_.GetValue(uint64_t(j) * t_.n + c + k);
          const int64_t w = v < 0 ? v + size : v;
          ascendc_assert(w >= 0 && w < size, "index %lld is out of range for dimension %u with size %lld",
                         (long long)v, t_.dims[j], (long long)size);
          lin = lin * size + w;
        }
        b.SetValue(uint32_t(k), lin);
      }
      SyncSToMte3();
      DataCopyPad(oGm_[c], b, DataCopyExtParams(1, uint32_t(n * 8), 0, 0, 0));
    }
  }

 private:
  npu_kernels::IndexLinearTiling t_{};
  TPipe pipe_;
  TBuf<TPosition::VECCALC> buf_;
  GlobalTensor<int64_t> iGm_, oGm_;
};

template <typename T>
__aicore__ inline void RunGather(GM_ADDR self, GM_ADDR index, GM_ADDR out, GM_ADDR tiling) {
  GET_TILING_DATA_WITH_STRUCT(GatherScatterTiling, t, tiling);
  GatherKernel<T> op;
  op.Init(self, index, out, t);
  op.Process();
}

template <typename T, int OP>
__aicore__ inline void RunScatter(GM_ADDR src, GM_ADDR index, GM_ADDR self, GM_ADDR ws, GM_ADDR tiling) {
  GET_TILING_DATA_WITH_STRUCT(GatherScatterTiling, t, tiling);
  ScatterKernel<T, OP> op;
  op.Init(src, index, self, ws, t);
  op.Process();
}

}  // namespace

extern "C" __global__ __aicore__ void index_linear_kernel(GM_ADDR idx, GM_ADDR out, GM_ADDR tiling) {
  GET_TILING_DATA_WITH_STRUCT(npu_kernels::IndexLinearTiling, t, tiling);
  IndexLinearKernel op;
  op.Init(idx, out, t);
  op.Process();
}

#define GS_GATHER(name, T) \
  extern "C" __global__ __aicore__ void name(GM_ADDR s, GM_ADDR i, GM_ADDR o, GM_ADDR t) { RunGather<T>(s, i, o, t); }
#define GS_SCATTER(name, T, OP)                                                          \
  extern "C" __global__ __aicore__ void name(GM_ADDR v, GM_ADDR i, GM_ADDR s, GM_ADDR w, GM_ADDR t) { \
    RunScatter<T, OP>(v, i, s, w, t);                                                                 \
  }
#define GS_SCATTER_ALL(prefix, OP)                \
  GS_SCATTER(prefix##_float, float, OP)           \
  GS_SCATTER(prefix##_half, half, OP)             \
  GS_SCATTER(prefix##_bf16, bfloat16_t, OP)       \
  GS_SCATTER(prefix##_int32, int32_t, OP)         \
  GS_SCATTER(prefix##_int64, int64_t, OP)

extern "C" __global__ __aicore__ void scatter_add_private_kernel_int32(GM_ADDR v, GM_ADDR i, GM_ADDR p, GM_ADDR t) {
  RunScatterAddPrivate<int32_t>(v, i, p, t);
}
extern "C" __global__ __aicore__ void scatter_add_private_kernel_int64(GM_ADDR v, GM_ADDR i, GM_ADDR p, GM_ADDR t) {
  RunScatterAddPrivate<int64_t>(v, i, p, t);
}

GS_GATHER(gather_kernel_b1, uint8_t)
GS_GATHER(gather_kernel_b2, uint16_t)
GS_GATHER(gather_kernel_b4, uint32_t)
GS_GATHER(gather_kernel_b8, uint64_t)
GS_SCATTER(scatter_kernel_b1, uint8_t, npu_kernels::kScatterAssign)
GS_SCATTER(scatter_kernel_b2, uint16_t, npu_kernels::kScatterAssign)
GS_SCATTER(scatter_kernel_b4, uint32_t, npu_kernels::kScatterAssign)
GS_SCATTER(scatter_kernel_b8, uint64_t, npu_kernels::kScatterAssign)
GS_SCATTER_ALL(scatter_add_kernel, npu_kernels::kScatterAdd)
GS_SCATTER_ALL(scatter_mul_kernel, npu_kernels::kScatterMul)
GS_SCATTER_ALL(scatter_max_kernel, npu_kernels::kScatterMax)
GS_SCATTER_ALL(scatter_min_kernel, npu_kernels::kScatterMin)
