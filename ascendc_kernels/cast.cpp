// Cast kernel: GM -> VECIN (DataCopyPad) -> float32 tile -> destination dtype -> VECOUT -> GM.
#include "cast.h"

#include <type_traits>

#include "elementwise_copy.h"
#include "kernel_operator.h"

using namespace AscendC;

namespace npu_kernels {

namespace {
bool IsFloat(EwDType d) { return d == EwDType::F32 || d == EwDType::F16 || d == EwDType::BF16; }
}  // namespace

bool cast_supported(EwDType src, EwDType dst) {
  if (src == dst) return false;
  if (IsFloat(src)) return IsFloat(dst) || dst == EwDType::I32 || dst == EwDType::I64 || dst == EwDType::BOOL;
  if (src == EwDType::I32) return IsFloat(dst) || dst == EwDType::BOOL;
  if (src == EwDType::I64) return IsFloat(dst);
  if (src == EwDType::BOOL) return IsFloat(dst) || dst == EwDType::I32;
  return false;
}

CastTiling cast_tiling(uint64_t total, EwDType src, EwDType dst, const SocInfo& soc) {
  CastTiling t;
  t.total = total;
  t.src = uint8_t(src);
  t.dst = uint8_t(dst);
  t.no_pad = soc.npu_arch == 2002 ? 1 : 0;
  // 2 in + 2 out tiles, a float tile, a half tile and a mask.
  const uint64_t per_elem8 = 8 * (2 * EwDTypeSize(src) + 2 * EwDTypeSize(dst) + 4 + 2) + 1;
  uint64_t tile = (soc.ub_bytes - 9 * 1024) * 8 / per_elem8 / 256 * 256;
  if (tile > 16384) tile = 16384;
  if (tile < 256) tile = 256;
  t.tile = static_cast<uint32_t>(tile);
  uint64_t cores = CeilDivU<uint64_t>(total == 0 ? 1 : total, 4096);
  if (cores > static_cast<uint64_t>(soc.vector_cores)) cores = static_cast<uint64_t>(soc.vector_cores);
  const uint64_t tiles = CeilDivU<uint64_t>(total == 0 ? 1 : total, tile);
  if (cores > tiles) cores = tiles;
  t.per_core = CeilDivU<uint64_t>(tiles, cores) * tile;
  t.block_dim = static_cast<uint32_t>(CeilDivU<uint64_t>(total == 0 ? 1 : total, t.per_core));
  return t;
}

}  // namespace npu_kernels

namespace {

using npu_kernels::CastTiling;
using npu_kernels::EwDType;

template <class F>
__aicore__ inline void WithType(EwDType dt, F&& f) {
  switch (dt) {
    case EwDType::F32: f(float{}); break;
    case EwDType::F16: f(half{}); break;
    case EwDType::BF16: f(bfloat16_t{}); break;
    case EwDType::I32: f(int32_t{}); break;
    case EwDType::I64: f(int64_t{}); break;
    case EwDType::BOOL: f(uint8_t{}); break;
  }
}

class CastKernel {
 public:
  __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, const CastTiling& t) {
    t_ = t;
    const uint64_t start = t.per_core * GetBlockIdx();
    count_ = start >= t.total ? 0 : (t.total - start < t.per_core ? t.total - start : t.per_core);
    x_ = x + start * npu_kernels::EwDTypeSize(EwDType(t.src));
    y_ = y + start * npu_kernels::EwDTypeSize(EwDType(t.dst));
    pipe_.InitBuffer(inQ_, 2, t.tile * npu_kernels::EwDTypeSize(EwDType(t.src)));
    pipe_.InitBuffer(outQ_, 2, t.tile * npu_kernels::EwDTypeSize(EwDType(t.dst)));
    pipe_.InitBuffer(f32_, t.tile * 4);
    pipe_.InitBuffer(f16_, t.tile * 2);
    pipe_.InitBuffer(bits_, t.tile / 8);
  }

  __aicore__ inline void Process() {
    for (uint64_t off = 0; off < count_; off += t_.tile) {
      const uint32_t n = static_cast<uint32_t>(count_ - off < t_.tile ? count_ - off : t_.tile);
      CopyIn(off, n);
      Compute(npu_kernels::AlignUp<uint32_t>(n, 256));
      CopyOut(off, n);
    }
  }

 private:
  __aicore__ inline void CopyIn(uint64_t off, uint32_t n) {
    LocalTensor<uint8_t> raw = inQ_.AllocTensor<uint8_t>();
    WithType(EwDType(t_.src), [&](auto tag) {
      using S = decltype(tag);
      GlobalTensor<S> g;
      g.SetGlobalBuffer(reinterpret_cast<__gm__ S*>(x_) + off);
      npu_kernels::EwCopyIn(raw.ReinterpretCast<S>(), g, n, t_.no_pad == 0);
    });
    inQ_.EnQue(raw);
  }

