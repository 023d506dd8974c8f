// Basic host types of the Ascend C model: the 2-byte floating types `half` (IEEE binary16) and
// `bfloat16_t`, the enums of the documented API (TPosition, HardEvent, pipe_t, RoundMode, ...) and the
// parameter structs of data movement and vector instructions (shared/ascendc.md §2, §3.1-3.2, §4, §6).
//
// `half` and `bfloat16_t` live in the global namespace like the device compiler's builtin types.
// Both convert implicitly to float, and implicitly from any arithmetic type with round-to-nearest-even.
// Arithmetic on them therefore happens in float (`h1 + h2` is a float); assign back to round.
#pragma once
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace ascendc_host {

inline uint32_t FloatBits(float f) { uint32_t u; std::memcpy(&u, &f, 4); return u; }
inline float BitsFloat(uint32_t u) { float f; std::memcpy(&f, &u, 4); return f; }

// IEEE binary32 -> binary16, round to nearest even; overflow -> inf, NaN stays a quiet NaN.
inline uint16_t FloatToHalfBits(float f) {
  uint32_t x = FloatBits(f);
  uint32_t sign = (x >> 16) & 0x8000u;
  uint32_t ax = x & 0x7FFFFFFFu;
  if (ax >= 0x7F800000u) return uint16_t(sign | (ax > 0x7F800000u ? 0x7E00u | ((ax >> 13) & 0x3FFu) : 0x7C00u));
  if (ax >= 0x477FF000u) return uint16_t(sign | 0x7C00u);  // >= 65520 rounds to inf
  if (ax < 0x38800000u) {                                   // half subnormal or zero: let the FPU round
    float t = BitsFloat(ax) + 0.5f;                          // ulp(0.5) == 2^-24 == half subnormal step
    return uint16_t(sign | (FloatBits(t) - 0x3F000000u));
  }
  ax += 0xC8000FFFu + ((ax >> 13) & 1u);  // rebias exponent (127 -> 15) and round to nearest even
  return uint16_t(sign | (ax >> 13));
}

inline float HalfBitsToFloat(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000u) << 16;
  uint32_t em = h & 0x7FFFu;
  if (em >= 0x7C00u) return BitsFloat(sign | 0x7F800000u | ((em & 0x3FFu) << 13));
  if (em >= 0x0400u) return BitsFloat(sign | ((em << 13) + 0x38000000u));
  float f = float(em) * 5.9604644775390625e-8f;  // subnormal: em * 2^-24
  return sign ? -f : f;
}

// binary32 -> bfloat16, round to nearest even; NaN stays a quiet NaN.
inline uint16_t FloatToBf16Bits(float f) {
  uint32_t x = FloatBits(f);
  if ((x & 0x7FFFFFFFu) > 0x7F800000u) return uint16_t((x >> 16) | 0x40u);
  return uint16_t((x + 0x7FFFu + ((x >> 16) & 1u)) >> 16);
}
inline float Bf16BitsToFloat(uint16_t b) { return BitsFloat(uint32_t(b) << 16); }

}  // namespace ascendc_host

struct half {
  uint16_t bits = 0;
  half() = default;
  template <typename U, std::enable_if_t<std::is_arithmetic_v<U>, int> = 0>
  half(U v) : bits(ascendc_host::FloatToHalfBits(static_cast<float>(v))) {}
  operator float() const { return ascendc_host::HalfBitsToFloat(bits); }
  static half FromBits(uint16_t b) { half h; h.bits = b; return h; }
  template <typename U> half& operator+=(U v) { return *this = half(float(*this) + float(v)); }
  template <typename U> half& operator-=(U v) { return *this = half(float(*this) - float(v)); }
  template <typename U> half& operator*=(U v) { return *this = half(float(*this) * float(v)); }
  template <typename U> half& operator/=(U v) { return *this = half(float(*this) / float(v)); }
  half operator-() const { return FromBits(uint16_t(bits ^ 0x8000u)); }
};

