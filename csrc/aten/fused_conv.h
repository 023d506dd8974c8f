#pragma once
#include <ATen/core/Tensor.h>

#include <optional>
#include <string>
#include <vector>

namespace torch_ops_nn {

// conv2d(x, w) with the epilogue y = act(conv * scale + shift (or + bias) + residual), as one
// cube kernel (see fused_conv.cpp). Bound as torch_ops_nn._C._conv_epilogue.
at::Tensor ConvEpilogueOp(const at::Tensor& x, const at::Tensor& w, const std::optional<at::Tensor>& bias,
                          const std::optional<at::Tensor>& scale, const std::optional<at::Tensor>& shift,
                          const std::optional<at::Tensor>& residual, std::vector<int64_t> stride,
                          std::vector<int64_t> padding, std::vector<int64_t> dilation, int64_t groups,
                          const std::string& activation);

// Drops every cached BN fold of torch_ops_nn::conv_bn_act (torch.npu.empty_cache calls it).
void ClearFoldCache();

}  // namespace torch_ops_nn