  __aicore__ inline void Compute(uint32_t L) {
    LocalTensor<uint8_t> raw = inQ_.DeQue<uint8_t>();
    LocalTensor<uint8_t> out = outQ_.AllocTensor<uint8_t>();
    const LocalTensor<float> f = f32_.Get<float>();
    const LocalTensor<half> h = f16_.Get<half>();
    const LocalTensor<uint8_t> bits = bits_.Get<uint8_t>();
    const EwDType src = EwDType(t_.src), dst = EwDType(t_.dst);
    if (src == EwDType::I32 && dst == EwDType::BOOL) {
      CompareScalar(bits, raw.ReinterpretCast<int32_t>(), 0, CMPMODE::EQ, L);  // 1 where zero
      Duplicate(h, half(0.0f), L);
      Select(h, bits, h, half(1.0f), SELMODE::VSEL_TENSOR_SCALAR_MODE, L);
      Cast(out, h, RoundMode::CAST_NONE, L);
    } else if (src == EwDType::BOOL && dst == EwDType::I32) {
      Cast(h, raw, RoundMode::CAST_NONE, L);
      Cast(out.ReinterpretCast<int32_t>(), h, RoundMode::CAST_RINT, L);
    } else {
      // source -> float32
      LocalTensor<float> v = dst == EwDType::F32 ? out.ReinterpretCast<float>() : f;
      switch (src) {
        case EwDType::F32: v = raw.ReinterpretCast<float>(); break;
        case EwDType::F16: Cast(v, raw.ReinterpretCast<half>(), RoundMode::CAST_NONE, L); break;
        case EwDType::BF16: Cast(v, raw.ReinterpretCast<bfloat16_t>(), RoundMode::CAST_NONE, L); break;
        case EwDType::I32: Cast(v, raw.ReinterpretCast<int32_t>(), RoundMode::CAST_RINT, L); break;
        case EwDType::I64: Cast(v, raw.ReinterpretCast<int64_t>(), RoundMode::CAST_RINT, L); break;
        case EwDType::BOOL:
          Cast(h, raw, RoundMode::CAST_NONE, L);
          Cast(v, h, RoundMode::CAST_NONE, L);
          break;
      }
      // float32 -> destination
      switch (dst) {
        case EwDType::F32: break;  // converted in place above
        case EwDType::F16: Cast(out.ReinterpretCast<half>(), v, RoundMode::CAST_RINT, L); break;
        case EwDType::BF16: Cast(out.ReinterpretCast<bfloat16_t>(), v, RoundMode::CAST_RINT, L); break;
        case EwDType::I32: Cast(out.ReinterpretCast<int32_t>(), v, RoundMode::CAST_TRUNC, L); break;
        case EwDType::I64: Cast(out.ReinterpretCast<int64_t>(), v, RoundMode::CAST_TRUNC, L); break;
        case EwDType::BOOL:
          CompareScalar(bits, v, 0.0f, CMPMODE::NE, L);
          Duplicate(h, half(1.0f), L);
          Select(h, bits, h, half(0.0f), SELMODE::VSEL_TENSOR_SCALAR_MODE, L);
          Cast(out, h, RoundMode::CAST_NONE, L);
          break;
      }
    }
    outQ_.EnQue(out);
    inQ_.FreeTensor(raw);
  }

  __aicore__ inline void CopyOut(uint64_t off, uint32_t n) {
    LocalTensor<uint8_t> out = outQ_.DeQue<uint8_t>();
    WithType(EwDType(t_.dst), [&](auto tag) {
      using S = decltype(tag);
      GlobalTensor<S> g;
      g.SetGlobalBuffer(reinterpret_cast<__gm__ S*>(y_) + off);
      npu_kernels::EwCopyOut(g, out.ReinterpretCast<S>(), n, t_.no_pad == 0);
    });
    outQ_.FreeTensor(out);
  }

  TPipe pipe_;
  TQue<TPosition::VECIN, 1> inQ_;
  TQue<TPosition::VECOUT, 1> outQ_;
  TBuf<TPosition::VECCALC> f32_, f16_, bits_;
  CastTiling t_;
  GM_ADDR x_ = nullptr;
  GM_ADDR y_ = nullptr;
  uint64_t count_ = 0;
};

}  // namespace

extern "C" __global__ __aicore__ void cast_kernel(GM_ADDR x, GM_ADDR y, GM_ADDR tiling) {
  GET_TILING_DATA_WITH_STRUCT(CastTiling, t, tiling);
  CastKernel op;
  op.Init(x, y, t);
  op.Process();
}
