// Nonzero positions of a byte mask on the vector cores (see nonzero.h).
#include "nonzero.h"

#include "kernel_operator.h"
#include "norm_util.h"

using namespace AscendC;

namespace npu_kernels {

NonzeroTiling nonzero_tiling(uint64_t n, const SocInfo& soc) {
  NonzeroTiling t;
  t.n = n;
  t.chunk = 8192;
  uint64_t cores = CeilDivU<uint64_t>(n, uint64_t(8) * t.chunk);  // >= 64 KiB of mask per core
  if (cores > uint64_t(soc.vector_cores)) cores = uint64_t(soc.vector_cores);
  if (cores < 1) cores = 1;
  t.per_core = AlignUp<uint64_t>(CeilDivU<uint64_t>(n ? n : 1, cores), t.chunk);
  t.block_dim = uint32_t(CeilDivU<uint64_t>(n ? n : 1, t.per_core));
  return t;
}

}  // namespace npu_kernels

namespace {

using npu_kernels::NonzeroTiling;

class NonzeroKernel {
 public:
  __aicore__ inline void Init(GM_ADDR mask, GM_ADDR counts, GM_ADDR out, const NonzeroTiling& t) {
    t_ = t;
    maskGm_.SetGlobalBuffer(reinterpret_cast<__gm__ uint8_t*>(mask), t.n);
    countsGm_.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t*>(counts), t.block_dim);
    outGm_.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t*>(out), t.n);
    pipe_.InitBuffer(inQ_, 2, t.chunk);
    pipe_.InitBuffer(outQ_, 2, t.chunk * 4);
    pipe_.InitBuffer(half_, t.chunk * 2);
    pipe_.InitBuffer(bits_, t.chunk / 8);
    pipe_.InitBuffer(iota_, t.chunk * 4);
    pipe_.InitBuffer(one_, 32);
    // iota = 0, 1, ..., chunk - 1: 64 scalar writes, then doubling with Adds.
    LocalTensor<int32_t> iota = iota_.Get<int32_t>();
    for (int32_t i = 0; i < 64; ++i) iota.SetValue(uint32_t(i), i);
    nn_kernels::SyncSToV();
    for (uint32_t len = 64; len < t.chunk; len *= 2) Adds(iota[len], iota, int32_t(len), int32_t(len));
  }

  __aicore__ inline void Process() {
    const uint64_t begin = uint64_t(GetBlockIdx()) * t_.per_core;
    uint64_t end = begin + t_.per_core;
    if (end > t_.n) end = t_.n;
    uint64_t slot = 0;  // mode 1: this core's next output position
    if (t_.mode == 1) {  // the counts of the cores before this one (written by the count pass)
      DataCacheCleanAndInvalid<int32_t, CacheLine::ENTIRE_DATA_CACHE>(countsGm_);
      for (uint32_t b = 0; b < uint32_t(GetBlockIdx()); ++b) slot += uint64_t(countsGm_.GetValue(b));
    }
    uint64_t total = 0;
    for (uint64_t base = begin; base < end; base += t_.chunk) {
      const uint32_t cnt = uint32_t(end - base < t_.chunk ? end - base : t_.chunk);
      const uint32_t padded = (cnt + 255) / 256 * 256;  // whole 256 B repeats of the half data
      LocalTensor<uint8_t> m = inQ_.AllocTensor<uint8_t>();
      if (padded != cnt) {
        Duplicate(m.ReinterpretCast<int16_t>(), int16_t(0), int32_t(padded / 2));
        nn_kernels::SyncVToMte2();
      }
      DataCopyPad(m, maskGm_[base], DataCopyExtParams(1, cnt, 0, 0, 0), DataCopyPadExtParams<uint8_t>(false, 0, 0, 0));
      inQ_.EnQue(m);
      m = inQ_.DeQue<uint8_t>();
      LocalTensor<half> h = half_.Get<half>();
      LocalTensor<uint8_t> bits = bits_.Get<uint8_t>();
      Cast(h, m, RoundMode::CAST_NONE, padded);
      inQ_.FreeTensor(m);
      CompareScalar(bits, h, half(0), CMPMODE::NE, padded);
      LocalTensor<int32_t> sel = outQ_.AllocTensor<int32_t>();
      uint64_t kept = 0;
      GatherMask(sel, iota_.Get<int32_t>(), bits.ReinterpretCast<uint32_t>(), true, cnt, GatherMaskParams(1, 1, 0, 0),
                 kept);
      total += kept;
      if (t_.mode == 1 && kept > 0) {
        Adds(sel, sel, int32_t(base), int32_t(kept));
        outQ_.EnQue(sel);
        sel = outQ_.DeQue<int32_t>();
        DataCopyPad(outGm_[slot], sel, DataCopyExtParams(1, uint32_t(kept * 4), 0, 0, 0));
        slot += kept;
      }
      outQ_.FreeTensor(sel);
    }
    if (t_.mode == 0) {
      LocalTensor<int32_t> one = one_.Get<int32_t>();
      one.SetValue(0, int32_t(total));
      nn_kernels::SyncSToMte3();
      DataCopyPad(countsGm_[GetBlockIdx()], one, DataCopyExtParams(1, 4, 0, 0, 0));
    }
  }

 private:
  NonzeroTiling t_{};
  TPipe pipe_;
  TQue<TPosition::VECIN, 2> inQ_;
  TQue<TPosition::VECOUT, 2> outQ_;
  TBuf<TPosition::VECCALC> half_, bits_, iota_, one_;
  GlobalTensor<uint8_t> maskGm_;
  GlobalTensor<int32_t> countsGm_, outGm_;
};

}  // namespace

extern "C" __global__ __aicore__ void nonzero_kernel(GM_ADDR mask, GM_ADDR counts, GM_ADDR out, GM_ADDR tiling) {
  GET_TILING_DATA_WITH_STRUCT(NonzeroTiling, t, tiling);
  NonzeroKernel op;
  op.Init(mask, counts, out, t);
  op.Process();
}
