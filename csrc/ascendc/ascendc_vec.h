// Internal, non-template interface of the vector instructions (implemented in ascendc_vec*.cpp).
// The kernel-facing templates in kernel_vec.h check dtypes at compile time and call these.
#pragma once
#include <cstdint>

#include "ascendc_core_state.h"

namespace ascendc_host {

enum class DT : uint8_t { I8 = 0, U8, I16, U16, F16, BF16, I32, U32, F32, I64, U64, F64, NUM };
constexpr int kNumDT = int(DT::NUM);

template <typename T> struct DTypeOfT;
#define ASCENDC_DT(T, V) template <> struct DTypeOfT<T> { static constexpr DT value = DT::V; };
ASCENDC_DT(int8_t, I8) ASCENDC_DT(uint8_t, U8) ASCENDC_DT(int16_t, I16) ASCENDC_DT(uint16_t, U16)
ASCENDC_DT(half, F16) ASCENDC_DT(bfloat16_t, BF16) ASCENDC_DT(int32_t, I32) ASCENDC_DT(uint32_t, U32)
ASCENDC_DT(float, F32) ASCENDC_DT(int64_t, I64) ASCENDC_DT(uint64_t, U64) ASCENDC_DT(double, F64)
#undef ASCENDC_DT
template <typename T> constexpr DT DTypeOf = DTypeOfT<T>::value;

template <typename T, typename... Us> constexpr bool OneOf = (std::is_same_v<T, Us> || ...);

enum class BinOp : uint8_t { Add = 0, Sub, Mul, Div, Max, Min, And, Or, NUM };
enum class ScalOp : uint8_t { Adds = 0, Muls, Maxs, Mins, LeakyRelu, ShiftLeft, ShiftRight, Axpy, NUM };
enum class UnOp : uint8_t { Relu = 0, Exp, Ln, Sqrt, Rsqrt, Reciprocal, Abs, Not, NUM };
enum class RedOp : uint8_t { Sum = 0, Max, Min };
// The advanced math APIs (kernel_math.h): one call, its own temporary space.
enum class MathOp : uint8_t { Tanh = 0, Erf, Erfc, Sigmoid, Sign, NUM };

// Our model's temporary-space figures for the advanced math APIs (kernel_math.h): the API keeps
// `live` float intermediates per element of the slice it works on, so sharedTmpBuffer needs
// live * 4 bytes per element for the whole count at once (the maximum) and at least one 256 B repeat
// of each (the minimum; a smaller buffer is worked through in slices, same result). Half inputs also
// keep their float copy.
constexpr uint32_t MathLiveNodes(MathOp op, uint32_t type_size) {
  const uint32_t live = (op == MathOp::Sigmoid || op == MathOp::Sign) ? 1 : op == MathOp::Tanh ? 2 : op == MathOp::Erf ? 3 : 4;
  return type_size == 2 ? live + 1 : live;
}
constexpr uint32_t MathTmpMinBytes(uint32_t live) { return live * 256; }
// The advanced APIs with a scalar operand: ClampMax (x > s ? s : x) and ClampMin (x < s ? s : x); our
// temporary-space figure: one live node (one repeat, 256 B, at least).
enum class MathScalOp : uint8_t { ClampMax = 0, ClampMin, NUM };
constexpr uint32_t kClampLiveNodes = 1;

// The mask argument of a mask/repeat-form call.
struct MaskArg {
  enum Kind : uint8_t { CONT = 0, BITS, REG } kind;
  uint64_t lo, hi;
  static MaskArg Cont(uint64_t n) { return {CONT, n, 0}; }
  static MaskArg Bits(const uint64_t* m) { return {BITS, m[0], m[1]}; }
  static MaskArg Reg() { return {REG, 0, 0}; }
};
template <bool isSetMask>
inline MaskArg MakeMask(uint64_t m) { return isSetMask ? MaskArg::Cont(m) : MaskArg::Reg(); }
template <bool isSetMask>
inline MaskArg MakeMask(const uint64_t* m) { return isSetMask ? MaskArg::Bits(m) : MaskArg::Reg(); }

struct RepParams {  // block/repeat strides of dst, src0, src1 (in 32 B blocks)
  uint16_t blk[3];
  uint16_t rep[3];
};
inline RepParams Rep(const AscendC::BinaryRepeatParams& p) {
  return {{p.dstBlkStride, p.src0BlkStride, p.src1BlkStride}, {p.dstRepStride, p.src0RepStride, p.src1RepStride}};
}
inline RepParams Rep(const AscendC::UnaryRepeatParams& p) {
  return {{p.dstBlkStride, p.srcBlkStride, 1}, {p.dstRepStride, p.srcRepStride, 8}};
}

using LO = LocalOperand;
void VBinary(BinOp op, DT dt, const LO& d, const LO& a, const LO& b, int64_t count);
void VBinaryRep(BinOp op, DT dt, const LO& d, const LO& a, const LO& b, MaskArg m, int64_t repeat, const RepParams& p);
void VScalar(ScalOp op, DT dt, const LO& d, const LO& a, const void* s, int64_t count);
void VScalarRep(ScalOp op, DT dt, const LO& d, const LO& a, const void* s, MaskArg m, int64_t repeat, const RepParams& p);
void VUnary(UnOp op, DT dt, const LO& d, const LO& a, int64_t count);
void VUnaryRep(UnOp op, DT dt, const LO& d, const LO& a, MaskArg m, int64_t repeat, const RepParams& p);
// An advanced math API over `count` elements: dst and src are the same tensor or disjoint; tmp (the
// sharedTmpBuffer) holds at least MathTmpMinBytes and overlaps neither; its contents afterwards are undefined.
void VMath(MathOp op, DT dt, const LO& d, const LO& a, const LO& tmp, int64_t count);
void VMathScalar(MathScalOp op, DT dt, const LO& d, const LO& a, const LO& tmp, const void* s, int64_t count);
void VDup(DT dt, const LO& d, const void* s, int64_t count);
void VDupRep(DT dt, const LO& d, const void* s, MaskArg m, int64_t repeat, uint16_t dst_blk, uint16_t dst_rep);
// Brcb: repeat r fills blocks (r * dst_rep + j * dst_blk), j < 8, with element 8r + j of a.
void VBrcb(DT dt, const LO& d, const LO& a, int64_t repeat, uint16_t dst_blk, uint16_t dst_rep);
void VCast(DT ddt, DT sdt, AscendC::RoundMode rm, const LO& d, const LO& a, int64_t count);
void VCastRep(DT ddt, DT sdt, AscendC::RoundMode rm, const LO& d, const LO& a, MaskArg m, int64_t repeat,
              const RepParams& p);
// b == nullptr: compare against the scalar at s.
void VCompare(DT dt, AscendC::CMPMODE mode, const LO& d, const LO& a, const LO* b, const void* s, int64_t count);
void VCompareRep(DT dt, AscendC::CMPMODE mode, const LO& d, const LO& a, const LO* b, const void* s, MaskArg m,
                 int64_t repeat, const RepParams& p);
// b == nullptr: src1 is the scalar at s.
void VSelect(DT dt, DT mask_dt, AscendC::SELMODE mode, const LO& d, const LO& sel, const LO& a, const LO* b,
             const void* s, int64_t count);
void VSelectRep(DT dt, DT mask_dt, AscendC::SELMODE mode, const LO& d, const LO& sel, const LO& a, const LO* b,
                const void* s, MaskArg m, int64_t repeat, const RepParams& p);
void VWholeReduce(RedOp op, DT dt, const LO& d, const LO& a, MaskArg m, int64_t repeat, int64_t dst_rep,
                  int64_t src_blk, int64_t src_rep, AscendC::ReduceOrder order);
void VBlockReduce(RedOp op, DT dt, const LO& d, const LO& a, MaskArg m, int64_t repeat, int64_t dst_rep,
                  int64_t src_blk, int64_t src_rep);
void VReduce(RedOp op, DT dt, const LO& d, const LO& a, const LO& tmp, int64_t count, bool cal_index);
void VReduceRep(RedOp op, DT dt, const LO& d, const LO& a, const LO& tmp, MaskArg m, int64_t repeat,
                int64_t src_rep, bool cal_index);
void VSetMask(DT dt, bool counter_template, uint64_t hi, uint64_t lo);
// Gather (count form): d[i] = element at byte (base + off[i]) of a; offsets are uint32 bytes.
void VGather(DT dt, const LO& d, const LO& a, const LO& off, uint32_t base, int64_t count);
// Scatter (count form): element at byte (base + off[i]) of d = a[i]; offsets are uint32 bytes.
void VScatter(DT dt, const LO& d, const LO& a, const LO& off, uint32_t base, int64_t count);
void VSetMaskLen(DT dt, bool counter_template, int64_t len);
// GatherMask, user pattern, counter mode with one repeat: the elements i < count of a whose pattern
// bit i is set (bit i % w of pattern element i / w, w = the element width in bits), packed into d in
// order; returns how many.
uint64_t VGatherMask(DT dt, const LO& d, const LO& a, const LO& pattern, bool reduce_mode, uint32_t mask,
                     uint8_t src0_blk_stride, uint16_t repeat_times);

// Sort instructions (ascendc_sort.cpp): the 8-byte (score, uint32 index) structure, descending.
void VSort32(DT dt, const LO& d, const LO& score, const LO& index, int64_t repeat);
// src[q] for q < the number of queues validBit names; sorted_num[q] = structures taken from queue q.
void VMrgSort(DT dt, const LO& d, const LO* const src[4], const uint16_t count[4], uint32_t sorted_num[4],
              uint16_t valid_bit, int64_t repeat, bool exhausted_suspension);
void VExtract(DT dt, const LO& value, const LO& index, const LO& sorted, int64_t repeat);

}  // namespace ascendc_host
