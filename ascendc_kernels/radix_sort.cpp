// One LSD radix pass of a 1-D int32 / int64 sort on the vector cores (see radix_sort.h).
#include "radix_sort.h"

#include "kernel_operator.h"
#include "norm_util.h"

using namespace AscendC;

namespace npu_kernels {

RadixTiling radix_tiling(uint64_t n, bool wide, uint64_t base, uint32_t shift, uint32_t flip, bool iota,
                         const SocInfo& soc) {
  RadixTiling t;
  t.n = n;
  t.base = base;
  t.wide = wide ? 1 : 0;
  t.shift = shift;
  t.flip = flip;
  t.iota = iota ? 1 : 0;
  // UB of the place kernel: keys and values, and their stages (a chunk plus 7 pad elements per digit).
  const uint64_t ksz = wide ? 8 : 4, budget = soc.ub_bytes - 8192 - 4 * RadixTiling::kDigits * 4;
  t.chunk = 8192;
  while (t.chunk > 512 && (2 * uint64_t(t.chunk) + 7 * RadixTiling::kDigits + 8) * (ksz + 4) > budget) t.chunk /= 2;
  const ItemSplit sp = SplitItems(CeilDivU<uint64_t>(n, t.chunk), n * 12, soc.vector_cores, 128 * 1024);
  t.per_block = sp.per_core * t.chunk;
  t.block_dim = sp.block_dim;
  t.starts_at = AlignUp<uint64_t>(uint64_t(t.block_dim) * RadixTiling::kDigits, 8);
  t.ws_words = t.starts_at + AlignUp<uint64_t>(RadixTiling::kDigits + 1, 8);
  return t;
}

IndexBucketTiling radix_scan_tiling(const RadixTiling& t) {
  IndexBucketTiling s;
  s.J = t.n;
  s.W = RadixTiling::kDigits;
  s.block_dim = t.block_dim;
  s.starts_at = t.starts_at;
  s.ws_words = t.ws_words;
  return s;
}

}  // namespace npu_kernels

namespace {

using npu_kernels::RadixTiling;
using namespace nn_kernels;

constexpr uint32_t kDigits = RadixTiling::kDigits;

template <typename K>
__aicore__ inline uint32_t Digit(K key, const RadixTiling& t) {
  return (uint32_t(K(key - K(t.base)) >> t.shift) & 0xFFu) ^ t.flip;
}

// Each block's (min, max) of its range, as int64. S: the signed key type.
template <typename S>
class RadixRange {
 public:
  __aicore__ inline void Init(GM_ADDR keys, GM_ADDR out, const RadixTiling& t) {
    t_ = t;
    kGm_.SetGlobalBuffer(reinterpret_cast<__gm__ S*>(keys), t.n);
    oGm_.SetGlobalBuffer(reinterpret_cast<__gm__ int64_t*>(out), uint64_t(t.block_dim) * 2);
    pipe_.InitBuffer(keys_, uint64_t(t.chunk) * sizeof(S));
    pipe_.InitBuffer(out_, 32);
  }

  __aicore__ inline void Process() {
    const CoreShare r = ShareOfThisCore(t_.n, t_.per_block);
    LocalTensor<S> keys = keys_.Get<S>();
    S lo = 0, hi = 0;
    for (uint64_t c = r.begin; c < r.end; c += t_.chunk) {
      const uint32_t n = uint32_t(r.end - c < t_.chunk ? r.end - c : t_.chunk);
      SyncSToMte2();
      CopyRun(keys, kGm_, c, n);
      SyncMte2ToS();
      if (c == r.begin) lo = hi = keys.GetValue(0);
      for (uint32_t k = 0; k < n; ++k) {
        const S v = keys.GetValue(k);
        lo = v < lo ? v : lo;
        hi = v > hi ? v : hi;
      }
    }
    LocalTensor<int64_t> out = out_.Get<int64_t>();
    out.SetValue(0, int64_t(lo));
    out.SetValue(1, int64_t(hi));
    SyncSToMte3();
    DataCopyPad(oGm_[uint64_t(GetBlockIdx()) * 2], out, DataCopyExtParams(1, 16, 0, 0, 0));
  }

