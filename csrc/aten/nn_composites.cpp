// Small ops composed of the native kernels (they took the CPU fallback), each following PyTorch's
// CPU definition and its argument checks:
//   eye                      zeros, then the diagonal view filled with 1
//   bernoulli_(p tensor)     uniform_ then u < p (p checked to lie in [0, 1]: one read-back)
//   exponential_             -log(1 - u) / lambda, u uniform in [0, 1)
//   random_(from, to)        from + floor(u * (to - from)) for ranges up to 2^24 (u has 24 random bits:
//                            each value's share is within 2^-24 of uniform); wider ranges and
//                            random_() without bounds keep the CPU fallback
//   binary_cross_entropy     -w (t max(log x, -100) + (1 - t) max(log(1 - x), -100)), reduced; its
//                            backward w (x - t) / max(x (1 - x), 1e-12) (x checked in [0, 1])
//   glu (+ backward)         a * sigmoid(b) over the two halves of `dim`
//   _prelu_kernel (+ bwd)    x > 0 ? x : w x
//   norm(p, dim)             linalg_vector_norm
//   equal                    same sizes and (a == b).all(), one read-back (NaN is unequal, as on the CPU)
//   take                     the flat input's index_select (negative indices wrapped, as the CPU)
//   masked_scatter_          the mask's nonzero positions take the source's first elements in order
//                            (index_put_ on the flat self); one read-back of the count
//   log2 = log / ln 2; tan = sin / cos; sinh = (expm1(x) - expm1(-x)) / 2 (no cancellation near 0);
//   hypot = m sqrt(1 + (n / m)^2) with m = max(|a|, |b|) (no overflow); logaddexp = max +
//   log1p(exp(-|a - b|)) (equal infinities give themselves); signbit from the sign bit (an integer
//   view: -0 and -NaN too); heaviside = x == 0 ? v : x > 0. Float dtypes; within a few ulp of the CPU.
#include <ATen/TensorOperators.h>
#include <ATen/core/Tensor.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/abs.h>
#include <ATen/ops/cat.h>
#include <ATen/ops/cos.h>
#include <ATen/ops/exp.h>
#include <ATen/ops/floor.h>
#include <ATen/ops/index_select.h>
#include <ATen/ops/expm1.h>
#include <ATen/ops/isinf.h>
#include <ATen/ops/log1p.h>
#include <ATen/ops/maximum.h>
#include <ATen/ops/minimum.h>
#include <ATen/ops/sin.h>
#include <ATen/ops/sqrt.h>
#include <ATen/ops/linalg_vector_norm.h>
#include <ATen/ops/log.h>
#include <ATen/ops/sigmoid.h>
#include <ATen/ops/where.h>
#include <torch/library.h>

#include <cmath>
#include <limits>
#include <optional>
#include <tuple>

#include "aten/op_common.h"
#include "core/cpu_fallback.h"

