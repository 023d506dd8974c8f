#pragma once
#include <ATen/core/stack.h>

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
torch::jit::Stack CallCpuFallback(const char* name, const char* overload, torch::jit::Stack args);
}  // namespace torch_ops_nn
