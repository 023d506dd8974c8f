// cumsum on the vector cores (see cumsum.h).
#include "cumsum.h"

#include "elementwise.h"  // EwDType
#include "kernel_operator.h"
#include "reduce_helpers.h"
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
    // Narrower chunks when the outer rows alone leave cores idle, but >= 1024 columns: a row costs one
    // vector instruction per chunk, so narrow chunks multiply the instructions of a long scan.
    uint64_t chunk = ColumnChunkWidth(outer, inner, uint64_t(soc.vector_cores), 4096);
    const uint64_t floor_w = inner < 1024 ? inner : 1024;
    t.chunk = uint32_t(chunk < floor_w ? floor_w : chunk);
    t.chunks = uint32_t(CeilDivU<uint64_t>(inner, t.chunk));
    t.items = outer * t.chunks;
    // UB per tile element: the input, its float copy, the float result, the output.
    const uint32_t isz = EwDTypeSize(in), osz = EwDTypeSize(EwDType(out_dtype));
    const uint32_t per = isz + (in != EwDType::F32 ? 4 : 0) + (EwDType(out_dtype) != EwDType::F32 ? 4 : 0) + osz;
    const uint32_t w64 = AlignUp<uint32_t>(t.chunk, 64);
    uint64_t rows = (soc.ub_bytes - 8 * 1024 - w64 * 4) / (uint64_t(w64) * per);
    if (rows > R) rows = R;
    if (rows > 4095) rows = 4095;
    t.rows = uint32_t(rows < 1 ? 1 : rows);
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
    if (t.column_mode) {
      const uint32_t n = t.rows * c64;
      pipe_.InitBuffer(inb_, n * isz_);
      pipe_.InitBuffer(outb_, n * osz_);
      pipe_.InitBuffer(acc_, c64 * 4);
      if (in_ != EwDType::F32) pipe_.InitBuffer(f_, n * 4);
      if (out_ != EwDType::F32) pipe_.InitBuffer(res_, n * 4);
      return;
    }
    const uint32_t io = t.inner == 1 ? c64 * 8 : c64 * 32;
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
  // Float dtypes, inner > 1: out[r] = out[r - 1] + x[r] (or *) over tiles of rows of one column chunk.
  __aicore__ inline void Columns(uint64_t item) {
    const uint64_t o = item / t_.chunks;
    const uint64_t c0 = (item % t_.chunks) * t_.chunk;
    const uint32_t w = uint32_t(t_.inner - c0 < t_.chunk ? t_.inner - c0 : t_.chunk);
    const uint32_t w64 = (t_.chunk + 63) / 64 * 64;  // UB row pitch (elements)
    const int32_t wc = int32_t((w + 63) / 64 * 64);
    LocalTensor<float> acc = acc_.Get<float>();
    Duplicate(acc, t_.prod ? 1.0f : 0.0f, wc);
    for (uint64_t r0 = 0; r0 < t_.R; r0 += t_.rows) {
      const uint32_t k = uint32_t(t_.R - r0 < t_.rows ? t_.R - r0 : t_.rows);
      const uint64_t e = (o * t_.R + r0) * t_.inner + c0;
      SyncVToMte2();  // the previous tile's compute has read the input
      npu_kernels::reduce_helpers::CopyInRows(inb_.Get<uint8_t>(), xGm_[e * isz_], k, w * isz_, t_.inner * isz_,
                                              w64 * isz_);
      SyncMte2ToV();
      LocalTensor<float> v = inb_.Get<float>();
      if (in_ == EwDType::F16) Cast(f_.Get<float>(), inb_.Get<half>(), RoundMode::CAST_NONE, k * w64);
      if (in_ == EwDType::BF16) Cast(f_.Get<float>(), inb_.Get<bfloat16_t>(), RoundMode::CAST_NONE, k * w64);
      if (in_ != EwDType::F32) v = f_.Get<float>();
      SyncMte3ToV();  // the previous tile has left
      LocalTensor<float> res = out_ == EwDType::F32 ? outb_.Get<float>() : res_.Get<float>();
      for (uint32_t r = 0; r < k; ++r) {
        const LocalTensor<float> prev = r == 0 ? acc : res[(r - 1) * w64];
        if (t_.prod) Mul(res[r * w64], prev, v[r * w64], wc);
        else Add(res[r * w64], prev, v[r * w64], wc);
      }
      Adds(acc, res[(k - 1) * w64], 0.0f, wc);  // carried into the next tile
      if (out_ == EwDType::F16) Cast(outb_.Get<half>(), res, RoundMode::CAST_RINT, k * w64);
      if (out_ == EwDType::BF16) Cast(outb_.Get<bfloat16_t>(), res, RoundMode::CAST_RINT, k * w64);
      SyncVToMte3();
      npu_kernels::reduce_helpers::CopyOutRows(yGm_[e * osz_], outb_.Get<uint8_t>(), k, w * osz_, t_.inner * osz_,
                                               w64 * osz_);
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
  TBuf<TPosition::VECCALC> inb_, outb_, acc_, f_, res_;
  GlobalTensor<uint8_t> xGm_, yGm_;
};

}  // namespace

extern "C" __global__ __aicore__ void cumsum_kernel(GM_ADDR x, GM_ADDR y, GM_ADDR tiling) {
  GET_TILING_DATA_WITH_STRUCT(CumsumTiling, t, tiling);
  CumsumKernel op;
  op.Init(x, y, t);
  op.Process();
}
