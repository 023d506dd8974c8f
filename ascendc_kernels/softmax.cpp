// Softmax / log_softmax forward and backward in Ascend C (see softmax.h for the design).
#include "softmax.h"

#include <limits>
#include <type_traits>

#include "kernel_operator.h"
#include "norm_util.h"
#include "reduce_helpers.h"

using namespace AscendC;
using namespace npu_kernels::reduce_helpers;

namespace npu_kernels {

namespace {
constexpr uint32_t kUbReserve = 8 * 1024 + 2 * 1024;
constexpr uint64_t kMinElemsPerCore = 32 * 1024;
constexpr uint32_t kMaxTile = 16384;
constexpr uint32_t kSmallTile = 4096;
constexpr uint32_t kMaxChunk = 2048;
}  // namespace

SoftmaxTiling softmax_tiling(uint64_t outer, uint64_t R, uint64_t inner, uint32_t in_bytes, uint32_t out_bytes,
                             bool log, bool backward, const SocInfo& soc) {
  SoftmaxTiling t{};
  t.outer = outer;
  t.R = R;
  t.inner = inner;
  t.log = log ? 1 : 0;
  t.backward = backward ? 1 : 0;
  t.safe = 0;
  const uint64_t total = outer * R * inner;
  uint64_t cores = total / kMinElemsPerCore;
  if (cores < 1) cores = 1;
  if (cores > static_cast<uint64_t>(soc.vector_cores)) cores = static_cast<uint64_t>(soc.vector_cores);
  const uint32_t budget = soc.ub_bytes - kUbReserve;
  const uint32_t inputs = backward ? 2 : 1;
  // Per tile element: double-buffered inputs, their float copies, a float scratch, double-buffered output.
  const uint32_t per_elem = inputs * (2 * in_bytes + (in_bytes != 4 ? 4 : 0)) + 4 + 2 * out_bytes;
  if (inner == 1) {
    t.chunks = 1;
    t.chunk_w = 1;
    // Two small per-row buffers (max, sum) of tile/16 floats each; short rows also one 32 B block per row
    // (Brcb), at most 2 B per element (rows of >= 16 elements).
    const uint32_t small = R <= kSoftmaxShortRow ? 3 : 1;
    uint32_t tile = AlignDown<uint32_t>(budget / (per_elem + small), 64);
    if (tile > kMaxTile) tile = kMaxTile;
    // A row stays resident when it fits; beyond that, smaller tiles (a smaller UB working set) run faster.
    // Rows that fit the host's L1d tile (kHostL1TileBytes) are processed that many at a time.
    const uint64_t pitch = AlignUp<uint64_t>(R, 16);
    const uint64_t host = HostCacheTile(8 * (per_elem + small), 64);
    const uint32_t want = pitch <= host ? static_cast<uint32_t>(host)
                          : pitch <= kSmallTile ? kSmallTile : static_cast<uint32_t>(pitch);
    if (want < tile) tile = want;
    t.tile = tile;
    t.row_stride = AlignUp<uint32_t>(static_cast<uint32_t>(R < tile ? R : tile), 16);
    t.resident = R <= tile && AlignUp<uint64_t>(R, 16) <= tile ? 1 : 0;
    t.items = outer;
  } else {
    const uint64_t w = ColumnChunkWidth(outer, inner, cores, kMaxChunk);
    t.chunk_w = static_cast<uint32_t>(w);
    t.chunks = CeilDivU<uint64_t>(inner, w);
    t.row_stride = AlignUp<uint32_t>(t.chunk_w, 16);
    const uint32_t fixed = 2 * t.row_stride * 4 + 1024;  // per-column max and sum vectors
    uint64_t rows = (budget - fixed) / (uint64_t(t.row_stride) * per_elem);
    if (rows > 4095) rows = 4095;
    if (const uint64_t h = HostCacheRows(uint64_t(t.row_stride) * per_elem); rows > h) rows = h;
    if (rows > R) rows = R;
    if (rows < 1) rows = 1;
    t.tile = static_cast<uint32_t>(rows);
    t.resident = 0;
    t.items = outer * t.chunks;
  }
  if (cores > t.items) cores = t.items;
  if (cores < 1) cores = 1;
  t.items_per_core = t.items == 0 ? 1 : CeilDivU<uint64_t>(t.items, cores);
  t.block_dim = t.items == 0 ? 1 : static_cast<uint32_t>(CeilDivU<uint64_t>(t.items, t.items_per_core));
  return t;
}

}  // namespace npu_kernels

