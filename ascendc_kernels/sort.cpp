// sort on the vector cores (see sort.h).
#include "sort.h"

#include "elementwise.h"  // EwDType
#include "kernel_operator.h"
#include "norm_util.h"

using namespace AscendC;

namespace npu_kernels {

SortTiling sort_tiling(uint64_t rows, uint32_t n, uint32_t limit, bool descending, uint32_t dtype,
                       const SocInfo& soc) {
  SortTiling t;
  t.rows = rows;
  t.n = n;
  t.limit = limit < n ? limit : n;
  t.dtype = dtype;
  t.descending = descending ? 1 : 0;
  t.phase = 0;
  if (n <= kSortTile) {
    uint32_t s = 32;
    while (s < n) s *= 2;
    t.slot = s;
    t.slots = kSortTile / s;
    t.tiles = 1;
    t.units = CeilDivU<uint64_t>(rows, t.slots);
  } else {
    t.slot = kSortTile;
    t.slots = 1;
    t.tiles = CeilDivU<uint32_t>(n, kSortTile);
    t.units = rows * t.tiles;
  }
  // A unit is worth a core from ~16 KiB of input on.
  const ItemSplit sp = SplitItems(t.units, rows * n * 4, soc.vector_cores, 16 * 1024);
  t.units_per_core = sp.per_core;
  t.block_dim = sp.block_dim;
  return t;
}

SortTiling sort_merge_tiling(const SortTiling& first, uint32_t run, const SocInfo& soc) {
  SortTiling t = first;
  t.phase = 1;
  t.run = run;
  t.final_pass = uint64_t(run) * 4 >= first.n ? 1 : 0;
  const uint64_t runs = CeilDivU<uint64_t>(first.n, run);
  t.units = first.rows * CeilDivU<uint64_t>(runs, 4);
  const ItemSplit sp = SplitItems(t.units, t.units * uint64_t(run) * 32, soc.vector_cores, 64 * 1024);
  t.units_per_core = sp.per_core;
  t.block_dim = sp.block_dim;
  return t;
}

SortDigitTiling sort_digit_tiling(uint64_t n, bool wide, uint32_t digit, const SocInfo& soc) {
  SortDigitTiling t;
  t.n = n;
  t.wide = wide ? 1 : 0;
  t.digit = digit;
  const ItemSplit sp = SplitItems(CeilDivU<uint64_t>(n, kSortDigitChunk), n * (wide ? 8 : 4), soc.vector_cores,
                                  64 * 1024);
  t.per_core = sp.per_core * kSortDigitChunk;
  t.block_dim = sp.block_dim;
  return t;
}

}  // namespace npu_kernels

