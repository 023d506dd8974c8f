// quantile / nanquantile on npu, composed of the native ops (sort, gather, lerp, where). PyTorch's
// own composite computes the ranks in float64, which the npu does not compute, so these are
// registered for the npu and its autograd key (the ops used are differentiable: the gradient flows
// as through PyTorch's composite).
//
// Ranks: q * (k - 1), k = the slice's size (quantile; a slice holding NaN gives NaN) or its count of
// non-NaN values (nanquantile; NaN sorts last; an all-NaN slice gives NaN). The ranks, neighbour
// indices and weights are computed on the host in double, as the CPU computes them (a float32 rank
// can fall on the other side of an integer or a half: lower / higher / nearest would pick another
// value), from q (read back when a tensor) and, for nanquantile, the per-slice counts (read back).
// Interpolation: linear, lower, higher, midpoint, nearest (round half to even), as PyTorch.
#include <ATen/TensorOperators.h>
#include <ATen/core/Tensor.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/gather.h>
#include <ATen/ops/isnan.h>
#include <ATen/ops/lerp.h>
#include <ATen/ops/sort.h>
#include <ATen/ops/where.h>
#include <torch/library.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "aten/op_common.h"

namespace torch_ops_nn {
namespace {

using at::Tensor;

enum class Interp { kLinear, kLower, kHigher, kMidpoint, kNearest };

Interp ParseInterp(const char* op, c10::string_view s) {
  if (s == "linear") return Interp::kLinear;
  if (s == "lower") return Interp::kLower;
  if (s == "higher") return Interp::kHigher;
  if (s == "midpoint") return Interp::kMidpoint;
  if (s == "nearest") return Interp::kNearest;
  TORCH_CHECK(false, op, "() interpolation must be one of linear, lower, higher, midpoint or nearest. Got ",
              std::string(s));
}

// q: a host scalar (q_t undefined) or a 0-D / 1-D tensor.
Tensor QuantileImpl(const char* op, const Tensor& self, const Tensor& q_t, double q_s, std::optional<int64_t> dim,
                    bool keepdim, c10::string_view interpolation, bool ignore_nan) {
  CheckSameNpuDevice(op, {{"self", &self}, {"q", q_t.defined() ? &q_t : &self}});
  TORCH_CHECK(self.numel() > 0, op, "() input tensor must be non-empty");
  NPU_CHECK_DTYPE(self.scalar_type() == c10::kFloat, self.scalar_type(), op,
                   "() input tensor must be either float or double dtype (float32 on npu), got ", self.scalar_type());
  const Interp mode = ParseInterp(op, interpolation);
  // q on the host (a tensor q is read back once): the range check and, below, the ranks.
  std::vector<double> qs;
  if (q_t.defined()) {
    TORCH_CHECK(q_t.dim() <= 1, op, "() q must be a scalar or 1D tensor");
    TORCH_CHECK_TYPE(q_t.scalar_type() == self.scalar_type(), op, "() q tensor must be same dtype as the input tensor");
    const Tensor qh = q_t.reshape({-1}).to(c10::kCPU, c10::kDouble);
    qs.assign(qh.data_ptr<double>(), qh.data_ptr<double>() + qh.numel());
    for (double q : qs) TORCH_CHECK(q >= 0 && q <= 1, op, "() q values must be in the range [0, 1]");
  } else {
    TORCH_CHECK(q_s >= 0 && q_s <= 1, op, "() q must be in the range [0, 1] but got ", q_s);
    qs.push_back(q_s);
  }
  // Sorted slices along the last dim: [rows..., n].
  const int64_t d = dim ? WrapDim(op, *dim, std::max<int64_t>(self.dim(), 1)) : 0;
  const Tensor x = dim ? (self.dim() == 0 ? self.view({1}) : self) : self.reshape({-1});
  const Tensor sorted = std::get<0>(at::sort(x, false, d, false)).movedim(d, -1);
  const int64_t n = sorted.size(-1);
  // For nanquantile, each slice's count of non-NaN values k on the host too: the ranks q * (k - 1),
  // their neighbours and the weights are computed there in double, exactly as the CPU computes them.
  const int64_t nq = int64_t(qs.size());
  const int64_t rows = ignore_nan ? sorted.numel() / n : 1;  // 1: every slice has k = n
  std::vector<int64_t> ks(size_t(rows), n);
  if (ignore_nan) {
    const Tensor kh = (~at::isnan(sorted)).sum(-1).reshape({-1}).to(c10::kCPU, c10::kLong);
    ks.assign(kh.data_ptr<int64_t>(), kh.data_ptr<int64_t>() + kh.numel());
  }
  Tensor below_h = at::empty({nq, rows}, at::TensorOptions().dtype(c10::kLong));
  Tensor above_h = at::empty({nq, rows}, at::TensorOptions().dtype(c10::kLong));
  Tensor w_h = at::empty({nq, rows}, at::TensorOptions().dtype(c10::kFloat));
  Tensor empty_h = at::empty({rows}, at::TensorOptions().dtype(c10::kBool));
  int64_t* bp = below_h.data_ptr<int64_t>();
  int64_t* ap = above_h.data_ptr<int64_t>();
  float* wp = w_h.data_ptr<float>();
  bool* ep = empty_h.data_ptr<bool>();
  for (int64_t j = 0; j < nq; ++j) {
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t k = ks[size_t(r)];
      ep[r] = k == 0;  // an all-NaN slice: NaN (any index below)
      const double rank = k > 0 ? qs[size_t(j)] * double(k - 1) : 0.0;
      int64_t lo = int64_t(std::floor(rank)), hi = int64_t(std::ceil(rank));
      double w = rank - double(lo);
      if (mode == Interp::kLower) hi = lo;
      if (mode == Interp::kHigher) lo = hi;
      if (mode == Interp::kNearest) lo = hi = int64_t(std::nearbyint(rank));
      if (mode == Interp::kMidpoint) w = 0.5;
      bp[j * rows + r] = lo;
      ap[j * rows + r] = hi;
      wp[j * rows + r] = float(w);
    }
  }
  // Gather the neighbours of every (q, slice): [Q, rows..., 1].
  std::vector<int64_t> ex{nq};
  for (int64_t i = 0; i < sorted.dim(); ++i) ex.push_back(sorted.size(i));
  const Tensor src = sorted.unsqueeze(0).expand(ex);
  ex.back() = 1;
  std::vector<int64_t> hv{nq};  // the host tables' view: [Q, rows..., 1], or [Q, 1, ..., 1] when uniform
  for (int64_t i = 0; i + 1 < sorted.dim(); ++i) hv.push_back(ignore_nan ? sorted.size(i) : 1);
  hv.push_back(1);
  const c10::Device dev = sorted.device();
  const Tensor vb = at::gather(src, -1, below_h.to(dev, /*non_blocking=*/true).view(hv).expand(ex));
  const Tensor va = at::gather(src, -1, above_h.to(dev, /*non_blocking=*/true).view(hv).expand(ex));
  Tensor result = at::lerp(vb, va, w_h.to(dev, /*non_blocking=*/true).view(hv).expand(ex));
  if (ignore_nan) {
    std::vector<int64_t> rv(hv.begin() + 1, hv.end());
    result = at::where(empty_h.to(dev, /*non_blocking=*/true).view(rv), std::numeric_limits<double>::quiet_NaN(), result);
  }
  if (!q_t.defined() || q_t.dim() == 0) result = result.squeeze(0);
  if (!ignore_nan) {  // a slice holding a NaN (sorted last) gives NaN
    const Tensor nan_last = at::isnan(sorted.narrow(-1, n - 1, 1));  // [rows..., 1]
    const Tensor m = result.dim() > nan_last.dim() ? nan_last.unsqueeze(0) : nan_last;
    result = at::where(m, std::numeric_limits<double>::quiet_NaN(), result);
  }
  // result: [Q?, rows..., 1] -> the reduced shape (keepdim: the reduced dim(s) as 1).
  const bool has_q = q_t.defined() && q_t.dim() == 1;
  Tensor r = result.squeeze(-1);
  if (keepdim) {
    if (dim) {
      if (self.dim() > 0) r = r.unsqueeze(has_q ? d + 1 : d);  // a 0-d self keeps no dim, as on the CPU
    } else {
      std::vector<int64_t> shape;
      if (has_q) shape.push_back(q_t.size(0));
      for (int64_t i = 0; i < self.dim(); ++i) shape.push_back(1);
      r = r.reshape(shape);
    }
  }
  return r;
}

Tensor quantile_tensor(const Tensor& self, const Tensor& q, std::optional<int64_t> dim, bool keepdim,
                       c10::string_view interpolation) {
  return QuantileImpl("quantile", self, q, 0.0, dim, keepdim, interpolation, false);
}
Tensor quantile_scalar(const Tensor& self, double q, std::optional<int64_t> dim, bool keepdim,
                       c10::string_view interpolation) {
  return QuantileImpl("quantile", self, Tensor(), q, dim, keepdim, interpolation, false);
}
Tensor nanquantile_tensor(const Tensor& self, const Tensor& q, std::optional<int64_t> dim, bool keepdim,
                          c10::string_view interpolation) {
  return QuantileImpl("nanquantile", self, q, 0.0, dim, keepdim, interpolation, true);
}
Tensor nanquantile_scalar(const Tensor& self, double q, std::optional<int64_t> dim, bool keepdim,
                          c10::string_view interpolation) {
  return QuantileImpl("nanquantile", self, Tensor(), q, dim, keepdim, interpolation, true);
}

}  // namespace
}  // namespace torch_ops_nn

// The npu key and its autograd key: the composition is differentiable, as PyTorch's composite is.
#define TORCH_OPS_NN_QUANTILE_IMPLS(m)                                        \
  m.impl("quantile", TORCH_FN(torch_ops_nn::quantile_tensor));                \
  m.impl("quantile.scalar", TORCH_FN(torch_ops_nn::quantile_scalar));         \
  m.impl("nanquantile", TORCH_FN(torch_ops_nn::nanquantile_tensor));          \
  m.impl("nanquantile.scalar", TORCH_FN(torch_ops_nn::nanquantile_scalar))

NPU_ATEN_LIBRARY_IMPL(m) { TORCH_OPS_NN_QUANTILE_IMPLS(m); }
NPU_ATEN_AUTOGRAD_LIBRARY_IMPL(m) { TORCH_OPS_NN_QUANTILE_IMPLS(m); }
