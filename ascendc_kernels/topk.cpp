// topk on the vector cores (see topk.h).
#include "topk.h"

#include "elementwise.h"  // EwDType
#include "kernel_operator.h"
#include "norm_util.h"

using namespace AscendC;

namespace npu_kernels {

TopkTiling topk_tiling(uint64_t rows, uint32_t R, uint32_t k, bool largest, uint32_t dtype, uint32_t elem_bytes,
                       const SocInfo& soc) {
  TopkTiling t;
  t.rows = rows;
  t.R = R;
  t.R64 = (R + 63) / 64 * 64;
  t.k = k;
  t.largest = largest ? 1 : 0;
  t.dtype = dtype;
  const ItemSplit sp = SplitItems(rows, rows * R * elem_bytes * (k + 1), soc.vector_cores, 32 * 1024);
  t.rows_per_core = sp.per_core;
  t.block_dim = sp.block_dim;
  return t;
}

TopkSelectTiling topk_select_tiling(uint64_t rows, uint32_t R, uint32_t cap, bool largest, uint32_t dtype,
                                    const SocInfo& soc) {
  TopkSelectTiling t;
  t.rows = rows;
  t.R = R;
  t.cap = cap;
  t.largest = largest ? 1 : 0;
  t.dtype = dtype;
  const ItemSplit sp = SplitItems(rows, rows * R * 4, soc.vector_cores, 64 * 1024);
  t.rows_per_core = sp.per_core;
  t.block_dim = sp.block_dim;
  return t;
}

}  // namespace npu_kernels

namespace {

using npu_kernels::EwDType;
using npu_kernels::TopkTiling;
using namespace nn_kernels;

class TopkKernel {
 public:
  __aicore__ inline void Init(GM_ADDR x, GM_ADDR values, GM_ADDR indices, const TopkTiling& t) {
    t_ = t;
    esz_ = EwDType(t.dtype) == EwDType::F32 ? 4 : 2;
    xGm_.SetGlobalBuffer(reinterpret_cast<__gm__ uint8_t*>(x), t.rows * t.R * esz_);
    vGm_.SetGlobalBuffer(reinterpret_cast<__gm__ uint8_t*>(values), t.rows * t.k * esz_);
    iGm_.SetGlobalBuffer(reinterpret_cast<__gm__ int64_t*>(indices), t.rows * t.k);
    pipe_.InitBuffer(raw_, t.R64 * 4);
    pipe_.InitBuffer(orig_, t.R64 * 4);
    pipe_.InitBuffer(work_, t.R64 * 4);
    pipe_.InitBuffer(tmp_, t.R64 * 4);
    pipe_.InitBuffer(work2_, t.R64 * 4);
    pipe_.InitBuffer(red_, 64);
    pipe_.InitBuffer(bits_, t.R64 / 8 + 32);
    const uint32_t k8 = (t.k + 15) / 16 * 16;
    pipe_.InitBuffer(vout_, k8 * 4);
    pipe_.InitBuffer(iout_, k8 * 8);
  }

  __aicore__ inline void Process() {
    const CoreShare sh = ShareOfThisCore(t_.rows, t_.rows_per_core);
    for (uint64_t r = sh.begin; r < sh.end; ++r) Row(r);
  }