struct bfloat16_t {
  uint16_t bits = 0;
  bfloat16_t() = default;
  template <typename U, std::enable_if_t<std::is_arithmetic_v<U>, int> = 0>
  bfloat16_t(U v) : bits(ascendc_host::FloatToBf16Bits(static_cast<float>(v))) {}
  operator float() const { return ascendc_host::Bf16BitsToFloat(bits); }
  static bfloat16_t FromBits(uint16_t b) { bfloat16_t h; h.bits = b; return h; }
  template <typename U> bfloat16_t& operator+=(U v) { return *this = bfloat16_t(float(*this) + float(v)); }
  template <typename U> bfloat16_t& operator-=(U v) { return *this = bfloat16_t(float(*this) - float(v)); }
  template <typename U> bfloat16_t& operator*=(U v) { return *this = bfloat16_t(float(*this) * float(v)); }
  template <typename U> bfloat16_t& operator/=(U v) { return *this = bfloat16_t(float(*this) / float(v)); }
  bfloat16_t operator-() const { return FromBits(uint16_t(bits ^ 0x8000u)); }
};
static_assert(sizeof(half) == 2 && sizeof(bfloat16_t) == 2);

// Pipes (global names, as kernels use them unqualified).
enum pipe_t : uint8_t {
  PIPE_S = 0, PIPE_V, PIPE_M, PIPE_MTE1, PIPE_MTE2, PIPE_MTE3, PIPE_ALL, PIPE_MTE4, PIPE_MTE5, PIPE_V2, PIPE_FIX,
  PIPE_NUM
};
enum event_t : uint8_t {
  EVENT_ID0 = 0, EVENT_ID1, EVENT_ID2, EVENT_ID3, EVENT_ID4, EVENT_ID5, EVENT_ID6, EVENT_ID7
};