namespace {

using npu_kernels::SoftmaxTiling;

// T: dtype of the inputs (forward x; backward grad_output and output); O: dtype of the result.
template <typename T, typename O, bool kBackward>
class SoftmaxKernel {
 public:
  __aicore__ inline void Init(GM_ADDR a, GM_ADDR b, GM_ADDR out, const SoftmaxTiling& t, GM_ADDR lse = nullptr) {
    t_ = t;
    has_lse_ = lse != nullptr;
    if (has_lse_) lseGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(lse), t.outer);
    i0_ = t.items_per_core * GetBlockIdx();
    i1_ = MinU(t.items, i0_ + t.items_per_core);
    const uint64_t n = t.outer * t.R * t.inner;
    aGm_.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(a), n);
    if constexpr (kBackward) bGm_.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(b), n);
    oGm_.SetGlobalBuffer(reinterpret_cast<__gm__ O*>(out), n);
    rows_ = t.inner == 1;
    cap_ = rows_ ? t.tile : AlignUpU(t.tile * t.row_stride, 64);
    pipe_.InitBuffer(aQ_, 2, cap_ * sizeof(T));
    if constexpr (kBackward) pipe_.InitBuffer(bQ_, 2, cap_ * sizeof(T));
    if constexpr (!std::is_same_v<T, float>) {
      pipe_.InitBuffer(fa_, cap_ * sizeof(float));
      if constexpr (kBackward) pipe_.InitBuffer(fb_, cap_ * sizeof(float));
    }
    pipe_.InitBuffer(tmp_, cap_ * sizeof(float));
    pipe_.InitBuffer(outQ_, 2, cap_ * sizeof(O));
    const uint32_t small = rows_ ? AlignUpU(t.tile / 16 + 64, 64) : t.row_stride;
    pipe_.InitBuffer(vm_, small * sizeof(float));
    pipe_.InitBuffer(vs_, 2 * small * sizeof(float));  // the sums, then their reciprocals
    // ReduceSum/ReduceMax sharedTmpBuffer for one row of up to `tile` elements (2 values per repeat).
    if (rows_) pipe_.InitBuffer(red_, AlignUpU(2 * (t.tile / 64 + 1) + 8, 64) * sizeof(float));
    // Short resident rows: one block per row of the per-row scalars (Brcb).
    short_ = rows_ && t.resident && t.R <= npu_kernels::kSoftmaxShortRow && t.row_stride / 8 <= 255;
    if (short_) pipe_.InitBuffer(vb_, AlignUpU((t.tile / t.row_stride + 8) * 8, 64) * sizeof(float));
  }

  __aicore__ inline void Process() {
    if (i0_ >= i1_) return;
    if (!rows_) {
      for (uint64_t it = i0_; it < i1_; ++it) Columns(it);
    } else if (t_.resident) {
      RowsResident();
    } else {
      for (uint64_t it = i0_; it < i1_; ++it) RowStream(it);
    }
  }

 private:
  // GM -> UB (rows x w at the given pitches) and a float view of it.
  __aicore__ inline LocalTensor<T> Load(TQue<TPosition::VECIN, 1>& q, const GlobalTensor<T>& gm, uint32_t rows,
                                        uint32_t w, uint64_t gm_pitch, uint32_t ub_pitch) {
    LocalTensor<T> in = q.template AllocTensor<T>();
    if (rows == 1) CopyInContiguous(in, gm, w);
    else CopyInRows(in, gm, rows, w, gm_pitch, ub_pitch);
    q.EnQue(in);
    return q.template DeQue<T>();
  }
  __aicore__ inline LocalTensor<float> AsFloat(const LocalTensor<T>& in, TBuf<TPosition::VECCALC>& buf, uint32_t n) {
    if constexpr (std::is_same_v<T, float>) {
      return in;
    } else {
      LocalTensor<float> f = buf.template Get<float>();
      Cast(f, in, RoundMode::CAST_NONE, n);
      return f;
    }
  }
  // Per-row reduction of k packed rows (pitch P, R valid) of src into dst[0:k]: rows of up to 64 floats
  // are one WholeReduce repeat each (255 rows per instruction); longer rows one count-form
  // ReduceSum/ReduceMax per row (a single pass over the row) with its own small sharedTmpBuffer.
  __aicore__ inline void RowReduce(uint32_t comb, const LocalTensor<float>&, const LocalTensor<float>& src,
                                   uint32_t k, uint32_t P, uint32_t R, const LocalTensor<float>& dst) {
    if (R <= 64 && P % 8 == 0) {
      WholeReduceRows(comb, dst, src, R, k, P / 8);
      return;
    }
    LocalTensor<float> red = red_.template Get<float>();
    const int32_t n = static_cast<int32_t>(R);
    for (uint32_t r = 0; r < k; ++r) {
      if (comb == npu_kernels::kCombSum) ReduceSum(dst[r], src[r * P], red, n);
      else ReduceMax(dst[r], src[r * P], red, n);
    }
  }

  enum class RowBin { kSub, kMul };
  // dst[r, :R] = src[r, :R] op v[r] for the k packed rows (pitch P). Short rows: v's values broadcast into
  // one block per row (Brcb), then one repeat-form instruction per 64 columns and 255 rows (src1 block
  // stride 0); else one count-form instruction per row with v[r] read by the scalar unit.
  __aicore__ inline void RowScalar(RowBin op, const LocalTensor<float>& dst, const LocalTensor<float>& src,
                                   const LocalTensor<float>& v, uint32_t k, uint32_t P, uint32_t R) {
    if (short_) {
      LocalTensor<float> vb = vb_.template Get<float>();
      nn_kernels::SyncPipes<HardEvent::S_V>();  // v may have been written by the scalar unit
      for (uint32_t r0 = 0; r0 < k; r0 += 255 * 8)
        Brcb(vb[r0 * 8], v[r0], static_cast<uint8_t>(CeilDivU32(MinU(k - r0, 255 * 8), 8)), BrcbRepeatParams(1, 8));
      const uint8_t ps = static_cast<uint8_t>(P / 8);
      for (uint32_t c0 = 0; c0 < R; c0 += 64) {
        const uint64_t mask = MinU(64, R - c0);
        for (uint32_t r0 = 0; r0 < k; r0 += 255) {
          const uint8_t n = static_cast<uint8_t>(MinU(255, k - r0));
          const BinaryRepeatParams rp(1, 1, 0, ps, ps, 1);
          if (op == RowBin::kSub) Sub(dst[r0 * P + c0], src[r0 * P + c0], vb[r0 * 8], mask, n, rp);
          else Mul(dst[r0 * P + c0], src[r0 * P + c0], vb[r0 * 8], mask, n, rp);
        }
      }
      return;
    }
    nn_kernels::SyncPipes<HardEvent::V_S>();
    const int32_t n = static_cast<int32_t>(R);
    for (uint32_t r = 0; r < k; ++r) {
      if (op == RowBin::kSub) Adds(dst[r * P], src[r * P], -v.GetValue(r), n);
      else Muls(dst[r * P], src[r * P], v.GetValue(r), n);
    }
  }
  static __aicore__ inline uint32_t CeilDivU32(uint64_t a, uint32_t b) { return static_cast<uint32_t>((a + b - 1) / b); }

  // The float tile the result is computed into: the output tile itself for float output.
  __aicore__ inline LocalTensor<float> ResultTile(const LocalTensor<O>& out, const LocalTensor<float>& fallback) {
    if constexpr (std::is_same_v<O, float>) return out;
    else return fallback;
  }
  __aicore__ inline void Emit(LocalTensor<O>& out, const LocalTensor<float>& res, uint32_t count,
                              const GlobalTensor<O>& gm, uint32_t rows, uint32_t w, uint64_t gm_pitch,
                              uint32_t ub_pitch) {
    if constexpr (!std::is_same_v<O, float>) Cast(out, res, RoundMode::CAST_RINT, count);
    outQ_.EnQue(out);
    out = outQ_.template DeQue<O>();
    if (rows == 1) CopyOutContiguous(gm, out, w);
    else CopyOutRows(gm, out, rows, w, gm_pitch, ub_pitch);
    outQ_.FreeTensor(out);
  }

  static __aicore__ inline bool IsNegInf(float v) { return v == -std::numeric_limits<float>::infinity(); }
  // True when some element of x[0:n] is not -inf (with a max of -inf: a NaN).
  static __aicore__ inline bool AnyNotNegInf(const LocalTensor<float>& x, uint32_t n) {
    for (uint32_t j = 0; j < n; ++j)
      if (!IsNegInf(x.GetValue(j))) return true;
    return false;
  }
  // _safe_softmax: of the k packed rows, those with max -inf keep vm[r] = -inf when every element is
  // -inf (the result becomes zeros), and get vm[r] = NaN when one is NaN (the row's result is NaN).
  __aicore__ inline bool MarkMaskedRows(const LocalTensor<float>& fa, const LocalTensor<float>& vm, uint32_t k,
                                        uint32_t P, uint32_t R) {
    bool any = false;
    for (uint32_t r = 0; r < k; ++r) {
      if (!IsNegInf(vm.GetValue(r))) continue;
      if (AnyNotNegInf(fa[r * P], R)) vm.SetValue(r, std::numeric_limits<float>::quiet_NaN());
      else any = true;
    }
    return any;
  }

  // log-sum-exp of k rows (max + ln(sum of exp)) to lse[it, it + k): -inf for a row of all -inf.
  // vs is overwritten (its sums have been used).
  __aicore__ inline void StoreLse(uint64_t it, uint32_t k, const LocalTensor<float>& vm, const LocalTensor<float>& vs) {
    const int32_t kc = static_cast<int32_t>(k);
    Ln(vs, vs, kc);
    Add(vs, vs, vm, kc);
    nn_kernels::SyncPipes<HardEvent::V_S>();
    for (uint32_t r = 0; r < k; ++r)
      if (IsNegInf(vm.GetValue(r))) vs.SetValue(r, -std::numeric_limits<float>::infinity());
    nn_kernels::SyncPipes<HardEvent::S_MTE3>();
    nn_kernels::SyncPipes<HardEvent::V_MTE3>();
    CopyOutContiguous(lseGm_[it], vs, k);
    nn_kernels::SyncPipes<HardEvent::MTE3_V>();  // vs is written again by the next rows' sums
    nn_kernels::SyncPipes<HardEvent::MTE3_S>();
  }

  __aicore__ inline void RowsResident() {
    const uint32_t R = static_cast<uint32_t>(t_.R);
    const uint32_t P = t_.row_stride;
    uint32_t kmax = t_.tile / P;
    if (kmax > 4095) kmax = 4095;
    LocalTensor<float> tmp = tmp_.template Get<float>();
    LocalTensor<float> vm = vm_.template Get<float>();
    LocalTensor<float> vs = vs_.template Get<float>();
    const int32_t r32 = static_cast<int32_t>(R);
    for (uint64_t it = i0_; it < i1_;) {
      const uint32_t k = static_cast<uint32_t>(MinU(kmax, i1_ - it));
      const uint32_t n = k * P;
      LocalTensor<T> a = Load(aQ_, aGm_[it * R], k, R, R, P);
      LocalTensor<float> fa = AsFloat(a, fa_, n);
      LocalTensor<O> out = outQ_.template AllocTensor<O>();
      LocalTensor<float> res = ResultTile(out, fa);
      if constexpr (!kBackward) {
        RowReduce(npu_kernels::kCombMax, tmp, fa, k, P, R, vm);
        bool any_masked = false;
        if (t_.safe) any_masked = MarkMaskedRows(fa, vm, k, P, R);
        RowScalar(RowBin::kSub, fa, fa, vm, k, P, R);
        if (t_.log) {
          Exp(tmp, fa, static_cast<int32_t>(n));
          RowReduce(npu_kernels::kCombSum, tmp, tmp, k, P, R, vs);
          Ln(vs, vs, static_cast<int32_t>(k));
          RowScalar(RowBin::kSub, res, fa, vs, k, P, R);
        } else {
          Exp(fa, fa, static_cast<int32_t>(n));
          RowReduce(npu_kernels::kCombSum, tmp, fa, k, P, R, vs);
          // 1 / sum per row (the CPU multiplies by the reciprocal too), into the sums' upper half
          LocalTensor<float> inv = vs[AlignUpU(t_.tile / 16 + 64, 64)];
          Duplicate(inv, 1.0f, static_cast<int32_t>(k));
          Div(inv, inv, vs, static_cast<int32_t>(k));
          RowScalar(RowBin::kMul, res, fa, inv, k, P, R);
          if (any_masked) {
            for (uint32_t r = 0; r < k; ++r)
              if (IsNegInf(vm.GetValue(r))) Duplicate(res[r * P], 0.0f, r32);
          }
          if (has_lse_) StoreLse(it, k, vm, vs);
        }
        Emit(out, res, n, oGm_[it * R], k, R, R, P);
        aQ_.FreeTensor(a);
      } else {
        LocalTensor<T> b = Load(bQ_, bGm_[it * R], k, R, R, P);
        LocalTensor<float> fb = AsFloat(b, fb_, n);  // fa = grad_output, fb = output
        if (t_.log) {
          RowReduce(npu_kernels::kCombSum, tmp, fa, k, P, R, vs);
          Exp(tmp, fb, static_cast<int32_t>(n));
          RowScalar(RowBin::kMul, tmp, tmp, vs, k, P, R);
          Sub(res, fa, tmp, static_cast<int32_t>(n));
        } else {
          Mul(tmp, fa, fb, static_cast<int32_t>(n));
          RowReduce(npu_kernels::kCombSum, tmp, tmp, k, P, R, vs);
          RowScalar(RowBin::kSub, fa, fa, vs, k, P, R);
          Mul(res, fa, fb, static_cast<int32_t>(n));
        }
        Emit(out, res, n, oGm_[it * R], k, R, R, P);
        aQ_.FreeTensor(a);
        bQ_.FreeTensor(b);
      }
      it += k;
    }
  }

  // A row longer than a tile: max, then sum of exp, then the result (backward: sum, then the result).
  __aicore__ inline void RowStream(uint64_t it) {
    const uint64_t R = t_.R;
    const uint64_t base = it * R;
    const uint32_t tn = t_.tile;
    LocalTensor<float> tmp = tmp_.template Get<float>();
    LocalTensor<float> vm = vm_.template Get<float>();
    LocalTensor<float> vs = vs_.template Get<float>();
    float m = 0.0f, s = 0.0f;
    bool nan_in_masked = false;
    if constexpr (!kBackward) {
      for (uint64_t off = 0; off < R; off += tn) {
        const uint32_t n = static_cast<uint32_t>(MinU(tn, R - off));
        LocalTensor<T> a = Load(aQ_, aGm_[base + off], 1, n, n, n);
        LocalTensor<float> fa = AsFloat(a, fa_, n);
        RowReduce(npu_kernels::kCombMax, tmp, fa, 1, n, n, vm);
        const float v = vm.GetValue(0);
        if (off == 0 || v > m) m = v;
        if (t_.safe && IsNegInf(v) && AnyNotNegInf(fa, n)) nan_in_masked = true;
        aQ_.FreeTensor(a);
      }
    }
    // _safe_softmax: a row of all -inf gives zeros (below); with a NaN among -inf values, NaN.
    const bool masked = t_.safe && IsNegInf(m) && !nan_in_masked;
    if (t_.safe && IsNegInf(m) && nan_in_masked) m = std::numeric_limits<float>::quiet_NaN();
    for (uint64_t off = 0; off < R; off += tn) {
      const uint32_t n = static_cast<uint32_t>(MinU(tn, R - off));
      const int32_t c = static_cast<int32_t>(n);
      LocalTensor<T> a = Load(aQ_, aGm_[base + off], 1, n, n, n);
      LocalTensor<float> fa = AsFloat(a, fa_, n);
      if constexpr (!kBackward) {
        Adds(tmp, fa, -m, c);
        Exp(tmp, tmp, c);
        aQ_.FreeTensor(a);
      } else {
        if (t_.log) {
          RowReduce(npu_kernels::kCombSum, tmp, fa, 1, n, n, vs);
          s += vs.GetValue(0);
          aQ_.FreeTensor(a);
          continue;
        }
        LocalTensor<T> b = Load(bQ_, bGm_[base + off], 1, n, n, n);
        Mul(tmp, fa, AsFloat(b, fb_, n), c);
        bQ_.FreeTensor(b);
        aQ_.FreeTensor(a);
      }
      RowReduce(npu_kernels::kCombSum, tmp, tmp, 1, n, n, vs);
      s += vs.GetValue(0);
    }
    if (!kBackward && has_lse_) {
      float lse = -std::numeric_limits<float>::infinity();
      if (!masked) {
        vs.SetValue(0, s);
        nn_kernels::SyncPipes<HardEvent::S_V>();
        Ln(vs, vs, 1);
        Adds(vs, vs, m, 1);
      } else {
        vs.SetValue(0, lse);
      }
      nn_kernels::SyncPipes<HardEvent::V_MTE3>();
      nn_kernels::SyncPipes<HardEvent::S_MTE3>();
      CopyOutContiguous(lseGm_[it], vs, 1);
      nn_kernels::SyncPipes<HardEvent::MTE3_V>();
      nn_kernels::SyncPipes<HardEvent::MTE3_S>();
    }
    float shift = 0.0f;
    if (!kBackward && t_.log) {
      vs.SetValue(0, s);
      Ln(vs, vs, 1);
      shift = m + vs.GetValue(0);
    }
    for (uint64_t off = 0; off < R; off += tn) {
      const uint32_t n = static_cast<uint32_t>(MinU(tn, R - off));
      const int32_t c = static_cast<int32_t>(n);
      LocalTensor<T> a = Load(aQ_, aGm_[base + off], 1, n, n, n);
      LocalTensor<float> fa = AsFloat(a, fa_, n);
      LocalTensor<O> out = outQ_.template AllocTensor<O>();
      LocalTensor<float> res = ResultTile(out, fa);
      if constexpr (!kBackward) {
        if (t_.log) {
          Adds(res, fa, -shift, c);
        } else if (masked) {
          Duplicate(res, 0.0f, c);
        } else {
          Adds(fa, fa, -m, c);
          Exp(fa, fa, c);
          Muls(res, fa, 1.0f / s, c);
        }
      } else {
        LocalTensor<T> b = Load(bQ_, bGm_[base + off], 1, n, n, n);
        LocalTensor<float> fb = AsFloat(b, fb_, n);
        if (t_.log) {
          Exp(tmp, fb, c);
          Muls(tmp, tmp, s, c);
          Sub(res, fa, tmp, c);
        } else {
          Adds(fa, fa, -s, c);
          Mul(res, fa, fb, c);
        }
        bQ_.FreeTensor(b);
      }
      Emit(out, res, n, oGm_[base + off], 1, n, n, n);
      aQ_.FreeTensor(a);
    }
  }

  // A chunk of columns: per-column max and sum vectors over row tiles, then the result.
  __aicore__ inline void Columns(uint64_t it) {
    const uint64_t o = it / t_.chunks, ch = it % t_.chunks;
    const uint64_t col0 = ch * t_.chunk_w;
    const uint32_t wc = static_cast<uint32_t>(MinU(t_.chunk_w, t_.inner - col0));
    const uint32_t rs = t_.row_stride;
    const uint64_t inner = t_.inner;
    const uint64_t base = o * t_.R * inner + col0;
    const int32_t vrs = static_cast<int32_t>(rs);
    LocalTensor<float> tmp = tmp_.template Get<float>();
    LocalTensor<float> vm = vm_.template Get<float>();
    LocalTensor<float> vs = vs_.template Get<float>();
    if constexpr (!kBackward) {
      for (uint64_t r = 0; r < t_.R; r += t_.tile) {
        const uint32_t k = static_cast<uint32_t>(MinU(t_.tile, t_.R - r));
        LocalTensor<T> a = Load(aQ_, aGm_[base + r * inner], k, wc, inner, rs);
        LocalTensor<float> fa = AsFloat(a, fa_, k * rs);
        FoldRowsCopy(npu_kernels::kCombMax, tmp, fa, k, rs);
        if (r == 0) DataCopy(vm, tmp, rs);
        else Max(vm, vm, tmp, vrs);
        aQ_.FreeTensor(a);
      }
    }
    for (uint64_t r = 0; r < t_.R; r += t_.tile) {
      const uint32_t k = static_cast<uint32_t>(MinU(t_.tile, t_.R - r));
      const int32_t n = static_cast<int32_t>(k * rs);
      LocalTensor<T> a = Load(aQ_, aGm_[base + r * inner], k, wc, inner, rs);
      LocalTensor<float> fa = AsFloat(a, fa_, k * rs);
      if constexpr (!kBackward) {
        BroadcastRows(RowOp::Sub, fa, vm, k, rs);
        Exp(tmp, fa, n);
      } else if (t_.log) {
        FoldRowsCopy(npu_kernels::kCombSum, tmp, fa, k, rs);
        if (r == 0) DataCopy(vs, tmp, rs);
        else Add(vs, vs, tmp, vrs);
        aQ_.FreeTensor(a);
        continue;
      } else {
        LocalTensor<T> b = Load(bQ_, bGm_[base + r * inner], k, wc, inner, rs);
        Mul(tmp, fa, AsFloat(b, fb_, k * rs), n);
        bQ_.FreeTensor(b);
      }
      aQ_.FreeTensor(a);
      FoldRows(npu_kernels::kCombSum, tmp, k, rs);
      if (r == 0) DataCopy(vs, tmp, rs);
      else Add(vs, vs, tmp, vrs);
    }
    if (!kBackward && t_.log) {
      Ln(vs, vs, vrs);
      Add(vm, vm, vs, vrs);  // log_softmax = x - (max + ln(sum))
    }
    for (uint64_t r = 0; r < t_.R; r += t_.tile) {
      const uint32_t k = static_cast<uint32_t>(MinU(t_.tile, t_.R - r));
      const int32_t n = static_cast<int32_t>(k * rs);
      LocalTensor<T> a = Load(aQ_, aGm_[base + r * inner], k, wc, inner, rs);
      LocalTensor<float> fa = AsFloat(a, fa_, k * rs);
      LocalTensor<O> out = outQ_.template AllocTensor<O>();
      LocalTensor<float> res = ResultTile(out, fa);
      if constexpr (!kBackward) {
        BroadcastRows(RowOp::Sub, fa, vm, k, rs);
        if (t_.log) {
          if constexpr (std::is_same_v<O, float>) DataCopy(res, fa, k * rs);
        } else {
          Exp(res, fa, n);
          BroadcastRows(RowOp::Div, res, vs, k, rs);
        }
      } else {
        LocalTensor<T> b = Load(bQ_, bGm_[base + r * inner], k, wc, inner, rs);
        LocalTensor<float> fb = AsFloat(b, fb_, k * rs);
        if (t_.log) {
          Exp(tmp, fb, n);
          BroadcastRows(RowOp::Mul, tmp, vs, k, rs);
          Sub(res, fa, tmp, n);
        } else {
          BroadcastRows(RowOp::Sub, fa, vs, k, rs);
          Mul(res, fa, fb, n);
        }
        bQ_.FreeTensor(b);
      }
      Emit(out, res, k * rs, oGm_[base + r * inner], k, wc, inner, rs);
      aQ_.FreeTensor(a);
    }
  }

  SoftmaxTiling t_;
  bool has_lse_ = false;
  bool short_ = false;
  GlobalTensor<float> lseGm_;
  uint64_t i0_ = 0, i1_ = 0;
  uint32_t cap_ = 0;
  bool rows_ = true;
  TPipe pipe_;
  TQue<TPosition::VECIN, 1> aQ_, bQ_;
  TQue<TPosition::VECOUT, 1> outQ_;
  TBuf<TPosition::VECCALC> vb_, fa_, fb_, tmp_, vm_, vs_, red_;
  GlobalTensor<T> aGm_, bGm_;
  GlobalTensor<O> oGm_;
};

