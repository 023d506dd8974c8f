// Reflection and replication padding of the last one, two or three dims (F.pad's "reflect" and
// "replicate" modes on 2-D/3-D, 3-D/4-D and 4-D/5-D inputs), forward and backward, on npu.
//
// A padded row is a gather of the input row through an index map (reflect: -1 -> 1, n -> n - 2;
// replicate: clamp). When a padded plane (the padded dims together) fits the index_select kernel's
// gather path, the forward is one index_select over the flattened plane through the combined map
// (plane offset of each output element) and the backward one index_add into zeros; larger planes take
// one index_select / index_add per padded dim (the scatter kernel: deterministic, repeated indices add
// in order, as the CPU's loop does). The maps are built on the host and copied over.
#include <ATen/core/Tensor.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/index_add.h>
#include <ATen/ops/index_select.h>
#include <ATen/ops/zeros.h>
#include <torch/library.h>

#include <algorithm>
#include <array>
#include <vector>

#include "aten/op_common.h"
#include "index_select.h"

namespace torch_ops_nn {
namespace {

// Index map of one padded dim: output j reads input i(j - lo).
std::vector<int64_t> PadMap(int64_t n, int64_t lo, int64_t hi, bool reflect) {
  std::vector<int64_t> m(size_t(n + lo + hi));
  for (int64_t j = 0; j < n + lo + hi; ++j) {
    int64_t i = j - lo;
    if (reflect) {
      if (i < 0) i = -i;
      if (i >= n) i = 2 * (n - 1) - i;
    } else {
      i = i < 0 ? 0 : i >= n ? n - 1 : i;
    }
    m[size_t(j)] = i;
  }
  return m;
}

at::Tensor ToDevice(const std::vector<int64_t>& v, c10::Device dev) {
  at::Tensor idx = at::empty({int64_t(v.size())}, at::TensorOptions().dtype(c10::kLong));
  std::copy(v.begin(), v.end(), idx.data_ptr<int64_t>());
  return idx.to(dev, /*non_blocking=*/true);  // the copy task keeps the host table alive: no wait
}

struct PadPlan {
  std::vector<at::Tensor> maps;  // per padded dim, last dim first (empty when `flat` is set)
  at::Tensor flat;               // the combined map over the flattened padded dims, or undefined
};

// Checks the arguments as PyTorch does (with the numbers) and plans the gathers.
PadPlan PlanPad(const char* op, const at::Tensor& self, c10::IntArrayRef padding, int64_t dims, bool reflect) {
  TORCH_CHECK(padding.size() == size_t(2 * dims), op, ": padding must have ", 2 * dims, " values, got ",
              padding.size());
  TORCH_CHECK(self.dim() == dims + 1 || self.dim() == dims + 2, op, ": expected a ", dims + 1, "-D or ", dims + 2,
              "-D input, got a ", self.dim(), "-D tensor of shape ", self.sizes());
  // every dim but a batch dim (a (dims + 2)-D input's first) must be non-empty, as PyTorch checks
  for (int64_t d = self.dim() == dims + 2 ? 1 : 0; d < self.dim(); ++d)
    TORCH_CHECK(self.size(d) > 0, op, ": expected a ", dims + 1, "-D or ", dims + 2, "-D (batch mode) tensor with "
                "possibly 0 batch size and other non-zero dimensions for input, but got: ", self.sizes());
  std::vector<std::vector<int64_t>> maps;
  for (int64_t k = 0; k < dims; ++k) {
    const int64_t d = self.dim() - 1 - k, n = self.size(d), lo = padding[2 * k], hi = padding[2 * k + 1];
    TORCH_CHECK(n > 0, op, ": input dim ", d, " of shape ", self.sizes(), " is empty; padding needs at least one element");
    if (reflect)
      TORCH_CHECK(lo < n && hi < n, op, ": padding (", lo, ", ", hi, ") of dim ", d, " must be smaller than its size ",
                  n, " (input of shape ", self.sizes(), ")");
    TORCH_CHECK(n + lo + hi >= 1, op, ": dim ", d, " of size ", n, " padded by (", lo, ", ", hi, ") is empty");
    maps.push_back(PadMap(n, lo, hi, reflect));
  }
  PadPlan plan;
  if (dims > 1) {
    uint64_t in_plane = 1, out_plane = 1, outer = 1;
    for (int64_t k = 0; k < dims; ++k) in_plane *= uint64_t(self.size(self.dim() - 1 - k)), out_plane *= maps[k].size();
    for (int64_t d = 0; d < self.dim() - dims; ++d) outer *= uint64_t(self.size(d));
    const auto t = npu_kernels::index_select_tiling(outer ? outer : 1, in_plane, self.element_size(), out_plane,
                                                    true, SocInfoFor(self.device().index()), /*gather=*/true);
    if (t.gather) {
      // flat[j] = the input plane offset of output element j (row-major over the padded dims)
      std::vector<int64_t> flat(1, 0);
      int64_t in_stride = 1;
      for (int64_t k = 0; k < dims; ++k) {  // innermost dim first
        std::vector<int64_t> next;
        next.reserve(flat.size() * maps[k].size());
        for (int64_t m : maps[k])
          for (int64_t f : flat) next.push_back(m * in_stride + f);
        // `next` is ordered (this dim, inner dims): row-major with this dim outermost so far
        flat.swap(next);
        in_stride *= self.size(self.dim() - 1 - k);
      }
      plan.flat = ToDevice(flat, self.device());
      return plan;
    }
  }
  for (const auto& m : maps) plan.maps.push_back(ToDevice(m, self.device()));
  return plan;
}

// The padded dims of `t` (its last `dims`) flattened into one.
std::vector<int64_t> FlatSizes(c10::IntArrayRef sizes, int64_t dims) {
  std::vector<int64_t> size(sizes.begin(), sizes.end() - dims);
  size.push_back(c10::multiply_integers(sizes.end() - dims, sizes.end()));
  return size;
}
at::Tensor FlattenLast(const at::Tensor& t, int64_t dims) { return t.reshape(FlatSizes(t.sizes(), dims)); }

std::vector<int64_t> PaddedSizes(const at::Tensor& self, c10::IntArrayRef padding, int64_t dims) {
  std::vector<int64_t> size = self.sizes().vec();
  for (int64_t k = 0; k < dims; ++k) size[self.dim() - 1 - k] += padding[2 * k] + padding[2 * k + 1];
  return size;
}

at::Tensor PadForward(const char* op, const at::Tensor& self, c10::IntArrayRef padding, int64_t dims, bool reflect) {
  CheckSameNpuDevice(op, {{"self", &self}});
  const PadPlan plan = PlanPad(op, self, padding, dims, reflect);
  if (plan.flat.defined())
    return at::index_select(FlattenLast(self, dims), self.dim() - dims, plan.flat).view(PaddedSizes(self, padding, dims));
  at::Tensor y = self;
  for (int64_t k = 0; k < dims; ++k) y = at::index_select(y, self.dim() - 1 - k, plan.maps[k]);
  return y;
}

at::Tensor PadBackward(const char* op, const at::Tensor& grad, const at::Tensor& self, c10::IntArrayRef padding,
                       int64_t dims, bool reflect) {
  CheckSameNpuDevice(op, {{"grad_output", &grad}, {"self", &self}});
  const PadPlan plan = PlanPad(op, self, padding, dims, reflect);
  const std::vector<int64_t> padded = PaddedSizes(self, padding, dims);
  TORCH_CHECK(grad.sizes() == c10::IntArrayRef(padded), op, ": grad_output of shape ", grad.sizes(),
              " does not match the padded input (expected ", c10::IntArrayRef(padded), ")");
  if (plan.flat.defined()) {
    return at::zeros(FlatSizes(self.sizes(), dims), grad.options())
        .index_add_(self.dim() - dims, plan.flat, FlattenLast(grad, dims))
        .view(self.sizes());
  }
  at::Tensor g = grad;
  for (int64_t k = dims - 1; k >= 0; --k) {
    const int64_t d = self.dim() - 1 - k;
    std::vector<int64_t> size = g.sizes().vec();
    size[d] = self.size(d);
    g = at::zeros(size, g.options()).index_add_(d, plan.maps[k], g);
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