namespace AscendC {

using ::half;
using ::bfloat16_t;

enum class TPosition : uint8_t {
  GM, A1, A2, B1, B2, C1, C2, CO1, CO2, VECIN, VECOUT, VECCALC, LCM = VECCALC,
  SPM, SHM = SPM, TSCM, C2PIPE2GM, C2PIPE2LOCAL, MAX
};
using QuePosition = TPosition;

enum class HardEvent : uint8_t {
  MTE2_MTE1, MTE1_MTE2, MTE1_M, M_MTE1, MTE2_V, V_MTE2, MTE3_V, V_MTE3, M_V, V_M, V_V, MTE3_MTE1,
  MTE1_MTE3, MTE1_V, MTE2_M, M_MTE2, V_MTE1, M_FIX, FIX_M, MTE3_MTE2, MTE2_MTE3, S_V, V_S, S_MTE2, MTE2_S, S_MTE3,
  MTE3_S, MTE2_FIX, FIX_MTE2, FIX_S, M_S, FIX_MTE3, MTE1_FIX, FIX_MTE1, FIX_FIX, MAX
};
using TEventID = int8_t;

enum class RoundMode : uint8_t { CAST_NONE = 0, CAST_RINT, CAST_FLOOR, CAST_CEIL, CAST_ROUND, CAST_TRUNC, CAST_ODD };
enum class CMPMODE : uint8_t { LT = 0, GT, EQ, LE, GE, NE };
enum class SELMODE : uint8_t { VSEL_CMPMASK_SPR = 0, VSEL_TENSOR_SCALAR_MODE, VSEL_TENSOR_TENSOR_MODE };
enum class ReduceOrder : uint8_t { ORDER_VALUE_INDEX = 0, ORDER_INDEX_VALUE, ORDER_ONLY_VALUE, ORDER_ONLY_INDEX };
enum class MaskMode : uint8_t { NORMAL = 0, COUNTER };
enum class KernelMode : uint8_t { MIX_MODE = 0, AIC_MODE, AIV_MODE };

// Units (shared/ascendc.md conventions).
constexpr uint32_t ONE_BLK_SIZE = 32;           // bytes in a DataBlock
constexpr uint32_t ONE_REPEAT_BYTE_SIZE = 256;  // bytes in one repeat (8 blocks)
constexpr uint32_t DEFAULT_BLK_NUM = 8;         // blocks per repeat
constexpr uint8_t DEFAULT_REPEAT_STRIDE = 8;    // contiguous repeats, in blocks
constexpr uint8_t DEFAULT_BLK_STRIDE = 1;
constexpr int32_t MAX_REPEAT_TIMES = 255;

// Placeholder for the mask argument when isSetMask == false (the externally set mask is used).
constexpr uint64_t MASK_PLACEHOLDER = 0;

struct DataCopyParams {
  uint16_t blockCount = 1;
  uint16_t blockLen = 0;
  union { uint16_t srcGap = 0; uint16_t srcStride; };
  union { uint16_t dstGap = 0; uint16_t dstStride; };
  DataCopyParams() = default;
  DataCopyParams(uint16_t cnt, uint16_t len, uint16_t srcStride_, uint16_t dstStride_)
      : blockCount(cnt), blockLen(len), srcGap(srcStride_), dstGap(dstStride_) {}
};

struct GatherMaskParams {
  uint8_t src0BlockStride = 1;
  uint16_t repeatTimes = 0;
  uint16_t src0RepeatStride = 0;
  uint8_t src1RepeatStride = 0;
  GatherMaskParams() = default;
  GatherMaskParams(uint8_t blk, uint16_t rep, uint16_t src0_rep, uint8_t src1_rep)
      : src0BlockStride(blk), repeatTimes(rep), src0RepeatStride(src0_rep), src1RepeatStride(src1_rep) {}
};
enum class GatherMaskMode : uint8_t { V1 = 0, V2 = 1 };
constexpr GatherMaskMode defaultGatherMaskMode = GatherMaskMode::V1;

struct DataCopyExtParams {
  uint16_t blockCount = 1;
  uint32_t blockLen = 0;   // bytes
  uint32_t srcStride = 0;  // GM side: bytes; UB side: 32 B blocks
  uint32_t dstStride = 0;
  uint32_t rsv = 0;
  DataCopyExtParams() = default;
  DataCopyExtParams(uint16_t cnt, uint32_t len, uint32_t srcStride_, uint32_t dstStride_, uint32_t rsv_ = 0)
      : blockCount(cnt), blockLen(len), srcStride(srcStride_), dstStride(dstStride_), rsv(rsv_) {}
};

template <typename T>
struct DataCopyPadExtParams {
  bool isPad = false;
  uint8_t leftPadding = 0;   // elements
  uint8_t rightPadding = 0;  // elements
  T paddingValue = T(0);
  DataCopyPadExtParams() = default;
  DataCopyPadExtParams(bool isPad_, uint8_t left, uint8_t right, T value)
      : isPad(isPad_), leftPadding(left), rightPadding(right), paddingValue(value) {}
};

struct DataCopyPadParams {
  bool isPad = false;
  uint8_t leftPadding = 0;
  uint8_t rightPadding = 0;
  uint64_t paddingValue = 0;  // the low sizeof(T) bytes are used
  DataCopyPadParams() = default;
  DataCopyPadParams(bool isPad_, uint8_t left, uint8_t right, uint64_t value)
      : isPad(isPad_), leftPadding(left), rightPadding(right), paddingValue(value) {}
};

struct BinaryRepeatParams {
  uint8_t dstBlkStride = 1, src0BlkStride = 1, src1BlkStride = 1;
  uint8_t dstRepStride = 8, src0RepStride = 8, src1RepStride = 8;
  bool repeatStrideMode = false, strideSizeMode = false;
  BinaryRepeatParams() = default;
  BinaryRepeatParams(uint8_t dstBlk, uint8_t src0Blk, uint8_t src1Blk, uint8_t dstRep, uint8_t src0Rep, uint8_t src1Rep)
      : dstBlkStride(dstBlk), src0BlkStride(src0Blk), src1BlkStride(src1Blk),
        dstRepStride(dstRep), src0RepStride(src0Rep), src1RepStride(src1Rep) {}
};

// Brcb: block / repeat strides of dst, in 32 B blocks.
struct BrcbRepeatParams {
  uint16_t dstBlkStride = 1, dstRepStride = 8;
  BrcbRepeatParams() = default;
  BrcbRepeatParams(uint16_t dstBlk, uint16_t dstRep) : dstBlkStride(dstBlk), dstRepStride(dstRep) {}
};

struct UnaryRepeatParams {
  uint16_t dstBlkStride = 1, srcBlkStride = 1;
  uint8_t dstRepStride = 8, srcRepStride = 8;
  bool repeatStrideMode = false, strideSizeMode = false, halfBlock = false;
  UnaryRepeatParams() = default;
  UnaryRepeatParams(uint16_t dstBlk, uint16_t srcBlk, uint8_t dstRep, uint8_t srcRep)
      : dstBlkStride(dstBlk), srcBlkStride(srcBlk), dstRepStride(dstRep), srcRepStride(srcRep) {}
};

}  // namespace AscendC
