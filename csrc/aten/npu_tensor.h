// Layer 5 helpers: runtime views of ATen tensors and dtype mapping.
#pragma once
#include <ATen/core/Tensor.h>

#include "runtime/strided_copy.h"

namespace torch_ops_nn {

npu_rt::DType ToRuntimeDType(c10::ScalarType t);  // throws a clear TypeError for unsupported dtypes
// A runtime view of `t` (of `sizes`, broadcasting `t` to them with stride 0 where needed).
npu_rt::StridedView RuntimeView(const at::Tensor& t);
npu_rt::StridedView RuntimeView(const at::Tensor& t, c10::IntArrayRef sizes);

}  // namespace torch_ops_nn
