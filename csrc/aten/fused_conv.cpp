// torch_ops_nn::conv_bn_act, defined here with its npu kernel and its autograd:
//   y = act( bn_eval( conv2d(x, w) + bias ) + residual )
// The npu kernel is one convolution on the cube whose epilogue applies the folded BN scale/shift
// (or the conv bias), the residual add and ReLU on the accumulator tile, so the conv result crosses
// device memory once. ReLU6 and SiLU finish with one elementwise kernel on the output (the cube
// epilogue has ReLU only). The CPU reference and the fake (meta) implementation are registered from
// Python (torch_ops_nn/fused.py).
//
// All of it is C++ so that a fused call costs what a plain conv call costs on the host (a Python
// custom op with a Python autograd layer cost ~70 us per call, more than a small conv kernel).
#include "aten/fused_conv.h"

#include <ATen/core/Tensor.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/TensorOperators.h>
#include <ATen/ops/add.h>
#include <ATen/ops/batch_norm.h>
#include <ATen/ops/convolution.h>
#include <ATen/ops/convolution_backward.h>
#include <ATen/ops/hardtanh.h>
#include <ATen/ops/hardtanh_backward.h>
#include <ATen/ops/relu.h>
#include <ATen/ops/rsqrt.h>
#include <ATen/ops/silu.h>
#include <ATen/ops/silu_backward.h>
#include <ATen/ops/sum.h>
#include <ATen/ops/threshold_backward.h>
#include <c10/util/Exception.h>
#include <torch/csrc/autograd/custom_function.h>
#include <torch/library.h>

#include <array>
#include <map>
#include <mutex>

#include "aten/conv.h"
#include "aten/op_common.h"
#include "aten/graph_guard.h"
#include "aten/tensor_stamp.h"

