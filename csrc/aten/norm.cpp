// Normalization ops on npu: batch norm (forward train/eval, backward), layer norm and group norm.
// Argument checks, outputs, tiling and the launches of the Ascend C kernels in ascendc_kernels/norm*.
#include <ATen/core/Tensor.h>
#include <ATen/ops/empty.h>
#include <ATen/TensorOperators.h>
#include <ATen/ops/mean.h>
#include <ATen/ops/sum.h>
#include <ATen/ops/rsqrt.h>
#include <ATen/ops/var_mean.h>
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
TORCH_OPS_NN_REGISTER_KERNEL(layer_norm_fwd_kernel);
TORCH_OPS_NN_REGISTER_KERNEL(layer_norm_bwd_kernel);
TORCH_OPS_NN_REGISTER_KERNEL(group_norm_fwd_kernel);
TORCH_OPS_NN_REGISTER_KERNEL(group_norm_bwd_kernel);
TORCH_OPS_NN_REGISTER_KERNEL(partial_rows_fold_kernel);

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

// ---- rows larger than the unified buffer (a layer-norm row or a group-norm group the kernels' tiling
// cannot hold: GroupNorm(32, 256) over 120x128 maps is 8 x 15360 floats, 480 KB against a 192 KB UB):
// the same math over the [rows, d] view by the npu reductions and element-wise ops, in float32
// (statistics by var_mean, unbiased=False; the backward's two row means).
struct RowStats {
  Tensor mean, rstd;  // [rows, 1] float32
};
RowStats RowMoments(const Tensor& xf, double eps) {
  auto [var, mean] = at::var_mean(xf, {1}, /*correction=*/0, /*keepdim=*/true);
  return {mean, at::rsqrt(var + eps)};
}
// gx of a normalization over rows of d elements: rstd * (g - mean(g) - xhat * mean(g * xhat)), g the
// incoming gradient already times the weight.
Tensor RowNormInputGrad(const Tensor& g, const Tensor& xhat, const Tensor& rstd) {
  return (g - g.mean({1}, true) - xhat * (g * xhat).mean({1}, true)) * rstd;
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
  KernelLaunch launch{"bn_apply_kernel", ascendc_host::CoreType::AIV, t.apply_cb ? t.apply_block_dim : t.block_dim,
                      dev};
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

// ------------------------------------------------------------------ layer norm
void FoldPartials(c10::DeviceIndex dev, const Tensor& partial, int64_t rows, int64_t cols, const Tensor& out0,
                  const Tensor& out1) {
  auto t = npu_kernels::fold_tiling(static_cast<uint64_t>(rows), static_cast<uint64_t>(cols), SocInfoFor(dev));
  TORCH_CHECK(rows <= 4095, "norm backward: ", rows, " partial rows exceed the 4095 a fold step takes");
  LaunchKernel(KernelLaunch{"partial_rows_fold_kernel", ascendc_host::CoreType::AIV, 1, dev}, &partial_rows_fold_kernel,
               t, partial.data_ptr(), Ptr(out0), Ptr(out1));
}

struct LnShape {
  int64_t rows, d;
  std::vector<int64_t> stat_shape;
};

LnShape CheckLayerNorm(const char* op, const Tensor& input, c10::IntArrayRef normalized_shape, const Tensor& weight,
                       const Tensor& bias) {
  CheckSameNpuDevice(op, {{"input", &input}, {"weight", &weight}, {"bias", &bias}});
  CheckFloatDtype(op, "input", input);
  const int64_t nd = static_cast<int64_t>(normalized_shape.size());
  TORCH_CHECK(nd >= 1, op, ": normalized_shape must have at least one dimension");
  TORCH_CHECK(input.dim() >= nd && input.sizes().slice(input.dim() - nd).equals(normalized_shape), op,
              ": normalized_shape ", normalized_shape, " does not match the last ", nd,
              " dimension(s) of input shape ", input.sizes());
  for (const auto* pw : {&weight, &bias}) {
    if (!pw->defined()) continue;
    TORCH_CHECK(pw->sizes().equals(normalized_shape), op, ": ", pw == &weight ? "weight" : "bias", " shape ",
                pw->sizes(), " must equal normalized_shape ", normalized_shape);
    CheckFloatDtype(op, pw == &weight ? "weight" : "bias", *pw);
  }
  LnShape s;
  const int64_t axis = input.dim() - nd;
  s.rows = 1;
  for (int64_t i = 0; i < axis; ++i) {
    s.rows *= input.size(i);
    s.stat_shape.push_back(input.size(i));
  }
  s.d = 1;
  for (auto v : normalized_shape) s.d *= v;
  for (int64_t i = 0; i < nd; ++i) s.stat_shape.push_back(1);
  return s;
}

std::tuple<Tensor, Tensor, Tensor> native_layer_norm(const Tensor& input, c10::IntArrayRef normalized_shape,
                                                     const OptTensor& weight_opt, const OptTensor& bias_opt,
                                                     double eps) {
  const char* op = "layer_norm";
  const Tensor& weight = Or(weight_opt);
  const Tensor& bias = Or(bias_opt);
  const LnShape s = CheckLayerNorm(op, input, normalized_shape, weight, bias);
  const c10::DeviceIndex dev = input.device().index();
  c10::DeviceGuard guard(input.device());
  const c10::ScalarType sdt = weight.defined() ? weight.scalar_type() : input.scalar_type();
  Tensor x = Contiguous(input);
  const bool work = s.rows > 0 && s.d > 0;  // (the tiling divides by both)
  auto t = work ? npu_kernels::layer_norm_tiling(s.rows, s.d, false, input.element_size(), SocInfoFor(dev))
                : npu_kernels::LayerNormTiling{};
  if (work && !t.ok) {  // a row larger than the unified buffer
    const Tensor xf = x.reshape({s.rows, s.d}).to(c10::kFloat);
    const RowStats st = RowMoments(xf, eps);
    Tensor yf = (xf - st.mean) * st.rstd;
    if (weight.defined()) yf = yf * weight.reshape({1, s.d}).to(c10::kFloat);
    if (bias.defined()) yf = yf + bias.reshape({1, s.d}).to(c10::kFloat);
    return {yf.to(input.scalar_type()).view(input.sizes()), st.mean.view(s.stat_shape).to(sdt),
            st.rstd.view(s.stat_shape).to(sdt)};
  }
  Tensor y = NpuEmpty(input.sizes(), input.scalar_type(), dev);
  Tensor mean = NpuEmpty(s.stat_shape, c10::kFloat, dev), rstd = NpuEmpty(s.stat_shape, c10::kFloat, dev);
  if (s.rows > 0 && s.d > 0) {
    t.has_weight = weight.defined();
    t.has_bias = bias.defined();
    t.eps = static_cast<float>(eps);
    Tensor w = FloatVec(weight.defined() ? weight.reshape({-1}) : weight);
    Tensor b = FloatVec(bias.defined() ? bias.reshape({-1}) : bias);
    auto k = PickFloatKernel(op, input.scalar_type(), &layer_norm_fwd_kernel_float, &layer_norm_fwd_kernel_half,
                             &layer_norm_fwd_kernel_bf16);
    KernelLaunch launch{"layer_norm_fwd_kernel", ascendc_host::CoreType::AIV, t.block_dim, dev};
    if (LogDebugEnabled()) launch.detail = DescribeForLog({{"input", &input}});
    LaunchKernel(std::move(launch), k, t, x.data_ptr(), Ptr(w), Ptr(b), y.data_ptr(), mean.data_ptr(),
                 rstd.data_ptr());
  }
  return {y, mean.to(sdt), rstd.to(sdt)};
}

std::tuple<Tensor, Tensor, Tensor> native_layer_norm_backward(const Tensor& grad_out, const Tensor& input,
                                                              c10::IntArrayRef normalized_shape, const Tensor& mean,
                                                              const Tensor& rstd, const OptTensor& weight_opt,
                                                              const OptTensor& bias_opt, std::array<bool, 3> mask) {
  const char* op = "layer_norm_backward";
  const Tensor& weight = Or(weight_opt);
  const Tensor& bias = Or(bias_opt);
  const LnShape s = CheckLayerNorm(op, input, normalized_shape, weight, bias);
  CheckSameNpuDevice(op, {{"grad_out", &grad_out}, {"input", &input}, {"mean", &mean}, {"rstd", &rstd}});
  TORCH_CHECK(grad_out.sizes() == input.sizes() && grad_out.scalar_type() == input.scalar_type(), op,
              ": grad_out ", grad_out.sizes(), " ", grad_out.scalar_type(), " must match input ", input.sizes(), " ",
              input.scalar_type());
  TORCH_CHECK(mean.numel() == s.rows && rstd.numel() == s.rows, op, ": mean and rstd must hold ", s.rows,
              " values (one per normalized row), got ", mean.numel(), " and ", rstd.numel());
  const c10::DeviceIndex dev = input.device().index();
  c10::DeviceGuard guard(input.device());
  Tensor gx, gw, gb;
  const c10::ScalarType wdt = weight.defined() ? weight.scalar_type() : input.scalar_type();
  if (mask[0]) gx = NpuEmpty(input.sizes(), input.scalar_type(), dev);
  Tensor gwf, gbf;
  if (mask[1] && weight.defined()) gwf = NpuEmpty({s.d}, c10::kFloat, dev);
  if (mask[2] && bias.defined()) gbf = NpuEmpty({s.d}, c10::kFloat, dev);
  const bool work = s.rows > 0 && s.d > 0;  // (the tiling divides by both)
  auto t = work ? npu_kernels::layer_norm_tiling(s.rows, s.d, true, input.element_size(), SocInfoFor(dev))
                : npu_kernels::LayerNormTiling{};
  if (work && !t.ok) {  // a row larger than the unified buffer
    const Tensor gof = grad_out.reshape({s.rows, s.d}).to(c10::kFloat);
    const Tensor rs = rstd.reshape({s.rows, 1}).to(c10::kFloat);
    const Tensor xhat = (input.reshape({s.rows, s.d}).to(c10::kFloat) - mean.reshape({s.rows, 1}).to(c10::kFloat)) * rs;
    if (mask[0]) {
      const Tensor g = weight.defined() ? gof * weight.reshape({1, s.d}).to(c10::kFloat) : gof;
      gx = RowNormInputGrad(g, xhat, rs).to(input.scalar_type()).view(input.sizes());
    }
    if (gwf.defined()) gwf = (gof * xhat).sum({0});
    if (gbf.defined()) gbf = gof.sum({0});
  } else if (s.rows > 0 && s.d > 0) {
    t.has_weight = weight.defined();
    t.need_gx = mask[0];
    t.need_gw = gwf.defined();
    t.need_gb = gbf.defined();
    Tensor x = Contiguous(input), go = Contiguous(grad_out);
    Tensor m = FloatVec(mean.reshape({-1})), r = FloatVec(rstd.reshape({-1}));
    Tensor w = FloatVec(weight.defined() ? weight.reshape({-1}) : weight);
    Tensor partial;
    if (t.need_gw || t.need_gb) partial = NpuEmpty({2 * static_cast<int64_t>(t.block_dim) * s.d}, c10::kFloat, dev);
    auto k = PickFloatKernel(op, input.scalar_type(), &layer_norm_bwd_kernel_float, &layer_norm_bwd_kernel_half,
                             &layer_norm_bwd_kernel_bf16);
    LaunchKernel(KernelLaunch{"layer_norm_bwd_kernel", ascendc_host::CoreType::AIV, t.block_dim, dev}, k, t,
                 go.data_ptr(), x.data_ptr(), m.data_ptr(), r.data_ptr(), Ptr(w), Ptr(gx), Ptr(partial));
    if (partial.defined()) FoldPartials(dev, partial, t.block_dim, s.d, gwf, gbf);
  } else {
    if (gwf.defined()) gwf.zero_();
    if (gbf.defined()) gbf.zero_();
  }
  if (gwf.defined()) gw = gwf.to(wdt).view(weight.sizes());
  if (gbf.defined()) gb = gbf.to(bias.scalar_type()).view(bias.sizes());
  return {gx, gw, gb};
}

// ------------------------------------------------------------------ group norm
void CheckGroupNorm(const char* op, const Tensor& input, const Tensor& weight, const Tensor& bias, int64_t n,
                    int64_t c, int64_t hw, int64_t group) {
  CheckSameNpuDevice(op, {{"input", &input}, {"weight", &weight}, {"bias", &bias}});
  CheckFloatDtype(op, "input", input);
  TORCH_CHECK(group > 0 && c % group == 0, op, ": the number of channels (", c,
              ") must be divisible by the number of groups (", group, ")");
  TORCH_CHECK(input.numel() == n * c * hw, op, ": input of shape ", input.sizes(), " does not hold N*C*HxW = ", n,
              "*", c, "*", hw, " elements");
  CheckChannelVec(op, "weight", weight, c);
  CheckChannelVec(op, "bias", bias, c);
}

std::tuple<Tensor, Tensor, Tensor> native_group_norm(const Tensor& input, const OptTensor& weight_opt,
                                                     const OptTensor& bias_opt, c10::SymInt N_, c10::SymInt C_,
                                                     c10::SymInt HxW_, int64_t group, double eps) {
  const char* op = "group_norm";
  const Tensor& weight = Or(weight_opt);
  const Tensor& bias = Or(bias_opt);
  const int64_t n = N_.expect_int(), c = C_.expect_int(), hw = HxW_.expect_int();
  CheckGroupNorm(op, input, weight, bias, n, c, hw, group);
  const c10::DeviceIndex dev = input.device().index();
  c10::DeviceGuard guard(input.device());
  const c10::ScalarType sdt = weight.defined() ? weight.scalar_type() : input.scalar_type();
  Tensor x = Contiguous(input);
  const bool work = input.numel() > 0;  // (the tiling divides by the sizes)
  auto t = work ? npu_kernels::group_norm_tiling(n, c, hw, group, false, input.element_size(), SocInfoFor(dev))
                : npu_kernels::GroupNormTiling{};
  if (work && !t.ok) {  // a group larger than the unified buffer
    const Tensor xf = x.reshape({n * group, -1}).to(c10::kFloat);
    const RowStats st = RowMoments(xf, eps);
    Tensor yf = ((xf - st.mean) * st.rstd).view({n, c, hw});
    if (weight.defined()) yf = yf * weight.to(c10::kFloat).view({1, c, 1});
    if (bias.defined()) yf = yf + bias.to(c10::kFloat).view({1, c, 1});
    return {yf.to(input.scalar_type()).view(input.sizes()), st.mean.view({n, group}).to(sdt),
            st.rstd.view({n, group}).to(sdt)};
  }
  Tensor y = NpuEmpty(input.sizes(), input.scalar_type(), dev);
  Tensor mean = NpuEmpty({n, group}, c10::kFloat, dev), rstd = NpuEmpty({n, group}, c10::kFloat, dev);
  if (input.numel() > 0) {
    t.has_weight = weight.defined();
    t.has_bias = bias.defined();
    t.eps = static_cast<float>(eps);
    Tensor w = FloatVec(weight), b = FloatVec(bias);
    auto k = PickFloatKernel(op, input.scalar_type(), &group_norm_fwd_kernel_float, &group_norm_fwd_kernel_half,
                             &group_norm_fwd_kernel_bf16);
    LaunchKernel(KernelLaunch{"group_norm_fwd_kernel", ascendc_host::CoreType::AIV, t.block_dim, dev}, k, t,
                 x.data_ptr(), Ptr(w), Ptr(b), y.data_ptr(), mean.data_ptr(), rstd.data_ptr());
  }
  return {y, mean.to(sdt), rstd.to(sdt)};
}

std::tuple<Tensor, Tensor, Tensor> native_group_norm_backward(const Tensor& grad_out, const Tensor& input,
                                                              const Tensor& mean, const Tensor& rstd,
                                                              const OptTensor& weight_opt, c10::SymInt N_,
                                                              c10::SymInt C_, c10::SymInt HxW_, int64_t group,
                                                              std::array<bool, 3> mask) {
  const char* op = "group_norm_backward";
  const Tensor& weight = Or(weight_opt);
  const int64_t n = N_.expect_int(), c = C_.expect_int(), hw = HxW_.expect_int();
  CheckGroupNorm(op, input, weight, Tensor(), n, c, hw, group);
  CheckSameNpuDevice(op, {{"grad_out", &grad_out}, {"input", &input}, {"mean", &mean}, {"rstd", &rstd}});
  TORCH_CHECK(grad_out.sizes() == input.sizes() && grad_out.scalar_type() == input.scalar_type(), op,
              ": grad_out ", grad_out.sizes(), " ", grad_out.scalar_type(), " must match input ", input.sizes(), " ",
              input.scalar_type());
  TORCH_CHECK(mean.numel() == n * group && rstd.numel() == n * group, op, ": mean and rstd must hold N*group = ",
              n * group, " values");
  const c10::DeviceIndex dev = input.device().index();
  c10::DeviceGuard guard(input.device());
  const c10::ScalarType wdt = weight.defined() ? weight.scalar_type() : input.scalar_type();
  Tensor gx, gw, gb;
  if (mask[0]) gx = NpuEmpty(input.sizes(), input.scalar_type(), dev);
  Tensor gwf = mask[1] ? NpuEmpty({c}, c10::kFloat, dev) : Tensor();
  Tensor gbf = mask[2] ? NpuEmpty({c}, c10::kFloat, dev) : Tensor();
  const bool work = input.numel() > 0;  // (the tiling divides by the sizes)
  auto t = work ? npu_kernels::group_norm_tiling(n, c, hw, group, true, input.element_size(), SocInfoFor(dev))
                : npu_kernels::GroupNormTiling{};
  if (work && !t.ok) {  // a group larger than the unified buffer
    const Tensor gof = grad_out.reshape({n, c, hw}).to(c10::kFloat);
    const Tensor rs = rstd.reshape({n * group, 1}).to(c10::kFloat);
    const Tensor xhat =
        (input.reshape({n * group, -1}).to(c10::kFloat) - mean.reshape({n * group, 1}).to(c10::kFloat)) * rs;
    if (mask[0]) {
      const Tensor g = (weight.defined() ? gof * weight.to(c10::kFloat).view({1, c, 1}) : gof).reshape({n * group, -1});
      gx = RowNormInputGrad(g, xhat, rs).to(input.scalar_type()).view(input.sizes());
    }
    if (gwf.defined()) gwf = (gof * xhat.view({n, c, hw})).sum({0, 2});
    if (gbf.defined()) gbf = gof.sum({0, 2});
  } else if (input.numel() > 0) {
    t.has_weight = weight.defined();
    t.need_gx = mask[0];
    Tensor x = Contiguous(input), go = Contiguous(grad_out);
    Tensor m = FloatVec(mean.reshape({-1})), r = FloatVec(rstd.reshape({-1})), w = FloatVec(weight);
    Tensor partial;
    if (mask[1] || mask[2]) partial = NpuEmpty({2 * n * c}, c10::kFloat, dev);
    auto k = PickFloatKernel(op, input.scalar_type(), &group_norm_bwd_kernel_float, &group_norm_bwd_kernel_half,
                             &group_norm_bwd_kernel_bf16);
    LaunchKernel(KernelLaunch{"group_norm_bwd_kernel", ascendc_host::CoreType::AIV, t.block_dim, dev}, k, t,
                 go.data_ptr(), x.data_ptr(), m.data_ptr(), r.data_ptr(), Ptr(w), Ptr(gx), Ptr(partial));
    if (partial.defined()) FoldPartials(dev, partial, n, c, gwf, gbf);
  } else {
    if (gwf.defined()) gwf.zero_();
    if (gbf.defined()) gbf.zero_();
  }
  if (gwf.defined()) gw = gwf.to(wdt);
  if (gbf.defined()) gb = gbf.to(wdt);
  return {gx, gw, gb};
}

}  // namespace
}  // namespace torch_ops_nn

NPU_ATEN_LIBRARY_IMPL(m) {
  m.impl("native_batch_norm", TORCH_FN(torch_ops_nn::native_batch_norm));
  m.impl("_native_batch_norm_legit", TORCH_FN(torch_ops_nn::native_batch_norm_legit));
  m.impl("_native_batch_norm_legit.no_stats", TORCH_FN(torch_ops_nn::native_batch_norm_legit_no_stats));
  m.impl("_native_batch_norm_legit_no_training", TORCH_FN(torch_ops_nn::native_batch_norm_legit_no_training));
  m.impl("native_batch_norm_backward", TORCH_FN(torch_ops_nn::native_batch_norm_backward));
  m.impl("native_layer_norm", TORCH_FN(torch_ops_nn::native_layer_norm));
  m.impl("native_layer_norm_backward", TORCH_FN(torch_ops_nn::native_layer_norm_backward));
  m.impl("native_group_norm", TORCH_FN(torch_ops_nn::native_group_norm));
  m.impl("native_group_norm_backward", TORCH_FN(torch_ops_nn::native_group_norm_backward));
}
