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
//   view: -0 and -NaN too); heaviside = x == 0 ? v : x > 0.
//   log10 = log / ln 10; logit = log(x / (1 - x)) (x clamped to [eps, 1 - eps] when eps is given);
//   cosh = h/2 * h + 1/2 / h^2 with h = exp(|x| / 2) (finite up to cosh's own overflow); asinh, acosh
//   and atanh through log1p (no cancellation near 0 / 1; atanh from |x|; log(2x) beyond 2^28); exp2 = exp(f ln 2) *
//   2^n with n = round(x), f = x - n exact, 2^n built from its exponent bits (two factors, so the
//   whole float range); atan by two half-angle steps t / (1 + sqrt(1 + t^2)) to |t| <= tan(pi/16)
//   and the odd series to t^13 (< 3e-12), 1 / x beyond 1; asin = atan(x / sqrt((1 - x)(1 + x))),
//   acos = 2 atan(sqrt((1 - x) / (1 + x))), atan2 from atan(min / max) and the quadrant, IEEE's
//   signed zeros and infinities included. Float dtypes (16-bit ones computed in float); within a few
//   ulp of the CPU.
//   copysign = |a| with b's sign bit; sinc = sin(pi x) / (pi x), 1 at 0; special.xlog1py = x log1p(y)
//   (0 where x == 0, NaN where y is); special.entr = -x ln x (0 at 0, -inf below); trace = the
//   diagonal's sum; linalg.cross from the three component products; isin by one broadcast compare
//   against up to 64 test elements, else searchsorted in the sorted test elements; tril_indices /
//   triu_indices as the nonzero positions of a tril / triu mask (row-major, as the CPU lists them);
//   polygamma(n >= 1, x > 0) = (-1)^(n+1) n! zeta(n + 1, x), the Hurwitz zeta by Euler-Maclaurin: 8
//   terms, then the integral, half term and five Bernoulli corrections at x + 8 (x <= 0 or non-finite
//   takes the CPU fallback after one flag read; n = 0 is digamma); cummax / cummin / logcumsumexp by
//   a doubling scan along dim (log2(n) steps, each combining every element with the one 2^k before
//   it): cummax keeps the later element on ties and any NaN (the CPU's rule: the last NaN, else the
//   last extreme, wins), logcumsumexp combines by logaddexp; frexp from the float's bits (subnormals
//   scaled by 2^24 first; 0, inf and NaN give themselves and exponent 0); nonzero_static = nonzero's
//   first `size` rows, padded with fill_value (torch.combinations uses it).
#include <ATen/TensorOperators.h>
#include <ATen/core/Tensor.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/uniform.h>
#include <ATen/ops/normal.h>
#include <ATen/ops/mm.h>
#include <ATen/ops/tan.h>
#include <ATen/ops/ceil.h>
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
#include <ATen/ops/broadcast_tensors.h>
#include <ATen/ops/clamp.h>
#include <ATen/ops/full_like.h>
#include <ATen/ops/round.h>
#include <ATen/ops/where.h>
#include <ATen/ops/diagonal.h>
#include <ATen/ops/sum.h>
#include <ATen/ops/narrow.h>
#include <ATen/ops/sort.h>
#include <ATen/ops/searchsorted.h>
#include <ATen/ops/any.h>
#include <ATen/ops/ones.h>
#include <ATen/ops/tril.h>
#include <ATen/ops/triu.h>
#include <ATen/ops/nonzero.h>
#include <ATen/ops/cumsum.h>
#include <ATen/ops/stack.h>
#include <ATen/ops/full.h>
#include <ATen/ops/remainder.h>
#include <ATen/ops/div.h>
#include <ATen/ops/pow.h>
#include <ATen/ops/arange.h>
#include <ATen/ops/logaddexp.h>
#include <ATen/ops/isnan.h>
#include <ATen/ops/logical_or.h>
#include <ATen/ops/bitwise_and.h>
#include <ATen/ops/bitwise_or.h>
#include <ATen/ops/bitwise_right_shift.h>
#include <ATen/ops/full.h>
#include <ATen/ops/reciprocal.h>
#include <ATen/ops/digamma.h>
#include <ATen/ops/isfinite.h>
#include <ATen/ops/logical_not.h>
#include <ATen/ops/logical_and.h>
#include <torch/library.h>

#include <cmath>
#include <limits>
#include <optional>
#include <tuple>

#include "aten/op_common.h"
#include "core/npu_context.h"
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
  CheckNoneSet(at::logical_or(p < 0, p > 1), c10::str(op, ": expects p to be in [0, 1]"));
  Tensor u = at::empty(self.sizes(), p.options().dtype(c10::kFloat));
  u.uniform_(0.0, 1.0, gen);
  return self.copy_(u < p);
}

// A float distribution's fill of self: the device and dtype checks, then float32 draws uniform in [0, 1).
Tensor UniformDraws(const char* op, const Tensor& self, Gen gen) {
  CheckSameNpuDevice(op, {{"self", &self}});
  CheckFloatDtype(op, "self", self);
  Tensor u = at::empty(self.sizes(), self.options().dtype(c10::kFloat));
  u.uniform_(0.0, 1.0, gen);
  return u;
}

Tensor& exponential_(Tensor& self, double lambd, Gen gen) {
  TORCH_CHECK(lambd > 0.0, "exponential_: expects lambda > 0.0, but found lambda=", lambd);
  const Tensor u = UniformDraws("exponential_", self, gen);
  return self.copy_(at::log(1 - u) * (-1.0 / lambd));  // 1 - u in (0, 1]: never log(0)
}

