// Sampling and creation ops composed of the native kernels (they took the CPU fallback):
//   normal(mean, std) with tensor mean and/or std : normal_(0, 1) on the device, * std + mean
//   randperm(n)                                   : argsort of 48-bit random keys (two stable sorts
//                                                   of 24-bit uniform keys), so ties never bias it
//   multinomial                                   : without replacement, the top num_samples of
//                                                   p / Exp(1) (the exponential race: the same law as
//                                                   drawing one by one); with replacement, inverse CDF
//                                                   (count of cumsum(p) < u, u in (0, sum])
//   linspace (float dtypes)                       : PyTorch's two-sided formula (start + i * step in
//                                                   the first half, end - (steps - 1 - i) * step in the
//                                                   second), in float; integer dtypes keep the fallback
// The random numbers come from the npu generator (its Philox stream), so results differ from the
// CPU's as they do between any two devices; the tests check the laws, the shapes and the errors.
#include <ATen/ExpandUtils.h>
#include <ATen/TensorOperators.h>
#include <ATen/core/Tensor.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/arange.h>
#include <ATen/ops/cat.h>
#include <ATen/ops/empty_like.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/log.h>
#include <ATen/ops/sort.h>
#include <ATen/ops/stack.h>
#include <ATen/ops/topk.h>
#include <ATen/ops/where.h>
#include <torch/library.h>

#include <cmath>

#include "aten/op_common.h"
#include "core/cpu_fallback.h"

