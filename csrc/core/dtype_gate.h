// Operands of a dtype an op's kernel does not have take the CPU fallback instead of an error, for
// every aten op registered through NPU_ATEN_LIBRARY_IMPL.
//
// The vector and cube units have no float64 or complex arithmetic, and many kernels cover only some
// dtypes (float pooling, float interpolation, ...). A device runs such calls on its host CPU (torch_npu
// on its AI CPU), so npu gives what the CPU gives for every dtype: the CPU's result, or the CPU's own
// error. Which dtypes a kernel has is its business (views, copies, casts, gathers and byte-moving ops
// handle any dtype), so the gate does not guess from the dtypes: it runs the kernel, and only if the
// kernel's dtype check rejects an operand (it throws an UnsupportedDtypeError through
// ThrowUnsupportedDtype / NPU_CHECK_DTYPE) does the call go to the CPU fallback, with the fallback's
// policy: warned once per op, and under TORCH_OPS_NN_FALLBACK=error a NotImplementedError that quotes
// the kernel's message. Dtype checks come before any work, so nothing has been written when the
// fallback runs; the try costs nothing on calls that do not throw.
//
//   NPU_ATEN_LIBRARY_IMPL(m) { m.impl("sigmoid", TORCH_FN(sigmoid)); }
#pragma once
#include <ATen/core/Tensor.h>
#include <ATen/core/boxing/impl/boxing.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <c10/core/CompileTimeFunctionPointer.h>
#include <c10/util/Exception.h>
#include <torch/library.h>

#include <optional>
#include <string>
#include <utility>

#include "core/cpu_fallback.h"

namespace torch_ops_nn {

// A kernel's rejection of an operand's dtype, which the gate hands to the CPU fallback.
struct UnsupportedDtype {
  c10::ScalarType dtype;
};
template <class Base>
struct UnsupportedDtypeError : Base, UnsupportedDtype {
  UnsupportedDtypeError(const c10::SourceLocation& loc, std::string msg, c10::ScalarType t)
      : Base(loc, std::move(msg)), UnsupportedDtype{t} {}
};

inline bool IsHostOnlyDtype(c10::ScalarType t) { return t == c10::kDouble || c10::isComplexType(t); }

// Throws the op's dtype error, a TypeError (NotImplementedError when `not_implemented`) that the gate
// turns into the CPU fallback.
[[noreturn]] void ThrowUnsupportedDtype(c10::ScalarType t, const std::string& msg, bool not_implemented = false);

}  // namespace torch_ops_nn

// TORCH_CHECK_TYPE (TORCH_CHECK_NOT_IMPLEMENTED) for a kernel's dtype rule on `dtype`: a rejection
// hands the call to the CPU fallback through the gate.
#define NPU_CHECK_DTYPE(cond, dtype, ...)                                                    \
  do {                                                                                       \
    if (C10_UNLIKELY(!(cond))) ::torch_ops_nn::ThrowUnsupportedDtype((dtype), ::c10::str(__VA_ARGS__)); \
  } while (0)
#define NPU_CHECK_DTYPE_NOT_IMPLEMENTED(cond, dtype, ...)                                    \
  do {                                                                                       \
    if (C10_UNLIKELY(!(cond)))                                                               \
      ::torch_ops_nn::ThrowUnsupportedDtype((dtype), ::c10::str(__VA_ARGS__), true);         \
  } while (0)

namespace torch_ops_nn {
namespace gate_detail {

// Records why the next fallback on this thread runs (" for Long operands (the kernel's message)").
void SetFallbackReason(const UnsupportedDtype& e);

// The npu kernel's fallback: the op on CPU copies of its operands (the usual CPU fallback).
void FallbackForDtype(const c10::OperatorHandle& op, c10::DispatchKeySet ks, torch::jit::Stack* stack);
// The autograd kernel's fallback (ops whose npu autograd kernel is a differentiable composition): the
// op on CPU copies made by differentiable copies (Tensor.to), so gradients flow back to the npu
// operands through the CPU op's own backward.
void AutogradFallbackForDtype(const c10::OperatorHandle& op, c10::DispatchKeySet ks, torch::jit::Stack* stack);

}  // namespace gate_detail

template <class FnPtr, c10::BoxedKernel::BoxedKernelFunction_withDispatchKeys* kFallback>
struct DtypeGate;

template <class R, class... Args, R (*kFn)(Args...), c10::BoxedKernel::BoxedKernelFunction_withDispatchKeys* kFallback>
struct DtypeGate<c10::CompileTimeFunctionPointer<R(Args...), kFn>, kFallback> {
  static inline std::optional<c10::OperatorHandle> op;  // the one aten op this kernel is registered for