// cauchy_ / log_normal_ / geometric_ by transforming uniform draws (PyTorch's transformations):
// median + sigma tan(pi (u - 1/2)); exp of a normal draw; ceil(log(1 - u) / log(1 - p)) (1 - u in (0, 1]).
Tensor& cauchy_(Tensor& self, double median, double sigma, Gen gen) {
  TORCH_CHECK(sigma > 0.0, "cauchy_ expects sigma > 0.0, but found sigma=", sigma);
  const Tensor u = UniformDraws("cauchy_", self, gen);
  return self.copy_(at::tan((u - 0.5) * M_PI) * sigma + median);
}
Tensor& log_normal_(Tensor& self, double mean, double std, Gen gen) {
  const char* op = "log_normal_";
  CheckSameNpuDevice(op, {{"self", &self}});
  CheckFloatDtype(op, "self", self);
  TORCH_CHECK(std > 0.0, op, " expects std > 0.0, but found std=", std);
  Tensor z = at::empty(self.sizes(), self.options().dtype(c10::kFloat));
  z.normal_(mean, std, gen);
  return self.copy_(at::exp(z));
}
Tensor& geometric_(Tensor& self, double p, Gen gen) {
  const char* op = "geometric_";
  CheckSameNpuDevice(op, {{"self", &self}});
  TORCH_CHECK(p > 0 && p < 1, op, " expects p to be in (0, 1), but got p=", p);
  TORCH_CHECK(self.scalar_type() != c10::kBool && self.scalar_type() != c10::kDouble, op,
              ": self has dtype ", self.scalar_type(), ", which is not supported on npu");
  Tensor u = at::empty(self.sizes(), self.options().dtype(c10::kFloat));
  u.uniform_(0.0, 1.0, gen);
  return self.copy_(at::ceil(at::log(1 - u) * (1.0 / std::log1p(-p))));
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
  TORCH_CHECK_TYPE(target.scalar_type() == self.scalar_type(), op, ": target has dtype ", target.scalar_type(),
                   " but self has ", self.scalar_type(), "; they must match (as on the CPU)");
  TORCH_CHECK(self.sizes() == target.sizes(), op, ": Using a target size (", target.sizes(),
              ") that is different to the input size (", self.sizes(), ") is deprecated. Please ensure they have the "
              "same size.");
  CheckNoneSet(at::logical_or(self < 0, self > 1), c10::str(op, ": all elements of input should be between 0 and 1"));
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
  return CopyToOutExact("norm", at::linalg_vector_norm(self, ord, dim, keepdim), out);
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

// Integer (and bool) inputs of ops whose result is float (log2, tan, sinh) are computed in float.
Tensor FloatOrIntArg(const char* op, const Tensor& t) {
  return at::isIntegralType(t.scalar_type(), /*includeBool=*/true) ? t.to(c10::kFloat) : FloatArg(op, t);
}
Tensor& log2_out(const Tensor& self, Tensor& out) {
  return CopyToOut("log2", at::log(FloatOrIntArg("log2", self)) * (1.0 / std::log(2.0)), out);
}
Tensor& tan_out(const Tensor& self, Tensor& out) {
  const Tensor x = FloatOrIntArg("tan", self);
  return CopyToOut("tan", at::sin(x) / at::cos(x), out);
}
Tensor& sinh_out(const Tensor& self, Tensor& out) {
  const Tensor x = FloatOrIntArg("sinh", self);
  return CopyToOut("sinh", (at::expm1(x) - at::expm1(-x)) * 0.5, out);
}
Tensor& hypot_out(const Tensor& self_in, const Tensor& other_in, Tensor& out) {
  const Tensor self = ScalarOnDevice(self_in, out), other = ScalarOnDevice(other_in, out);
  CheckSameNpuDevice("hypot", {{"self", &self}, {"other", &other}, {"out", &out}});
  // in float32, rounded once to out's dtype (as the CPU computes float16 / bfloat16)
  const Tensor a = at::abs(FloatArg("hypot", self).to(c10::kFloat)), b = at::abs(FloatArg("hypot", other).to(c10::kFloat));
  const Tensor m = at::maximum(a, b), n = at::minimum(a, b);
  const Tensor r = n / m;
  Tensor h = m * at::sqrt(r * r + 1);
  h = at::where(m == 0, 0.0, h);                                 // 0 / 0
  h = at::where(at::logical_or(at::isinf(a), at::isinf(b)), std::numeric_limits<double>::infinity(), h);
  return CopyToOut("hypot", h, out);
}
Tensor& logaddexp_out(const Tensor& self_in, const Tensor& other_in, Tensor& out) {
  const Tensor self = ScalarOnDevice(self_in, out), other = ScalarOnDevice(other_in, out);
  CheckSameNpuDevice("logaddexp", {{"self", &self}, {"other", &other}, {"out", &out}});
  const Tensor a = FloatArg("logaddexp", self).to(c10::kFloat), b = FloatArg("logaddexp", other).to(c10::kFloat);
  const Tensor m = at::maximum(a, b);
  Tensor r = m + at::log1p(at::exp(-at::abs(a - b)));
  r = at::where(at::logical_and(at::isinf(a), a == b), a, r);  // equal infinities: a, not NaN
  return CopyToOut("logaddexp", r, out);
}
Tensor& logaddexp2_out(const Tensor& self_in, const Tensor& other_in, Tensor& out) {
  const Tensor self = ScalarOnDevice(self_in, out), other = ScalarOnDevice(other_in, out);
  CheckSameNpuDevice("logaddexp2", {{"self", &self}, {"other", &other}, {"out", &out}});
  const Tensor a = FloatArg("logaddexp2", self).to(c10::kFloat), b = FloatArg("logaddexp2", other).to(c10::kFloat);
  // max + log2(1 + 2^-|a - b|)
  Tensor r = at::maximum(a, b) + at::log1p(at::exp(at::abs(a - b) * -std::log(2.0))) * (1.0 / std::log(2.0));
  r = at::where(at::logical_and(at::isinf(a), a == b), a, r);  // equal infinities: a, not NaN
  return CopyToOut("logaddexp2", r, out);
}
// fmax / fmin: maximum / minimum where a NaN loses to a number (NaN only where both are NaN).
Tensor& FMaxMin(const char* op, const Tensor& self_in, const Tensor& other_in, Tensor& out, bool max) {
  const Tensor self = ScalarOnDevice(self_in, out), other = ScalarOnDevice(other_in, out);
  CheckSameNpuDevice(op, {{"self", &self}, {"other", &other}, {"out", &out}});
  TORCH_CHECK(!self.is_complex() && !other.is_complex(), op, " not implemented for complex tensors.");
  Tensor r = max ? at::maximum(self, other) : at::minimum(self, other);
  if (c10::isFloatingType(r.scalar_type())) {
    const c10::ScalarType t = r.scalar_type();
    const Tensor a = self.to(t), b = other.to(t);
    r = at::where(at::isnan(a), b, at::where(at::isnan(b), a, r));
  }
  return CopyToOut(op, r, out);
}
Tensor& fmax_out(const Tensor& self, const Tensor& other, Tensor& out) { return FMaxMin("fmax", self, other, out, true); }
Tensor& fmin_out(const Tensor& self, const Tensor& other, Tensor& out) { return FMaxMin("fmin", self, other, out, false); }
// round(decimals=d): nearbyint(x * 10^d) / 10^d, or nearbyint(x / 10^-d) * 10^-d for d < 0 (half to
// even, in float for 16-bit floats, as the CPU).
Tensor RoundDecimals(const Tensor& self, int64_t decimals) {
  const char* op = "round";
  CheckSameNpuDevice(op, {{"self", &self}});
  if (decimals == 0 || at::isIntegralType(self.scalar_type(), /*includeBool=*/true)) return at::round(self);
  CheckFloatDtype(op, "self", self);
  const Tensor x = self.scalar_type() == c10::kFloat ? self : self.to(c10::kFloat);
  const double p = std::pow(10.0, double(std::abs(decimals)));
  const Tensor r = decimals > 0 ? at::round(x * p) / p : at::round(x / p) * p;
  return r.scalar_type() == self.scalar_type() ? r : r.to(self.scalar_type());
}
Tensor& round_decimals_out(const Tensor& self, int64_t decimals, Tensor& out) {
  return CopyToOutExact("round", RoundDecimals(self, decimals), out);
}
Tensor round_decimals(const Tensor& self, int64_t decimals) { return RoundDecimals(self, decimals); }
Tensor& round_decimals_(Tensor& self, int64_t decimals) { return self.copy_(RoundDecimals(self, decimals)); }

// addbmm: beta self + alpha sum_b batch1[b] @ batch2[b], one GEMM over the batches laid side by side
// along k: [n, B * m] @ [B * m, p].
Tensor AddbmmProduct(const char* op, const Tensor& b1, const Tensor& b2) {
  TORCH_CHECK(b1.dim() == 3, op, ": batch1 must be a 3D tensor, got ", b1.dim(), "-D");
  TORCH_CHECK(b2.dim() == 3, op, ": batch2 must be a 3D tensor, got ", b2.dim(), "-D");
  TORCH_CHECK(b1.size(0) == b2.size(0), op, ": batch1 and batch2 must have same number of batches, got ",
              b1.size(0), " and ", b2.size(0));
  TORCH_CHECK(b1.size(2) == b2.size(1), op, ": Incompatible matrix sizes for bmm (", b1.size(1), "x", b1.size(2),
              " and ", b2.size(1), "x", b2.size(2), ")");
  const int64_t B = b1.size(0), n = b1.size(1), m = b1.size(2), p = b2.size(2);
  return at::mm(b1.permute({1, 0, 2}).reshape({n, B * m}), b2.reshape({B * m, p}));
}
Tensor Addbmm(const char* op, const Tensor& self, const Tensor& b1, const Tensor& b2, const c10::Scalar& beta_in,
              const c10::Scalar& alpha_in) {
  CheckSameNpuDevice(op, {{"self", &self}, {"batch1", &b1}, {"batch2", &b2}});
  const Tensor prod = AddbmmProduct(op, b1, b2);
  // integer results take beta / alpha in their dtype, truncated, as the CPU (0.6 -> 0)
  const bool integral = c10::isIntegralType(prod.scalar_type(), /*includeBool=*/true);
  const c10::Scalar beta = integral ? c10::Scalar(beta_in.toLong()) : beta_in;
  const c10::Scalar alpha = integral ? c10::Scalar(alpha_in.toLong()) : alpha_in;
  // beta == 0 ignores self (NaN included), as addmm
  if (beta.toComplexDouble() == 0.0) return alpha.toComplexDouble() == 1.0 ? prod : prod * alpha;
  return at::add(self.expand(prod.sizes()) * beta, prod, alpha);
}
Tensor addbmm_npu(const Tensor& self, const Tensor& b1, const Tensor& b2, const c10::Scalar& beta,
                  const c10::Scalar& alpha) {
  return Addbmm("addbmm", self, b1, b2, beta, alpha);
}
Tensor& addbmm_out(const Tensor& self, const Tensor& b1, const Tensor& b2, const c10::Scalar& beta,
                   const c10::Scalar& alpha, Tensor& out) {
  return CopyToOutExact("addbmm", Addbmm("addbmm", self, b1, b2, beta, alpha), out);
}
Tensor& addbmm_npu_(Tensor& self, const Tensor& b1, const Tensor& b2, const c10::Scalar& beta,
                    const c10::Scalar& alpha) {
  const Tensor r = Addbmm("addbmm_", self, b1, b2, beta, alpha);
  TORCH_CHECK(r.sizes() == self.sizes(), "addbmm_: self of shape ", self.sizes(), " cannot hold the result of shape ",
              r.sizes());
  return self.copy_(r);
}

Tensor& signbit_out(const Tensor& self, Tensor& out) {
  CheckSameNpuDevice("signbit", {{"self", &self}, {"out", &out}});
  const c10::ScalarType t = self.scalar_type();
  Tensor r;
  if (t == c10::kFloat) r = self.contiguous().view(c10::kInt) < 0;
  else if (t == c10::kHalf || t == c10::kBFloat16) r = self.contiguous().view(c10::kShort) < 0;
  else r = self < 0;  // integers
  return CopyToOutExact("signbit", r, out);
}
// 16-bit floats (and integers, which these ops promote to float) are computed in float; the result
// is rounded once into out's dtype.
Tensor F32(const char* op, const Tensor& t) {
  if (!at::isIntegralType(t.scalar_type(), /*includeBool=*/true)) CheckFloatDtype(op, "self", t);
  return t.scalar_type() == c10::kFloat ? t : t.to(c10::kFloat);
}
Tensor SignBit(const Tensor& x) { return x.contiguous().view(c10::kInt) < 0; }  // float32 x
Tensor WithSignOf(const Tensor& r, const Tensor& x) { return at::where(SignBit(x), -r, r); }

Tensor& log10_out(const Tensor& self, Tensor& out) {
  return CopyToOut("log10", at::log(F32("log10", self)) * (1.0 / std::log(10.0)), out);
}
Tensor& logit_out(const Tensor& self, std::optional<double> eps, Tensor& out) {
  Tensor x = F32("logit", self);
  // The CPU's rule: a negative eps is none; else x < eps -> eps, then x > 1 - eps -> 1 - eps (in that
  // order, which decides eps > 0.5, where clamp's max-then-min would give 1 - eps everywhere).
  if (eps && *eps >= 0)
    x = *eps <= 0.5 ? at::clamp(x, *eps, 1.0 - *eps) : at::where(x < *eps, *eps, at::where(x > 1.0 - *eps, 1.0 - *eps, x));
  return CopyToOut("logit", at::log(x / (1 - x)), out);
}
// The CPU's rule: eps given: 0 outside [eps, 1 - eps]; none: NaN outside [0, 1]; else g / (x (1 - x)).
Tensor& logit_backward_out(const Tensor& grad, const Tensor& self, std::optional<double> eps, Tensor& grad_input) {
  CheckSameNpuDevice("logit_backward", {{"grad_output", &grad}, {"self", &self}, {"grad_input", &grad_input}});
  const Tensor x = F32("logit_backward", self), g = F32("logit_backward", grad);
  Tensor r = g / (x * (1 - x));
  if (eps && *eps >= 0) r = at::where(at::logical_or(x < *eps, x > 1 - *eps), 0.0, r);
  else r = at::where(at::logical_or(x < 0, x > 1), std::numeric_limits<double>::quiet_NaN(), r);
  return CopyToOut("logit_backward", r, grad_input);
}
Tensor logit_npu(const Tensor& self, std::optional<double> eps) {
  Tensor out = NpuEmpty(self.sizes(), at::isFloatingType(self.scalar_type()) ? self.scalar_type() : c10::kFloat,
                        self.device().index());
  return logit_out(self, eps, out);
}
Tensor& logit_npu_(Tensor& self, std::optional<double> eps) { return logit_out(self, eps, self); }
Tensor& cosh_out(const Tensor& self, Tensor& out) {
  const Tensor h = at::exp(at::abs(F32("cosh", self)) * 0.5);
  return CopyToOut("cosh", (h * 0.5) * h + 0.5 / (h * h), out);
}
constexpr double kBig = 268435456.0;  // 2^28: beyond it sqrt(x^2 + 1) is |x| in float
const double kLn2 = std::log(2.0);
Tensor& asinh_out(const Tensor& self, Tensor& out) {
  const Tensor x = F32("asinh", self), a = at::abs(x);
  const Tensor small = at::log1p(a + a * a / (1 + at::sqrt(a * a + 1)));
  return CopyToOut("asinh", WithSignOf(at::where(a > kBig, at::log(a) + kLn2, small), x), out);
}
Tensor& acosh_out(const Tensor& self, Tensor& out) {
  const Tensor x = F32("acosh", self), d = x - 1;
  const Tensor small = at::log1p(d + at::sqrt(d * (x + 1)));
  const Tensor r = at::where(x > kBig, at::log(x) + kLn2, small);
  return CopyToOut("acosh", at::where(x < 1, std::numeric_limits<double>::quiet_NaN(), r), out);
}
Tensor& atanh_out(const Tensor& self, Tensor& out) {
  const Tensor x = F32("atanh", self), a = at::abs(x);  // odd: from |x|, so no log1p near -1
  return CopyToOut("atanh", WithSignOf(at::log1p(2 * a / (1 - a)) * 0.5, x), out);
}
Tensor& exp2_out(const Tensor& self, Tensor& out) {
  const Tensor x = F32("exp2", self);
  const Tensor n = at::clamp(at::round(x), -252.0, 254.0);
  const Tensor e = at::exp((x - n) * kLn2);
  // 2^k for k in [-126, 127]: the float with biased exponent k + 127 and a zero mantissa.
  auto pow2 = [](const Tensor& k) { return ((k.to(c10::kInt) + 127) * 8388608).view(c10::kFloat); };
  const Tensor n1 = at::floor(n * 0.5);
  return CopyToOut("exp2", e * pow2(n1) * pow2(n - n1), out);
}
// atan of t in [0, inf] (NaN passes): 1 / t beyond 1, two half-angle steps, the odd series.
Tensor AtanNonNeg(const Tensor& a) {
  const Tensor inv = a > 1;
  Tensor t = at::where(inv, 1 / a, a);
  for (int i = 0; i < 2; ++i) t = t / (1 + at::sqrt(t * t + 1));
  const Tensor z = t * t;
  Tensor p = at::full_like(t, 1.0 / 13);
  for (int k = 11; k >= 1; k -= 2) p = p * z + ((k / 2) % 2 ? -1.0 / k : 1.0 / k);
  const Tensor r = p * t * 4;
  return at::where(inv, M_PI / 2 - r, r);
}
Tensor& atan_out(const Tensor& self, Tensor& out) {
  const Tensor x = F32("atan", self);
  return CopyToOut("atan", WithSignOf(AtanNonNeg(at::abs(x)), x), out);
}
Tensor& asin_out(const Tensor& self, Tensor& out) {
  const Tensor x = F32("asin", self);
  return CopyToOut("asin", WithSignOf(AtanNonNeg(at::abs(x) / at::sqrt((1 - x) * (1 + x))), x), out);
}
Tensor& acos_out(const Tensor& self, Tensor& out) {
  const Tensor x = F32("acos", self);
  return CopyToOut("acos", AtanNonNeg(at::sqrt((1 - x) / (1 + x))) * 2, out);
}
Tensor& atan2_out(const Tensor& self_in, const Tensor& other_in, Tensor& out) {
  const Tensor self = ScalarOnDevice(self_in, out), other = ScalarOnDevice(other_in, out);
  CheckSameNpuDevice("atan2", {{"self", &self}, {"other", &other}, {"out", &out}});
  const auto yx = at::broadcast_tensors({F32("atan2", self), F32("atan2", other)});
  const Tensor &y = yx[0], &x = yx[1];
  const Tensor a = at::abs(x), b = at::abs(y), swap = b > a;
  Tensor t = at::where(swap, a / b, b / a);  // in [0, 1]
  t = at::where(at::logical_and(a == 0, b == 0), 0.0, t);                  // 0 / 0
  t = at::where(at::logical_and(at::isinf(a), at::isinf(b)), 1.0, t);      // inf / inf
  Tensor r = AtanNonNeg(t);
  r = at::where(swap, M_PI / 2 - r, r);
  r = at::where(SignBit(x), M_PI - r, r);  // x < 0 or -0
  return CopyToOut("atan2", WithSignOf(r, y), out);
}
Tensor& heaviside_out(const Tensor& self_in, const Tensor& values_in, Tensor& out) {
  const Tensor self = ScalarOnDevice(self_in, out), values = ScalarOnDevice(values_in, out);
  CheckSameNpuDevice("heaviside", {{"self", &self}, {"values", &values}, {"out", &out}});
  TORCH_CHECK_TYPE(self.scalar_type() == values.scalar_type(), "heaviside is not yet implemented for tensors with ",
                   "different dtypes");
  return CopyToOutExact("heaviside", at::where(self == 0, values, (self > 0).to(self.scalar_type())), out);
}

Tensor& copysign_out(const Tensor& self_in, const Tensor& other_in, Tensor& out) {
  const Tensor self = ScalarOnDevice(self_in, out), other = ScalarOnDevice(other_in, out);
  CheckSameNpuDevice("copysign", {{"self", &self}, {"other", &other}, {"out", &out}});
  return CopyToOut("copysign", WithSignOf(at::abs(F32("copysign", self)), F32("copysign", other)), out);
}
Tensor& sinc_out(const Tensor& self, Tensor& out) {
  const Tensor x = F32("sinc", self), px = x * M_PI;
  return CopyToOut("sinc", at::where(x == 0, 1.0, at::sin(px) / px), out);
}
Tensor& xlog1py_out(const Tensor& self_in, const Tensor& other_in, Tensor& out) {
  const Tensor self = ScalarOnDevice(self_in, out), other = ScalarOnDevice(other_in, out);
  CheckSameNpuDevice("special_xlog1py", {{"self", &self}, {"other", &other}, {"out", &out}});
  const Tensor x = F32("special_xlog1py", self), y = F32("special_xlog1py", other);
  const Tensor r = at::where(x == 0, 0.0, x * at::log1p(y));
  return CopyToOut("special_xlog1py", at::where(at::isnan(y), y, r), out);
}
Tensor& entr_out(const Tensor& self, Tensor& out) {
  const Tensor x = F32("special_entr", self);
  Tensor r = at::where(x > 0, -x * at::log(x), x);  // NaN stays NaN
  r = at::where(x == 0, 0.0, r);
  return CopyToOut("special_entr", at::where(x < 0, -std::numeric_limits<double>::infinity(), r), out);
}
Tensor trace_npu(const Tensor& self) {
  TORCH_CHECK(self.dim() == 2, "trace: expected a matrix, but got tensor with dim ", self.dim());
  return at::sum(at::diagonal(self));
}
Tensor& linalg_cross_out(const Tensor& self, const Tensor& other, int64_t dim, Tensor& out) {
  const char* op = "linalg.cross";
  CheckSameNpuDevice(op, {{"input", &self}, {"other", &other}, {"out", &out}});
  TORCH_CHECK(self.dim() == other.dim(), op, ": inputs must have the same number of dimensions.");
  const auto ab = at::broadcast_tensors({self, other});
  const Tensor &a = ab[0], &b = ab[1];
  dim = WrapDim(op, dim, a.dim());
  TORCH_CHECK(a.size(dim) == 3, op, ": inputs dimension ", dim, " must have length 3. Got ", self.size(dim),
              " and ", other.size(dim));
  auto c = [&](const Tensor& t, int64_t i) { return at::narrow(t, dim, i, 1); };
  const Tensor r = at::cat({c(a, 1) * c(b, 2) - c(a, 2) * c(b, 1), c(a, 2) * c(b, 0) - c(a, 0) * c(b, 2),
                            c(a, 0) * c(b, 1) - c(a, 1) * c(b, 0)}, dim);
  return CopyToOut(op, r, out);
}
Tensor& isin_out(const Tensor& elements, const Tensor& test, bool assume_unique, bool invert, Tensor& out) {
  (void)assume_unique;
  CheckSameNpuDevice("isin", {{"elements", &elements}, {"test_elements", &test}, {"out", &out}});
  const Tensor t = test.reshape({-1});
  Tensor found;
  if (t.numel() == 0) {
    found = at::zeros_like(elements, elements.options().dtype(c10::kBool));
  } else if (t.numel() <= 64) {
    found = at::any(elements.unsqueeze(-1) == t, -1);
  } else {
    const Tensor sorted = std::get<0>(at::sort(t));
    const Tensor pos = at::clamp(at::searchsorted(sorted, elements.reshape({-1})), 0, t.numel() - 1);
    found = (at::index_select(sorted, 0, pos) == elements.reshape({-1})).view(elements.sizes());
  }
  return CopyToOutExact("isin", invert ? found.logical_not() : found, out);
}
// (-1)^(n+1) n! zeta(n + 1, x) for x > 0: sum_{k<N} (x + k)^-s, then at z = x + N
// z^(1-s) / (s - 1) + z^-s / 2 + sum_j B_2j / (2j)! s (s + 1) ... (s + 2j - 2) z^(-s-2j+1), s = n + 1.
// r^e by square and multiply (each product rounds once; pow's exp(e ln r) loses e ln r ulp).
Tensor PowInt(const Tensor& r, int64_t e) {
  Tensor result, sq = r;
  for (; e > 0; e >>= 1) {
    if (e & 1) result = result.defined() ? result * sq : sq;
    if (e > 1) sq = sq * sq;
  }
  return result;
}
Tensor PolygammaPositive(int64_t n, const Tensor& x) {
  constexpr int kTerms = 8;
  const double s = double(n + 1);
  Tensor sum = PowInt(at::reciprocal(x), n + 1);
  for (int k = 1; k < kTerms; ++k) sum = sum + PowInt(at::reciprocal(x + double(k)), n + 1);
  const Tensor z = x + double(kTerms), inv = at::reciprocal(z), inv2 = inv * inv;
  Tensor zs = PowInt(inv, n + 1);               // z^-s
  sum = sum + zs * z * (1.0 / (s - 1.0)) + zs * 0.5;
  static const double bernoulli[] = {1.0 / 6, -1.0 / 30, 1.0 / 42, -1.0 / 30, 5.0 / 66};
  double coef = 1.0;                            // s (s + 1) ... (s + 2j - 2) / (2j)!
  Tensor zp = zs * inv;                         // z^(-s-2j+1) for j = 1
  for (int j = 1; j <= 5; ++j) {
    coef *= (j == 1 ? s : (s + 2 * j - 3) * (s + 2 * j - 2)) / ((2.0 * j - 1.0) * (2.0 * j));
    sum = sum + zp * (bernoulli[j - 1] * coef);
    zp = zp * inv2;
  }
  const double scale = std::tgamma(double(n) + 1.0) * (n % 2 == 1 ? 1.0 : -1.0);  // (-1)^(n+1) n!
  return sum * scale;
}
Tensor& polygamma_out(int64_t n, const Tensor& self, Tensor& out) {
  CheckSameNpuDevice("polygamma", {{"self", &self}, {"out", &out}});
  TORCH_CHECK(n >= 0, "polygamma(n, x) does not support negative n.");
  if (n == 0) return CopyToOut("polygamma", at::digamma(self), out);
  const Tensor x = F32("polygamma", self);
  if (x.numel() > 0 && at::logical_not(at::logical_and(x > 0, at::isfinite(x))).any().item<bool>()) {
    const Tensor r = CallCpuFallback("aten::polygamma", "", {n, self})[0].toTensor();
    return CopyToOut("polygamma", r, out);
  }
  return CopyToOut("polygamma", PolygammaPositive(n, x), out);
}

// Hillis-Steele inclusive scan along dim: step k combines element i with element i - 2^k.
template <class Combine>
void DoublingScan(std::vector<Tensor>& parts, int64_t dim, Combine combine) {
  const int64_t n = parts[0].size(dim);
  for (int64_t s = 1; s < n; s *= 2) {
    std::vector<Tensor> earlier, later;
    for (const Tensor& t : parts) {
      earlier.push_back(t.narrow(dim, 0, n - s));
      later.push_back(t.narrow(dim, s, n - s));
    }
    const std::vector<Tensor> merged = combine(earlier, later);
    for (size_t j = 0; j < parts.size(); ++j) parts[j] = at::cat({parts[j].narrow(dim, 0, s), merged[j]}, dim);
  }
}
void CumExtreme(const char* op, const Tensor& self, Tensor& values, Tensor& indices, int64_t dim, bool max) {
  CheckSameNpuDevice(op, {{"self", &self}, {"values", &values}, {"indices", &indices}});
  dim = WrapDim(op, dim, self.dim());
  if (self.numel() == 0) return;
  std::vector<int64_t> shape(size_t(self.dim()), 1);
  shape[size_t(dim)] = self.size(dim);
  std::vector<Tensor> parts{self, at::arange(self.size(dim), self.options().dtype(c10::kLong)).view(shape)
                                      .expand(self.sizes())};
  const bool floating = at::isFloatingType(self.scalar_type());
  DoublingScan(parts, dim, [&](const std::vector<Tensor>& a, const std::vector<Tensor>& b) {
    // the earlier part wins unless the later one is NaN or at least as extreme (and a is not NaN)
    Tensor later = max ? b[0] >= a[0] : b[0] <= a[0];
    if (floating) later = at::logical_or(at::isnan(b[0]), at::logical_and(later, at::logical_not(at::isnan(a[0]))));
    return std::vector<Tensor>{at::where(later, b[0], a[0]), at::where(later, b[1], a[1])};
  });
  values.copy_(parts[0]);
  indices.copy_(parts[1]);
}
void cummax_helper(const Tensor& self, Tensor& values, Tensor& indices, int64_t dim) {
  CumExtreme("cummax", self, values, indices, dim, true);
}
void cummin_helper(const Tensor& self, Tensor& values, Tensor& indices, int64_t dim) {
  CumExtreme("cummin", self, values, indices, dim, false);
}
Tensor& logcumsumexp_out(const Tensor& self, int64_t dim, Tensor& out) {
  const char* op = "logcumsumexp";
  CheckSameNpuDevice(op, {{"self", &self}, {"out", &out}});
  CheckFloatDtype(op, "self", self);
  dim = WrapDim(op, dim, std::max<int64_t>(self.dim(), 1));
  if (self.numel() == 0 || self.dim() == 0) return CopyToOut(op, self, out);
  std::vector<Tensor> parts{self.scalar_type() == c10::kFloat ? self : self.to(c10::kFloat)};
  DoublingScan(parts, dim, [](const std::vector<Tensor>& a, const std::vector<Tensor>& b) {
    return std::vector<Tensor>{at::logaddexp(a[0], b[0])};
  });
  return CopyToOut(op, parts[0], out);
}
Tensor logcumsumexp_npu(const Tensor& self, int64_t dim) {
  Tensor out = NpuEmpty(self.sizes(), self.scalar_type(), self.device().index());
  return logcumsumexp_out(self, dim, out);
}

std::tuple<Tensor&, Tensor&> frexp_out(const Tensor& self, Tensor& mantissa, Tensor& exponent) {
  const char* op = "frexp";
  CheckSameNpuDevice(op, {{"self", &self}, {"mantissa", &mantissa}, {"exponent", &exponent}});
  TORCH_CHECK(at::isFloatingType(self.scalar_type()), "torch.frexp() only supports floating-point dtypes");
  TORCH_CHECK(mantissa.scalar_type() == self.scalar_type(), "torch.frexp() expects mantissa to have dtype ",
              self.scalar_type(), " but got ", mantissa.scalar_type());
  TORCH_CHECK(exponent.scalar_type() == c10::kInt, "torch.frexp() expects exponent to have int dtype but got ",
              exponent.scalar_type());
  const Tensor x = F32(op, self).contiguous();
  auto field = [](const Tensor& f) { return at::bitwise_and(at::bitwise_right_shift(f.view(c10::kInt), 23), 0xff); };
  const Tensor sub = field(x) == 0;                             // zero or subnormal
  const Tensor y = at::where(sub, x * 16777216.0, x).contiguous();  // 2^24: subnormals become normal
  const Tensor e = field(y) - 126 - at::where(sub, 24, 0).to(c10::kInt);
  const Tensor m = at::bitwise_or(at::bitwise_and(y.view(c10::kInt), int64_t(0x807fffff)), int64_t(0x3f000000))
                       .view(c10::kFloat);
  const Tensor keep = at::logical_or(x == 0, at::logical_not(at::isfinite(x)));  // 0, +-inf, NaN: themselves
  CopyToOut(op, at::where(keep, x, m), mantissa);
  CopyToOut(op, at::where(keep, 0, e).to(c10::kInt), exponent);
  return {mantissa, exponent};
}
Tensor nonzero_static_npu(const Tensor& self, c10::SymInt size_s, int64_t fill_value) {
  const int64_t size = size_s.expect_int();
  TORCH_CHECK(size >= 0, "nonzero_static: 'size' must be an non-negative integer");
  const int64_t n = self.numel(), nd = self.dim();
  if (nd > 0 && n > 0 && n < (int64_t(1) << 24) && size > 0) {
    // Without nonzero's read back of the count (so it captures in npu graphs): each nonzero element's
    // rank by a running count, its coordinates from its flat index (float floor division and
    // remainder, exact below 2^24), scattered to row rank; elements past `size` go to a spare row.
    const Tensor nzf = self.reshape({-1}) != 0;
    const Tensor rank = at::cumsum(nzf.to(c10::kLong), 0) - 1;
    const Tensor target = at::where(nzf & (rank < size), rank, size);  // [n]
    const Tensor flat = at::arange(n, self.options().dtype(c10::kFloat));
    std::vector<Tensor> coords;
    int64_t inner = n;
    for (int64_t d = 0; d < nd; ++d) {
      inner /= self.size(d);
      const Tensor q = inner > 1 ? at::div(flat, double(inner), "floor") : flat;
      coords.push_back(at::remainder(q, double(self.size(d))).to(c10::kLong));
    }
    const Tensor src = at::stack(coords, 1).reshape({-1});                                     // [n * nd]
    const Tensor pos = (target.unsqueeze(1) * nd + at::arange(nd, target.options())).reshape({-1});
    Tensor out = at::full({(size + 1) * nd}, fill_value, self.options().dtype(c10::kLong));
    out.scatter_(0, pos, src);
    return out.view({size + 1, nd}).narrow(0, 0, size).clone();
  }
  const Tensor nz = at::nonzero(self);
  const int64_t count = nz.size(0);
  if (count >= size) return nz.narrow(0, 0, size).clone();
  return at::cat({nz, at::full({size - count, nz.size(1)}, fill_value, nz.options())}, 0);
}

Tensor TriIndices(const char* op, int64_t row, int64_t col, int64_t offset, bool upper,
                  std::optional<c10::ScalarType> dtype, std::optional<c10::Device> device) {
  TORCH_CHECK(row >= 0, op, ": row must be non-negative, got ", row);
  TORCH_CHECK(col >= 0, op, ": col must be non-negative, got ", col);
  const c10::ScalarType dt = dtype.value_or(c10::kLong);
  TORCH_CHECK(dt == c10::kLong || dt == c10::kInt, op, ": dtype must be int32 or int64, got ", dt);
  const Tensor ones = at::ones({row, col}, at::TensorOptions().dtype(c10::kBool).device(device.value_or(kNpu)));
  const Tensor mask = upper ? at::triu(ones, offset) : at::tril(ones, offset);
  return at::nonzero(mask).t().to(dt);
}
Tensor tril_indices_npu(int64_t row, int64_t col, int64_t offset, std::optional<c10::ScalarType> dtype,
                        std::optional<c10::Layout>, std::optional<c10::Device> device, std::optional<bool>) {
  return TriIndices("tril_indices", row, col, offset, false, dtype, device);
}
Tensor triu_indices_npu(int64_t row, int64_t col, int64_t offset, std::optional<c10::ScalarType> dtype,
                        std::optional<c10::Layout>, std::optional<c10::Device> device, std::optional<bool>) {
  return TriIndices("triu_indices", row, col, offset, true, dtype, device);
}

}  // namespace
}  // namespace torch_ops_nn

