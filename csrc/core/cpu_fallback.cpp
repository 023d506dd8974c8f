// The explicit CPU fallback for ops with no native npu kernel: copy the inputs to the CPU, run
// the op there, copy the results back. It warns once per op; TORCH_OPS_NN_FALLBACK=error turns
// it into NotImplementedError (the native-coverage tests run that way).
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/native/CPUFallback.h>
#include <c10/util/Exception.h>
#include <torch/library.h>

#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <unordered_set>
#include <vector>

#include "core/cpu_fallback.h"

namespace torch_ops_nn {
namespace {

std::mutex g_mu;
std::vector<std::string> g_ops;
std::unordered_set<std::string> g_seen;

void NpuCpuFallback(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  const auto& schema_name = op.schema().operator_name();
  std::string name = schema_name.name;
  if (!schema_name.overload_name.empty()) name += "." + schema_name.overload_name;
  const char* mode = std::getenv("TORCH_OPS_NN_FALLBACK");
  TORCH_CHECK_NOT_IMPLEMENTED(!(mode && std::strcmp(mode, "error") == 0), "npu: the operator '", name,
                              "' has no native npu kernel, and TORCH_OPS_NN_FALLBACK=error forbids running it on "
                              "the CPU. Unset TORCH_OPS_NN_FALLBACK (or set it to 'warn') to allow the CPU fallback.");
  bool first = false;
  {
    std::lock_guard<std::mutex> g(g_mu);
    if (g_seen.insert(name).second) {
      g_ops.push_back(name);
      first = true;
    }
  }
  if (first && !(mode && std::strcmp(mode, "silent") == 0)) {
    TORCH_WARN("npu: the operator '", name,
               "' has no native npu kernel yet; it runs on the CPU (inputs copied out, results copied back). "
               "This warning is shown once per operator; set TORCH_OPS_NN_FALLBACK=error to make it an error.");
  }
  at::native::cpu_fallback(op, stack, /*error_on_views=*/false);
}

}  // namespace

void RunCpuFallback(const c10::OperatorHandle& op, torch::jit::Stack* stack) { NpuCpuFallback(op, stack); }

torch::jit::Stack CallCpuFallback(const char* name, const char* overload, torch::jit::Stack args) {
  const c10::OperatorHandle op = c10::Dispatcher::singleton().findSchemaOrThrow(name, overload);
  NpuCpuFallback(op, &args);
  return args;
}

std::vector<std::string> FallbackOps() {
  std::lock_guard<std::mutex> g(g_mu);
  return g_ops;
}

}  // namespace torch_ops_nn

TORCH_LIBRARY_IMPL(_, PrivateUse1, m) {
  m.fallback(torch::CppFunction::makeFromBoxedFunction<&torch_ops_nn::NpuCpuFallback>());
}