template <typename T, typename O, bool kBackward>
__aicore__ inline void RunSoftmax(GM_ADDR a, GM_ADDR b, GM_ADDR out, GM_ADDR tiling, GM_ADDR lse = nullptr) {
  GET_TILING_DATA_WITH_STRUCT(SoftmaxTiling, t, tiling);
  SoftmaxKernel<T, O, kBackward> op;
  op.Init(a, b, out, t, lse);
  op.Process();
}

}  // namespace

extern "C" __global__ __aicore__ void softmax_kernel_float_float(GM_ADDR x, GM_ADDR y, GM_ADDR tiling) {
  RunSoftmax<float, float, false>(x, nullptr, y, tiling);
}
extern "C" __global__ __aicore__ void softmax_kernel_half_half(GM_ADDR x, GM_ADDR y, GM_ADDR tiling) {
  RunSoftmax<half, half, false>(x, nullptr, y, tiling);
}
extern "C" __global__ __aicore__ void softmax_kernel_bf16_bf16(GM_ADDR x, GM_ADDR y, GM_ADDR tiling) {
  RunSoftmax<bfloat16_t, bfloat16_t, false>(x, nullptr, y, tiling);
}
extern "C" __global__ __aicore__ void softmax_kernel_half_float(GM_ADDR x, GM_ADDR y, GM_ADDR tiling) {
  RunSoftmax<half, float, false>(x, nullptr, y, tiling);
}
extern "C" __global__ __aicore__ void softmax_grad_kernel_float_float(GM_ADDR g, GM_ADDR y, GM_ADDR gi, GM_ADDR tiling) {
  RunSoftmax<float, float, true>(g, y, gi, tiling);
}
extern "C" __global__ __aicore__ void softmax_grad_kernel_half_half(GM_ADDR g, GM_ADDR y, GM_ADDR gi, GM_ADDR tiling) {
  RunSoftmax<half, half, true>(g, y, gi, tiling);
}
extern "C" __global__ __aicore__ void softmax_grad_kernel_bf16_bf16(GM_ADDR g, GM_ADDR y, GM_ADDR gi, GM_ADDR tiling) {
  RunSoftmax<bfloat16_t, bfloat16_t, true>(g, y, gi, tiling);
}
extern "C" __global__ __aicore__ void softmax_grad_kernel_float_half(GM_ADDR g, GM_ADDR y, GM_ADDR gi, GM_ADDR tiling) {
  RunSoftmax<float, half, true>(g, y, gi, tiling);
}
// _safe_softmax rows with their log-sum-exp (scaled_dot_product_attention's forward).
extern "C" __global__ __aicore__ void softmax_lse_kernel_float(GM_ADDR x, GM_ADDR y, GM_ADDR lse, GM_ADDR tiling) {
  RunSoftmax<float, float, false>(x, nullptr, y, tiling, lse);
}
extern "C" __global__ __aicore__ void softmax_lse_kernel_half(GM_ADDR x, GM_ADDR y, GM_ADDR lse, GM_ADDR tiling) {
  RunSoftmax<half, half, false>(x, nullptr, y, tiling, lse);
}
extern "C" __global__ __aicore__ void softmax_lse_kernel_bf16(GM_ADDR x, GM_ADDR y, GM_ADDR lse, GM_ADDR tiling) {
  RunSoftmax<bfloat16_t, bfloat16_t, false>(x, nullptr, y, tiling, lse);
}
