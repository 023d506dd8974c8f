// torch.amp.GradScaler's two device ops on npu, as compositions of native ops with no host read-back
// (the scaler's step stays asynchronous, as on CUDA):
//   _amp_foreach_non_finite_check_and_unscale_: per gradient, found_inf = max(found_inf, any(!isfinite(g)))
//     (of the values before unscaling), then g *= inv_scale;
//   _amp_update_scale_: PyTorch's rule (a found inf multiplies the scale by the backoff factor and resets
//     the tracker; growth_interval clean steps in a row multiply it by the growth factor, if that stays
//     finite) as device selects on the one-element scale and tracker.
#include <ATen/ATen.h>
#include <torch/library.h>

#include "aten/op_common.h"

namespace torch_ops_nn {
namespace {

void CheckScalarTensor(const char* op, const char* name, const at::Tensor& t, c10::ScalarType dt) {
  TORCH_CHECK(t.numel() == 1, op, ": ", name, " must be a one-element tensor, got shape ", t.sizes());
  TORCH_CHECK_TYPE(t.scalar_type() == dt, op, ": ", name, " must be ", dt, ", got ", t.scalar_type());
}

void amp_non_finite_check_and_unscale_(at::TensorList self, at::Tensor& found_inf, const at::Tensor& inv_scale) {
  const char* op = "_amp_foreach_non_finite_check_and_unscale_";
  CheckScalarTensor(op, "found_inf", found_inf, c10::kFloat);
  CheckScalarTensor(op, "inv_scale", inv_scale, c10::kFloat);
  for (const at::Tensor& g : self) {
    if (!g.defined()) continue;
    CheckSameNpuDevice(op, {{"self", &g}, {"found_inf", &found_inf}, {"inv_scale", &inv_scale}});
    CheckFloatDtype(op, "self", g);
    if (g.numel() == 0) continue;
    const at::Tensor bad = at::logical_not(at::isfinite(g)).any().to(c10::kFloat).view_as(found_inf);
    found_inf.copy_(at::maximum(found_inf, bad));
    g.mul_(inv_scale.to(g.scalar_type()));  // (in-place ops are const members of at::Tensor)
  }
}

at::Tensor& amp_update_scale_(at::Tensor& self, at::Tensor& growth_tracker, const at::Tensor& found_inf,
                              double growth_factor, double backoff_factor, int64_t growth_interval) {
  const char* op = "_amp_update_scale_";
  CheckSameNpuDevice(op, {{"self", &self}, {"growth_tracker", &growth_tracker}, {"found_inf", &found_inf}});
  CheckScalarTensor(op, "current_scale", self, c10::kFloat);
  CheckScalarTensor(op, "growth_tracker", growth_tracker, c10::kInt);
  CheckScalarTensor(op, "found_inf", found_inf, c10::kFloat);
  const at::Tensor inf = found_inf.view_as(self) != 0;
  const at::Tensor succ = growth_tracker + 1;
  const at::Tensor grow = at::logical_and(at::logical_not(inf), succ.view_as(self) == growth_interval);
  const at::Tensor grown = self * growth_factor;
  const at::Tensor take_grown = at::logical_and(grow, at::isfinite(grown));
  const at::Tensor scale = at::where(inf, self * backoff_factor, at::where(take_grown, grown, self));
  const at::Tensor tracker = at::where(at::logical_or(inf, grow).view_as(growth_tracker), at::zeros_like(succ), succ);
  self.copy_(scale);
  growth_tracker.copy_(tracker);
  return self;
}

}  // namespace
}  // namespace torch_ops_nn

NPU_ATEN_LIBRARY_IMPL(m) {
  m.impl("_amp_foreach_non_finite_check_and_unscale_", TORCH_FN(torch_ops_nn::amp_non_finite_check_and_unscale_));
  m.impl("_amp_update_scale_", TORCH_FN(torch_ops_nn::amp_update_scale_));
}
