// 2-D pooling ops on npu: max_pool2d_with_indices (+ backward), max_pool2d (values only; its backward
// recomputes the indices), avg_pool2d (+ backward), _adaptive_avg_pool2d (+ backward). Argument checks
// with PyTorch's rules, output shapes, tiling and the launch of the Ascend C kernels in
// ascendc_kernels/pool*. Kernels work on NCHW planes; channels_last inputs are made contiguous first
// and the results returned in channels_last, except the max pooling forward of 4-D float32 inputs
// with C % 8 == 0, which runs the NHWC kernel (pool_nhwc.cpp), NCHW inputs through layout copies.
#include <ATen/core/Tensor.h>
#include <ATen/core/grad_mode.h>
#include <ATen/core/LegacyTypeDispatch.h>
#include <ATen/ops/matmul.h>
#include <ATen/ops/max_pool2d_ops.h>
#include <ATen/ops/max_pool2d_with_indices_ops.h>
#include <ATen/ops/zeros.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include <optional>
#include <tuple>

#include "aten/kernel_launch.h"
#include "aten/op_common.h"
#include "pool.h"
#include "pool_nhwc.h"

namespace torch_ops_nn {
namespace {

using at::Tensor;

TORCH_OPS_NN_REGISTER_KERNEL(pool_fwd_kernel);
TORCH_OPS_NN_REGISTER_KERNEL(pool_bwd_kernel);
TORCH_OPS_NN_REGISTER_KERNEL(pool_nhwc_fwd_kernel);

struct Pair {
  int64_t h, w;
};

Pair ExpandPair(const char* op, const char* name, c10::IntArrayRef v, std::optional<Pair> dflt = std::nullopt) {
  if (v.empty() && dflt) return *dflt;
  TORCH_CHECK(v.size() == 1 || v.size() == 2, op, ": ", name, " must be a single int or a tuple of two ints, got ",
              v);
  return v.size() == 1 ? Pair{v[0], v[0]} : Pair{v[0], v[1]};
}

// PyTorch's pooling_output_shape, with the formula and numbers in the error.
int64_t PoolOutSize(const char* op, const char* dim, int64_t in, int64_t k, int64_t pad, int64_t stride, int64_t dil,
                    bool ceil_mode) {
  const int64_t num = in + 2 * pad - dil * (k - 1) - 1 + (ceil_mode ? stride - 1 : 0);
  int64_t out = (num >= 0 ? num / stride : -((-num + stride - 1) / stride)) + 1;
  if (ceil_mode && (out - 1) * stride >= in + pad) --out;
  TORCH_CHECK(out > 0, op, ": output ", dim, " (", dim[0] == 'h' ? "H" : "W", " + 2*padding - dilation*(kernel-1) - 1",
              ceil_mode ? " + stride-1" : "", ")/stride + 1 = (", in, " + 2*", pad, " - ", dil, "*(", k, "-1) - 1",
              ceil_mode ? " + " + std::to_string(stride - 1) : std::string(), ")/", stride, " + 1 = ", out,
              " is not positive; use a larger input, more padding or a smaller kernel/stride/dilation");
  return out;
}

struct PoolShape {
  int64_t n, c, h, w;     // n = 1 for 3-D inputs
  bool batched;
  bool channels_last;
};

// channels_ok: C = 0 is allowed (adaptive average pooling checks only H and W, as the CPU does).
PoolShape InputShape(const char* op, const Tensor& x, bool channels_ok = false) {
  TORCH_CHECK(x.dim() == 3 || x.dim() == 4, op, ": input must be 3-D (C, H, W) or 4-D (N, C, H, W), got shape ",
              x.sizes());
  PoolShape s;
  s.batched = x.dim() == 4;
  s.n = s.batched ? x.size(0) : 1;
  s.c = x.size(-3);
  s.h = x.size(-2);
  s.w = x.size(-1);
  TORCH_CHECK((s.c > 0 || channels_ok) && s.h > 0 && s.w > 0, op, ": input must have non-zero ",
              channels_ok ? "height and width" : "channels, height and width", ", got shape ", x.sizes());
  s.channels_last = s.batched && !x.is_contiguous() && x.is_contiguous(c10::MemoryFormat::ChannelsLast);
  return s;
}

std::vector<int64_t> OutSizes(const PoolShape& s, int64_t oh, int64_t ow) {
  if (s.batched) return {s.n, s.c, oh, ow};
  return {s.c, oh, ow};
}

Tensor AsFormat(const Tensor& t, const PoolShape& s) {
  return s.channels_last ? t.contiguous(c10::MemoryFormat::ChannelsLast) : t;
}

void LaunchPool(const char* op, const npu_kernels::PoolTiling& t, bool backward, const Tensor& a, const Tensor& b,
                const Tensor& c, c10::DeviceIndex dev, c10::ScalarType dtype) {
  TORCH_CHECK(t.ok, op, ": the pooling window geometry (input ", t.h, "x", t.w, ", kernel ", t.kh, "x", t.kw,
              ") does not fit the npu's unified buffer");
  if (t.planes == 0) return;
  using Fn = void (*)(uint8_t*, uint8_t*, uint8_t*, uint8_t*);
  Fn k = backward ? PickFloatKernel(op, dtype, &pool_bwd_kernel_float, &pool_bwd_kernel_half, &pool_bwd_kernel_bf16)
                  : PickFloatKernel(op, dtype, &pool_fwd_kernel_float, &pool_fwd_kernel_half, &pool_fwd_kernel_bf16);
  KernelLaunch launch{backward ? "pool_bwd_kernel" : "pool_fwd_kernel", ascendc_host::CoreType::AIV, t.block_dim,
                      dev};
  if (LogDebugEnabled()) launch.detail = std::string(op) + " " + DescribeForLog({{"a", &a}});
  void* pc = c.defined() ? c.data_ptr() : nullptr;
  LaunchKernel(std::move(launch), k, t, a.data_ptr(), b.defined() ? b.data_ptr() : nullptr, pc);
}

// ------------------------------------------------------------------ max pool
struct MaxArgs {
  Pair k, s, p, d;
  int64_t oh, ow;
};

MaxArgs CheckMaxPool(const char* op, const PoolShape& s, c10::IntArrayRef kernel_size, c10::IntArrayRef stride,
                     c10::IntArrayRef padding, c10::IntArrayRef dilation, bool ceil_mode) {
  MaxArgs a;
  a.k = ExpandPair(op, "kernel_size", kernel_size);
  a.s = ExpandPair(op, "stride", stride, a.k);
  a.p = ExpandPair(op, "padding", padding);
  a.d = ExpandPair(op, "dilation", dilation);
  TORCH_CHECK(a.k.h > 0 && a.k.w > 0, op, ": kernel_size must be positive, got (", a.k.h, ", ", a.k.w, ")");
  TORCH_CHECK(a.s.h > 0 && a.s.w > 0, op, ": stride must be positive, got (", a.s.h, ", ", a.s.w, ")");
  TORCH_CHECK(a.d.h > 0 && a.d.w > 0, op, ": dilation must be positive, got (", a.d.h, ", ", a.d.w, ")");
  TORCH_CHECK(a.p.h >= 0 && a.p.w >= 0, op, ": padding must be non-negative, got (", a.p.h, ", ", a.p.w, ")");
  TORCH_CHECK(a.p.h <= ((a.k.h - 1) * a.d.h + 1) / 2 && a.p.w <= ((a.k.w - 1) * a.d.w + 1) / 2, op,
              ": padding (", a.p.h, ", ", a.p.w, ") must be at most half of the effective kernel size (",
              (a.k.h - 1) * a.d.h + 1, ", ", (a.k.w - 1) * a.d.w + 1, ")");
  a.oh = PoolOutSize(op, "height", s.h, a.k.h, a.p.h, a.s.h, a.d.h, ceil_mode);
  a.ow = PoolOutSize(op, "width", s.w, a.k.w, a.p.w, a.s.w, a.d.w, ceil_mode);
  TORCH_CHECK(s.h * s.w < (int64_t(1) << 24), op, ": planes of ", s.h, "x", s.w, " = ", s.h * s.w,
              " elements are not supported on npu (indices are tracked exactly up to 2^24 per plane)");
  return a;
}

npu_kernels::PoolTiling MaxTiling(const PoolShape& s, const MaxArgs& a, bool backward, const Tensor& x) {
  return npu_kernels::pool_tiling(npu_kernels::kPoolMax, static_cast<uint64_t>(s.n * s.c), s.h, s.w, a.oh, a.ow, a.k.h,
                                  a.k.w, a.s.h, a.s.w, a.p.h, a.p.w, a.d.h, a.d.w, backward, x.element_size(),
                                  SocInfoFor(x.device().index()));
}

// The forward; without want_indices the returned indices are undefined when the NHWC kernel runs
// (its values-only mode: no index tracking, no int64 output).
std::tuple<Tensor, Tensor> MaxPoolForward(const Tensor& self, c10::IntArrayRef kernel_size, c10::IntArrayRef stride,
                                          c10::IntArrayRef padding, c10::IntArrayRef dilation, bool ceil_mode,
                                          bool want_indices) {
  const char* op = "max_pool2d";
  const c10::DeviceIndex dev = CheckSameNpuDevice(op, {{"input", &self}});
  CheckFloatDtype(op, "input", self);
  const PoolShape s = InputShape(op, self);
  const MaxArgs a = CheckMaxPool(op, s, kernel_size, stride, padding, dilation, ceil_mode);
  c10::DeviceGuard guard(self.device());
  if (s.batched && self.scalar_type() == c10::kFloat && s.c % 8 == 0) {
    // The NHWC kernel: channels_last inputs natively; NCHW float inputs too, through layout copies
    // (the NCHW kernel gathers every tap of every output and takes about twice as long as the NHWC
    // kernel plus the transposes, e.g. 3.9 vs 2.5 ms on ResNet's 1x64x112x112 stem pool).
    auto t = npu_kernels::pool_nhwc_tiling(
        static_cast<uint64_t>(s.n), s.c, s.h, s.w, a.oh, a.ow, a.k.h, a.k.w, a.s.h, a.s.w, a.p.h, a.p.w, a.d.h, a.d.w,
        self.element_size(), SocInfoFor(dev));
    if (t.ok) {
      t.values_only = want_indices ? 0 : 1;
      const Tensor x = s.channels_last ? self : self.contiguous(c10::MemoryFormat::ChannelsLast);
      Tensor y = NpuEmpty(OutSizes(s, a.oh, a.ow), self.scalar_type(), dev, c10::MemoryFormat::ChannelsLast);
      Tensor idx;
      if (want_indices) idx = NpuEmpty(OutSizes(s, a.oh, a.ow), c10::kLong, dev, c10::MemoryFormat::ChannelsLast);
      KernelLaunch launch{"pool_nhwc_fwd_kernel", ascendc_host::CoreType::AIV, t.block_dim, dev};
      if (LogDebugEnabled())
        launch.detail = std::string(op) + (want_indices ? "" : " values only") + " " + DescribeForLog({{"input", &self}});
      LaunchKernel(std::move(launch), &pool_nhwc_fwd_kernel_float, t, x.data_ptr(), y.data_ptr(),
                   want_indices ? idx.data_ptr() : nullptr);
      if (s.channels_last) return {y, idx};
      return {y.contiguous(), want_indices ? idx.contiguous() : idx};
    }
  }
  Tensor x = self.contiguous();
  Tensor y = NpuEmpty(OutSizes(s, a.oh, a.ow), self.scalar_type(), dev);
  Tensor idx = NpuEmpty(OutSizes(s, a.oh, a.ow), c10::kLong, dev);
  LaunchPool(op, MaxTiling(s, a, false, x), false, x, y, idx, dev, self.scalar_type());
  return {AsFormat(y, s), AsFormat(idx, s)};
}

std::tuple<Tensor, Tensor> max_pool2d_with_indices(const Tensor& self, c10::IntArrayRef kernel_size,
                                                   c10::IntArrayRef stride, c10::IntArrayRef padding,
                                                   c10::IntArrayRef dilation, bool ceil_mode) {
  return MaxPoolForward(self, kernel_size, stride, padding, dilation, ceil_mode, true);
}

// aten::max_pool2d (what F.max_pool2d / nn.MaxPool2d call without return_indices): the values only.
// Its own autograd node would keep the input and call max_pool2d_backward, which recomputes the
// indices; max_pool2d_autograd below sends differentiable calls to max_pool2d_with_indices instead.
Tensor max_pool2d(const Tensor& self, c10::IntArrayRef kernel_size, c10::IntArrayRef stride, c10::IntArrayRef padding,
                  c10::IntArrayRef dilation, bool ceil_mode) {
  return std::get<0>(MaxPoolForward(self, kernel_size, stride, padding, dilation, ceil_mode, false));
}

// AutogradPrivateUse1 for aten::max_pool2d: with a gradient to compute, max_pool2d_with_indices (its
// autograd node keeps the indices, as on the CPU and CUDA): the values-only forward plus the backward's
// recomputation of the indices cost 3.8 + 6.2 ms per ResNet-18 b8 step against 6.2 once. Otherwise
// (eval, no_grad) the values-only kernel below autograd.
Tensor max_pool2d_autograd(const Tensor& self, c10::IntArrayRef kernel_size, c10::IntArrayRef stride,
                           c10::IntArrayRef padding, c10::IntArrayRef dilation, bool ceil_mode) {
  if ((at::GradMode::is_enabled() && self.requires_grad()) || self._fw_grad(/*level=*/0).defined())
    return std::get<0>(at::_ops::max_pool2d_with_indices::call(self, kernel_size, stride, padding, dilation, ceil_mode));
  at::AutoDispatchBelowADInplaceOrView below;
  return at::_ops::max_pool2d::call(self, kernel_size, stride, padding, dilation, ceil_mode);
}

std::tuple<Tensor&, Tensor&> max_pool2d_with_indices_out(const Tensor& self, c10::IntArrayRef kernel_size,
                                                         c10::IntArrayRef stride, c10::IntArrayRef padding,
                                                         c10::IntArrayRef dilation, bool ceil_mode, Tensor& out,
                                                         Tensor& indices) {
  auto [y, idx] = max_pool2d_with_indices(self, kernel_size, stride, padding, dilation, ceil_mode);
  out.resize_(y.sizes());
  indices.resize_(idx.sizes());
  out.copy_(y);
  indices.copy_(idx);
  return {out, indices};
}

Tensor max_pool2d_with_indices_backward(const Tensor& grad_output, const Tensor& self, c10::IntArrayRef kernel_size,
                                        c10::IntArrayRef stride, c10::IntArrayRef padding, c10::IntArrayRef dilation,
                                        bool ceil_mode, const Tensor& indices) {
  const char* op = "max_pool2d_with_indices_backward";
  const c10::DeviceIndex dev =
      CheckSameNpuDevice(op, {{"grad_output", &grad_output}, {"input", &self}, {"indices", &indices}});
  CheckFloatDtype(op, "input", self);
  TORCH_CHECK(grad_output.scalar_type() == self.scalar_type(), op, ": grad_output dtype ", grad_output.scalar_type(),
              " does not match input dtype ", self.scalar_type());
  TORCH_CHECK(indices.scalar_type() == c10::kLong, op, ": indices must be int64, got ", indices.scalar_type());
  const PoolShape s = InputShape(op, self);
  const MaxArgs a = CheckMaxPool(op, s, kernel_size, stride, padding, dilation, ceil_mode);
  const auto want = OutSizes(s, a.oh, a.ow);
  TORCH_CHECK(grad_output.sizes() == c10::IntArrayRef(want) && indices.sizes() == c10::IntArrayRef(want), op,
              ": grad_output ", grad_output.sizes(), " and indices ", indices.sizes(), " must have the output shape ",
              c10::IntArrayRef(want));
  c10::DeviceGuard guard(self.device());
  Tensor go = grad_output.contiguous(), idx = indices.contiguous();
  Tensor gx = NpuEmpty(self.sizes(), self.scalar_type(), dev);
  LaunchPool(op, MaxTiling(s, a, true, self), true, go, idx, gx, dev, self.scalar_type());
  return AsFormat(gx, s);
}

Tensor& max_pool2d_with_indices_backward_out(const Tensor& grad_output, const Tensor& self,
                                             c10::IntArrayRef kernel_size, c10::IntArrayRef stride,
                                             c10::IntArrayRef padding, c10::IntArrayRef dilation, bool ceil_mode,
                                             const Tensor& indices, Tensor& grad_input) {
  Tensor g = max_pool2d_with_indices_backward(grad_output, self, kernel_size, stride, padding, dilation, ceil_mode,
                                              indices);
  grad_input.resize_(g.sizes());
  grad_input.copy_(g);
  return grad_input;
}

Tensor max_pool2d_backward(const Tensor& grad_output, const Tensor& self, c10::IntArrayRef kernel_size,
                           c10::IntArrayRef stride, c10::IntArrayRef padding, c10::IntArrayRef dilation,
                           bool ceil_mode) {
  const Tensor idx = std::get<1>(MaxPoolForward(self, kernel_size, stride, padding, dilation, ceil_mode, true));
  return max_pool2d_with_indices_backward(grad_output, self, kernel_size, stride, padding, dilation, ceil_mode, idx);
}

// ------------------------------------------------------------------ avg pool
struct AvgArgs {
  Pair k, s, p;
  int64_t oh, ow;
};

AvgArgs CheckAvgPool(const char* op, const PoolShape& s, c10::IntArrayRef kernel_size, c10::IntArrayRef stride,
                     c10::IntArrayRef padding, bool ceil_mode, std::optional<int64_t> divisor_override) {
  AvgArgs a;
  a.k = ExpandPair(op, "kernel_size", kernel_size);
  a.s = ExpandPair(op, "stride", stride, a.k);
  a.p = ExpandPair(op, "padding", padding);
  TORCH_CHECK(a.k.h > 0 && a.k.w > 0, op, ": kernel_size must be positive, got (", a.k.h, ", ", a.k.w, ")");
  TORCH_CHECK(a.s.h > 0 && a.s.w > 0, op, ": stride must be positive, got (", a.s.h, ", ", a.s.w, ")");
  TORCH_CHECK(a.p.h >= 0 && a.p.w >= 0 && a.p.h <= a.k.h / 2 && a.p.w <= a.k.w / 2, op, ": padding (", a.p.h, ", ",
              a.p.w, ") must be non-negative and at most half of the kernel size (", a.k.h, ", ", a.k.w, ")");
  TORCH_CHECK(!divisor_override || *divisor_override != 0, op, ": divisor_override must not be zero");
  a.oh = PoolOutSize(op, "height", s.h, a.k.h, a.p.h, a.s.h, 1, ceil_mode);
  a.ow = PoolOutSize(op, "width", s.w, a.k.w, a.p.w, a.s.w, 1, ceil_mode);
  return a;
}

npu_kernels::PoolTiling AvgTiling(const PoolShape& s, const AvgArgs& a, bool count_include_pad,
                                  std::optional<int64_t> divisor_override, bool backward, const Tensor& x) {
  auto t = npu_kernels::pool_tiling(npu_kernels::kPoolAvg, static_cast<uint64_t>(s.n * s.c), s.h, s.w, a.oh, a.ow,
                                    a.k.h, a.k.w, a.s.h, a.s.w, a.p.h, a.p.w, 1, 1, backward, x.element_size(),
                                    SocInfoFor(x.device().index()));
  t.count_include_pad = count_include_pad;
  t.divisor_override = divisor_override ? static_cast<int32_t>(*divisor_override) : 0;
  return t;
}

Tensor avg_pool2d(const Tensor& self, c10::IntArrayRef kernel_size, c10::IntArrayRef stride, c10::IntArrayRef padding,
                  bool ceil_mode, bool count_include_pad, std::optional<int64_t> divisor_override) {
  const char* op = "avg_pool2d";
  const c10::DeviceIndex dev = CheckSameNpuDevice(op, {{"input", &self}});
  CheckFloatDtype(op, "input", self);
  const PoolShape s = InputShape(op, self);
  const AvgArgs a = CheckAvgPool(op, s, kernel_size, stride, padding, ceil_mode, divisor_override);
  c10::DeviceGuard guard(self.device());
  Tensor x = self.contiguous();
  Tensor y = NpuEmpty(OutSizes(s, a.oh, a.ow), self.scalar_type(), dev);
  LaunchPool(op, AvgTiling(s, a, count_include_pad, divisor_override, false, x), false, x, y, Tensor(), dev,
             self.scalar_type());
  return AsFormat(y, s);
}

Tensor& avg_pool2d_out(const Tensor& self, c10::IntArrayRef kernel_size, c10::IntArrayRef stride,
                       c10::IntArrayRef padding, bool ceil_mode, bool count_include_pad,
                       std::optional<int64_t> divisor_override, Tensor& out) {
  Tensor y = avg_pool2d(self, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override);
  out.resize_(y.sizes());
  out.copy_(y);
  return out;
}

Tensor avg_pool2d_backward(const Tensor& grad_output, const Tensor& self, c10::IntArrayRef kernel_size,
                           c10::IntArrayRef stride, c10::IntArrayRef padding, bool ceil_mode, bool count_include_pad,
                           std::optional<int64_t> divisor_override) {
  const char* op = "avg_pool2d_backward";
  const c10::DeviceIndex dev = CheckSameNpuDevice(op, {{"grad_output", &grad_output}, {"input", &self}});
  CheckFloatDtype(op, "input", self);
  TORCH_CHECK(grad_output.scalar_type() == self.scalar_type(), op, ": grad_output dtype ", grad_output.scalar_type(),
              " does not match input dtype ", self.scalar_type());
  const PoolShape s = InputShape(op, self);
  const AvgArgs a = CheckAvgPool(op, s, kernel_size, stride, padding, ceil_mode, divisor_override);
  const auto want = OutSizes(s, a.oh, a.ow);
  TORCH_CHECK(grad_output.sizes() == c10::IntArrayRef(want), op, ": grad_output ", grad_output.sizes(),
              " must have the output shape ", c10::IntArrayRef(want));
  c10::DeviceGuard guard(self.device());
  Tensor go = grad_output.contiguous();
  Tensor gx = NpuEmpty(self.sizes(), self.scalar_type(), dev);
  LaunchPool(op, AvgTiling(s, a, count_include_pad, divisor_override, true, self), true, go, Tensor(), gx, dev,
             self.scalar_type());
  return AsFormat(gx, s);
}

Tensor& avg_pool2d_backward_out(const Tensor& grad_output, const Tensor& self, c10::IntArrayRef kernel_size,
                                c10::IntArrayRef stride, c10::IntArrayRef padding, bool ceil_mode,
                                bool count_include_pad, std::optional<int64_t> divisor_override, Tensor& grad_input) {
  Tensor g = avg_pool2d_backward(grad_output, self, kernel_size, stride, padding, ceil_mode, count_include_pad,
                                 divisor_override);
  grad_input.resize_(g.sizes());
  grad_input.copy_(g);
  return grad_input;
}

// ------------------------------------------------------------------ adaptive avg pool
npu_kernels::PoolTiling AdaptiveTiling(const PoolShape& s, int64_t oh, int64_t ow, bool backward, const Tensor& x) {
  const auto& soc = SocInfoFor(x.device().index());
  const uint64_t planes = static_cast<uint64_t>(s.n * s.c);
  if (oh == 1 && ow == 1)
    return npu_kernels::pool_tiling(npu_kernels::kPoolMean, planes, s.h, s.w, 1, 1, 1, 1, 1, 1, 0, 0, 1, 1, backward,
                                    x.element_size(), soc);
  const uint32_t kh = npu_kernels::AdaptiveMaxLen(s.h, oh), kw = npu_kernels::AdaptiveMaxLen(s.w, ow);
  return npu_kernels::pool_tiling(npu_kernels::kPoolAdaptive, planes, s.h, s.w, oh, ow, kh, kw, 1, 1, 0, 0, 1, 1,
                                  backward, x.element_size(), soc);
}

Tensor adaptive_avg_pool2d(const Tensor& self, c10::SymIntArrayRef output_size_sym) {
  const char* op = "adaptive_avg_pool2d";
  const c10::DeviceIndex dev = CheckSameNpuDevice(op, {{"input", &self}});
  CheckFloatDtype(op, "input", self);
  const PoolShape s = InputShape(op, self, /*channels_ok=*/true);
  TORCH_CHECK(output_size_sym.size() == 2, op, ": output_size must have 2 elements, got ", output_size_sym.size());
  const int64_t oh = output_size_sym[0].expect_int(), ow = output_size_sym[1].expect_int();
  TORCH_CHECK(oh >= 0 && ow >= 0, op, ": elements of output_size must be greater than or equal to 0, got (", oh, ", ",
              ow, ")");
  c10::DeviceGuard guard(self.device());
  Tensor x = self.contiguous();
  Tensor y = NpuEmpty(OutSizes(s, oh, ow), self.scalar_type(), dev);
  if (y.numel() == 0) return AsFormat(y, s);  // an output size of 0 gives an empty result, as on the CPU
  LaunchPool(op, AdaptiveTiling(s, oh, ow, false, x), false, x, y, Tensor(), dev, self.scalar_type());
  return AsFormat(y, s);
}

Tensor adaptive_avg_pool2d_backward(const Tensor& grad_output, const Tensor& self) {
  const char* op = "adaptive_avg_pool2d_backward";
  const c10::DeviceIndex dev = CheckSameNpuDevice(op, {{"grad_output", &grad_output}, {"input", &self}});
  CheckNonBatchDimsNotEmpty(op, "grad_output", grad_output);
  CheckFloatDtype(op, "input", self);
  TORCH_CHECK(grad_output.scalar_type() == self.scalar_type(), op, ": grad_output dtype ", grad_output.scalar_type(),
              " does not match input dtype ", self.scalar_type());
  const PoolShape s = InputShape(op, self, /*channels_ok=*/true);
  TORCH_CHECK(grad_output.dim() == self.dim(), op, ": grad_output must have ", self.dim(), " dimensions, got ",
              grad_output.sizes());
  const int64_t oh = grad_output.size(-2), ow = grad_output.size(-1);
  c10::DeviceGuard guard(self.device());
  if (oh > s.h || ow > s.w) {
    // Overlapping windows (an output larger than the input): the average is separable,
    // y = A_h x A_w^T with A[o, i] = 1 / |window o| over window o = [o*in/out, ceil((o+1)*in/out)),
    // so grad_x = A_h^T grad_y A_w: two matmuls (the cube kernel) with host-built A.
    auto avg = [&](int64_t in, int64_t out) {
      Tensor a = at::zeros({out, in}, at::TensorOptions().dtype(c10::kFloat));
      float* p = a.data_ptr<float>();
      for (int64_t o = 0; o < out; ++o) {
        const int64_t st = o * in / out, en = ((o + 1) * in + out - 1) / out;
        for (int64_t i = st; i < en; ++i) p[o * in + i] = 1.0f / float(en - st);
      }
      return a.to(self.device(), /*non_blocking=*/true).to(self.scalar_type());  // host table: the copy holds it
    };
    return AsFormat(at::matmul(avg(s.h, oh).t(), at::matmul(grad_output, avg(s.w, ow))).contiguous(), s);
  }
  Tensor go = grad_output.contiguous();
  Tensor gx = NpuEmpty(self.sizes(), self.scalar_type(), dev);
  if (gx.numel() == 0) return AsFormat(gx, s);
  if (go.numel() == 0) return AsFormat(gx.zero_(), s);  // an output size of 0: no window, no gradient
  LaunchPool(op, AdaptiveTiling(s, oh, ow, true, self), true, go, Tensor(), gx, dev, self.scalar_type());
  return AsFormat(gx, s);
}

}  // namespace
}  // namespace torch_ops_nn

