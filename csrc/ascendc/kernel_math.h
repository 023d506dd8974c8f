// The advanced math / activation APIs of Ascend C that our kernels use: Tanh, Erf, Erfc, Sigmoid, Sign
// (half and float), each with the caller-provided temporary space (sharedTmpBuffer) and the host-side helpers that
// size it. Prototypes as documented; behaviour written from the documented formulas.
//
//   Tanh(dst, src, sharedTmpBuffer, calCount)   dst = tanh(src)
//   Erf(dst, src, sharedTmpBuffer, calCount)    dst = erf(src)
//   Erfc(dst, src, sharedTmpBuffer, calCount)   dst = erfc(src) = 1 - erf(src), accurate in the tail
//   Sigmoid(dst, src, sharedTmpBuffer, calCount) dst = 1 / (1 + exp(-src))
//   Sign(dst, src, sharedTmpBuffer, calCount)    dst = 1 / -1 / 0 for src > 0 / < 0 / else (NaN -> 0:
//                                                our reading; the formula leaves NaN out)
//   ClampMax(dst, src, sharedTmpBuffer, scalar, calCount)  dst = src > scalar ? scalar : src
//   ClampMin(dst, src, sharedTmpBuffer, scalar, calCount)  dst = src < scalar ? scalar : src
//                                                (so NaN and signed zeros pass); GetClampMaxMinTmpSize
//   (and the forms without calCount: the whole srcTensor)
//
// Rules the model checks (ascendc_vec.cpp VMath): every operand in UB (VECIN / VECCALC / VECOUT),
// 32-byte aligned; calCount <= the tensors' sizes; dstTensor and srcTensor the same tensor or disjoint;
// sharedTmpBuffer overlapping neither and holding at least the minimum of Get<Api>MaxMinTmpSize. Its
// contents afterwards are undefined (the model leaves NaN patterns in it).
//
// Temporary space, our model's figures (ascendc_host::MathLiveNodes): the API keeps `live` float
// intermediates per element (Sigmoid and Sign 1, Tanh 2, Erf 3, Erfc 4; half inputs one more, their
// float copy; ClampMax / ClampMin 1 for every dtype). The maximum
// covers calCount elements at once (live * 4 * calCount bytes), the minimum one 256-byte repeat of each
// (live * 256 bytes); in between the API works through the input in slices, with the same result.
//
// The model computes each call in one pass with the intermediates in registers (ascendc_vec_kernels.inc
// VTanh / VErf / VErfc / VSigmoid); float accuracy, relative: Tanh 3e-7, Erf 4e-7, Erfc 6e-7 down to its
// underflow near 10 (worst measured over 3M points: 2.6e-7, 3.6e-7, 4.8e-7); Sigmoid the exact divide of
// exp(-x) + 1 (Exp's 2 ulp); half: the float result rounded once.
#pragma once
#include <cstdint>
#include <initializer_list>
#include <vector>

#include "ascendc_vec.h"
#include "kernel_tensor.h"

namespace ge {
// The host-side shape the tiling helpers take (only what they need: the element count).
class Shape {
 public:
  Shape() = default;
  explicit Shape(const std::vector<int64_t>& dims) : dims_(dims) {}
  Shape(std::initializer_list<int64_t> dims) : dims_(dims) {}
  size_t GetDimNum() const { return dims_.size(); }
  int64_t GetDim(size_t i) const { return i < dims_.size() ? dims_[i] : 0; }
  int64_t GetShapeSize() const {
    int64_t n = 1;
    for (int64_t d : dims_) n *= d;
    return n;
  }

 private:
  std::vector<int64_t> dims_;
};
}  // namespace ge