namespace {

using npu_kernels::EwDType;
using npu_kernels::kSortTile;
using npu_kernels::kSortWindow;
using npu_kernels::SortTiling;
using namespace nn_kernels;

constexpr uint32_t kFixWindow = 1024;  // elements per window of the NaN / +inf fix-up scan
constexpr float kInf = __builtin_inff();

__aicore__ inline uint32_t Align(uint32_t v, uint32_t a) { return (v + a - 1) / a * a; }

class SortKernel {
 public:
  __aicore__ inline void Init(GM_ADDR x, GM_ADDR values, GM_ADDR indices, GM_ADDR ws_in, GM_ADDR ws_out,
                              const SortTiling& t) {
    t_ = t;
    dt_ = EwDType(t.dtype);
    esz_ = dt_ == EwDType::F32 ? 4 : 2;
    const uint64_t total = t.rows * t.n;
    xGm_.SetGlobalBuffer(reinterpret_cast<__gm__ uint8_t*>(x), total * esz_);
    vGm_.SetGlobalBuffer(reinterpret_cast<__gm__ uint8_t*>(values), t.rows * t.limit * esz_);
    iGm_.SetGlobalBuffer(reinterpret_cast<__gm__ int64_t*>(indices), t.rows * t.limit);
    if (ws_in != nullptr) wsIn_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(ws_in), total * 2);
    if (ws_out != nullptr) wsOut_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(ws_out), total * 2);
    if (t.phase == 0) {
      const uint32_t T = t.slot * t.slots;
      pipe_.InitBuffer(raw_, T * 4);
      pipe_.InitBuffer(score_, T * 4);
      pipe_.InitBuffer(iota_, T * 4);
      pipe_.InitBuffer(pa_, T * 8);
      pipe_.InitBuffer(pb_, T * 8);
      pipe_.InitBuffer(bits_, T / 8 + 32);
      pipe_.InitBuffer(pad_, T / 8 + 32);
      pipe_.InitBuffer(vout_, T * 2);
      // iota_ = position within the slot; pad_ = 1 for the slot positions that hold the row.
      LocalTensor<int32_t> iota = iota_.Get<int32_t>();
      Iota(iota, t.slot);
      for (uint32_t len = t.slot; len < T; len *= 2) Adds(iota[len], iota, int32_t(0), int32_t(len));
      if (t.slots > 1 && t.n < t.slot) {
        LocalTensor<uint8_t> pad = pad_.Get<uint8_t>();
        SyncVToS();
        for (uint32_t b = 0; b < T / 8; ++b) {
          uint32_t v = 0;
          for (uint32_t k = 0; k < 8; ++k) v |= uint32_t((b * 8 + k) % t.slot < t.n) << k;
          pad.SetValue(b, uint8_t(v));
        }
      }
    } else {
      for (uint32_t q = 0; q < 4; ++q) pipe_.InitBuffer(win_[q], kSortWindow * 8);
      pipe_.InitBuffer(pa_, 4 * kSortWindow * 8);    // merged structures
      pipe_.InitBuffer(pb_, 4 * kSortWindow * 8);    // int64 indices of the final pass
      pipe_.InitBuffer(score_, 4 * kSortWindow * 4);
      pipe_.InitBuffer(raw_, 4 * kSortWindow * 4);   // uint32 indices of the final pass
      pipe_.InitBuffer(vout_, 4 * kSortWindow * 2);
    }
    pipe_.InitBuffer(fRaw_, kFixWindow * 4);
    pipe_.InitBuffer(fVal_, kFixWindow * 4);
    pipe_.InitBuffer(fBits_, kFixWindow / 8 + 32);
    pipe_.InitBuffer(fIota_, kFixWindow * 4);
    pipe_.InitBuffer(fSel_, kFixWindow * 4);
    pipe_.InitBuffer(fSel64_, kFixWindow * 8);
    pipe_.InitBuffer(fOut_, kFixWindow * 4);
    SyncVToS();
    Iota(fIota_.Get<int32_t>(), kFixWindow);
    SyncSToV();
  }

  __aicore__ inline void Process() {
    const CoreShare sh = ShareOfThisCore(t_.units, t_.units_per_core);
    for (uint64_t u = sh.begin; u < sh.end; ++u) {
      if (t_.phase == 1) MergeUnit(u);
      else if (t_.tiles == 1) Batch(u);
      else Tile(u);
    }
  }

 private:
  // ------------------------------------------------------------------ phase 0
  // Rows row0 .. row0 + nr - 1, one per slot, sorted and written out.
  __aicore__ inline void Batch(uint64_t b) {
    const uint64_t row0 = b * t_.slots;
    const uint32_t nr = uint32_t(t_.rows - row0 < t_.slots ? t_.rows - row0 : t_.slots);
    const uint32_t c = nr * t_.slot;
    Load(row0 * t_.n, nr, t_.n);
    Prepare(c, t_.slots > 1 ? nr : 1, t_.n);
    LocalTensor<float> sorted = SortSlots(iota_.Get<uint32_t>(), c);
    LocalTensor<float> other = sorted.GetPhyAddr() == pa_.Get<float>().GetPhyAddr() ? pb_.Get<float>() : pa_.Get<float>();
    // Values (un-negated scores) and int64 indices.
    LocalTensor<float> val = score_.Get<float>();
    LocalTensor<uint32_t> idx = raw_.Get<uint32_t>();
    Extract(val, idx, sorted, int32_t(c / 32));
    const uint32_t c64 = Align(c, 64);
    if (!t_.descending) Muls(val, val, -1.0f, int32_t(c64));
    LocalTensor<int64_t> idx64 = other.ReinterpretCast<int64_t>();
    Cast(idx64, idx.ReinterpretCast<int32_t>(), RoundMode::CAST_NONE, c);
    LocalTensor<uint8_t> vbytes = ToOutDtype(val, c64);
    SyncVToMte3();
    const uint32_t L = t_.limit;
    const uint32_t vs = (t_.slot * esz_ - Align(L * esz_, 32)) / 32;
    const uint32_t is = (t_.slot * 8 - Align(L * 8, 32)) / 32;
    DataCopyPad(vGm_[row0 * L * esz_], vbytes, DataCopyExtParams(uint16_t(nr), L * esz_, vs, 0, 0));
    DataCopyPad(iGm_[row0 * L], idx64, DataCopyExtParams(uint16_t(nr), L * 8, is, 0, 0));
    // A row whose output holds +inf (first for descending, last for ascending) may hold NaN too.
    SyncVToS();
    for (uint32_t r = 0; r < nr; ++r) {
      const float v = val.GetValue(r * t_.slot + (t_.descending ? 0 : L - 1));
      if (v == kInf) FixRow(row0 + r);
    }
    SyncMte3ToV();
    SyncMte3ToMte2();
  }

  // Tile `u % tiles` of row `u / tiles`: sorted into structures in the workspace.
  __aicore__ inline void Tile(uint64_t u) {
    const uint64_t row = u / t_.tiles;
    const uint32_t base = uint32_t(u % t_.tiles) * kSortTile;
    const uint32_t cnt = t_.n - base < kSortTile ? t_.n - base : kSortTile;
    Load(row * t_.n + base, 1, cnt);
    Prepare(kSortTile, 1, cnt);
    LocalTensor<int32_t> idx = raw_.Get<int32_t>();  // free once the scores are built
    Adds(idx, iota_.Get<int32_t>(), int32_t(base), int32_t(kSortTile));
    LocalTensor<float> sorted = SortSlots(idx.ReinterpretCast<uint32_t>(), kSortTile);
    SyncVToMte3();
    const uint32_t keep = cnt < t_.limit ? cnt : t_.limit;  // a run's first `limit` structures
    DataCopyPad(wsOut_[(row * t_.n + base) * 2], sorted, DataCopyExtParams(1, keep * 8, 0, 0, 0));
    SyncMte3ToV();
    SyncMte3ToMte2();
  }

  // nr rows of m elements from element `off` of x into the slots, as float scores in score_.
  __aicore__ inline void Load(uint64_t off, uint32_t nr, uint32_t m) {
    SyncVToMte2();
    SyncSToMte2();
    const uint32_t gap = (t_.slot * esz_ - Align(m * esz_, 32)) / 32;
    LocalTensor<uint8_t> dst = dt_ == EwDType::F32 ? score_.Get<uint8_t>() : raw_.Get<uint8_t>();
    DataCopyPad(dst, xGm_[off * esz_], DataCopyExtParams(uint16_t(nr), m * esz_, 0, gap, 0),
                DataCopyPadExtParams<uint8_t>(false, 0, 0, 0));
    SyncMte2ToV();
  }

  // Scores over c elements: widened, negated for ascending, NaN -> +inf (descending) / -inf, the slot
  // positions past the row's m elements -> -inf (`masked`: with the pad_ pattern; else the tail of a
  // single slot).
  __aicore__ inline void Prepare(uint32_t c, uint32_t masked, uint32_t m) {
    const uint32_t c64 = Align(c, 64);
    LocalTensor<float> s = score_.Get<float>();
    if (dt_ == EwDType::F16) Cast(s, raw_.Get<half>(), RoundMode::CAST_NONE, c64);
    else if (dt_ == EwDType::BF16) Cast(s, raw_.Get<bfloat16_t>(), RoundMode::CAST_NONE, c64);
    if (!t_.descending) Muls(s, s, -1.0f, int32_t(c64));
    LocalTensor<uint8_t> bits = bits_.Get<uint8_t>();
    Compare(bits, s, s, CMPMODE::EQ, c64);  // 0 where NaN
    Select(s, bits, s, t_.descending ? kInf : -kInf, SELMODE::VSEL_TENSOR_SCALAR_MODE, c64);
    if (m >= t_.slot) return;
    if (masked > 1) {
      Select(s, pad_.Get<uint8_t>(), s, -kInf, SELMODE::VSEL_TENSOR_SCALAR_MODE, c64);
    } else {
      const uint32_t m64 = Align(m, 64);
      if (m64 < c64) Duplicate(s[m64], -kInf, int32_t(c64 - m64));
      SyncVToS();
      for (uint32_t i = m; i < m64 && i < c; ++i) s.SetValue(i, -kInf);
      SyncSToV();
    }
  }

  // Sort32 then merge levels over c scores (slots of t_.slot); returns the buffer holding the result.
  __aicore__ inline LocalTensor<float> SortSlots(const LocalTensor<uint32_t>& idx, uint32_t c) {
    LocalTensor<float> src = pa_.Get<float>(), dst = pb_.Get<float>();
    Sort32(src, score_.Get<float>(), idx, int32_t(c / 32));
    uint32_t got[4];
    for (uint32_t L = 32; L < t_.slot;) {
      if (t_.slot / L >= 4) {
        const uint16_t cnt[4] = {uint16_t(L), uint16_t(L), uint16_t(L), uint16_t(L)};
        MrgSort<float>(dst, MrgSortSrcList<float>(src, src[2 * L], src[4 * L], src[6 * L]), cnt, got, 0b1111,
                       int32_t(c / (4 * L)));
        L *= 4;
      } else {
        const uint16_t cnt[4] = {uint16_t(L), uint16_t(L), 0, 0};
        for (uint32_t o = 0; o < c; o += 2 * L)
          MrgSort<float>(dst[2 * o], MrgSortSrcList<float>(src[2 * o], src[2 * o + 2 * L]), cnt, got, 0b11, 1);
        L *= 2;
      }
      LocalTensor<float> tmp = src;
      src = dst;
      dst = tmp;
    }
    return src;
  }

  // The float values in `val` (c64 elements) as the output dtype's bytes.
  __aicore__ inline LocalTensor<uint8_t> ToOutDtype(const LocalTensor<float>& val, uint32_t c64) {
    if (dt_ == EwDType::F32) return val.ReinterpretCast<uint8_t>();
    LocalTensor<uint8_t> o = vout_.Get<uint8_t>();
    if (dt_ == EwDType::F16) Cast(o.ReinterpretCast<half>(), val, RoundMode::CAST_NONE, c64);
    else Cast(o.ReinterpretCast<bfloat16_t>(), val, RoundMode::CAST_RINT, c64);
    return o;
  }

  // ------------------------------------------------------------------ phase 1
  // Merges runs 4g .. 4g + 3 of row u / groups (those that exist) from wsIn_.
  __aicore__ inline void MergeUnit(uint64_t u) {
    const uint64_t runs = (t_.n + t_.run - 1) / t_.run;
    const uint64_t groups = (runs + 3) / 4;
    const uint64_t row = u / groups, g = u % groups;
    const uint64_t rbase = row * t_.n;
    uint64_t pos[4], end[4];
    uint32_t nq = 0;
    for (uint32_t q = 0; q < 4; ++q) {
      const uint64_t s = (g * 4 + q) * t_.run;
      if (s >= t_.n) break;
      uint64_t len = s + t_.run < t_.n ? t_.run : t_.n - s;
      if (len > t_.limit) len = t_.limit;  // only the first `limit` of a run were kept
      pos[q] = s;
      end[q] = s + len;
      ++nq;
    }
    const uint64_t out0 = g * 4 * t_.run;  // output position within the row
    uint64_t out = out0;
    const uint64_t cap = out0 + t_.limit;  // this unit's last output position (exclusive)
    float first = 0.0f, last = 0.0f;
    bool any = false;
    LocalTensor<float> merged = pa_.Get<float>();
    while (nq >= 2 && out < cap) {
      uint16_t cnt[4] = {0, 0, 0, 0};
      SyncVToMte2();
      SyncSToMte2();
      SyncMte3ToMte2();
      for (uint32_t q = 0; q < nq; ++q) {
        const uint64_t left = end[q] - pos[q];
        cnt[q] = uint16_t(left < kSortWindow ? left : kSortWindow);
        DataCopyPad(win_[q].Get<float>(), wsIn_[(rbase + pos[q]) * 2], DataCopyExtParams(1, cnt[q] * 8u, 0, 0, 0),
                    DataCopyPadExtParams<float>(false, 0, 0, 0));
      }
      SyncMte2ToV();
      SyncMte3ToV();
      uint32_t taken[4];
      const uint16_t valid = nq == 2 ? 0b11 : nq == 3 ? 0b111 : 0b1111;
      MrgSort<float, true>(merged,
                           MrgSortSrcList<float>(win_[0].Get<float>(), win_[1].Get<float>(),
                                                 nq > 2 ? win_[2].Get<float>() : LocalTensor<float>(),
                                                 nq > 3 ? win_[3].Get<float>() : LocalTensor<float>()),
                           cnt, taken, valid, 1);
      uint32_t produced = 0;
      for (uint32_t q = 0; q < nq; ++q) produced += taken[q];
      if (out + produced > cap) produced = uint32_t(cap - out);
      Emit(merged, produced, row, out, first, last, any);
      out += produced;
      // Advance; drop the queues that are used up (keeping queue order, which keeps ties stable).
      uint32_t k = 0;
      for (uint32_t q = 0; q < nq; ++q) {
        pos[q] += taken[q];
        if (pos[q] < end[q]) {
          pos[k] = pos[q];
          end[k] = end[q];
          ++k;
        }
      }
      nq = k;
    }
    if (nq == 1) {  // the rest of one queue, in windows
      if (end[0] - pos[0] > cap - out) end[0] = pos[0] + (cap - out);
      while (pos[0] < end[0]) {
        const uint64_t left = end[0] - pos[0];
        const uint32_t n = uint32_t(left < 4 * kSortWindow ? left : 4 * kSortWindow);
        SyncVToMte2();
        SyncSToMte2();
        SyncMte3ToMte2();
        DataCopyPad(merged, wsIn_[(rbase + pos[0]) * 2], DataCopyExtParams(1, n * 8, 0, 0, 0),
                    DataCopyPadExtParams<float>(false, 0, 0, 0));
        SyncMte2ToV();
        SyncMte2ToS();
        Emit(merged, n, row, out, first, last, any);
        out += n;
        pos[0] += n;
      }
    }
    if (t_.final_pass && (t_.descending ? first : last) == kInf) FixRow(row);
    SyncMte3ToV();
    SyncMte3ToMte2();
  }

  // `n` merged structures to output position `out` of the row: structures (inner pass) or values and
  // indices (final pass; first / last track the first and last value written).
  __aicore__ inline void Emit(const LocalTensor<float>& merged, uint32_t n, uint64_t row, uint64_t out, float& first,
                              float& last, bool& any) {
    if (n == 0) return;
    const uint64_t rbase = row * t_.n;
    if (!t_.final_pass) {
      SyncVToMte3();
      DataCopyPad(wsOut_[(rbase + out) * 2], merged, DataCopyExtParams(1, n * 8, 0, 0, 0));
      return;
    }
    const uint32_t n32 = Align(n, 32), n64 = Align(n, 64);
    LocalTensor<float> val = score_.Get<float>();
    LocalTensor<uint32_t> idx = raw_.Get<uint32_t>();
    SyncMte3ToV();
    Extract(val, idx, merged, int32_t(n32 / 32));
    if (!t_.descending) Muls(val, val, -1.0f, int32_t(n64));
    LocalTensor<int64_t> idx64 = pb_.Get<int64_t>();
    Cast(idx64, idx.ReinterpretCast<int32_t>(), RoundMode::CAST_NONE, n);
    LocalTensor<uint8_t> vbytes = ToOutDtype(val, n64);
    SyncVToS();
    if (!any) first = val.GetValue(0);
    last = val.GetValue(n - 1);
    any = true;
    SyncVToMte3();
    const uint64_t obase = row * t_.limit;
    DataCopyPad(vGm_[(obase + out) * esz_], vbytes, DataCopyExtParams(1, n * esz_, 0, 0, 0));
    DataCopyPad(iGm_[obase + out], idx64, DataCopyExtParams(1, n * 8, 0, 0, 0));
  }

  // ------------------------------------------------------------------ NaN / +inf fix-up
  // The row's output holds its NaN and +inf entries as one block of +inf values (first for descending,
  // last for ascending) in index order; rewrite that block in the true order from a scan of the row:
  // NaN then +inf for descending, +inf then NaN for ascending, each in index order.
  __aicore__ inline void FixRow(uint64_t row) {
    SyncMte3ToMte2();
    if (t_.descending) {
      const uint64_t p = Sweep(row, true, 0, true);
      Sweep(row, false, p, true);
    } else {
      const uint64_t nans = Sweep(row, true, 0, false), infs = Sweep(row, false, 0, false);
      const uint64_t start = t_.n - nans - infs;
      Sweep(row, false, start, true);
      Sweep(row, true, start + infs, true);
    }
  }

  // The row's NaN (nan) or +inf entries in index order: counted, and written from output position `pos`
  // when `write` (those that land before `limit`); returns pos + their count.
  __aicore__ inline uint64_t Sweep(uint64_t row, bool nan, uint64_t pos, bool write) {
    const uint64_t rbase = row * t_.n, obase = row * t_.limit;
    LocalTensor<float> w = fVal_.Get<float>();
    LocalTensor<uint8_t> bits = fBits_.Get<uint8_t>();
    LocalTensor<int32_t> sel = fSel_.Get<int32_t>();
    for (uint32_t w0 = 0; w0 < t_.n; w0 += kFixWindow) {
      const uint32_t cnt = t_.n - w0 < kFixWindow ? t_.n - w0 : kFixWindow;
      SyncVToMte2();
      SyncMte3ToMte2();
      LocalTensor<uint8_t> in = dt_ == EwDType::F32 ? w.ReinterpretCast<uint8_t>() : fRaw_.Get<uint8_t>();
      DataCopyPad(in, xGm_[(rbase + w0) * esz_], DataCopyExtParams(1, cnt * esz_, 0, 0, 0),
                  DataCopyPadExtParams<uint8_t>(false, 0, 0, 0));
      SyncMte2ToV();
      SyncMte3ToV();
      const uint32_t c64 = Align(cnt, 64);
      if (dt_ == EwDType::F16) Cast(w, fRaw_.Get<half>(), RoundMode::CAST_NONE, c64);
      else if (dt_ == EwDType::BF16) Cast(w, fRaw_.Get<bfloat16_t>(), RoundMode::CAST_NONE, c64);
      if (nan) Compare(bits, w, w, CMPMODE::NE, c64);
      else CompareScalar(bits, w, kInf, CMPMODE::EQ, c64);
      uint64_t kept = 0;
      GatherMask(sel, fIota_.Get<int32_t>(), bits.ReinterpretCast<uint32_t>(), true, cnt, GatherMaskParams(1, 1, 0, 0),
                 kept);
      if (kept == 0 || !write || pos >= t_.limit) {
        pos += kept;
        continue;
      }
      const uint32_t wn = uint32_t(pos + kept <= t_.limit ? kept : t_.limit - pos);  // entries to write
      LocalTensor<float> v = fOut_.Get<float>();
      uint64_t kv = 0;
      GatherMask(v, w, bits.ReinterpretCast<uint32_t>(), true, cnt, GatherMaskParams(1, 1, 0, 0), kv);
      Adds(sel, sel, int32_t(w0), int32_t(kept));
      LocalTensor<int64_t> s64 = fSel64_.Get<int64_t>();
      Cast(s64, sel, RoundMode::CAST_NONE, uint32_t(kept));
      LocalTensor<uint8_t> vb = v.ReinterpretCast<uint8_t>();
      if (dt_ != EwDType::F32) {
        LocalTensor<uint8_t> h = fRaw_.Get<uint8_t>();
        const uint32_t k64 = Align(uint32_t(kept), 64);
        if (dt_ == EwDType::F16) Cast(h.ReinterpretCast<half>(), v, RoundMode::CAST_NONE, k64);
        else Cast(h.ReinterpretCast<bfloat16_t>(), v, RoundMode::CAST_RINT, k64);
        vb = h;
      }
      SyncVToMte3();
      DataCopyPad(iGm_[obase + pos], s64, DataCopyExtParams(1, wn * 8, 0, 0, 0));
      DataCopyPad(vGm_[(obase + pos) * esz_], vb, DataCopyExtParams(1, wn * esz_, 0, 0, 0));
      pos += kept;
    }
    return pos;
  }

  __aicore__ inline void SyncMte3ToMte2() { SyncPipes<HardEvent::MTE3_MTE2>(); }

  SortTiling t_{};
  EwDType dt_ = EwDType::F32;
  uint32_t esz_ = 4;
  TPipe pipe_;
  TBuf<TPosition::VECCALC> raw_, score_, iota_, pa_, pb_, bits_, pad_, vout_, win_[4];
  TBuf<TPosition::VECCALC> fRaw_, fVal_, fBits_, fIota_, fSel_, fSel64_, fOut_;
  GlobalTensor<uint8_t> xGm_, vGm_;
  GlobalTensor<int64_t> iGm_;
  GlobalTensor<float> wsIn_, wsOut_;
};

