// arange on the vector cores (see arange.h).
#include "arange.h"

#include "elementwise.h"  // EwDType
#include "kernel_operator.h"
#include "norm_util.h"

using namespace AscendC;

namespace npu_kernels {

ArangeTiling arange_tiling(uint64_t total, uint32_t dtype, uint32_t elem_bytes, const SocInfo& soc) {
  ArangeTiling t;
  t.total = total;
  t.dtype = dtype;
  t.tile = 4096;
  const CoreSplit s = SplitAcrossCores(total, elem_bytes, soc.vector_cores, 16384);
  t.block_dim = s.block_dim;
  t.per_core = s.per_core;
  return t;
}

}  // namespace npu_kernels

namespace {

using npu_kernels::ArangeTiling;
using npu_kernels::EwDType;

class ArangeKernel {
 public:
  __aicore__ inline void Init(GM_ADDR y, const ArangeTiling& t) {
    t_ = t;
    y_ = y;
    pipe_.InitBuffer(idx_, t.tile * 4);
    pipe_.InitBuffer(f_, t.tile * 4);
    pipe_.InitBuffer(outQ_, 1, t.tile * 8);
  }

  __aicore__ inline void Process() {
    const uint64_t b0 = uint64_t(GetBlockIdx()) * t_.per_core;
    uint64_t b1 = b0 + t_.per_core;
    if (b1 > t_.total) b1 = t_.total;
    for (uint64_t off = b0; off < b1; off += t_.tile) {
      const uint32_t n = uint32_t(b1 - off < t_.tile ? b1 - off : t_.tile);
      const uint32_t n64 = (n + 63) / 64 * 64;
      LocalTensor<int32_t> it = idx_.Get<int32_t>();
      nn_kernels::Iota(it, n64, int32_t(off));
      LocalTensor<uint8_t> out = outQ_.AllocTensor<uint8_t>();
      const EwDType dt = EwDType(t_.dtype);
      if (dt == EwDType::I32 || dt == EwDType::I64) {
        Muls(it, it, t_.step_i, int32_t(n64));
        Adds(it, it, t_.start_i, int32_t(n64));
        if (dt == EwDType::I32) Adds(out.ReinterpretCast<int32_t>(), it, 0, int32_t(n64));
        else Cast(out.ReinterpretCast<int64_t>(), it, RoundMode::CAST_NONE, n64);
      } else {
        LocalTensor<float> f = dt == EwDType::F32 ? out.ReinterpretCast<float>() : f_.Get<float>();
        Cast(f, it, RoundMode::CAST_RINT, n64);
        Muls(f, f, t_.step_f, int32_t(n64));
        Adds(f, f, t_.start_f, int32_t(n64));
        if (dt == EwDType::F16) Cast(out.ReinterpretCast<half>(), f, RoundMode::CAST_RINT, n64);
        else if (dt == EwDType::BF16) Cast(out.ReinterpretCast<bfloat16_t>(), f, RoundMode::CAST_RINT, n64);
      }
      outQ_.EnQue(out);
      out = outQ_.DeQue<uint8_t>();
      const uint32_t esz = npu_kernels::EwDTypeSize(dt);
      GlobalTensor<uint8_t> g;
      g.SetGlobalBuffer(reinterpret_cast<__gm__ uint8_t*>(y_) + off * esz, uint64_t(n) * esz);
      DataCopyPad(g, out, DataCopyExtParams(1, n * esz, 0, 0, 0));
      outQ_.FreeTensor(out);
    }
  }

 private:
  ArangeTiling t_{};
  GM_ADDR y_ = nullptr;
  TPipe pipe_;
  TBuf<TPosition::VECCALC> idx_, f_;
  TQue<TPosition::VECOUT, 1> outQ_;
};

}  // namespace

extern "C" __global__ __aicore__ void arange_kernel(GM_ADDR y, GM_ADDR tiling) {
  GET_TILING_DATA_WITH_STRUCT(ArangeTiling, t, tiling);
  ArangeKernel op;
  op.Init(y, t);
  op.Process();
}
