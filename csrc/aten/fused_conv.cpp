// The npu kernel of torch_ops_nn::conv_bn_act: one convolution on the cube whose epilogue applies
// the folded BN scale/shift (or the conv bias), the residual add and ReLU on the accumulator tile,
// so the conv result crosses device memory once. ReLU6 and SiLU finish with one elementwise kernel
// on the output (the cube epilogue has ReLU only).
#include "aten/fused_conv.h"

#include <ATen/ops/add.h>
#include <ATen/ops/hardtanh.h>
#include <ATen/ops/relu.h>
#include <ATen/ops/silu.h>
#include <c10/util/Exception.h>

#include "aten/conv.h"
#include "aten/op_common.h"

namespace torch_ops_nn {

at::Tensor ConvEpilogueOp(const at::Tensor& x, const at::Tensor& w, const std::optional<at::Tensor>& bias,
                          const std::optional<at::Tensor>& scale, const std::optional<at::Tensor>& shift,
                          const std::optional<at::Tensor>& residual, std::vector<int64_t> stride,
                          std::vector<int64_t> padding, std::vector<int64_t> dilation, int64_t groups,
                          const std::string& activation) {
  const char* op = "conv_bn_act";
  TORCH_CHECK_VALUE(stride.size() == 2 && padding.size() == 2 && dilation.size() == 2, op,
                    ": stride, padding and dilation must have 2 values each, got ", stride.size(), ", ",
                    padding.size(), ", ", dilation.size());
  TORCH_CHECK_VALUE(activation == "none" || activation == "relu" || activation == "relu6" || activation == "silu",
                    op, ": activation must be none, relu, relu6 or silu, got '", activation, "'");
  CheckSameNpuDevice(op, {{"x", &x}, {"weight", &w}});
  ConvParams p;
  p.stride = {stride[0], stride[1]};
  p.padding = {padding[0], padding[1]};
  p.dilation = {dilation[0], dilation[1]};
  p.groups = groups;
  ConvEpilogue e;
  if (bias) e.bias = *bias;
  if (scale) e.scale = *scale;
  if (shift) e.shift = *shift;
  e.relu = activation == "relu";
  // The epilogue adds a residual of the output's exact shape; anything else (broadcasting) is
  // added by the elementwise kernel after, as the unfused graph would.
  bool late_residual = false;
  if (residual && residual->defined()) {
    const int64_t n = x.size(0), o = w.size(0);
    const int64_t oh = (x.size(2) + 2 * p.padding[0] - p.dilation[0] * (w.size(2) - 1) - 1) / p.stride[0] + 1;
    const int64_t ow = (x.size(3) + 2 * p.padding[1] - p.dilation[1] * (w.size(3) - 1) - 1) / p.stride[1] + 1;
    if (residual->sizes() == c10::IntArrayRef{n, o, oh, ow} && residual->scalar_type() == x.scalar_type()) {
      e.residual = *residual;
    } else {
      late_residual = true;
      e.relu = false;
    }
  }
  at::Tensor y = ConvForward(x, w, p, e);
  if (late_residual) {
    y = at::add(y, *residual);
    if (activation == "relu") y = at::relu(y);
  }
  if (activation == "relu6") y = at::hardtanh(y, 0.0, 6.0);
  if (activation == "silu") y = at::silu(y);
  return y;
}

}  // namespace torch_ops_nn
