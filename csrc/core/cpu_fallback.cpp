// The explicit CPU fallback for ops with no native npu kernel: copy the inputs to the CPU, run
// the op there, copy the results back. It warns once per op; TORCH_OPS_NN_FALLBACK=error turns
// it into NotImplementedError (the native-coverage tests run that way).
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/native/CPUFallback.h>
#include <c10/util/Exception.h>
#include <torch/library.h>

#include <cstdlib>
#include <cstring>
#include <exception>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

#include "core/cpu_fallback.h"
#include "core/dtype_gate.h"

namespace torch_ops_nn {
namespace {

std::mutex g_mu;
std::vector<std::string> g_ops;
std::unordered_set<std::string> g_seen;

// The fallback policy for one call: an error under TORCH_OPS_NN_FALLBACK=error, else a warning the
// first time the op falls back. `what`: what the op has no native kernel for ("" for the op itself).
void NoteCpuFallback(const c10::OperatorHandle& op, const char* what) {
  const auto& schema_name = op.schema().operator_name();
  std::string name = schema_name.name;
  if (!schema_name.overload_name.empty()) name += "." + schema_name.overload_name;
  const char* mode = std::getenv("TORCH_OPS_NN_FALLBACK");
  TORCH_CHECK_NOT_IMPLEMENTED(!(mode && std::strcmp(mode, "error") == 0), "npu: the operator '", name,
                              "' has no native npu kernel", what, ", and TORCH_OPS_NN_FALLBACK=error forbids ",
                              "running it on the CPU. Unset TORCH_OPS_NN_FALLBACK (or set it to 'warn') to allow ",
                              "the CPU fallback.");
  bool first = false;
  {
    std::lock_guard<std::mutex> g(g_mu);
    if (g_seen.insert(name).second) {
      g_ops.push_back(name);
      first = true;
    }
  }
  if (first && !(mode && std::strcmp(mode, "silent") == 0)) {
    TORCH_WARN("npu: the operator '", name, "' has no native npu kernel", *what ? what : " yet",
               "; it runs on the CPU (inputs copied out, results copied back). "
               "This warning is shown once per operator; set TORCH_OPS_NN_FALLBACK=error to make it an error.");
  }
}

// ATen's cpu_fallback returns its results on the device of the first tensor argument. When that is a
// CPU scalar (rsub(t, 1) runs sub(wrapped 1, t)) the result would stay on the CPU, so results are moved
// to the device of the first npu argument instead.
std::optional<c10::Device> FirstNpuArgument(const c10::OperatorHandle& op, const torch::jit::Stack& stack) {
  const size_t n = op.schema().arguments().size();
  for (size_t i = stack.size() - n; i < stack.size(); ++i) {
    const c10::IValue& v = stack[i];
    if (v.isTensor() && v.toTensor().defined() && v.toTensor().device().type() == c10::DeviceType::PrivateUse1)
      return v.toTensor().device();
    if (v.isTensorList())
      for (const at::Tensor& t : v.toTensorVector())
        if (t.defined() && t.device().type() == c10::DeviceType::PrivateUse1) return t.device();
  }
  return std::nullopt;
}

// Moves the op's CPU results on the stack to `device` (differentiably: .to is an autograd op).
void ReturnsTo(const c10::OperatorHandle& op, torch::jit::Stack* stack, c10::Device device) {
  const size_t r = op.schema().returns().size();
  for (size_t i = stack->size() - r; i < stack->size(); ++i) {
    c10::IValue& v = (*stack)[i];
    if (v.isTensor() && v.toTensor().defined() && v.toTensor().is_cpu()) {
      v = v.toTensor().to(device);
    } else if (v.isTensorList()) {
      std::vector<at::Tensor> ts = v.toTensorVector();
      bool moved = false;
      for (at::Tensor& t : ts)
        if (t.defined() && t.is_cpu()) t = t.to(device), moved = true;
      if (moved) v = c10::IValue(ts);
    }
  }
}

void NpuCpuFallback(const c10::OperatorHandle& op, torch::jit::Stack* stack, const char* what = "") {
  NoteCpuFallback(op, what);
  const std::optional<c10::Device> device = FirstNpuArgument(op, *stack);
  at::native::cpu_fallback(op, stack, /*error_on_views=*/false);
  if (device) ReturnsTo(op, stack, *device);
}

}  // namespace

void RunCpuFallback(const c10::OperatorHandle& op, torch::jit::Stack* stack) { NpuCpuFallback(op, stack); }

void ThrowUnsupportedDtype(c10::ScalarType t, const std::string& msg, bool not_implemented) {
  const c10::SourceLocation here{__func__, __FILE__, static_cast<uint32_t>(__LINE__)};
  if (not_implemented) throw UnsupportedDtypeError<c10::NotImplementedError>(here, msg, t);
  throw UnsupportedDtypeError<c10::TypeError>(here, msg, t);
}

namespace gate_detail {
namespace {
thread_local std::string g_reason;  // the gate's catch sets it just before the fallback runs
}  // namespace

// Called inside the gate's catch: the exception being handled is the kernel's c10 error.
void SetFallbackReason(const UnsupportedDtype& e) {
  std::string msg;
  try {
    std::rethrow_exception(std::current_exception());
  } catch (const c10::Error& err) {
    msg = " (" + err.msg() + ")";
  } catch (...) {
  }
  g_reason = std::string(" for ") + c10::toString(e.dtype) + " operands" + msg;
}

void FallbackForDtype(const c10::OperatorHandle& op, c10::DispatchKeySet, torch::jit::Stack* stack) {
  NpuCpuFallback(op, stack, g_reason.c_str());
}

void AutogradFallbackForDtype(const c10::OperatorHandle& op, c10::DispatchKeySet, torch::jit::Stack* stack) {
  NoteCpuFallback(op, g_reason.c_str());
  std::optional<c10::Device> device;
  auto to_cpu = [&](const at::Tensor& t) {
    if (!t.defined() || t.is_cpu()) return t;
    if (!device) device = t.device();
    return t.to(c10::kCPU);  // differentiable: the gradient comes back to the npu tensor
  };
  const size_t n = op.schema().arguments().size();
  for (size_t i = stack->size() - n; i < stack->size(); ++i) {
    c10::IValue& v = (*stack)[i];
    if (v.isTensor()) {
      v = to_cpu(v.toTensor());
    } else if (v.isTensorList()) {
      std::vector<at::Tensor> ts = v.toTensorVector();
      for (at::Tensor& t : ts) t = to_cpu(t);
      v = c10::IValue(ts);
    } else if (v.isOptionalTensorList()) {
      c10::List<std::optional<at::Tensor>> ts;
      for (const std::optional<at::Tensor>& t : v.toOptionalTensorList())
        ts.push_back(t.has_value() ? std::optional<at::Tensor>(to_cpu(*t)) : std::nullopt);
      v = c10::IValue(ts);
    }
  }
  op.callBoxed(stack);
  if (device) ReturnsTo(op, stack, *device);
}
}  // namespace gate_detail

torch::jit::Stack CallCpuFallback(const char* name, const char* overload, torch::jit::Stack args, const char* what) {
  const c10::OperatorHandle op = c10::Dispatcher::singleton().findSchemaOrThrow(name, overload);
  NpuCpuFallback(op, &args, what);
  return args;
}

std::vector<std::string> FallbackOps() {
  std::lock_guard<std::mutex> g(g_mu);
  return g_ops;
}

}  // namespace torch_ops_nn

TORCH_LIBRARY_IMPL(_, PrivateUse1, m) {
  m.fallback(torch::CppFunction::makeFromBoxedFunction<&torch_ops_nn::RunCpuFallback>());
}

namespace {
// Nested (jagged) tensors on npu: they can be built and nn.TransformerEncoder's fast path runs on them
// (attention.cpp), but other ops without a composite kernel have none for NestedTensorPrivateUse1
// (ATen's nested kernels are registered for CPU and CUDA only).
// Instead of the dispatcher's list of backends, say what is missing and the usual way around it.
void NestedTensorUnsupported(const c10::OperatorHandle& op, torch::jit::Stack*) {
  const auto& name = op.schema().operator_name();
  TORCH_CHECK_NOT_IMPLEMENTED(false, "npu: '", name.name, name.overload_name.empty() ? "" : ".", name.overload_name,
                              "' is not supported for nested tensors on npu (ATen's nested-tensor kernels exist for "
                              "CPU and CUDA only); use padded tensors (to_padded_tensor) for it.");
}
}  // namespace

TORCH_LIBRARY_IMPL(_, NestedTensorPrivateUse1, m) {
  m.fallback(torch::CppFunction::makeFromBoxedFunction<&NestedTensorUnsupported>());
}