 private:
  RadixTiling t_{};
  TPipe pipe_;
  TBuf<TPosition::VECCALC> keys_, out_;
  GlobalTensor<S> kGm_;
  GlobalTensor<int64_t> oGm_;
};

// K: the keys' bits (uint32_t for int32, uint64_t for int64).
template <typename K>
class RadixCount {
 public:
  __aicore__ inline void Init(GM_ADDR keys, GM_ADDR ws, const RadixTiling& t) {
    t_ = t;
    kGm_.SetGlobalBuffer(reinterpret_cast<__gm__ K*>(keys), t.n);
    wsGm_.SetGlobalBuffer(reinterpret_cast<__gm__ uint32_t*>(ws), t.ws_words);
    pipe_.InitBuffer(hist_, kDigits * 4);
    pipe_.InitBuffer(keys_, uint64_t(t.chunk) * sizeof(K));
  }

  __aicore__ inline void Process() {
    const CoreShare r = ShareOfThisCore(t_.n, t_.per_block);
    LocalTensor<int32_t> hist = hist_.Get<int32_t>();
    LocalTensor<K> keys = keys_.Get<K>();
    Duplicate(hist, int32_t(0), int32_t(kDigits));
    SyncVToS();
    for (uint64_t c = r.begin; c < r.end; c += t_.chunk) {
      const uint32_t n = uint32_t(r.end - c < t_.chunk ? r.end - c : t_.chunk);
      SyncSToMte2();  // the previous chunk is read
      CopyRun(keys, kGm_, c, n);
      SyncMte2ToS();
      for (uint32_t k = 0; k < n; ++k) {
        const uint32_t d = Digit(keys.GetValue(k), t_);
        hist.SetValue(d, hist.GetValue(d) + 1);
      }
    }
    SyncSToMte3();
    DataCopyPad(wsGm_[uint64_t(GetBlockIdx()) * kDigits], hist.ReinterpretCast<uint32_t>(),
                DataCopyExtParams(1, kDigits * 4, 0, 0, 0));
  }

 private:
  RadixTiling t_{};
  TPipe pipe_;
  TBuf<TPosition::VECCALC> hist_, keys_;
  GlobalTensor<K> kGm_;
  GlobalTensor<uint32_t> wsGm_;
};

// Each block moves its range's keys and values to their slots: per chunk a counting sort in UB (each
// digit's run starts 32 B-aligned in both stages), then one DMA per digit touched and array.
template <typename K>
class RadixPlace {
 public:
  static constexpr uint32_t kAlign = 8;  // elements: 32 B of uint32 values (and of int32 / 2 x 32 B int64 keys)

  __aicore__ inline void Init(GM_ADDR keys_in, GM_ADDR values_in, GM_ADDR keys_out, GM_ADDR values_out, GM_ADDR ws,
                              const RadixTiling& t) {
    t_ = t;
    kin_.SetGlobalBuffer(reinterpret_cast<__gm__ K*>(keys_in), t.n);
    kout_.SetGlobalBuffer(reinterpret_cast<__gm__ K*>(keys_out), t.n);
    if (!t.iota) vin_.SetGlobalBuffer(reinterpret_cast<__gm__ uint32_t*>(values_in), t.n);
    vout_.SetGlobalBuffer(reinterpret_cast<__gm__ uint32_t*>(values_out), t.n);
    wsGm_.SetGlobalBuffer(reinterpret_cast<__gm__ uint32_t*>(ws), t.ws_words);
    pipe_.InitBuffer(cursor_, kDigits * 4);
    pipe_.InitBuffer(count_, kDigits * 4);
    pipe_.InitBuffer(fill_, kDigits * 4);
    pipe_.InitBuffer(touched_, kDigits * 4);
    pipe_.InitBuffer(keys_, uint64_t(t.chunk) * sizeof(K));
    pipe_.InitBuffer(values_, uint64_t(t.chunk) * 4);
    const uint64_t stage = uint64_t(t.chunk) + (kAlign - 1) * kDigits + kAlign;
    pipe_.InitBuffer(kstage_, stage * sizeof(K));
    pipe_.InitBuffer(vstage_, stage * 4);
  }

