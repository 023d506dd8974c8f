// Ops that are another native op on a reshaped view (they took the CPU fallback):
//   upsample_linear1d / upsample_nearest1d / _upsample_nearest_exact1d (+ backward): the 2-D op on
//     [N, C, 1, L] (a height of 1 maps to itself under every rule), so F.interpolate on 3-D inputs
//     runs the same kernels and index rules as on 4-D ones
//   adaptive_max_pool2d (+ backward): when the output divides the input, max_pool2d_with_indices
//     with kernel = stride = input / output (the same regions, the same flat H * W indices, and
//     the first maximum on ties); other sizes (overlapping regions of varying size) by a separable
//     composition (AdaptiveMaxGeneral), the backward a scatter_add at the indices
//   channel_shuffle (nn.ChannelShuffle): a transposed view copied
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

// Windows that do not tile the input: [floor(o * in / out), ceil((o + 1) * in / out)) per dim, as the
// CPU. The box maximum is separable: along W each row keeps the first maximum of its window (taps past a
// narrower window repeat its last column, which never wins a strict compare), then along H the first
// row holding the window's maximum; NaN wins every compare, so the last NaN in row-major order is kept,
// as the CPU's scan keeps it. Indices are h * W + w.
std::tuple<Tensor, Tensor> AdaptiveMaxGeneral(const Tensor& self, c10::IntArrayRef output_size) {
  const char* op = "adaptive_max_pool2d";
  TORCH_CHECK(output_size.size() == 2, op, ": output_size must be 2, got ", output_size.size());
  TORCH_CHECK(self.dim() == 3 || self.dim() == 4, op, ": expected a 3-D or 4-D input, got ", self.sizes());
  CheckNonBatchDimsNotEmpty(op, "input", self);
  CheckFloatDtype(op, "self", self);
  const int64_t H = self.size(-2), W = self.size(-1), oh = output_size[0], ow = output_size[1];
  TORCH_CHECK(oh >= 0 && ow >= 0, op, ": elements of output_size must be greater than or equal to 0, got ",
              output_size);
  if (oh == 0 || ow == 0) {  // an empty result, as on the CPU
    std::vector<int64_t> sizes(self.sizes().begin(), self.sizes().end() - 2);
    sizes.push_back(oh);
    sizes.push_back(ow);
    return {at::empty(sizes, self.options()), at::empty(sizes, self.options().dtype(c10::kLong))};
  }
  auto taps = [&](int64_t in, int64_t out, std::vector<Tensor>* idx) {
    std::vector<int64_t> st(out), en(out);
    int64_t k = 0;
    for (int64_t o = 0; o < out; ++o) {
      st[o] = o * in / out;
      en[o] = ((o + 1) * in + out - 1) / out;
      k = std::max(k, en[o] - st[o]);
    }
    for (int64_t t = 0; t < k; ++t) {
      Tensor i = at::empty({out}, at::TensorOptions().dtype(c10::kLong));
      int64_t* p = i.data_ptr<int64_t>();
      for (int64_t o = 0; o < out; ++o) p[o] = std::min(st[o] + t, en[o] - 1);
      idx->push_back(i.to(self.device(), /*non_blocking=*/true));  // host table: the copy holds it
    }
  };
  std::vector<Tensor> cols, rows;
  taps(W, ow, &cols);
  taps(H, oh, &rows);
  Tensor best, arg;  // along W: [.., H, ow] values and column indices
  for (size_t t = 0; t < cols.size(); ++t) {
    Tensor v = at::index_select(self, -1, cols[t]);
    Tensor c = cols[t].expand_as(v);
    if (t == 0) {
      best = v, arg = c;
      continue;
    }
    Tensor take = (v > best).logical_or_(v.isnan());
    best = at::where(take, v, best), arg = at::where(take, c, arg);
  }
  Tensor out, idx;  // along H: [.., oh, ow]
  for (size_t t = 0; t < rows.size(); ++t) {
    Tensor v = at::index_select(best, -2, rows[t]);
    Tensor i = at::index_select(arg, -2, rows[t]).add_(rows[t].view({-1, 1}) * W);
    if (t == 0) {
      out = v, idx = i;
      continue;
    }
    Tensor take = (v > out).logical_or_(v.isnan());
    out = at::where(take, v, out), idx = at::where(take, i, idx);
  }
  return {out.contiguous(), idx.contiguous()};
}