NPU_ATEN_LIBRARY_IMPL(m) {
  using namespace torch_ops_nn;
  m.impl("eye.m_out", TORCH_FN(eye_m_out));
  m.impl("eye.out", TORCH_FN(eye_out));
  m.impl("bernoulli_.Tensor", TORCH_FN(bernoulli_tensor_));
  m.impl("exponential_", TORCH_FN(exponential_));
  m.impl("cauchy_", TORCH_FN(cauchy_));
  m.impl("log_normal_", TORCH_FN(log_normal_));
  m.impl("geometric_", TORCH_FN(geometric_));
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
  m.impl("logaddexp2.out", TORCH_FN(logaddexp2_out));
  m.impl("fmax.out", TORCH_FN(fmax_out));
  m.impl("fmin.out", TORCH_FN(fmin_out));
  m.impl("round.decimals", TORCH_FN(round_decimals));
  m.impl("round.decimals_out", TORCH_FN(round_decimals_out));
  m.impl("round_.decimals", TORCH_FN(round_decimals_));
  m.impl("addbmm", TORCH_FN(addbmm_npu));
  m.impl("addbmm.out", TORCH_FN(addbmm_out));
  m.impl("addbmm_", TORCH_FN(addbmm_npu_));
  m.impl("signbit.out", TORCH_FN(signbit_out));
  m.impl("heaviside.out", TORCH_FN(heaviside_out));
  m.impl("log10.out", TORCH_FN(log10_out));
  m.impl("logit.out", TORCH_FN(logit_out));
  m.impl("logit", TORCH_FN(logit_npu));
  m.impl("logit_", TORCH_FN(logit_npu_));
  m.impl("logit_backward.grad_input", TORCH_FN(logit_backward_out));
  m.impl("cosh.out", TORCH_FN(cosh_out));
  m.impl("asinh.out", TORCH_FN(asinh_out));
  m.impl("acosh.out", TORCH_FN(acosh_out));
  m.impl("atanh.out", TORCH_FN(atanh_out));
  m.impl("exp2.out", TORCH_FN(exp2_out));
  m.impl("atan.out", TORCH_FN(atan_out));
  m.impl("asin.out", TORCH_FN(asin_out));
  m.impl("acos.out", TORCH_FN(acos_out));
  m.impl("atan2.out", TORCH_FN(atan2_out));
  m.impl("copysign.out", TORCH_FN(copysign_out));
  m.impl("sinc.out", TORCH_FN(sinc_out));
  m.impl("special_xlog1py.out", TORCH_FN(xlog1py_out));
  m.impl("special_entr.out", TORCH_FN(entr_out));
  m.impl("trace", TORCH_FN(trace_npu));
  m.impl("linalg_cross.out", TORCH_FN(linalg_cross_out));
  m.impl("isin.Tensor_Tensor_out", TORCH_FN(isin_out));
  m.impl("tril_indices", TORCH_FN(tril_indices_npu));
  m.impl("triu_indices", TORCH_FN(triu_indices_npu));
  m.impl("polygamma.out", TORCH_FN(polygamma_out));
  m.impl("_cummax_helper", TORCH_FN(cummax_helper));
  m.impl("_cummin_helper", TORCH_FN(cummin_helper));
  m.impl("_logcumsumexp", TORCH_FN(logcumsumexp_npu));
  m.impl("_logcumsumexp.out", TORCH_FN(logcumsumexp_out));
  m.impl("frexp.Tensor_out", TORCH_FN(frexp_out));
  m.impl("nonzero_static", TORCH_FN(nonzero_static_npu));
}