  static R call(Args... args) {
    try {
      return kFn(args...);
    } catch (const UnsupportedDtype& e) {
      gate_detail::SetFallbackReason(e);
    }
    return c10::impl::BoxedKernelWrapper<R(Args...)>::call(
        c10::BoxedKernel::makeFromFunction<kFallback>(), *op,
        c10::DispatchKeySet(c10::DispatchKey::PrivateUse1), args...);
  }
};

// torch::Library for aten's PrivateUse1 (AutogradPrivateUse1) kernels whose impl() puts the gate in
// front of TORCH_FN kernels (anything else is registered as given).
template <c10::BoxedKernel::BoxedKernelFunction_withDispatchKeys* kFallback>
class GatedLibrary {
 public:
  explicit GatedLibrary(torch::Library& lib) : lib_(lib) {}

  template <class FuncType, FuncType* kFn>
  GatedLibrary& impl(const char* name, c10::CompileTimeFunctionPointer<FuncType, kFn> fn) {
    using Gate = DtypeGate<c10::CompileTimeFunctionPointer<FuncType, kFn>, kFallback>;
    std::string base = name, overload;
    if (const auto dot = base.find('.'); dot != std::string::npos) {
      overload = base.substr(dot + 1);
      base.resize(dot);
    }
    const auto handle = c10::Dispatcher::singleton().findSchema({"aten::" + base, overload});
    // One kernel function serves one op through the gate (its fallback needs the op); a function
    // registered again for another op, or an op unknown here, is registered without the gate.
    if (handle && (!Gate::op || Gate::op->operator_name() == handle->operator_name())) {
      Gate::op = *handle;
      lib_.impl(name, c10::CompileTimeFunctionPointer<FuncType, &Gate::call>());
    } else {
      lib_.impl(name, fn);
    }
    return *this;
  }
  template <class Func>
  GatedLibrary& impl(const char* name, Func&& f) {
    lib_.impl(name, std::forward<Func>(f));
    return *this;
  }

 private:
  torch::Library& lib_;
};

using NpuGatedLibrary = GatedLibrary<&gate_detail::FallbackForDtype>;
using NpuAutogradGatedLibrary = GatedLibrary<&gate_detail::AutogradFallbackForDtype>;

}  // namespace torch_ops_nn

#define NPU_GATED_LIBRARY_IMPL_I(key, lib_type, m, uid)                                      \
  static void C10_CONCATENATE(npu_aten_impl_, uid)(::torch_ops_nn::lib_type & m);            \
  TORCH_LIBRARY_IMPL(aten, key, npu_aten_lib) {                                              \
    ::torch_ops_nn::lib_type gated(npu_aten_lib);                                            \
    C10_CONCATENATE(npu_aten_impl_, uid)(gated);                                             \
  }                                                                                          \
  static void C10_CONCATENATE(npu_aten_impl_, uid)(::torch_ops_nn::lib_type & m)

// TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) with the dtype gate on its TORCH_FN kernels.
#define NPU_ATEN_LIBRARY_IMPL(m) NPU_GATED_LIBRARY_IMPL_I(PrivateUse1, NpuGatedLibrary, m, C10_UID)
// TORCH_LIBRARY_IMPL(aten, AutogradPrivateUse1, m) with the gate (autograd through the CPU op).
#define NPU_ATEN_AUTOGRAD_LIBRARY_IMPL(m) \
  NPU_GATED_LIBRARY_IMPL_I(AutogradPrivateUse1, NpuAutogradGatedLibrary, m, C10_UID)
