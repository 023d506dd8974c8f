// 2-D convolution on npu (the cube kernel of ascendc_kernels/conv2d.cpp) with a fusion-ready
// epilogue, for the plain convolution ops and for fused Conv+BN(+Add)+ReLU ops built on it.
#pragma once
#include <ATen/core/Tensor.h>

#include <array>
#include <cstdint>

namespace torch_ops_nn {

struct ConvParams {
  std::array<int64_t, 2> stride{1, 1};
  std::array<int64_t, 2> padding{0, 0};
  std::array<int64_t, 2> dilation{1, 1};
  int64_t groups = 1;
};

// Applied on the accumulator tile before it leaves the cube, per output channel c:
//   y = relu?( conv * scale[c] + shift[c] + bias[c] + residual )
// All optional. bias: the convolution's bias (x's dtype or float, [Cout]); scale / shift: float
// [Cout] (a folded BatchNorm); residual: a tensor of the output's shape and dtype (any layout).
// bias and scale cannot both be given (fold the bias into shift: shift + bias * scale).
struct ConvEpilogue {
  at::Tensor bias, scale, shift, residual;
  bool relu = false;
};

// x: [N, C, H, W], w: [Cout, C/groups, kh, kw], same float dtype (float32/float16/bfloat16). The
// output is channels_last when x (or w) is, NCHW otherwise, as on CPU. Bad arguments raise a
// clear error naming `conv2d` and the rule.
at::Tensor ConvForward(const at::Tensor& x, const at::Tensor& w, const ConvParams& p, const ConvEpilogue& e = {});

}  // namespace torch_ops_nn
