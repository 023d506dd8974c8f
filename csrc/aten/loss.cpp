// Loss ops on npu: nll_loss_forward / nll_loss_backward and nll_loss2d_forward / nll_loss2d_backward
// (cross entropy is log_softmax + nll_loss). Argument checks, outputs, tiling and the launches of the
// Ascend C kernels in ascendc_kernels/loss*. Target range is checked inside the kernel (it is device data):
// a bad target raises at the next synchronization, naming the target, the class count and the sample.
#include <ATen/core/Tensor.h>
#include <ATen/ExpandUtils.h>
#include <ATen/core/Reduction.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/abs.h>
#include <ATen/ops/mean.h>
#include <ATen/ops/mul.h>
#include <ATen/ops/sign.h>
#include <ATen/ops/sub.h>
#include <ATen/ops/sum.h>
#include <ATen/ops/where.h>
#include <ATen/ops/lt.h>
#include <ATen/ops/le.h>
#include <ATen/ops/clamp.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include <limits>
#include <optional>
#include <tuple>

#include "aten/kernel_launch.h"
#include "aten/op_common.h"
#include "loss.h"

namespace torch_ops_nn {
namespace {

using at::Tensor;
using OptTensor = std::optional<Tensor>;

TORCH_OPS_NN_REGISTER_KERNEL(nll_fwd_kernel);
TORCH_OPS_NN_REGISTER_KERNEL(nll_reduce_kernel);
TORCH_OPS_NN_REGISTER_KERNEL(nll_bwd_kernel);

const Tensor& Or(const OptTensor& t) {
  static const Tensor undefined;
  return t.has_value() ? *t : undefined;
}

struct NllShape {
  uint32_t layout;
  int64_t n, c, hw;
  std::vector<int64_t> out_none;  // output shape for reduction='none'
};

NllShape CheckNll(const char* op, bool two_d, const Tensor& self, const Tensor& target, const Tensor& weight,
                  int64_t reduction) {
  CheckSameNpuDevice(op, {{"input", &self}, {"target", &target}, {"weight", &weight}});
  CheckFloatDtype(op, "input", self);
  TORCH_CHECK(target.scalar_type() == c10::kLong, op, ": target must be int64 (class indices), got ",
              target.scalar_type());
  TORCH_CHECK(reduction >= 0 && reduction <= 2, op, ": reduction must be 0 (none), 1 (mean) or 2 (sum), got ",
              reduction);
  NllShape s;
  if (!two_d) {
    TORCH_CHECK(self.dim() == 1 || self.dim() == 2, op, ": input must be 1-D (C) or 2-D (N, C), got shape ",
                self.sizes());
    s.layout = npu_kernels::kNllRows;
    s.n = self.dim() == 2 ? self.size(0) : 1;
    s.c = self.size(-1);
    s.hw = 1;
    if (self.dim() == 2) {
      TORCH_CHECK(target.dim() == 1 && target.size(0) == s.n, op, ": input has shape ", self.sizes(),
                  " but target has shape ", target.sizes(), "; target must hold one class index per sample (", s.n,
                  ")");
      s.out_none = {s.n};
    } else {
      TORCH_CHECK(target.dim() == 0, op, ": input has shape ", self.sizes(), " (one sample) but target has shape ",
                  target.sizes(), "; target must be a 0-dim class index");
      s.out_none = {};
    }
  } else {
    TORCH_CHECK(self.dim() == 4, op, ": input must be 4-D (N, C, H, W), got shape ", self.sizes());
    TORCH_CHECK(target.dim() == 3 && target.size(0) == self.size(0) && target.size(1) == self.size(2) &&
                    target.size(2) == self.size(3),
                op, ": input has shape ", self.sizes(), " but target has shape ", target.sizes(),
                "; target must be (N, H, W) = (", self.size(0), ", ", self.size(2), ", ", self.size(3), ")");
    s.layout = npu_kernels::kNllPlanes;
    s.n = self.size(0);
    s.c = self.size(1);
    s.hw = self.size(2) * self.size(3);
    s.out_none = {s.n, self.size(2), self.size(3)};
  }
  // (an empty batch may have no classes either: its loss is the empty reduction, as on the CPU)
  TORCH_CHECK(s.c > 0 || s.n * s.hw == 0, op, ": input has no classes (C = 0), shape ", self.sizes());
  if (weight.defined()) {
    TORCH_CHECK(weight.dim() == 1 && weight.numel() == s.c, op, ": weight must be a 1-D tensor of ", s.c,
                " elements (one per class), got shape ", weight.sizes());
    CheckFloatDtype(op, "weight", weight);
  }
  return s;
}

npu_kernels::NllTiling Tiling(const NllShape& s, int64_t reduction, int64_t ignore_index, const Tensor& weight,
                              const Tensor& self, bool forward) {
  auto t = npu_kernels::nll_tiling(s.layout, static_cast<uint32_t>(reduction), s.n, s.c, s.hw, self.element_size(),
                                   SocInfoFor(self.device().index()), forward);
  t.has_weight = weight.defined();
  t.has_ignore = ignore_index >= std::numeric_limits<int32_t>::min() && ignore_index <= std::numeric_limits<int32_t>::max();
  t.ignore_index = t.has_ignore ? static_cast<int32_t>(ignore_index) : 0;
  return t;
}

Tensor FloatWeight(const Tensor& w) {
  if (!w.defined()) return w;
  return w.scalar_type() == c10::kFloat && w.is_contiguous() ? w : w.to(c10::kFloat).contiguous();
}

std::tuple<Tensor, Tensor> NllForward(const char* op, bool two_d, const Tensor& self, const Tensor& target,
                                      const Tensor& weight_in, int64_t reduction, int64_t ignore_index) {
  const NllShape s = CheckNll(op, two_d, self, target, weight_in, reduction);
  const c10::DeviceIndex dev = self.device().index();
  c10::DeviceGuard guard(self.device());
  Tensor x = self.contiguous(), t = target.contiguous(), w = FloatWeight(weight_in);
  Tensor total_weight = NpuEmpty({}, self.scalar_type(), dev);
  const int64_t lanes = s.n * s.hw;
  Tensor out = reduction == npu_kernels::kNllNone ? NpuEmpty(s.out_none, self.scalar_type(), dev)
                                                  : NpuEmpty({}, self.scalar_type(), dev);
  if (lanes == 0) {
    total_weight.zero_();
    if (reduction == npu_kernels::kNllMean) out.fill_(std::numeric_limits<double>::quiet_NaN());
    else if (reduction == npu_kernels::kNllSum) out.zero_();
    return {out, total_weight};
  }
  auto tl = Tiling(s, reduction, ignore_index, w, self, true);
  auto fwd = PickFloatKernel(op, self.scalar_type(), &nll_fwd_kernel_float, &nll_fwd_kernel_half, &nll_fwd_kernel_bf16);
  Tensor partial;
  if (reduction != npu_kernels::kNllNone) partial = NpuEmpty({8 * static_cast<int64_t>(tl.block_dim)}, c10::kFloat, dev);
  KernelLaunch launch{"nll_fwd_kernel", ascendc_host::CoreType::AIV, tl.block_dim, dev};
  if (LogDebugEnabled()) launch.detail = std::string(op) + " " + DescribeForLog({{"input", &self}, {"target", &target}});
  LaunchKernel(std::move(launch), fwd, tl, x.data_ptr(), t.data_ptr(), w.defined() ? w.data_ptr() : nullptr,
               reduction == npu_kernels::kNllNone ? out.data_ptr() : nullptr,
               partial.defined() ? partial.data_ptr() : nullptr);
  if (reduction == npu_kernels::kNllNone) {
    total_weight.zero_();
    return {out, total_weight};
  }
  auto red = PickFloatKernel(op, self.scalar_type(), &nll_reduce_kernel_float, &nll_reduce_kernel_half,
                             &nll_reduce_kernel_bf16);
  LaunchKernel(KernelLaunch{"nll_reduce_kernel", ascendc_host::CoreType::AIV, 1, dev}, red, tl, partial.data_ptr(),
               out.data_ptr(), total_weight.data_ptr());
  return {out, total_weight};
}

Tensor NllBackward(const char* op, bool two_d, const Tensor& grad_output, const Tensor& self, const Tensor& target,
                   const Tensor& weight_in, int64_t reduction, int64_t ignore_index, const Tensor& total_weight) {
  const NllShape s = CheckNll(op, two_d, self, target, weight_in, reduction);
  CheckSameNpuDevice(op, {{"grad_output", &grad_output}, {"input", &self}, {"total_weight", &total_weight}});
  TORCH_CHECK(grad_output.scalar_type() == self.scalar_type(), op, ": grad_output dtype ", grad_output.scalar_type(),
              " does not match input dtype ", self.scalar_type());
  if (reduction == npu_kernels::kNllNone) {
    TORCH_CHECK(grad_output.sizes() == c10::IntArrayRef(s.out_none), op, ": grad_output must have shape ",
                c10::IntArrayRef(s.out_none), " for reduction='none', got ", grad_output.sizes());
  } else {
    TORCH_CHECK(grad_output.numel() == 1, op, ": grad_output must be a single value for a reduced loss, got shape ",
                grad_output.sizes());
  }
  TORCH_CHECK(total_weight.numel() == 1, op, ": total_weight must be a single value, got shape ",
              total_weight.sizes());
  const c10::DeviceIndex dev = self.device().index();
  c10::DeviceGuard guard(self.device());
  Tensor gx = NpuEmpty(self.sizes(), self.scalar_type(), dev);
  if (s.n * s.hw == 0) return gx;
  Tensor go = grad_output.contiguous(), t = target.contiguous(), w = FloatWeight(weight_in);
  Tensor tw = total_weight.scalar_type() == self.scalar_type() ? total_weight.contiguous()
                                                               : total_weight.to(self.scalar_type());
  auto tl = Tiling(s, reduction, ignore_index, w, self, false);
  auto bwd = PickFloatKernel(op, self.scalar_type(), &nll_bwd_kernel_float, &nll_bwd_kernel_half, &nll_bwd_kernel_bf16);
  KernelLaunch launch{"nll_bwd_kernel", ascendc_host::CoreType::AIV, tl.block_dim, dev};
  if (LogDebugEnabled()) launch.detail = std::string(op) + " " + DescribeForLog({{"input", &self}, {"target", &target}});
  LaunchKernel(std::move(launch), bwd, tl, go.data_ptr(), t.data_ptr(), w.defined() ? w.data_ptr() : nullptr,
               tw.data_ptr(), gx.data_ptr());
  return gx;
}

std::tuple<Tensor, Tensor> nll_loss_forward(const Tensor& self, const Tensor& target, const OptTensor& weight,
                                            int64_t reduction, c10::SymInt ignore_index) {
  return NllForward("nll_loss", false, self, target, Or(weight), reduction, ignore_index.expect_int());
}
std::tuple<Tensor&, Tensor&> nll_loss_forward_out(const Tensor& self, const Tensor& target, const OptTensor& weight,
                                                  int64_t reduction, c10::SymInt ignore_index, Tensor& output,
                                                  Tensor& total_weight) {
  auto [o, tw] = NllForward("nll_loss", false, self, target, Or(weight), reduction, ignore_index.expect_int());
  output.resize_(o.sizes());
  output.copy_(o);
  total_weight.resize_(tw.sizes());
  total_weight.copy_(tw);
  return {output, total_weight};
}
Tensor nll_loss_backward(const Tensor& grad_output, const Tensor& self, const Tensor& target, const OptTensor& weight,
                         int64_t reduction, c10::SymInt ignore_index, const Tensor& total_weight) {
  return NllBackward("nll_loss_backward", false, grad_output, self, target, Or(weight), reduction,
                     ignore_index.expect_int(), total_weight);
}
Tensor& nll_loss_backward_out(const Tensor& grad_output, const Tensor& self, const Tensor& target,
                              const OptTensor& weight, int64_t reduction, c10::SymInt ignore_index,
                              const Tensor& total_weight, Tensor& grad_input) {
  Tensor g = nll_loss_backward(grad_output, self, target, weight, reduction, ignore_index, total_weight);
  grad_input.resize_(g.sizes());
  grad_input.copy_(g);
  return grad_input;
}
std::tuple<Tensor, Tensor> nll_loss2d_forward(const Tensor& self, const Tensor& target, const OptTensor& weight,
                                              int64_t reduction, c10::SymInt ignore_index) {
  return NllForward("nll_loss2d", true, self, target, Or(weight), reduction, ignore_index.expect_int());
}
std::tuple<Tensor&, Tensor&> nll_loss2d_forward_out(const Tensor& self, const Tensor& target, const OptTensor& weight,
                                                    int64_t reduction, c10::SymInt ignore_index, Tensor& output,
                                                    Tensor& total_weight) {
  auto [o, tw] = NllForward("nll_loss2d", true, self, target, Or(weight), reduction, ignore_index.expect_int());
  output.resize_(o.sizes());
  output.copy_(o);
  total_weight.resize_(tw.sizes());
  total_weight.copy_(tw);
  return {output, total_weight};
}
Tensor nll_loss2d_backward(const Tensor& grad_output, const Tensor& self, const Tensor& target,
                           const OptTensor& weight, int64_t reduction, c10::SymInt ignore_index,
                           const Tensor& total_weight) {
  return NllBackward("nll_loss2d_backward", true, grad_output, self, target, Or(weight), reduction,
                     ignore_index.expect_int(), total_weight);
}
Tensor& nll_loss2d_backward_out(const Tensor& grad_output, const Tensor& self, const Tensor& target,
                                const OptTensor& weight, int64_t reduction, c10::SymInt ignore_index,
                                const Tensor& total_weight, Tensor& grad_input) {
  Tensor g = nll_loss2d_backward(grad_output, self, target, weight, reduction, ignore_index, total_weight);
  grad_input.resize_(g.sizes());
  grad_input.copy_(g);
  return grad_input;
}

}  // namespace
}  // namespace torch_ops_nn

