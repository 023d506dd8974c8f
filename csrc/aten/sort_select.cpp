// Ops built on the npu sort (csrc/aten/sort.cpp), as compositions of native npu ops:
//   - kthvalue, median, nanmedian (with and without dim): one stable ascending sort, then a gather at
//     the row's position — k - 1; (n - 1) / 2 for median unless the row holds NaN, then its first NaN
//     (the CPU's median propagates NaN); (n - nans - 1) / 2 for nanmedian (0 for an all-NaN row).
//     Equal values sit in index order, so the index returned is the first occurrence in sorted order.
//   - mode (with dim): after the same sort, each run of equal values has a length: position minus the
//     run's start (a running max of the start positions); the row's first longest run (the smallest
//     most frequent value, as the CPU's) ends where that length first peaks, and its index there is
//     the value's last occurrence (the CPU's sort of a short row gives the same).
//   - torch.unique (_unique2, sorted or not: the result is sorted either way, as on the CPU) and
//     unique_consecutive without dim: group starts where neighbours differ (NaN != NaN, so every NaN
//     is its own group, -0.0 == 0.0 keeps the first), values by masked_select, inverse by a scatter of
//     the group ids, counts from the start positions. unique with dim= takes the CPU fallback.
#include <ATen/TensorOperators.h>
#include <ATen/core/Tensor.h>
#include <ATen/ops/clamp_min.h>
#include <ATen/ops/full.h>
#include <ATen/ops/arange.h>
#include <ATen/ops/argmax.h>
#include <ATen/ops/cat.h>
#include <ATen/ops/cummax.h>
#include <ATen/ops/cumsum.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/floor.h>
#include <ATen/ops/gather.h>
#include <ATen/ops/isnan.h>
#include <ATen/ops/masked_select.h>
#include <ATen/ops/ne.h>
#include <ATen/ops/nonzero.h>
#include <ATen/ops/ones.h>
#include <ATen/ops/sort.h>
#include <ATen/ops/sub.h>
#include <ATen/ops/sum.h>
#include <ATen/ops/where.h>
#include <torch/library.h>

#include <limits>
#include <tuple>

#include "aten/op_common.h"
#include "aten/sort_ops.h"
#include "core/cpu_fallback.h"

