// rrelu_with_noise (nn.RReLU, F.rrelu; it took the CPU fallback) on npu as native ops: in training every
// element <= 0 is scaled by its own slope drawn uniformly from [lower, upper) (the device's Philox
// generator), kept in `noise` (1 elsewhere) for the backward (rrelu_with_noise_backward: grad * noise, a
// composite op); in eval the slope is (lower + upper) / 2, a leaky_relu.
#include <ATen/ATen.h>
#include <ATen/native/Resize.h>
#include <torch/library.h>

#include "aten/op_common.h"

namespace torch_ops_nn {
namespace {

at::Tensor& RReluInto(at::Tensor& out, const at::Tensor& self, at::Tensor& noise, const c10::Scalar& lower,
                      const c10::Scalar& upper, bool training, std::optional<at::Generator> gen) {
  const char* op = "rrelu_with_noise";
  CheckSameNpuDevice(op, {{"self", &self}, {"noise", &noise}, {"out", &out}});
  CheckFloatDtype(op, "self", self);
  const double lo = lower.toDouble(), hi = upper.toDouble();
  TORCH_CHECK(lo <= hi, op, ": lower bound must be less than or equal to upper bound, got lower ", lo, " and upper ",
              hi);
  if (!training) {
    return out.copy_(at::leaky_relu(self, (lo + hi) / 2.0));
  }
  TORCH_CHECK(noise.sizes() == self.sizes(), op, ": noise of shape ", noise.sizes(), " must have the input's shape ",
              self.sizes());
  at::Tensor r = at::empty_like(self).uniform_(lo, hi, gen);
  const at::Tensor pos = self > 0;
  noise.copy_(at::where(pos, at::ones_like(r), r));
  at::Tensor y = self * noise;
  return out.copy_(y);
}

at::Tensor rrelu_with_noise(const at::Tensor& self, at::Tensor& noise, const c10::Scalar& lower,
                            const c10::Scalar& upper, bool training, std::optional<at::Generator> gen) {
  at::Tensor out = at::empty_like(self);
  return RReluInto(out, self, noise, lower, upper, training, gen);
}
at::Tensor& rrelu_with_noise_(at::Tensor& self, at::Tensor& noise, const c10::Scalar& lower, const c10::Scalar& upper,
                              bool training, std::optional<at::Generator> gen) {
  return RReluInto(self, self, noise, lower, upper, training, gen);
}
at::Tensor& rrelu_with_noise_out(const at::Tensor& self, at::Tensor& noise, const c10::Scalar& lower,
                                 const c10::Scalar& upper, bool training, std::optional<at::Generator> gen,
                                 at::Tensor& out) {
  at::native::resize_output(out, self.sizes());
  return RReluInto(out, self, noise, lower, upper, training, gen);
}

}  // namespace
}  // namespace torch_ops_nn

NPU_ATEN_LIBRARY_IMPL(m) {
  m.impl("rrelu_with_noise", TORCH_FN(torch_ops_nn::rrelu_with_noise));
  m.impl("rrelu_with_noise_", TORCH_FN(torch_ops_nn::rrelu_with_noise_));
  m.impl("rrelu_with_noise.out", TORCH_FN(torch_ops_nn::rrelu_with_noise_out));
}
