// Two nn ops that took the CPU fallback, as compositions of the native kernels:
//   _weight_norm_interface (+ backward): nn.utils.parametrizations.weight_norm / weight_norm with
//     dim 0 or the last dim (torch._weight_norm sends those here, the others through the plain ops).
//     norms = ||v|| over every other dim, kept with g's shape, in float32 (as the CPU: float norms for
//     16-bit v); w = v * (g / norms). The backward is the fused kernel's formula: s = sum(grad_w * v)
//     over the other dims, grad_g = s / norms, grad_v = (g / norms) * (grad_w - v * s / norms^2).
//     Autograd reaches the backward through the op's own derivative (WeightNormFusedBackward).
//   max_unpool2d: zeros of the output size, the input scattered to its flat H * W indices per plane
//     (the indices are checked against the output size with one device read-back, as the CPU checks
//     them); registered for the autograd key too, so its gradient is autograd's gather at the indices.
//     Positions two windows share hold the same value, so the write order does not matter.
#include <ATen/ATen.h>
#include <torch/library.h>

#include <tuple>
#include <vector>

#include "aten/op_common.h"
#include "core/npu_context.h"

namespace torch_ops_nn {
namespace {

using at::Tensor;

void CheckWeightNorm(const char* op, const Tensor& v, const Tensor& g, int64_t dim) {
  CheckSameNpuDevice(op, {{"v", &v}, {"g", &g}});
  CheckFloatDtype(op, "v", v);
  TORCH_CHECK(v.dim() >= 1, op, ": 'v' must have at least one dimension, got a 0-dim tensor");
  TORCH_CHECK(dim == 0 || dim == v.dim() - 1, op, ": fused kernels can only be applied for first or last dim, got dim ",
              dim, " for a ", v.dim(), "-D 'v'");
  TORCH_CHECK(g.numel() == v.size(dim), op, ": 'g' must have one element per slice of 'v' along dim ", dim, " (",
              v.size(dim), "), got ", g.numel(), " (shape ", g.sizes(), ")");
}

std::vector<int64_t> KeptShape(const Tensor& v, int64_t dim) {
  std::vector<int64_t> shape(static_cast<size_t>(v.dim()), 1);
  shape[static_cast<size_t>(dim)] = v.size(dim);
  return shape;
}

std::tuple<Tensor, Tensor> weight_norm_interface_npu(const Tensor& v, const Tensor& g, int64_t dim) {
  CheckWeightNorm("_weight_norm_interface", v, g, dim);
  const Tensor vf = v.to(at::kFloat);
  const Tensor norms = vf.square().sum(DimsExcept(v.dim(), dim), /*keepdim=*/true).sqrt();
  const Tensor w = (vf * (g.to(at::kFloat).reshape(KeptShape(v, dim)) / norms)).to(v.scalar_type());
  return {w, norms.reshape(g.sizes())};
}

std::tuple<Tensor, Tensor> weight_norm_interface_backward_npu(const Tensor& grad_w, const Tensor& v, const Tensor& g,
                                                              const Tensor& norms, int64_t dim) {
  const char* op = "_weight_norm_interface_backward";
  CheckWeightNorm(op, v, g, dim);
  CheckSameNpuDevice(op, {{"grad_w", &grad_w}, {"saved_norms", &norms}});
  TORCH_CHECK(grad_w.sizes() == v.sizes(), op, ": 'grad_w' of shape ", grad_w.sizes(), " must have the shape of 'v' ",
              v.sizes());
  const auto kept = KeptShape(v, dim);
  const Tensor vf = v.to(at::kFloat), gw = grad_w.to(at::kFloat);
  const Tensor n = norms.to(at::kFloat).reshape(kept), gf = g.to(at::kFloat).reshape(kept);
  const Tensor s = (gw * vf).sum(DimsExcept(v.dim(), dim), /*keepdim=*/true);
  const Tensor grad_g = (s / n).reshape(g.sizes()).to(g.scalar_type());
  const Tensor grad_v = ((gf / n) * (gw - vf * (s / (n * n)))).to(v.scalar_type());
  return {grad_v, grad_g};
}

Tensor max_unpool2d_npu(const Tensor& self, const Tensor& indices, c10::IntArrayRef output_size) {
  const char* op = "max_unpool2d";
  CheckSameNpuDevice(op, {{"self", &self}, {"indices", &indices}});
  TORCH_CHECK(output_size.size() == 2, op, ": There should be exactly two elements (height, width) in output_size, got ",
              output_size.size());
  TORCH_CHECK(self.dim() == 3 || self.dim() == 4, op, ": Input to max_unpooling2d should be a 3d or 4d Tensor, got ",
              self.dim(), "-D (shape ", self.sizes(), ")");
  TORCH_CHECK(self.sizes() == indices.sizes(), op, ": Expected shape of indices to be same as that of the input tensor (",
              self.sizes(), ") but got indices tensor with shape: ", indices.sizes());
  TORCH_CHECK_TYPE(indices.scalar_type() == at::kLong, op, ": elements in indices should be type int64 but got: ",
                   indices.scalar_type());
  for (int64_t d = 1; d < self.dim(); ++d)
    TORCH_CHECK(self.size(d) > 0, op, ": Expected input to have non-zero size for non-batch dimensions, but got ",
                self.sizes());
  const int64_t oh = output_size[0], ow = output_size[1];
  TORCH_CHECK(oh > 0 && ow > 0, op, ": output_size must be positive, got (", oh, ", ", ow, ")");
  const bool batched = self.dim() == 4;
  const Tensor x = batched ? self : self.unsqueeze(0), idx = batched ? indices : indices.unsqueeze(0);
  const int64_t n = x.size(0), c = x.size(1);
  const Tensor flat_idx = idx.reshape({n, c, -1});
  if (flat_idx.numel() > 0 && CurrentRuntimeStream(flat_idx.device().index()).capturing()) {
    // In an npu graph the rule is checked on the device (the bad index is not known to the host).
    CheckNoneSet((flat_idx < 0) | (flat_idx >= oh * ow),
                 c10::str(op, ": Found an invalid max index (output volumes are of size ", oh, "x", ow, ")"));
  } else if (flat_idx.numel() > 0) {
    const auto [lo, hi] = at::aminmax(flat_idx);
    const int64_t lo_v = lo.item<int64_t>(), hi_v = hi.item<int64_t>();
    const int64_t bad = lo_v < 0 ? lo_v : hi_v;
    TORCH_CHECK(lo_v >= 0 && hi_v < oh * ow, op, ": Found an invalid max index: ", bad,
                " (output volumes are of size ", oh, "x", ow, ")");
  }
  Tensor out = at::zeros({n, c, oh * ow}, x.options());
  out.scatter_(2, flat_idx, x.reshape({n, c, -1}));
  out = out.view({n, c, oh, ow});
  return batched ? out : out.squeeze(0);
}

}  // namespace
}  // namespace torch_ops_nn

NPU_ATEN_LIBRARY_IMPL(m) {
  m.impl("_weight_norm_interface", TORCH_FN(torch_ops_nn::weight_norm_interface_npu));
  m.impl("_weight_norm_interface_backward", TORCH_FN(torch_ops_nn::weight_norm_interface_backward_npu));
  m.impl("max_unpool2d", TORCH_FN(torch_ops_nn::max_unpool2d_npu));
}
NPU_ATEN_AUTOGRAD_LIBRARY_IMPL(m) {
  m.impl("max_unpool2d", TORCH_FN(torch_ops_nn::max_unpool2d_npu));
}
