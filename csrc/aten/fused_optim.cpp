// Adam / AdamW with fused=True on npu (_fused_adam_, _fused_adamw_; they took the CPU fallback), as
// compositions of native ops per parameter with PyTorch's fused-kernel math: the gradient unscaled in
// place by grad_scale, negated under maximize, weight decay added to it (Adam) or applied to the
// parameter (AdamW), then
//   m = beta1 m + (1 - beta1) g,  v = beta2 v + (1 - beta2) g^2  (amsgrad: vmax = max(vmax, v)),
//   p -= lr / (1 - beta1^t) * m / (sqrt(v) / sqrt(1 - beta2^t) + eps)
// with the step t read on the device (no read-back per parameter). A found_inf of 1 skips the whole
// update, as the fused kernels do (one read-back of found_inf). float32 parameters; other dtypes take the
// CPU fallback.
#include <ATen/ATen.h>
#include <torch/library.h>

#include "adam.h"
#include "aten/kernel_launch.h"
#include "aten/op_common.h"
#include "core/cpu_fallback.h"

namespace torch_ops_nn {
namespace {

TORCH_OPS_NN_REGISTER_KERNEL(adam_kernel);
TORCH_OPS_NN_REGISTER_KERNEL(sgd_kernel);

// One parameter's step by adam_kernel; false when the operands do not fit it (the caller composes).
bool AdamKernelStep(bool adamw, const at::Tensor& p, const at::Tensor& g, const at::Tensor& m, const at::Tensor& v,
                    const at::Tensor& vmax, const at::Tensor& step, const std::optional<at::Tensor>& grad_scale,
                    double lr, double beta1, double beta2, double weight_decay, double eps, bool maximize) {
  const bool scaled = grad_scale.has_value() && grad_scale->defined();
  for (const at::Tensor* t : {&p, &g, &m, &v})
    if (t->scalar_type() != c10::kFloat || !t->is_contiguous()) return false;
  if (vmax.defined() && (vmax.scalar_type() != c10::kFloat || !vmax.is_contiguous() || vmax.sizes() != p.sizes()))
    return false;
  if (step.scalar_type() != c10::kFloat || step.numel() != 1 || !step.device().is_privateuseone()) return false;
  if (scaled && (grad_scale->scalar_type() != c10::kFloat || grad_scale->numel() != 1 ||
                 !grad_scale->device().is_privateuseone()))
    return false;
  const c10::DeviceIndex dev = p.device().index();
  auto t = npu_kernels::adam_tiling(uint64_t(p.numel()), vmax.defined(), SocInfoFor(dev));
  t.lr = float(lr);
  t.beta1 = float(beta1);
  t.beta2 = float(beta2);
  t.weight_decay = float(weight_decay);
  t.eps = float(eps);
  t.adamw = adamw ? 1 : 0;
  t.maximize = maximize ? 1 : 0;
  t.has_scale = scaled ? 1 : 0;
  const at::Tensor st = step.contiguous();
  KernelLaunch launch{"adam_kernel", ascendc_host::CoreType::AIV, t.block_dim, dev};
  LaunchKernel(std::move(launch), &adam_kernel, t, p.data_ptr(), g.data_ptr(), m.data_ptr(), v.data_ptr(),
               vmax.defined() ? vmax.data_ptr() : nullptr, st.data_ptr(),
               scaled ? grad_scale->contiguous().data_ptr() : nullptr);
  return true;
}

void FusedAdam(const char* name, bool adamw, at::TensorList params, at::TensorList grads, at::TensorList exp_avgs,
               at::TensorList exp_avg_sqs, at::TensorList max_exp_avg_sqs, at::TensorList state_steps, double lr,
               double beta1, double beta2, double weight_decay, double eps, bool amsgrad, bool maximize,
               const std::optional<at::Tensor>& grad_scale, const std::optional<at::Tensor>& found_inf) {
  const size_t n = params.size();
  TORCH_CHECK(grads.size() == n && exp_avgs.size() == n && exp_avg_sqs.size() == n && state_steps.size() == n &&
                  (!amsgrad || max_exp_avg_sqs.size() == n),
              name, ": params, grads, exp_avgs, exp_avg_sqs", amsgrad ? ", max_exp_avg_sqs" : "",
              " and state_steps must have the same length, got ", n, ", ", grads.size(), ", ", exp_avgs.size(), ", ",
              exp_avg_sqs.size(), amsgrad ? ", " + std::to_string(max_exp_avg_sqs.size()) : std::string(), " and ",
              state_steps.size());
  bool all_float = true;
  for (const at::Tensor& p : params) all_float = all_float && p.scalar_type() == c10::kFloat;
  if (!all_float) {
    CallCpuFallback(adamw ? "aten::_fused_adamw_" : "aten::_fused_adam_", "",
                    {params.vec(), grads.vec(), exp_avgs.vec(), exp_avg_sqs.vec(), max_exp_avg_sqs.vec(),
                     state_steps.vec(), lr, beta1, beta2, weight_decay, eps, amsgrad, maximize, grad_scale, found_inf});
    return;
  }
  if (found_inf.has_value() && found_inf->defined() && found_inf->item<float>() == 1.0f) return;
  for (size_t i = 0; i < n; ++i) {
    at::Tensor p = params[i], m = exp_avgs[i], v = exp_avg_sqs[i];
    at::Tensor g = grads[i];
    CheckSameNpuDevice(name, {{"param", &p}, {"grad", &g}, {"exp_avg", &m}, {"exp_avg_sq", &v}});
    TORCH_CHECK(g.sizes() == p.sizes() && m.sizes() == p.sizes() && v.sizes() == p.sizes(), name,
                ": grad, exp_avg and exp_avg_sq must have the param's shape ", p.sizes());
    if (p.numel() == 0) continue;
    if (AdamKernelStep(adamw, p, g, m, v, amsgrad ? max_exp_avg_sqs[i] : at::Tensor(), state_steps[i], grad_scale, lr,
                       beta1, beta2, weight_decay, eps, maximize))
      continue;
    if (grad_scale.has_value() && grad_scale->defined()) g.div_(*grad_scale);
    at::Tensor gv = maximize ? g.neg() : g;
    if (weight_decay != 0.0) {
      if (adamw) p.mul_(1.0 - lr * weight_decay);
      else gv = gv.add(p, weight_decay);
    }
    m.mul_(beta1).add_(gv, 1.0 - beta1);
    v.mul_(beta2).addcmul_(gv, gv, 1.0 - beta2);
    const at::Tensor t = state_steps[i].to(c10::kFloat);
    const at::Tensor bc1 = at::pow(beta1, t).neg_().add_(1.0);
    const at::Tensor bc2_sqrt = at::pow(beta2, t).neg_().add_(1.0).sqrt_();
    at::Tensor src = v;
    if (amsgrad) {
      at::Tensor vmax = max_exp_avg_sqs[i];
      at::maximum_out(vmax, vmax, v);
      src = vmax;
    }
    const at::Tensor denom = src.sqrt().div_(bc2_sqrt).add_(eps);
    p.sub_(m.div(denom).mul_(bc1.reciprocal().mul_(lr)));
  }
}

void fused_adam_(at::TensorList params, at::TensorList grads, at::TensorList exp_avgs, at::TensorList exp_avg_sqs,
                 at::TensorList max_exp_avg_sqs, at::TensorList state_steps, double lr, double beta1, double beta2,
                 double weight_decay, double eps, bool amsgrad, bool maximize,
                 const std::optional<at::Tensor>& grad_scale, const std::optional<at::Tensor>& found_inf) {
  FusedAdam("_fused_adam_", false, params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, lr, beta1,
            beta2, weight_decay, eps, amsgrad, maximize, grad_scale, found_inf);
}
void fused_adamw_(at::TensorList params, at::TensorList grads, at::TensorList exp_avgs, at::TensorList exp_avg_sqs,
                  at::TensorList max_exp_avg_sqs, at::TensorList state_steps, double lr, double beta1, double beta2,
                  double weight_decay, double eps, bool amsgrad, bool maximize,
                  const std::optional<at::Tensor>& grad_scale, const std::optional<at::Tensor>& found_inf) {
  FusedAdam("_fused_adamw_", true, params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, lr, beta1,
            beta2, weight_decay, eps, amsgrad, maximize, grad_scale, found_inf);
}

// SGD with fused=True (_fused_sgd_, also with a tensor lr): PyTorch's fused-kernel math per parameter
// (see sgd_kernel in adam.h) in one pass on the vector cores for contiguous float32 operands,
// composed of native ops otherwise; a found_inf of 1 skips the step (one read-back).
void FusedSgd(at::TensorList params, at::TensorList grads, at::TensorList bufs, double weight_decay, double momentum,
              double lr, const at::Tensor& lr_t, double dampening, bool nesterov, bool maximize, bool is_first_step,
              const std::optional<at::Tensor>& grad_scale, const std::optional<at::Tensor>& found_inf) {
  const char* name = "_fused_sgd_";
  const size_t n = params.size();
  const bool mom = momentum != 0.0;
  TORCH_CHECK(grads.size() == n && (!mom || bufs.size() == n), name,
              ": self, grads", mom ? " and momentum_buffer_list" : "", " must have the same length, got ", n, ", ",
              grads.size(), mom ? ", " + std::to_string(bufs.size()) : std::string());
  if (found_inf.has_value() && found_inf->defined() && found_inf->item<float>() == 1.0f) return;
  const bool scaled = grad_scale.has_value() && grad_scale->defined();
  // A tensor lr on the device is read by the kernel; elsewhere (or composed) as a host value.
  const bool lr_dev = lr_t.defined() && lr_t.device().is_privateuseone() && lr_t.scalar_type() == c10::kFloat &&
                      lr_t.numel() == 1;
  double lr_host = lr;
  bool lr_read = false;
  for (size_t i = 0; i < n; ++i) {
    at::Tensor p = params[i], g = grads[i];
    at::Tensor b = mom ? bufs[i] : at::Tensor();
    CheckSameNpuDevice(name, {{"param", &p}, {"grad", &g}, {"momentum_buffer", &b}});
    TORCH_CHECK(g.sizes() == p.sizes() && (!mom || b.sizes() == p.sizes()), name,
                ": grad", mom ? " and momentum_buffer" : "", " must have the param's shape ", p.sizes());
    if (p.numel() == 0) continue;
    bool fits = p.scalar_type() == c10::kFloat && g.scalar_type() == c10::kFloat && p.is_contiguous() &&
                g.is_contiguous() && (!mom || (b.scalar_type() == c10::kFloat && b.is_contiguous())) &&
                (!lr_t.defined() || lr_dev) &&
                (!scaled || (grad_scale->scalar_type() == c10::kFloat && grad_scale->numel() == 1 &&
                             grad_scale->device().is_privateuseone()));
    if (fits) {
      const c10::DeviceIndex dev = p.device().index();
      auto t = npu_kernels::sgd_tiling(uint64_t(p.numel()), SocInfoFor(dev));
      t.lr = float(lr);
      t.weight_decay = float(weight_decay);
      t.momentum = float(momentum);
      t.dampening = float(dampening);
      t.nesterov = nesterov ? 1 : 0;
      t.maximize = maximize ? 1 : 0;
      t.first_step = is_first_step ? 1 : 0;
      t.has_scale = scaled ? 1 : 0;
      t.has_lr_tensor = lr_t.defined() ? 1 : 0;
      KernelLaunch launch{"sgd_kernel", ascendc_host::CoreType::AIV, t.block_dim, dev};
      LaunchKernel(std::move(launch), &sgd_kernel, t, p.data_ptr(), g.data_ptr(), mom ? b.data_ptr() : nullptr,
                   lr_t.defined() ? lr_t.data_ptr() : nullptr, scaled ? grad_scale->data_ptr() : nullptr);
      continue;
    }
    if (lr_t.defined() && !lr_read) {
      lr_host = lr_t.item<double>();
      lr_read = true;
    }
    if (scaled) g.div_(*grad_scale);
    at::Tensor gv = maximize ? g.neg() : g;
    if (weight_decay != 0.0) gv = gv.add(p, weight_decay);
    if (mom) {
      if (is_first_step) b.copy_(gv);
      else b.mul_(momentum).add_(gv, 1.0 - dampening);
      gv = nesterov ? gv.add(b, momentum) : b;
    }
    p.add_(gv, -lr_host);
  }
}

void fused_sgd_(at::TensorList self, at::TensorList grads, at::TensorList bufs, double weight_decay, double momentum,
                double lr, double dampening, bool nesterov, bool maximize, bool is_first_step,
                const std::optional<at::Tensor>& grad_scale, const std::optional<at::Tensor>& found_inf) {
  FusedSgd(self, grads, bufs, weight_decay, momentum, lr, at::Tensor(), dampening, nesterov, maximize, is_first_step,
           grad_scale, found_inf);
}
void fused_sgd_tensor_lr_(at::TensorList self, at::TensorList grads, at::TensorList bufs, double weight_decay,
                          double momentum, const at::Tensor& lr, double dampening, bool nesterov, bool maximize,
                          bool is_first_step, const std::optional<at::Tensor>& grad_scale,
                          const std::optional<at::Tensor>& found_inf) {
  FusedSgd(self, grads, bufs, weight_decay, momentum, 0.0, lr, dampening, nesterov, maximize, is_first_step,
           grad_scale, found_inf);
}

}  // namespace
}  // namespace torch_ops_nn

NPU_ATEN_LIBRARY_IMPL(m) {
  m.impl("_fused_adam_", TORCH_FN(torch_ops_nn::fused_adam_));
  m.impl("_fused_adamw_", TORCH_FN(torch_ops_nn::fused_adamw_));
  m.impl("_fused_sgd_", TORCH_FN(torch_ops_nn::fused_sgd_));
  m.impl("_fused_sgd_.tensor_lr", TORCH_FN(torch_ops_nn::fused_sgd_tensor_lr_));
}