namespace torch_ops_nn {
namespace {

using OptTensor = std::optional<at::Tensor>;

bool Has(const OptTensor& t) { return t.has_value() && t->defined(); }

void CheckActivation(const char* op, c10::string_view activation) {
  TORCH_CHECK_VALUE(activation == "none" || activation == "relu" || activation == "relu6" || activation == "silu",
                    op, ": activation must be one of none, relu, relu6, silu; got '", std::string(activation), "'");
}

// ---- the BN fold cache -------------------------------------------------------------------------
// (scale, shift) with bn(conv + bias) = conv * scale + shift, in float32 on the device. Cached per
// parameter tensors, each checked against its TensorStamp, so an in-place update of a parameter or
// running statistic is never missed. Inference tensors cannot be stamped and are folded every call.

struct FoldEntry {
  std::array<TensorStamp, 5> stamps;  // bias, bn weight, bn bias, mean, var (empty when absent)
  at::Tensor scale, shift;
};
using FoldKey = std::pair<std::array<const c10::TensorImpl*, 5>, double>;

std::mutex g_fold_mu;
// Never destroyed: freeing device memory during static destruction could outlive the runtime.
std::map<FoldKey, FoldEntry>& g_fold_cache = *new std::map<FoldKey, FoldEntry>;
constexpr size_t kMaxFoldEntries = 1024;

std::pair<at::Tensor, at::Tensor> FoldBatchNorm(const OptTensor& bias, const OptTensor& bn_w, const OptTensor& bn_b,
                                                const at::Tensor& mean, const at::Tensor& var, double eps) {
  std::array<const at::Tensor*, 5> t{Has(bias) ? &*bias : nullptr, Has(bn_w) ? &*bn_w : nullptr,
                                     Has(bn_b) ? &*bn_b : nullptr, &mean, &var};
  bool cacheable = true;
  FoldKey key;
  key.second = eps;
  for (size_t i = 0; i < 5; ++i) {
    key.first[i] = t[i] ? t[i]->unsafeGetTensorImpl() : nullptr;
    if (t[i] && !TensorStamp::Stampable(*t[i])) cacheable = false;
  }
  auto matches = [&](const FoldEntry& e) {
    for (size_t i = 0; i < 5; ++i)
      if (!e.stamps[i].Matches(t[i])) return false;
    return true;
  };
  // Fold with the npu elementwise kernels (a handful of [C] launches, once per parameter version).
  auto fold = [&]() -> std::pair<at::Tensor, at::Tensor> {
    at::Tensor scale = at::rsqrt(var.to(at::kFloat) + eps);
    if (t[1]) scale = scale * t[1]->to(at::kFloat);
    at::Tensor shift = -mean.to(at::kFloat) * scale;
    if (t[0]) shift = shift + t[0]->to(at::kFloat) * scale;
    if (t[2]) shift = shift + t[2]->to(at::kFloat);
    return {scale, shift};
  };
  if (cacheable) {
    if (npu_rt::Graph* graph = CapturingGraph())  // a replay refolds only when a parameter changed
      return GuardedCopy(graph, {4, static_cast<int64_t>(c10::bit_cast<uint64_t>(eps))}, {t[0], t[1], t[2], t[3], t[4]},
                         fold);
    std::lock_guard<std::mutex> g(g_fold_mu);
    auto it = g_fold_cache.find(key);
    if (it != g_fold_cache.end() && matches(it->second)) return {it->second.scale, it->second.shift};
  }
  auto [scale, shift] = fold();
  if (cacheable) {
    FoldEntry e;
    for (size_t i = 0; i < 5; ++i)
      if (t[i]) e.stamps[i] = TensorStamp(*t[i]);
    e.scale = scale;
    e.shift = shift;
    std::lock_guard<std::mutex> g(g_fold_mu);
    // Drop folds of parameters that no longer exist, so a freed model's device memory comes back.
    auto expired = [](const FoldEntry& f) {
      for (const auto& st : f.stamps)
        if (st.Expired()) return true;
      return false;
    };
    for (auto it = g_fold_cache.begin(); it != g_fold_cache.end();)
      it = expired(it->second) ? g_fold_cache.erase(it) : std::next(it);
    if (g_fold_cache.size() >= kMaxFoldEntries) g_fold_cache.clear();
    g_fold_cache[key] = std::move(e);
  }
  return {scale, shift};
}

// ---- the npu kernel ------------------------------------------------------------------------------

at::Tensor ConvBnActNpu(const at::Tensor& x, const at::Tensor& w, const OptTensor& bias, const OptTensor& bn_w,
                        const OptTensor& bn_b, const OptTensor& mean, const OptTensor& var, const OptTensor& residual,
                        double eps, at::IntArrayRef stride, at::IntArrayRef padding, at::IntArrayRef dilation,
                        int64_t groups, c10::string_view activation) {
  const char* op = "conv_bn_act";
  CheckActivation(op, activation);
  TORCH_CHECK_VALUE(Has(mean) == Has(var), op, ": running_mean and running_var must be given together");
  OptTensor scale, shift, conv_bias = bias;
  if (Has(mean)) {
    auto folded = FoldBatchNorm(bias, bn_w, bn_b, *mean, *var, eps);
    scale = folded.first;
    shift = folded.second;
    conv_bias.reset();
  }
  return ConvEpilogueOp(x, w, conv_bias, scale, shift, residual, stride.vec(), padding.vec(), dilation.vec(), groups,
                        std::string(activation));
}

// ---- autograd ------------------------------------------------------------------------------------

at::Tensor CallBelowAutograd(const at::Tensor& x, const at::Tensor& w, const OptTensor& bias, const OptTensor& bn_w,
                             const OptTensor& bn_b, const OptTensor& mean, const OptTensor& var,
                             const OptTensor& residual, double eps, at::IntArrayRef stride, at::IntArrayRef padding,
                             at::IntArrayRef dilation, int64_t groups, c10::string_view activation) {
  static auto handle = c10::Dispatcher::singleton()
                           .findSchemaOrThrow("torch_ops_nn::conv_bn_act", "")
                           .typed<at::Tensor(const at::Tensor&, const at::Tensor&, const OptTensor&, const OptTensor&,
                                             const OptTensor&, const OptTensor&, const OptTensor&, const OptTensor&,
                                             double, at::IntArrayRef, at::IntArrayRef, at::IntArrayRef, int64_t,
                                             c10::string_view)>();
  at::AutoDispatchBelowADInplaceOrView guard;
  return handle.call(x, w, bias, bn_w, bn_b, mean, var, residual, eps, stride, padding, dilation, groups, activation);
}

at::Tensor Opt(const OptTensor& t) { return Has(t) ? *t : at::Tensor(); }
OptTensor Opt(const at::Tensor& t) { return t.defined() ? OptTensor(t) : std::nullopt; }

struct ConvBnActFunction : public torch::autograd::Function<ConvBnActFunction> {
  // Optional tensors are passed as std::optional: an absent one is not a variable input of the node.
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& x, const at::Tensor& w,
                            const OptTensor& bias, const OptTensor& bn_w, const OptTensor& bn_b,
                            const OptTensor& mean, const OptTensor& var, const OptTensor& residual, double eps,
                            at::IntArrayRef stride, at::IntArrayRef padding, at::IntArrayRef dilation, int64_t groups,
                            c10::string_view activation) {
    at::Tensor out = CallBelowAutograd(x, w, bias, bn_w, bn_b, mean, var, residual, eps, stride, padding, dilation,
                                       groups, activation);
    ctx->save_for_backward({x, w, Opt(bias), Opt(bn_w), Opt(bn_b), Opt(mean), Opt(var), out});
    ctx->saved_data["eps"] = eps;
    ctx->saved_data["stride"] = stride.vec();
    ctx->saved_data["padding"] = padding.vec();
    ctx->saved_data["dilation"] = dilation.vec();
    ctx->saved_data["groups"] = groups;
    ctx->saved_data["activation"] = std::string(activation);
    ctx->saved_data["residual"] = Has(residual);
    return out;
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const at::Tensor &x = saved[0], &w = saved[1], &bias = saved[2], &bn_w = saved[3], &bn_b = saved[4],
                     &mean = saved[5], &var = saved[6], &out = saved[7];
    const double eps = ctx->saved_data["eps"].toDouble();
    const auto stride = ctx->saved_data["stride"].toIntVector();
    const auto padding = ctx->saved_data["padding"].toIntVector();
    const auto dilation = ctx->saved_data["dilation"].toIntVector();
    const int64_t groups = ctx->saved_data["groups"].toInt();
    const std::string activation = ctx->saved_data["activation"].toStringRef();
    const bool has_residual = ctx->saved_data["residual"].toBool();
    // needs_input_grad counts the node's variable inputs: x, w, then the optional tensors present.
    size_t edge = 2;
    auto need = [&](const at::Tensor& t) { return t.defined() && ctx->needs_input_grad(edge++); };
    const bool need_x = ctx->needs_input_grad(0), need_w = ctx->needs_input_grad(1), need_bias = need(bias),
               need_bn_w = need(bn_w), need_bn_b = need(bn_b);
    auto conv = [&] { return at::convolution(x, w, Opt(bias), stride, padding, dilation, false, {0, 0}, groups); };

    at::Tensor g = grads[0];
    if (activation == "relu") {
      g = at::threshold_backward(g, out, 0);
    } else if (activation == "relu6") {
      g = at::hardtanh_backward(g, out, 0, 6);
    } else if (activation == "silu") {
      // Recompute the pre-activation (nothing extra is stored for the common inference case).
      TORCH_CHECK(!has_residual, "conv_bn_act: backward of silu with a residual is not supported");
      at::Tensor pre = conv();
      if (mean.defined()) pre = at::batch_norm(pre, Opt(bn_w), Opt(bn_b), mean, var, false, 0.0, eps, false);
      g = at::silu_backward(g, pre);
    }
    at::Tensor grad_residual = has_residual ? g : at::Tensor();
    at::Tensor grad_bn_w, grad_bn_b;
    if (mean.defined()) {
      at::Tensor inv = at::rsqrt(var + eps);
      if (need_bn_b) grad_bn_b = g.sum({0, 2, 3}).to(bn_b.scalar_type());
      if (need_bn_w) {
        at::Tensor xhat = (conv() - mean.view({1, -1, 1, 1})) * inv.view({1, -1, 1, 1});
        grad_bn_w = (g * xhat).sum({0, 2, 3}).to(bn_w.scalar_type());
      }
      at::Tensor s = bn_w.defined() ? inv * bn_w : inv;
      g = g * s.view({1, -1, 1, 1}).to(g.scalar_type());
    }
    at::Tensor grad_x, grad_w, grad_bias;
    if (need_x || need_w || need_bias) {
      std::optional<at::IntArrayRef> bias_sizes;
      std::vector<int64_t> bsz;
      if (bias.defined()) {
        bsz = {w.size(0)};
        bias_sizes = bsz;
      }
      std::tie(grad_x, grad_w, grad_bias) = at::convolution_backward(
          g, x, w, bias_sizes, stride, padding, dilation, false, {0, 0}, groups, {need_x, need_w, need_bias});
    }
    return {grad_x, grad_w, grad_bias, grad_bn_w, grad_bn_b, at::Tensor(), at::Tensor(), grad_residual,
            at::Tensor(), at::Tensor(), at::Tensor(), at::Tensor(), at::Tensor(), at::Tensor()};
  }
};

at::Tensor ConvBnActAutograd(const at::Tensor& x, const at::Tensor& w, const OptTensor& bias, const OptTensor& bn_w,
                             const OptTensor& bn_b, const OptTensor& mean, const OptTensor& var,
                             const OptTensor& residual, double eps, at::IntArrayRef stride, at::IntArrayRef padding,
                             at::IntArrayRef dilation, int64_t groups, c10::string_view activation) {
  bool any_grad = false;
  if (at::GradMode::is_enabled()) {
    for (const OptTensor* t : {&bias, &bn_w, &bn_b, &mean, &var, &residual})
      any_grad = any_grad || (Has(*t) && (*t)->requires_grad());
    any_grad = any_grad || x.requires_grad() || w.requires_grad();
  }
  if (!any_grad)  // inference: no autograd node, straight to the kernel
    return CallBelowAutograd(x, w, bias, bn_w, bn_b, mean, var, residual, eps, stride, padding, dilation, groups,
                             activation);
  return ConvBnActFunction::apply(x, w, bias, bn_w, bn_b, mean, var, residual, eps, stride, padding, dilation, groups,
                                  activation);
}

}  // namespace

