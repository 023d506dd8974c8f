// Layer 5 helpers shared by every op family: argument checks with clear messages, output
// allocation, the SoC figures for tiling, and dtype dispatch to kernel entry points.
#pragma once
#include <ATen/core/Tensor.h>
#include <c10/util/Exception.h>

#include <initializer_list>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/dtype_gate.h"
#include "elementwise.h"
#include "tiling_common.h"

namespace torch_ops_nn {

// The SoC figures the tiling functions need, for a device.
const npu_kernels::SocInfo& SocInfoFor(c10::DeviceIndex device);

// "add: argument 'other' is on cpu, but 'self' is on npu:0; ..." — every tensor on one npu device.
using NamedTensor = std::pair<const char*, const at::Tensor*>;
c10::DeviceIndex CheckSameNpuDevice(const char* op, std::initializer_list<NamedTensor> tensors);
// "relu: argument 'self' has dtype Int, which is not supported; supported dtypes: Float, Half, BFloat16"
void CheckFloatDtype(const char* op, const char* arg, const at::Tensor& t);
// A data-dependent rule: `bad` (bool, on the npu) marks violating elements. Eagerly the flag is read
// back and `message` raised at the call, as on the CPU; while an npu graph captures (nothing may be read
// back) a device check kernel is launched instead, and a replay with bad values raises `message` at
// the next synchronization (aten/device_check.cpp).
void CheckNoneSet(const at::Tensor& bad, const std::string& message);

// A Python scalar of a binary op arrives as a CPU 0-dim tensor: it moves to `like`'s device (one
// value; float64 as float32), as TensorIterator ops take it; anything else is returned as it is.
at::Tensor ScalarOnDevice(const at::Tensor& t, const at::Tensor& like);
// The memory of a complex tensor as [..., 2] real pairs, its conjugate bit aside (a view: writes reach
// the tensor; callers that need the value apply the bit).
at::Tensor ComplexMemoryPairs(const at::Tensor& z);
// The value of a complex tensor as [..., 2] real pairs (conjugate / negative bits materialized first).
at::Tensor ComplexValuePairs(const at::Tensor& z);
// A complex64 tensor on an npu (the complex dtype the npu computes natively, on its float pairs).
bool IsNpuComplex64(const at::Tensor& t);
// Several rules with one read back eagerly (the first violated rule's message is raised), a device
// check per rule in graphs.
void CheckNoneSet(std::initializer_list<std::pair<at::Tensor, std::string>> rules);
bool IsNpuFloat(c10::ScalarType t);  // float32, float16, bfloat16
// uint8 / int8 / int16: the integer dtypes most kernels take through an int32 copy.
inline bool IsSmallInt(c10::ScalarType t) { return t == c10::kByte || t == c10::kChar || t == c10::kShort; }
// Whether every value of the integer (or bool) tensor x is exact in float32: 8/16-bit integers and
// bool always; int32 / int64 when every |value| < 2^24 (one flag read back). Other dtypes: false.
bool ExactAsFloat(const at::Tensor& x);
// The kernels' dtype code (elementwise.h's EwDType) of float32 / float16 / bfloat16 / int32 / int64 /
// bool; nullopt for the others.
std::optional<npu_kernels::EwDType> EwDTypeOf(c10::ScalarType t);

// A new contiguous npu tensor.
at::Tensor NpuEmpty(c10::IntArrayRef sizes, c10::ScalarType dtype, c10::DeviceIndex device,
                    c10::MemoryFormat format = c10::MemoryFormat::Contiguous);
// `t` itself if contiguous, else a contiguous copy made on the device.
at::Tensor Contiguous(const at::Tensor& t);

// Picks the entry point for a float / half / bfloat16 tensor.
template <typename Fn>
Fn PickFloatKernel(const char* op, c10::ScalarType t, Fn f32, Fn f16, Fn bf16) {
  switch (t) {
    case c10::kFloat: return f32;
    case c10::kHalf: return f16;
    case c10::kBFloat16: return bf16;
    default: break;
  }
  TORCH_CHECK_TYPE(false, op, ": dtype ", t, " is not supported; supported dtypes: Float, Half, BFloat16");
}

// A short "shape dtype" text for debug logs (only built when ASCEND_GLOBAL_LOG_LEVEL=0).
std::string DescribeForLog(std::initializer_list<NamedTensor> tensors);
// dim wrapped into [0, max(ndim, 1)) as PyTorch does, or IndexError "<op>: Dimension out of range ...".
int64_t WrapDim(const char* op, int64_t dim, int64_t ndim);
// Every dim of an ndim-D tensor but `dim` (wrapped): the dims a per-slice norm reduces.
std::vector<int64_t> DimsExcept(int64_t ndim, int64_t dim);
// ATen's check of an adaptive pool's input and of its backward's grad_output (every backend): every
// dim but the first (the batch) non-empty; `name` is the argument the message names.
void CheckNonBatchDimsNotEmpty(const char* op, const char* name, const at::Tensor& t);
// An out= variant's tail: out resized to result's shape (ATen's resize_output rules) and filled with it,
// casting as TensorIterator does (an error where the result's dtype cannot be cast to out's: float to int).
at::Tensor& CopyToOut(const char* op, const at::Tensor& result, at::Tensor& out);
// ... for ATen's structured ops that fix the output dtype (index_select, sort, argmax, amax, isin...): out's
// dtype must be the result's.
at::Tensor& CopyToOutExact(const char* op, const at::Tensor& result, at::Tensor& out);

// A loss's reduction (at::Reduction::None / Mean / Sum) of its per-element values.
at::Tensor ApplyReduction(const at::Tensor& loss, int64_t reduction);

}  // namespace torch_ops_nn
