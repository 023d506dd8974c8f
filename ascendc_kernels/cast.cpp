// Cast kernel: GM -> VECIN (DataCopyPad) -> float32 tile -> destination dtype -> VECOUT -> GM.
#include "cast.h"

#include <type_traits>

#include "elementwise_copy.h"
#include "kernel_operator.h"

using namespace AscendC;

namespace npu_kernels {

namespace {
bool IsFloat(EwDType d) { return d == EwDType::F32 || d == EwDType::F16 || d == EwDType::BF16; }
// The pairs the 310P (2002) profile ran before the integer pairs came: float-hub casts only.
bool Supported2002(EwDType src, EwDType dst) {
  if (IsFloat(src)) return IsFloat(dst) || dst == EwDType::I32 || dst == EwDType::I64 || dst == EwDType::BOOL;
  if (src == EwDType::I32) return IsFloat(dst) || dst == EwDType::BOOL;
  if (src == EwDType::I64) return IsFloat(dst);
  if (src == EwDType::BOOL) return IsFloat(dst) || dst == EwDType::I32;
  return false;
}
}  // namespace

bool cast_supported(EwDType src, EwDType dst, int npu_arch) {
  if (src == dst) return false;
  return npu_arch == 2002 ? Supported2002(src, dst) : true;  // 2201: every pair of the nine dtypes
}

CastTiling cast_tiling(uint64_t total, EwDType src, EwDType dst, const SocInfo& soc) {
  CastTiling t;
  t.total = total;
  t.src = uint8_t(src);
  t.dst = uint8_t(dst);
  t.no_pad = soc.npu_arch == 2002 ? 1 : 0;
  // 2 in + 2 out tiles, a float (int32) tile, a half tile, the wrap mask (int32) and a compare mask.
  const uint64_t per_elem8 = 8 * (2 * EwDTypeSize(src) + 2 * EwDTypeSize(dst) + 4 + 2 + 4) + 1;
  uint64_t tile = (soc.ub_bytes - 9 * 1024) * 8 / per_elem8 / 256 * 256;
  const uint64_t host = HostCacheTile(per_elem8, 256);
  if (tile > host) tile = host;
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
    case EwDType::U8: f(uint8_t{}); break;
    case EwDType::I8: f(int8_t{}); break;
    case EwDType::I16: f(int16_t{}); break;
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
    const EwDType dst = EwDType(t.dst);
    if (dst == EwDType::U8 || dst == EwDType::I8 || dst == EwDType::I16) {
      // And mask keeping the low 8 / 16 bits of each int32 lane (as uint16 halves: 0x00ff/0xffff, 0)
      pipe_.InitBuffer(wrapk_, t.tile * 4);
      Duplicate(wrapk_.Get<int32_t>(), dst == EwDType::I16 ? int32_t(0xffff) : int32_t(0xff), t.tile);
    }
    if (EwDType(t.src) == EwDType::I64 && !IsFloatOrBool(dst)) {
      // GatherMask pattern taking the even int32 words (the low words of little-endian int64s)
      pipe_.InitBuffer(lowk_, t.tile / 16 * 4);
      Duplicate(lowk_.Get<uint32_t>(), 0x55555555u, t.tile / 16);
    }
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

  static __aicore__ inline bool IsFloatOrBool(EwDType d) {
    return d == EwDType::F32 || d == EwDType::F16 || d == EwDType::BF16 || d == EwDType::BOOL;
  }

  // Source -> float32 lanes (exact for every source but int32 / int64 beyond 2^24, rounded to nearest
  // even). v may alias the input tile when the source is float32.
  __aicore__ inline LocalTensor<float> ToFloat(const LocalTensor<uint8_t>& raw, const LocalTensor<float>& v,
                                               EwDType src, uint32_t L) {
    const LocalTensor<half> h = f16_.Get<half>();
    switch (src) {
      case EwDType::F32: return raw.ReinterpretCast<float>();
      case EwDType::F16: Cast(v, raw.ReinterpretCast<half>(), RoundMode::CAST_NONE, L); break;
      case EwDType::BF16: Cast(v, raw.ReinterpretCast<bfloat16_t>(), RoundMode::CAST_NONE, L); break;
      case EwDType::I32: Cast(v, raw.ReinterpretCast<int32_t>(), RoundMode::CAST_RINT, L); break;
      case EwDType::I64: Cast(v, raw.ReinterpretCast<int64_t>(), RoundMode::CAST_RINT, L); break;
      case EwDType::I16: Cast(v, raw.ReinterpretCast<int16_t>(), RoundMode::CAST_NONE, L); break;
      case EwDType::I8:
        Cast(h, raw.ReinterpretCast<int8_t>(), RoundMode::CAST_NONE, L);
        Cast(v, h, RoundMode::CAST_NONE, L);
        break;
      default:  // BOOL, U8: exact through half
        Cast(h, raw, RoundMode::CAST_NONE, L);
        Cast(v, h, RoundMode::CAST_NONE, L);
        break;
    }
    return v;
  }

  // Source -> int32 lanes as C++ converts to an integer: floats toward zero (saturating beyond int32),
  // int64 to its low word (wrapping), the narrow integers exactly.
  __aicore__ inline void ToInt32(const LocalTensor<uint8_t>& raw, const LocalTensor<int32_t>& iv, EwDType src,
                                 uint32_t L) {
    const LocalTensor<half> h = f16_.Get<half>();
    switch (src) {
      case EwDType::I32: DataCopy(iv, raw.ReinterpretCast<int32_t>(), L); return;
      case EwDType::I64: {
        uint64_t kept = 0;
        GatherMask(iv, raw.ReinterpretCast<int32_t>(), lowk_.Get<uint32_t>(), true, 2 * L, {1, 1, 8, 0}, kept);
        return;
      }
      case EwDType::BOOL: case EwDType::U8: case EwDType::I8:
        if (src == EwDType::I8) Cast(h, raw.ReinterpretCast<int8_t>(), RoundMode::CAST_NONE, L);
        else Cast(h, raw, RoundMode::CAST_NONE, L);
        Cast(iv, h, RoundMode::CAST_RINT, L);
        return;
      default: {
        const LocalTensor<float> v = ToFloat(raw, iv.ReinterpretCast<float>(), src, L);
        Cast(iv, v, src == EwDType::I16 ? RoundMode::CAST_RINT : RoundMode::CAST_TRUNC, L);
        return;
      }
    }
  }

  // int32 lanes -> uint8 / int8 / int16, keeping the low bits (two's complement) as a C++ narrowing
  // conversion does: offset signed targets into [0, 2^w), And the low w bits, offset back, narrow exactly.
  __aicore__ inline void WrapToSmall(const LocalTensor<uint8_t>& out, const LocalTensor<int32_t>& y, EwDType od,
                                     uint32_t L) {
    const int32_t bias = od == EwDType::I8 ? 128 : od == EwDType::I16 ? 32768 : 0;
    if (bias != 0) Adds(y, y, bias, L);
    const LocalTensor<uint16_t> yh = y.ReinterpretCast<uint16_t>();
    And(yh, yh, wrapk_.Get<uint16_t>(), 2 * L);
    if (bias != 0) Adds(y, y, -bias, L);
    if (od == EwDType::I16) {
      Cast(out.ReinterpretCast<int16_t>(), y, RoundMode::CAST_NONE, L);
      return;
    }
    const LocalTensor<half> h = f16_.Get<half>();
    Cast(h.ReinterpretCast<int16_t>(), y, RoundMode::CAST_NONE, L);
    Cast(h, h.ReinterpretCast<int16_t>(), RoundMode::CAST_NONE, L);
    if (od == EwDType::I8) Cast(out.ReinterpretCast<int8_t>(), h, RoundMode::CAST_NONE, L);
    else Cast(out, h, RoundMode::CAST_NONE, L);
  }

  __aicore__ inline void Compute(uint32_t L) {
    LocalTensor<uint8_t> raw = inQ_.DeQue<uint8_t>();
    LocalTensor<uint8_t> out = outQ_.AllocTensor<uint8_t>();
    const LocalTensor<float> f = f32_.Get<float>();
    const LocalTensor<half> h = f16_.Get<half>();
    const EwDType src = EwDType(t_.src), dst = EwDType(t_.dst);
    if (dst == EwDType::BOOL) {  // x != 0 (NaN too): every nonzero source is a nonzero float
      const LocalTensor<uint8_t> bits = bits_.Get<uint8_t>();
      CompareScalar(bits, ToFloat(raw, f, src, L), 0.0f, CMPMODE::NE, L);
      Duplicate(h, half(1.0f), L);
      Select(h, bits, h, half(0.0f), SELMODE::VSEL_TENSOR_SCALAR_MODE, L);
      Cast(out, h, RoundMode::CAST_NONE, L);
    } else if (dst == EwDType::F32 || dst == EwDType::F16 || dst == EwDType::BF16) {
      const LocalTensor<float> v = ToFloat(raw, dst == EwDType::F32 ? out.ReinterpretCast<float>() : f, src, L);
      if (dst == EwDType::F16) Cast(out.ReinterpretCast<half>(), v, RoundMode::CAST_RINT, L);
      else if (dst == EwDType::BF16) Cast(out.ReinterpretCast<bfloat16_t>(), v, RoundMode::CAST_RINT, L);
    } else if (dst == EwDType::I64 && IsFloatOrBool(src) && src != EwDType::BOOL) {
      Cast(out.ReinterpretCast<int64_t>(), ToFloat(raw, f, src, L), RoundMode::CAST_TRUNC, L);
    } else {  // integer targets through int32 lanes
      const LocalTensor<int32_t> iv = dst == EwDType::I32 ? out.ReinterpretCast<int32_t>() : f.ReinterpretCast<int32_t>();
      ToInt32(raw, iv, src, L);
      if (dst == EwDType::I64) Cast(out.ReinterpretCast<int64_t>(), iv, RoundMode::CAST_NONE, L);
      else if (dst != EwDType::I32) WrapToSmall(out, iv, dst, L);
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
  TBuf<TPosition::VECCALC> f32_, f16_, bits_, wrapk_, lowk_;
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
