// Reductions in Ascend C (see reduce.h for the design): the host tiling functions, the rows/columns
// reduce kernel (sum / max / min with a per-element pre-op and a per-output post-op) and the arg-reduce
// kernel (values + int64 indices of the max/min).
#include "reduce.h"

#include <cstring>
#include <type_traits>

#include "kernel_operator.h"
#include "norm_util.h"
#include "reduce_helpers.h"

using namespace AscendC;
using nn_kernels::SyncSToV;
using nn_kernels::SyncVToMte2;
using nn_kernels::SyncVToS;
using namespace npu_kernels::reduce_helpers;

namespace npu_kernels {

namespace {

constexpr uint32_t kUbReserve = 8 * 1024 + 2 * 1024;  // Select's reserved 8 KB + small buffers
constexpr uint64_t kMinElemsPerCore = 32 * 1024;      // a core launch is not free: small work uses few cores
constexpr uint32_t kMaxRowTile = 4096;                // elements per rows-kernel tile: a smaller UB working set
                                                      // ran faster than 14K-element tiles on the host model
constexpr uint32_t kMaxChunk = 4096;                  // columns per columns-kernel chunk
constexpr uint32_t kMaxBlockCount = 4095;             // DataCopy(Pad) blockCount limit
constexpr uint32_t kOutTile = 2048;                   // rows kernel: outputs buffered per GM write

uint64_t TargetCores(uint64_t total, const SocInfo& soc) {
  uint64_t c = total / kMinElemsPerCore;
  if (c < 1) c = 1;
  if (c > static_cast<uint64_t>(soc.vector_cores)) c = static_cast<uint64_t>(soc.vector_cores);
  return c;
}

void SplitItems(uint64_t items, uint64_t cores, uint64_t* per_core, uint32_t* block_dim) {
  if (items == 0) {
    *per_core = 1;
    *block_dim = 1;
    return;
  }
  if (cores > items) cores = items;
  if (cores < 1) cores = 1;
  *per_core = CeilDivU<uint64_t>(items, cores);
  *block_dim = static_cast<uint32_t>(CeilDivU<uint64_t>(items, *per_core));
}

// Splits R into segments when there are fewer work items than cores that the work deserves.
void ChooseSegments(uint64_t base_items, uint64_t R, uint64_t cores, uint64_t max_segments, uint64_t min_seg,
                    uint64_t* segments, uint64_t* seg_len) {
  uint64_t s = 1;
  if (base_items < cores && max_segments > 1 && R >= 2 * min_seg) {
    s = CeilDivU<uint64_t>(cores, base_items);
    if (s > max_segments) s = max_segments;
    if (s > R / min_seg) s = R / min_seg;
    if (s < 1) s = 1;
  }
  uint64_t len = CeilDivU<uint64_t>(R, s);
  if (s > 1) len = AlignUp<uint64_t>(len, 64);
  if (len == 0) len = 1;
  *seg_len = len;
  *segments = R == 0 ? 1 : CeilDivU<uint64_t>(R, len);
}

uint32_t UbBudget(const SocInfo& soc) { return soc.ub_bytes > kUbReserve ? soc.ub_bytes - kUbReserve : 0; }

}  // namespace

ReduceTiling reduce_tiling(uint64_t outer, uint64_t R, uint64_t inner, uint32_t in_bytes, uint32_t out_bytes,
                           ReducePre pre, ReduceComb comb, uint64_t max_segments, const SocInfo& soc) {
  ReduceTiling t{};
  t.outer = outer;
  t.R = R;
  t.inner = inner;
  t.pre = pre;
  t.comb = comb;
  t.post = kPostNone;
  t.scale = 1.0f;
  t.p = 2.0f;
  const uint64_t total = outer * R * inner;
  const uint64_t cores = TargetCores(total, soc);
  const uint32_t budget = UbBudget(soc);
  const uint32_t work_bytes = (in_bytes != 4 ? 4 : 0) + (pre == kPreNonZero ? 4 + 1 : pre == kPreNanToZero ? 1 : 0);
  // max/min of the values themselves propagate NaN in the kernel (see MayHoldNan)
  t.nan_scan = comb != kCombSum && (pre == kPreNone || pre == kPreAbs) ? 1 : 0;
  const uint32_t scan_fixed = t.nan_scan ? 1024 : 0;  // the screen's sum slot and tmp (1/16 per element)
  const uint32_t scan_elem = t.nan_scan ? 1 : 0;
  if (inner == 1) {
    t.chunks = 1;
    t.chunk_w = 1;
    t.out_tile = kOutTile;
    const uint32_t out_cost = kOutTile * (4 + out_bytes) + 64 * 8 * 4 + scan_fixed;  // outputs + staged rows
    const uint32_t per_elem = 2 * in_bytes + work_bytes + 4 + scan_elem;  // in x2, work, accumulator
    uint32_t tile = AlignDown<uint32_t>((budget - out_cost) / per_elem, 64);
    if (tile > kMaxRowTile) tile = kMaxRowTile;
    t.tile = tile;
    ChooseSegments(outer, R, cores, max_segments, 4096, &t.segments, &t.seg_len);
    t.items = outer * t.segments;
  } else {
    // Chunk width: whole rows when they fit; narrower chunks when there are too few outer rows for the cores.
    const uint64_t w = ColumnChunkWidth(outer, inner, cores, kMaxChunk);
    t.chunk_w = static_cast<uint32_t>(w);
    t.chunks = CeilDivU<uint64_t>(inner, w);
    t.row_stride = AlignUp<uint32_t>(t.chunk_w, 16);
    const uint32_t fixed = t.row_stride * (4 + 4 + 4 + out_bytes + (t.nan_scan ? 4 : 0)) + 1024 + scan_fixed;
    const uint32_t per_elem = 2 * in_bytes + work_bytes + scan_elem;  // acc, outF, center, out (+ NaN marks)
    uint64_t rows = (budget - fixed) / (uint64_t(t.row_stride) * per_elem);
    if (rows > kMaxBlockCount) rows = kMaxBlockCount;
    if (const uint64_t h = HostCacheRows(uint64_t(t.row_stride) * per_elem); rows > h) rows = h;
    if (rows < 1) rows = 1;
    ChooseSegments(outer * t.chunks, R, cores, max_segments, 256, &t.segments, &t.seg_len);
    if (rows > t.seg_len) rows = t.seg_len;
    t.tile = static_cast<uint32_t>(rows);
    t.out_tile = 0;
    t.items = outer * t.segments * t.chunks;
  }
  SplitItems(t.items, cores, &t.items_per_core, &t.block_dim);
  return t;
}

ArgReduceTiling arg_reduce_tiling(uint64_t outer, uint64_t R, uint64_t inner, uint32_t in_bytes, bool is_min,
                                  uint64_t max_segments, const SocInfo& soc) {
  ArgReduceTiling t{};
  t.outer = outer;
  t.R = R;
  t.inner = inner;
  t.is_min = is_min ? 1 : 0;
  t.write_values = 1;
  t.index_in = 0;
  const uint64_t total = outer * R * inner;
  const uint64_t cores = TargetCores(total, soc);
  const uint32_t budget = UbBudget(soc);
  const uint32_t work_bytes = in_bytes != 4 ? 4 : 0;
  if (inner == 1) {
    t.chunks = 1;
    t.chunk_w = 1;
    t.out_tile = kOutTile;
    const uint32_t out_cost = kOutTile * (4 + 4 + in_bytes + 8);
    const uint32_t per_elem = 2 * in_bytes + work_bytes + 1;  // + ReduceMax's tmp (~1/16 per element)
    uint32_t tile = AlignDown<uint32_t>((budget - out_cost - 2048) / per_elem, 64);
    if (tile > kMaxRowTile) tile = kMaxRowTile;
    t.tile = tile;
    ChooseSegments(outer, R, cores, max_segments, 4096, &t.segments, &t.seg_len);
    t.items = outer * t.segments;
  } else {
    const uint64_t w = ColumnChunkWidth(outer, inner, cores, kMaxChunk);
    t.chunk_w = static_cast<uint32_t>(w);
    t.chunks = CeilDivU<uint64_t>(inner, w);
    t.row_stride = AlignUp<uint32_t>(t.chunk_w, 64);  // Compare works on 256 B multiples
    const uint32_t fixed = t.row_stride * (4 + 4 + 1 + in_bytes + 8 + 4) + 1536;  // + the NaN scan's indices
    const uint32_t per_elem = 2 * in_bytes + work_bytes + 1;  // + the NaN check's ReduceSum tmp
    uint64_t rows = (budget - fixed) / (uint64_t(t.row_stride) * per_elem);
    if (rows > kMaxBlockCount) rows = kMaxBlockCount;
    if (rows > R) rows = R;
    if (rows < 1) rows = 1;
    t.tile = static_cast<uint32_t>(rows);
    t.segments = 1;
    t.seg_len = R;
    t.items = outer * t.chunks;
  }
  SplitItems(t.items, cores, &t.items_per_core, &t.block_dim);
  return t;
}

}  // namespace npu_kernels