std::tuple<Tensor, Tensor> adaptive_max_pool2d_npu(const Tensor& self, c10::IntArrayRef output_size) {
  CheckSameNpuDevice("adaptive_max_pool2d", {{"self", &self}});
  // (max_pool2d refuses an empty batch of a 3-D input, (0, H, W), which adaptive pooling accepts)
  if (auto k = self.numel() > 0 ? AdaptiveWindow(self, output_size) : std::nullopt) {
    const std::vector<int64_t> kk{(*k)[0], (*k)[1]};
    return at::max_pool2d_with_indices(self, kk, kk, {0, 0}, {1, 1}, false);
  }
  return AdaptiveMaxGeneral(self, output_size);
}
Tensor adaptive_max_pool2d_backward_npu(const Tensor& grad, const Tensor& self, const Tensor& indices) {
  CheckSameNpuDevice("adaptive_max_pool2d_backward", {{"grad_output", &grad}, {"self", &self}, {"indices", &indices}});
  CheckNonBatchDimsNotEmpty("adaptive_max_pool2d_backward", "grad_output", grad);
  const std::vector<int64_t> out{grad.size(-2), grad.size(-1)};
  if (auto k = AdaptiveWindow(self, out)) {
    const std::vector<int64_t> kk{(*k)[0], (*k)[1]};
    return at::max_pool2d_with_indices_backward(grad, self, kk, kk, {0, 0}, {1, 1}, false, indices);
  }
  // every output's gradient lands on its max (windows may overlap: scatter_add adds, as on the CPU)
  TORCH_CHECK(grad.sizes() == indices.sizes(), "adaptive_max_pool2d_backward: grad_output of shape ", grad.sizes(),
              " and indices of shape ", indices.sizes(), " differ");
  const int64_t hw = self.size(-2) * self.size(-1), planes = hw == 0 ? 0 : self.numel() / hw;
  Tensor gi = at::zeros({planes, hw}, grad.options());
  if (grad.numel() != 0) gi.scatter_add_(1, indices.reshape({planes, -1}), grad.reshape({planes, -1}));
  return gi.view(self.sizes());
}

// nn.ChannelShuffle: [N, g, C / g, ...] -> [N, C / g, g, ...], one device copy of a transposed view.
Tensor channel_shuffle_npu(const Tensor& self, c10::SymInt groups_sym) {
  const int64_t groups = groups_sym.expect_int();
  CheckSameNpuDevice("channel_shuffle", {{"self", &self}});
  TORCH_CHECK(self.dim() > 2, "channel_shuffle expects input to have at least 3 dimensions, but got input with sizes ",
              self.sizes());
  TORCH_CHECK(groups > 0, "Number of groups to divide channels in must be positive. Value of groups:", groups);
  const int64_t c = self.size(1);
  TORCH_CHECK(c % groups == 0, "Number of channels must be divisible by groups. Got ", c, " channels and ", groups,
              " groups.");
  std::vector<int64_t> split = self.sizes().vec();
  split[1] = c / groups;
  split.insert(split.begin() + 1, groups);
  Tensor r = self.reshape(split).transpose(1, 2).contiguous().view(self.sizes());
  return self.dim() == 4 ? r.contiguous(self.suggest_memory_format()) : r;  // the input's layout, as the CPU
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
  CheckFloatDtype("cdist", "x2", x2);
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

NPU_ATEN_LIBRARY_IMPL(m) {
  m.impl("upsample_linear1d", TORCH_FN(torch_ops_nn::upsample_linear1d_npu));
  m.impl("upsample_linear1d_backward", TORCH_FN(torch_ops_nn::upsample_linear1d_backward_npu));
  m.impl("upsample_nearest1d", TORCH_FN(torch_ops_nn::upsample_nearest1d_npu));
  m.impl("upsample_nearest1d_backward", TORCH_FN(torch_ops_nn::upsample_nearest1d_backward_npu));
  m.impl("_upsample_nearest_exact1d", TORCH_FN(torch_ops_nn::upsample_nearest_exact1d_npu));
  m.impl("_upsample_nearest_exact1d_backward", TORCH_FN(torch_ops_nn::upsample_nearest_exact1d_backward_npu));
  m.impl("adaptive_max_pool2d", TORCH_FN(torch_ops_nn::adaptive_max_pool2d_npu));
  m.impl("adaptive_max_pool2d_backward", TORCH_FN(torch_ops_nn::adaptive_max_pool2d_backward_npu));
  m.impl("channel_shuffle", TORCH_FN(torch_ops_nn::channel_shuffle_npu));
  m.impl("repeat_interleave.Tensor", TORCH_FN(torch_ops_nn::repeat_interleave_npu));
  m.impl("_cdist_forward", TORCH_FN(torch_ops_nn::cdist_forward_npu));
  m.impl("_cdist_backward", TORCH_FN(torch_ops_nn::cdist_backward_npu));
}
