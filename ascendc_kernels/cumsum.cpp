// cumsum on the vector cores (see cumsum.h).
#include "cumsum.h"

#include "elementwise.h"  // EwDType
#include "kernel_operator.h"
#include "norm_util.h"

using namespace AscendC;

namespace npu_kernels {

CumsumTiling cumsum_tiling(uint64_t outer, uint64_t R, uint64_t inner, uint32_t in_dtype, uint32_t out_dtype,
                           const SocInfo& soc) {
  CumsumTiling t;
  t.outer = outer;
  t.R = R;
  t.inner = inner;
  t.in_dtype = in_dtype;
  t.out_dtype = out_dtype;
  const EwDType in = EwDType(in_dtype);
  const bool fp = in == EwDType::F32 || in == EwDType::F16 || in == EwDType::BF16;
  t.column_mode = fp && inner > 1 ? 1 : 0;
  if (t.column_mode) {
    t.chunk = inner < 4096 ? uint32_t(inner) : 4096;
    t.chunks = uint32_t(CeilDivU<uint64_t>(inner, t.chunk));
    t.items = outer * t.chunks;
  } else {
    t.chunk = inner == 1 ? 2048 : 512;  // strided lines: one 32 B block per element in UB
    t.items = outer * inner;            // lines
  }
  const ItemSplit sp = SplitItems(t.items, (outer * R * inner + 8191) / 8192 * 8192, soc.vector_cores, 8192);
  t.items_per_core = sp.per_core;
  t.block_dim = sp.block_dim;
  return t;
}

}  // namespace npu_kernels

namespace {

using npu_kernels::CumsumTiling;
using npu_kernels::EwDType;
using namespace nn_kernels;

class CumsumKernel {
 public:
  __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, const CumsumTiling& t) {
    t_ = t;
    in_ = EwDType(t.in_dtype);
    out_ = EwDType(t.out_dtype);
    isz_ = npu_kernels::EwDTypeSize(in_);
    osz_ = npu_kernels::EwDTypeSize(out_);
    const uint64_t n = t.outer * t.R * t.inner;
    xGm_.SetGlobalBuffer(reinterpret_cast<__gm__ uint8_t*>(x), n * isz_);
    yGm_.SetGlobalBuffer(reinterpret_cast<__gm__ uint8_t*>(y), n * osz_);
    const uint32_t c64 = (t.chunk + 63) / 64 * 64;
    const uint32_t io = t.column_mode || t.inner == 1 ? c64 * 8 : c64 * 32;
    pipe_.InitBuffer(inb_, io);
    pipe_.InitBuffer(outb_, io);
    pipe_.InitBuffer(acc_, c64 * 4);
    pipe_.InitBuffer(f_, c64 * 4);
  }

  __aicore__ inline void Process() {
    const uint64_t i0 = uint64_t(GetBlockIdx()) * t_.items_per_core;
    uint64_t i1 = i0 + t_.items_per_core;
    if (i1 > t_.items) i1 = t_.items;
    for (uint64_t it = i0; it < i1; ++it) {
      if (t_.column_mode) Columns(it);
      else Line(it);
    }
  }

 private:
  // Float dtypes, inner > 1: acc[c] += x[o, r, c] row by row.
  __aicore__ inline void Columns(uint64_t item) {
    const uint64_t o = item / t_.chunks;
    const uint64_t c0 = (item % t_.chunks) * t_.chunk;
    const uint32_t w = uint32_t(t_.inner - c0 < t_.chunk ? t_.inner - c0 : t_.chunk);
    const uint32_t w64 = (w + 63) / 64 * 64;
    LocalTensor<float> acc = acc_.Get<float>(), f = f_.Get<float>();
    Duplicate(acc, t_.prod ? 1.0f : 0.0f, int32_t(w64));
    for (uint64_t r = 0; r < t_.R; ++r) {
      const uint64_t e = (o * t_.R + r) * t_.inner + c0;
      SyncVToMte2();
      DataCopyPad(inb_.Get<uint8_t>(), xGm_[e * isz_], DataCopyExtParams(1, w * isz_, 0, 0, 0),
                  DataCopyPadExtParams<uint8_t>(false, 0, 0, 0));
      SyncMte2ToV();
      LocalTensor<float> v = inb_.Get<float>();
      if (in_ != EwDType::F32) {
        if (in_ == EwDType::F16) Cast(f, inb_.Get<half>(), RoundMode::CAST_NONE, w64);
        else Cast(f, inb_.Get<bfloat16_t>(), RoundMode::CAST_NONE, w64);
        v = f;
      }
      if (t_.prod) Mul(acc, acc, v, int32_t(w64));
      else Add(acc, acc, v, int32_t(w64));
      SyncMte3ToV();
      if (out_ == EwDType::F32) Adds(outb_.Get<float>(), acc, 0.0f, int32_t(w64));
      else if (out_ == EwDType::F16) Cast(outb_.Get<half>(), acc, RoundMode::CAST_RINT, w64);
      else Cast(outb_.Get<bfloat16_t>(), acc, RoundMode::CAST_RINT, w64);
      SyncVToMte3();
      DataCopyPad(yGm_[e * osz_], outb_.Get<uint8_t>(), DataCopyExtParams(1, w * osz_, 0, 0, 0));
    }
  }

