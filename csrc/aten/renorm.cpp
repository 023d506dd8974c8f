// Norm caps that took the CPU fallback, as compositions of the native kernels:
//   renorm (torch.renorm, Tensor.renorm_): each slice along `dim` whose p-norm exceeds maxnorm is scaled
//     by maxnorm / (norm + 1e-7), in the CPU's float steps (the norm in float, the factor a float
//     division, 1 elsewhere); 16-bit inputs take float norms as the CPU does.
//   embedding_renorm_ (F.embedding / nn.Embedding with max_norm): the rows the indices name, each once,
//     scaled the same way in place (the CPU computes the factor in double; in float it can differ by an
//     ulp); the rows are gathered, scaled and written back with index_copy_.
#include <ATen/ATen.h>
#include <torch/library.h>

#include <vector>

#include "aten/op_common.h"

namespace torch_ops_nn {
namespace {

using at::Tensor;

// maxnorm / (norm + 1e-7) where norm > maxnorm, else 1 (float).
Tensor CapFactor(const Tensor& norm, double maxnorm) {
  const Tensor cap = at::scalar_tensor(static_cast<float>(maxnorm), at::TensorOptions().dtype(at::kFloat));
  return at::where(norm > static_cast<float>(maxnorm), at::div(cap, norm + 1e-7f), 1.0f);
}

Tensor renorm_npu(const Tensor& self, const at::Scalar& p, int64_t dim, const at::Scalar& maxnorm) {
  const char* op = "renorm";
  CheckSameNpuDevice(op, {{"self", &self}});
  CheckFloatDtype(op, "self", self);
  TORCH_CHECK(self.dim() > 1, op, ": input needs at least 2 dimensions, got ", self.dim(), " dimensions");
  TORCH_CHECK(!p.isComplex() && p.toDouble() > 0, op, ": non-positive-norm not supported");
  TORCH_CHECK(!maxnorm.isComplex() && maxnorm.toDouble() >= 0, op, ": expected maxnorm to be >= 0 but got ",
              maxnorm.toDouble());
  const auto reduce = DimsExcept(self.dim(), WrapDim(op, dim, self.dim()));
  const Tensor norm = at::linalg_vector_norm(self.to(at::kFloat), p, reduce, /*keepdim=*/true, std::nullopt);
  return self * CapFactor(norm, maxnorm.toDouble()).to(self.scalar_type());
}

Tensor& renorm__npu(Tensor& self, const at::Scalar& p, int64_t dim, const at::Scalar& maxnorm) {
  return self.copy_(renorm_npu(self, p, dim, maxnorm));
}

Tensor& embedding_renorm__npu(Tensor& self, const Tensor& indices, double max_norm, double norm_type) {
  const char* op = "embedding_renorm_";
  CheckSameNpuDevice(op, {{"self", &self}, {"indices", &indices}});
  CheckFloatDtype(op, "self", self);
  TORCH_CHECK(self.dim() == 2, op, ": 'self' must be 2-D, got ", self.dim(), "-D (shape ", self.sizes(), ")");
  TORCH_CHECK_TYPE(indices.scalar_type() == at::kLong || indices.scalar_type() == at::kInt, op,
                   ": 'indices' must be Long or Int, got ", indices.scalar_type());
  if (indices.numel() == 0) return self;
  const Tensor rows_at = std::get<0>(at::_unique2(indices.reshape({-1}).to(at::kLong), /*sorted=*/true));
  const Tensor rows = self.index_select(0, rows_at);
  const Tensor norm = at::linalg_vector_norm(rows.to(at::kFloat), norm_type, {1}, /*keepdim=*/true, std::nullopt);
  self.index_copy_(0, rows_at, rows * CapFactor(norm, max_norm).to(self.scalar_type()));
  return self;
}

}  // namespace
}  // namespace torch_ops_nn

NPU_ATEN_LIBRARY_IMPL(m) {
  m.impl("renorm", TORCH_FN(torch_ops_nn::renorm_npu));
  m.impl("renorm_", TORCH_FN(torch_ops_nn::renorm__npu));
  m.impl("embedding_renorm_", TORCH_FN(torch_ops_nn::embedding_renorm__npu));
}
