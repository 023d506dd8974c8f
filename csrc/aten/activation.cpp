// Activation ops and their backward ops on npu. ReLU of a contiguous float tensor runs the
// dedicated ReLU kernel (ascendc_kernels/activation.cpp); everything else is an op of the
// elementwise kernel family through the shared pointwise engine (elementwise_common.h).
#include <ATen/core/Tensor.h>
#include <algorithm>
#include <climits>
#include <tuple>
#include <ATen/ops/empty.h>
#include <ATen/ops/mul.h>
#include <ATen/ops/sigmoid.h>
#include <ATen/ops/softplus.h>
#include <ATen/ops/neg.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include "activation.h"
#include "aten/elementwise_common.h"
#include "aten/kernel_launch.h"
#include "aten/op_common.h"

namespace torch_ops_nn {
namespace {

using npu_kernels::EwOp;

TORCH_OPS_NN_REGISTER_KERNEL(relu_kernel);

void LaunchRelu(const at::Tensor& x, const at::Tensor& y) {
  if (x.numel() == 0) return;
  const c10::DeviceIndex dev = x.device().index();
  const auto tiling = npu_kernels::unary_tiling(static_cast<uint64_t>(x.numel()), x.element_size(), SocInfoFor(dev));
  auto kernel = PickFloatKernel("relu", x.scalar_type(), &relu_kernel_float, &relu_kernel_half, &relu_kernel_bf16);
  KernelLaunch launch{"relu_kernel", ascendc_host::CoreType::AIV, tiling.block_dim, dev};
  launch.runs_on_2002 = true;  // plain DataCopy with aligned tails on 2002
  if (LogDebugEnabled()) launch.detail = DescribeForLog({{"self", &x}});
  LaunchKernel(std::move(launch), kernel, tiling, x.data_ptr(), y.data_ptr());
}

PwOp Act(const char* name, EwOp op, bool int_ok = false) {
  PwOp p;
  p.name = name;
  p.op = op;
  p.result = PwResult::kPromote;
  p.int_ok = int_ok;
  p.float_only = !int_ok;
  p.out_same_dtype = true;  // ATen's activations are unary ops: out= has the input's dtype (not threshold)
  return p;
}

// ---- relu
PwOp ReluDef(const char* name) {
  PwOp p = Act(name, EwOp::kRelu, true);
  p.bool_error = "Boolean inputs not supported for relu";  // PyTorch's own check, every backend
  return p;
}
at::Tensor relu(const at::Tensor& self) {
  if (self.device().type() == kNpu && IsNpuFloat(self.scalar_type()) && self.is_contiguous()) {
    at::Tensor y = NpuEmpty(self.sizes(), self.scalar_type(), self.device().index());
    LaunchRelu(self, y);
    return y;
  }
  return Pointwise(ReluDef("relu"), {{"self", &self}});
}
at::Tensor& relu_(at::Tensor& self) {
  if (self.device().type() == kNpu && IsNpuFloat(self.scalar_type()) && self.is_contiguous()) {
    LaunchRelu(self, self);
    return self;
  }
  Pointwise(ReluDef("relu_"), {{"self", &self}}, PwTarget::InPlace(self));
  return self;
}

// ---- sigmoid / tanh (integral inputs give a float result)
#define TORCH_OPS_NN_FLOAT_UNARY(FN, OP)                                                                       \
  PwOp FN##Def(const char* name) {                                                                            \
    PwOp p = Act(name, OP);                                                                                   \
    p.float_only = false;                                                                                     \
    p.result = PwResult::kPromoteFloat;                                                                       \
    p.out_same_dtype = false;  /* a float unary op: out= of any dtype the result casts to */                  \
    return p;                                                                                                 \
  }                                                                                                           \
  at::Tensor FN(const at::Tensor& self) { return Pointwise(FN##Def(#FN), {{"self", &self}}); }                 \
  at::Tensor& FN##_out(const at::Tensor& self, at::Tensor& out) {                                             \
    Pointwise(FN##Def(#FN ".out"), {{"self", &self}}, PwTarget::Out(out));                                     \
    return out;                                                                                               \
  }                                                                                                           \
  at::Tensor& FN##_(at::Tensor& self) {                                                                       \
    Pointwise(FN##Def(#FN "_"), {{"self", &self}}, PwTarget::InPlace(self));                                   \
    return self;                                                                                              \
  }
TORCH_OPS_NN_FLOAT_UNARY(sigmoid, EwOp::kSigmoid)
TORCH_OPS_NN_FLOAT_UNARY(tanh, EwOp::kTanh)

// ---- float activations without arguments
#define TORCH_OPS_NN_ACT(FN, OP)                                                                               \
  at::Tensor FN(const at::Tensor& self) { return Pointwise(Act(#FN, OP), {{"self", &self}}); }                 \
  at::Tensor& FN##_out(const at::Tensor& self, at::Tensor& out) {                                             \
    Pointwise(Act(#FN ".out", OP), {{"self", &self}}, PwTarget::Out(out));                                     \
    return out;                                                                                               \
  }                                                                                                           \
  at::Tensor& FN##_(at::Tensor& self) {                                                                       \
    Pointwise(Act(#FN "_", OP), {{"self", &self}}, PwTarget::InPlace(self));                                   \
    return self;                                                                                              \
  }
TORCH_OPS_NN_ACT(silu, EwOp::kSilu)
TORCH_OPS_NN_ACT(hardswish, EwOp::kHardswish)
TORCH_OPS_NN_ACT(hardsigmoid, EwOp::kHardsigmoid)

// ---- hardtanh (relu6 is hardtanh(0, 6))
PwOp HardtanhDef(const char* name, const at::Tensor& self, const c10::Scalar& lo, const c10::Scalar& hi) {
  // PyTorch's hardtanh rules (every backend): no bool, no negative limits for an unsigned tensor.
  TORCH_CHECK(self.scalar_type() != c10::kByte || (lo.toLong() >= 0 && hi.toLong() >= 0), name,
              ": cannot do hardtanh on an unsigned type with negative limits (min_val ", lo.toDouble(), ", max_val ",
              hi.toDouble(), ")");
  PwOp p = Act(name, EwOp::kClamp, true);
  p.bool_error = "Bool inputs not supported for hardtanh";
  p.si[0] = 3;
  p.sf[0] = static_cast<float>(lo.toDouble());
  p.sf[1] = static_cast<float>(hi.toDouble());
  // Integer tensors clamp to the bounds converted to their dtype (truncated, as the CPU's clamp);
  // int64 reads the 64-bit bounds (they were left 0: hardtanh of int64 gave zeros).
  p.sl[0] = lo.isIntegral(true) ? lo.toLong() : static_cast<int64_t>(lo.toDouble());
  p.sl[1] = hi.isIntegral(true) ? hi.toLong() : static_cast<int64_t>(hi.toDouble());
  p.si[1] = static_cast<int32_t>(std::clamp<int64_t>(p.sl[0], INT32_MIN, INT32_MAX));
  p.si[2] = static_cast<int32_t>(std::clamp<int64_t>(p.sl[1], INT32_MIN, INT32_MAX));
  return p;
}
at::Tensor hardtanh(const at::Tensor& self, const c10::Scalar& lo, const c10::Scalar& hi) {
  return Pointwise(HardtanhDef("hardtanh", self, lo, hi), {{"self", &self}});
}
at::Tensor& hardtanh_out(const at::Tensor& self, const c10::Scalar& lo, const c10::Scalar& hi, at::Tensor& out) {
  Pointwise(HardtanhDef("hardtanh.out", self, lo, hi), {{"self", &self}}, PwTarget::Out(out));
  return out;
}
at::Tensor& hardtanh_(at::Tensor& self, const c10::Scalar& lo, const c10::Scalar& hi) {
  Pointwise(HardtanhDef("hardtanh_", self, lo, hi), {{"self", &self}}, PwTarget::InPlace(self));
  return self;
}

// ---- leaky_relu
PwOp LeakyDef(const char* name, const c10::Scalar& slope) {
  PwOp p = Act(name, EwOp::kLeakyRelu);
  p.sf[0] = static_cast<float>(slope.toDouble());
  return p;
}
at::Tensor leaky_relu(const at::Tensor& self, const c10::Scalar& slope) {
  return Pointwise(LeakyDef("leaky_relu", slope), {{"self", &self}});
}
at::Tensor& leaky_relu_out(const at::Tensor& self, const c10::Scalar& slope, at::Tensor& out) {
  Pointwise(LeakyDef("leaky_relu.out", slope), {{"self", &self}}, PwTarget::Out(out));
  return out;
}
at::Tensor& leaky_relu_(at::Tensor& self, const c10::Scalar& slope) {
  Pointwise(LeakyDef("leaky_relu_", slope), {{"self", &self}}, PwTarget::InPlace(self));
  return self;
}

// ---- gelu
EwOp GeluOp(const char* name, c10::string_view approximate, bool backward) {
  if (approximate == "none") return backward ? EwOp::kGeluBackward : EwOp::kGelu;
  if (approximate == "tanh") return backward ? EwOp::kGeluTanhBackward : EwOp::kGeluTanh;
  TORCH_CHECK(false, name, ": argument 'approximate' must be 'none' or 'tanh', got '", std::string(approximate), "'");
}
at::Tensor gelu(const at::Tensor& self, c10::string_view approximate) {
  return Pointwise(Act("gelu", GeluOp("gelu", approximate, false)), {{"self", &self}});
}
at::Tensor& gelu_out(const at::Tensor& self, c10::string_view approximate, at::Tensor& out) {
  Pointwise(Act("gelu.out", GeluOp("gelu.out", approximate, false)), {{"self", &self}}, PwTarget::Out(out));
  return out;
}
at::Tensor& gelu_(at::Tensor& self, c10::string_view approximate) {
  Pointwise(Act("gelu_", GeluOp("gelu_", approximate, false)), {{"self", &self}}, PwTarget::InPlace(self));
  return self;
}

// ---- threshold
PwOp ThresholdDef(const char* name, const c10::Scalar& th, const c10::Scalar& value) {
  PwOp p = Act(name, EwOp::kThreshold);
  p.out_same_dtype = false;
  p.sf[0] = static_cast<float>(th.toDouble());
  p.sf[1] = static_cast<float>(value.toDouble());
  return p;
}
at::Tensor threshold(const at::Tensor& self, const c10::Scalar& th, const c10::Scalar& value) {
  return Pointwise(ThresholdDef("threshold", th, value), {{"self", &self}});
}
at::Tensor& threshold_out(const at::Tensor& self, const c10::Scalar& th, const c10::Scalar& value, at::Tensor& out) {
  Pointwise(ThresholdDef("threshold.out", th, value), {{"self", &self}}, PwTarget::Out(out));
  return out;
}
at::Tensor& threshold_(at::Tensor& self, const c10::Scalar& th, const c10::Scalar& value) {
  Pointwise(ThresholdDef("threshold_", th, value), {{"self", &self}}, PwTarget::InPlace(self));
  return self;
}

// ---- backward ops: (grad_output, self-or-result) -> grad_input
#define TORCH_OPS_NN_BACKWARD(FN, ARG, OP)                                                                     \
  at::Tensor FN(const at::Tensor& grad, const at::Tensor& x) {                                                \
    return Pointwise(Act(#FN, OP), {{"grad_output", &grad}, {ARG, &x}});                                      \
  }                                                                                                           \
  at::Tensor& FN##_out(const at::Tensor& grad, const at::Tensor& x, at::Tensor& grad_input) {                 \
    Pointwise(Act(#FN ".grad_input", OP), {{"grad_output", &grad}, {ARG, &x}}, PwTarget::Out(grad_input));    \
    return grad_input;                                                                                        \
  }
TORCH_OPS_NN_BACKWARD(sigmoid_backward, "output", EwOp::kSigmoidBackward)
TORCH_OPS_NN_BACKWARD(tanh_backward, "output", EwOp::kTanhBackward)
TORCH_OPS_NN_BACKWARD(silu_backward, "self", EwOp::kSiluBackward)
TORCH_OPS_NN_BACKWARD(hardswish_backward, "self", EwOp::kHardswishBackward)
TORCH_OPS_NN_BACKWARD(hardsigmoid_backward, "self", EwOp::kHardsigmoidBackward)

PwOp ThresholdBackwardDef(const char* name, const c10::Scalar& th) {
  PwOp p = Act(name, EwOp::kThresholdBackward);
  p.sf[0] = static_cast<float>(th.toDouble());
  return p;
}
at::Tensor threshold_backward(const at::Tensor& grad, const at::Tensor& self, const c10::Scalar& th) {
  return Pointwise(ThresholdBackwardDef("threshold_backward", th), {{"grad_output", &grad}, {"self", &self}});
}
at::Tensor& threshold_backward_out(const at::Tensor& grad, const at::Tensor& self, const c10::Scalar& th,
                                   at::Tensor& grad_input) {
  Pointwise(ThresholdBackwardDef("threshold_backward.grad_input", th), {{"grad_output", &grad}, {"self", &self}},
            PwTarget::Out(grad_input));
  return grad_input;
}

at::Tensor gelu_backward(const at::Tensor& grad, const at::Tensor& self, c10::string_view approximate) {
  return Pointwise(Act("gelu_backward", GeluOp("gelu_backward", approximate, true)),
                   {{"grad_output", &grad}, {"self", &self}});
}
at::Tensor& gelu_backward_out(const at::Tensor& grad, const at::Tensor& self, c10::string_view approximate,
                              at::Tensor& grad_input) {
  Pointwise(Act("gelu_backward.grad_input", GeluOp("gelu_backward", approximate, true)),
            {{"grad_output", &grad}, {"self", &self}}, PwTarget::Out(grad_input));
  return grad_input;
}

PwOp HardtanhBackwardDef(const char* name, const c10::Scalar& lo, const c10::Scalar& hi) {
  PwOp p = Act(name, EwOp::kHardtanhBackward);
  p.sf[0] = static_cast<float>(lo.toDouble());
  p.sf[1] = static_cast<float>(hi.toDouble());
  return p;
}
at::Tensor hardtanh_backward(const at::Tensor& grad, const at::Tensor& self, const c10::Scalar& lo,
                             const c10::Scalar& hi) {
  return Pointwise(HardtanhBackwardDef("hardtanh_backward", lo, hi), {{"grad_output", &grad}, {"self", &self}});
}
at::Tensor& hardtanh_backward_out(const at::Tensor& grad, const at::Tensor& self, const c10::Scalar& lo,
                                  const c10::Scalar& hi, at::Tensor& grad_input) {
  Pointwise(HardtanhBackwardDef("hardtanh_backward.grad_input", lo, hi), {{"grad_output", &grad}, {"self", &self}},
            PwTarget::Out(grad_input));
  return grad_input;
}

PwOp LeakyBackwardDef(const char* name, const c10::Scalar& slope, bool self_is_result) {
  TORCH_CHECK(!self_is_result || slope.toDouble() >= 0.0, name,
              ": in-place leaky_relu backward with a negative slope (", slope.toDouble(),
              ") is not supported; use a non-negative slope or the out-of-place leaky_relu");
  PwOp p = Act(name, EwOp::kLeakyReluBackward);
  p.sf[0] = static_cast<float>(slope.toDouble());
  return p;
}
at::Tensor leaky_relu_backward(const at::Tensor& grad, const at::Tensor& self, const c10::Scalar& slope,
                               bool self_is_result) {
  return Pointwise(LeakyBackwardDef("leaky_relu_backward", slope, self_is_result),
                   {{"grad_output", &grad}, {"self", &self}});
}
at::Tensor& leaky_relu_backward_out(const at::Tensor& grad, const at::Tensor& self, const c10::Scalar& slope,
                                    bool self_is_result, at::Tensor& grad_input) {
  Pointwise(LeakyBackwardDef("leaky_relu_backward.grad_input", slope, self_is_result),
            {{"grad_output", &grad}, {"self", &self}}, PwTarget::Out(grad_input));
  return grad_input;
}

// ---- elu (selu, celu) / softplus / mish / hardshrink / softshrink
PwOp EluDef(const char* name, EwOp op, const c10::Scalar& alpha, const c10::Scalar& scale,
            const c10::Scalar& input_scale) {
  PwOp p = Act(name, op);
  p.sf[0] = static_cast<float>(alpha.toDouble() * scale.toDouble());  // negcoef
  p.sf[1] = static_cast<float>(scale.toDouble());                      // poscoef
  p.sf[2] = static_cast<float>(input_scale.toDouble());                // negiptcoef
  return p;
}
at::Tensor elu(const at::Tensor& self, const c10::Scalar& alpha, const c10::Scalar& scale, const c10::Scalar& is) {
  return Pointwise(EluDef("elu", EwOp::kElu, alpha, scale, is), {{"self", &self}});
}
at::Tensor& elu_out(const at::Tensor& self, const c10::Scalar& alpha, const c10::Scalar& scale, const c10::Scalar& is,
                    at::Tensor& out) {
  Pointwise(EluDef("elu.out", EwOp::kElu, alpha, scale, is), {{"self", &self}}, PwTarget::Out(out));
  return out;
}
at::Tensor& elu_(at::Tensor& self, const c10::Scalar& alpha, const c10::Scalar& scale, const c10::Scalar& is) {
  Pointwise(EluDef("elu_", EwOp::kElu, alpha, scale, is), {{"self", &self}}, PwTarget::InPlace(self));
  return self;
}
PwOp EluBackwardDef(const char* name, const c10::Scalar& alpha, const c10::Scalar& scale, const c10::Scalar& is,
                    bool is_result) {
  TORCH_CHECK(!is_result || alpha.toDouble() >= 0.0, name,
              ": in-place elu backward calculation is triggered with a negative slope which is not supported. "
              "This is caused by calling in-place forward function with a negative slope, please call "
              "out-of-place version instead.");
  PwOp p = EluDef(name, EwOp::kEluBackward, alpha, scale, is);
  p.si[0] = is_result ? 1 : 0;
  return p;
}
at::Tensor elu_backward(const at::Tensor& grad, const c10::Scalar& alpha, const c10::Scalar& scale,
                        const c10::Scalar& is, bool is_result, const at::Tensor& x) {
  return Pointwise(EluBackwardDef("elu_backward", alpha, scale, is, is_result),
                   {{"grad_output", &grad}, {"self_or_result", &x}});
}
at::Tensor& elu_backward_out(const at::Tensor& grad, const c10::Scalar& alpha, const c10::Scalar& scale,
                             const c10::Scalar& is, bool is_result, const at::Tensor& x, at::Tensor& grad_input) {
  Pointwise(EluBackwardDef("elu_backward.grad_input", alpha, scale, is, is_result),
            {{"grad_output", &grad}, {"self_or_result", &x}}, PwTarget::Out(grad_input));
  return grad_input;
}
PwOp SoftplusDef(const char* name, EwOp op, const c10::Scalar& beta, const c10::Scalar& threshold) {
  PwOp p = Act(name, op);
  p.sf[0] = static_cast<float>(beta.toDouble());
  p.sf[1] = static_cast<float>(threshold.toDouble());
  return p;
}
at::Tensor softplus(const at::Tensor& self, const c10::Scalar& beta, const c10::Scalar& threshold) {
  return Pointwise(SoftplusDef("softplus", EwOp::kSoftplus, beta, threshold), {{"self", &self}});
}
at::Tensor& softplus_out(const at::Tensor& self, const c10::Scalar& beta, const c10::Scalar& threshold,
                         at::Tensor& out) {
  Pointwise(SoftplusDef("softplus.out", EwOp::kSoftplus, beta, threshold), {{"self", &self}}, PwTarget::Out(out));
  return out;
}
at::Tensor softplus_backward(const at::Tensor& grad, const at::Tensor& self, const c10::Scalar& beta,
                             const c10::Scalar& threshold) {
  return Pointwise(SoftplusDef("softplus_backward", EwOp::kSoftplusBackward, beta, threshold),
                   {{"grad_output", &grad}, {"self", &self}});
}
at::Tensor& softplus_backward_out(const at::Tensor& grad, const at::Tensor& self, const c10::Scalar& beta,
                                  const c10::Scalar& threshold, at::Tensor& grad_input) {
  Pointwise(SoftplusDef("softplus_backward.grad_input", EwOp::kSoftplusBackward, beta, threshold),
            {{"grad_output", &grad}, {"self", &self}}, PwTarget::Out(grad_input));
  return grad_input;
}
TORCH_OPS_NN_ACT(mish, EwOp::kMish)
// lambd in the input's dtype, as the CPU kernels compare (a half input with lambd 0.6 compares with
// half(0.6) = 0.60009765625).
PwOp ShrinkDef(const char* name, EwOp op, const c10::Scalar& lambd, const at::Tensor& self) {
  PwOp p = Act(name, op);
  float l = static_cast<float>(lambd.toDouble());
  if (self.scalar_type() == c10::kHalf) l = static_cast<float>(c10::Half(l));
  else if (self.scalar_type() == c10::kBFloat16) l = static_cast<float>(c10::BFloat16(l));
  p.sf[0] = l;
  return p;
}
#define TORCH_OPS_NN_SHRINK(FN, OP)                                                                            \
  at::Tensor FN(const at::Tensor& self, const c10::Scalar& lambd) {                                           \
    return Pointwise(ShrinkDef(#FN, OP, lambd, self), {{"self", &self}});                                           \
  }                                                                                                           \
  at::Tensor& FN##_out(const at::Tensor& self, const c10::Scalar& lambd, at::Tensor& out) {                   \
    Pointwise(ShrinkDef(#FN ".out", OP, lambd, self), {{"self", &self}}, PwTarget::Out(out));                        \
    return out;                                                                                               \
  }                                                                                                           \
  at::Tensor FN##_backward(const at::Tensor& grad, const at::Tensor& self, const c10::Scalar& lambd) {        \
    return Pointwise(ShrinkDef(#FN "_backward", EwOp::kShrinkBackward, lambd, self),                                \
                     {{"grad_output", &grad}, {"self", &self}});                                              \
  }                                                                                                           \
  at::Tensor& FN##_backward_out(const at::Tensor& grad, const at::Tensor& self, const c10::Scalar& lambd,     \
                                at::Tensor& grad_input) {                                                     \
    Pointwise(ShrinkDef(#FN "_backward.grad_input", EwOp::kShrinkBackward, lambd, self),                           \
              {{"grad_output", &grad}, {"self", &self}}, PwTarget::Out(grad_input));                          \
    return grad_input;                                                                                        \
  }
TORCH_OPS_NN_SHRINK(hardshrink, EwOp::kHardshrink)
TORCH_OPS_NN_SHRINK(softshrink, EwOp::kSoftshrink)

}  // namespace
}  // namespace torch_ops_nn

// log_sigmoid(x) = -softplus(-x) on the softplus kernel (log1p(exp(.)), linear past 20 where the rest
// is below float precision); the backward is grad * sigmoid(-x). The buffer is empty (as on CUDA):
// the backward recomputes from x.
std::tuple<at::Tensor, at::Tensor> log_sigmoid_forward(const at::Tensor& self) {
  at::Tensor out = at::neg(at::softplus(at::neg(self), 1, 20));
  return {out, at::empty({0}, self.options())};
}
at::Tensor log_sigmoid_backward(const at::Tensor& grad_output, const at::Tensor& self, const at::Tensor& buffer) {
  (void)buffer;
  return at::mul(grad_output, at::sigmoid(at::neg(self)));
}

NPU_ATEN_LIBRARY_IMPL(m) {
  m.impl("log_sigmoid_forward", TORCH_FN(log_sigmoid_forward));
  m.impl("log_sigmoid_backward", TORCH_FN(log_sigmoid_backward));
  using namespace torch_ops_nn;
  m.impl("relu", TORCH_FN(torch_ops_nn::relu));
  m.impl("relu_", TORCH_FN(torch_ops_nn::relu_));
#define TORCH_OPS_NN_REG3(FN)             \
  m.impl(#FN, TORCH_FN(torch_ops_nn::FN));              \
  m.impl(#FN ".out", TORCH_FN(torch_ops_nn::FN##_out)); \
  m.impl(#FN "_", TORCH_FN(torch_ops_nn::FN##_));
  TORCH_OPS_NN_REG3(sigmoid)
  TORCH_OPS_NN_REG3(tanh)
  TORCH_OPS_NN_REG3(silu)
  TORCH_OPS_NN_REG3(hardswish)
  TORCH_OPS_NN_REG3(hardsigmoid)
  TORCH_OPS_NN_REG3(hardtanh)
  TORCH_OPS_NN_REG3(leaky_relu)
  TORCH_OPS_NN_REG3(gelu)
  TORCH_OPS_NN_REG3(threshold)
  TORCH_OPS_NN_REG3(elu)
  TORCH_OPS_NN_REG3(mish)
#undef TORCH_OPS_NN_REG3
  m.impl("elu_backward", TORCH_FN(torch_ops_nn::elu_backward));
  m.impl("elu_backward.grad_input", TORCH_FN(torch_ops_nn::elu_backward_out));
  m.impl("softplus", TORCH_FN(torch_ops_nn::softplus));
  m.impl("softplus.out", TORCH_FN(torch_ops_nn::softplus_out));
  m.impl("softplus_backward", TORCH_FN(torch_ops_nn::softplus_backward));
  m.impl("softplus_backward.grad_input", TORCH_FN(torch_ops_nn::softplus_backward_out));
  m.impl("hardshrink", TORCH_FN(torch_ops_nn::hardshrink));
  m.impl("hardshrink.out", TORCH_FN(torch_ops_nn::hardshrink_out));
  m.impl("hardshrink_backward", TORCH_FN(torch_ops_nn::hardshrink_backward));
  m.impl("hardshrink_backward.grad_input", TORCH_FN(torch_ops_nn::hardshrink_backward_out));
  m.impl("softshrink", TORCH_FN(torch_ops_nn::softshrink));
  m.impl("softshrink.out", TORCH_FN(torch_ops_nn::softshrink_out));
  m.impl("softshrink_backward", TORCH_FN(torch_ops_nn::softshrink_backward));
  m.impl("softshrink_backward.grad_input", TORCH_FN(torch_ops_nn::softshrink_backward_out));
  m.impl("sigmoid_backward", TORCH_FN(torch_ops_nn::sigmoid_backward));
  m.impl("sigmoid_backward.grad_input", TORCH_FN(torch_ops_nn::sigmoid_backward_out));
  m.impl("tanh_backward", TORCH_FN(torch_ops_nn::tanh_backward));
  m.impl("tanh_backward.grad_input", TORCH_FN(torch_ops_nn::tanh_backward_out));
  m.impl("silu_backward", TORCH_FN(torch_ops_nn::silu_backward));
  m.impl("silu_backward.grad_input", TORCH_FN(torch_ops_nn::silu_backward_out));
  m.impl("hardswish_backward", TORCH_FN(torch_ops_nn::hardswish_backward));
  m.impl("hardswish_backward.out", TORCH_FN(torch_ops_nn::hardswish_backward_out));
  m.impl("hardsigmoid_backward", TORCH_FN(torch_ops_nn::hardsigmoid_backward));
  m.impl("hardsigmoid_backward.grad_input", TORCH_FN(torch_ops_nn::hardsigmoid_backward_out));
  m.impl("threshold_backward", TORCH_FN(torch_ops_nn::threshold_backward));
  m.impl("threshold_backward.grad_input", TORCH_FN(torch_ops_nn::threshold_backward_out));
  m.impl("gelu_backward", TORCH_FN(torch_ops_nn::gelu_backward));
  m.impl("gelu_backward.grad_input", TORCH_FN(torch_ops_nn::gelu_backward_out));
  m.impl("hardtanh_backward", TORCH_FN(torch_ops_nn::hardtanh_backward));
  m.impl("hardtanh_backward.grad_input", TORCH_FN(torch_ops_nn::hardtanh_backward_out));
  m.impl("leaky_relu_backward", TORCH_FN(torch_ops_nn::leaky_relu_backward));
  m.impl("leaky_relu_backward.grad_input", TORCH_FN(torch_ops_nn::leaky_relu_backward_out));
}
