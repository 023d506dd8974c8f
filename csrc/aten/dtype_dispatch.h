// Registering an npu kernel that covers only some dtypes: other dtypes of the first tensor argument
// (e.g. float64, or integers where the kernel has none) take the explicit CPU fallback, with its
// usual warn/error policy (TORCH_OPS_NN_FALLBACK).
//
//   NPU_ATEN_LIBRARY_IMPL(m) { NPU_IMPL("_softmax", softmax, NotDouble); }
#pragma once
#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/library.h>

#include "aten/op_common.h"
#include "core/cpu_fallback.h"
#include "core/dtype_gate.h"

#include <string>
#include <vector>

namespace torch_ops_nn {

inline bool FloatOnly(c10::ScalarType t) { return IsNpuFloat(t); }
inline bool NotDouble(c10::ScalarType t) { return t != c10::kDouble && !c10::isComplexType(t); }
// NotDouble and complex64 (sum / mean reduce its float pairs).
inline bool NotDoubleOrComplex64(c10::ScalarType t) { return NotDouble(t) || t == c10::kComplexFloat; }

template <class Fn, bool (*kNative)(c10::ScalarType)>
void DtypeDispatch(const c10::OperatorHandle& op, c10::DispatchKeySet ks, torch::jit::Stack* stack) {
  static const c10::KernelFunction kernel = c10::KernelFunction::makeFromUnboxedFunction(Fn());
  const size_t n = op.schema().arguments().size();
  const c10::IValue& first = (*stack)[stack->size() - n];
  if (!first.isTensor() || !kNative(first.toTensor().scalar_type())) return RunCpuFallback(op, stack);
  // The first operand's dtype is native, but another operand or a dtype argument may not be, which
  // the kernel's check rejects (dtype_gate.h): then the CPU fallback on the arguments as they were.
  const size_t base = stack->size() - n;
  std::vector<c10::IValue> args(stack->begin() + static_cast<std::ptrdiff_t>(base), stack->end());
  try {
    kernel.callBoxed(op, ks, stack);
    return;
  } catch (const UnsupportedDtype& e) {
    gate_detail::SetFallbackReason(e);
  }
  stack->resize(base);
  stack->insert(stack->end(), args.begin(), args.end());
  gate_detail::FallbackForDtype(op, ks, stack);
}

// Integer (and bool) inputs of an order-statistic op with float kernels only (max / min / argmax ...):
// when every value is exact in float32 (|v| < 2^24: always for 8/16-bit and bool, one device check
// read back for int32 / int64) the float kernel runs on a float copy and its float results are cast
// back to the input dtype (index results stay int64); otherwise the CPU fallback. Functional
// overloads only (an out= tensor would have the integer dtype).

// kNoBool: bool inputs raise PyTorch's own error (argmax / argmin refuse bool on every backend).
template <class Fn, bool kNoBool = false>
void IntViaFloatDispatch(const c10::OperatorHandle& op, c10::DispatchKeySet ks, torch::jit::Stack* stack) {
  static const c10::KernelFunction kernel = c10::KernelFunction::makeFromUnboxedFunction(Fn());
  const size_t n = op.schema().arguments().size();
  c10::IValue& first = (*stack)[stack->size() - n];
  if (!first.isTensor()) return RunCpuFallback(op, stack);
  const at::Tensor self = first.toTensor();
  const c10::ScalarType t = self.scalar_type();
  if (kNoBool && t == c10::kBool) {
    const std::string& name = op.schema().name();
    TORCH_CHECK(false, name.substr(name.find("::") + 2), "(): does not support bool input");
  }
  if (IsNpuFloat(t)) return kernel.callBoxed(op, ks, stack);
  if (!ExactAsFloat(self)) return RunCpuFallback(op, stack);
  first = self.to(c10::kFloat);
  kernel.callBoxed(op, ks, stack);
  const size_t r = op.schema().returns().size();
  for (size_t i = stack->size() - r; i < stack->size(); ++i) {
    c10::IValue& v = (*stack)[i];
    if (v.isTensor() && v.toTensor().scalar_type() == c10::kFloat) v = v.toTensor().to(t);
  }
}

}  // namespace torch_ops_nn

#define NPU_IMPL_INT_VIA_FLOAT(name, fn)                                                                       \
  m.impl(name, torch::CppFunction::makeFromBoxedFunction<                                                      \
                   &::torch_ops_nn::IntViaFloatDispatch<decltype(TORCH_FN(fn))>>())

#define NPU_IMPL_INT_VIA_FLOAT_NO_BOOL(name, fn)                                                               \
  m.impl(name, torch::CppFunction::makeFromBoxedFunction<                                                      \
                   &::torch_ops_nn::IntViaFloatDispatch<decltype(TORCH_FN(fn)), true>>())

#define NPU_IMPL(name, fn, pred)                                                                               \
  m.impl(name, torch::CppFunction::makeFromBoxedFunction<                                                      \
                   &::torch_ops_nn::DtypeDispatch<decltype(TORCH_FN(fn)), &::torch_ops_nn::pred>>())