namespace torch_ops_nn {
namespace {

enum class Pick { kKth, kMedian, kNanMedian, kMode };

// Whether the selection ops run natively: dtypes the npu sort orders, rows indexable in float.
bool SelectNative(const at::Tensor& self, int64_t n) {
  return SortableOnNpu(self.scalar_type()) && self.scalar_type() != c10::kBool && n < (int64_t(1) << 24);
}

// The values and indices at the picked sorted position of every row along `dim` (kept as size 1).
std::tuple<at::Tensor, at::Tensor> PickSorted(const at::Tensor& self, int64_t dim, Pick pick, int64_t k) {
  auto [v, i] = at::sort(self, /*stable=*/true, dim, /*descending=*/false);
  const int64_t n = self.dim() == 0 ? 1 : self.size(dim);
  std::vector<int64_t> shape(self.sizes().begin(), self.sizes().end());
  if (!shape.empty()) shape[dim] = 1;
  at::Tensor pos;
  if (pick == Pick::kMode) {
    if (self.dim() == 0) return {v, i};
    std::vector<int64_t> line(self.dim(), 1);
    line[dim] = n;
    const at::Tensor idx = at::arange(n, self.options().dtype(c10::kLong)).view(line);
    const at::Tensor start = at::cat({at::ones(shape, self.options().dtype(c10::kBool)),
                                      at::ne(v.narrow(dim, 1, n - 1), v.narrow(dim, 0, n - 1))}, dim);
    const at::Tensor run_start = std::get<0>(at::cummax(at::where(start, idx, 0), dim));
    pos = at::argmax(idx - run_start, dim, /*keepdim=*/true);
  } else if (pick == Pick::kKth || !c10::isFloatingType(self.scalar_type())) {
    const int64_t p = pick == Pick::kKth ? k - 1 : (n - 1) / 2;
    pos = at::full(shape, p, self.options().dtype(c10::kLong));
  } else {
    // NaN counts per row, in float (exact below 2^24).
    at::Tensor nans = at::sum(at::isnan(self), {dim}, /*keepdim=*/true, c10::kFloat);
    if (pick == Pick::kMedian) {  // the first NaN (at n - nans) if any, else the lower median
      pos = at::where(nans > 0, -nans + double(n), double((n - 1) / 2));
    } else {  // the lower median of the numbers; 0 for a row of NaN
      pos = at::floor(at::clamp_min(-nans + double(n - 1), 0.0) * 0.5);
    }
    pos = pos.to(c10::kLong);
  }
  if (self.dim() == 0) return {v, i};
  return {at::gather(v, dim, pos), at::gather(i, dim, pos)};
}

std::tuple<at::Tensor&, at::Tensor&> SelectOut(const char* op, const char* aten_name, const char* overload,
                                               const at::Tensor& self, int64_t dim, bool keepdim, Pick pick, int64_t k,
                                               at::Tensor& values, at::Tensor& indices) {
  CheckSameNpuDevice(op, {{"self", &self}, {"values", &values}, {"indices", &indices}});
  dim = WrapDim(op, dim, self.dim());
  const int64_t n = self.dim() == 0 ? 1 : self.size(dim);
  if (pick == Pick::kKth) {
    TORCH_CHECK_INDEX(k >= 1 && k <= n, "kthvalue(): selected number k out of range for dimension ", dim);
  } else {
    TORCH_CHECK_INDEX(n > 0, op, "(): Expected reduction dim ", dim, " to have non-zero size.");
  }
  if (!SelectNative(self, n)) {
    if (pick == Pick::kKth)
      CallCpuFallback(aten_name, overload, {self, k, dim, keepdim, values, indices});
    else
      CallCpuFallback(aten_name, overload, {self, dim, keepdim, values, indices});
    return {values, indices};
  }
  auto [v, i] = PickSorted(self, dim, pick, k);
  if (!keepdim && self.dim() > 0) {
    v = v.squeeze(dim);
    i = i.squeeze(dim);
  }
  CopyToOutExact(op, v, values);
  CopyToOutExact(op, i, indices);
  return {values, indices};
}

std::tuple<at::Tensor&, at::Tensor&> kthvalue_out_npu(const at::Tensor& self, int64_t k, int64_t dim, bool keepdim,
                                                      at::Tensor& values, at::Tensor& indices) {
  return SelectOut("kthvalue", "aten::kthvalue", "values", self, dim, keepdim, Pick::kKth, k, values, indices);
}
std::tuple<at::Tensor&, at::Tensor&> median_out_npu(const at::Tensor& self, int64_t dim, bool keepdim,
                                                    at::Tensor& values, at::Tensor& indices) {
  return SelectOut("median", "aten::median", "dim_values", self, dim, keepdim, Pick::kMedian, 0, values, indices);
}
std::tuple<at::Tensor&, at::Tensor&> mode_out_npu(const at::Tensor& self, int64_t dim, bool keepdim,
                                                  at::Tensor& values, at::Tensor& indices) {
  return SelectOut("mode", "aten::mode", "values", self, dim, keepdim, Pick::kMode, 0, values, indices);
}
std::tuple<at::Tensor&, at::Tensor&> nanmedian_out_npu(const at::Tensor& self, int64_t dim, bool keepdim,
                                                       at::Tensor& values, at::Tensor& indices) {
  return SelectOut("nanmedian", "aten::nanmedian", "dim_values", self, dim, keepdim, Pick::kNanMedian, 0, values,
                   indices);
}

template <auto OutFn, typename... Args>
std::tuple<at::Tensor, at::Tensor> Functional(const at::Tensor& self, Args... args) {
  at::Tensor values = NpuEmpty({0}, self.scalar_type(), self.device().index());
  at::Tensor indices = NpuEmpty({0}, c10::kLong, self.device().index());
  OutFn(self, args..., values, indices);
  return {values, indices};
}

std::tuple<at::Tensor, at::Tensor> kthvalue_npu(const at::Tensor& self, int64_t k, int64_t dim, bool keepdim) {
  return Functional<kthvalue_out_npu>(self, k, dim, keepdim);
}
std::tuple<at::Tensor, at::Tensor> median_dim_npu(const at::Tensor& self, int64_t dim, bool keepdim) {
  return Functional<median_out_npu>(self, dim, keepdim);
}
std::tuple<at::Tensor, at::Tensor> mode_npu(const at::Tensor& self, int64_t dim, bool keepdim) {
  return Functional<mode_out_npu>(self, dim, keepdim);
}
std::tuple<at::Tensor, at::Tensor> nanmedian_dim_npu(const at::Tensor& self, int64_t dim, bool keepdim) {
  return Functional<nanmedian_out_npu>(self, dim, keepdim);
}

// median() / nanmedian() of all elements: the value only (an empty float input gives NaN, as on the CPU).
at::Tensor WholeMedian(const at::Tensor& self, Pick pick) {
  const char* op = pick == Pick::kMedian ? "median" : "nanmedian";
  CheckSameNpuDevice(op, {{"self", &self}});
  if (self.numel() == 0 && IsNpuFloat(self.scalar_type()))
    return at::full({}, std::numeric_limits<double>::quiet_NaN(), self.options());
  if (self.numel() == 0 || !SelectNative(self, self.numel()))
    return CallCpuFallback(pick == Pick::kMedian ? "aten::median" : "aten::nanmedian", "", {self}).back().toTensor();
  return std::get<0>(PickSorted(self.reshape({-1}), 0, pick, 0)).reshape({});
}
at::Tensor median_npu(const at::Tensor& self) { return WholeMedian(self, Pick::kMedian); }
at::Tensor nanmedian_npu(const at::Tensor& self) { return WholeMedian(self, Pick::kNanMedian); }

// unique over the flattened values `v` in the order they are grouped (sorted, or as given for
// unique_consecutive); `order[j]` = the input position of v[j] (undefined: v is the input itself).
std::tuple<at::Tensor, at::Tensor, at::Tensor> UniqueOfGrouped(const at::Tensor& self, const at::Tensor& v,
                                                               const at::Tensor& order, bool return_inverse,
                                                               bool return_counts) {
  const int64_t n = v.numel();
  const auto long_opts = self.options().dtype(c10::kLong);
  at::Tensor inverse = NpuEmpty({0}, c10::kLong, self.device().index());
  at::Tensor counts = NpuEmpty({0}, c10::kLong, self.device().index());
  if (n == 0) {
    if (return_inverse) inverse = NpuEmpty(self.sizes(), c10::kLong, self.device().index());
    return {v, inverse, counts};
  }
  at::Tensor start = at::ones({1}, self.options().dtype(c10::kBool));
  at::Tensor mask = at::cat({start, at::ne(v.narrow(0, 1, n - 1), v.narrow(0, 0, n - 1))});
  at::Tensor values = at::masked_select(v, mask);
  if (return_inverse) {
    at::Tensor group = at::cumsum(mask, 0, c10::kLong) - 1;
    if (order.defined())
      inverse = at::empty({n}, long_opts).scatter_(0, order, group);
    else
      inverse = group;
    inverse = inverse.reshape(self.sizes());
  }
  if (return_counts) {
    at::Tensor starts = at::nonzero(mask).reshape({-1});
    at::Tensor ends = at::cat({starts.narrow(0, 1, starts.numel() - 1), at::full({1}, n, long_opts)});
    counts = ends - starts;
  }
  return {values, inverse, counts};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> unique2_npu(const at::Tensor& self, bool sorted, bool return_inverse,
                                                           bool return_counts) {
  CheckSameNpuDevice("unique", {{"self", &self}});
  if (!SortableOnNpu(self.scalar_type())) {
    auto r = CallCpuFallback("aten::_unique2", "", {self, sorted, return_inverse, return_counts});
    return {r[0].toTensor(), r[1].toTensor(), r[2].toTensor()};
  }
  const at::Tensor flat = self.reshape({-1});
  auto [v, order] = at::sort(flat, /*stable=*/true, 0, /*descending=*/false);
  return UniqueOfGrouped(self, v, order, return_inverse, return_counts);
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> unique_consecutive_npu(const at::Tensor& self, bool return_inverse,
                                                                      bool return_counts, std::optional<int64_t> dim) {
  CheckSameNpuDevice("unique_consecutive", {{"self", &self}});
  if (dim.has_value() || !SortableOnNpu(self.scalar_type())) {
    auto r = CallCpuFallback("aten::unique_consecutive", "", {self, return_inverse, return_counts, dim});
    return {r[0].toTensor(), r[1].toTensor(), r[2].toTensor()};
  }
  return UniqueOfGrouped(self, self.reshape({-1}), at::Tensor(), return_inverse, return_counts);
}

}  // namespace
}  // namespace torch_ops_nn

NPU_ATEN_LIBRARY_IMPL(m) {
  m.impl("kthvalue", TORCH_FN(torch_ops_nn::kthvalue_npu));
  m.impl("kthvalue.values", TORCH_FN(torch_ops_nn::kthvalue_out_npu));
  m.impl("median.dim", TORCH_FN(torch_ops_nn::median_dim_npu));
  m.impl("median.dim_values", TORCH_FN(torch_ops_nn::median_out_npu));
  m.impl("median", TORCH_FN(torch_ops_nn::median_npu));
  m.impl("mode", TORCH_FN(torch_ops_nn::mode_npu));
  m.impl("mode.values", TORCH_FN(torch_ops_nn::mode_out_npu));
  m.impl("nanmedian.dim", TORCH_FN(torch_ops_nn::nanmedian_dim_npu));
  m.impl("nanmedian.dim_values", TORCH_FN(torch_ops_nn::nanmedian_out_npu));
  m.impl("nanmedian", TORCH_FN(torch_ops_nn::nanmedian_npu));
  m.impl("_unique2", TORCH_FN(torch_ops_nn::unique2_npu));
  m.impl("unique_consecutive", TORCH_FN(torch_ops_nn::unique_consecutive_npu));
}
