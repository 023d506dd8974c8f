// embedding dense backward on the vector cores (see embedding_backward.h).
#include "embedding_backward.h"

#include <type_traits>

#include "kernel_operator.h"
#include "index_reader.h"
#include "norm_util.h"

using namespace AscendC;

namespace npu_kernels {

EmbeddingBackwardTiling embedding_backward_tiling(uint64_t n, uint64_t dim, uint64_t num_weights, int64_t padding_idx,
                                                  bool idx64, uint32_t elem_bytes, const SocInfo& soc) {
  EmbeddingBackwardTiling t;
  t.n = n;
  t.dim = dim;
  t.num_weights = num_weights;
  t.padding_idx = padding_idx;
  t.idx64 = idx64 ? 1 : 0;
  t.elem_bytes = elem_bytes;
  t.idx_chunk = 2048;
  // UB: two float rows (accumulator, grad), two dtype rows, the index chunk.
  const uint64_t budget = soc.ub_bytes - 8192 - uint64_t(t.idx_chunk) * 8;
  uint64_t chunk = AlignUp<uint64_t>(dim ? dim : 1, 64);
  const uint64_t cap = AlignDown<uint64_t>(budget / (8 + 2 * elem_bytes), 64);
  if (chunk > cap) chunk = cap;
  t.chunk = uint32_t(chunk);
  uint64_t cores = num_weights < uint64_t(soc.vector_cores) ? num_weights : uint64_t(soc.vector_cores);
  if (cores < 1) cores = 1;
  t.rows_per_core = CeilDivU<uint64_t>(num_weights ? num_weights : 1, cores);
  t.block_dim = uint32_t(CeilDivU<uint64_t>(num_weights ? num_weights : 1, t.rows_per_core));
  return t;
}

}  // namespace npu_kernels

namespace {

using npu_kernels::EmbeddingBackwardTiling;
using namespace nn_kernels;

template <typename T>
class EmbeddingBackwardKernel {
 public:
  __aicore__ inline void Init(GM_ADDR grad, GM_ADDR index, GM_ADDR out, const EmbeddingBackwardTiling& t) {
    t_ = t;
    gGm_.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(grad), t.n * t.dim);
    oGm_.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(out), t.num_weights * t.dim);
    pipe_.InitBuffer(acc_, t.chunk * 4);
    pipe_.InitBuffer(gf_, t.chunk * 4);
    pipe_.InitBuffer(row_, t.chunk * sizeof(T));
    pipe_.InitBuffer(zero_, t.chunk * sizeof(T));
    index_.Init(pipe_, index, t.n, t.idx64 != 0, t.idx_chunk);
    if constexpr (sizeof(T) == 2) Duplicate(zero_.Get<int16_t>(), int16_t(0), int32_t(t.chunk));
    else Duplicate(zero_.Get<float>(), 0.0f, int32_t(t.chunk));
    SyncVToMte3();
  }

  __aicore__ inline void Process() {
    const uint64_t w0 = uint64_t(GetBlockIdx()) * t_.rows_per_core;
    uint64_t w1 = w0 + t_.rows_per_core;
    if (w1 > t_.num_weights) w1 = t_.num_weights;
    if (w0 >= w1) return;
    // Zero the owned rows.
    for (uint64_t w = w0; w < w1; ++w)
      for (uint64_t c = 0; c < t_.dim; c += t_.chunk) {
        const uint32_t len = uint32_t(t_.dim - c < t_.chunk ? t_.dim - c : t_.chunk);
        DataCopyPad(oGm_[w * t_.dim + c], zero_.Get<T>(), DataCopyExtParams(1, len * uint32_t(sizeof(T)), 0, 0, 0));
      }
    for (uint64_t k = 0; k < t_.n; ++k) {
      const int64_t i = index_(k);
      ascendc_assert(i >= 0 && i < int64_t(t_.num_weights),
                     "index %lld is out of range for %llu embeddings (at position %llu of indices)", (long long)i,
                     (unsigned long long)t_.num_weights, (unsigned long long)k);
      if (uint64_t(i) < w0 || uint64_t(i) >= w1 || i == t_.padding_idx) continue;
      for (uint64_t c = 0; c < t_.dim; c += t_.chunk) AddRow(uint64_t(i) * t_.dim + c, k * t_.dim + c,
                                                             uint32_t(t_.dim - c < t_.chunk ? t_.dim - c : t_.chunk));
    }
  }

 private:
  // out[dst : dst + len] += grad[src : src + len]
  __aicore__ inline void AddRow(uint64_t dst, uint64_t src, uint32_t len) {
    const uint32_t len64 = (len + 63) / 64 * 64;
    LocalTensor<float> acc = acc_.Get<float>(), gf = gf_.Get<float>();
    LocalTensor<T> row = row_.Get<T>();
    SyncVToMte2();
    SyncMte3ToMte2();
    const DataCopyExtParams p(1, len * uint32_t(sizeof(T)), 0, 0, 0);
    if constexpr (std::is_same_v<T, float>) {
      DataCopyPad(acc, oGm_[dst], p, DataCopyPadExtParams<T>(false, 0, 0, T(0)));
      DataCopyPad(gf, gGm_[src], p, DataCopyPadExtParams<T>(false, 0, 0, T(0)));
      SyncMte2ToV();
      Add(acc, acc, gf, int32_t(len64));
      SyncVToMte3();
      DataCopyPad(oGm_[dst], acc, p);
    } else {
      DataCopyPad(row, oGm_[dst], p, DataCopyPadExtParams<T>(false, 0, 0, T(0)));
      SyncMte2ToV();
      Cast(acc, row, RoundMode::CAST_NONE, len64);
      SyncVToMte2();
      DataCopyPad(row, gGm_[src], p, DataCopyPadExtParams<T>(false, 0, 0, T(0)));
      SyncMte2ToV();
      Cast(gf, row, RoundMode::CAST_NONE, len64);
      Add(acc, acc, gf, int32_t(len64));
      Cast(row, acc, RoundMode::CAST_RINT, len64);
      SyncVToMte3();
      DataCopyPad(oGm_[dst], row, p);
    }
  }
  __aicore__ inline void SyncMte3ToMte2() { SyncPipes<HardEvent::MTE3_MTE2>(); }

  EmbeddingBackwardTiling t_{};
  TPipe pipe_;
  TBuf<TPosition::VECCALC> acc_, gf_, row_, zero_;
  nn_kernels::IndexReader index_;
  GlobalTensor<T> gGm_, oGm_;
};

template <typename T>
__aicore__ inline void RunEmbeddingBackward(GM_ADDR grad, GM_ADDR index, GM_ADDR out, GM_ADDR tiling) {
  GET_TILING_DATA_WITH_STRUCT(EmbeddingBackwardTiling, t, tiling);
  EmbeddingBackwardKernel<T> op;
  op.Init(grad, index, out, t);
  op.Process();
}

}  // namespace

extern "C" __global__ __aicore__ void embedding_backward_kernel_float(GM_ADDR g, GM_ADDR i, GM_ADDR o, GM_ADDR t) {
  RunEmbeddingBackward<float>(g, i, o, t);
}
extern "C" __global__ __aicore__ void embedding_backward_kernel_half(GM_ADDR g, GM_ADDR i, GM_ADDR o, GM_ADDR t) {
  RunEmbeddingBackward<half>(g, i, o, t);
}
extern "C" __global__ __aicore__ void embedding_backward_kernel_bf16(GM_ADDR g, GM_ADDR i, GM_ADDR o, GM_ADDR t) {
  RunEmbeddingBackward<bfloat16_t>(g, i, o, t);
}
