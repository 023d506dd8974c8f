// Bucketing a 1-D index by destination window on the vector cores (see index_bucket.h).
#include "index_bucket.h"

#include <type_traits>

#include "kernel_operator.h"
#include "norm_util.h"

using namespace AscendC;

namespace npu_kernels {

IndexBucketTiling index_bucket_tiling(uint64_t J, uint64_t D, uint32_t shift, bool idx64, const SocInfo& soc) {
  IndexBucketTiling t;
  t.J = J;
  t.D = D;
  t.shift = shift;
  t.idx64 = idx64 ? 1 : 0;
  const uint64_t W = D == 0 ? 1 : ((D - 1) >> shift) + 1;
  if (W > IndexBucketTiling::kMaxWindows || J >= (uint64_t(1) << 32) || (uint64_t(1) << shift) >= (uint64_t(1) << 32)) {
    t.W = 0;
    return t;
  }
  t.W = uint32_t(W);
  // The place kernel's UB: the index chunk, a window per position, the stage (a chunk of pairs plus up
  // to 3 pad pairs per window touched), four words per window. The largest chunk that fits, <= 8192.
  const uint64_t isz = idx64 ? 8 : 4, budget = soc.ub_bytes - 8192;
  t.chunk = 8192;
  auto need = [&](uint64_t c) { return c * (isz + 4 + 8) + 3 * (c < W ? c : W) * 8 + 64 + 4 * AlignUp<uint64_t>(W * 4, 32); };
  while (t.chunk > 256 && need(t.chunk) > budget) t.chunk /= 2;
  // Ranges of whole chunks, about 16K positions per block at least.
  const ItemSplit sp = SplitItems(CeilDivU<uint64_t>(J, t.chunk), J * 8, soc.vector_cores, 128 * 1024);
  t.per_block = sp.per_core * t.chunk;
  t.block_dim = sp.block_dim;
  const uint64_t words32 = 8;  // uint32 words per 32 B
  t.starts_at = AlignUp<uint64_t>(uint64_t(t.block_dim) * W, words32);
  t.pairs_at = t.starts_at + AlignUp<uint64_t>(W + 1, words32);
  t.bad_at = AlignUp<uint64_t>(t.pairs_at + 2 * J, words32);
  t.ws_words = t.bad_at + 4 * uint64_t(t.block_dim);
  return t;
}

}  // namespace npu_kernels

namespace {

using npu_kernels::IndexBucketTiling;
using namespace nn_kernels;

// The index chunk [c, c + n) into UB (int32 or int64), once the previous one is read.
template <typename I>
__aicore__ inline void LoadChunk(const LocalTensor<I>& buf, const GlobalTensor<I>& gm, uint64_t c, uint32_t n) {
  SyncSToMte2();
  CopyRun(buf, gm, c, n);
  SyncMte2ToS();
}

// Counts per window of this block's positions; an index outside [0, D) is left out of the counts (so
// the later kernels stay consistent) and the first one is recorded for the scan kernel to report.
template <typename I>
class BucketCount {
 public:
  __aicore__ inline void Init(GM_ADDR index, GM_ADDR ws, const IndexBucketTiling& t) {
    t_ = t;
    iGm_.SetGlobalBuffer(reinterpret_cast<__gm__ I*>(index), t.J);
    wsGm_.SetGlobalBuffer(reinterpret_cast<__gm__ uint32_t*>(ws), t.ws_words);
    pipe_.InitBuffer(hist_, npu_kernels::AlignUp<uint64_t>(uint64_t(t.W) * 4, 32));
    pipe_.InitBuffer(idx_, uint64_t(t.chunk) * sizeof(I));
    pipe_.InitBuffer(bad_, 32);
  }