 private:
  __aicore__ inline void Row(uint64_t row) {
    const EwDType dt = EwDType(t_.dtype);
    const int32_t n = int32_t(t_.R64);
    LocalTensor<float> orig = orig_.Get<float>(), w = work_.Get<float>();
    SyncVToMte2();
    SyncSToMte2();
    SyncMte3ToMte2();
    DataCopyPad(raw_.Get<uint8_t>(), xGm_[row * t_.R * esz_], DataCopyExtParams(1, t_.R * esz_, 0, 0, 0),
                DataCopyPadExtParams<uint8_t>(false, 0, 0, 0));
    SyncMte2ToV();
    if (dt == EwDType::F32) Adds(orig, raw_.Get<float>(), 0.0f, n);
    else if (dt == EwDType::F16) Cast(orig, raw_.Get<half>(), RoundMode::CAST_NONE, t_.R64);
    else Cast(orig, raw_.Get<bfloat16_t>(), RoundMode::CAST_NONE, t_.R64);
    // Working copy: negated for smallest-first, real -inf -> the lowest finite value, NaN -> -inf: -inf
    // marks entries that are taken (NaN is placed separately: first for largest, last for smallest,
    // in index order, as the CPU ranks NaN above every number).
    LocalTensor<uint8_t> bits = bits_.Get<uint8_t>();
    LocalTensor<float> red = red_.Get<float>(), vout = vout_.Get<float>(), tmp = tmp_.Get<float>();
    LocalTensor<int64_t> iout = iout_.Get<int64_t>();
    if (t_.largest) Adds(w, orig, 0.0f, n);
    else Muls(w, orig, -1.0f, n);
    CompareScalar(bits, w, -__builtin_inff(), CMPMODE::NE, t_.R64);
    Select(w, bits, w, -3.40282347e38f, SELMODE::VSEL_TENSOR_SCALAR_MODE, t_.R64);
    Compare(bits, orig, orig, CMPMODE::EQ, t_.R64);  // 1 where not NaN
    Select(w, bits, w, -__builtin_inff(), SELMODE::VSEL_TENSOR_SCALAR_MODE, t_.R64);
    Duplicate(tmp, 0.0f, n);
    Select(tmp, bits, tmp, 1.0f, SELMODE::VSEL_TENSOR_SCALAR_MODE, t_.R64);
    ReduceSum(red, tmp, work2_.Get<float>(), int32_t(t_.R));  // NaN count
    SyncVToS();
    const uint32_t nans = uint32_t(red.GetValue(0));
    for (uint32_t j = t_.R; j < t_.R64; ++j) w.SetValue(j, -__builtin_inff());  // the row's padding
    uint32_t pos = 0;
    if (nans > 0 && t_.largest) pos = TakeNans(orig, pos);
    const uint32_t numbers = t_.R - nans;
    for (uint32_t taken = 0; pos < t_.k && taken < numbers; ++taken, ++pos) {
      SyncSToV();
      ReduceMax(red, w, tmp, n, true);
      SyncVToS();
      const uint32_t idx = red.ReinterpretCast<uint32_t>().GetValue(1);
      vout.SetValue(pos, orig.GetValue(idx));
      iout.SetValue(pos, int64_t(idx));
      w.SetValue(idx, -__builtin_inff());
    }
    if (pos < t_.k && nans > 0) TakeNans(orig, pos);
    SyncSToV();
    const uint32_t k16 = (t_.k + 15) / 16 * 16;
    LocalTensor<uint8_t> vbytes = vout.ReinterpretCast<uint8_t>();
    if (dt != EwDType::F32) {
      LocalTensor<uint8_t> h = raw_.Get<uint8_t>();
      SyncMte2ToV();
      if (dt == EwDType::F16) Cast(h.ReinterpretCast<half>(), vout, RoundMode::CAST_NONE, k16);
      else Cast(h.ReinterpretCast<bfloat16_t>(), vout, RoundMode::CAST_RINT, k16);
      vbytes = h;
    }
    SyncVToMte3();
    SyncSToMte3();
    DataCopyPad(vGm_[row * t_.k * esz_], vbytes, DataCopyExtParams(1, t_.k * esz_, 0, 0, 0));
    DataCopyPad(iGm_[row * t_.k], iout, DataCopyExtParams(1, t_.k * 8, 0, 0, 0));
  }
  // The NaN entries of the row, in index order, into the outputs from `pos` on (until k); returns the next pos.
  __aicore__ inline uint32_t TakeNans(const LocalTensor<float>& orig, uint32_t pos) {
    for (uint32_t j = 0; j < t_.R && pos < t_.k; ++j) {
      const float v = orig.GetValue(j);
      if (v != v) {
        vout_.Get<float>().SetValue(pos, v);
        iout_.Get<int64_t>().SetValue(pos, int64_t(j));
        ++pos;
      }
    }
    return pos;
  }
  __aicore__ inline void SyncMte3ToMte2() { SyncPipes<HardEvent::MTE3_MTE2>(); }