namespace {

using npu_kernels::ArgReduceTiling;
using npu_kernels::ReduceTiling;

// NaN as on the CPU: the vector Max/Min/Compare skip it, yet a NaN is the max and the min of its slice
// (arg reductions: at its first index). One ReduceSum screens a tile (its sum is NaN when a NaN is there,
// or +inf and -inf both); only a tile that fails the screen is searched element by element.
// red: >= 8 floats for the sum; tmp: ReduceSum's work buffer for n elements.
__aicore__ inline bool MayHoldNan(const LocalTensor<float>& f, uint32_t n, const LocalTensor<float>& red,
                                  const LocalTensor<float>& tmp) {
  ReduceSum(red, f, tmp, static_cast<int32_t>(n));
  SyncVToS();
  const float s = red.GetValue(0);
  return s != s;
}
// The first NaN of f[0:n], or n (scalar reads: the caller screened the tile, which synchronized V -> S).
__aicore__ inline uint32_t FirstNan(const LocalTensor<float>& f, uint32_t n) {
  for (uint32_t i = 0; i < n; ++i) {
    const float v = f.GetValue(i);
    if (v != v) return i;
  }
  return n;
}
constexpr uint32_t kNanScreenFloats = 64;  // the screen's sum slot ahead of its tmp in one buffer
// Zeroes both buffers of a double-buffered input queue (cap elements each): the columns kernels load
// only a chunk's columns of each row, so the lanes past them stay zero and the screen sees no stale data.
template <typename T>
__aicore__ inline void ZeroInputTiles(TQue<TPosition::VECIN, 1>& q, uint32_t cap) {
  LocalTensor<T> b0 = q.template AllocTensor<T>();
  LocalTensor<T> b1 = q.template AllocTensor<T>();
  if constexpr (sizeof(T) == 2) {
    Duplicate(b0.template ReinterpretCast<int16_t>(), int16_t(0), static_cast<int32_t>(cap));
    Duplicate(b1.template ReinterpretCast<int16_t>(), int16_t(0), static_cast<int32_t>(cap));
  } else {
    Duplicate(b0.template ReinterpretCast<float>(), 0.0f, static_cast<int32_t>(cap));
    Duplicate(b1.template ReinterpretCast<float>(), 0.0f, static_cast<int32_t>(cap));
  }
  q.FreeTensor(b0);
  q.FreeTensor(b1);
  SyncVToMte2();
}

// ----------------------------------------------------------------------------------------- reduce kernel
template <typename T, typename O>
class ReduceKernel {
 public:
  __aicore__ inline void Init(GM_ADDR x, GM_ADDR center, GM_ADDR y, const ReduceTiling& t) {
    t_ = t;
    i0_ = t.items_per_core * GetBlockIdx();
    i1_ = MinU(t.items, i0_ + t.items_per_core);
    xGm_.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(x), t.outer * t.R * t.inner);
    if (t.pre == npu_kernels::kPreCenterSq)
      cGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(center), t.outer * t.inner);
    yGm_.SetGlobalBuffer(reinterpret_cast<__gm__ O*>(y), t.outer * t.segments * t.inner);
    rows_ = t.inner == 1;
    // Tile capacity in elements (rows kernel: along R; columns kernel: rows x row_stride), a multiple of 64.
    cap_ = rows_ ? t.tile : AlignUpU(t.tile * t.row_stride, 64);
    pipe_.InitBuffer(inQ_, 2, cap_ * sizeof(T));
    if constexpr (!std::is_same_v<T, float>) pipe_.InitBuffer(work_, cap_ * sizeof(float));
    if (t.pre == npu_kernels::kPreNonZero) {
      pipe_.InitBuffer(ones_, cap_ * sizeof(float));
      Duplicate(ones_.Get<float>(), 1.0f, static_cast<int32_t>(cap_));
    }
    if (t.pre == npu_kernels::kPreNonZero || t.pre == npu_kernels::kPreNanToZero)
      pipe_.InitBuffer(bits_, cap_ / 8);
    const uint32_t acc_len = rows_ ? t.tile : t.row_stride;
    pipe_.InitBuffer(acc_, acc_len * sizeof(float));
    outLen_ = rows_ ? t.out_tile : t.row_stride;
    pipe_.InitBuffer(outF_, AlignUpU(outLen_, 64) * sizeof(float));
    pipe_.InitBuffer(outQ_, 1, AlignUpU(outLen_, 64) * sizeof(O));
    if (!rows_ && t.pre == npu_kernels::kPreCenterSq) pipe_.InitBuffer(ctr_, t.row_stride * sizeof(float));
    if (rows_) pipe_.InitBuffer(lanes_, kStage * 8 * sizeof(float));
    if (t.nan_scan) {
      pipe_.InitBuffer(scr_, AlignUpU(kNanScreenFloats + cap_ / 64 + 64, 64) * sizeof(float));
      if (!rows_) {
        pipe_.InitBuffer(nanCol_, t.row_stride * sizeof(int32_t));
        ZeroInputTiles<T>(inQ_, cap_);
      }
    }
  }

  __aicore__ inline void Process() {
    if (i0_ >= i1_) return;
    if (!rows_) {
      for (uint64_t it = i0_; it < i1_; ++it) ColumnItem(it);
      return;
    }
    if (t_.segments == 1 && t_.R <= t_.tile) PackedRows();
    else for (uint64_t it = i0_; it < i1_; ++it) StreamRow(it);
    StageFlush();
    Flush();
  }

 private:
  // Rows folded to 8 lanes wait in lanes_ (8 floats each) until kStage rows are there, so one BlockReduce
  // repeat finishes 8 rows into an aligned slot of outF_ (pending_ stays a multiple of kStage).
  static constexpr uint32_t kStage = 64;
  __aicore__ inline LocalTensor<float> StageSlot() { return lanes_.template Get<float>()[staged_ * 8]; }
  __aicore__ inline void Staged() {
    if (++staged_ == kStage || pending_ + staged_ == outLen_) {
      StageFlush();
      if (pending_ == outLen_) Flush();
    }
  }
  __aicore__ inline void StageFlush() {
    if (staged_ == 0) return;
    BlockReduceRows(t_.comb, outF_.template Get<float>()[pending_], lanes_.template Get<float>(), staged_, 8);
    if (nanRows_ > 0) {  // streamed rows that held a NaN
      SyncVToS();
      for (uint32_t i = 0; i < nanRows_; ++i) outF_.template Get<float>().SetValue(nanSlot_[i], kNan);
      SyncSToV();
      nanRows_ = 0;
    }
    pending_ += staged_;
    staged_ = 0;
  }
  __aicore__ inline bool Screen(const LocalTensor<float>& f, uint32_t n) {
    LocalTensor<float> scr = scr_.template Get<float>();
    return ::MayHoldNan(f, n, scr, scr[kNanScreenFloats]);
  }
  // Fills v[n:8] with the identity of the combine (n < 8), so a short row folds like an 8-lane one.
  __aicore__ inline void PadTo8(const LocalTensor<float>& v, uint32_t n) {
    const float id = t_.comb == npu_kernels::kCombSum ? 0.0f
                     : t_.comb == npu_kernels::kCombMax ? -__builtin_inff() : __builtin_inff();
    uint64_t mask[2] = {0xFFull & ~((1ull << n) - 1), 0};
    Duplicate(v, id, mask, 1, 1, 8);
  }

  // Loads n elements (or k rows) into a float view: the input tile itself for float, else a cast copy.
  __aicore__ inline LocalTensor<float> ToFloat(const LocalTensor<T>& in, uint32_t count) {
    if constexpr (std::is_same_v<T, float>) {
      return in;
    } else {
      LocalTensor<float> w = work_.template Get<float>();
      Cast(w, in, RoundMode::CAST_NONE, count);
      return w;
    }
  }

  // The element-wise pre-op on f[0:count] (center subtraction is done by the caller).
  __aicore__ inline void ApplyPre(const LocalTensor<float>& f, uint32_t count) {
    const int32_t n = static_cast<int32_t>(count);
    switch (t_.pre) {
      case npu_kernels::kPreAbs: Abs(f, f, n); break;
      case npu_kernels::kPreSquare:
      case npu_kernels::kPreCenterSq: Mul(f, f, f, n); break;
      case npu_kernels::kPrePowAbs:
        Abs(f, f, n);
        Ln(f, f, n);
        Muls(f, f, t_.p, n);
        Exp(f, f, n);
        break;
      case npu_kernels::kPreNonZero: {
        const uint32_t c64 = AlignUpU(count, 64);
        LocalTensor<uint8_t> bits = bits_.template Get<uint8_t>();
        CompareScalar(bits, f, 0.0f, CMPMODE::NE, c64);
        Select(f, bits, ones_.template Get<float>(), 0.0f, SELMODE::VSEL_TENSOR_SCALAR_MODE, c64);
        break;
      }
      case npu_kernels::kPreNanToZero: {  // x == x is false only for NaN
        const uint32_t c64 = AlignUpU(count, 64);
        LocalTensor<uint8_t> bits = bits_.template Get<uint8_t>();
        Compare(bits, f, f, CMPMODE::EQ, c64);
        Select(f, bits, f, 0.0f, SELMODE::VSEL_TENSOR_SCALAR_MODE, c64);
        break;
      }
      default: break;
    }
  }

  __aicore__ inline float Center(uint64_t index) {
    DataCacheCleanAndInvalid<float, CacheLine::SINGLE_CACHE_LINE, DcciDst::CACHELINE_OUT>(cGm_);
    return cGm_.GetValue(index);
  }

  // NaN results of the k packed rows just reduced into outF_[pending_:].
  __aicore__ inline void PatchNanRows(const LocalTensor<float>& f, uint32_t k, uint32_t R, uint32_t pitch) {
    if (!t_.nan_scan || !Screen(f, k * pitch)) return;
    LocalTensor<float> outF = outF_.template Get<float>();
    for (uint32_t r = 0; r < k; ++r)
      if (FirstNan(f[r * pitch], R) < R) outF.SetValue(pending_ + r, kNan);
    SyncSToV();
  }

  // Many short rows per tile (R <= tile, one segment): rows land at a 32 B aligned pitch.
  __aicore__ inline void PackedRows() {
    const uint32_t R = static_cast<uint32_t>(t_.R);
    const uint32_t pitch = AlignUpU(R, kElemsPerBlock<T> < 8 ? 8 : kElemsPerBlock<T>);
    uint32_t kmax = t_.tile / pitch;
    if (kmax > 4095) kmax = 4095;
    if (kmax > outLen_) kmax = outLen_;
    first_ = i0_;
    for (uint64_t it = i0_; it < i1_;) {
      uint32_t k = static_cast<uint32_t>(MinU(kmax, i1_ - it));
      if (k > outLen_ - pending_) k = outLen_ - pending_;  // rows land straight in outF_
      LocalTensor<T> in = inQ_.template AllocTensor<T>();
      CopyInRows(in, xGm_[it * R], k, R, R, pitch);
      inQ_.EnQue(in);
      in = inQ_.template DeQue<T>();
      LocalTensor<float> f = ToFloat(in, k * pitch);
      if (t_.pre == npu_kernels::kPreCenterSq)
        for (uint32_t r = 0; r < k; ++r) Adds(f[r * pitch], f[r * pitch], -Center(it + r), static_cast<int32_t>(R));
      ApplyPre(f, k * pitch);
      if (R <= 64) {  // one WholeReduce repeat per row (a float row fits one repeat), straight into outF_
        WholeReduceRows(t_.comb, outF_.template Get<float>()[pending_], f, R, k, pitch / 8);
        PatchNanRows(f, k, R, pitch);
        pending_ += k;
        if (pending_ == outLen_) Flush();
      } else {  // one count-form ReduceSum/Max/Min per row (a single read pass), lanes_ as its tmp buffer
        LocalTensor<float> outF = outF_.template Get<float>();
        LocalTensor<float> red = lanes_.template Get<float>();
        const int32_t n = static_cast<int32_t>(R);
        for (uint32_t r = 0; r < k; ++r) {
          if (t_.comb == npu_kernels::kCombSum) ReduceSum(outF[pending_ + r], f[r * pitch], red, n);
          else if (t_.comb == npu_kernels::kCombMax) ReduceMax(outF[pending_ + r], f[r * pitch], red, n);
          else ReduceMin(outF[pending_ + r], f[r * pitch], red, n);
        }
        PatchNanRows(f, k, R, pitch);
        pending_ += k;
        if (pending_ == outLen_) Flush();
      }
      inQ_.FreeTensor(in);
      it += k;
    }
  }

  // One (row, segment) item streamed through the float accumulator.
  __aicore__ inline void StreamRow(uint64_t it) {
    if (pending_ == 0 && staged_ == 0) first_ = it;
    const uint64_t o = it / t_.segments, s = it % t_.segments;
    const uint64_t r0 = s * t_.seg_len;
    const uint64_t L = MinU(t_.seg_len, t_.R - r0);
    const uint64_t base = o * t_.R + r0;
    const float c = t_.pre == npu_kernels::kPreCenterSq ? Center(o) : 0.0f;
    LocalTensor<float> acc = acc_.template Get<float>();
    bool nan = false;
    for (uint64_t off = 0; off < L && !nan; off += t_.tile) {
      const uint32_t n = static_cast<uint32_t>(MinU(t_.tile, L - off));
      LocalTensor<T> in = inQ_.template AllocTensor<T>();
      CopyInContiguous(in, xGm_[base + off], n);
      inQ_.EnQue(in);
      in = inQ_.template DeQue<T>();
      LocalTensor<float> f = ToFloat(in, n);
      if (t_.pre == npu_kernels::kPreCenterSq) Adds(f, f, -c, static_cast<int32_t>(n));
      ApplyPre(f, n);
      if (off == 0) DataCopy(acc, f, AlignUpU(n, 8));
      else CombineVec(t_.comb, acc, acc, f, static_cast<int32_t>(n));
      nan = t_.nan_scan && Screen(f, n) && FirstNan(f, n) < n;  // the row's result: no later tile matters
      inQ_.FreeTensor(in);
    }
    const uint32_t n0 = static_cast<uint32_t>(MinU(L, t_.tile));
    if (n0 < 8) PadTo8(acc, n0);
    FoldTo8(t_.comb, StageSlot(), acc, n0 < 8 ? 8 : n0);
    if (nan) nanSlot_[nanRows_++] = pending_ + staged_;
    Staged();
  }

  // Scale, post-op and cast of out[0:n] into an output tile.
  __aicore__ inline LocalTensor<O> Finalize(const LocalTensor<float>& v, uint32_t n) {
    const int32_t c = static_cast<int32_t>(n);
    if (t_.scale != 1.0f) Muls(v, v, t_.scale, c);
    if (t_.post == npu_kernels::kPostSqrt) {
      Sqrt(v, v, c);
    } else if (t_.post == npu_kernels::kPostPowInv) {
      Ln(v, v, c);
      Muls(v, v, 1.0f / t_.p, c);
      Exp(v, v, c);
    }
    LocalTensor<O> out = outQ_.template AllocTensor<O>();
    if constexpr (std::is_same_v<O, float>) DataCopy(out, v, AlignUpU(n, 8));
    else Cast(out, v, RoundMode::CAST_RINT, n);
    outQ_.EnQue(out);
    return outQ_.template DeQue<O>();
  }

  __aicore__ inline void Flush() {
    if (pending_ == 0) return;
    LocalTensor<O> out = Finalize(outF_.template Get<float>(), pending_);
    DataCopyPad(yGm_[first_], out, DataCopyExtParams{1, static_cast<uint32_t>(pending_ * sizeof(O)), 0, 0, 0});
    outQ_.FreeTensor(out);
    first_ += pending_;
    pending_ = 0;
  }

  // One ((outer, segment), column chunk) item of the columns kernel.
  __aicore__ inline void ColumnItem(uint64_t it) {
    const uint64_t os = it / t_.chunks, ch = it % t_.chunks;
    const uint64_t o = os / t_.segments, s = os % t_.segments;
    const uint64_t col0 = ch * t_.chunk_w;
    const uint32_t wc = static_cast<uint32_t>(MinU(t_.chunk_w, t_.inner - col0));
    const uint64_t r0 = s * t_.seg_len;
    const uint64_t L = MinU(t_.seg_len, t_.R - r0);
    const uint32_t rs = t_.row_stride;
    const uint64_t base = (o * t_.R + r0) * t_.inner + col0;
    LocalTensor<float> acc = acc_.template Get<float>();
    LocalTensor<float> ctr;
    if (t_.pre == npu_kernels::kPreCenterSq) {
      ctr = ctr_.template Get<float>();
      CopyInContiguous(ctr, cGm_[o * t_.inner + col0], wc);
    }
    LocalTensor<int32_t> nanCol;
    bool any_nan = false;
    for (uint64_t r = 0; r < L; r += t_.tile) {
      const uint32_t k = static_cast<uint32_t>(MinU(t_.tile, L - r));
      LocalTensor<T> in = inQ_.template AllocTensor<T>();
      CopyInRows(in, xGm_[base + r * t_.inner], k, wc, t_.inner, rs);
      inQ_.EnQue(in);
      in = inQ_.template DeQue<T>();
      LocalTensor<float> f = ToFloat(in, k * rs);
      if (t_.pre == npu_kernels::kPreCenterSq)
        for (uint32_t i = 0; i < k; ++i) Sub(f[i * rs], f[i * rs], ctr, static_cast<int32_t>(wc));
      ApplyPre(f, k * rs);
      if (t_.nan_scan && Screen(f, k * rs)) {  // mark the columns holding a NaN (scalar search)
        nanCol = nanCol_.template Get<int32_t>();
        if (!any_nan) for (uint32_t c = 0; c < wc; ++c) nanCol.SetValue(c, 0);
        any_nan = true;
        for (uint32_t c = 0; c < wc; ++c)
          for (uint32_t j = 0; j < k && nanCol.GetValue(c) == 0; ++j) {
            const float v = f.GetValue(j * rs + c);
            if (v != v) nanCol.SetValue(c, 1);
          }
        SyncSToV();  // the scalar reads of f before FoldRows overwrites it
      }
      FoldRows(t_.comb, f, k, rs);
      if (r == 0) DataCopy(acc, f, rs);
      else CombineVec(t_.comb, acc, acc, f, static_cast<int32_t>(rs));
      inQ_.FreeTensor(in);
    }
    if (any_nan) {
      SyncVToS();
      for (uint32_t c = 0; c < wc; ++c)
        if (nanCol.GetValue(c) != 0) acc.SetValue(c, kNan);
      SyncSToV();
    }
    LocalTensor<O> out = Finalize(acc, wc);
    DataCopyPad(yGm_[os * t_.inner + col0], out, DataCopyExtParams{1, static_cast<uint32_t>(wc * sizeof(O)), 0, 0, 0});
    outQ_.FreeTensor(out);
  }

  ReduceTiling t_;
  uint64_t i0_ = 0, i1_ = 0, first_ = 0;
  uint32_t pending_ = 0, staged_ = 0, outLen_ = 0, cap_ = 0;
  bool rows_ = true;
  TPipe pipe_;
  TQue<TPosition::VECIN, 1> inQ_;
  TQue<TPosition::VECOUT, 1> outQ_;
  TBuf<TPosition::VECCALC> work_, acc_, outF_, ones_, bits_, ctr_, lanes_, scr_, nanCol_;
  static constexpr float kNan = __builtin_nanf("");
  uint32_t nanSlot_[kStage] = {};  // outF_ slots of staged rows that held a NaN
  uint32_t nanRows_ = 0;
  GlobalTensor<T> xGm_;
  GlobalTensor<float> cGm_;
  GlobalTensor<O> yGm_;
};

