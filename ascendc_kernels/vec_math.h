// Float activations as sequences of Ascend C vector instructions, shared by the elementwise kernel and
// the fused RNN cells (the same sequence gives the same bits). L: element count (a multiple of 64
// where Compare / Select need whole 256 B repeats).
#pragma once
#include <cstdint>

#include "kernel_operator.h"

namespace npu_kernels {
namespace vec_math {

using namespace AscendC;

// out = tanh(x) (out must not alias x; A, B, C: scratch). |x| >= 0.3: (1 - e)/(1 + e) with e = exp(-2|x|) (the error of e is amplified by at most
// e/(1-e) < 1.3 there); |x| < 0.3: the odd Taylor series to x^11 (truncation < 1e-9 relative).
__aicore__ inline void Tanh(const LocalTensor<float>& out, const LocalTensor<float>& x, const LocalTensor<float>& A,
                            const LocalTensor<float>& B, const LocalTensor<float>& C,
                            const LocalTensor<uint8_t>& bits, uint32_t L) {
  Abs(A, x, L);
  Muls(B, A, -2.0f, L);
  Exp(B, B, L);
  Muls(C, B, -1.0f, L);
  Adds(C, C, 1.0f, L);
  Adds(B, B, 1.0f, L);
  Div(C, C, B, L);          // tanh(|x|)
  Muls(B, C, -1.0f, L);
  CompareScalar(bits, x, 0.0f, CMPMODE::LT, L);
  Select(C, bits, B, C, SELMODE::VSEL_TENSOR_TENSOR_MODE, L);
  Mul(out, x, x, L);        // z = x^2
  Muls(B, out, -1382.0f / 155925.0f, L);
  Adds(B, B, 62.0f / 2835.0f, L);
  Mul(B, B, out, L);
  Adds(B, B, -17.0f / 315.0f, L);
  Mul(B, B, out, L);
  Adds(B, B, 2.0f / 15.0f, L);
  Mul(B, B, out, L);
  Adds(B, B, -1.0f / 3.0f, L);
  Mul(B, B, out, L);
  Adds(B, B, 1.0f, L);
  Mul(B, B, x, L);
  CompareScalar(bits, A, 0.3f, CMPMODE::LT, L);
  Select(out, bits, B, C, SELMODE::VSEL_TENSOR_TENSOR_MODE, L);
}

// out = 1 / (1 + exp(-x)) (ones: a tensor of 1.0f; A: scratch).
__aicore__ inline void Sigmoid(const LocalTensor<float>& out, const LocalTensor<float>& x, const LocalTensor<float>& ones,
                               const LocalTensor<float>& A, uint32_t L) {
  Muls(A, x, -1.0f, L);
  Exp(A, A, L);
  Adds(A, A, 1.0f, L);
  Div(out, ones, A, L);
}

}  // namespace vec_math
}  // namespace npu_kernels
