// index_select on the vector cores (see index_select.h).
#include "index_select.h"

#include <algorithm>

#include "kernel_operator.h"
#include "index_reader.h"
#include "norm_util.h"

using namespace AscendC;

namespace npu_kernels {

IndexSelectTiling index_select_tiling(uint64_t outer, uint64_t dim_size, uint64_t inner_bytes, uint64_t n_idx,
                                      bool idx64, const SocInfo& soc, bool gather) {
  IndexSelectTiling t;
  t.outer = outer;
  t.dim_size = dim_size;
  t.inner_bytes = inner_bytes;
  t.n_idx = n_idx;
  t.idx64 = idx64 ? 1 : 0;
  t.rows = outer * n_idx;
  // Two row buffers (double buffering) and one index chunk.
  t.idx_chunk = 2048;
  const uint64_t budget = soc.ub_bytes - 8192 - uint64_t(t.idx_chunk) * 8;
  uint64_t chunk = AlignUp<uint64_t>(inner_bytes ? inner_bytes : 32, 32);
  if (chunk > budget / 2) chunk = AlignDown<uint64_t>(budget / 2, 32);
  t.chunk = uint32_t(chunk);
  if (inner_bytes > 0 && inner_bytes <= 4096) {
    const uint64_t pitch = AlignUp<uint64_t>(inner_bytes, 32);
    uint64_t batch = budget / pitch;
    if (batch > 256) batch = 256;
    if (batch >= 2) t.batch = uint32_t(batch), t.batch_pitch = uint32_t(pitch);
  }
  const ItemSplit sp = SplitItems(t.rows, t.rows * (inner_bytes ? inner_bytes : 1), soc.vector_cores, 16 * 1024);
  t.rows_per_core = sp.per_core;
  t.block_dim = sp.block_dim;
  const bool short_rows = inner_bytes <= 64 || (inner_bytes <= kGatherMaxInner && dim_size <= 4 * n_idx);
  if (gather && inner_bytes > 0 && short_rows && inner_bytes % 2 == 0 && n_idx > 0) {
    // UB per slice of a work item: its [D][inner] table (32 B pitch), its compact output [n][inner]
    // and its share of the offset table (one uint32 per output lane); as many slices per item as fit
    // (up to 64), at least one.
    const uint32_t lane = inner_bytes % 4 == 0 ? 4 : 2;
    const uint64_t lanes = n_idx * (inner_bytes / lane);
    const uint64_t lanes_pad = AlignUp<uint64_t>(lanes, 32 / lane);  // a slice's output row: 32 B aligned
    const uint64_t pitch = AlignUp<uint64_t>(dim_size * inner_bytes, 32);
    const uint64_t per_slice = pitch + lanes_pad * lane + lanes_pad * 4;
    const uint64_t room = soc.ub_bytes - 8192 - uint64_t(t.idx_chunk) * 8;
    if (per_slice <= room && pitch * 64 < (uint64_t(1) << 32)) {
      uint64_t slices = room / per_slice;
      if (slices > 64) slices = 64;
      if (slices > outer) slices = outer;
      t.gather = 1;
      t.lane_bytes = lane;
      t.table_pitch = uint32_t(pitch);
      t.slices = uint32_t(slices);
      t.items = CeilDivU<uint64_t>(outer, slices);
      // Each core builds the offset table (a scalar step per index and lane, ~10x a gathered lane)
      // before its first item: a core takes at least 32 tables' worth of gathered lanes, so the build
      // stays a small share of its time.
      const uint64_t min_bytes = std::max<uint64_t>(16 * 1024, 32 * lanes * lane);
      const ItemSplit gs = SplitItems(t.items, outer * n_idx * inner_bytes, soc.vector_cores, min_bytes);
      t.items_per_core = gs.per_core;
      t.block_dim = gs.block_dim;
    }
  }
  return t;
}

}  // namespace npu_kernels

namespace {

using npu_kernels::IndexSelectTiling;

// PUT = false: index_select, y[o, k, :] = x[o, index[k], :]. PUT = true: the reverse move of index_put_
// (x is the values [outer, n, inner], y the tensor written in place): y[o, index[k], :] = x[o, k, :].
template <bool PUT>
class IndexSelectKernel {
 public:
  __aicore__ inline void Init(GM_ADDR x, GM_ADDR index, GM_ADDR y, const IndexSelectTiling& t) {
    t_ = t;
    const uint64_t table = t.outer * t.dim_size * t.inner_bytes, rows = t.rows * t.inner_bytes;
    xGm_.SetGlobalBuffer(reinterpret_cast<__gm__ uint8_t*>(x), PUT ? rows : table);
    yGm_.SetGlobalBuffer(reinterpret_cast<__gm__ uint8_t*>(y), PUT ? table : rows);
    if (!PUT && t.gather) {
      const uint32_t lanes = uint32_t(t.n_idx * (t.inner_bytes / t.lane_bytes));
      const uint32_t lanes_pad = npu_kernels::AlignUp<uint32_t>(lanes, 32 / t.lane_bytes);
      pipe_.InitBuffer(offsets_, t.slices * lanes_pad * 4);
      pipe_.InitBuffer(tables_, t.slices * t.table_pitch);
      pipe_.InitBuffer(outs_, t.slices * lanes_pad * t.lane_bytes);
    } else if (t.batch) {
      pipe_.InitBuffer(batch_, uint64_t(t.batch) * t.batch_pitch);
    } else {
      pipe_.InitBuffer(rowQ_, 2, t.chunk);
    }
    index_.Init(pipe_, index, t.n_idx, t.idx64 != 0, t.idx_chunk);
  }

