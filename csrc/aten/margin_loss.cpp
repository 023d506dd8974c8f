// multi_margin_loss and multilabel_margin_loss on npu (they took the CPU fallback), as compositions of
// native ops registered for the autograd key too, so their gradients come from autograd through those
// ops (the same values as the CPU's explicit backward kernels).
//   multi_margin:     loss_n = sum_{i != y_n} max(0, margin - x[y_n] + x[i])^p * w[y_n] / C
//   multilabel_margin: loss_n = sum_{j in T_n} sum_{i not in T_n} max(0, 1 - (x[j] - x[i])) / C, T_n the
//                     target classes before the first -1 (a class listed twice counts twice, as on the CPU)
#include <ATen/ATen.h>
#include <ATen/core/Reduction.h>
#include <torch/library.h>

#include "aten/op_common.h"

namespace torch_ops_nn {
namespace {

at::Tensor multi_margin_loss(const at::Tensor& self, const at::Tensor& target, const c10::Scalar& p,
                             const c10::Scalar& margin, const std::optional<at::Tensor>& weight, int64_t reduction) {
  const char* op = "multi_margin_loss";
  CheckSameNpuDevice(op, {{"self", &self}, {"target", &target}});
  CheckFloatDtype(op, "self", self);
  const int64_t pv = p.toLong();
  TORCH_CHECK(pv == 1 || pv == 2, op, ": only p == 1 and p == 2 supported, got ", pv);
  TORCH_CHECK((self.dim() == 2 && self.size(1) != 0) || (self.dim() <= 1 && self.numel() != 0), op,
              ": Expected non-empty vector or matrix with optional 0-dim batch size, but got: ", self.sizes());
  const bool batched = self.dim() == 2;
  const at::Tensor x = batched ? self : self.reshape({1, -1});
  const int64_t n = x.size(0), c = x.size(1);
  TORCH_CHECK(target.numel() == n && (target.dim() <= 1), op, ": inconsistent target size: ", target.sizes(),
              " for input of size: ", self.sizes());
  TORCH_CHECK_TYPE(target.scalar_type() == c10::kLong, op, ": target must be Long, got ", target.scalar_type());
  const at::Tensor y = target.reshape({n, 1});
  // a target outside [0, C) raises as on the CPU (one device check)
  CheckNoneSet(at::logical_or(y < 0, y >= c), c10::str(op, ": target out of range: every target must lie in [0, ", c, ")"));
  at::Tensor z = (x - x.gather(1, y) + margin.toDouble()).clamp_min(0);
  if (pv == 2) z = z * z;
  if (weight.has_value() && weight->defined()) {
    CheckSameNpuDevice(op, {{"self", &self}, {"weight", &*weight}});
    TORCH_CHECK(weight->numel() == c, op, ": weight must have ", c, " elements, got ", weight->numel());
    z = z * weight->reshape({-1}).index_select(0, y.reshape({-1})).unsqueeze(1);
  }
  const at::Tensor not_y = at::arange(c, y.options()).unsqueeze(0) != y;  // the i = y term is 0
  at::Tensor per = (z * not_y).sum(1) / static_cast<double>(c);
  if (!batched && reduction == at::Reduction::None) per = target.dim() == 0 ? per.reshape({}) : per.reshape({1});
  return ApplyReduction(per.to(self.scalar_type()), reduction);
}

at::Tensor multilabel_margin_loss(const at::Tensor& self, const at::Tensor& target, int64_t reduction) {
  const char* op = "multilabel_margin_loss";
  CheckSameNpuDevice(op, {{"self", &self}, {"target", &target}});
  CheckFloatDtype(op, "self", self);
  TORCH_CHECK((self.dim() == 2 && self.size(1) != 0) || (self.dim() <= 1 && self.numel() != 0), op,
              ": Expected non-empty vector or matrix with optional 0-dim batch size, but got: ", self.sizes());
  TORCH_CHECK(target.sizes() == self.sizes(), op, ": inconsistent target size: ", target.sizes(),
              " for input of size: ", self.sizes());
  TORCH_CHECK_TYPE(target.scalar_type() == c10::kLong, op, ": target must be Long, got ", target.scalar_type());
  const bool batched = self.dim() == 2;
  const at::Tensor x = batched ? self : self.reshape({1, -1});
  const at::Tensor t = batched ? target : target.reshape({1, -1});
  const int64_t c = x.size(1);
  // the target list of each sample ends at its first -1; its entries must be classes
  const at::Tensor listed = (t != -1).to(c10::kLong).cumprod(1).to(c10::kBool);
  CheckNoneSet(at::logical_and(listed, at::logical_or(t < 0, t >= c)),
               c10::str(op, ": target out of range: every listed target must lie in [0, ", c, ")"));
  const at::Tensor idx = at::where(listed, t, at::zeros_like(t));
  // (unlisted slots point at class 0 with a count of 0: an add, so they never hide a listed class 0)
  const at::Tensor is_target =
      at::zeros(x.sizes(), x.options().dtype(c10::kFloat)).scatter_add_(1, idx, listed.to(c10::kFloat)) > 0;
  const at::Tensor xj = x.gather(1, idx);                                                // [N, C] (by list slot)
  at::Tensor h = (1.0 - xj.unsqueeze(2) + x.unsqueeze(1)).clamp_min(0);                  // [N, slot j, class i]
  h = h * listed.unsqueeze(2) * at::logical_not(is_target).unsqueeze(1);
  at::Tensor per = h.sum({1, 2}) / static_cast<double>(c);
  if (!batched && reduction == at::Reduction::None) per = per.reshape({});
  return ApplyReduction(per.to(self.scalar_type()), reduction);
}

}  // namespace
}  // namespace torch_ops_nn

#define TORCH_OPS_NN_MARGIN_LOSS_IMPLS(m)                                          \
  m.impl("multi_margin_loss", TORCH_FN(torch_ops_nn::multi_margin_loss));          \
  m.impl("multilabel_margin_loss", TORCH_FN(torch_ops_nn::multilabel_margin_loss))

NPU_ATEN_LIBRARY_IMPL(m) { TORCH_OPS_NN_MARGIN_LOSS_IMPLS(m); }
NPU_ATEN_AUTOGRAD_LIBRARY_IMPL(m) { TORCH_OPS_NN_MARGIN_LOSS_IMPLS(m); }
