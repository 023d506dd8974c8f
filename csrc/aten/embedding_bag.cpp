// embedding_bag (F.embedding_bag, nn.EmbeddingBag: sum / mean / max, offsets or 2-D input,
// include_last_offset, per_sample_weights, padding_idx) on npu, composed of the native ops: each
// index's bag from the offsets (searchsorted), the rows gathered (index_select), weighted, then
// summed into their bags (index_add, deterministic) or reduced by max (scatter_reduce amax).
// Registered for the npu and its autograd key in place of PyTorch's composite: the ops used are
// differentiable, so the weight's (dense) and per_sample_weights' gradients come from autograd.
// sparse=True and scale_grad_by_freq=True keep PyTorch's path (its CPU fallback).
//
// The auxiliary outputs: offset2bag (each index's bag), bag_size (entries per bag, padding_idx
// excluded) and, for max, max_indices [B, D] (the weight row of each maximum; the smallest row
// among ties), else bag_size, as the CPU's mean / max do (its forward-only sum returns an empty
// offset2bag and zeros).
#include <ATen/TensorOperators.h>
#include <ATen/core/Tensor.h>
#include <ATen/ops/arange.h>
#include <ATen/ops/embedding_bag_native.h>
#include <ATen/ops/full.h>
#include <ATen/ops/index_select.h>
#include <ATen/ops/searchsorted.h>
#include <ATen/ops/where.h>
#include <ATen/ops/zeros.h>
#include <torch/library.h>

#include <limits>
#include <optional>
#include <tuple>

#include "aten/op_common.h"

