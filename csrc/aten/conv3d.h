// 3-D convolutions (and transposed) on npu as compositions of the 2-D cube convolution (see conv3d.cpp).
#pragma once
#include <ATen/core/Tensor.h>

#include <array>
#include <optional>
#include <tuple>

namespace torch_ops_nn {

at::Tensor Conv3dForward(const at::Tensor& x, const at::Tensor& w, const std::optional<at::Tensor>& bias,
                         c10::IntArrayRef stride, c10::IntArrayRef padding, c10::IntArrayRef dilation, int64_t groups);
std::tuple<at::Tensor, at::Tensor, at::Tensor> Conv3dBackward(const at::Tensor& grad_output, const at::Tensor& x,
                                                              const at::Tensor& w, c10::IntArrayRef stride,
                                                              c10::IntArrayRef padding, c10::IntArrayRef dilation,
                                                              int64_t groups, std::array<bool, 3> mask);

at::Tensor ConvTranspose3dForward(const at::Tensor& x, const at::Tensor& w, const std::optional<at::Tensor>& bias,
                                  c10::IntArrayRef stride, c10::IntArrayRef padding, c10::IntArrayRef output_padding,
                                  c10::IntArrayRef dilation, int64_t groups);
std::tuple<at::Tensor, at::Tensor, at::Tensor> ConvTranspose3dBackward(
    const at::Tensor& grad_output, const at::Tensor& x, const at::Tensor& w, c10::IntArrayRef stride,
    c10::IntArrayRef padding, c10::IntArrayRef output_padding, c10::IntArrayRef dilation, int64_t groups,
    std::array<bool, 3> mask);

}  // namespace torch_ops_nn
