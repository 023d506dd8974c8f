// 3-D pooling on npu (nn.MaxPool3d / AvgPool3d, + backward) as compositions of native ops: the 2-D
// pooling kernels pool every frame in (H, W) at once (the frames as channels), then each output frame
// combines its depth taps.
// - max: the maximum over the taps with PyTorch's rule (the first maximum in (d, h, w) order, the last NaN),
//   carrying the winner's flat index d * H * W + (its 2-D index); the backward scatters the gradient to
//   those indices (scatter_add: repeated indices of overlapping windows add up, as on the CPU).
// - avg: a window is a box, so its divisor is the product of a depth factor and an (H, W) factor (the
//   window's size, or its part inside the input without count_include_pad): the 2-D average of each
//   frame summed over the taps, divided by the depth factor (divisor_override: 2-D sums over it). The
//   backward is linear: the gradient over the depth factor, added per tap into its frame (index_add),
//   then one 2-D avg_pool backward.
// - adaptive avg: an average over a box is separable, so every frame's adaptive 2-D average in (H, W),
//   then the adaptive average over depth as a 2-D adaptive pool of the [D, Oh * Ow] planes to
//   [Od, Oh * Ow] (an adaptive pool to the same size keeps that dim); the backward the two 2-D backward
//   passes in reverse.
#include <ATen/ATen.h>
#include <ATen/native/Pool.h>
#include <array>
#include <torch/library.h>

#include "aten/op_common.h"

