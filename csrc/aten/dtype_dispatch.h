// Registering an npu kernel that covers only some dtypes: other dtypes of the first tensor argument
// (e.g. float64, or integers where the kernel has none) take the explicit CPU fallback, with its
// usual warn/error policy (TORCH_OPS_NN_FALLBACK).
//
//   TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) { NPU_IMPL("_softmax", softmax, NotDouble); }
#pragma once
#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/library.h>

#include "aten/op_common.h"
#include "core/cpu_fallback.h"

namespace torch_ops_nn {

inline bool FloatOnly(c10::ScalarType t) { return IsNpuFloat(t); }
inline bool NotDouble(c10::ScalarType t) { return t != c10::kDouble && !c10::isComplexType(t); }

template <class Fn, bool (*kNative)(c10::ScalarType)>
void DtypeDispatch(const c10::OperatorHandle& op, c10::DispatchKeySet ks, torch::jit::Stack* stack) {
  static const c10::KernelFunction kernel = c10::KernelFunction::makeFromUnboxedFunction(Fn());
  const size_t n = op.schema().arguments().size();
  const c10::IValue& first = (*stack)[stack->size() - n];
  if (first.isTensor() && kNative(first.toTensor().scalar_type())) kernel.callBoxed(op, ks, stack);
  else RunCpuFallback(op, stack);
}

}  // namespace torch_ops_nn

#define NPU_IMPL(name, fn, pred)                                                                               \
  m.impl(name, torch::CppFunction::makeFromBoxedFunction<                                                      \
                   &::torch_ops_nn::DtypeDispatch<decltype(TORCH_FN(fn)), &::torch_ops_nn::pred>>())