  __aicore__ inline void Process() {
    if constexpr (!PUT) {
      if (t_.gather) return ProcessGather();
    }
    const uint64_t r0 = uint64_t(GetBlockIdx()) * t_.rows_per_core;
    uint64_t r1 = r0 + t_.rows_per_core;
    if (r1 > t_.rows) r1 = t_.rows;
    if (t_.batch) return ProcessBatches(r0, r1);
    for (uint64_t r = r0; r < r1; ++r) {
      const uint64_t o = r / t_.n_idx, k = r % t_.n_idx;
      const int64_t i = index_(k);
      ascendc_assert(i >= 0 && i < int64_t(t_.dim_size), "index %lld is out of range for dimension size %llu (at position %llu of index)",
                     (long long)i, (unsigned long long)t_.dim_size, (unsigned long long)k);
      const uint64_t at = (o * t_.dim_size + uint64_t(i)) * t_.inner_bytes;
      const uint64_t src = PUT ? r * t_.inner_bytes : at;
      const uint64_t dst = PUT ? at : r * t_.inner_bytes;
      for (uint64_t off = 0; off < t_.inner_bytes; off += t_.chunk) {
        const uint32_t n = uint32_t(t_.inner_bytes - off < t_.chunk ? t_.inner_bytes - off : t_.chunk);
        LocalTensor<uint8_t> b = rowQ_.AllocTensor<uint8_t>();
        DataCopyPad(b, xGm_[src + off], DataCopyExtParams(1, n, 0, 0, 0), DataCopyPadExtParams<uint8_t>(false, 0, 0, 0));
        rowQ_.EnQue(b);
        b = rowQ_.DeQue<uint8_t>();
        DataCopyPad(yGm_[dst + off], b, DataCopyExtParams(1, n, 0, 0, 0));
        rowQ_.FreeTensor(b);
      }
    }
  }

 private:
  // Index k's row of slice o, checked.
  __aicore__ inline uint64_t TableRow(uint64_t r) {
    const uint64_t o = r / t_.n_idx, k = r % t_.n_idx;
    const int64_t i = index_(k);
    ascendc_assert(i >= 0 && i < int64_t(t_.dim_size), "index %lld is out of range for dimension size %llu (at position %llu of index)",
                   (long long)i, (unsigned long long)t_.dim_size, (unsigned long long)k);
    return (o * t_.dim_size + uint64_t(i)) * t_.inner_bytes;
  }

  // Rows [r0, r1) `batch` at a time (see index_select.h): the side with consecutive rows moves the batch
  // with one DataCopyPad.
  __aicore__ inline void ProcessBatches(uint64_t r0, uint64_t r1) {
    LocalTensor<uint8_t> b = batch_.Get<uint8_t>();
    const uint32_t len = uint32_t(t_.inner_bytes), pitch = t_.batch_pitch;
    for (uint64_t g = r0; g < r1; g += t_.batch) {
      const uint32_t m = uint32_t(r1 - g < t_.batch ? r1 - g : t_.batch);
      const DataCopyExtParams all(uint16_t(m), len, 0, 0, 0);  // m consecutive rows, 32 B-aligned in UB
      nn_kernels::SyncPipes<HardEvent::MTE3_MTE2>();  // the previous batch has left UB
      if constexpr (PUT) {
        DataCopyPad(b, xGm_[g * len], all, DataCopyPadExtParams<uint8_t>(false, 0, 0, 0));
        nn_kernels::SyncPipes<HardEvent::MTE2_MTE3>();
        for (uint32_t k = 0; k < m; ++k)
          DataCopyPad(yGm_[TableRow(g + k)], b[k * pitch], DataCopyExtParams(1, len, 0, 0, 0));
      } else {
        for (uint32_t k = 0; k < m; ++k)
          DataCopyPad(b[k * pitch], xGm_[TableRow(g + k)], DataCopyExtParams(1, len, 0, 0, 0),
                      DataCopyPadExtParams<uint8_t>(false, 0, 0, 0));
        nn_kernels::SyncPipes<HardEvent::MTE2_MTE3>();
        DataCopyPad(yGm_[g * len], b, all);
      }
    }
  }

