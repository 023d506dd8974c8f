// index_select on the vector cores (see index_select.h).
#include "index_select.h"

#include "kernel_operator.h"
#include "index_reader.h"

using namespace AscendC;

namespace npu_kernels {

IndexSelectTiling index_select_tiling(uint64_t outer, uint64_t dim_size, uint64_t inner_bytes, uint64_t n_idx,
                                      bool idx64, const SocInfo& soc) {
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
  const ItemSplit sp = SplitItems(t.rows, t.rows * (inner_bytes ? inner_bytes : 1), soc.vector_cores, 16 * 1024);
  t.rows_per_core = sp.per_core;
  t.block_dim = sp.block_dim;
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
    pipe_.InitBuffer(rowQ_, 2, t.chunk);
    index_.Init(pipe_, index, t.n_idx, t.idx64 != 0, t.idx_chunk);
  }

  __aicore__ inline void Process() {
    const uint64_t r0 = uint64_t(GetBlockIdx()) * t_.rows_per_core;
    uint64_t r1 = r0 + t_.rows_per_core;
    if (r1 > t_.rows) r1 = t_.rows;
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
  IndexSelectTiling t_{};
  TPipe pipe_;
  TQueBind<TPosition::VECIN, TPosition::VECOUT, 2> rowQ_;
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