  // One scanned line (o, i): elements (o*R + r)*inner + i for r in [0, R), by scalars.
  __aicore__ inline void Line(uint64_t item) {
    const uint64_t o = item / t_.inner, i = item % t_.inner;
    const bool prod = t_.prod != 0;
    float accf = prod ? 1.0f : 0.0f;
    uint64_t acci = prod ? 1 : 0;  // unsigned: products wrap (two's complement) as the CPU's int64 do
    const bool contiguous = t_.inner == 1;
    for (uint64_t r0 = 0; r0 < t_.R; r0 += t_.chunk) {
      const uint32_t n = uint32_t(t_.R - r0 < t_.chunk ? t_.R - r0 : t_.chunk);
      const uint64_t e0 = (o * t_.R + r0) * t_.inner + i;
      SyncSToMte2();
      SyncMte3ToMte2();
      if (contiguous)
        DataCopyPad(inb_.Get<uint8_t>(), xGm_[e0 * isz_], DataCopyExtParams(1, n * isz_, 0, 0, 0),
                    DataCopyPadExtParams<uint8_t>(false, 0, 0, 0));
      else  // n elements t_.inner apart: one block per element
        DataCopyPad(inb_.Get<uint8_t>(), xGm_[e0 * isz_],
                    DataCopyExtParams(uint16_t(n), isz_, uint32_t((t_.inner - 1) * isz_), 0, 0),
                    DataCopyPadExtParams<uint8_t>(false, 0, 0, 0));
      SyncMte2ToS();
      const uint32_t in_pitch = contiguous ? 1 : 32 / isz_;  // one element per 32 B block when strided
      for (uint32_t k = 0; k < n; ++k) {
        const uint32_t s = k * in_pitch;
        float vf = 0.0f;
        uint64_t vi = 0;
        switch (in_) {
          case EwDType::F32: vf = inb_.Get<float>().GetValue(s); break;
          case EwDType::F16: vf = float(inb_.Get<half>().GetValue(s)); break;
          case EwDType::BF16: vf = float(inb_.Get<bfloat16_t>().GetValue(s)); break;
          case EwDType::I32: vi = uint64_t(int64_t(inb_.Get<int32_t>().GetValue(s))); break;
          case EwDType::I64: vi = uint64_t(inb_.Get<int64_t>().GetValue(s)); break;
          case EwDType::BOOL: vi = inb_.Get<uint8_t>().GetValue(s) ? 1 : 0; break;
        }
        if (prod) {
          accf *= vf;
          acci *= vi;
        } else {
          accf += vf;
          acci += vi;
        }
        const uint32_t d = contiguous ? k : k * (32 / osz_);
        switch (out_) {
          case EwDType::F32: outb_.Get<float>().SetValue(d, accf); break;
          case EwDType::F16: outb_.Get<half>().SetValue(d, half(accf)); break;
          case EwDType::BF16: outb_.Get<bfloat16_t>().SetValue(d, bfloat16_t(accf)); break;
          case EwDType::I64: outb_.Get<int64_t>().SetValue(d, int64_t(acci)); break;
          default: break;
        }
      }
      SyncSToMte3();
      if (contiguous)
        DataCopyPad(yGm_[e0 * osz_], outb_.Get<uint8_t>(), DataCopyExtParams(1, n * osz_, 0, 0, 0));
      else
        DataCopyPad(yGm_[e0 * osz_], outb_.Get<uint8_t>(),
                    DataCopyExtParams(uint16_t(n), osz_, 0, uint32_t((t_.inner - 1) * osz_), 0));
    }
  }
  __aicore__ inline void SyncMte3ToMte2() { SyncPipes<HardEvent::MTE3_MTE2>(); }

  CumsumTiling t_{};
  EwDType in_ = EwDType::F32, out_ = EwDType::F32;
  uint32_t isz_ = 4, osz_ = 4;
  TPipe pipe_;
  TBuf<TPosition::VECCALC> inb_, outb_, acc_, f_;
  GlobalTensor<uint8_t> xGm_, yGm_;
};

}  // namespace

extern "C" __global__ __aicore__ void cumsum_kernel(GM_ADDR x, GM_ADDR y, GM_ADDR tiling) {
  GET_TILING_DATA_WITH_STRUCT(CumsumTiling, t, tiling);
  CumsumKernel op;
  op.Init(x, y, t);
  op.Process();
}