// Digit `digit` of each integer as a float (see sort.h): the element's 32-bit word holding it (int64:
// the low or high word, picked out of the interleaved pair with GatherMask), shifted, widened.
class SortDigitKernel {
 public:
  __aicore__ inline void Init(GM_ADDR x, GM_ADDR out, const npu_kernels::SortDigitTiling& t) {
    t_ = t;
    const uint32_t words = t.wide ? 2 : 1;
    xGm_.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t*>(x), t.n * words);
    oGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(out), t.n);
    pipe_.InitBuffer(in_, kChunk * 4 * words);
    pipe_.InitBuffer(word_, kChunk * 4);
    pipe_.InitBuffer(val_, kChunk * 4);
    if (t.wide) {  // every other word: the low words (digits 0, 1) or the high words (2, 3)
      pipe_.InitBuffer(pat_, kChunk / 4);
      LocalTensor<uint32_t> pat = pat_.Get<uint32_t>();
      const uint32_t bits = t.digit < 2 ? 0x55555555u : 0xAAAAAAAAu;
      for (uint32_t i = 0; i < kChunk / 16; ++i) pat.SetValue(i, bits);
    }
  }

  __aicore__ inline void Process() {
    const CoreShare sh = ShareOfThisCore(t_.n, t_.per_core);
    const uint64_t b0 = sh.begin, b1 = sh.end;
    const uint32_t words = t_.wide ? 2 : 1;
    const bool top = t_.digit == (t_.wide ? 3u : 1u), high = t_.digit % 2 == 1;
    for (uint64_t base = b0; base < b1; base += kChunk) {
      const uint32_t cnt = uint32_t(b1 - base < kChunk ? b1 - base : kChunk);
      const uint32_t c64 = (cnt + 63) / 64 * 64;
      SyncVToMte2();
      SyncMte3ToMte2();
      LocalTensor<int32_t> in = in_.Get<int32_t>();
      DataCopyPad(in, xGm_[base * words], DataCopyExtParams(1, cnt * 4 * words, 0, 0, 0),
                  DataCopyPadExtParams<int32_t>(false, 0, 0, 0));
      SyncMte2ToV();
      SyncSToV();
      LocalTensor<int32_t> w = in;
      if (t_.wide) {
        uint64_t kept = 0;
        w = word_.Get<int32_t>();
        GatherMask(w, in, pat_.Get<uint32_t>(), true, cnt * 2, GatherMaskParams(1, 1, 0, 0), kept);
      }
      LocalTensor<int32_t> d = val_.Get<int32_t>();
      LocalTensor<uint32_t> du = d.ReinterpretCast<uint32_t>();
      if (top) {
        ShiftRight(d, w, int32_t(16), int32_t(c64));  // arithmetic: the signed top digit
      } else if (high) {
        ShiftRight(du, w.ReinterpretCast<uint32_t>(), uint32_t(16), int32_t(c64));
      } else {
        ShiftLeft(du, w.ReinterpretCast<uint32_t>(), uint32_t(16), int32_t(c64));
        ShiftRight(du, du, uint32_t(16), int32_t(c64));
      }
      LocalTensor<float> f = d.ReinterpretCast<float>();
      Cast(f, d, RoundMode::CAST_NONE, c64);  // |digit| < 2^16: exact
      SyncVToMte3();
      DataCopyPad(oGm_[base], f, DataCopyExtParams(1, cnt * 4, 0, 0, 0));
    }
  }

 private:
  static constexpr uint32_t kChunk = npu_kernels::kSortDigitChunk;
  __aicore__ inline void SyncMte3ToMte2() { SyncPipes<HardEvent::MTE3_MTE2>(); }
  npu_kernels::SortDigitTiling t_{};
  TPipe pipe_;
  TBuf<TPosition::VECCALC> in_, word_, val_, pat_;
  GlobalTensor<int32_t> xGm_;
  GlobalTensor<float> oGm_;
};

}  // namespace

extern "C" __global__ __aicore__ void sort_digit_kernel(GM_ADDR x, GM_ADDR out, GM_ADDR tiling) {
  GET_TILING_DATA_WITH_STRUCT(npu_kernels::SortDigitTiling, t, tiling);
  SortDigitKernel op;
  op.Init(x, out, t);
  op.Process();
}

extern "C" __global__ __aicore__ void sort_kernel(GM_ADDR x, GM_ADDR values, GM_ADDR indices, GM_ADDR ws_in,
                                                  GM_ADDR ws_out, GM_ADDR tiling) {
  GET_TILING_DATA_WITH_STRUCT(SortTiling, t, tiling);
  SortKernel op;
  op.Init(x, values, indices, ws_in, ws_out, t);
  op.Process();
}