namespace torch_ops_nn {
namespace {

// ---- mse_loss / smooth_l1_loss / huber_loss: compositions of the npu elementwise and reduction
// kernels (a few launches each; no CPU work).
void CheckLossArgs(const char* op, const at::Tensor& self, const at::Tensor& target, int64_t reduction) {
  CheckSameNpuDevice(op, {{"self", &self}, {"target", &target}});
  NPU_CHECK_DTYPE(IsNpuFloat(self.scalar_type()), self.scalar_type(), op, ": argument 'self' has dtype ",
                  self.scalar_type(), ", which is not supported on npu; supported dtypes: Float, Half, BFloat16");
  TORCH_CHECK(reduction >= 0 && reduction <= 2, op, ": reduction must be 0 (none), 1 (mean) or 2 (sum), got ",
              reduction);
}
// self - target; a bool target counts as 0 / 1 in self's dtype, as the CPU's loss kernels promote it
// (at::sub refuses bool operands).
at::Tensor Diff(const at::Tensor& self, const at::Tensor& target) {
  return at::sub(self, target.scalar_type() == c10::kBool ? target.to(self.scalar_type()) : target);
}
// d(loss)/d(self) scale of a mean reduction: 1 / numel of the broadcast pair.
double MeanNorm(const at::Tensor& self, const at::Tensor& target, int64_t reduction) {
  if (reduction != at::Reduction::Mean) return 1.0;
  const int64_t n = c10::multiply_integers(at::infer_size(self.sizes(), target.sizes()));
  return n > 0 ? 1.0 / double(n) : 1.0;
}

at::Tensor mse_loss_npu(const at::Tensor& self, const at::Tensor& target, int64_t reduction) {
  CheckLossArgs("mse_loss", self, target, reduction);
  const at::Tensor d = Diff(self, target);
  return ApplyReduction(at::mul(d, d), reduction);
}
at::Tensor& mse_loss_out(const at::Tensor& self, const at::Tensor& target, int64_t reduction, at::Tensor& out) {
  return CopyToOut("mse_loss", mse_loss_npu(self, target, reduction), out);
}
at::Tensor mse_loss_backward_npu(const at::Tensor& grad, const at::Tensor& self, const at::Tensor& target,
                                 int64_t reduction) {
  CheckLossArgs("mse_loss_backward", self, target, reduction);
  const double norm = 2.0 * MeanNorm(self, target, reduction);
  return at::mul(at::mul(Diff(self, target), norm), grad);
}
at::Tensor& mse_loss_backward_out(const at::Tensor& grad, const at::Tensor& self, const at::Tensor& target,
                                  int64_t reduction, at::Tensor& grad_input) {
  return CopyToOut("mse_loss_backward", mse_loss_backward_npu(grad, self, target, reduction), grad_input);
}

// smooth_l1 (beta) and huber (delta): |d| < t ? 0.5 d^2 * a : (|d| - 0.5 t) * b, with
// smooth_l1: a = 1 / beta, b = 1; huber: a = 1, b = delta (t = beta or delta).
at::Tensor RobustLoss(const char* op, const at::Tensor& self, const at::Tensor& target, int64_t reduction, double t,
                      bool huber) {
  CheckLossArgs(op, self, target, reduction);
  TORCH_CHECK(huber ? t > 0 : t >= 0, op, ": ", huber ? "delta" : "beta", " must be ", huber ? "positive" : "non-negative",
              ", got ", t);
  const at::Tensor z = at::abs(Diff(self, target));
  if (!huber && t == 0) return ApplyReduction(z, reduction);  // beta 0: plain L1
  const at::Tensor quad = at::mul(at::mul(z, z), huber ? 0.5 : 0.5 / t);
  const at::Tensor lin = huber ? at::mul(at::sub(z, 0.5 * t), t) : at::sub(z, 0.5 * t);
  at::Tensor loss = at::where(at::lt(z, t), quad, lin);
  // huber_loss's result has self's dtype on the CPU and CUDA (smooth_l1_loss promotes with the target)
  if (huber && loss.scalar_type() != self.scalar_type()) loss = loss.to(self.scalar_type());
  return ApplyReduction(loss, reduction);
}
at::Tensor RobustLossBackward(const char* op, const at::Tensor& grad, const at::Tensor& self, const at::Tensor& target,
                              int64_t reduction, double t, bool huber) {
  CheckLossArgs(op, self, target, reduction);
  const double norm = MeanNorm(self, target, reduction);
  const at::Tensor d = Diff(self, target);
  at::Tensor g;
  if (!huber && t == 0) {
    g = at::sign(d);
  } else if (huber) {
    g = at::clamp(d, -t, t);  // |d| <= delta ? d : delta * sign(d)
  } else {
    g = at::where(at::lt(at::abs(d), t), at::mul(d, 1.0 / t), at::sign(d));
  }
  return at::mul(at::mul(g, norm), grad);
}
at::Tensor smooth_l1_loss_npu(const at::Tensor& self, const at::Tensor& target, int64_t reduction, double beta) {
  return RobustLoss("smooth_l1_loss", self, target, reduction, beta, false);
}
at::Tensor& smooth_l1_loss_out(const at::Tensor& self, const at::Tensor& target, int64_t reduction, double beta,
                               at::Tensor& out) {
  return CopyToOut("smooth_l1_loss", smooth_l1_loss_npu(self, target, reduction, beta), out);
}
at::Tensor smooth_l1_loss_backward_npu(const at::Tensor& grad, const at::Tensor& self, const at::Tensor& target,
                                       int64_t reduction, double beta) {
  return RobustLossBackward("smooth_l1_loss_backward", grad, self, target, reduction, beta, false);
}
at::Tensor& smooth_l1_loss_backward_out(const at::Tensor& grad, const at::Tensor& self, const at::Tensor& target,
                                        int64_t reduction, double beta, at::Tensor& grad_input) {
  return CopyToOut("smooth_l1_loss_backward", smooth_l1_loss_backward_npu(grad, self, target, reduction, beta),
                   grad_input);
}
at::Tensor huber_loss_npu(const at::Tensor& self, const at::Tensor& target, int64_t reduction, double delta) {
  return RobustLoss("huber_loss", self, target, reduction, delta, true);
}
at::Tensor& huber_loss_out(const at::Tensor& self, const at::Tensor& target, int64_t reduction, double delta,
                           at::Tensor& out) {
  return CopyToOut("huber_loss", huber_loss_npu(self, target, reduction, delta), out);
}
at::Tensor huber_loss_backward_npu(const at::Tensor& grad, const at::Tensor& self, const at::Tensor& target,
                                   int64_t reduction, double delta) {
  return RobustLossBackward("huber_loss_backward", grad, self, target, reduction, delta, true);
}
at::Tensor& huber_loss_backward_out(const at::Tensor& grad, const at::Tensor& self, const at::Tensor& target,
                                    int64_t reduction, double delta, at::Tensor& grad_input) {
  return CopyToOut("huber_loss_backward", huber_loss_backward_npu(grad, self, target, reduction, delta),
                   grad_input);
}

}  // namespace
}  // namespace torch_ops_nn

