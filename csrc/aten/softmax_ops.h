// Softmax entry points other ops build on (layer 5).
#pragma once
#include <ATen/core/Tensor.h>

#include <utility>

namespace torch_ops_nn {

// _safe_softmax over the last dim of a float32 / float16 / bfloat16 npu tensor (a row of all -inf gives
// zeros) and each row's log-sum-exp (float32, the input's shape without the last dim; -inf for such a
// row), from one pass of the softmax kernel.
std::pair<at::Tensor, at::Tensor> SafeSoftmaxLastDimWithLse(const at::Tensor& scores);

}  // namespace torch_ops_nn