  __aicore__ inline void Process() {
    const CoreShare r = ShareOfThisCore(t_.J, t_.per_block);
    LocalTensor<int32_t> hist = hist_.Get<int32_t>();
    LocalTensor<I> idx = idx_.Get<I>();
    Duplicate(hist, int32_t(0), int32_t(t_.W));
    SyncVToS();
    int64_t bad = 0;
    uint64_t bad_at = r.end;
    const uint64_t D = t_.D;
    const uint32_t shift = t_.shift;
    for (uint64_t c = r.begin; c < r.end; c += t_.chunk) {
      const uint32_t n = uint32_t(r.end - c < t_.chunk ? r.end - c : t_.chunk);
      LoadChunk(idx, iGm_, c, n);
      for (uint32_t k = 0; k < n; ++k) {
        const int64_t i = int64_t(idx.GetValue(k));
        if (i < 0 || uint64_t(i) >= D) {
          if (bad_at == r.end) bad = i, bad_at = c + k;
          continue;
        }
        const uint32_t w = uint32_t(uint64_t(i) >> shift);
        hist.SetValue(w, hist.GetValue(w) + 1);
      }
    }
    LocalTensor<int64_t> rec = bad_.Get<int64_t>();
    rec.SetValue(0, bad_at == r.end ? int64_t(-1) : int64_t(bad_at));
    rec.SetValue(1, bad);
    SyncSToMte3();
    DataCopyPad(wsGm_[uint64_t(GetBlockIdx()) * t_.W], hist.ReinterpretCast<uint32_t>(),
                DataCopyExtParams(1, t_.W * 4, 0, 0, 0));
    DataCopyPad(wsGm_[t_.bad_at + 4 * uint64_t(GetBlockIdx())], rec.ReinterpretCast<uint32_t>(),
                DataCopyExtParams(1, 16, 0, 0, 0));
  }

 private:
  IndexBucketTiling t_{};
  TPipe pipe_;
  TBuf<TPosition::VECCALC> hist_, idx_, bad_;
  GlobalTensor<I> iGm_;
  GlobalTensor<uint32_t> wsGm_;
};

// One block: counts [blocks][W] -> each block's first slot per window (window-major, then block order),
// and the windows' starts [W + 1]. Columns of windows at a time.
class BucketScan {
 public:
  static constexpr uint32_t kCols = 512;

  __aicore__ inline void Init(GM_ADDR ws, const IndexBucketTiling& t) {
    t_ = t;
    wsGm_.SetGlobalBuffer(reinterpret_cast<__gm__ uint32_t*>(ws), t.ws_words);
    pipe_.InitBuffer(buf_, uint64_t(t.block_dim) * kCols * 4);
    pipe_.InitBuffer(starts_, kCols * 4 + 32);
  }

  __aicore__ inline void Process() {
    const uint32_t B = t_.block_dim, W = t_.W;
    LocalTensor<uint32_t> buf = buf_.Get<uint32_t>(), starts = starts_.Get<uint32_t>();
    uint32_t running = 0;
    for (uint32_t w0 = 0; w0 < W; w0 += kCols) {
      const uint32_t wn = W - w0 < kCols ? W - w0 : kCols;
      const uint32_t pitch = npu_kernels::AlignUp<uint32_t>(wn, 8);  // DataCopyPad lands rows 32 B-aligned
      SyncPipes<HardEvent::MTE3_MTE2>();  // the previous columns have left UB
      DataCopyPad(buf, wsGm_[w0], DataCopyExtParams(uint16_t(B), wn * 4, (W - wn) * 4, 0, 0),
                  DataCopyPadExtParams<uint32_t>(false, 0, 0, 0));
      SyncMte2ToS();
      SyncPipes<HardEvent::MTE3_S>();
      for (uint32_t w = 0; w < wn; ++w) {
        starts.SetValue(w, running);
        for (uint32_t b = 0; b < B; ++b) {
          const uint32_t v = buf.GetValue(b * pitch + w);
          buf.SetValue(b * pitch + w, running);
          running += v;
        }
      }
      SyncSToMte3();
      DataCopyPad(wsGm_[w0], buf, DataCopyExtParams(uint16_t(B), wn * 4, 0, (W - wn) * 4, 0));
      DataCopyPad(wsGm_[t_.starts_at + w0], starts, DataCopyExtParams(1, wn * 4, 0, 0, 0));
    }
    SyncPipes<HardEvent::MTE3_S>();
    starts.SetValue(0, running);  // starts[W]: the valid positions in all
    SyncSToMte3();
    DataCopyPad(wsGm_[t_.starts_at + W], starts, DataCopyExtParams(1, 4, 0, 0, 0));
    if (t_.bad_at == 0) return;
    // The first bad index (the lowest block that met one: the lowest position), now that every later
    // kernel has what it reads.
    LocalTensor<int64_t> rec = buf.ReinterpretCast<int64_t>();
    SyncPipes<HardEvent::MTE3_MTE2>();
    DataCopyPad(buf, wsGm_[t_.bad_at], DataCopyExtParams(1, B * 16, 0, 0, 0), DataCopyPadExtParams<uint32_t>(false, 0, 0, 0));
    SyncMte2ToS();
    for (uint32_t b = 0; b < B; ++b) {
      const int64_t at = rec.GetValue(2 * b);
      ascendc_assert(at < 0, "index %lld is out of bounds for dimension with size %llu (at position %lld of index)",
                     (long long)rec.GetValue(2 * b + 1), (unsigned long long)t_.D, (long long)at);
    }
  }