NPU_ATEN_LIBRARY_IMPL(m) {
  m.impl("mse_loss", TORCH_FN(torch_ops_nn::mse_loss_npu));
  m.impl("mse_loss.out", TORCH_FN(torch_ops_nn::mse_loss_out));
  m.impl("mse_loss_backward", TORCH_FN(torch_ops_nn::mse_loss_backward_npu));
  m.impl("mse_loss_backward.grad_input", TORCH_FN(torch_ops_nn::mse_loss_backward_out));
  m.impl("smooth_l1_loss", TORCH_FN(torch_ops_nn::smooth_l1_loss_npu));
  m.impl("smooth_l1_loss.out", TORCH_FN(torch_ops_nn::smooth_l1_loss_out));
  m.impl("smooth_l1_loss_backward", TORCH_FN(torch_ops_nn::smooth_l1_loss_backward_npu));
  m.impl("smooth_l1_loss_backward.grad_input", TORCH_FN(torch_ops_nn::smooth_l1_loss_backward_out));
  m.impl("huber_loss", TORCH_FN(torch_ops_nn::huber_loss_npu));
  m.impl("huber_loss.out", TORCH_FN(torch_ops_nn::huber_loss_out));
  m.impl("huber_loss_backward", TORCH_FN(torch_ops_nn::huber_loss_backward_npu));
  m.impl("huber_loss_backward.out", TORCH_FN(torch_ops_nn::huber_loss_backward_out));
}

NPU_ATEN_LIBRARY_IMPL(m) {
  m.impl("nll_loss_forward", TORCH_FN(torch_ops_nn::nll_loss_forward));
  m.impl("nll_loss_forward.output", TORCH_FN(torch_ops_nn::nll_loss_forward_out));
  m.impl("nll_loss_backward", TORCH_FN(torch_ops_nn::nll_loss_backward));
  m.impl("nll_loss_backward.grad_input", TORCH_FN(torch_ops_nn::nll_loss_backward_out));
  m.impl("nll_loss2d_forward", TORCH_FN(torch_ops_nn::nll_loss2d_forward));
  m.impl("nll_loss2d_forward.output", TORCH_FN(torch_ops_nn::nll_loss2d_forward_out));
  m.impl("nll_loss2d_backward", TORCH_FN(torch_ops_nn::nll_loss2d_backward));
  m.impl("nll_loss2d_backward.grad_input", TORCH_FN(torch_ops_nn::nll_loss2d_backward_out));
}
