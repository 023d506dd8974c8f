// The npu sort for other ops (topk): the rows of the contiguous float32 / float16 / bfloat16 x [rows, n]
// sorted (stable), the first `limit` of each row into v [rows, limit] (x's dtype) and i [rows, limit]
// (int64). limit < n keeps only the first `limit` of every sorted run, so the merge passes cost little.
#pragma once
#include <ATen/core/Tensor.h>

#include <cstdint>
#include <utility>

namespace torch_ops_nn {

// The dtypes the npu sort orders: float32 / float16 / bfloat16, int64 / int32 / int16 / int8 / uint8, bool.
bool SortableOnNpu(c10::ScalarType t);

void LaunchSortRows(const at::Tensor& x, uint64_t rows, uint32_t n, uint32_t limit, bool descending,
                    const at::Tensor& v, const at::Tensor& i, c10::DeviceIndex dev);

// The exact (min, max) of a contiguous, non-empty int32 / int64 tensor: one pass of radix_range_kernel
// (per-block extremes) and a one-block fold of those, as an int64 npu tensor [2] (no read-back) ...
at::Tensor DeviceIntRangeTensor(const at::Tensor& x);
// ... or read back (synchronizes).
std::pair<int64_t, int64_t> DeviceIntRange(const at::Tensor& x);

}  // namespace torch_ops_nn