void ClearFoldCache() {
  std::lock_guard<std::mutex> g(g_fold_mu);
  g_fold_cache.clear();
}

at::Tensor ConvEpilogueOp(const at::Tensor& x, const at::Tensor& w, const std::optional<at::Tensor>& bias,
                          const std::optional<at::Tensor>& scale, const std::optional<at::Tensor>& shift,
                          const std::optional<at::Tensor>& residual, std::vector<int64_t> stride,
                          std::vector<int64_t> padding, std::vector<int64_t> dilation, int64_t groups,
                          const std::string& activation) {
  const char* op = "conv_bn_act";
  TORCH_CHECK_VALUE(stride.size() == 2 && padding.size() == 2 && dilation.size() == 2, op,
                    ": stride, padding and dilation must have 2 values each, got ", stride.size(), ", ",
                    padding.size(), ", ", dilation.size());
  CheckActivation(op, activation);
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
    TORCH_CHECK_VALUE(x.dim() == 4 && w.dim() == 4, op, ": x and weight must be 4-D, got ", x.dim(), "-D and ",
                      w.dim(), "-D");
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

TORCH_LIBRARY(torch_ops_nn, m) {
  m.def("conv_bn_act(Tensor x, Tensor weight, Tensor? bias, Tensor? bn_weight, Tensor? bn_bias, "
        "Tensor? running_mean, Tensor? running_var, Tensor? residual, float eps, int[] stride, int[] padding, "
        "int[] dilation, int groups, str activation) -> Tensor");
}

TORCH_LIBRARY_IMPL(torch_ops_nn, PrivateUse1, m) { m.impl("conv_bn_act", &ConvBnActNpu); }

TORCH_LIBRARY_IMPL(torch_ops_nn, Autograd, m) { m.impl("conv_bn_act", &ConvBnActAutograd); }

}  // namespace torch_ops_nn
