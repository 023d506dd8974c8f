// 3-D max pooling on npu (nn.MaxPool3d, F.max_pool3d, + backward) as a composition of native ops: the
// 2-D max pooling kernel pools every frame in (H, W) at once (the frames as channels), then each output
// frame takes the maximum over its depth taps with PyTorch's rule (the first maximum in (d, h, w) order,
// NaN wins), carrying the winner's flat index d * H * W + (its 2-D index). The backward scatters the
// gradient to those indices (scatter_add: repeated indices of overlapping windows add up, as on the CPU).
#include <ATen/ATen.h>
#include <ATen/native/Pool.h>
#include <torch/library.h>

#include "aten/op_common.h"

namespace torch_ops_nn {

namespace {

struct Pool3dArgs {
  int64_t k[3], s[3], p[3], d[3];
};

Pool3dArgs ParsePool3d(c10::IntArrayRef kernel_size, c10::IntArrayRef stride, c10::IntArrayRef padding,
                       c10::IntArrayRef dilation) {
  const char* op = "max_pool3d";
  auto three = [&](c10::IntArrayRef v, const char* name, int64_t i, int64_t dflt, bool may_be_empty) {
    TORCH_CHECK(v.size() == 1 || v.size() == 3 || (may_be_empty && v.empty()), op, ": ", name,
                " must be a single int or a tuple of three ints, got ", v.size(), " values");
    return v.empty() ? dflt : v.size() == 1 ? v[0] : v[i];
  };
  Pool3dArgs a{};
  for (int64_t i = 0; i < 3; ++i) {
    a.k[i] = three(kernel_size, "kernel_size", i, 0, false);
    a.s[i] = three(stride, "stride", i, a.k[i], true);
    a.p[i] = three(padding, "padding", i, 0, false);
    a.d[i] = three(dilation, "dilation", i, 1, false);
  }
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
    // take tap k where it is valid and (nothing yet, or larger, or NaN over a number)
    at::Tensor take = valid.logical_and(have.logical_not().logical_or_(vk > best).logical_or_(
                                            vk.isnan().logical_and_(best.isnan().logical_not_())));
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

}  // namespace torch_ops_nn

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("max_pool3d_with_indices", TORCH_FN(torch_ops_nn::max_pool3d_with_indices));
  m.impl("max_pool3d_with_indices_backward", TORCH_FN(torch_ops_nn::max_pool3d_with_indices_backward));
}
