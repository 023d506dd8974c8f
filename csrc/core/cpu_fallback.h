#pragma once
#include <ATen/core/Tensor.h>
#include <ATen/core/stack.h>

#include <initializer_list>

#include <string>
#include <vector>

namespace c10 {
class OperatorHandle;
}

namespace torch_ops_nn {
// Names of the ops that fell back to the CPU in this process, in first-use order.
std::vector<std::string> FallbackOps();
// The CPU fallback for one call (same policy as ops without a kernel: warn once, or an error under
// TORCH_OPS_NN_FALLBACK=error). For native kernels that support only some dtypes.
void RunCpuFallback(const c10::OperatorHandle& op, torch::jit::Stack* stack);
// The same for the op "aten::<name>.<overload>" on `args` (a native op's unsupported case); returns the
// op's outputs (out= arguments are written in place).
// `what` says what the op has no kernel for (" for Double operands"), if not the op itself.
torch::jit::Stack CallCpuFallback(const char* name, const char* overload, torch::jit::Stack args,
                                  const char* what = "");

// npu operands of a dtype the vector and cube units do not have (float64, complex) take the CPU
// fallback, as a device without a kernel for a dtype runs it on its host CPU: warned once, an error
// under TORCH_OPS_NN_FALLBACK=error (torch.amp.GradScaler takes the reciprocal of its scale in
// float64; torch.stft returns complex). 0-dim CPU tensors (scalars) do not count.
inline bool AnyHostOnlyDtype(std::initializer_list<const at::Tensor*> ts) {
  for (const at::Tensor* t : ts) {
    if (!t->defined() || (t->dim() == 0 && t->is_cpu())) continue;
    if (t->scalar_type() == c10::kDouble || c10::isComplexType(t->scalar_type())) return true;
  }
  return false;
}
}  // namespace torch_ops_nn
