// Reflection and replication padding of the last one, two or three dims (F.pad's "reflect" and
// "replicate" modes on 2-D/3-D, 3-D/4-D and 4-D/5-D inputs), forward and backward, on npu.
//
// A padded row is a gather of the input row through an index map (reflect: -1 -> 1, n -> n - 2;
// replicate: clamp), so the forward is one index_select per padded dim (the index_select kernel) and
// the backward one index_add per dim into zeros (the scatter kernel: deterministic, repeated indices
// add in order, as the CPU's loop does). The index maps are built on the host and copied over.
#include <ATen/core/Tensor.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/index_add.h>
#include <ATen/ops/index_select.h>
#include <ATen/ops/zeros.h>
#include <torch/library.h>

#include <array>
#include <vector>

#include "aten/op_common.h"

namespace torch_ops_nn {
namespace {

// Index map of one padded dim: output j reads input i(j - lo).
at::Tensor PadIndex(int64_t n, int64_t lo, int64_t hi, bool reflect, c10::Device dev) {
  at::Tensor idx = at::empty({n + lo + hi}, at::TensorOptions().dtype(c10::kLong));
  int64_t* p = idx.data_ptr<int64_t>();
  for (int64_t j = 0; j < n + lo + hi; ++j) {
    int64_t i = j - lo;
    if (reflect) {
      if (i < 0) i = -i;
      if (i >= n) i = 2 * (n - 1) - i;
    } else {
      i = i < 0 ? 0 : i >= n ? n - 1 : i;
    }
    p[j] = i;
  }
  return idx.to(dev, /*non_blocking=*/true);  // the copy task keeps the host table alive: no wait
}

// Checks the arguments as PyTorch does (with the numbers) and returns the index maps, last dim first.
std::vector<at::Tensor> PadIndices(const char* op, const at::Tensor& self, c10::IntArrayRef padding, int64_t dims,
                                   bool reflect) {
  TORCH_CHECK(padding.size() == size_t(2 * dims), op, ": padding must have ", 2 * dims, " values, got ",
              padding.size());
  TORCH_CHECK(self.dim() == dims + 1 || self.dim() == dims + 2, op, ": expected a ", dims + 1, "-D or ", dims + 2,
              "-D input, got a ", self.dim(), "-D tensor of shape ", self.sizes());
  // every dim but a batch dim (a (dims + 2)-D input's first) must be non-empty, as PyTorch checks
  for (int64_t d = self.dim() == dims + 2 ? 1 : 0; d < self.dim(); ++d)
    TORCH_CHECK(self.size(d) > 0, op, ": expected a ", dims + 1, "-D or ", dims + 2, "-D (batch mode) tensor with "
                "possibly 0 batch size and other non-zero dimensions for input, but got: ", self.sizes());
  std::vector<at::Tensor> maps;
  for (int64_t k = 0; k < dims; ++k) {
    const int64_t d = self.dim() - 1 - k, n = self.size(d), lo = padding[2 * k], hi = padding[2 * k + 1];
    TORCH_CHECK(n > 0, op, ": input dim ", d, " of shape ", self.sizes(), " is empty; padding needs at least one element");
    if (reflect)
      TORCH_CHECK(lo < n && hi < n, op, ": padding (", lo, ", ", hi, ") of dim ", d, " must be smaller than its size ",
                  n, " (input of shape ", self.sizes(), ")");
    TORCH_CHECK(n + lo + hi >= 1, op, ": dim ", d, " of size ", n, " padded by (", lo, ", ", hi, ") is empty");
    maps.push_back(PadIndex(n, lo, hi, reflect, self.device()));
  }
  return maps;
}

at::Tensor PadForward(const char* op, const at::Tensor& self, c10::IntArrayRef padding, int64_t dims, bool reflect) {
  CheckSameNpuDevice(op, {{"self", &self}});
  const auto maps = PadIndices(op, self, padding, dims, reflect);
  at::Tensor y = self;
  for (int64_t k = 0; k < dims; ++k) y = at::index_select(y, self.dim() - 1 - k, maps[k]);
  return y;
}

at::Tensor PadBackward(const char* op, const at::Tensor& grad, const at::Tensor& self, c10::IntArrayRef padding,
                       int64_t dims, bool reflect) {
  CheckSameNpuDevice(op, {{"grad_output", &grad}, {"self", &self}});
  const auto maps = PadIndices(op, self, padding, dims, reflect);
  at::Tensor g = grad;
  for (int64_t k = dims - 1; k >= 0; --k) {
    const int64_t d = self.dim() - 1 - k;
    std::vector<int64_t> size = g.sizes().vec();
    TORCH_CHECK(size[d] == maps[k].size(0), op, ": grad_output of shape ", grad.sizes(),
                " does not match the padded input (dim ", d, " should be ", maps[k].size(0), ")");
    size[d] = self.size(d);
    g = at::zeros(size, g.options()).index_add_(d, maps[k], g);
  }
  return g;
}

at::Tensor reflection_pad1d(const at::Tensor& self, c10::IntArrayRef p) { return PadForward("reflection_pad1d", self, p, 1, true); }
at::Tensor reflection_pad2d(const at::Tensor& self, c10::IntArrayRef p) { return PadForward("reflection_pad2d", self, p, 2, true); }
at::Tensor replication_pad1d(const at::Tensor& self, c10::IntArrayRef p) { return PadForward("replication_pad1d", self, p, 1, false); }
at::Tensor replication_pad2d(const at::Tensor& self, c10::IntArrayRef p) { return PadForward("replication_pad2d", self, p, 2, false); }
at::Tensor reflection_pad3d(const at::Tensor& self, c10::IntArrayRef p) { return PadForward("reflection_pad3d", self, p, 3, true); }
at::Tensor replication_pad3d(const at::Tensor& self, c10::IntArrayRef p) { return PadForward("replication_pad3d", self, p, 3, false); }
at::Tensor reflection_pad3d_backward(const at::Tensor& g, const at::Tensor& self, c10::IntArrayRef p) {
  return PadBackward("reflection_pad3d_backward", g, self, p, 3, true);
}
at::Tensor replication_pad3d_backward(const at::Tensor& g, const at::Tensor& self, c10::IntArrayRef p) {
  return PadBackward("replication_pad3d_backward", g, self, p, 3, false);
}
at::Tensor reflection_pad1d_backward(const at::Tensor& g, const at::Tensor& self, c10::IntArrayRef p) {
  return PadBackward("reflection_pad1d_backward", g, self, p, 1, true);
}
at::Tensor reflection_pad2d_backward(const at::Tensor& g, const at::Tensor& self, c10::IntArrayRef p) {
  return PadBackward("reflection_pad2d_backward", g, self, p, 2, true);
}
at::Tensor replication_pad1d_backward(const at::Tensor& g, const at::Tensor& self, c10::IntArrayRef p) {
  return PadBackward("replication_pad1d_backward", g, self, p, 1, false);
}
at::Tensor replication_pad2d_backward(const at::Tensor& g, const at::Tensor& self, c10::IntArrayRef p) {
  return PadBackward("replication_pad2d_backward", g, self, p, 2, false);
}

}  // namespace
}  // namespace torch_ops_nn

NPU_ATEN_LIBRARY_IMPL(m) {
  using namespace torch_ops_nn;
  m.impl("reflection_pad1d", TORCH_FN(reflection_pad1d));
  m.impl("reflection_pad2d", TORCH_FN(reflection_pad2d));
  m.impl("replication_pad1d", TORCH_FN(replication_pad1d));
  m.impl("replication_pad2d", TORCH_FN(replication_pad2d));
  m.impl("reflection_pad1d_backward", TORCH_FN(reflection_pad1d_backward));
  m.impl("reflection_pad2d_backward", TORCH_FN(reflection_pad2d_backward));
  m.impl("replication_pad1d_backward", TORCH_FN(replication_pad1d_backward));
  m.impl("replication_pad2d_backward", TORCH_FN(replication_pad2d_backward));
  m.impl("reflection_pad3d", TORCH_FN(reflection_pad3d));
  m.impl("replication_pad3d", TORCH_FN(replication_pad3d));
  m.impl("reflection_pad3d_backward", TORCH_FN(reflection_pad3d_backward));
  m.impl("replication_pad3d_backward", TORCH_FN(replication_pad3d_backward));
}