template <typename T, typename O>
__aicore__ inline void RunReduce(GM_ADDR x, GM_ADDR center, GM_ADDR y, GM_ADDR tiling) {
  GET_TILING_DATA_WITH_STRUCT(ReduceTiling, t, tiling);
  ReduceKernel<T, O> op;
  op.Init(x, center, y, t);
  op.Process();
}

// ------------------------------------------------------------------------------------- arg-reduce kernel
template <typename T>
class ArgReduceKernel {
 public:
  __aicore__ inline void Init(GM_ADDR x, GM_ADDR index_in, GM_ADDR values, GM_ADDR indices,
                              const ArgReduceTiling& t) {
    t_ = t;
    i0_ = t.items_per_core * GetBlockIdx();
    i1_ = MinU(t.items, i0_ + t.items_per_core);
    rows_ = t.inner == 1;
    xGm_.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(x), t.outer * t.R * t.inner);
    if (t.index_in) inGm_.SetGlobalBuffer(reinterpret_cast<__gm__ int64_t*>(index_in), t.outer * t.R);
    vGm_.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(values), t.outer * t.segments * t.inner);
    iGm_.SetGlobalBuffer(reinterpret_cast<__gm__ int64_t*>(indices), t.outer * t.segments * t.inner);
    cap_ = rows_ ? t.tile : t.tile * t.row_stride;
    pipe_.InitBuffer(inQ_, 2, cap_ * sizeof(T));
    if constexpr (!std::is_same_v<T, float>) pipe_.InitBuffer(work_, cap_ * sizeof(float));
    outLen_ = rows_ ? t.out_tile : t.row_stride;
    pipe_.InitBuffer(best_, AlignUpU(outLen_, 64) * sizeof(float));
    pipe_.InitBuffer(bidx_, AlignUpU(outLen_, 64) * sizeof(int32_t));
    pipe_.InitBuffer(outV_, 1, AlignUpU(outLen_, 64) * sizeof(T));
    pipe_.InitBuffer(outI_, 1, AlignUpU(outLen_, 64) * sizeof(int64_t));
    pipe_.InitBuffer(tmp_, AlignUpU(cap_ / 16 + 256, 64) * sizeof(float));
    pipe_.InitBuffer(red_, 64);
    if (!rows_) {
      pipe_.InitBuffer(bits_, t.row_stride / 8);
      pipe_.InitBuffer(nanIdx_, t.row_stride * sizeof(int32_t));
      ZeroInputTiles<T>(inQ_, cap_);
    }
  }

  __aicore__ inline void Process() {
    if (i0_ >= i1_) return;
    if (!rows_) {
      for (uint64_t it = i0_; it < i1_; ++it) ColumnItem(it);
      return;
    }
    first_ = i0_;
    if (t_.segments == 1 && t_.R <= t_.tile) PackedRows();
    else for (uint64_t it = i0_; it < i1_; ++it) StreamRow(it);
    Flush(first_, pending_);
  }

 private:
  __aicore__ inline LocalTensor<float> ToFloat(const LocalTensor<T>& in, uint32_t count) {
    if constexpr (std::is_same_v<T, float>) {
      return in;
    } else {
      LocalTensor<float> w = work_.template Get<float>();
      Cast(w, in, RoundMode::CAST_NONE, count);
      return w;
    }
  }

  // Extreme of f[0:n] and its first index (ReduceMax/ReduceMin with calIndex).
  __aicore__ inline void TileExtreme(const LocalTensor<float>& f, uint32_t n, float* value, uint32_t* index) {
    LocalTensor<float> red = red_.template Get<float>();
    if (t_.is_min) ReduceMin(red, f, tmp_.template Get<float>(), static_cast<int32_t>(n), true);
    else ReduceMax(red, f, tmp_.template Get<float>(), static_cast<int32_t>(n), true);
    *value = red.GetValue(0);
    *index = red.template ReinterpretCast<uint32_t>().GetValue(1);
  }

  __aicore__ inline bool Better(float a, float b) const { return t_.is_min ? a < b : a > b; }

  __aicore__ inline bool MayHoldNan(const LocalTensor<float>& f, uint32_t n) {
    return ::MayHoldNan(f, n, red_.template Get<float>()[8], tmp_.template Get<float>());
  }

  __aicore__ inline void Emit(uint64_t o, float value, uint64_t index) {
    if (t_.index_in) {
      DataCacheCleanAndInvalid<int64_t, CacheLine::SINGLE_CACHE_LINE, DcciDst::CACHELINE_OUT>(inGm_);
      index = static_cast<uint64_t>(inGm_.GetValue(o * t_.R + index));
    }
    best_.template Get<float>().SetValue(pending_, value);
    bidx_.template Get<int32_t>().SetValue(pending_, static_cast<int32_t>(index));
    if (++pending_ == outLen_) {
      Flush(first_, pending_);
      first_ += pending_;
      pending_ = 0;
    }
  }

  __aicore__ inline void PackedRows() {
    const uint32_t R = static_cast<uint32_t>(t_.R);
    const uint32_t pitch = AlignUpU(R, kElemsPerBlock<T> < 8 ? 8 : kElemsPerBlock<T>);
    uint32_t kmax = t_.tile / pitch;
    if (kmax > 4095) kmax = 4095;
    for (uint64_t it = i0_; it < i1_;) {
      const uint32_t k = static_cast<uint32_t>(MinU(kmax, i1_ - it));
      LocalTensor<T> in = inQ_.template AllocTensor<T>();
      CopyInRows(in, xGm_[it * R], k, R, R, pitch);
      inQ_.EnQue(in);
      in = inQ_.template DeQue<T>();
      LocalTensor<float> f = ToFloat(in, k * pitch);
      const bool screen = MayHoldNan(f, k * pitch);
      for (uint32_t r = 0; r < k; ++r) {
        float v;
        uint32_t idx;
        TileExtreme(f[r * pitch], R, &v, &idx);
        const uint32_t nan_at = screen ? FirstNan(f[r * pitch], R) : R;
        if (nan_at < R) Emit(it + r, f.GetValue(r * pitch + nan_at), nan_at);
        else Emit(it + r, v, idx);
      }
      inQ_.FreeTensor(in);
      it += k;
    }
  }

  __aicore__ inline void StreamRow(uint64_t it) {
    const uint64_t o = it / t_.segments, s = it % t_.segments;
    const uint64_t r0 = s * t_.seg_len;
    const uint64_t L = MinU(t_.seg_len, t_.R - r0);
    const uint64_t base = o * t_.R + r0;
    float best = 0.0f;
    uint64_t bi = 0;
    for (uint64_t off = 0; off < L; off += t_.tile) {
      const uint32_t n = static_cast<uint32_t>(MinU(t_.tile, L - off));
      LocalTensor<T> in = inQ_.template AllocTensor<T>();
      CopyInContiguous(in, xGm_[base + off], n);
      inQ_.EnQue(in);
      in = inQ_.template DeQue<T>();
      LocalTensor<float> f = ToFloat(in, n);
      float v;
      uint32_t idx;
      TileExtreme(f, n, &v, &idx);
      const uint32_t nan_at = MayHoldNan(f, n) ? FirstNan(f, n) : n;
      if (nan_at < n) {  // the answer: no later tile can change it
        best = f.GetValue(nan_at);
        bi = r0 + off + nan_at;
        inQ_.FreeTensor(in);
        break;
      }
      if (off == 0 || Better(v, best)) {
        best = v;
        bi = r0 + off + idx;
      }
      inQ_.FreeTensor(in);
    }
    Emit(o, best, bi);
  }

  // Writes values (cast back to T: exact, they are input values) and int64 indices of n outputs.
  __aicore__ inline void Flush(uint64_t first, uint32_t n) {
    if (n == 0) return;
    if (t_.write_values) {
      LocalTensor<T> v = outV_.template AllocTensor<T>();
      if constexpr (std::is_same_v<T, float>) DataCopy(v, best_.template Get<float>(), AlignUpU(n, 8));
      else Cast(v, best_.template Get<float>(), RoundMode::CAST_RINT, n);
      outV_.EnQue(v);
      v = outV_.template DeQue<T>();
      DataCopyPad(vGm_[first], v, DataCopyExtParams{1, static_cast<uint32_t>(n * sizeof(T)), 0, 0, 0});
      outV_.FreeTensor(v);
    }
    LocalTensor<int64_t> i = outI_.template AllocTensor<int64_t>();
    Cast(i, bidx_.template Get<int32_t>(), RoundMode::CAST_NONE, n);
    outI_.EnQue(i);
    i = outI_.template DeQue<int64_t>();
    DataCopyPad(iGm_[first], i, DataCopyExtParams{1, static_cast<uint32_t>(n * sizeof(int64_t)), 0, 0, 0});
    outI_.FreeTensor(i);
  }

  __aicore__ inline void ColumnItem(uint64_t it) {
    const uint64_t o = it / t_.chunks, ch = it % t_.chunks;
    const uint64_t col0 = ch * t_.chunk_w;
    const uint32_t wc = static_cast<uint32_t>(MinU(t_.chunk_w, t_.inner - col0));
    const uint32_t rs = t_.row_stride;
    const uint64_t base = o * t_.R * t_.inner + col0;
    LocalTensor<float> best = best_.template Get<float>();
    LocalTensor<int32_t> bidx = bidx_.template Get<int32_t>();
    LocalTensor<float> bidxBits = bidx.template ReinterpretCast<float>();
    LocalTensor<uint8_t> bits = bits_.template Get<uint8_t>();
    const CMPMODE keep = t_.is_min ? CMPMODE::GE : CMPMODE::LE;  // the old best stays unless strictly beaten
    LocalTensor<int32_t> nanIdx = nanIdx_.template Get<int32_t>();
    bool any_nan = false;
    for (uint64_t r = 0; r < t_.R; r += t_.tile) {
      const uint32_t k = static_cast<uint32_t>(MinU(t_.tile, t_.R - r));
      LocalTensor<T> in = inQ_.template AllocTensor<T>();
      CopyInRows(in, xGm_[base + r * t_.inner], k, wc, t_.inner, rs);
      inQ_.EnQue(in);
      in = inQ_.template DeQue<T>();
      LocalTensor<float> f = ToFloat(in, k * rs);
      uint32_t i = 0;
      if (r == 0) {
        DataCopy(best, f, rs);
        Duplicate(bidx, int32_t(0), static_cast<int32_t>(rs));
        i = 1;
      }
      for (; i < k; ++i) {
        LocalTensor<float> row = f[i * rs];
        Compare(bits, row, best, keep, rs);
        Select(bidxBits, bits, bidxBits, BitsAsFloat(static_cast<int32_t>(r + i)), SELMODE::VSEL_TENSOR_SCALAR_MODE, rs);
        if (t_.is_min) Min(best, best, row, static_cast<int32_t>(rs));
        else Max(best, best, row, static_cast<int32_t>(rs));
      }
      if (MayHoldNan(f, k * rs)) {  // the first NaN row of each column, by scalar search
        if (!any_nan) {
          for (uint32_t c = 0; c < wc; ++c) nanIdx.SetValue(c, -1);
          any_nan = true;
        }
        for (uint32_t c = 0; c < wc; ++c) {
          if (nanIdx.GetValue(c) >= 0) continue;
          for (uint32_t j = 0; j < k; ++j) {
            const float v = f.GetValue(j * rs + c);
            if (v != v) {
              nanIdx.SetValue(c, static_cast<int32_t>(r + j));
              nanVal_ = v;
              break;
            }
          }
        }
      }
      inQ_.FreeTensor(in);
    }
    if (any_nan) {
      for (uint32_t c = 0; c < wc; ++c) {
        const int32_t at = nanIdx.GetValue(c);
        if (at < 0) continue;
        best.SetValue(c, nanVal_);
        bidx.SetValue(c, at);
      }
      SyncSToV();
    }
    Flush(o * t_.inner + col0, wc);
  }

  ArgReduceTiling t_;
  uint64_t i0_ = 0, i1_ = 0, first_ = 0;
  uint32_t pending_ = 0, outLen_ = 0, cap_ = 0;
  bool rows_ = true;
  TPipe pipe_;
  TQue<TPosition::VECIN, 1> inQ_;
  TQue<TPosition::VECOUT, 1> outV_, outI_;
  TBuf<TPosition::VECCALC> work_, best_, bidx_, tmp_, red_, bits_, nanIdx_;
  float nanVal_ = 0.0f;
  GlobalTensor<T> xGm_, vGm_;
  GlobalTensor<int64_t> inGm_, iGm_;
};