NPU_ATEN_AUTOGRAD_LIBRARY_IMPL(m) { m.impl("max_pool2d", TORCH_FN(torch_ops_nn::max_pool2d_autograd)); }

NPU_ATEN_LIBRARY_IMPL(m) {
  m.impl("max_pool2d", TORCH_FN(torch_ops_nn::max_pool2d));
  m.impl("max_pool2d_backward", TORCH_FN(torch_ops_nn::max_pool2d_backward));
  m.impl("max_pool2d_with_indices", TORCH_FN(torch_ops_nn::max_pool2d_with_indices));
  m.impl("max_pool2d_with_indices.out", TORCH_FN(torch_ops_nn::max_pool2d_with_indices_out));
  m.impl("max_pool2d_with_indices_backward", TORCH_FN(torch_ops_nn::max_pool2d_with_indices_backward));
  m.impl("max_pool2d_with_indices_backward.grad_input", TORCH_FN(torch_ops_nn::max_pool2d_with_indices_backward_out));
  m.impl("avg_pool2d", TORCH_FN(torch_ops_nn::avg_pool2d));
  m.impl("avg_pool2d.out", TORCH_FN(torch_ops_nn::avg_pool2d_out));
  m.impl("avg_pool2d_backward", TORCH_FN(torch_ops_nn::avg_pool2d_backward));
  m.impl("avg_pool2d_backward.grad_input", TORCH_FN(torch_ops_nn::avg_pool2d_backward_out));
  m.impl("_adaptive_avg_pool2d", TORCH_FN(torch_ops_nn::adaptive_avg_pool2d));
  m.impl("_adaptive_avg_pool2d_backward", TORCH_FN(torch_ops_nn::adaptive_avg_pool2d_backward));
}