 private:
  IndexBucketTiling t_{};
  TPipe pipe_;
  TBuf<TPosition::VECCALC> buf_, starts_;
  GlobalTensor<uint32_t> wsGm_;
};

// Each block writes its positions' (offset in window, position) pairs to its slots: per chunk a local
// counting sort in UB (each window's run starts 32 B-aligned), then one DMA per window touched.
// P: the payload's element type (void: the position).
template <typename I, typename P>
class BucketPlace {
 public:
  __aicore__ inline void Init(GM_ADDR index, GM_ADDR src, GM_ADDR ws, const IndexBucketTiling& t) {
    t_ = t;
    iGm_.SetGlobalBuffer(reinterpret_cast<__gm__ I*>(index), t.J);
    wsGm_.SetGlobalBuffer(reinterpret_cast<__gm__ uint32_t*>(ws), t.ws_words);
    if constexpr (!std::is_void_v<P>)
      srcGm_.SetGlobalBuffer(reinterpret_cast<__gm__ P*>(src), t.J ? (t.J - 1) * t.src_stride + 1 : 0);
    const uint64_t wbytes = npu_kernels::AlignUp<uint64_t>(uint64_t(t.W) * 4, 32);
    pipe_.InitBuffer(cursor_, wbytes);
    pipe_.InitBuffer(count_, wbytes);
    pipe_.InitBuffer(fill_, wbytes);
    const uint32_t touched = t.W < t.chunk ? t.W : t.chunk;
    pipe_.InitBuffer(touched_, npu_kernels::AlignUp<uint64_t>(uint64_t(touched) * 4, 32));
    pipe_.InitBuffer(idx_, uint64_t(t.chunk) * sizeof(I));
    pipe_.InitBuffer(win_, uint64_t(t.chunk) * 4);
    pipe_.InitBuffer(stage_, (uint64_t(t.chunk) + 3 * uint64_t(touched) + 4) * 8);
  }

