// Boolean-mask ops on npu: nonzero / argwhere, masked_select, and x[mask] (aten::index.Tensor with one
// bool index, via NonzeroFlat from index.cpp) on the nonzero kernel (ascendc_kernels/nonzero.h): the
// mask's set positions, counted per core, read back (the output size depends on the data, as on
// CUDA), then written in order; the selected values then move by index_select.
#include <ATen/core/Tensor.h>
#include <ATen/ExpandUtils.h>
#include <ATen/ops/index_select.h>
#include <ATen/ops/ne.h>
#include <ATen/ops/remainder.h>
#include <ATen/ops/div.h>
#include <ATen/ops/stack.h>
#include <ATen/ops/empty.h>
#include <torch/library.h>

#include <vector>

#include "aten/kernel_launch.h"
#include "aten/op_common.h"
#include "nonzero.h"

TORCH_OPS_NN_REGISTER_KERNEL(nonzero_kernel);

namespace torch_ops_nn {

// Linear positions (int64, ascending) of the nonzero elements of `mask` (any dtype, any layout: the
// positions are those of the row-major order of its sizes).
at::Tensor NonzeroFlat(const char* op, const at::Tensor& mask) {
  const c10::DeviceIndex dev = mask.device().index();
  const at::Tensor m = (mask.scalar_type() == c10::kBool || mask.scalar_type() == c10::kByte)
                           ? mask.contiguous()
                           : at::ne(mask, 0).contiguous();
  const int64_t n = m.numel();
  TORCH_CHECK(n < (int64_t(1) << 31), op, ": a mask of ", n, " elements is too large for npu (at most 2^31 - 1: ",
              "positions are computed in int32)");
  if (n == 0) return NpuEmpty({0}, c10::kLong, dev);
  auto t = npu_kernels::nonzero_tiling(uint64_t(n), SocInfoFor(dev));
  at::Tensor counts = NpuEmpty({int64_t(t.block_dim)}, c10::kInt, dev);
  auto launch = [&](const at::Tensor& slots, const at::Tensor& out) {
    KernelLaunch l{"nonzero_kernel", ascendc_host::CoreType::AIV, t.block_dim, dev};
    if (LogDebugEnabled()) l.detail = std::string(op) + (t.mode ? " write" : " count") + " n=" + std::to_string(n);
    LaunchKernel(std::move(l), &nonzero_kernel, t, m.data_ptr(), slots.data_ptr(), out.defined() ? out.data_ptr() : nullptr);
  };
  t.mode = 0;
  launch(counts, {});
  // The output's size: the counts summed on the device, one scalar read back.
  const int64_t total = counts.sum().item<int64_t>();
  at::Tensor positions = NpuEmpty({total}, c10::kInt, dev);
  if (total > 0) {
    t.mode = 1;
    launch(counts, positions);
  }
  return positions.to(c10::kLong);
}

namespace {

at::Tensor nonzero_npu(const at::Tensor& self) {
  const char* op = "nonzero";
  CheckSameNpuDevice(op, {{"self", &self}});
  const int64_t nd = self.dim();
  at::Tensor lin = NonzeroFlat(op, self);
  if (nd == 0) return NpuEmpty({lin.numel(), 0}, c10::kLong, self.device().index());
  if (nd == 1) return lin.unsqueeze(1);
  // Coordinates from the linear positions, last dim first.
  std::vector<at::Tensor> cols(static_cast<size_t>(nd));
  at::Tensor rest = lin;
  for (int64_t d = nd - 1; d >= 0; --d) {
    const int64_t s = self.size(d);
    if (d == 0) {
      cols[0] = rest;
    } else {
      cols[size_t(d)] = at::remainder(rest, s);
      rest = at::div(rest, s, "floor");
    }
  }
  return at::stack(cols, 1);
}

at::Tensor& nonzero_out(const at::Tensor& self, at::Tensor& out) {
  TORCH_CHECK_TYPE(out.scalar_type() == c10::kLong, "nonzero: Expected object of scalar type Long as out, but got ",
                   out.scalar_type());
  return CopyToOutExact("nonzero", nonzero_npu(self), out);
}

at::Tensor masked_select_npu(const at::Tensor& self, const at::Tensor& mask) {
  const char* op = "masked_select";
  CheckSameNpuDevice(op, {{"self", &self}, {"mask", &mask}});
  TORCH_CHECK(mask.scalar_type() == c10::kBool, op, ": expected BoolTensor for mask, got ", mask.scalar_type());
  const std::vector<int64_t> shape = at::infer_size(self.sizes(), mask.sizes());
  const at::Tensor lin = NonzeroFlat(op, mask.expand(shape));
  return at::index_select(self.expand(shape).contiguous().reshape({-1}), 0, lin);
}

at::Tensor& masked_select_out(const at::Tensor& self, const at::Tensor& mask, at::Tensor& out) {
  return CopyToOutExact("masked_select", masked_select_npu(self, mask), out);
}

}  // namespace
}  // namespace torch_ops_nn

NPU_ATEN_LIBRARY_IMPL(m) {
  m.impl("nonzero", TORCH_FN(torch_ops_nn::nonzero_npu));
  m.impl("nonzero.out", TORCH_FN(torch_ops_nn::nonzero_out));
  m.impl("masked_select", TORCH_FN(torch_ops_nn::masked_select_npu));
  m.impl("masked_select.out", TORCH_FN(torch_ops_nn::masked_select_out));
}
