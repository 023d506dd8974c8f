// Layer 5 of the elementwise family (elementwise.cpp, activation.cpp): one way to run any op of
// the Ascend C elementwise kernel (ascendc_kernels/elementwise.h) with PyTorch semantics — argument
// checks with clear messages, type promotion, broadcasting, in-place / out= / non-contiguous
// outputs — and the on-device Cast used by copies.
#pragma once
#include <ATen/core/Tensor.h>
#include <c10/core/Scalar.h>

#include <initializer_list>

#include "elementwise.h"

namespace torch_ops_nn {

// One argument of a pointwise op: an npu tensor (a CPU 0-dim tensor counts as a scalar, as in
// PyTorch's CUDA kernels) or a host scalar.
struct PwArg {
  const char* name;
  const at::Tensor* tensor = nullptr;
  const c10::Scalar* scalar = nullptr;
};

enum class PwResult : uint8_t {
  kPromote,       // result_type of the arguments
  kPromoteFloat,  // ... and integral/bool results become the default float dtype (true division, exp, ...)
  kBool,          // comparisons and logical ops: computed in the promoted dtype, result bool
};

struct PwOp {
  const char* name;           // the ATen op name for messages ("add", "add_", "add.out"...)
  npu_kernels::EwOp op;
  PwResult result = PwResult::kPromote;
  bool int_ok = false;        // has an int32/int64 path (exact within the int32 range)
  bool float_only = false;    // rejects integral inputs (activations)
  bool scalar_opmath = false; // a host scalar second operand keeps float precision (PyTorch's mul/div do) instead of
                              // being rounded to a half/bf16 common dtype first
  float sf[4] = {};           // op scalars, see EwOp
  int32_t si[4] = {};
  int64_t sl[2] = {};         // 64-bit integer op scalars (int64 clamp bounds)
  const char* bool_error = nullptr;  // PyTorch's NotImplementedError when every input is bool (neg, abs, relu...)
  bool out_same_dtype = false;  // ATen's unary-op family (abs, neg, floor, activations, clamp by scalars...): out=
                                // of a one-operand call must have the result's dtype, no casting (TensorIterator's
                                // check_all_same_dtype; the two-operand backward forms cast as binary ops do)
};

// Where the result goes.
struct PwTarget {
  enum Kind : uint8_t { kNew, kInPlace, kOut } kind = kNew;
  const at::Tensor* tensor = nullptr;  // self (kInPlace) or out (kOut)
  static PwTarget New() { return {}; }
  static PwTarget InPlace(const at::Tensor& self) { return {kInPlace, &self}; }
  static PwTarget Out(const at::Tensor& out) { return {kOut, &out}; }
};

// Runs `op` with PyTorch semantics and returns the result tensor (the target for in-place / out=).
at::Tensor Pointwise(const PwOp& op, std::initializer_list<PwArg> args, PwTarget target = PwTarget::New());

// The dtype the op computes in for these arguments (what PyTorch's TensorIterator calls the common dtype).
c10::ScalarType CommonDtype(std::initializer_list<PwArg> args);

// On-device dtype conversion of an npu tensor into an npu tensor on the same device it broadcasts to
// (cast_kernel; other layouts are first moved densely in their own dtype). Returns false, doing
// nothing, for dtype pairs it does not handle (the caller then uses the runtime's strided copy).
bool NpuCastCopy(const at::Tensor& src, const at::Tensor& dst);

}  // namespace torch_ops_nn
