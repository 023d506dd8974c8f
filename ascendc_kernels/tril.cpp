// tril / triu on the vector cores (see tril.h).
#include "tril.h"

#include "kernel_operator.h"

using namespace AscendC;

namespace npu_kernels {

TrilTiling tril_tiling(uint64_t batch, uint64_t R, uint64_t C, int64_t k, uint32_t elem_bytes, bool upper,
                       bool in_place, const SocInfo& soc) {
  TrilTiling t;
  t.rows = batch * R;
  t.R = R;
  t.C = C;
  t.k = k;
  t.elem_bytes = elem_bytes;
  t.upper = upper ? 1 : 0;
  t.in_place = in_place ? 1 : 0;
  uint64_t chunk = AlignUp<uint64_t>(C * elem_bytes ? C * elem_bytes : 32, 32);
  const uint64_t cap = AlignDown<uint64_t>((soc.ub_bytes - 8192) / 3, 32);
  if (chunk > cap) chunk = cap;
  t.chunk = uint32_t(chunk);
  const ItemSplit sp = SplitItems(t.rows, t.rows * C * elem_bytes, soc.vector_cores, 16 * 1024);
  t.rows_per_core = sp.per_core;
  t.block_dim = sp.block_dim;
  return t;
}

}  // namespace npu_kernels

namespace {

using npu_kernels::TrilTiling;

class TrilKernel {
 public:
  __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, const TrilTiling& t) {
    t_ = t;
    const uint64_t bytes = t.rows * t.C * t.elem_bytes;
    xGm_.SetGlobalBuffer(reinterpret_cast<__gm__ uint8_t*>(x), bytes);
    yGm_.SetGlobalBuffer(reinterpret_cast<__gm__ uint8_t*>(y), bytes);
    pipe_.InitBuffer(rowQ_, 2, t.chunk);
    pipe_.InitBuffer(zero_, t.chunk);
    Duplicate(zero_.Get<int16_t>(), int16_t(0), int32_t(t.chunk / 2));
    SetFlag<HardEvent::V_MTE3>(0);
    WaitFlag<HardEvent::V_MTE3>(0);
  }

  __aicore__ inline void Process() {
    const uint64_t r0 = uint64_t(GetBlockIdx()) * t_.rows_per_core;
    uint64_t r1 = r0 + t_.rows_per_core;
    if (r1 > t_.rows) r1 = t_.rows;
    const int64_t C = int64_t(t_.C);
    for (uint64_t row = r0; row < r1; ++row) {
      const int64_t r = int64_t(row % t_.R);
      // Kept columns: tril [0, r + k + 1), triu [r + k, C).
      int64_t lo = t_.upper ? r + t_.k : 0;
      int64_t hi = t_.upper ? C : r + t_.k + 1;
      lo = lo < 0 ? 0 : (lo > C ? C : lo);
      hi = hi < 0 ? 0 : (hi > C ? C : hi);
      if (lo > hi) lo = hi;
      const uint64_t base = row * t_.C * t_.elem_bytes;
      const uint64_t eb = t_.elem_bytes;
      if (!t_.in_place) Move(base + uint64_t(lo) * eb, uint64_t(hi - lo) * eb);
      Zero(base, uint64_t(lo) * eb);
      Zero(base + uint64_t(hi) * eb, uint64_t(C - hi) * eb);
    }
  }

 private:
  __aicore__ inline void Move(uint64_t off, uint64_t bytes) {
    for (uint64_t o = 0; o < bytes; o += t_.chunk) {
      const uint32_t n = uint32_t(bytes - o < t_.chunk ? bytes - o : t_.chunk);
      LocalTensor<uint8_t> b = rowQ_.AllocTensor<uint8_t>();
      DataCopyPad(b, xGm_[off + o], DataCopyExtParams(1, n, 0, 0, 0), DataCopyPadExtParams<uint8_t>(false, 0, 0, 0));
      rowQ_.EnQue(b);
      b = rowQ_.DeQue<uint8_t>();
      DataCopyPad(yGm_[off + o], b, DataCopyExtParams(1, n, 0, 0, 0));
      rowQ_.FreeTensor(b);
    }
  }
  __aicore__ inline void Zero(uint64_t off, uint64_t bytes) {
    for (uint64_t o = 0; o < bytes; o += t_.chunk) {
      const uint32_t n = uint32_t(bytes - o < t_.chunk ? bytes - o : t_.chunk);
      DataCopyPad(yGm_[off + o], zero_.Get<uint8_t>(), DataCopyExtParams(1, n, 0, 0, 0));
    }
  }

  TrilTiling t_{};
  TPipe pipe_;
  TQueBind<TPosition::VECIN, TPosition::VECOUT, 2> rowQ_;
  TBuf<TPosition::VECCALC> zero_;
  GlobalTensor<uint8_t> xGm_, yGm_;
};

}  // namespace

extern "C" __global__ __aicore__ void tril_kernel(GM_ADDR x, GM_ADDR y, GM_ADDR tiling) {
  GET_TILING_DATA_WITH_STRUCT(TrilTiling, t, tiling);
  TrilKernel op;
  op.Init(x, y, t);
  op.Process();
}
