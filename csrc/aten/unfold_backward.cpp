// unfold_backward (the gradient of Tensor.unfold; torch.istft's overlap-add), which took the CPU
// fallback: window k's element j goes to position k * step + j along `dim`, summed where windows
// overlap. The windows' axis moves next to `dim`, (window, element) flatten to one axis, and one
// deterministic index_add along `dim` with the index k * step + j adds them in; non-overlapping
// windows (step >= size) are the same index_add with distinct targets.
#include <ATen/ops/zeros.h>
#include <ATen/ATen.h>
#include <torch/library.h>

#include <vector>

#include "aten/op_common.h"

namespace torch_ops_nn {
namespace {

using at::Tensor;

Tensor unfold_backward_npu(const Tensor& grad_in, c10::SymIntArrayRef input_sizes_sym, int64_t dim, int64_t size,
                           int64_t step) {
  const char* op = "unfold_backward";
  CheckSameNpuDevice(op, {{"grad_in", &grad_in}});
  std::vector<int64_t> input_sizes;
  for (const auto& s : input_sizes_sym) input_sizes.push_back(s.expect_int());
  const int64_t nd = static_cast<int64_t>(input_sizes.size());
  TORCH_CHECK(size >= 0 && step > 0, op, ": size must be non-negative and step positive, got size ", size,
              " and step ", step);
  if (size == 0)  // windows of no element (unfold allows them): nothing flows back
    return at::zeros(input_sizes, grad_in.options());
  if (nd == 0) {  // a 0-dim input unfolds into one window of its single element
    TORCH_CHECK(grad_in.numel() == 1, op, ": expected one element for a 0-dim input, got ", grad_in.sizes());
    return grad_in.reshape({}).clone();
  }
  const int64_t d = c10::maybe_wrap_dim(dim, nd);
  const int64_t len = input_sizes[static_cast<size_t>(d)];
  const int64_t windows = len >= size ? (len - size) / step + 1 : 0;
  std::vector<int64_t> expected = input_sizes;
  expected[static_cast<size_t>(d)] = windows;
  expected.push_back(size);
  TORCH_CHECK(grad_in.sizes().vec() == expected, op, ": grad_in of shape ", grad_in.sizes(), " does not match the unfold of ",
              c10::IntArrayRef(input_sizes), " along dim ", d, " by size ", size, " and step ", step, " (expected ",
              c10::IntArrayRef(expected), ")");
  Tensor out = at::zeros(input_sizes, grad_in.options());
  if (windows == 0 || grad_in.numel() == 0) return out;
  // [.., windows, .., size] -> [.., windows, size, ..] -> [.., windows * size, ..]
  std::vector<int64_t> flat = input_sizes;
  flat[static_cast<size_t>(d)] = windows * size;
  const Tensor g = grad_in.movedim(-1, d + 1).reshape(flat);
  const auto idx_opts = at::TensorOptions().dtype(at::kLong).device(grad_in.device());
  const Tensor index = (at::arange(windows, idx_opts).mul_(step).unsqueeze(1) + at::arange(size, idx_opts)).reshape({-1});
  return out.index_add_(d, index, g);
}

}  // namespace
}  // namespace torch_ops_nn

NPU_ATEN_LIBRARY_IMPL(m) {
  m.impl("unfold_backward", TORCH_FN(torch_ops_nn::unfold_backward_npu));
}
