// index_select on the vector cores (see index_select.h).
#include "index_select.h"

#include "kernel_operator.h"
#include "norm_util.h"

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
  // A launch is not free: at least ~16 KB of rows per core.
  const uint64_t total = t.rows * (inner_bytes ? inner_bytes : 1);
  uint64_t cores = total / (16 * 1024);
  if (cores < 1) cores = 1;
  if (cores > uint64_t(soc.vector_cores)) cores = uint64_t(soc.vector_cores);
  if (cores > t.rows) cores = t.rows ? t.rows : 1;
  t.rows_per_core = CeilDivU<uint64_t>(t.rows ? t.rows : 1, cores);
  t.block_dim = uint32_t(CeilDivU<uint64_t>(t.rows ? t.rows : 1, t.rows_per_core));
  return t;
}

}  // namespace npu_kernels

namespace {

using npu_kernels::IndexSelectTiling;

class IndexSelectKernel {
 public:
  __aicore__ inline void Init(GM_ADDR x, GM_ADDR index, GM_ADDR y, const IndexSelectTiling& t) {
    t_ = t;
    xGm_.SetGlobalBuffer(reinterpret_cast<__gm__ uint8_t*>(x), t.outer * t.dim_size * t.inner_bytes);
    yGm_.SetGlobalBuffer(reinterpret_cast<__gm__ uint8_t*>(y), t.rows * t.inner_bytes);
    i32Gm_.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t*>(index), t.n_idx);
    i64Gm_.SetGlobalBuffer(reinterpret_cast<__gm__ int64_t*>(index), t.n_idx);
    pipe_.InitBuffer(rowQ_, 2, t.chunk);
    pipe_.InitBuffer(idx_, t.idx_chunk * 8);
  }

  __aicore__ inline void Process() {
    const uint64_t r0 = uint64_t(GetBlockIdx()) * t_.rows_per_core;
    uint64_t r1 = r0 + t_.rows_per_core;
    if (r1 > t_.rows) r1 = t_.rows;
    for (uint64_t r = r0; r < r1; ++r) {
      const uint64_t o = r / t_.n_idx, k = r % t_.n_idx;
      const int64_t i = Index(k);
      ascendc_assert(i >= 0 && i < int64_t(t_.dim_size), "index %lld is out of range for dimension size %llu (at position %llu of index)",
                     (long long)i, (unsigned long long)t_.dim_size, (unsigned long long)k);
      const uint64_t src = (o * t_.dim_size + uint64_t(i)) * t_.inner_bytes;
      const uint64_t dst = r * t_.inner_bytes;
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
  // index[k], from a chunk of indices loaded into UB (reloaded when k leaves it).
  __aicore__ inline int64_t Index(uint64_t k) {
    if (!have_ || k < k0_ || k >= k0_ + t_.idx_chunk) {
      k0_ = k;
      const uint64_t cnt = t_.n_idx - k < t_.idx_chunk ? t_.n_idx - k : t_.idx_chunk;
      nn_kernels::SyncSToMte2();
      if (t_.idx64)
        DataCopyPad(idx_.Get<int64_t>(), i64Gm_[k], DataCopyExtParams(1, uint32_t(cnt * 8), 0, 0, 0),
                    DataCopyPadExtParams<int64_t>(false, 0, 0, 0));
      else
        DataCopyPad(idx_.Get<int32_t>(), i32Gm_[k], DataCopyExtParams(1, uint32_t(cnt * 4), 0, 0, 0),
                    DataCopyPadExtParams<int32_t>(false, 0, 0, 0));
      nn_kernels::SyncMte2ToS();
      have_ = true;
    }
    return t_.idx64 ? idx_.Get<int64_t>().GetValue(uint32_t(k - k0_)) : int64_t(idx_.Get<int32_t>().GetValue(uint32_t(k - k0_)));
  }

  IndexSelectTiling t_{};
  TPipe pipe_;
  TQueBind<TPosition::VECIN, TPosition::VECOUT, 2> rowQ_;
  TBuf<TPosition::VECCALC> idx_;
  GlobalTensor<uint8_t> xGm_, yGm_;
  GlobalTensor<int32_t> i32Gm_;
  GlobalTensor<int64_t> i64Gm_;
  uint64_t k0_ = 0;
  bool have_ = false;
};

}  // namespace

extern "C" __global__ __aicore__ void index_select_kernel(GM_ADDR x, GM_ADDR index, GM_ADDR y, GM_ADDR tiling) {
  GET_TILING_DATA_WITH_STRUCT(IndexSelectTiling, t, tiling);
  IndexSelectKernel op;
  op.Init(x, index, y, t);
  op.Process();
}