  __aicore__ inline void Process() {
    const CoreShare r = ShareOfThisCore(t_.n, t_.per_block);
    if (r.begin >= r.end) return;
    LocalTensor<uint32_t> cursor = cursor_.Get<uint32_t>(), count = count_.Get<uint32_t>(), fill = fill_.Get<uint32_t>(),
                          touched = touched_.Get<uint32_t>(), values = values_.Get<uint32_t>(),
                          vstage = vstage_.Get<uint32_t>();
    LocalTensor<K> keys = keys_.Get<K>(), kstage = kstage_.Get<K>();
    DataCopyPad(cursor, wsGm_[uint64_t(GetBlockIdx()) * kDigits], DataCopyExtParams(1, kDigits * 4, 0, 0, 0),
                DataCopyPadExtParams<uint32_t>(false, 0, 0, 0));
    Duplicate(count.ReinterpretCast<int32_t>(), int32_t(0), int32_t(kDigits));
    SyncVToS();
    for (uint64_t c = r.begin; c < r.end; c += t_.chunk) {
      const uint32_t n = uint32_t(r.end - c < t_.chunk ? r.end - c : t_.chunk);
      SyncSToMte2();  // the previous chunk's keys and values are read
      CopyRun(keys, kin_, c, n);
      if (!t_.iota) CopyRun(values, vin_, c, n);
      SyncMte2ToS();
      uint32_t nt = 0;
      for (uint32_t k = 0; k < n; ++k) {
        const uint32_t d = Digit(keys.GetValue(k), t_);
        const uint32_t m = count.GetValue(d);
        if (m == 0) touched.SetValue(nt++, d);
        count.SetValue(d, m + 1);
      }
      uint32_t pos = 0;
      for (uint32_t s = 0; s < nt; ++s) {
        const uint32_t d = touched.GetValue(s);
        fill.SetValue(d, pos);
        pos += npu_kernels::AlignUp<uint32_t>(count.GetValue(d), kAlign);
      }
      SyncPipes<HardEvent::MTE3_S>();  // the previous chunk's runs have left the stages
      for (uint32_t k = 0; k < n; ++k) {
        const K key = keys.GetValue(k);
        const uint32_t d = Digit(key, t_), p = fill.GetValue(d);
        fill.SetValue(d, p + 1);
        kstage.SetValue(p, key);
        vstage.SetValue(p, t_.iota ? uint32_t(c + k) : values.GetValue(k));
      }
      SyncSToMte3();
      for (uint32_t s = 0; s < nt; ++s) {
        const uint32_t d = touched.GetValue(s), m = count.GetValue(d), from = fill.GetValue(d) - m, at = cursor.GetValue(d);
        DataCopyPad(kout_[at], kstage[from], DataCopyExtParams(1, uint32_t(m * sizeof(K)), 0, 0, 0));
        DataCopyPad(vout_[at], vstage[from], DataCopyExtParams(1, m * 4, 0, 0, 0));
        cursor.SetValue(d, at + m);
        count.SetValue(d, 0);
      }
    }
  }

 private:
  RadixTiling t_{};
  TPipe pipe_;
  TBuf<TPosition::VECCALC> cursor_, count_, fill_, touched_, keys_, values_, kstage_, vstage_;
  GlobalTensor<K> kin_, kout_;
  GlobalTensor<uint32_t> vin_, vout_, wsGm_;
};

}  // namespace

extern "C" __global__ __aicore__ void radix_range_kernel(GM_ADDR keys, GM_ADDR out, GM_ADDR tiling) {
  GET_TILING_DATA_WITH_STRUCT(RadixTiling, t, tiling);
  if (t.wide) RunOp<RadixRange<int64_t>>(t, keys, out);
  else RunOp<RadixRange<int32_t>>(t, keys, out);
}

extern "C" __global__ __aicore__ void radix_count_kernel(GM_ADDR keys, GM_ADDR ws, GM_ADDR tiling) {
  GET_TILING_DATA_WITH_STRUCT(RadixTiling, t, tiling);
  if (t.wide) RunOp<RadixCount<uint64_t>>(t, keys, ws);
  else RunOp<RadixCount<uint32_t>>(t, keys, ws);
}

extern "C" __global__ __aicore__ void radix_place_kernel(GM_ADDR keys_in, GM_ADDR values_in, GM_ADDR keys_out,
                                                         GM_ADDR values_out, GM_ADDR ws, GM_ADDR tiling) {
  GET_TILING_DATA_WITH_STRUCT(RadixTiling, t, tiling);
  if (t.wide) RunOp<RadixPlace<uint64_t>>(t, keys_in, values_in, keys_out, values_out, ws);
  else RunOp<RadixPlace<uint32_t>>(t, keys_in, values_in, keys_out, values_out, ws);
}