template <typename T>
__aicore__ inline void RunArgReduce(GM_ADDR x, GM_ADDR index_in, GM_ADDR values, GM_ADDR indices, GM_ADDR tiling) {
  GET_TILING_DATA_WITH_STRUCT(ArgReduceTiling, t, tiling);
  ArgReduceKernel<T> op;
  op.Init(x, index_in, values, indices, t);
  op.Process();
}

}  // namespace

#define NPU_REDUCE_KERNEL_DEF(IN, OUT, TIN, TOUT)                                                        \
  extern "C" __global__ __aicore__ void reduce_kernel_##IN##_##OUT(GM_ADDR x, GM_ADDR center, GM_ADDR y, \
                                                                   GM_ADDR tiling) {                    \
    RunReduce<TIN, TOUT>(x, center, y, tiling);                                                         \
  }
NPU_REDUCE_KERNEL_DEF(float, float, float, float)
NPU_REDUCE_KERNEL_DEF(float, half, float, half)
NPU_REDUCE_KERNEL_DEF(float, bf16, float, bfloat16_t)
NPU_REDUCE_KERNEL_DEF(half, float, half, float)
NPU_REDUCE_KERNEL_DEF(half, half, half, half)
NPU_REDUCE_KERNEL_DEF(bf16, float, bfloat16_t, float)
NPU_REDUCE_KERNEL_DEF(bf16, bf16, bfloat16_t, bfloat16_t)
#undef NPU_REDUCE_KERNEL_DEF

extern "C" __global__ __aicore__ void arg_reduce_kernel_float(GM_ADDR x, GM_ADDR index_in, GM_ADDR values,
                                                              GM_ADDR indices, GM_ADDR tiling) {
  RunArgReduce<float>(x, index_in, values, indices, tiling);
}
extern "C" __global__ __aicore__ void arg_reduce_kernel_half(GM_ADDR x, GM_ADDR index_in, GM_ADDR values,
                                                             GM_ADDR indices, GM_ADDR tiling) {
  RunArgReduce<half>(x, index_in, values, indices, tiling);
}
extern "C" __global__ __aicore__ void arg_reduce_kernel_bf16(GM_ADDR x, GM_ADDR index_in, GM_ADDR values,
                                                             GM_ADDR indices, GM_ADDR tiling) {
  RunArgReduce<bfloat16_t>(x, index_in, values, indices, tiling);
}