namespace AscendC {

namespace math_detail {
namespace H = ascendc_host;
template <typename T>
inline void Run(H::MathOp op, const LocalTensor<T>& dst, const LocalTensor<T>& src,
                const LocalTensor<uint8_t>& tmp, uint32_t calCount) {
  static_assert(H::OneOf<T, half, float>, "Tanh / Erf / Erfc / Sigmoid / Sign: dtype must be half or float");
  H::VMath(op, H::DTypeOf<T>, dst.Operand(), src.Operand(), tmp.Operand(), int64_t(calCount));
}
// min = one 256 B repeat of each of `live` float nodes; max = the whole count at once (whole repeats).
inline void MaxMin(uint32_t live, const ge::Shape& srcShape, uint32_t& maxValue, uint32_t& minValue) {
  const uint64_t n = uint64_t(srcShape.GetShapeSize() < 0 ? 0 : srcShape.GetShapeSize());
  minValue = H::MathTmpMinBytes(live);
  const uint64_t mx = uint64_t(live) * 4 * ((n + 63) / 64 * 64);
  maxValue = uint32_t(mx < minValue ? minValue : mx > 0xFFFFFFFFu ? 0xFFFFFFFFu : mx);
}
inline void Factor(H::MathOp op, uint32_t typeSize, uint32_t& maxLiveNodeCount, uint32_t& extraBuf) {
  // tmp bytes per element = live * 4 = maxLiveNodeCount * typeSize
  maxLiveNodeCount = H::MathLiveNodes(op, typeSize) * 4 / (typeSize == 0 ? 4 : typeSize);
  extraBuf = 0;
}
}  // namespace math_detail

#define ASCENDC_MATH_API(NAME)                                                                              \
  template <typename T, bool isReuseSource = false>                                                         \
  inline void NAME(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor,                        \
                   const LocalTensor<uint8_t>& sharedTmpBuffer, const uint32_t calCount) {                  \
    math_detail::Run(ascendc_host::MathOp::NAME, dstTensor, srcTensor, sharedTmpBuffer, calCount);          \
  }                                                                                                         \
  template <typename T, bool isReuseSource = false>                                                         \
  inline void NAME(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor,                        \
                   const LocalTensor<uint8_t>& sharedTmpBuffer) {                                           \
    math_detail::Run(ascendc_host::MathOp::NAME, dstTensor, srcTensor, sharedTmpBuffer,                     \
                     uint32_t(srcTensor.GetSize()));                                                        \
  }                                                                                                         \
  inline void Get##NAME##MaxMinTmpSize(const ge::Shape& srcShape, const uint32_t typeSize,                  \
                                       const bool isReuseSource, uint32_t& maxValue, uint32_t& minValue) {  \
    (void)isReuseSource;                                                                                    \
    math_detail::MaxMin(ascendc_host::MathLiveNodes(ascendc_host::MathOp::NAME, typeSize), srcShape, maxValue, \
                        minValue);                                                                          \
  }                                                                                                         \
  inline void Get##NAME##TmpBufferFactorSize(const uint32_t typeSize, uint32_t& maxLiveNodeCount,           \
                                             uint32_t& extraBuf) {                                          \
    math_detail::Factor(ascendc_host::MathOp::NAME, typeSize, maxLiveNodeCount, extraBuf);                  \
  }

ASCENDC_MATH_API(Tanh)
ASCENDC_MATH_API(Erf)
ASCENDC_MATH_API(Erfc)
ASCENDC_MATH_API(Sigmoid)
ASCENDC_MATH_API(Sign)
#undef ASCENDC_MATH_API

#define ASCENDC_CLAMP_API(NAME)                                                                             \
  template <typename T, bool isReuseSource = false>                                                         \
  inline void NAME(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor,                        \
                   const LocalTensor<uint8_t>& sharedTmpBuffer, const T scalar, const uint32_t calCount) {  \
    static_assert(ascendc_host::OneOf<T, half, float>, #NAME ": dtype must be half or float");              \
    ascendc_host::VMathScalar(ascendc_host::MathScalOp::NAME, ascendc_host::DTypeOf<T>, dstTensor.Operand(), \
                              srcTensor.Operand(), sharedTmpBuffer.Operand(), &scalar, int64_t(calCount));   \
  }
ASCENDC_CLAMP_API(ClampMax)
ASCENDC_CLAMP_API(ClampMin)
#undef ASCENDC_CLAMP_API

inline void GetClampMaxMinTmpSize(const ge::Shape& srcShape, const uint32_t typeSize, const bool isReuseSource,
                                  uint32_t& maxValue, uint32_t& minValue) {
  (void)isReuseSource;
  (void)typeSize;
  math_detail::MaxMin(ascendc_host::kClampLiveNodes, srcShape, maxValue, minValue);
}

}  // namespace AscendC
