// ReLU in Ascend C: the classic double-buffered pipeline. Each core takes a contiguous,
// block-aligned range of the flat tensor; tiles move GM -> VECIN (DataCopy, and DataCopyPad for a
// tail that is not a multiple of 32 B), compute in UB, and move VECOUT -> GM. NaN stays NaN as in
// PyTorch (Relu would map it to 0), so relu is a Select of x where !(x < 0) and 0 elsewhere: one
// CompareScalar, a Not of the (1 bit per element) mask, one Select.
#include "activation.h"

#include <limits>
#include <type_traits>

#include "elementwise_copy.h"
#include "kernel_operator.h"

using namespace AscendC;

namespace npu_kernels {

UnaryTiling unary_tiling(uint64_t total, uint32_t elem_bytes, const SocInfo& soc) {
  UnaryTiling t{};
  t.total = total;
  t.no_pad = soc.npu_arch == 2002 ? 1 : 0;
  // At least 16 KiB of data per core: small tensors use few cores (a core launch has a cost).
  const CoreSplit split = SplitAcrossCores(total, elem_bytes, soc.vector_cores, 16 * 1024 / elem_bytes);
  t.block_dim = split.block_dim;
  t.per_core = split.per_core;
  // UB budget: 2 in + 2 out tiles of the dtype, one float work tile for 16-bit types, a NaN mask
  // (1 bit per element) and the 8 KB Select reserves. Tiles are whole 256-byte compare units of half.
  const uint32_t bytes_per_elem = 4 * elem_bytes + (elem_bytes == 2 ? 4 : 0);
  uint32_t tile = AlignDown<uint32_t>((soc.ub_bytes - 9 * 1024) * 8 / (8 * bytes_per_elem + 1), kRepeatBytes / 2);
  const uint64_t host = HostCacheTile(8 * bytes_per_elem + 1, kRepeatBytes / 2);
  if (tile > host) tile = static_cast<uint32_t>(host);
  const uint64_t need = AlignUp<uint64_t>(t.per_core, kRepeatBytes / 2);
  if (need < tile) tile = static_cast<uint32_t>(need);
  t.tile = tile == 0 ? kBlockBytes / elem_bytes : tile;
  return t;
}

}  // namespace npu_kernels

namespace {

constexpr int32_t kBufferNum = 2;

template <typename T>
class ReluKernel {
 public:
  __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, const npu_kernels::UnaryTiling& t) {
    const uint64_t start = t.per_core * GetBlockIdx();
    count_ = start >= t.total ? 0 : (t.total - start < t.per_core ? t.total - start : t.per_core);
    tile_ = t.tile;
    no_pad_ = t.no_pad;
    xGm_.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(x) + start, count_);
    yGm_.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(y) + start, count_);
    pipe_.InitBuffer(inQ_, kBufferNum, tile_ * sizeof(T));
    pipe_.InitBuffer(outQ_, kBufferNum, tile_ * sizeof(T));
    if constexpr (sizeof(T) == 2) pipe_.InitBuffer(work_, tile_ * sizeof(float));
    pipe_.InitBuffer(bits_, tile_ / 8);
  }

  __aicore__ inline void Process() {
    for (uint64_t off = 0; off < count_; off += tile_) {
      const uint32_t n = static_cast<uint32_t>(count_ - off < tile_ ? count_ - off : tile_);
      CopyIn(off, n);
      Compute(n);
      CopyOut(off, n);
    }
  }

 private:
  __aicore__ inline void CopyIn(uint64_t off, uint32_t n) {
    LocalTensor<T> x = inQ_.template AllocTensor<T>();
    npu_kernels::EwCopyIn(x, xGm_[off], n, no_pad_ == 0);
    inQ_.EnQue(x);
  }
  __aicore__ inline void Compute(uint32_t n) {
    LocalTensor<T> x = inQ_.template DeQue<T>();
    LocalTensor<T> y = outQ_.template AllocTensor<T>();
    const uint32_t m = npu_kernels::AlignUp<uint32_t>(n, 128);  // Compare works on 256-byte units
    const LocalTensor<uint8_t> bits = bits_.template Get<uint8_t>();
    if constexpr (std::is_same_v<T, bfloat16_t>) {
      // The vector unit has no bf16 arithmetic: widen, compute in float, round back.
      LocalTensor<float> w = work_.template Get<float>();
      Cast(w, x, RoundMode::CAST_NONE, m);
      KeepMask(bits, w, m);
      Select(w, bits, w, 0.0f, SELMODE::VSEL_TENSOR_SCALAR_MODE, m);
      Cast(y, w, RoundMode::CAST_RINT, m);
    } else {
      KeepMask(bits, x, m);
      Select(y, bits, x, static_cast<T>(0.0f), SELMODE::VSEL_TENSOR_SCALAR_MODE, m);
    }
    outQ_.EnQue(y);
    inQ_.FreeTensor(x);
  }
  // bits = !(v < 0): the lanes relu keeps (positives, zeros of either sign and NaN, as on CPU).
  template <typename F>
  __aicore__ inline void KeepMask(const LocalTensor<uint8_t>& bits, const LocalTensor<F>& v, uint32_t m) {
    CompareScalar(bits, v, static_cast<F>(0.0f), CMPMODE::LT, m);
    const LocalTensor<uint16_t> words = bits.template ReinterpretCast<uint16_t>();
    Not(words, words, static_cast<int32_t>(m / 16));
  }
  __aicore__ inline void CopyOut(uint64_t off, uint32_t n) {
    LocalTensor<T> y = outQ_.template DeQue<T>();
    npu_kernels::EwCopyOut(yGm_[off], y, n, no_pad_ == 0);
    outQ_.FreeTensor(y);
  }

  TPipe pipe_;
  TQue<TPosition::VECIN, 1> inQ_;
  TQue<TPosition::VECOUT, 1> outQ_;
  TBuf<TPosition::VECCALC> work_, bits_;
  GlobalTensor<T> xGm_, yGm_;
  uint64_t count_ = 0;
  uint32_t tile_ = 0;
  uint32_t no_pad_ = 0;
};

template <typename T>
__aicore__ inline void RunRelu(GM_ADDR x, GM_ADDR y, GM_ADDR tiling) {
  GET_TILING_DATA_WITH_STRUCT(npu_kernels::UnaryTiling, t, tiling);
  ReluKernel<T> op;
  op.Init(x, y, t);
  op.Process();
}

}  // namespace

extern "C" __global__ __aicore__ void relu_kernel_float(GM_ADDR x, GM_ADDR y, GM_ADDR tiling) {
  RunRelu<float>(x, y, tiling);
}
extern "C" __global__ __aicore__ void relu_kernel_half(GM_ADDR x, GM_ADDR y, GM_ADDR tiling) {
  RunRelu<half>(x, y, tiling);
}
extern "C" __global__ __aicore__ void relu_kernel_bf16(GM_ADDR x, GM_ADDR y, GM_ADDR tiling) {
  RunRelu<bfloat16_t>(x, y, tiling);
}