  __aicore__ inline void Process() {
    const CoreShare r = ShareOfThisCore(t_.J, t_.per_block);
    if (r.begin >= r.end) return;
    LocalTensor<uint32_t> cursor = cursor_.Get<uint32_t>(), count = count_.Get<uint32_t>(), fill = fill_.Get<uint32_t>(),
                          touched = touched_.Get<uint32_t>(), win = win_.Get<uint32_t>(), stage = stage_.Get<uint32_t>();
    LocalTensor<I> idx = idx_.Get<I>();
    DataCopyPad(cursor, wsGm_[uint64_t(GetBlockIdx()) * t_.W], DataCopyExtParams(1, t_.W * 4, 0, 0, 0),
                DataCopyPadExtParams<uint32_t>(false, 0, 0, 0));
    Duplicate(count.ReinterpretCast<int32_t>(), int32_t(0), int32_t(t_.W));
    SyncMte2ToS();
    SyncVToS();
    const uint64_t D = t_.D;
    const uint32_t shift = t_.shift, W = t_.W, mask = (uint32_t(1) << shift) - 1;
    for (uint64_t c = r.begin; c < r.end; c += t_.chunk) {
      const uint32_t n = uint32_t(r.end - c < t_.chunk ? r.end - c : t_.chunk);
      LoadChunk(idx, iGm_, c, n);
      uint32_t nt = 0;
      for (uint32_t k = 0; k < n; ++k) {
        const int64_t i = int64_t(idx.GetValue(k));
        uint32_t w = W;  // left out (the count kernel reports it)
        if (i >= 0 && uint64_t(i) < D) {
          w = uint32_t(uint64_t(i) >> shift);
          const uint32_t m = count.GetValue(w);
          if (m == 0) touched.SetValue(nt++, w);
          count.SetValue(w, m + 1);
        }
        win.SetValue(k, w);
      }
      uint32_t pos = 0;
      for (uint32_t s = 0; s < nt; ++s) {
        const uint32_t w = touched.GetValue(s);
        fill.SetValue(w, pos);
        pos += npu_kernels::AlignUp<uint32_t>(count.GetValue(w), 4);  // 4 pairs: 32 B
      }
      SyncPipes<HardEvent::MTE3_S>();  // the previous chunk's runs have left the stage
      for (uint32_t k = 0; k < n; ++k) {
        const uint32_t w = win.GetValue(k);
        if (w == W) continue;
        const uint32_t p = fill.GetValue(w);
        fill.SetValue(w, p + 1);
        stage.SetValue(2 * p, uint32_t(idx.GetValue(k)) & mask);
        if constexpr (std::is_void_v<P>) stage.SetValue(2 * p + 1, uint32_t(c + k));
        else stage.SetValue(2 * p + 1, uint32_t(srcGm_.GetValue((c + k) * t_.src_stride)));
      }
      SyncSToMte3();
      for (uint32_t s = 0; s < nt; ++s) {
        const uint32_t w = touched.GetValue(s), m = count.GetValue(w), from = fill.GetValue(w) - m, at = cursor.GetValue(w);
        DataCopyPad(wsGm_[t_.pairs_at + 2 * uint64_t(at)], stage[2 * from], DataCopyExtParams(1, m * 8, 0, 0, 0));
        cursor.SetValue(w, at + m);
        count.SetValue(w, 0);
      }
    }
  }

 private:
  using SrcT = std::conditional_t<std::is_void_v<P>, uint32_t, P>;
  IndexBucketTiling t_{};
  TPipe pipe_;
  TBuf<TPosition::VECCALC> cursor_, count_, fill_, touched_, idx_, win_, stage_;
  GlobalTensor<I> iGm_;
  GlobalTensor<SrcT> srcGm_;
  GlobalTensor<uint32_t> wsGm_;
};

template <typename I>
__aicore__ inline void RunPlaceFor(GM_ADDR index, GM_ADDR src, GM_ADDR ws, const IndexBucketTiling& t) {
  switch (t.payload) {
    case 4: return RunOp<BucketPlace<I, uint32_t>>(t, index, src, ws);
    case 2: return RunOp<BucketPlace<I, uint16_t>>(t, index, src, ws);
    case 1: return RunOp<BucketPlace<I, uint8_t>>(t, index, src, ws);
    default: return RunOp<BucketPlace<I, void>>(t, index, src, ws);
  }
}

}  // namespace

extern "C" __global__ __aicore__ void index_bucket_count_kernel(GM_ADDR index, GM_ADDR ws, GM_ADDR tiling) {
  GET_TILING_DATA_WITH_STRUCT(IndexBucketTiling, t, tiling);
  if (t.idx64) RunOp<BucketCount<int64_t>>(t, index, ws);
  else RunOp<BucketCount<int32_t>>(t, index, ws);
}

extern "C" __global__ __aicore__ void index_bucket_scan_kernel(GM_ADDR ws, GM_ADDR tiling) {
  GET_TILING_DATA_WITH_STRUCT(IndexBucketTiling, t, tiling);
  RunOp<BucketScan>(t, ws);
}

extern "C" __global__ __aicore__ void index_bucket_place_kernel(GM_ADDR index, GM_ADDR src, GM_ADDR ws,
                                                                GM_ADDR tiling) {
  GET_TILING_DATA_WITH_STRUCT(IndexBucketTiling, t, tiling);
  if (t.idx64) RunPlaceFor<int64_t>(index, src, ws, t);
  else RunPlaceFor<int32_t>(index, src, ws, t);
}