  TopkTiling t_{};
  uint32_t esz_ = 4;
  TPipe pipe_;
  TBuf<TPosition::VECCALC> raw_, orig_, work_, tmp_, work2_, red_, bits_, vout_, iout_;
  GlobalTensor<uint8_t> xGm_, vGm_;
  GlobalTensor<int64_t> iGm_;
};

// Candidates of a row above (largest) / below the row's threshold, in index order (see topk.h).
class TopkSelectKernel {
 public:
  __aicore__ inline void Init(GM_ADDR x, GM_ADDR thr, GM_ADDR cand_v, GM_ADDR cand_i, GM_ADDR count,
                              const npu_kernels::TopkSelectTiling& t) {
    t_ = t;
    dt_ = EwDType(t.dtype);
    esz_ = dt_ == EwDType::F32 ? 4 : 2;
    xGm_.SetGlobalBuffer(reinterpret_cast<__gm__ uint8_t*>(x), t.rows * t.R * esz_);
    thrGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(thr), t.rows);
    cvGm_.SetGlobalBuffer(reinterpret_cast<__gm__ uint8_t*>(cand_v), t.rows * t.cap * esz_);
    ciGm_.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t*>(cand_i), t.rows * t.cap);
    cntGm_.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t*>(count), t.rows);
    pipe_.InitBuffer(raw_, kW * 4);
    pipe_.InitBuffer(score_, kW * 4);
    pipe_.InitBuffer(bits_, kW / 8 + 32);
    pipe_.InitBuffer(iota_, kW * 4);
    pipe_.InitBuffer(selv_, kW * 4);
    pipe_.InitBuffer(seli_, kW * 4);
    pipe_.InitBuffer(one_, 32);
    Iota(iota_.Get<int32_t>(), kW);
    SyncSToV();
    DataCacheCleanAndInvalid<float, CacheLine::ENTIRE_DATA_CACHE>(thrGm_);  // written by earlier kernels
  }

  __aicore__ inline void Process() {
    const CoreShare sh = ShareOfThisCore(t_.rows, t_.rows_per_core);
    for (uint64_t r = sh.begin; r < sh.end; ++r) Row(r);
  }

 private:
  static constexpr uint32_t kW = npu_kernels::kTopkSelectWindow;

  __aicore__ inline void Row(uint64_t row) {
    // Scores: x (largest) or -x, NaN -> +inf for largest (always a candidate) / -inf for smallest.
    const float thr = thrGm_.GetValue(row);
    const float t = t_.largest ? thr : -thr;
    uint64_t count = 0;
    LocalTensor<float> s = score_.Get<float>();
    LocalTensor<uint8_t> bits = bits_.Get<uint8_t>();
    for (uint32_t w0 = 0; w0 < t_.R; w0 += kW) {
      const uint32_t cnt = t_.R - w0 < kW ? t_.R - w0 : kW;
      const uint32_t c64 = (cnt + 63) / 64 * 64;
      SyncVToMte2();
      SyncMte3ToMte2();
      LocalTensor<uint8_t> raw = raw_.Get<uint8_t>();
      DataCopyPad(raw, xGm_[(row * t_.R + w0) * esz_], DataCopyExtParams(1, cnt * esz_, 0, 0, 0),
                  DataCopyPadExtParams<uint8_t>(false, 0, 0, 0));
      SyncMte2ToV();
      SyncMte3ToV();
      if (dt_ == EwDType::F32) Muls(s, raw.ReinterpretCast<float>(), t_.largest ? 1.0f : -1.0f, int32_t(c64));
      else if (dt_ == EwDType::F16) Cast(s, raw.ReinterpretCast<half>(), RoundMode::CAST_NONE, c64);
      else Cast(s, raw.ReinterpretCast<bfloat16_t>(), RoundMode::CAST_NONE, c64);
      if (dt_ != EwDType::F32 && !t_.largest) Muls(s, s, -1.0f, int32_t(c64));
      Compare(bits, s, s, CMPMODE::EQ, c64);  // 0 where NaN
      Select(s, bits, s, t_.largest ? __builtin_inff() : -__builtin_inff(), SELMODE::VSEL_TENSOR_SCALAR_MODE, c64);
      CompareScalar(bits, s, t, CMPMODE::GE, c64);
      uint64_t kept = 0;
      LocalTensor<int32_t> si = seli_.Get<int32_t>();
      GatherMask(si, iota_.Get<int32_t>(), bits.ReinterpretCast<uint32_t>(), true, cnt, GatherMaskParams(1, 1, 0, 0),
                 kept);
      if (kept > 0 && count + kept <= t_.cap) {
        uint64_t kv = 0;
        LocalTensor<uint8_t> sv = selv_.Get<uint8_t>();
        if (esz_ == 4)
          GatherMask(sv.ReinterpretCast<uint32_t>(), raw.ReinterpretCast<uint32_t>(), bits.ReinterpretCast<uint32_t>(),
                     true, cnt, GatherMaskParams(1, 1, 0, 0), kv);
        else
          GatherMask(sv.ReinterpretCast<uint16_t>(), raw.ReinterpretCast<uint16_t>(), bits.ReinterpretCast<uint16_t>(),
                     true, cnt, GatherMaskParams(1, 1, 0, 0), kv);
        Adds(si, si, int32_t(w0), int32_t(kept));
        SyncVToMte3();
        const uint64_t at = row * t_.cap + count;
        DataCopyPad(cvGm_[at * esz_], sv, DataCopyExtParams(1, uint32_t(kept) * esz_, 0, 0, 0));
        DataCopyPad(ciGm_[at], si, DataCopyExtParams(1, uint32_t(kept) * 4, 0, 0, 0));
      }
      count += kept;
    }
    // The slots past the candidates: padding that sorts after them.
    if (count < t_.cap) {
      const uint32_t left = uint32_t(t_.cap - count);
      SyncMte3ToV();
      LocalTensor<uint8_t> pad = selv_.Get<uint8_t>();
      for (uint32_t p0 = 0; p0 < left; p0 += kW) {
        const uint32_t n = left - p0 < kW ? left - p0 : kW;
        // -inf (largest) or NaN (smallest), as bit patterns of the dtype.
        if (esz_ == 4) Duplicate(pad.ReinterpretCast<uint32_t>(), t_.largest ? 0xFF800000u : 0x7FC00000u, int32_t(kW));
        else if (dt_ == EwDType::F16)
          Duplicate(pad.ReinterpretCast<uint16_t>(), uint16_t(t_.largest ? 0xFC00u : 0x7E00u), int32_t(kW));
        else Duplicate(pad.ReinterpretCast<uint16_t>(), uint16_t(t_.largest ? 0xFF80u : 0x7FC0u), int32_t(kW));
        Duplicate(seli_.Get<int32_t>(), int32_t(0), int32_t(kW));
        SyncVToMte3();
        const uint64_t at = row * t_.cap + count + p0;
        DataCopyPad(cvGm_[at * esz_], pad, DataCopyExtParams(1, n * esz_, 0, 0, 0));
        DataCopyPad(ciGm_[at], seli_.Get<int32_t>(), DataCopyExtParams(1, n * 4, 0, 0, 0));
        SyncMte3ToV();
      }
    }
    LocalTensor<int32_t> one = one_.Get<int32_t>();
    SyncMte3ToV();
    SyncVToS();
    one.SetValue(0, int32_t(count > 0x7fffffff ? 0x7fffffff : count));
    SyncSToMte3();
    DataCopyPad(cntGm_[row], one, DataCopyExtParams(1, 4, 0, 0, 0));
  }
  __aicore__ inline void SyncMte3ToMte2() { SyncPipes<HardEvent::MTE3_MTE2>(); }
  __aicore__ inline void SyncMte3ToV() { SyncPipes<HardEvent::MTE3_V>(); }

  npu_kernels::TopkSelectTiling t_{};
  EwDType dt_ = EwDType::F32;
  uint32_t esz_ = 4;
  TPipe pipe_;
  TBuf<TPosition::VECCALC> raw_, score_, bits_, iota_, selv_, seli_, one_;
  GlobalTensor<uint8_t> xGm_, cvGm_;
  GlobalTensor<float> thrGm_;
  GlobalTensor<int32_t> ciGm_, cntGm_;
};

}  // namespace

extern "C" __global__ __aicore__ void topk_select_kernel(GM_ADDR x, GM_ADDR thr, GM_ADDR cand_v, GM_ADDR cand_i,
                                                         GM_ADDR count, GM_ADDR tiling) {
  GET_TILING_DATA_WITH_STRUCT(npu_kernels::TopkSelectTiling, t, tiling);
  TopkSelectKernel op;
  op.Init(x, thr, cand_v, cand_i, count, t);
  op.Process();
}

extern "C" __global__ __aicore__ void topk_kernel(GM_ADDR x, GM_ADDR values, GM_ADDR indices, GM_ADDR tiling) {
  GET_TILING_DATA_WITH_STRUCT(TopkTiling, t, tiling);
  TopkKernel op;
  op.Init(x, values, indices, t);
  op.Process();
}
