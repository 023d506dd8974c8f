// Vector instructions on UB tensors (shared/ascendc.md §4): count form, mask/repeat form and the
// operator overloads. Dtype sets are the 2201 ones (static_assert). All work is done out of line in
// ascendc_vec*.cpp (runtime-dispatched AVX-512 / AVX2 / portable kernels).
#pragma once
#include <cstdint>
#include <type_traits>

#include "ascendc_vec.h"
#include "kernel_tensor.h"

namespace AscendC {

namespace vec_detail {
namespace H = ascendc_host;
template <typename T>
using Scalar = std::type_identity_t<T>;
}  // namespace vec_detail

// ---------------------------------------------------------------- binary: dst = src0 op src1
#define ASCENDC_VEC_BINARY(NAME, OP, ...)                                                                      \
  template <typename T>                                                                                        \
  inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,          \
                   const int32_t& count) {                                                                      \
    static_assert(ascendc_host::OneOf<T, __VA_ARGS__>, #NAME ": dtype not supported on 2201");                 \
    ascendc_host::VBinary(ascendc_host::BinOp::OP, ascendc_host::DTypeOf<T>, dst.Operand(), src0.Operand(),    \
                          src1.Operand(), count);                                                               \
  }                                                                                                            \
  template <typename T, bool isSetMask = true>                                                                 \
  inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,          \
                   const uint64_t mask[], const uint8_t repeatTime, const BinaryRepeatParams& p) {             \
    static_assert(ascendc_host::OneOf<T, __VA_ARGS__>, #NAME ": dtype not supported on 2201");                 \
    ascendc_host::VBinaryRep(ascendc_host::BinOp::OP, ascendc_host::DTypeOf<T>, dst.Operand(), src0.Operand(), \
                             src1.Operand(), ascendc_host::MakeMask<isSetMask>(mask), repeatTime,              \
                             ascendc_host::Rep(p));                                                             \
  }                                                                                                            \
  template <typename T, bool isSetMask = true>                                                                 \
  inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,          \
                   uint64_t mask, const uint8_t repeatTime, const BinaryRepeatParams& p) {                     \
    static_assert(ascendc_host::OneOf<T, __VA_ARGS__>, #NAME ": dtype not supported on 2201");                 \
    ascendc_host::VBinaryRep(ascendc_host::BinOp::OP, ascendc_host::DTypeOf<T>, dst.Operand(), src0.Operand(), \
                             src1.Operand(), ascendc_host::MakeMask<isSetMask>(mask), repeatTime,              \
                             ascendc_host::Rep(p));                                                             \
  }

ASCENDC_VEC_BINARY(Add, Add, int16_t, half, int32_t, float)
ASCENDC_VEC_BINARY(Sub, Sub, int16_t, half, int32_t, float)
ASCENDC_VEC_BINARY(Mul, Mul, int16_t, half, int32_t, float)
ASCENDC_VEC_BINARY(Div, Div, half, float)
ASCENDC_VEC_BINARY(Max, Max, int16_t, half, int32_t, float)
ASCENDC_VEC_BINARY(Min, Min, int16_t, half, int32_t, float)
ASCENDC_VEC_BINARY(And, And, int16_t, uint16_t)
ASCENDC_VEC_BINARY(Or, Or, int16_t, uint16_t)
#undef ASCENDC_VEC_BINARY

// ---------------------------------------------------------------- tensor-scalar: dst = op(src, scalar)
#define ASCENDC_VEC_SCALAR(NAME, OP, ...)                                                                      \
  template <typename T, bool isSetMask = true>                                                                 \
  inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const vec_detail::Scalar<T>& scalar,  \
                   const int32_t& count) {                                                                      \
    static_assert(ascendc_host::OneOf<T, __VA_ARGS__>, #NAME ": dtype not supported on 2201");                 \
    ascendc_host::VScalar(ascendc_host::ScalOp::OP, ascendc_host::DTypeOf<T>, dst.Operand(), src.Operand(),    \
                          &scalar, count);                                                                      \
  }                                                                                                            \
  template <typename T, bool isSetMask = true>                                                                 \
  inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const vec_detail::Scalar<T>& scalar,  \
                   const uint64_t mask[], const uint8_t repeatTime, const UnaryRepeatParams& p) {              \
    static_assert(ascendc_host::OneOf<T, __VA_ARGS__>, #NAME ": dtype not supported on 2201");                 \
    ascendc_host::VScalarRep(ascendc_host::ScalOp::OP, ascendc_host::DTypeOf<T>, dst.Operand(), src.Operand(), \
                             &scalar, ascendc_host::MakeMask<isSetMask>(mask), repeatTime, ascendc_host::Rep(p)); \
  }                                                                                                            \
  template <typename T, bool isSetMask = true>                                                                 \
  inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const vec_detail::Scalar<T>& scalar,  \
                   uint64_t mask, const uint8_t repeatTime, const UnaryRepeatParams& p) {                      \
    static_assert(ascendc_host::OneOf<T, __VA_ARGS__>, #NAME ": dtype not supported on 2201");                 \
    ascendc_host::VScalarRep(ascendc_host::ScalOp::OP, ascendc_host::DTypeOf<T>, dst.Operand(), src.Operand(), \
                             &scalar, ascendc_host::MakeMask<isSetMask>(mask), repeatTime, ascendc_host::Rep(p)); \
  }

ASCENDC_VEC_SCALAR(Adds, Adds, int16_t, half, int32_t, float)
ASCENDC_VEC_SCALAR(Muls, Muls, int16_t, half, int32_t, float)
ASCENDC_VEC_SCALAR(Maxs, Maxs, int16_t, half, int32_t, float)
ASCENDC_VEC_SCALAR(Mins, Mins, int16_t, half, int32_t, float)
ASCENDC_VEC_SCALAR(LeakyRelu, LeakyRelu, half, float)
ASCENDC_VEC_SCALAR(Axpy, Axpy, half, float)  // dst = src * scalar + dst
#undef ASCENDC_VEC_SCALAR

// Shifts take the shift count as the scalar (2201: int16/uint16/int32/uint32).
template <typename T, bool isSetMask = true>
inline void ShiftLeft(const LocalTensor<T>& dst, const LocalTensor<T>& src, const vec_detail::Scalar<T>& n,
                      const int32_t& count) {
  static_assert(ascendc_host::OneOf<T, int16_t, uint16_t, int32_t, uint32_t>, "ShiftLeft: dtype not supported");
  ascendc_host::VScalar(ascendc_host::ScalOp::ShiftLeft, ascendc_host::DTypeOf<T>, dst.Operand(), src.Operand(), &n,
                        count);
}
template <typename T, bool isSetMask = true>
inline void ShiftRight(const LocalTensor<T>& dst, const LocalTensor<T>& src, const vec_detail::Scalar<T>& n,
                       const int32_t& count) {
  static_assert(ascendc_host::OneOf<T, int16_t, uint16_t, int32_t, uint32_t>, "ShiftRight: dtype not supported");
  ascendc_host::VScalar(ascendc_host::ScalOp::ShiftRight, ascendc_host::DTypeOf<T>, dst.Operand(), src.Operand(), &n,
                        count);
}

// ---------------------------------------------------------------- unary: dst = op(src)
#define ASCENDC_VEC_UNARY(NAME, OP, ...)                                                                       \
  template <typename T>                                                                                        \
  inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t& count) {               \
    static_assert(ascendc_host::OneOf<T, __VA_ARGS__>, #NAME ": dtype not supported on 2201");                 \
    ascendc_host::VUnary(ascendc_host::UnOp::OP, ascendc_host::DTypeOf<T>, dst.Operand(), src.Operand(), count); \
  }                                                                                                            \
  template <typename T, bool isSetMask = true>                                                                 \
  inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const uint64_t mask[],                \
                   const uint8_t repeatTime, const UnaryRepeatParams& p) {                                     \
    static_assert(ascendc_host::OneOf<T, __VA_ARGS__>, #NAME ": dtype not supported on 2201");                 \
    ascendc_host::VUnaryRep(ascendc_host::UnOp::OP, ascendc_host::DTypeOf<T>, dst.Operand(), src.Operand(),    \
                            ascendc_host::MakeMask<isSetMask>(mask), repeatTime, ascendc_host::Rep(p));        \
  }                                                                                                            \
  template <typename T, bool isSetMask = true>                                                                 \
  inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, uint64_t mask,                        \
                   const uint8_t repeatTime, const UnaryRepeatParams& p) {                                     \
    static_assert(ascendc_host::OneOf<T, __VA_ARGS__>, #NAME ": dtype not supported on 2201");                 \
    ascendc_host::VUnaryRep(ascendc_host::UnOp::OP, ascendc_host::DTypeOf<T>, dst.Operand(), src.Operand(),    \
                            ascendc_host::MakeMask<isSetMask>(mask), repeatTime, ascendc_host::Rep(p));        \
  }

ASCENDC_VEC_UNARY(Relu, Relu, half, int32_t, float)
ASCENDC_VEC_UNARY(Exp, Exp, half, float)
ASCENDC_VEC_UNARY(Ln, Ln, half, float)
ASCENDC_VEC_UNARY(Sqrt, Sqrt, half, float)
ASCENDC_VEC_UNARY(Rsqrt, Rsqrt, half, float)
ASCENDC_VEC_UNARY(Reciprocal, Reciprocal, half, float)
ASCENDC_VEC_UNARY(Abs, Abs, half, float)
ASCENDC_VEC_UNARY(Not, Not, int16_t, uint16_t)
#undef ASCENDC_VEC_UNARY

// ---------------------------------------------------------------- Duplicate
template <typename T>
inline void Duplicate(const LocalTensor<T>& dst, const vec_detail::Scalar<T>& scalar, const int32_t& count) {
  static_assert(ascendc_host::OneOf<T, int16_t, uint16_t, half, bfloat16_t, int32_t, uint32_t, float>,
                "Duplicate: dtype not supported on 2201");
  ascendc_host::VDup(ascendc_host::DTypeOf<T>, dst.Operand(), &scalar, count);
}
template <typename T, bool isSetMask = true>
inline void Duplicate(const LocalTensor<T>& dst, const vec_detail::Scalar<T>& scalar, const uint64_t mask[],
                      const uint8_t repeatTime, const uint16_t dstBlockStride, const uint8_t dstRepeatStride) {
  static_assert(ascendc_host::OneOf<T, int16_t, uint16_t, half, bfloat16_t, int32_t, uint32_t, float>,
                "Duplicate: dtype not supported on 2201");
  ascendc_host::VDupRep(ascendc_host::DTypeOf<T>, dst.Operand(), &scalar, ascendc_host::MakeMask<isSetMask>(mask),
                        repeatTime, dstBlockStride, dstRepeatStride);
}
template <typename T, bool isSetMask = true>
inline void Duplicate(const LocalTensor<T>& dst, const vec_detail::Scalar<T>& scalar, uint64_t mask,
                      const uint8_t repeatTime, const uint16_t dstBlockStride, const uint8_t dstRepeatStride) {
  static_assert(ascendc_host::OneOf<T, int16_t, uint16_t, half, bfloat16_t, int32_t, uint32_t, float>,
                "Duplicate: dtype not supported on 2201");
  ascendc_host::VDupRep(ascendc_host::DTypeOf<T>, dst.Operand(), &scalar, ascendc_host::MakeMask<isSetMask>(mask),
                        repeatTime, dstBlockStride, dstRepeatStride);
}

// ---------------------------------------------------------------- Brcb
// Per repeat: 8 consecutive elements of src, each filling one 32 B block of dst (blocks dstBlkStride
// apart, repeats dstRepStride apart). The usual way to give each row of a tile its own scalar operand in
// a repeat-form instruction (src1BlkStride = 0).
template <typename T>
inline void Brcb(const LocalTensor<T>& dst, const LocalTensor<T>& src, const uint8_t repeatTime,
                 const BrcbRepeatParams& p) {
  static_assert(ascendc_host::OneOf<T, int16_t, uint16_t, half, bfloat16_t, int32_t, uint32_t, float>,
                "Brcb: dtype not supported on 2201");
  ascendc_host::VBrcb(ascendc_host::DTypeOf<T>, dst.Operand(), src.Operand(), repeatTime, p.dstBlkStride,
                      p.dstRepStride);
}

// ---------------------------------------------------------------- Cast (pairs checked at run time, §4.3)
template <typename T, typename U>
inline void Cast(const LocalTensor<T>& dst, const LocalTensor<U>& src, const RoundMode& roundMode,
                 const uint32_t count) {
  ascendc_host::VCast(ascendc_host::DTypeOf<T>, ascendc_host::DTypeOf<U>, roundMode, dst.Operand(), src.Operand(),
                      count);
}
template <typename T, typename U, bool isSetMask = true>
inline void Cast(const LocalTensor<T>& dst, const LocalTensor<U>& src, const RoundMode& roundMode,
                 const uint64_t mask[], const uint8_t repeatTime, const UnaryRepeatParams& p) {
  ascendc_host::VCastRep(ascendc_host::DTypeOf<T>, ascendc_host::DTypeOf<U>, roundMode, dst.Operand(), src.Operand(),
                         ascendc_host::MakeMask<isSetMask>(mask), repeatTime, ascendc_host::Rep(p));
}
template <typename T, typename U, bool isSetMask = true>
inline void Cast(const LocalTensor<T>& dst, const LocalTensor<U>& src, const RoundMode& roundMode, uint64_t mask,
                 const uint8_t repeatTime, const UnaryRepeatParams& p) {
  ascendc_host::VCastRep(ascendc_host::DTypeOf<T>, ascendc_host::DTypeOf<U>, roundMode, dst.Operand(), src.Operand(),
                         ascendc_host::MakeMask<isSetMask>(mask), repeatTime, ascendc_host::Rep(p));
}

// ---------------------------------------------------------------- Compare / CompareScalar / Select
#define ASCENDC_CMP_TYPES half, float, int32_t
template <typename T, typename U>
inline void Compare(const LocalTensor<U>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1, CMPMODE mode,
                    uint32_t count) {
  static_assert(ascendc_host::OneOf<T, ASCENDC_CMP_TYPES>, "Compare: dtype not supported on 2201");
  static_assert(ascendc_host::OneOf<U, uint8_t>, "Compare: dst must be uint8_t");
  auto b = src1.Operand();
  ascendc_host::VCompare(ascendc_host::DTypeOf<T>, mode, dst.Operand(), src0.Operand(), &b, nullptr, count);
}
template <typename T, typename U, bool isSetMask = true>
inline void Compare(const LocalTensor<U>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1, CMPMODE mode,
                    const uint64_t mask[], uint8_t repeatTime, const BinaryRepeatParams& p) {
  static_assert(ascendc_host::OneOf<T, ASCENDC_CMP_TYPES>, "Compare: dtype not supported on 2201");
  auto b = src1.Operand();
  ascendc_host::VCompareRep(ascendc_host::DTypeOf<T>, mode, dst.Operand(), src0.Operand(), &b, nullptr,
                            ascendc_host::MakeMask<isSetMask>(mask), repeatTime, ascendc_host::Rep(p));
}
template <typename T, typename U, bool isSetMask = true>
inline void Compare(const LocalTensor<U>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1, CMPMODE mode,
                    uint64_t mask, uint8_t repeatTime, const BinaryRepeatParams& p) {
  static_assert(ascendc_host::OneOf<T, ASCENDC_CMP_TYPES>, "Compare: dtype not supported on 2201");
  auto b = src1.Operand();
  ascendc_host::VCompareRep(ascendc_host::DTypeOf<T>, mode, dst.Operand(), src0.Operand(), &b, nullptr,
                            ascendc_host::MakeMask<isSetMask>(mask), repeatTime, ascendc_host::Rep(p));
}
template <typename T, typename U>
inline void CompareScalar(const LocalTensor<U>& dst, const LocalTensor<T>& src0, const vec_detail::Scalar<T> s,
                          CMPMODE mode, uint32_t count) {
  static_assert(ascendc_host::OneOf<T, ASCENDC_CMP_TYPES>, "CompareScalar: dtype not supported on 2201");
  ascendc_host::VCompare(ascendc_host::DTypeOf<T>, mode, dst.Operand(), src0.Operand(), nullptr, &s, count);
}
template <typename T, typename U, bool isSetMask = true>
inline void CompareScalar(const LocalTensor<U>& dst, const LocalTensor<T>& src0, const vec_detail::Scalar<T> s,
                          CMPMODE mode, const uint64_t mask[], uint8_t repeatTime, const UnaryRepeatParams& p) {
  static_assert(ascendc_host::OneOf<T, ASCENDC_CMP_TYPES>, "CompareScalar: dtype not supported on 2201");
  ascendc_host::VCompareRep(ascendc_host::DTypeOf<T>, mode, dst.Operand(), src0.Operand(), nullptr, &s,
                            ascendc_host::MakeMask<isSetMask>(mask), repeatTime, ascendc_host::Rep(p));
}
template <typename T, typename U, bool isSetMask = true>
inline void CompareScalar(const LocalTensor<U>& dst, const LocalTensor<T>& src0, const vec_detail::Scalar<T> s,
                          CMPMODE mode, uint64_t mask, uint8_t repeatTime, const UnaryRepeatParams& p) {
  static_assert(ascendc_host::OneOf<T, ASCENDC_CMP_TYPES>, "CompareScalar: dtype not supported on 2201");
  ascendc_host::VCompareRep(ascendc_host::DTypeOf<T>, mode, dst.Operand(), src0.Operand(), nullptr, &s,
                            ascendc_host::MakeMask<isSetMask>(mask), repeatTime, ascendc_host::Rep(p));
}
#undef ASCENDC_CMP_TYPES

template <typename T, typename U>
inline void Select(const LocalTensor<T>& dst, const LocalTensor<U>& selMask, const LocalTensor<T>& src0,
                   const LocalTensor<T>& src1, SELMODE mode, uint32_t count) {
  static_assert(ascendc_host::OneOf<T, half, float>, "Select: dtype not supported on 2201");
  auto b = src1.Operand();
  ascendc_host::VSelect(ascendc_host::DTypeOf<T>, ascendc_host::DTypeOf<U>, mode, dst.Operand(), selMask.Operand(),
                        src0.Operand(), &b, nullptr, count);
}
template <typename T, typename U>
inline void Select(const LocalTensor<T>& dst, const LocalTensor<U>& selMask, const LocalTensor<T>& src0,
                   const vec_detail::Scalar<T> src1, SELMODE mode, uint32_t count) {
  static_assert(ascendc_host::OneOf<T, half, float>, "Select: dtype not supported on 2201");
  ascendc_host::VSelect(ascendc_host::DTypeOf<T>, ascendc_host::DTypeOf<U>, mode, dst.Operand(), selMask.Operand(),
                        src0.Operand(), nullptr, &src1, count);
}
template <typename T, typename U, bool isSetMask = true>
inline void Select(const LocalTensor<T>& dst, const LocalTensor<U>& selMask, const LocalTensor<T>& src0,
                   const LocalTensor<T>& src1, SELMODE mode, const uint64_t mask[], uint8_t repeatTime,
                   const BinaryRepeatParams& p) {
  static_assert(ascendc_host::OneOf<T, half, float>, "Select: dtype not supported on 2201");
  auto b = src1.Operand();
  ascendc_host::VSelectRep(ascendc_host::DTypeOf<T>, ascendc_host::DTypeOf<U>, mode, dst.Operand(),
                           selMask.Operand(), src0.Operand(), &b, nullptr, ascendc_host::MakeMask<isSetMask>(mask),
                           repeatTime, ascendc_host::Rep(p));
}
template <typename T, typename U, bool isSetMask = true>
inline void Select(const LocalTensor<T>& dst, const LocalTensor<U>& selMask, const LocalTensor<T>& src0,
                   const LocalTensor<T>& src1, SELMODE mode, uint64_t mask, uint8_t repeatTime,
                   const BinaryRepeatParams& p) {
  static_assert(ascendc_host::OneOf<T, half, float>, "Select: dtype not supported on 2201");
  auto b = src1.Operand();
  ascendc_host::VSelectRep(ascendc_host::DTypeOf<T>, ascendc_host::DTypeOf<U>, mode, dst.Operand(),
                           selMask.Operand(), src0.Operand(), &b, nullptr, ascendc_host::MakeMask<isSetMask>(mask),
                           repeatTime, ascendc_host::Rep(p));
}
template <typename T, typename U, bool isSetMask = true>
inline void Select(const LocalTensor<T>& dst, const LocalTensor<U>& selMask, const LocalTensor<T>& src0,
                   const vec_detail::Scalar<T> src1, SELMODE mode, uint64_t mask, uint8_t repeatTime,
                   const BinaryRepeatParams& p) {
  static_assert(ascendc_host::OneOf<T, half, float>, "Select: dtype not supported on 2201");
  ascendc_host::VSelectRep(ascendc_host::DTypeOf<T>, ascendc_host::DTypeOf<U>, mode, dst.Operand(),
                           selMask.Operand(), src0.Operand(), nullptr, &src1, ascendc_host::MakeMask<isSetMask>(mask),
                           repeatTime, ascendc_host::Rep(p));
}

// ---------------------------------------------------------------- reductions (2201: half/float)
#define ASCENDC_WHOLE_REDUCE(NAME, OP, ORDER_PARAM, ORDER_ARG)                                                  \
  template <typename T, bool isSetMask = true>                                                                 \
  inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const uint64_t mask[],                \
                   const int32_t repeatTime, const int32_t dstRepStride, const int32_t srcBlkStride,           \
                   const int32_t srcRepStride ORDER_PARAM) {                                                   \
    static_assert(ascendc_host::OneOf<T, half, float>, #NAME ": dtype not supported on 2201");                 \
    ascendc_host::VWholeReduce(ascendc_host::RedOp::OP, ascendc_host::DTypeOf<T>, dst.Operand(), src.Operand(), \
                               ascendc_host::MakeMask<isSetMask>(mask), repeatTime, dstRepStride, srcBlkStride, \
                               srcRepStride, ORDER_ARG);                                                        \
  }                                                                                                            \
  template <typename T, bool isSetMask = true>                                                                 \
  inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t mask,                   \
                   const int32_t repeatTime, const int32_t dstRepStride, const int32_t srcBlkStride,           \
                   const int32_t srcRepStride ORDER_PARAM) {                                                   \
    static_assert(ascendc_host::OneOf<T, half, float>, #NAME ": dtype not supported on 2201");                 \
    ascendc_host::VWholeReduce(ascendc_host::RedOp::OP, ascendc_host::DTypeOf<T>, dst.Operand(), src.Operand(), \
                               ascendc_host::MakeMask<isSetMask>(uint64_t(uint32_t(mask))), repeatTime,         \
                               dstRepStride, srcBlkStride, srcRepStride, ORDER_ARG);                            \
  }
#define ASCENDC_COMMA ,
ASCENDC_WHOLE_REDUCE(WholeReduceSum, Sum, , ReduceOrder::ORDER_ONLY_VALUE)
ASCENDC_WHOLE_REDUCE(WholeReduceMax, Max, ASCENDC_COMMA ReduceOrder order = ReduceOrder::ORDER_VALUE_INDEX, order)
ASCENDC_WHOLE_REDUCE(WholeReduceMin, Min, ASCENDC_COMMA ReduceOrder order = ReduceOrder::ORDER_VALUE_INDEX, order)
#undef ASCENDC_COMMA
#undef ASCENDC_WHOLE_REDUCE

#define ASCENDC_BLOCK_REDUCE(NAME, OP)                                                                          \
  template <typename T, bool isSetMask = true>                                                                 \
  inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t repeatTime,             \
                   const uint64_t mask[], const int32_t dstRepStride, const int32_t srcBlkStride,              \
                   const int32_t srcRepStride) {                                                               \
    static_assert(ascendc_host::OneOf<T, half, float>, #NAME ": dtype not supported on 2201");                 \
    ascendc_host::VBlockReduce(ascendc_host::RedOp::OP, ascendc_host::DTypeOf<T>, dst.Operand(), src.Operand(), \
                               ascendc_host::MakeMask<isSetMask>(mask), repeatTime, dstRepStride, srcBlkStride, \
                               srcRepStride);                                                                   \
  }                                                                                                            \
  template <typename T, bool isSetMask = true>                                                                 \
  inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t repeatTime,             \
                   const int32_t mask, const int32_t dstRepStride, const int32_t srcBlkStride,                 \
                   const int32_t srcRepStride) {                                                               \
    static_assert(ascendc_host::OneOf<T, half, float>, #NAME ": dtype not supported on 2201");                 \
    ascendc_host::VBlockReduce(ascendc_host::RedOp::OP, ascendc_host::DTypeOf<T>, dst.Operand(), src.Operand(), \
                               ascendc_host::MakeMask<isSetMask>(uint64_t(uint32_t(mask))), repeatTime,         \
                               dstRepStride, srcBlkStride, srcRepStride);                                       \
  }
ASCENDC_BLOCK_REDUCE(BlockReduceSum, Sum)
ASCENDC_BLOCK_REDUCE(BlockReduceMax, Max)
ASCENDC_BLOCK_REDUCE(BlockReduceMin, Min)
#undef ASCENDC_BLOCK_REDUCE

template <typename T, bool isSetMask = true>
inline void ReduceSum(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<T>& tmp,
                      const int32_t count) {
  static_assert(ascendc_host::OneOf<T, half, float>, "ReduceSum: dtype not supported on 2201");
  ascendc_host::VReduce(ascendc_host::RedOp::Sum, ascendc_host::DTypeOf<T>, dst.Operand(), src.Operand(),
                        tmp.Operand(), count, false);
}
template <typename T>
inline void ReduceSum(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<T>& tmp,
                      const uint64_t mask[], const int32_t repeatTime, const int32_t srcRepStride) {
  static_assert(ascendc_host::OneOf<T, half, float>, "ReduceSum: dtype not supported on 2201");
  ascendc_host::VReduceRep(ascendc_host::RedOp::Sum, ascendc_host::DTypeOf<T>, dst.Operand(), src.Operand(),
                           tmp.Operand(), ascendc_host::MaskArg::Bits(mask), repeatTime, srcRepStride, false);
}
template <typename T>
inline void ReduceSum(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<T>& tmp,
                      const int32_t mask, const int32_t repeatTime, const int32_t srcRepStride) {
  static_assert(ascendc_host::OneOf<T, half, float>, "ReduceSum: dtype not supported on 2201");
  ascendc_host::VReduceRep(ascendc_host::RedOp::Sum, ascendc_host::DTypeOf<T>, dst.Operand(), src.Operand(),
                           tmp.Operand(), ascendc_host::MaskArg::Cont(uint32_t(mask)), repeatTime, srcRepStride, false);
}
#define ASCENDC_REDUCE_MAXMIN(NAME, OP)                                                                         \
  template <typename T>                                                                                        \
  inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<T>& tmp,            \
                   const int32_t count, bool calIndex = false) {                                               \
    static_assert(ascendc_host::OneOf<T, half, float>, #NAME ": dtype not supported on 2201");                 \
    ascendc_host::VReduce(ascendc_host::RedOp::OP, ascendc_host::DTypeOf<T>, dst.Operand(), src.Operand(),     \
                          tmp.Operand(), count, calIndex);                                                      \
  }                                                                                                            \
  template <typename T>                                                                                        \
  inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<T>& tmp,            \
                   const uint64_t mask[], const int32_t repeatTime, const int32_t srcRepStride,                \
                   bool calIndex = false) {                                                                    \
    static_assert(ascendc_host::OneOf<T, half, float>, #NAME ": dtype not supported on 2201");                 \
    ascendc_host::VReduceRep(ascendc_host::RedOp::OP, ascendc_host::DTypeOf<T>, dst.Operand(), src.Operand(),  \
                             tmp.Operand(), ascendc_host::MaskArg::Bits(mask), repeatTime, srcRepStride, calIndex); \
  }                                                                                                            \
  template <typename T>                                                                                        \
  inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<T>& tmp,            \
                   const int32_t mask, const int32_t repeatTime, const int32_t srcRepStride,                   \
                   bool calIndex = false) {                                                                    \
    static_assert(ascendc_host::OneOf<T, half, float>, #NAME ": dtype not supported on 2201");                 \
    ascendc_host::VReduceRep(ascendc_host::RedOp::OP, ascendc_host::DTypeOf<T>, dst.Operand(), src.Operand(),  \
                             tmp.Operand(), ascendc_host::MaskArg::Cont(uint32_t(mask)), repeatTime, srcRepStride, \
                             calIndex);                                                                         \
  }
ASCENDC_REDUCE_MAXMIN(ReduceMax, Max)
ASCENDC_REDUCE_MAXMIN(ReduceMin, Min)
#undef ASCENDC_REDUCE_MAXMIN

// ---------------------------------------------------------------- Gather (count form)
// dst[i] = the element of src at byte offset srcBaseAddr + srcOffset[i] (2201: 16/32-bit types).
template <typename T>
inline void Gather(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<uint32_t>& srcOffset,
                   const uint32_t srcBaseAddr, const uint32_t count) {
  static_assert(ascendc_host::OneOf<T, int16_t, uint16_t, half, bfloat16_t, int32_t, uint32_t, float>,
                "Gather: dtype not supported on 2201");
  ascendc_host::VGather(ascendc_host::DTypeOf<T>, dst.Operand(), src.Operand(), srcOffset.Operand(), srcBaseAddr,
                        count);
}

// Scatter (count form): the element of dst at byte offset dstBaseAddr + dstOffset[i] = src[i]. Offsets
// that repeat leave one of the values (unspecified which): callers keep them distinct.
template <typename T>
inline void Scatter(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<uint32_t>& dstOffset,
                    const uint32_t dstBaseAddr, const uint32_t count) {
  static_assert(ascendc_host::OneOf<T, int16_t, uint16_t, half, bfloat16_t, int32_t, uint32_t, float>,
                "Scatter: dtype not supported on 2201");
  ascendc_host::VScatter(ascendc_host::DTypeOf<T>, dst.Operand(), src.Operand(), dstOffset.Operand(), dstBaseAddr,
                         count);
}

// ---------------------------------------------------------------- GatherMask (user pattern)
// Packs the elements of src0 whose src1Pattern bit is set into dst, in order; rsvdCnt = how many.
// U is uint16_t for 16-bit T, uint32_t for 32-bit T. The model covers counter mode (reduceMode =
// true; mask = the element count; repeatTimes = 1) — see VGatherMask.
template <typename T, typename U, GatherMaskMode mode = defaultGatherMaskMode>
inline void GatherMask(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<U>& src1Pattern,
                       const bool reduceMode, const uint32_t mask, const GatherMaskParams& p, uint64_t& rsvdCnt) {
  static_assert(ascendc_host::OneOf<T, int16_t, uint16_t, half, bfloat16_t, int32_t, uint32_t, float>,
                "GatherMask: dtype not supported on 2201");
  static_assert(sizeof(U) == sizeof(T) && ascendc_host::OneOf<U, uint16_t, uint32_t>,
                "GatherMask: src1Pattern must be uint16_t for 16-bit and uint32_t for 32-bit elements");
  rsvdCnt = ascendc_host::VGatherMask(ascendc_host::DTypeOf<T>, dst.Operand(), src0.Operand(), src1Pattern.Operand(),
                                      reduceMode, mask, p.src0BlockStride, p.repeatTimes);
}

// ---------------------------------------------------------------- sorting (2201: half / float scores)
// Sort32: each repeat sorts 32 scores (src0) with their uint32 indices (src1) into 32 (score, index)
// structures of 8 bytes, descending by score; equal scores keep their order. MrgSort merges 2-4 queues of
// such structures (each already sorted) into one; with isExhaustedSuspension it stops as soon as one queue
// is used up and reports in sortedNum how many structures it took from each. Extract splits structures
// back into scores and indices, 32 per repeat.
template <typename T>
struct MrgSortSrcList {
  MrgSortSrcList() = default;
  MrgSortSrcList(const LocalTensor<T>& a, const LocalTensor<T>& b, const LocalTensor<T>& c = LocalTensor<T>(),
                 const LocalTensor<T>& d = LocalTensor<T>())
      : src1(a), src2(b), src3(c), src4(d) {}
  LocalTensor<T> src1, src2, src3, src4;
};

template <typename T>
inline void Sort32(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<uint32_t>& src1,
                   const int32_t repeatTime) {
  static_assert(ascendc_host::OneOf<T, half, float>, "Sort32: scores must be half or float on 2201");
  ascendc_host::VSort32(ascendc_host::DTypeOf<T>, dst.Operand(), src0.Operand(), src1.Operand(), repeatTime);
}

template <typename T, bool isExhaustedSuspension = false>
inline void MrgSort(const LocalTensor<T>& dst, const MrgSortSrcList<T>& sortList, const uint16_t elementCountList[4],
                    uint32_t sortedNum[4], uint16_t validBit, const int32_t repeatTime) {
  static_assert(ascendc_host::OneOf<T, half, float>, "MrgSort: scores must be half or float on 2201");
  const ascendc_host::LocalOperand ops[4] = {sortList.src1.Operand(), sortList.src2.Operand(),
                                             sortList.src3.Operand(), sortList.src4.Operand()};
  const ascendc_host::LocalOperand* const src[4] = {&ops[0], &ops[1], &ops[2], &ops[3]};
  ascendc_host::VMrgSort(ascendc_host::DTypeOf<T>, dst.Operand(), src, elementCountList, sortedNum, validBit,
                         repeatTime, isExhaustedSuspension);
}

template <typename T>
inline void Extract(const LocalTensor<T>& dstValue, const LocalTensor<uint32_t>& dstIndex, const LocalTensor<T>& sorted,
                    const int32_t repeatTime) {
  static_assert(ascendc_host::OneOf<T, half, float>, "Extract: scores must be half or float on 2201");
  ascendc_host::VExtract(ascendc_host::DTypeOf<T>, dstValue.Operand(), dstIndex.Operand(), sorted.Operand(),
                         repeatTime);
}

// ---------------------------------------------------------------- mask register
template <typename T, MaskMode mode = MaskMode::NORMAL>
inline void SetVectorMask(uint64_t maskHigh, uint64_t maskLow) {
  ascendc_host::VSetMask(ascendc_host::DTypeOf<T>, mode == MaskMode::COUNTER, maskHigh, maskLow);
}
template <typename T, MaskMode mode = MaskMode::NORMAL>
inline void SetVectorMask(int32_t len) {
  ascendc_host::VSetMaskLen(ascendc_host::DTypeOf<T>, mode == MaskMode::COUNTER, len);
}
inline void SetMaskCount() { ascendc_host::CurrentCore().mask_counter_mode = true; }
inline void SetMaskNorm() { ascendc_host::CurrentCore().mask_counter_mode = false; }
inline void ResetMask() {
  auto& c = ascendc_host::CurrentCore();
  c.mask_lo = c.mask_hi = ~0ull;
}

// ---------------------------------------------------------------- operator overloads
namespace detail {
template <typename T>
void EvalExpr(const LocalTensor<T>& dst, const BinaryExpr<T>& e) {
  using H = ascendc_host::BinOp;
  static constexpr H ops[] = {H::Add, H::Sub, H::Mul, H::Div, H::Max, H::Min, H::And, H::Or};
  ascendc_host::VBinary(ops[int(e.op)], ascendc_host::DTypeOf<T>, dst.Operand(), e.a.Operand(), e.b.Operand(),
                        dst.GetSize());
}
}  // namespace detail

}  // namespace AscendC