namespace torch_ops_nn {
namespace {

using at::Tensor;
using Gen = std::optional<at::Generator>;

// ---- creation and random -------------------------------------------------------------------------

Tensor& eye_m_out(c10::SymInt n_sym, c10::SymInt m_sym, Tensor& out) {
  const int64_t n = n_sym.expect_int(), m = m_sym.expect_int();
  TORCH_CHECK(n >= 0, "eye: n must be greater or equal to 0, got ", n);
  TORCH_CHECK(m >= 0, "eye: m must be greater or equal to 0, got ", m);
  CheckSameNpuDevice("eye", {{"out", &out}});
  at::native::resize_output(out, {n, m});
  out.zero_();
  if (n > 0 && m > 0) out.diagonal().fill_(1);
  return out;
}
Tensor& eye_out(c10::SymInt n, Tensor& out) { return eye_m_out(n, n, out); }

Tensor& bernoulli_tensor_(Tensor& self, const Tensor& p, Gen gen) {
  const char* op = "bernoulli_";
  CheckSameNpuDevice(op, {{"self", &self}, {"p", &p}});
  CheckFloatDtype(op, "p", p);
  TORCH_CHECK(!at::logical_or(p < 0, p > 1).any().item<bool>(), op, ": expects p to be in [0, 1]");
  Tensor u = at::empty(self.sizes(), p.options().dtype(c10::kFloat));
  u.uniform_(0.0, 1.0, gen);
  return self.copy_(u < p);
}

Tensor& exponential_(Tensor& self, double lambd, Gen gen) {
  const char* op = "exponential_";
  CheckSameNpuDevice(op, {{"self", &self}});
  CheckFloatDtype(op, "self", self);
  TORCH_CHECK(lambd > 0.0, op, ": expects lambda > 0.0, but found lambda=", lambd);
  Tensor u = at::empty(self.sizes(), self.options().dtype(c10::kFloat));
  u.uniform_(0.0, 1.0, gen);
  return self.copy_(at::log(1 - u) * (-1.0 / lambd));  // 1 - u in (0, 1]: never log(0)
}

Tensor& random_from(Tensor& self, int64_t from, std::optional<int64_t> to, Gen gen) {
  const char* op = "random_";
  CheckSameNpuDevice(op, {{"self", &self}});
  if (!to || *to - from > (int64_t(1) << 24) || self.scalar_type() == c10::kDouble) {
    CallCpuFallback("aten::random_", "from", {self, from, to, gen});
    return self;
  }
  TORCH_CHECK(from < *to, op, " expects 'from' to be less than 'to', but got from=", from, " >= to=", *to);
  if (self.numel() == 0) return self;
  Tensor u = at::empty(self.sizes(), self.options().dtype(c10::kFloat));
  u.uniform_(0.0, 1.0, gen);
  const double range = double(*to - from);
  // floor(u * range) < range for u < 1; the clamp guards float rounding of u * range up to range.
  Tensor k = at::floor(u * range).clamp_max_(range - 1);
  if (c10::isIntegralType(self.scalar_type(), true)) return self.copy_(k.to(c10::kLong) + from);
  return self.copy_(k + double(from));
}
Tensor& random_to(Tensor& self, int64_t to, Gen gen) { return random_from(self, 0, to, gen); }

// ---- binary_cross_entropy --------------------------------------------------------------------------

void CheckBce(const char* op, const Tensor& self, const Tensor& target, const std::optional<Tensor>& weight) {
  CheckSameNpuDevice(op, {{"self", &self}, {"target", &target}, {"weight", weight && weight->defined() ? &*weight : &self}});
  CheckFloatDtype(op, "self", self);
  TORCH_CHECK(self.sizes() == target.sizes(), op, ": Using a target size (", target.sizes(),
              ") that is different to the input size (", self.sizes(), ") is deprecated. Please ensure they have the "
              "same size.");
  TORCH_CHECK(!at::logical_or(self < 0, self > 1).any().item<bool>(), op,
              ": all elements of input should be between 0 and 1");
}

Tensor Reduce(const Tensor& loss, int64_t reduction) {
  if (reduction == 1) return loss.mean();
  if (reduction == 2) return loss.sum();
  return loss;
}

Tensor binary_cross_entropy(const Tensor& self, const Tensor& target, const std::optional<Tensor>& weight,
                            int64_t reduction) {
  CheckBce("binary_cross_entropy", self, target, weight);
  Tensor loss = (target * at::log(self).clamp_min(-100) + (1 - target) * at::log(1 - self).clamp_min(-100)) * -1;
  if (weight && weight->defined()) loss = loss * *weight;
  return Reduce(loss, reduction);
}

Tensor binary_cross_entropy_backward(const Tensor& grad, const Tensor& self, const Tensor& target,
                                     const std::optional<Tensor>& weight, int64_t reduction) {
  CheckBce("binary_cross_entropy_backward", self, target, weight);
  Tensor g = grad * (self - target) / (self * (1 - self)).clamp_min(1e-12);
  if (weight && weight->defined()) g = g * *weight;
  if (reduction == 1) g = g / double(self.numel());
  return g;
}

// ---- glu, prelu, norm ------------------------------------------------------------------------------

std::tuple<Tensor, Tensor> GluHalves(const char* op, const Tensor& self, int64_t dim) {
  TORCH_CHECK(self.dim() > 0, op, ": glu does not support scalars because halving size must be even");
  dim = WrapDim(op, dim, self.dim());
  TORCH_CHECK(self.size(dim) % 2 == 0, op, ": Halving dimension must be even, but dimension ", dim, " is size ",
              self.size(dim));
  const int64_t h = self.size(dim) / 2;
  return {self.narrow(dim, 0, h), self.narrow(dim, h, h)};
}

Tensor glu_npu(const Tensor& self, int64_t dim) {
  CheckSameNpuDevice("glu", {{"self", &self}});
  auto [a, b] = GluHalves("glu", self, dim);
  return a * at::sigmoid(b);
}
Tensor& glu_out(const Tensor& self, int64_t dim, Tensor& out) { return CopyToOut("glu", glu_npu(self, dim), out); }

Tensor glu_backward(const Tensor& grad, const Tensor& self, int64_t dim) {
  CheckSameNpuDevice("glu_backward", {{"grad_output", &grad}, {"self", &self}});
  auto [a, b] = GluHalves("glu_backward", self, dim);
  const Tensor s = at::sigmoid(b);
  const Tensor ga = grad * s;
  return at::cat({ga, ga * a * (1 - s)}, WrapDim("glu_backward", dim, self.dim()));
}

Tensor prelu_kernel(const Tensor& self, const Tensor& weight) {
  CheckSameNpuDevice("prelu", {{"self", &self}, {"weight", &weight}});
  return at::where(self > 0, self, weight * self);
}

std::tuple<Tensor, Tensor> prelu_kernel_backward(const Tensor& grad, const Tensor& self, const Tensor& weight) {
  CheckSameNpuDevice("prelu_backward", {{"grad_output", &grad}, {"self", &self}, {"weight", &weight}});
  const Tensor pos = self > 0;
  return {at::where(pos, grad, weight * grad), at::where(pos, 0.0, self * grad)};
}

Tensor& norm_out(const Tensor& self, const std::optional<c10::Scalar>& p, at::IntArrayRef dim, bool keepdim,
                 Tensor& out) {
  CheckSameNpuDevice("norm", {{"self", &self}, {"out", &out}});
  const c10::Scalar ord = p.has_value() ? *p : c10::Scalar(2.0);
  return CopyToOut("norm", at::linalg_vector_norm(self, ord, dim, keepdim), out);
}


bool equal_npu(const Tensor& self, const Tensor& other) {
  CheckSameNpuDevice("equal", {{"self", &self}, {"other", &other}});
  if (self.sizes() != other.sizes()) return false;
  if (self.numel() == 0) return true;
  return (self == other).all().item<bool>();
}

Tensor take_npu(const Tensor& self, const Tensor& index) {
  const char* op = "take";
  CheckSameNpuDevice(op, {{"self", &self}, {"index", &index}});
  TORCH_CHECK_TYPE(index.scalar_type() == c10::kLong, op, "(): Expected a long tensor for index, but got ",
                   index.scalar_type());
  const int64_t n = self.numel();
  TORCH_CHECK_INDEX(n > 0 || index.numel() == 0, op, "(): tried to take from an empty tensor");
  if (index.numel() == 0) return at::empty(index.sizes(), self.options());
  const Tensor flat = index.reshape({-1});
  const Tensor wrapped = at::where(flat < 0, flat + n, flat);  // out of range fails index_select's check
  return at::index_select(self.reshape({-1}), 0, wrapped).view(index.sizes());
}

Tensor& masked_scatter_npu_(Tensor& self, const Tensor& mask, const Tensor& source) {
  const char* op = "masked_scatter_";
  CheckSameNpuDevice(op, {{"self", &self}, {"mask", &mask}, {"source", &source}});
  TORCH_CHECK_TYPE(mask.scalar_type() == c10::kBool, op, ": expected BoolTensor for mask, got ", mask.scalar_type());
  TORCH_CHECK_TYPE(self.scalar_type() == source.scalar_type(), op, ": expected self and source to have same dtypes ",
                   "but got ", self.scalar_type(), " and ", source.scalar_type());
  const Tensor m = mask.expand(self.sizes()).reshape({-1});
  const Tensor pos = m.nonzero().reshape({-1});  // the count is read back by nonzero
  const int64_t k = pos.numel();
  TORCH_CHECK(source.numel() >= k, op, ": Number of elements of source < number of ones in mask (", source.numel(),
              " < ", k, ")");
  if (k == 0) return self;
  Tensor flat = self.is_contiguous() ? self.view({-1}) : self.contiguous().view({-1});
  flat.index_put_({pos}, source.reshape({-1}).narrow(0, 0, k));
  if (!self.is_contiguous()) self.copy_(flat.view(self.sizes()));
  return self;
}

// ---- elementwise math ------------------------------------------------------------------------------

Tensor FloatArg(const char* op, const Tensor& t) {
  CheckFloatDtype(op, "self", t);
  return t;
}

Tensor& log2_out(const Tensor& self, Tensor& out) {
  return CopyToOut("log2", at::log(FloatArg("log2", self)) * (1.0 / std::log(2.0)), out);
}
Tensor& tan_out(const Tensor& self, Tensor& out) {
  const Tensor x = FloatArg("tan", self);
  return CopyToOut("tan", at::sin(x) / at::cos(x), out);
}
Tensor& sinh_out(const Tensor& self, Tensor& out) {
  const Tensor x = FloatArg("sinh", self);
  return CopyToOut("sinh", (at::expm1(x) - at::expm1(-x)) * 0.5, out);
}
Tensor& hypot_out(const Tensor& self, const Tensor& other, Tensor& out) {
  CheckSameNpuDevice("hypot", {{"self", &self}, {"other", &other}, {"out", &out}});
  const Tensor a = at::abs(FloatArg("hypot", self)), b = at::abs(FloatArg("hypot", other));
  const Tensor m = at::maximum(a, b), n = at::minimum(a, b);
  const Tensor r = n / m;
  Tensor h = m * at::sqrt(r * r + 1);
  h = at::where(m == 0, 0.0, h);                                 // 0 / 0
  h = at::where(at::logical_or(at::isinf(a), at::isinf(b)), std::numeric_limits<double>::infinity(), h);
  return CopyToOut("hypot", h, out);
}
Tensor& logaddexp_out(const Tensor& self, const Tensor& other, Tensor& out) {
  CheckSameNpuDevice("logaddexp", {{"self", &self}, {"other", &other}, {"out", &out}});
  const Tensor a = FloatArg("logaddexp", self), b = FloatArg("logaddexp", other);
  const Tensor m = at::maximum(a, b);
  Tensor r = m + at::log1p(at::exp(-at::abs(a - b)));
  r = at::where(at::logical_and(at::isinf(a), a == b), a, r);  // equal infinities: a, not NaN
  return CopyToOut("logaddexp", r, out);
}
Tensor& signbit_out(const Tensor& self, Tensor& out) {
  CheckSameNpuDevice("signbit", {{"self", &self}, {"out", &out}});
  const c10::ScalarType t = self.scalar_type();
  Tensor r;
  if (t == c10::kFloat) r = self.contiguous().view(c10::kInt) < 0;
  else if (t == c10::kHalf || t == c10::kBFloat16) r = self.contiguous().view(c10::kShort).to(c10::kInt) < 0;
  else r = self < 0;  // integers
  return CopyToOut("signbit", r, out);
}
Tensor& heaviside_out(const Tensor& self, const Tensor& values, Tensor& out) {
  CheckSameNpuDevice("heaviside", {{"self", &self}, {"values", &values}, {"out", &out}});
  TORCH_CHECK_TYPE(self.scalar_type() == values.scalar_type(), "heaviside is not yet implemented for tensors with ",
                   "different dtypes");
  return CopyToOut("heaviside", at::where(self == 0, values, (self > 0).to(self.scalar_type())), out);
}

}  // namespace
}  // namespace torch_ops_nn

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  using namespace torch_ops_nn;
  m.impl("eye.m_out", TORCH_FN(eye_m_out));
  m.impl("eye.out", TORCH_FN(eye_out));
  m.impl("bernoulli_.Tensor", TORCH_FN(bernoulli_tensor_));
  m.impl("exponential_", TORCH_FN(exponential_));
  m.impl("random_.from", TORCH_FN(random_from));
  m.impl("random_.to", TORCH_FN(random_to));
  m.impl("binary_cross_entropy", TORCH_FN(binary_cross_entropy));
  m.impl("binary_cross_entropy_backward", TORCH_FN(binary_cross_entropy_backward));
  m.impl("glu", TORCH_FN(glu_npu));
  m.impl("glu.out", TORCH_FN(glu_out));
  m.impl("glu_backward", TORCH_FN(glu_backward));
  m.impl("_prelu_kernel", TORCH_FN(prelu_kernel));
  m.impl("_prelu_kernel_backward", TORCH_FN(prelu_kernel_backward));
  m.impl("norm.out", TORCH_FN(norm_out));
  m.impl("equal", TORCH_FN(equal_npu));
  m.impl("take", TORCH_FN(take_npu));
  m.impl("masked_scatter_", TORCH_FN(masked_scatter_npu_));
  m.impl("log2.out", TORCH_FN(log2_out));
  m.impl("tan.out", TORCH_FN(tan_out));
  m.impl("sinh.out", TORCH_FN(sinh_out));
  m.impl("hypot.out", TORCH_FN(hypot_out));
  m.impl("logaddexp.out", TORCH_FN(logaddexp_out));
  m.impl("signbit.out", TORCH_FN(signbit_out));
  m.impl("heaviside.out", TORCH_FN(heaviside_out));
}