namespace torch_ops_nn {

namespace {

// kernel_size / stride / padding / dilation of a 3-D pooling: one value for all dims or three
// (an empty stride means the kernel size).
std::array<int64_t, 3> Three(c10::IntArrayRef v, const char* op, const char* name, std::array<int64_t, 3> dflt,
                             bool may_be_empty) {
  TORCH_CHECK(v.size() == 1 || v.size() == 3 || (may_be_empty && v.empty()), op, ": ", name,
              " must be a single int or a tuple of three ints, got ", v.size(), " values");
  if (v.empty()) return dflt;
  return v.size() == 1 ? std::array<int64_t, 3>{v[0], v[0], v[0]} : std::array<int64_t, 3>{v[0], v[1], v[2]};
}

struct Pool3dArgs {
  std::array<int64_t, 3> k, s, p, d;
};

Pool3dArgs ParsePool3d(c10::IntArrayRef kernel_size, c10::IntArrayRef stride, c10::IntArrayRef padding,
                       c10::IntArrayRef dilation) {
  const char* op = "max_pool3d";
  Pool3dArgs a;
  a.k = Three(kernel_size, op, "kernel_size", {0, 0, 0}, false);
  a.s = Three(stride, op, "stride", a.k, true);
  a.p = Three(padding, op, "padding", {0, 0, 0}, false);
  a.d = Three(dilation, op, "dilation", {1, 1, 1}, false);
  return a;
}

}  // namespace

std::tuple<at::Tensor, at::Tensor> max_pool3d_with_indices(const at::Tensor& self, c10::IntArrayRef kernel_size,
                                                           c10::IntArrayRef stride, c10::IntArrayRef padding,
                                                           c10::IntArrayRef dilation, bool ceil_mode) {
  const Pool3dArgs a = ParsePool3d(kernel_size, stride, padding, dilation);
  TORCH_CHECK(self.dim() == 4 || self.dim() == 5, "max_pool3d: Expected 4D or 5D tensor for input, but got: ",
              self.sizes());
  const bool batched = self.dim() == 5;
  const at::Tensor x = batched ? self : self.unsqueeze(0);
  const int64_t n = x.size(0), c = x.size(1), D = x.size(2), H = x.size(3), W = x.size(4);
  int64_t out[3];
  for (int i = 0; i < 3; ++i) {
    TORCH_CHECK(a.k[i] > 0 && a.s[i] > 0 && a.d[i] > 0, "max_pool3d: kernel_size ", a.k[i], ", stride ", a.s[i],
                " and dilation ", a.d[i], " must be greater than zero");
    out[i] = at::native::pooling_output_shape<int64_t>(x.size(2 + i), a.k[i], a.p[i], a.s[i], a.d[i], ceil_mode);
  }
  at::native::pool3d_shape_check(x, c, a.k[0], a.k[1], a.k[2], a.s[0], a.s[1], a.s[2], a.p[0], a.p[1], a.p[2],
                                 a.d[0], a.d[1], a.d[2], D, H, W, out[0], out[1], out[2], "max_pool3d_with_indices()");
  const int64_t Do = out[0];
  // Every frame pooled in (H, W): [N * C, D, Ho, Wo] values and 2-D indices into H * W.
  auto [v2, i2] = at::max_pool2d_with_indices(x.reshape({n * c, D, H, W}), {a.k[1], a.k[2]}, {a.s[1], a.s[2]},
                                              {a.p[1], a.p[2]}, {a.d[1], a.d[2]}, ceil_mode);
  const auto dev = x.device();
  at::Tensor best, bidx, have;
  for (int64_t k = 0; k < a.k[0]; ++k) {
    // Output frame t reads input frame t * sd - pd + k * dd (outside [0, D): no element).
    at::Tensor frame = at::arange(Do, at::TensorOptions().dtype(at::kLong).device(dev)) * a.s[0] + (k * a.d[0] - a.p[0]);
    at::Tensor valid = (frame >= 0).logical_and_(frame < D).view({1, Do, 1, 1});
    frame.clamp_(0, D - 1);
    at::Tensor vk = v2.index_select(1, frame), ik = i2.index_select(1, frame).add_(frame.view({1, Do, 1, 1}) * (H * W));
    if (!best.defined()) {
      best = vk, bidx = ik, have = valid.expand_as(vk).clone();
      continue;
    }
    // take tap k where it is valid and (nothing yet, or larger, or NaN: the CPU's scan keeps the last NaN)
    at::Tensor take = valid.logical_and(have.logical_not().logical_or_(vk > best).logical_or_(vk.isnan()));
    best = at::where(take, vk, best);
    bidx = at::where(take, ik, bidx);
    have.logical_or_(valid);
  }
  at::Tensor y = best.reshape({n, c, Do, out[1], out[2]}), idx = bidx.reshape({n, c, Do, out[1], out[2]});
  if (!batched) y = y.squeeze(0), idx = idx.squeeze(0);
  return {y.contiguous(), idx.contiguous()};
}

at::Tensor max_pool3d_with_indices_backward(const at::Tensor& grad_output, const at::Tensor& self,
                                            c10::IntArrayRef kernel_size, c10::IntArrayRef stride,
                                            c10::IntArrayRef padding, c10::IntArrayRef dilation, bool ceil_mode,
                                            const at::Tensor& indices) {
  TORCH_CHECK(grad_output.sizes() == indices.sizes(), "max_pool3d_backward: grad_output of shape ",
              grad_output.sizes(), " and indices of shape ", indices.sizes(), " differ");
  TORCH_CHECK(self.dim() == 4 || self.dim() == 5, "max_pool3d_backward: Expected 4D or 5D input, got ", self.sizes());
  const int64_t planes = self.dim() == 5 ? self.size(0) * self.size(1) : self.size(0);
  const int64_t vol = self.size(-3) * self.size(-2) * self.size(-1);
  at::Tensor gi = at::zeros({planes, vol}, grad_output.options());
  if (grad_output.numel() != 0)
    gi.scatter_add_(1, indices.reshape({planes, -1}), grad_output.reshape({planes, -1}));
  return gi.view(self.sizes());
}

namespace {

struct AvgDepth {
  int64_t kd, sd, pd, D, Do;
  std::vector<at::Tensor> frame, valid;  // per tap: the input frame of each output frame, and whether it exists
  at::Tensor factor;                     // [1, Do, 1, 1] float: the depth share of each window's divisor
};


AvgDepth PlanAvgDepth(const at::Tensor& x5, std::array<int64_t, 3> k, std::array<int64_t, 3> s,
                      std::array<int64_t, 3> p, bool ceil_mode, bool count_include_pad, bool override_set,
                      std::array<int64_t, 3>* out) {
  const char* op = "avg_pool3d";
  for (int i = 0; i < 3; ++i) {
    TORCH_CHECK(k[i] > 0 && s[i] > 0, op, ": kernel_size ", k[i], " and stride ", s[i], " must be greater than zero");
    (*out)[i] = at::native::pooling_output_shape<int64_t>(x5.size(2 + i), k[i], p[i], s[i], 1, ceil_mode);
  }
  at::native::pool3d_shape_check(x5, x5.size(1), k[0], k[1], k[2], s[0], s[1], s[2], p[0], p[1], p[2], 1, 1, 1,
                                 x5.size(2), x5.size(3), x5.size(4), (*out)[0], (*out)[1], (*out)[2], "avg_pool3d()",
                                 true);
  AvgDepth a{k[0], s[0], p[0], x5.size(2), (*out)[0], {}, {}, {}};
  std::vector<float> f(static_cast<size_t>(a.Do));
  for (int64_t t = 0; t < a.Do; ++t) {  // the CPU's window rule in depth
    const int64_t start = t * a.sd - a.pd, end = std::min(start + a.kd, a.D + a.pd);
    const int64_t vs = std::max<int64_t>(start, 0), ve = std::min(end, a.D);
    const int64_t size = count_include_pad ? end - start : ve - vs;
    f[static_cast<size_t>(t)] = override_set || size <= 0 ? 1.0f : static_cast<float>(size);  // empty: a sum of 0
  }
  const auto dev = x5.device();
  a.factor = at::tensor(f).to(dev, /*non_blocking=*/true).view({1, a.Do, 1, 1});  // host table: the copy holds it
  for (int64_t j = 0; j < a.kd; ++j) {
    at::Tensor fr = at::arange(a.Do, at::TensorOptions().dtype(at::kLong).device(dev)) * a.sd + (j - a.pd);
    a.valid.push_back((fr >= 0).logical_and_(fr < a.D));
    a.frame.push_back(fr.clamp_(0, a.D - 1));
  }
  return a;
}

// The checked arguments of an avg_pool3d (forward or backward) and its depth plan.
struct AvgPlan {
  std::array<int64_t, 3> k, s, p, out;
  bool batched;
  at::Tensor x;  // [N, C, D, H, W] (an unbatched input gets N = 1)
  AvgDepth a;
};

AvgPlan PlanAvgPool3d(const char* op, const at::Tensor& self, c10::IntArrayRef kernel_size, c10::IntArrayRef stride,
                      c10::IntArrayRef padding, bool ceil_mode, bool count_include_pad,
                      std::optional<int64_t> divisor_override) {
  TORCH_CHECK(self.dim() == 4 || self.dim() == 5, op, ": Expected 4D or 5D tensor for input, but got: ", self.sizes());
  TORCH_CHECK(!divisor_override || *divisor_override != 0, op, ": divisor must be not zero");
  CheckFloatDtype(op, "self", self);  // integers: the CPU fallback (its averages truncate)
  AvgPlan pl;
  pl.k = Three(kernel_size, op, "kernel_size", {0, 0, 0}, false);
  pl.s = Three(stride, op, "stride", pl.k, true);
  pl.p = Three(padding, op, "padding", {0, 0, 0}, false);
  pl.batched = self.dim() == 5;
  pl.x = pl.batched ? self : self.unsqueeze(0);
  pl.a = PlanAvgDepth(pl.x, pl.k, pl.s, pl.p, ceil_mode, count_include_pad, divisor_override.has_value(), &pl.out);
  return pl;
}

}  // namespace

at::Tensor avg_pool3d(const at::Tensor& self, c10::IntArrayRef kernel_size, c10::IntArrayRef stride,
                      c10::IntArrayRef padding, bool ceil_mode, bool count_include_pad,
                      std::optional<int64_t> divisor_override) {
  const AvgPlan pl = PlanAvgPool3d("avg_pool3d", self, kernel_size, stride, padding, ceil_mode, count_include_pad,
                                   divisor_override);
  const AvgDepth& a = pl.a;
  const auto &k = pl.k, &s = pl.s, &p = pl.p, &out = pl.out;
  const at::Tensor& x = pl.x;
  const int64_t n = x.size(0), c = x.size(1), H = x.size(3), W = x.size(4);
  // Every frame averaged (or summed, under divisor_override) in (H, W): [N * C, D, Ho, Wo].
  const at::Tensor a2 = at::avg_pool2d(x.reshape({n * c, a.D, H, W}), {k[1], k[2]}, {s[1], s[2]}, {p[1], p[2]},
                                       ceil_mode, count_include_pad,
                                       divisor_override ? std::optional<int64_t>(1) : std::nullopt);
  at::Tensor acc;
  for (int64_t j = 0; j < a.kd; ++j) {
    at::Tensor tap = a2.index_select(1, a.frame[j]).mul_(a.valid[j].view({1, a.Do, 1, 1}));
    if (acc.defined()) acc.add_(tap);
    else acc = tap;
  }
  acc.div_(divisor_override ? at::full({}, static_cast<double>(*divisor_override), acc.options())
                            : a.factor.to(acc.scalar_type()));
  at::Tensor y = acc.reshape({n, c, a.Do, out[1], out[2]});
  return pl.batched ? y : y.squeeze(0);
}

at::Tensor avg_pool3d_backward(const at::Tensor& grad_output, const at::Tensor& self, c10::IntArrayRef kernel_size,
                               c10::IntArrayRef stride, c10::IntArrayRef padding, bool ceil_mode,
                               bool count_include_pad, std::optional<int64_t> divisor_override) {
  const char* op = "avg_pool3d_backward";
  const AvgPlan pl = PlanAvgPool3d(op, self, kernel_size, stride, padding, ceil_mode, count_include_pad,
                                   divisor_override);
  const AvgDepth& a = pl.a;
  const auto &k = pl.k, &s = pl.s, &p = pl.p, &out = pl.out;
  const at::Tensor& x = pl.x;
  const int64_t n = x.size(0), c = x.size(1), H = x.size(3), W = x.size(4);
  const at::Tensor g = pl.batched ? grad_output : grad_output.unsqueeze(0);
  TORCH_CHECK(g.dim() == 5 && g.size(0) == n && g.size(1) == c && g.size(2) == a.Do && g.size(3) == out[1] &&
                  g.size(4) == out[2],
              op, ": grad_output of shape ", grad_output.sizes(), " does not match the output's [", n, ", ", c, ", ",
              a.Do, ", ", out[1], ", ", out[2], "]");
  at::Tensor gs = g.reshape({n * c, a.Do, out[1], out[2]});
  gs = divisor_override ? gs / static_cast<double>(*divisor_override) : gs / a.factor.to(gs.scalar_type());
  // Into the 2-D pooled space of every input frame, then one 2-D backward (it is linear).
  at::Tensor g2 = at::zeros({n * c, a.D, out[1], out[2]}, gs.options());
  for (int64_t j = 0; j < a.kd; ++j)
    g2.index_add_(1, a.frame[j], gs * a.valid[j].view({1, a.Do, 1, 1}));
  at::Tensor gi = at::avg_pool2d_backward(g2, x.reshape({n * c, a.D, H, W}), {k[1], k[2]}, {s[1], s[2]},
                                          {p[1], p[2]}, ceil_mode, count_include_pad,
                                          divisor_override ? std::optional<int64_t>(1) : std::nullopt);
  return gi.view(self.sizes());
}

at::Tensor adaptive_avg_pool3d_npu(const at::Tensor& self, c10::IntArrayRef output_size) {
  const char* op = "adaptive_avg_pool3d";
  CheckSameNpuDevice(op, {{"self", &self}});
  TORCH_CHECK(output_size.size() == 3, op, "(): internal error: output_size.size() must be 3, got ",
              output_size.size());
  TORCH_CHECK(self.dim() == 4 || self.dim() == 5, op, "(): Expected 4D or 5D tensor, but got ", self.sizes());
  CheckNonBatchDimsNotEmpty(op, "input", self);
  for (const int64_t o : output_size)
    TORCH_CHECK(o >= 0, op, ": elements of output_size must be greater than or equal to 0 but received ",
                output_size);
  CheckFloatDtype(op, "self", self);
  const bool batched = self.dim() == 5;
  const at::Tensor x = batched ? self : self.unsqueeze(0);
  const int64_t n = x.size(0), c = x.size(1), D = x.size(2), H = x.size(3), W = x.size(4);
  const int64_t od = output_size[0], oh = output_size[1], ow = output_size[2];
  at::Tensor y;
  if (n == 0 || od * oh * ow == 0) {
    y = at::empty({n, c, od, oh, ow}, x.options());
  } else {
    const at::Tensor frames = at::_adaptive_avg_pool2d(x.reshape({n * c, D, H, W}), {oh, ow});   // [NC, D, oh, ow]
    y = at::_adaptive_avg_pool2d(frames.reshape({n * c, 1, D, oh * ow}), {od, oh * ow}).reshape({n, c, od, oh, ow});
  }
  return batched ? y : y.squeeze(0);
}

at::Tensor adaptive_avg_pool3d_backward_npu(const at::Tensor& grad_output, const at::Tensor& self) {
  const char* op = "adaptive_avg_pool3d_backward";
  CheckSameNpuDevice(op, {{"grad_output", &grad_output}, {"self", &self}});
  TORCH_CHECK((self.dim() == 4 || self.dim() == 5) && grad_output.dim() == self.dim(), op,
              ": expected 4-D or 5-D self and grad_output of its rank, got ", self.sizes(), " and ",
              grad_output.sizes());
  const bool batched = self.dim() == 5;
  const at::Tensor x = batched ? self : self.unsqueeze(0);
  const at::Tensor g = batched ? grad_output : grad_output.unsqueeze(0);
  const int64_t n = x.size(0), c = x.size(1), D = x.size(2), H = x.size(3), W = x.size(4);
  const int64_t od = g.size(2), oh = g.size(3), ow = g.size(4);
  TORCH_CHECK(g.size(0) == n && g.size(1) == c, op, ": grad_output ", grad_output.sizes(), " does not match self ",
              self.sizes());
  if (x.numel() == 0 || g.numel() == 0) return at::zeros_like(self);
  // the depth step's input only lends its shape
  const at::Tensor depth_in = at::empty({n * c, 1, D, oh * ow}, g.options());
  const at::Tensor g1 = at::_adaptive_avg_pool2d_backward(g.reshape({n * c, 1, od, oh * ow}).contiguous(), depth_in);
  const at::Tensor gi = at::_adaptive_avg_pool2d_backward(g1.reshape({n * c, D, oh, ow}), x.reshape({n * c, D, H, W}));
  return gi.reshape(self.sizes());
}

}  // namespace torch_ops_nn

NPU_ATEN_LIBRARY_IMPL(m) {
  m.impl("max_pool3d_with_indices", TORCH_FN(torch_ops_nn::max_pool3d_with_indices));
  m.impl("max_pool3d_with_indices_backward", TORCH_FN(torch_ops_nn::max_pool3d_with_indices_backward));
  m.impl("avg_pool3d", TORCH_FN(torch_ops_nn::avg_pool3d));
  m.impl("avg_pool3d_backward", TORCH_FN(torch_ops_nn::avg_pool3d_backward));
  m.impl("_adaptive_avg_pool3d", TORCH_FN(torch_ops_nn::adaptive_avg_pool3d_npu));
  m.impl("_adaptive_avg_pool3d_backward", TORCH_FN(torch_ops_nn::adaptive_avg_pool3d_backward_npu));
}