namespace torch_ops_nn {
namespace {

using at::Tensor;
using Result = std::tuple<Tensor, Tensor, Tensor, Tensor>;

Result EmbeddingBag(const Tensor& weight, const Tensor& indices, const Tensor& offsets, bool scale_grad_by_freq,
                    int64_t mode, bool sparse, const std::optional<Tensor>& psw_opt, bool include_last_offset,
                    std::optional<int64_t> padding_idx) {
  const char* op = "embedding_bag";
  const bool has_psw = psw_opt.has_value() && psw_opt->defined();
  if (sparse || scale_grad_by_freq)
    return at::native::embedding_bag(weight, indices, offsets, scale_grad_by_freq, mode, sparse, psw_opt,
                                     include_last_offset, padding_idx);
  CheckSameNpuDevice(op, {{"weight", &weight}, {"indices", &indices}, {"offsets", &offsets},
                          {"per_sample_weights", has_psw ? &*psw_opt : &weight}});
  TORCH_CHECK(weight.dim() == 2, op, ": weight has to be a 2D Tensor, but got Tensor of dimension ", weight.dim());
  CheckFloatDtype(op, "weight", weight);  // (an integer table sums / averages nowhere in PyTorch)
  TORCH_CHECK(indices.dim() == 1 || indices.dim() == 2, op, ": input has to be 1D or 2D Tensor, but got Tensor of ",
              "dimension ", indices.dim());
  TORCH_CHECK_TYPE(indices.scalar_type() == c10::kLong || indices.scalar_type() == c10::kInt, op,
                   ": expected indices to be Long or Int, got ", indices.scalar_type());
  TORCH_CHECK(mode >= 0 && mode <= 2, op, ": mode has to be one of sum (0), mean (1) or max (2), got ", mode);
  TORCH_CHECK(!has_psw || mode == 0, op, ": embedding_bag: per_sample_weights was not None. per_sample_weights is ",
              "only supported for mode='sum' (got mode='", mode == 1 ? "mean" : "max", "'). Please open a feature ",
              "request on GitHub.");
  if (padding_idx) {  // ATen's rule: -num_embeddings <= padding_idx < num_embeddings, negative counts from the end
    const int64_t num = weight.size(0);
    TORCH_CHECK(*padding_idx >= -num && *padding_idx < num, op, ": padding_idx must be within the number of ",
                "embeddings, -", num, " through ", num - 1, ", but got ", *padding_idx);
    if (*padding_idx < 0) padding_idx = *padding_idx + num;
  }
  const int64_t d = weight.size(1);
  const Tensor idx = indices.reshape({-1}).to(c10::kLong);
  const int64_t n = idx.numel();
  // Each index's bag.
  Tensor bag_of;
  int64_t bags;
  if (indices.dim() == 2) {
    bags = indices.size(0);
    const int64_t len = indices.size(1);
    bag_of = len == 0 ? idx : at::arange(n, idx.options()).div(len, "floor");
  } else {
    TORCH_CHECK(offsets.dim() == 1, op, ": offsets has to be a 1D Tensor, but got Tensor of dimension ", offsets.dim());
    const Tensor off = offsets.to(c10::kLong);
    bags = include_last_offset ? off.numel() - 1 : off.numel();
    TORCH_CHECK(bags >= 0, op, ": include_last_offset needs at least one offset");
    const Tensor starts = off.narrow(0, 0, bags);
    // Positions below 2^24 are searched as floats: exact there (an offset beyond 2^24 is beyond every
    // position either way), and the int64 search's check that its values fit float, a read back, is
    // not needed (so the op can be captured in an npu graph).
    const bool as_float = n < (int64_t(1) << 24);
    const auto pos_opts = as_float ? idx.options().dtype(c10::kFloat) : idx.options();
    bag_of = bags == 0 || n == 0 ? at::zeros({n}, idx.options())
                                 : at::searchsorted(as_float ? starts.to(c10::kFloat) : starts,
                                                    at::arange(n, pos_opts), false, true) - 1;
  }
  if (has_psw)
    TORCH_CHECK(psw_opt->numel() == n, op, ": expected per_sample_weights to have the same number of elements as ",
                "input (", n, "), got ", psw_opt->numel());
  Tensor keep = padding_idx ? idx != *padding_idx : at::full({n}, true, idx.options().dtype(c10::kBool));
  Tensor rows = at::index_select(weight, 0, idx);  // [n, D]
  if (has_psw) rows = rows * psw_opt->reshape({-1, 1}).to(rows.scalar_type());
  const Tensor bag_size = at::zeros({bags}, idx.options()).index_add(0, bag_of, keep.to(c10::kLong));
  Tensor out, max_indices;
  if (mode == 2) {
    const double ninf = -std::numeric_limits<double>::infinity();
    rows = at::where(keep.unsqueeze(1), rows, ninf);
    out = at::full({bags, d}, ninf, rows.options())
              .scatter_reduce(0, bag_of.unsqueeze(1).expand({n, d}), rows, "amax", /*include_self=*/true);
    // The weight row of each maximum (the smallest among ties), -1 for an empty bag.
    const Tensor hit = (rows == out.index_select(0, bag_of)) & keep.unsqueeze(1);
    const Tensor cand = at::where(hit, idx.unsqueeze(1).expand({n, d}), std::numeric_limits<int64_t>::max());
    max_indices = at::full({bags, d}, std::numeric_limits<int64_t>::max(), idx.options())
                      .scatter_reduce(0, bag_of.unsqueeze(1).expand({n, d}), cand, "amin", true);
    const Tensor empty = (bag_size == 0).unsqueeze(1);
    out = at::where(empty, 0.0, out);
    max_indices = at::where(empty, 0, max_indices);
  } else {
    if (padding_idx) rows = at::where(keep.unsqueeze(1), rows, 0.0);
    out = at::zeros({bags, d}, rows.options()).index_add(0, bag_of, rows);
    if (mode == 1) out = out / bag_size.clamp_min(1).unsqueeze(1).to(out.scalar_type());
    max_indices = bag_size;
  }
  return {out, bag_of, bag_size, max_indices};
}

Result embedding_bag_padding_idx(const Tensor& weight, const Tensor& indices, const Tensor& offsets,
                                 bool scale_grad_by_freq, int64_t mode, bool sparse,
                                 const std::optional<Tensor>& psw, bool include_last_offset,
                                 std::optional<int64_t> padding_idx) {
  return EmbeddingBag(weight, indices, offsets, scale_grad_by_freq, mode, sparse, psw, include_last_offset,
                      padding_idx);
}

Result embedding_bag_default(const Tensor& weight, const Tensor& indices, const Tensor& offsets,
                             bool scale_grad_by_freq, int64_t mode, bool sparse, const std::optional<Tensor>& psw,
                             bool include_last_offset) {
  return EmbeddingBag(weight, indices, offsets, scale_grad_by_freq, mode, sparse, psw, include_last_offset,
                      std::nullopt);
}

}  // namespace
}  // namespace torch_ops_nn

#define TORCH_OPS_NN_EMBEDDING_BAG_IMPLS(m)                                                      \
  m.impl("embedding_bag.padding_idx", TORCH_FN(torch_ops_nn::embedding_bag_padding_idx));        \
  m.impl("embedding_bag", TORCH_FN(torch_ops_nn::embedding_bag_default))

NPU_ATEN_LIBRARY_IMPL(m) { TORCH_OPS_NN_EMBEDDING_BAG_IMPLS(m); }
NPU_ATEN_AUTOGRAD_LIBRARY_IMPL(m) { TORCH_OPS_NN_EMBEDDING_BAG_IMPLS(m); }
