// Normalization ops on npu: batch norm (forward train/eval, backward), layer norm and group norm.
// Argument checks, outputs, tiling and the launches of the Ascend C kernels in ascendc_kernels/norm*.
#include <ATen/core/Tensor.h>
#include <ATen/ops/empty.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include <optional>
#include <sstream>
#include <tuple>

#include "aten/kernel_launch.h"
#include "aten/op_common.h"
#include "norm.h"

namespace torch_ops_nn {
namespace {

using at::Tensor;
using OptTensor = std::optional<Tensor>;

TORCH_OPS_NN_REGISTER_KERNEL(bn_reduce_kernel);
TORCH_OPS_NN_REGISTER_KERNEL(bn_finalize_kernel);
TORCH_OPS_NN_REGISTER_KERNEL(bn_apply_kernel);

const Tensor& Or(const OptTensor& t) {
  static const Tensor undefined;
  return t.has_value() ? *t : undefined;
}
void* Ptr(const Tensor& t) { return t.defined() ? t.data_ptr() : nullptr; }

// A contiguous float32 copy (or the tensor itself) of a small per-channel vector, on the device.
Tensor FloatVec(const Tensor& t) {
  if (!t.defined()) return t;
  return t.scalar_type() == c10::kFloat && t.is_contiguous() ? t : t.to(c10::kFloat).contiguous();
}

void CheckChannelVec(const char* op, const char* name, const Tensor& t, int64_t c) {
  if (!t.defined()) return;
  TORCH_CHECK(t.dim() == 1 && t.numel() == c, op, ": '", name, "' must be a 1-D tensor of ", c,
              " elements (the channel count, dim 1 of the input), got shape ", t.sizes());
  CheckFloatDtype(op, name, t);
}

// ------------------------------------------------------------------ batch norm
struct BnView {
  uint32_t layout;
  int64_t n, c, hw;
  c10::MemoryFormat format;
  Tensor x;  // in the kernel's layout
};

BnView ViewForBn(const char* op, const Tensor& input) {
  TORCH_CHECK(input.dim() >= 2, op, ": input must have at least 2 dimensions (N, C, ...), got shape ",
              input.sizes());
  BnView v;
  v.n = input.size(0);
  v.c = input.size(1);
  v.hw = v.c == 0 || v.n == 0 ? 0 : input.numel() / (v.n * v.c);
  v.layout = npu_kernels::kBnNchw;
  v.format = c10::MemoryFormat::Contiguous;
  const auto& soc = SocInfoFor(input.device().index());
  if (input.dim() == 4 && !input.is_contiguous() && input.is_contiguous(c10::MemoryFormat::ChannelsLast) &&
      static_cast<uint64_t>(v.c) <= npu_kernels::batch_norm_nhwc_max_channels(input.element_size(), soc)) {
    v.layout = npu_kernels::kBnNhwc;
    v.format = c10::MemoryFormat::ChannelsLast;
    v.x = input;
  } else {
    v.x = Contiguous(input);
  }
  return v;
}

template <typename Fn>
Fn PickBn(const char* op, c10::ScalarType t, Fn f32, Fn f16, Fn bf16) {
  return PickFloatKernel(op, t, f32, f16, bf16);
}

void LaunchBnReduce(const npu_kernels::BatchNormTiling& t, const Tensor& x, const Tensor& go, const Tensor& shift,
                    const Tensor& partial, const Tensor& kshift) {
  const c10::DeviceIndex dev = x.device().index();
  auto k = PickBn("batch_norm", x.scalar_type(), &bn_reduce_kernel_float, &bn_reduce_kernel_half, &bn_reduce_kernel_bf16);
  KernelLaunch launch{"bn_reduce_kernel", ascendc_host::CoreType::AIV, t.block_dim, dev};
  if (LogDebugEnabled()) launch.detail = DescribeForLog({{"x", &x}, {"grad_out", &go}});
  LaunchKernel(std::move(launch), k, t, Ptr(x), Ptr(go), Ptr(shift), Ptr(partial), Ptr(kshift));
}

void LaunchBnFinalize(const npu_kernels::BatchNormTiling& t, c10::DeviceIndex dev, const Tensor& partial,
                      const Tensor& kshift, const Tensor& w, const Tensor& b, const Tensor& mean_in,
                      const Tensor& var_in, const Tensor& out) {
  KernelLaunch launch{"bn_finalize_kernel", ascendc_host::CoreType::AIV, 1, dev};
  LaunchKernel(std::move(launch), &bn_finalize_kernel, t, Ptr(partial), Ptr(kshift), Ptr(w), Ptr(b), Ptr(mean_in),
               Ptr(var_in), Ptr(out));
}

void LaunchBnApply(const npu_kernels::BatchNormTiling& t, const Tensor& x, const Tensor& go, const Tensor& coef,
                   const Tensor& y) {
  const c10::DeviceIndex dev = x.device().index();
  auto k = PickBn("batch_norm", x.scalar_type(), &bn_apply_kernel_float, &bn_apply_kernel_half, &bn_apply_kernel_bf16);
  KernelLaunch launch{"bn_apply_kernel", ascendc_host::CoreType::AIV, t.block_dim, dev};
  if (LogDebugEnabled()) launch.detail = DescribeForLog({{"x", &x}, {"grad_out", &go}});
  LaunchKernel(std::move(launch), k, t, Ptr(x), Ptr(go), Ptr(coef), Ptr(y));
}

c10::ScalarType ParamDtype(const Tensor& input, const Tensor& weight, const Tensor& running_mean) {
  if (weight.defined()) return weight.scalar_type();
  if (running_mean.defined()) return running_mean.scalar_type();
  return input.scalar_type();
}

void CheckBnArgs(const char* op, const Tensor& input, const Tensor& weight, const Tensor& bias,
                 const Tensor& running_mean, const Tensor& running_var) {
  CheckSameNpuDevice(op, {{"input", &input}, {"weight", &weight}, {"bias", &bias}, {"running_mean", &running_mean},
                          {"running_var", &running_var}});
  CheckFloatDtype(op, "input", input);
  TORCH_CHECK(input.dim() >= 2, op, ": input must have at least 2 dimensions (N, C, ...), got shape ",
              input.sizes());
  const int64_t c = input.size(1);
  CheckChannelVec(op, "weight", weight, c);
  CheckChannelVec(op, "bias", bias, c);
  CheckChannelVec(op, "running_mean", running_mean, c);
  CheckChannelVec(op, "running_var", running_var, c);
}

std::tuple<Tensor, Tensor, Tensor> BatchNormForward(const char* op, const Tensor& input, const Tensor& weight,
                                                    const Tensor& bias, const Tensor& running_mean,
                                                    const Tensor& running_var, bool training, double momentum,
                                                    double eps) {
  CheckBnArgs(op, input, weight, bias, running_mean, running_var);
  TORCH_CHECK(training || (running_mean.defined() && running_var.defined()), op,
              ": running_mean and running_var are required in evaluation mode (training=False)");
  TORCH_CHECK(running_mean.defined() == running_var.defined(), op,
              ": running_mean and running_var must both be given or both be None");
  const c10::DeviceIndex dev = input.device().index();
  c10::DeviceGuard guard(input.device());
  const c10::ScalarType pdt = ParamDtype(input, weight, running_mean);
  BnView v = ViewForBn(op, input);
  Tensor y = NpuEmpty(input.sizes(), input.scalar_type(), dev, v.format);
  const int64_t c = v.c;
  if (!training) {
    Tensor empty0 = NpuEmpty({0}, pdt, dev);
    if (input.numel() == 0) return {y, empty0, NpuEmpty({0}, pdt, dev)};
    auto t = npu_kernels::batch_norm_tiling(v.layout, npu_kernels::kBnFwdEval, v.n, v.c, v.hw, input.element_size(),
                                            SocInfoFor(dev));
    t.has_weight = weight.defined();
    t.has_bias = bias.defined();
    t.eps = static_cast<float>(eps);
    Tensor out = NpuEmpty({npu_kernels::kBnSlots * c}, c10::kFloat, dev);
    Tensor w = FloatVec(weight), b = FloatVec(bias), rm = FloatVec(running_mean), rv = FloatVec(running_var);
    LaunchBnFinalize(t, dev, Tensor(), Tensor(), w, b, rm, rv, out);
    LaunchBnApply(t, v.x, Tensor(), out, y);
    return {y, empty0, NpuEmpty({0}, pdt, dev)};
  }
  TORCH_CHECK(v.n * v.hw > 0, op, ": training needs at least one value per channel, got input shape ", input.sizes());
  auto t = npu_kernels::batch_norm_tiling(v.layout, npu_kernels::kBnFwdTrain, v.n, v.c, v.hw, input.element_size(),
                                          SocInfoFor(dev));
  t.has_weight = weight.defined();
  t.has_bias = bias.defined();
  t.has_running = running_mean.defined();
  t.eps = static_cast<float>(eps);
  t.momentum = static_cast<float>(momentum);
  Tensor partial = NpuEmpty({2 * static_cast<int64_t>(t.partials) * c}, c10::kFloat, dev);
  Tensor kshift = NpuEmpty({c}, c10::kFloat, dev);
  Tensor out = NpuEmpty({npu_kernels::kBnSlots * c}, c10::kFloat, dev);
  Tensor w = FloatVec(weight), b = FloatVec(bias), rm = FloatVec(running_mean), rv = FloatVec(running_var);
  LaunchBnReduce(t, v.x, Tensor(), Tensor(), partial, kshift);
  LaunchBnFinalize(t, dev, partial, kshift, w, b, rm, rv, out);
  LaunchBnApply(t, v.x, Tensor(), out, y);
  if (running_mean.defined()) {
    running_mean.copy_(out.narrow(0, npu_kernels::kBnRunMean * c, c));
    running_var.copy_(out.narrow(0, npu_kernels::kBnRunVar * c, c));
  }
  Tensor save_mean = out.narrow(0, npu_kernels::kBnSaveMean * c, c).to(pdt);
  Tensor save_invstd = out.narrow(0, npu_kernels::kBnSaveInvstd * c, c).to(pdt);
  return {y, save_mean, save_invstd};
}

std::tuple<Tensor, Tensor, Tensor> native_batch_norm(const Tensor& input, const OptTensor& weight,
                                                     const OptTensor& bias, const OptTensor& running_mean,
                                                     const OptTensor& running_var, bool training, double momentum,
                                                     double eps) {
  return BatchNormForward("native_batch_norm", input, Or(weight), Or(bias), Or(running_mean), Or(running_var),
                          training, momentum, eps);
}

std::tuple<Tensor, Tensor, Tensor> native_batch_norm_legit(const Tensor& input, const OptTensor& weight,
                                                           const OptTensor& bias, Tensor& running_mean,
                                                           Tensor& running_var, bool training, double momentum,
                                                           double eps) {
  return BatchNormForward("_native_batch_norm_legit", input, Or(weight), Or(bias), running_mean, running_var,
                          training, momentum, eps);
}

std::tuple<Tensor, Tensor, Tensor> native_batch_norm_legit_no_stats(const Tensor& input, const OptTensor& weight,
                                                                    const OptTensor& bias, bool training,
                                                                    double momentum, double eps) {
  return BatchNormForward("_native_batch_norm_legit", input, Or(weight), Or(bias), Tensor(), Tensor(), training,
                          momentum, eps);
}

std::tuple<Tensor, Tensor, Tensor> native_batch_norm_legit_no_training(const Tensor& input, const OptTensor& weight,
                                                                       const OptTensor& bias,
                                                                       const Tensor& running_mean,
                                                                       const Tensor& running_var, double momentum,
                                                                       double eps) {
  return BatchNormForward("_native_batch_norm_legit_no_training", input, Or(weight), Or(bias), running_mean,
                          running_var, false, momentum, eps);
}

std::tuple<Tensor, Tensor, Tensor> native_batch_norm_backward(const Tensor& grad_out, const Tensor& input,
                                                              const OptTensor& weight_opt,
                                                              const OptTensor& running_mean_opt,
                                                              const OptTensor& running_var_opt,
                                                              const OptTensor& save_mean_opt,
                                                              const OptTensor& save_invstd_opt, bool train, double eps,
                                                              std::array<bool, 3> mask) {
  const char* op = "native_batch_norm_backward";
  const Tensor& weight = Or(weight_opt);
  const Tensor& running_mean = Or(running_mean_opt);
  const Tensor& running_var = Or(running_var_opt);
  const Tensor& save_mean = Or(save_mean_opt);
  const Tensor& save_invstd = Or(save_invstd_opt);
  CheckBnArgs(op, input, weight, Tensor(), running_mean, running_var);
  CheckSameNpuDevice(op, {{"grad_out", &grad_out}, {"input", &input}, {"save_mean", &save_mean},
                          {"save_invstd", &save_invstd}});
  TORCH_CHECK(grad_out.sizes() == input.sizes(), op, ": grad_out shape ", grad_out.sizes(),
              " does not match input shape ", input.sizes());
  TORCH_CHECK(grad_out.scalar_type() == input.scalar_type(), op, ": grad_out dtype ", grad_out.scalar_type(),
              " does not match input dtype ", input.scalar_type());
  const int64_t c = input.size(1);
  const Tensor& mean_src = train ? save_mean : running_mean;
  const Tensor& var_src = train ? save_invstd : running_var;
  TORCH_CHECK(mean_src.defined() && var_src.defined(), op, ": ",
              train ? "save_mean and save_invstd are required when train=True"
                    : "running_mean and running_var are required when train=False");
  CheckChannelVec(op, train ? "save_mean" : "running_mean", mean_src, c);
  CheckChannelVec(op, train ? "save_invstd" : "running_var", var_src, c);
  const c10::DeviceIndex dev = input.device().index();
  c10::DeviceGuard guard(input.device());
  const c10::ScalarType wdt = weight.defined() ? weight.scalar_type() : ParamDtype(input, weight, mean_src);
  BnView v = ViewForBn(op, input);
  Tensor go = v.layout == npu_kernels::kBnNhwc ? grad_out.contiguous(c10::MemoryFormat::ChannelsLast)
                                               : Contiguous(grad_out);
  Tensor gi, gw, gb;
  if (input.numel() == 0) {
    if (mask[0]) gi = NpuEmpty(input.sizes(), input.scalar_type(), dev, v.format);
    if (mask[1]) gw = NpuEmpty({c}, wdt, dev).zero_();
    if (mask[2]) gb = NpuEmpty({c}, wdt, dev).zero_();
    return {gi, gw, gb};
  }
  auto t = npu_kernels::batch_norm_tiling(v.layout, train ? npu_kernels::kBnBwdTrain : npu_kernels::kBnBwdEval, v.n,
                                          v.c, v.hw, input.element_size(), SocInfoFor(dev));
  t.has_weight = weight.defined();
  t.eps = static_cast<float>(eps);
  Tensor partial = NpuEmpty({2 * static_cast<int64_t>(t.partials) * c}, c10::kFloat, dev);
  Tensor out = NpuEmpty({npu_kernels::kBnSlots * c}, c10::kFloat, dev);
  Tensor w = FloatVec(weight), mean_f = FloatVec(mean_src), var_f = FloatVec(var_src);
  LaunchBnReduce(t, v.x, go, mean_f, partial, Tensor());
  LaunchBnFinalize(t, dev, partial, Tensor(), w, Tensor(), mean_f, var_f, out);
  if (mask[0]) {
    gi = NpuEmpty(input.sizes(), input.scalar_type(), dev, v.format);
    LaunchBnApply(t, v.x, go, out, gi);
  }
  if (mask[1]) gw = out.narrow(0, npu_kernels::kBnSaveMean * c, c).to(wdt);
  if (mask[2]) gb = out.narrow(0, npu_kernels::kBnSaveInvstd * c, c).to(wdt);
  return {gi, gw, gb};
}

}  // namespace
}  // namespace torch_ops_nn

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("native_batch_norm", TORCH_FN(torch_ops_nn::native_batch_norm));
  m.impl("_native_batch_norm_legit", TORCH_FN(torch_ops_nn::native_batch_norm_legit));
  m.impl("_native_batch_norm_legit.no_stats", TORCH_FN(torch_ops_nn::native_batch_norm_legit_no_stats));
  m.impl("_native_batch_norm_legit_no_training", TORCH_FN(torch_ops_nn::native_batch_norm_legit_no_training));
  m.impl("native_batch_norm_backward", TORCH_FN(torch_ops_nn::native_batch_norm_backward));
}