namespace torch_ops_nn {
namespace {

using at::Tensor;
using Gen = std::optional<at::Generator>;

// ---- normal with tensor parameters ----------------------------------------------------------------

void CheckStdTensor(const char* op, const Tensor& std) {
  CheckNoneSet(std < 0, c10::str(op, ": expects all elements of std >= 0.0"));
}

Tensor NormalTensor(const char* op, const Tensor* mean_t, double mean_s, const Tensor* std_t, double std_s,
                    const Gen& gen) {
  const Tensor& ref = mean_t ? *mean_t : *std_t;
  CheckSameNpuDevice(op, {{"mean", mean_t ? mean_t : &ref}, {"std", std_t ? std_t : &ref}});
  if (mean_t) CheckFloatDtype(op, "mean", *mean_t);
  if (std_t) CheckFloatDtype(op, "std", *std_t);
  TORCH_CHECK(std_t || std_s >= 0.0, op, ": expects std >= 0.0, but found std ", std_s);
  if (std_t) CheckStdTensor(op, *std_t);
  std::vector<int64_t> shape = ref.sizes().vec();
  c10::ScalarType dt = ref.scalar_type();
  if (mean_t && std_t) {
    shape = at::infer_size(mean_t->sizes(), std_t->sizes());
    dt = c10::promoteTypes(mean_t->scalar_type(), std_t->scalar_type());
  }
  Tensor out = at::empty(shape, ref.options().dtype(dt));
  out.normal_(0.0, 1.0, gen);
  if (std_t) out.mul_(*std_t);
  else if (std_s != 1.0) out.mul_(std_s);
  if (mean_t) out.add_(*mean_t);
  else if (mean_s != 0.0) out.add_(mean_s);
  return out;
}

Tensor normal_tensor_float(const Tensor& mean, double std, Gen gen) {
  return NormalTensor("normal", &mean, 0.0, nullptr, std, gen);
}
Tensor normal_float_tensor(double mean, const Tensor& std, Gen gen) {
  return NormalTensor("normal", nullptr, mean, &std, 1.0, gen);
}
Tensor normal_tensor_tensor(const Tensor& mean, const Tensor& std, Gen gen) {
  return NormalTensor("normal", &mean, 0.0, &std, 1.0, gen);
}
Tensor& normal_tensor_float_out(const Tensor& mean, double std, Gen gen, Tensor& out) {
  return CopyToOut("normal", normal_tensor_float(mean, std, gen), out);
}
Tensor& normal_float_tensor_out(double mean, const Tensor& std, Gen gen, Tensor& out) {
  return CopyToOut("normal", normal_float_tensor(mean, std, gen), out);
}
Tensor& normal_tensor_tensor_out(const Tensor& mean, const Tensor& std, Gen gen, Tensor& out) {
  return CopyToOut("normal", normal_tensor_tensor(mean, std, gen), out);
}

// ---- randperm ---------------------------------------------------------------------------------------

Tensor& randperm_out(c10::SymInt n_sym, Gen gen, Tensor& out) {
  const char* op = "randperm";
  const int64_t n = n_sym.expect_int();
  TORCH_CHECK(n >= 0, op, ": n must be non-negative, got ", n);
  CheckSameNpuDevice(op, {{"out", &out}});
  TORCH_CHECK(n <= (int64_t(1) << 24) || !c10::isFloatingType(out.scalar_type()) ||
                  out.scalar_type() == c10::kDouble,
              op, ": n=", n, " is too large for result dtype ", out.scalar_type());
  at::native::resize_output(out, {n});
  if (n == 0) return out;
  // Two independent uniform keys (24 random bits each): stable-sort by the minor key, then by the
  // major one; ties of the 48-bit key are ~n^2 / 2^49 likely.
  Tensor u = at::empty({2, n}, out.options().dtype(c10::kFloat));
  u.uniform_(0.0, 1.0, gen);
  Tensor p1 = std::get<1>(at::sort(u[1], /*stable=*/true, 0, false));
  Tensor p2 = std::get<1>(at::sort(u[0].index_select(0, p1), /*stable=*/true, 0, false));
  return out.copy_(p1.index_select(0, p2));
}

// ---- multinomial ------------------------------------------------------------------------------------

Tensor multinomial_npu(const Tensor& self, c10::SymInt num_sym, bool replacement, Gen gen) {
  const char* op = "multinomial";
  CheckSameNpuDevice(op, {{"self", &self}});
  const int64_t num = num_sym.expect_int();
  TORCH_CHECK(self.dim() == 1 || self.dim() == 2, op, ": prob_dist must be 1 or 2 dim, got ", self.dim(), "-D");
  TORCH_CHECK(c10::isFloatingType(self.scalar_type()), op,
              ": only supports floating-point dtypes for input, got: ", self.scalar_type());
  CheckFloatDtype(op, "self", self);
  TORCH_CHECK(num > 0, op, ": cannot sample n_sample <= 0 samples (got ", num, ")");
  const int64_t cats = self.size(-1);
  TORCH_CHECK(cats > 0, op, ": the distribution has no categories");
  TORCH_CHECK(replacement || num <= cats, op, ": cannot sample n_sample > prob_dist.size(-1) samples without ",
              "replacement (", num, " > ", cats, ")");
  TORCH_CHECK(cats <= (int64_t(1) << 24), op, ": number of categories cannot exceed 2^24, got ", cats);
  const Tensor p = (self.dim() == 1 ? self.unsqueeze(0) : self).to(c10::kFloat);
  // The distribution's checks: one read back eagerly, device checks in npu graphs.
  CheckNoneSet({{~p.isfinite() | (p < 0), c10::str(op, ": probability tensor contains either `inf`, `nan` or element < 0")},
                {p.sum(-1) <= 0, c10::str(op, ": invalid multinomial distribution (sum of probabilities <= 0)")},
                {replacement ? Tensor() : (p > 0).sum(-1) < num,
                 c10::str(op, ": invalid multinomial distribution (with replacement=False, not enough ",
                          "non-negative category to sample)")}});
  Tensor idx;
  if (!replacement) {
    // Exponential race: key = p / E with E ~ Exp(1) = -log(U); the num largest keys, largest first.
    Tensor e = at::empty_like(p);
    e.uniform_(0.0, 1.0, gen);
    Tensor key = p / at::log(e).neg_();
    idx = std::get<1>(at::topk(key, num, -1, /*largest=*/true, /*sorted=*/true));
  } else {
    const Tensor cdf = p.cumsum(-1);
    const Tensor total = cdf.narrow(-1, cats - 1, 1);
    Tensor u = at::empty({p.size(0), num}, p.options());
    u.uniform_(0.0, 1.0, gen);
    u = (1.0 - u) * total;  // (0, total]
    // Count of cdf < u per sample, in chunks of samples that keep the compare under ~64M entries.
    const int64_t rows = p.size(0), chunk = std::max<int64_t>(1, (int64_t(1) << 26) / std::max<int64_t>(1, rows * cats));
    std::vector<Tensor> parts;
    for (int64_t s = 0; s < num; s += chunk) {
      const int64_t k = std::min(chunk, num - s);
      parts.push_back((cdf.unsqueeze(1) < u.narrow(1, s, k).unsqueeze(2)).sum(-1).clamp_max_(cats - 1));
    }
    idx = parts.size() == 1 ? parts[0] : at::cat(parts, 1);
  }
  return self.dim() == 1 ? idx.squeeze(0) : idx;
}

Tensor& multinomial_out(const Tensor& self, c10::SymInt num, bool replacement, Gen gen, Tensor& out) {
  return CopyToOutExact("multinomial", multinomial_npu(self, num, replacement, gen), out);
}

// ---- linspace ---------------------------------------------------------------------------------------

Tensor& linspace_out(const c10::Scalar& start, const c10::Scalar& end, int64_t steps, Tensor& out) {
  const char* op = "linspace";
  TORCH_CHECK(steps >= 0, op, ": number of steps must be non-negative, got ", steps);
  CheckSameNpuDevice(op, {{"out", &out}});
  const auto dt = out.scalar_type();
  if (!(dt == c10::kFloat || dt == c10::kHalf || dt == c10::kBFloat16)) {
    CallCpuFallback("aten::linspace", "out", {start, end, steps, out});
    return out;
  }
  at::native::resize_output(out, {steps});
  if (steps == 0) return out;
  const float a = start.to<float>(), b = end.to<float>();
  if (steps == 1) return out.fill_(start);
  const float step = (b - a) / static_cast<float>(steps - 1);
  const int64_t half = steps / 2;
  const Tensor i = at::arange(steps, out.options().dtype(c10::kFloat));
  const Tensor lo = i * step + a;
  const Tensor hi = (i - static_cast<float>(steps - 1)) * step + b;  // end - (steps - 1 - i) * step
  return out.copy_(at::where(i < static_cast<float>(half), lo, hi));
}

}  // namespace
}  // namespace torch_ops_nn

NPU_ATEN_LIBRARY_IMPL(m) {
  using namespace torch_ops_nn;
  m.impl("normal.Tensor_float", TORCH_FN(normal_tensor_float));
  m.impl("normal.float_Tensor", TORCH_FN(normal_float_tensor));
  m.impl("normal.Tensor_Tensor", TORCH_FN(normal_tensor_tensor));
  m.impl("normal.Tensor_float_out", TORCH_FN(normal_tensor_float_out));
  m.impl("normal.float_Tensor_out", TORCH_FN(normal_float_tensor_out));
  m.impl("normal.Tensor_Tensor_out", TORCH_FN(normal_tensor_tensor_out));
  m.impl("randperm.generator_out", TORCH_FN(randperm_out));
  m.impl("multinomial", TORCH_FN(multinomial_npu));
  m.impl("multinomial.out", TORCH_FN(multinomial_out));
  m.impl("linspace.out", TORCH_FN(linspace_out));
}
