// Ops that are another native op on a reshaped view (they took the CPU fallback):
//   upsample_linear1d / upsample_nearest1d / _upsample_nearest_exact1d (+ backward): the 2-D op on
//     [N, C, 1, L] (a height of 1 maps to itself under every rule), so F.interpolate on 3-D inputs
//     runs the same kernels and index rules as on 4-D ones
//   adaptive_max_pool2d (+ backward) when the output divides the input: max_pool2d_with_indices
//     with kernel = stride = input / output (the same regions, the same flat H * W indices, and
//     the first maximum on ties); other sizes (overlapping regions of varying size) take the CPU
//     fallback
//   _cdist_forward (torch.cdist's direct path; large p = 2 inputs already take the mm form): the norm
//     of the broadcast differences [.., P, R, M] over M; _cdist_backward by PyTorch's per-p rule
//     (p = 2: diff / d, 0 where d = 0; p = 1: sign; inf: sign where |diff| = d; other p:
//     diff |diff|^(p-2) / d^(p-1), 0 where d or diff is 0), summed over the other set
//   repeat_interleave(repeats): output position j belongs to the input i whose running total of
//     repeats first exceeds j, one searchsorted over the cumsum (the total read back once, or
//     output_size); repeats are checked non-negative and 1-D
#include <ATen/TensorOperators.h>
#include <ATen/core/Tensor.h>
#include <ATen/ops/abs.h>
#include <ATen/ops/arange.h>
#include <ATen/ops/linalg_vector_norm.h>
#include <ATen/ops/pow.h>
#include <ATen/ops/sign.h>
#include <ATen/ops/where.h>
#include <ATen/ops/zeros_like.h>
#include <ATen/ops/cumsum.h>
#include <ATen/ops/max_pool2d_with_indices.h>
#include <ATen/ops/max_pool2d_with_indices_backward.h>
#include <ATen/ops/searchsorted.h>
#include <ATen/ops/upsample_bilinear2d.h>
#include <ATen/ops/upsample_bilinear2d_backward.h>
#include <ATen/ops/upsample_nearest2d.h>
#include <ATen/ops/upsample_nearest2d_backward.h>
#include <ATen/ops/_upsample_nearest_exact2d.h>
#include <ATen/ops/_upsample_nearest_exact2d_backward.h>
#include <torch/library.h>

#include <cmath>
#include <optional>
#include <tuple>

#include <ATen/ops/upsample_nearest3d.h>

#include "aten/op_common.h"
#include "core/cpu_fallback.h"