  // The gather path (see index_select.h).
  __aicore__ inline void ProcessGather() {
    const uint64_t i0 = uint64_t(GetBlockIdx()) * t_.items_per_core;
    uint64_t i1 = i0 + t_.items_per_core;
    if (i1 > t_.items) i1 = t_.items;
    if (i0 >= i1) return;
    // Offsets: output lane (s, k, l) reads byte index[k] * inner_bytes + l * lane_bytes of slice s's
    // table (s * table_pitch); each slice's lanes are padded to a 32 B output row (the padding reads
    // offset 0), so one Gather moves a whole item into [slices][lanes_pad].
    const uint32_t per = uint32_t(t_.inner_bytes / t_.lane_bytes), lanes = uint32_t(t_.n_idx) * per;
    const uint32_t lanes_pad = npu_kernels::AlignUp<uint32_t>(lanes, 32 / t_.lane_bytes);
    LocalTensor<uint32_t> off = offsets_.Get<uint32_t>();
    for (uint64_t k = 0; k < t_.n_idx; ++k) {
      const int64_t i = index_(k);
      ascendc_assert(i >= 0 && i < int64_t(t_.dim_size), "index %lld is out of range for dimension size %llu (at position %llu of index)",
                     (long long)i, (unsigned long long)t_.dim_size, (unsigned long long)k);
      const uint32_t base = uint32_t(uint64_t(i) * t_.inner_bytes);
      for (uint32_t l = 0; l < per; ++l) off.SetValue(uint32_t(k) * per + l, base + l * t_.lane_bytes);
    }
    for (uint32_t j = lanes; j < lanes_pad; ++j) off.SetValue(j, 0u);
    nn_kernels::SyncSToV();
    LocalTensor<int32_t> offi = off.ReinterpretCast<int32_t>();
    for (uint32_t s = 1; s < t_.slices; ++s)
      Adds(offi[s * lanes_pad], offi, int32_t(s * t_.table_pitch), int32_t(lanes_pad));
    const uint32_t table_bytes = uint32_t(t_.dim_size * t_.inner_bytes), out_bytes = uint32_t(t_.n_idx * t_.inner_bytes);
    LocalTensor<uint8_t> tables = tables_.Get<uint8_t>(), outs = outs_.Get<uint8_t>();
    for (uint64_t it = i0; it < i1; ++it) {
      const uint64_t o0 = it * t_.slices;
      const uint32_t ns = uint32_t(t_.outer - o0 < t_.slices ? t_.outer - o0 : t_.slices);
      nn_kernels::SyncVToMte2();  // the previous item's tables are read
      DataCopyPad(tables, xGm_[o0 * table_bytes],
                  DataCopyExtParams(uint16_t(ns), table_bytes, 0, (t_.table_pitch - npu_kernels::AlignUp<uint32_t>(table_bytes, 32)) / 32, 0),
                  DataCopyPadExtParams<uint8_t>(false, 0, 0, 0));
      nn_kernels::SyncMte2ToV();
      nn_kernels::SyncMte3ToV();  // the previous item's outputs have left
      if (t_.lane_bytes == 4)
        Gather(outs.ReinterpretCast<uint32_t>(), tables.ReinterpretCast<uint32_t>(), off, 0u, ns * lanes_pad);
      else
        Gather(outs.ReinterpretCast<uint16_t>(), tables.ReinterpretCast<uint16_t>(), off, 0u, ns * lanes_pad);
      nn_kernels::SyncVToMte3();
      DataCopyPad(yGm_[o0 * out_bytes], outs, DataCopyExtParams(uint16_t(ns), out_bytes, 0, 0, 0));
    }
  }

  IndexSelectTiling t_{};
  TPipe pipe_;
  TQueBind<TPosition::VECIN, TPosition::VECOUT, 2> rowQ_;
  TBuf<TPosition::VECCALC> offsets_, tables_, outs_, batch_;
  nn_kernels::IndexReader index_;
  GlobalTensor<uint8_t> xGm_, yGm_;
};

}  // namespace

extern "C" __global__ __aicore__ void index_select_kernel(GM_ADDR x, GM_ADDR index, GM_ADDR y, GM_ADDR tiling) {
  GET_TILING_DATA_WITH_STRUCT(IndexSelectTiling, t, tiling);
  IndexSelectKernel<false> op;
  op.Init(x, index, y, t);
  op.Process();
}

extern "C" __global__ __aicore__ void index_put_kernel(GM_ADDR values, GM_ADDR index, GM_ADDR self, GM_ADDR tiling) {
  GET_TILING_DATA_WITH_STRUCT(IndexSelectTiling, t, tiling);
  IndexSelectKernel<true> op;
  op.Init(values, index, self, t);
  op.Process();
}