namespace torch_ops_nn {
namespace {

using at::Tensor;

void Check1d(const char* op, const Tensor& x, c10::SymIntArrayRef out) {
  CheckSameNpuDevice(op, {{"self", &x}});
  TORCH_CHECK(x.dim() == 3, op, ": expected a 3-D input [N, C, L], got ", x.sizes());
  TORCH_CHECK(out.size() == 1, op, ": output_size must have 1 element, got ", out.size());
}
std::vector<c10::SymInt> To2d(c10::SymIntArrayRef s) { return {c10::SymInt(1), s[0]}; }
std::vector<c10::SymInt> In2d(c10::SymIntArrayRef s) { return {s[0], s[1], c10::SymInt(1), s[2]}; }

Tensor upsample_linear1d_npu(const Tensor& self, c10::SymIntArrayRef out, bool align_corners,
                             std::optional<double> scales) {
  Check1d("upsample_linear1d", self, out);
  return at::upsample_bilinear2d_symint(self.unsqueeze(2), To2d(out), align_corners, std::nullopt, scales).squeeze(2);
}
Tensor upsample_linear1d_backward_npu(const Tensor& grad, c10::SymIntArrayRef out, c10::SymIntArrayRef in,
                                      bool align_corners, std::optional<double> scales) {
  return at::upsample_bilinear2d_backward_symint(grad.unsqueeze(2), To2d(out), In2d(in), align_corners, std::nullopt,
                                                 scales)
      .squeeze(2);
}
Tensor upsample_nearest1d_npu(const Tensor& self, c10::SymIntArrayRef out, std::optional<double> scales) {
  Check1d("upsample_nearest1d", self, out);
  // Through the 3-D op: the CPU's 1-D nearest forward, like its 3-D one, applies a scale even when the
  // sizes are equal (its 2-D one copies); the backward copies there in every rank (see upsample.cpp).
  return at::upsample_nearest3d_symint(self.unsqueeze(2).unsqueeze(2), {c10::SymInt(1), c10::SymInt(1), out[0]},
                                       std::nullopt, std::nullopt, scales)
      .squeeze(2)
      .squeeze(2);
}
Tensor upsample_nearest1d_backward_npu(const Tensor& grad, c10::SymIntArrayRef out, c10::SymIntArrayRef in,
                                       std::optional<double> scales) {
  return at::upsample_nearest2d_backward_symint(grad.unsqueeze(2), To2d(out), In2d(in), std::nullopt, scales)
      .squeeze(2);
}
Tensor upsample_nearest_exact1d_npu(const Tensor& self, c10::SymIntArrayRef out, std::optional<double> scales) {
  Check1d("_upsample_nearest_exact1d", self, out);
  return at::_upsample_nearest_exact2d_symint(self.unsqueeze(2), To2d(out), std::nullopt, scales).squeeze(2);
}
Tensor upsample_nearest_exact1d_backward_npu(const Tensor& grad, c10::SymIntArrayRef out, c10::SymIntArrayRef in,
                                             std::optional<double> scales) {
  return at::_upsample_nearest_exact2d_backward_symint(grad.unsqueeze(2), To2d(out), In2d(in), std::nullopt, scales)
      .squeeze(2);
}

// The pooling window when output_size divides the input (else nullopt).
std::optional<std::array<int64_t, 2>> AdaptiveWindow(const Tensor& x, c10::IntArrayRef out) {
  if (out.size() != 2 || x.dim() < 3 || out[0] <= 0 || out[1] <= 0) return std::nullopt;
  const int64_t h = x.size(-2), w = x.size(-1);
  if (h % out[0] != 0 || w % out[1] != 0 || h == 0 || w == 0) return std::nullopt;
  return std::array<int64_t, 2>{h / out[0], w / out[1]};
}

std::tuple<Tensor, Tensor> adaptive_max_pool2d_npu(const Tensor& self, c10::IntArrayRef output_size) {
  CheckSameNpuDevice("adaptive_max_pool2d", {{"self", &self}});
  if (auto k = AdaptiveWindow(self, output_size)) {
    const std::vector<int64_t> kk{(*k)[0], (*k)[1]};
    return at::max_pool2d_with_indices(self, kk, kk, {0, 0}, {1, 1}, false);
  }
  auto r = CallCpuFallback("aten::adaptive_max_pool2d", "", {self, output_size.vec()});
  return {r[0].toTensor(), r[1].toTensor()};
}
Tensor adaptive_max_pool2d_backward_npu(const Tensor& grad, const Tensor& self, const Tensor& indices) {
  CheckSameNpuDevice("adaptive_max_pool2d_backward", {{"grad_output", &grad}, {"self", &self}, {"indices", &indices}});
  const std::vector<int64_t> out{grad.size(-2), grad.size(-1)};
  if (auto k = AdaptiveWindow(self, out)) {
    const std::vector<int64_t> kk{(*k)[0], (*k)[1]};
    return at::max_pool2d_with_indices_backward(grad, self, kk, kk, {0, 0}, {1, 1}, false, indices);
  }
  return CallCpuFallback("aten::adaptive_max_pool2d_backward", "", {grad, self, indices})[0].toTensor();
}

void CheckCdist(const char* op, const Tensor& x1, const Tensor& x2, double p) {
  CheckSameNpuDevice(op, {{"x1", &x1}, {"x2", &x2}});
  TORCH_CHECK(x1.dim() >= 2 && x2.dim() >= 2, op, ": x1 and x2 must have at least 2 dimensions, got ", x1.sizes(),
              " and ", x2.sizes());
  TORCH_CHECK(x1.size(-1) == x2.size(-1), op, ": X1 and X2 must have the same number of columns. X1: ",
              x1.size(-1), " X2: ", x2.size(-1));
  TORCH_CHECK(p >= 0, op, " only supports non-negative p values, got ", p);
}
Tensor Diffs(const Tensor& x1, const Tensor& x2) { return x1.unsqueeze(-2) - x2.unsqueeze(-3); }  // [.., P, R, M]

Tensor cdist_forward_npu(const Tensor& x1, const Tensor& x2, double p, std::optional<int64_t> /*compute_mode*/) {
  CheckCdist("cdist", x1, x2, p);
  CheckFloatDtype("cdist", "x1", x1);
  return at::linalg_vector_norm(Diffs(x1, x2), p, {-1}, false, std::nullopt);
}
Tensor cdist_backward_npu(const Tensor& grad, const Tensor& x1, const Tensor& x2, double p, const Tensor& cdist) {
  CheckCdist("_cdist_backward", x1, x2, p);
  if (p == 0 || x1.numel() == 0 || x2.numel() == 0) return at::zeros_like(x1);
  const Tensor diff = Diffs(x1, x2), d = cdist.unsqueeze(-1), g = grad.unsqueeze(-1);
  Tensor r;
  if (p == 1) {
    r = at::sign(diff);
  } else if (p == 2) {
    r = at::where(d == 0, 0.0, diff / d);
  } else if (std::isinf(p)) {
    r = at::sign(diff) * (at::abs(diff) == d);
  } else {
    r = diff * at::pow(at::abs(diff), p - 2) / at::pow(d, p - 1);
    r = at::where(at::logical_or(d == 0, diff == 0), 0.0, r);
  }
  return (r * g).sum(-2);
}

Tensor repeat_interleave_npu(const Tensor& repeats, std::optional<c10::SymInt> output_size) {
  CheckSameNpuDevice("repeat_interleave", {{"repeats", &repeats}});
  TORCH_CHECK(repeats.dim() == 1, "repeat_interleave: repeats must be 0-dim or 1-dim tensor, got ", repeats.dim(),
              " dims");
  TORCH_CHECK_TYPE(repeats.scalar_type() == c10::kLong || repeats.scalar_type() == c10::kInt,
                   "repeat_interleave: repeats has to be Long or Int tensor, got ", repeats.scalar_type());
  const c10::DeviceIndex dev = repeats.device().index();
  if (repeats.numel() == 0) return NpuEmpty({0}, repeats.scalar_type(), dev);
  TORCH_CHECK(repeats.min().item<int64_t>() >= 0, "repeat_interleave: repeats can not be negative");
  const Tensor ends = at::cumsum(repeats, 0, c10::kLong);  // running totals
  const int64_t total = output_size ? output_size->expect_int() : ends[-1].item<int64_t>();
  if (output_size)
    TORCH_CHECK(total == ends[-1].item<int64_t>(), "repeat_interleave: allocated size does not match required size");
  const Tensor pos = at::arange(total, repeats.options().dtype(c10::kLong));
  return at::searchsorted(ends, pos, /*out_int32=*/false, /*right=*/true).to(repeats.scalar_type());
}

}  // namespace
}  // namespace torch_ops_nn

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("upsample_linear1d", TORCH_FN(torch_ops_nn::upsample_linear1d_npu));
  m.impl("upsample_linear1d_backward", TORCH_FN(torch_ops_nn::upsample_linear1d_backward_npu));
  m.impl("upsample_nearest1d", TORCH_FN(torch_ops_nn::upsample_nearest1d_npu));
  m.impl("upsample_nearest1d_backward", TORCH_FN(torch_ops_nn::upsample_nearest1d_backward_npu));
  m.impl("_upsample_nearest_exact1d", TORCH_FN(torch_ops_nn::upsample_nearest_exact1d_npu));
  m.impl("_upsample_nearest_exact1d_backward", TORCH_FN(torch_ops_nn::upsample_nearest_exact1d_backward_npu));
  m.impl("adaptive_max_pool2d", TORCH_FN(torch_ops_nn::adaptive_max_pool2d_npu));
  m.impl("adaptive_max_pool2d_backward", TORCH_FN(torch_ops_nn::adaptive_max_pool2d_backward_npu));
  m.impl("repeat_interleave.Tensor", TORCH_FN(torch_ops_nn::repeat_interleave_npu));
  m.impl("_cdist_forward", TORCH_FN(torch_ops_nn::cdist_forward_npu));
  m.impl("_cdist_backward", TORCH_FN(torch_ops_nn::cdist_backward_npu));
}
