// Softmax ops on npu: _softmax, _log_softmax and their backward (_softmax_backward_data,
// _log_softmax_backward_data), functional and .out. Argument checks, then the Ascend C kernel of
// ascendc_kernels/softmax.h over the [outer, R, inner] view of the softmax dim.
#include <ATen/core/Tensor.h>
#include <ATen/ops/_softmax.h>
#include <ATen/ops/amax.h>
#include <ATen/ops/logsumexp_native.h>
#include <ATen/ops/empty_like.h>
#include <ATen/ops/where.h>
#include <ATen/ops/zeros.h>
#include <ATen/native/Resize.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "aten/kernel_launch.h"
#include "core/cpu_fallback.h"
#include "aten/dtype_dispatch.h"
#include "aten/op_common.h"
#include "softmax.h"
#include "aten/softmax_ops.h"

namespace torch_ops_nn {

TORCH_OPS_NN_REGISTER_KERNEL(softmax_kernel);
TORCH_OPS_NN_REGISTER_KERNEL(softmax_grad_kernel);
TORCH_OPS_NN_REGISTER_KERNEL(softmax_lse_kernel);

namespace {

void SplitAroundDim(const at::Tensor& x, int64_t dim, uint64_t* outer, uint64_t* R, uint64_t* inner) {
  *outer = 1;
  *R = 1;
  *inner = 1;
  if (x.dim() == 0) return;
  for (int64_t d = 0; d < dim; ++d) *outer *= static_cast<uint64_t>(x.size(d));
  *R = static_cast<uint64_t>(x.size(dim));
  for (int64_t d = dim + 1; d < x.dim(); ++d) *inner *= static_cast<uint64_t>(x.size(d));
}

// Many very short rows run faster as columns of the transpose (whole-tile vector ops). Rows of 16 to 64
// take the kernel's one-repeat-per-row path instead (measured, 65536 rows: R = 32 forward 2.90 -> 2.02 ms,
// backward 3.49 -> 1.34; R = 16 1.56 -> 1.45, 1.97 -> 0.87), which wastes most of a repeat below 16
// (R = 8: 0.96 ms transposed, 2.07 not).
bool TransposeRows(uint64_t outer, uint64_t R, uint64_t inner) {
  return inner == 1 && R > 1 && R < 16 && outer >= 2048;
}

// The kernels move unaligned rows and tails with DataCopyPad, which 2002 (310P) SoCs do not have.
void CheckArch(const char* op, c10::DeviceIndex dev) {
  const int arch = SocInfoFor(dev).npu_arch;
  TORCH_CHECK(arch == 2201, op, ": npu:", static_cast<int>(dev), " is an ", npu_rt::GetDeviceInfo(dev).soc->name,
              " (arch ", arch, "); this op's Ascend C kernel needs DataCopyPad, available on arch 2201 (Ascend910B)");
}

using FwdFn = void (*)(uint8_t*, uint8_t*, uint8_t*);
using BwdFn = void (*)(uint8_t*, uint8_t*, uint8_t*, uint8_t*);

std::string Describe(const char* op, const at::Tensor& x, const npu_kernels::SoftmaxTiling& t) {
  return std::string(op) + " " + DescribeForLog({{"x", &x}}) + " [" + std::to_string(t.outer) + "," +
         std::to_string(t.R) + "," + std::to_string(t.inner) + "] resident=" + std::to_string(t.resident) +
         " blockDim=" + std::to_string(t.block_dim);
}

at::Tensor SoftmaxForward(const char* op, const at::Tensor& self, int64_t dim_in, bool half_to_float, bool log,
                          bool safe = false, at::Tensor* lse = nullptr) {
  CheckSameNpuDevice(op, {{"self", &self}});
  CheckFloatDtype(op, "self", self);
  TORCH_CHECK(!half_to_float || self.scalar_type() == c10::kHalf, op,
              ": half_to_float conversion is supported for Half input only (got ", self.scalar_type(), ")");
  const int64_t dim = WrapDim(op, dim_in, self.dim());
  const c10::ScalarType out_dtype = half_to_float ? c10::kFloat : self.scalar_type();
  const c10::DeviceIndex dev = self.device().index();
  at::Tensor y = NpuEmpty(self.sizes(), out_dtype, dev);
  if (self.numel() == 0) return y;
  at::Tensor x = Contiguous(self);
  uint64_t outer, R, inner;
  SplitAroundDim(x, dim, &outer, &R, &inner);
  const bool transpose = !safe && TransposeRows(outer, R, inner);
  if (transpose) {  // many short rows: softmax over the columns of the transpose, then transpose back
    x = x.view({static_cast<int64_t>(outer), static_cast<int64_t>(R)}).t().contiguous();
    inner = outer;
    outer = 1;
    y = NpuEmpty(x.sizes(), out_dtype, dev);
  }
  auto t = npu_kernels::softmax_tiling(outer, R, inner, static_cast<uint32_t>(x.element_size()),
                                       static_cast<uint32_t>(c10::elementSize(out_dtype)), log, false,
                                       SocInfoFor(dev));
  TORCH_INTERNAL_ASSERT(!safe || (inner == 1 && !log), op, ": the kernel's safe mode is for rows of a softmax");
  t.safe = safe ? 1 : 0;
  CheckArch(op, dev);
  if (lse != nullptr) {  // safe rows with their log-sum-exp (float [outer])
    TORCH_INTERNAL_ASSERT(safe && !transpose && !half_to_float);
    *lse = NpuEmpty({static_cast<int64_t>(outer)}, c10::kFloat, dev);
    using LseFn = void (*)(uint8_t*, uint8_t*, uint8_t*, uint8_t*);
    LseFn k = PickFloatKernel<LseFn>(op, x.scalar_type(), &softmax_lse_kernel_float, &softmax_lse_kernel_half,
                                     &softmax_lse_kernel_bf16);
    KernelLaunch launch{"softmax_lse_kernel", ascendc_host::CoreType::AIV, t.block_dim, dev};
    if (LogDebugEnabled()) launch.detail = Describe(op, x, t);
    LaunchKernel(std::move(launch), k, t, x.data_ptr(), y.data_ptr(), lse->data_ptr());
    return y;
  }
  FwdFn kernel = half_to_float ? &softmax_kernel_half_float
                               : PickFloatKernel(op, x.scalar_type(), &softmax_kernel_float_float,
                                                 &softmax_kernel_half_half, &softmax_kernel_bf16_bf16);
  KernelLaunch launch{"softmax_kernel", ascendc_host::CoreType::AIV, t.block_dim, dev};
  if (LogDebugEnabled()) launch.detail = Describe(op, x, t);
  LaunchKernel(std::move(launch), kernel, t, x.data_ptr(), y.data_ptr());
  if (transpose) return y.t().contiguous().view(self.sizes());
  return y;
}

at::Tensor SoftmaxBackward(const char* op, const at::Tensor& grad_output, const at::Tensor& output, int64_t dim_in,
                           c10::ScalarType input_dtype, bool log) {
  CheckSameNpuDevice(op, {{"grad_output", &grad_output}, {"output", &output}});
  CheckFloatDtype(op, "grad_output", grad_output);
  TORCH_CHECK(grad_output.sizes() == output.sizes(), op, ": grad_output of shape ", grad_output.sizes(),
              " does not match output of shape ", output.sizes());
  TORCH_CHECK(grad_output.scalar_type() == output.scalar_type(), op, ": grad_output has dtype ",
              grad_output.scalar_type(), " but output has dtype ", output.scalar_type(), "; they must match");
  const bool half_to_float = grad_output.scalar_type() != input_dtype;
  TORCH_CHECK(!half_to_float || (grad_output.scalar_type() == c10::kFloat && input_dtype == c10::kHalf), op,
              ": input_dtype ", input_dtype, " with grad_output of dtype ", grad_output.scalar_type(),
              " is not supported; they must match, or be Half input with Float grad_output (half_to_float)");
  const int64_t dim = WrapDim(op, dim_in, grad_output.dim());
  const c10::DeviceIndex dev = grad_output.device().index();
  at::Tensor gi = NpuEmpty(grad_output.sizes(), input_dtype, dev);
  if (grad_output.numel() == 0) return gi;
  at::Tensor g = Contiguous(grad_output);
  at::Tensor y = Contiguous(output);
  uint64_t outer, R, inner;
  SplitAroundDim(g, dim, &outer, &R, &inner);
  const bool transpose = TransposeRows(outer, R, inner);
  if (transpose) {
    const std::vector<int64_t> rows{static_cast<int64_t>(outer), static_cast<int64_t>(R)};
    g = g.view(rows).t().contiguous();
    y = y.view(rows).t().contiguous();
    inner = outer;
    outer = 1;
    gi = NpuEmpty(g.sizes(), input_dtype, dev);
  }
  const auto t = npu_kernels::softmax_tiling(outer, R, inner, static_cast<uint32_t>(g.element_size()),
                                             static_cast<uint32_t>(c10::elementSize(input_dtype)), log, true,
                                             SocInfoFor(dev));
  CheckArch(op, dev);
  BwdFn kernel = half_to_float ? &softmax_grad_kernel_float_half
                               : PickFloatKernel(op, g.scalar_type(), &softmax_grad_kernel_float_float,
                                                 &softmax_grad_kernel_half_half, &softmax_grad_kernel_bf16_bf16);
  KernelLaunch launch{"softmax_grad_kernel", ascendc_host::CoreType::AIV, t.block_dim, dev};
  if (LogDebugEnabled()) launch.detail = Describe(op, g, t);
  LaunchKernel(std::move(launch), kernel, t, g.data_ptr(), y.data_ptr(), gi.data_ptr());
  if (transpose) return gi.t().contiguous().view(grad_output.sizes());
  return gi;
}

at::Tensor& ToOut(const char* op, const at::Tensor& result, at::Tensor& out) {
  CheckSameNpuDevice(op, {{"out", &out}});
  at::native::resize_output(out, result.sizes());
  out.copy_(result);
  return out;
}

at::Tensor softmax(const at::Tensor& self, int64_t dim, bool half_to_float) {
  return SoftmaxForward("_softmax", self, dim, half_to_float, false);
}
at::Tensor& softmax_out(const at::Tensor& self, int64_t dim, bool half_to_float, at::Tensor& out) {
  return ToOut("_softmax", softmax(self, dim, half_to_float), out);
}
at::Tensor log_softmax(const at::Tensor& self, int64_t dim, bool half_to_float) {
  return SoftmaxForward("_log_softmax", self, dim, half_to_float, true);
}
at::Tensor& log_softmax_out(const at::Tensor& self, int64_t dim, bool half_to_float, at::Tensor& out) {
  return ToOut("_log_softmax", log_softmax(self, dim, half_to_float), out);
}
at::Tensor softmax_backward(const at::Tensor& grad_output, const at::Tensor& output, int64_t dim,
                            c10::ScalarType input_dtype) {
  return SoftmaxBackward("_softmax_backward_data", grad_output, output, dim, input_dtype, false);
}
at::Tensor& softmax_backward_out(const at::Tensor& grad_output, const at::Tensor& output, int64_t dim,
                                 c10::ScalarType input_dtype, at::Tensor& grad_input) {
  return ToOut("_softmax_backward_data", softmax_backward(grad_output, output, dim, input_dtype), grad_input);
}
at::Tensor log_softmax_backward(const at::Tensor& grad_output, const at::Tensor& output, int64_t dim,
                                c10::ScalarType input_dtype) {
  return SoftmaxBackward("_log_softmax_backward_data", grad_output, output, dim, input_dtype, true);
}
at::Tensor& log_softmax_backward_out(const at::Tensor& grad_output, const at::Tensor& output, int64_t dim,
                                     c10::ScalarType input_dtype, at::Tensor& out) {
  return ToOut("_log_softmax_backward_data", log_softmax_backward(grad_output, output, dim, input_dtype), out);
}


// _safe_softmax (scaled_dot_product_attention's math path): softmax, with zeros for a row of all -inf
// (a fully masked query) instead of NaN. Over the last dim (rows) the softmax kernel does it in its one
// pass; over another dim the composition of PyTorch's definition: softmax, then zeros where every
// element along `dim` is -inf.
at::Tensor safe_softmax(const at::Tensor& self, int64_t dim_in, std::optional<c10::ScalarType> dtype) {
  constexpr const char* op = "_safe_softmax";
  const at::Tensor x = dtype.has_value() ? self.to(*dtype) : self;
  const int64_t dim = WrapDim(op, dim_in, x.dim());
  uint64_t outer, R, inner;
  SplitAroundDim(x, dim, &outer, &R, &inner);
  if (IsNpuFloat(x.scalar_type()) && inner == 1 && x.numel() > 0) return SoftmaxForward(op, x, dim, false, false, true);
  const at::Tensor out = at::_softmax(x, dim, false);
  const at::Tensor masked = x.eq(-std::numeric_limits<double>::infinity()).all(dim, true);
  return at::where(masked, at::zeros({}, out.options()), out);
}

// logsumexp over one dim whose elements are contiguous (the last, or followed by size-1 dims): the
// softmax kernel's safe mode writes each row's log-sum-exp (-inf for a row of all -inf; its softmax
// output is scratch), one pass instead of PyTorch's amax / sub / exp / sum / log / add. A row holding
// +inf: the kernel's x - max is NaN there while PyTorch (its max taken as 0) gives +inf, so those rows
// take +inf from the row max (NaN-propagating: a row with a NaN stays NaN). Anything else: PyTorch's
// composition.
at::Tensor logsumexp(const at::Tensor& self, at::IntArrayRef dims, bool keepdim) {
  constexpr const char* op = "logsumexp";
  if (dims.size() == 1 && self.dim() >= 1 && IsNpuFloat(self.scalar_type()) && self.numel() > 0) {
    const int64_t dim = WrapDim(op, dims[0], self.dim());
    const at::Tensor x = Contiguous(self);
    uint64_t outer, R, inner;
    SplitAroundDim(x, dim, &outer, &R, &inner);
    if (inner == 1) {
      constexpr double kInf = std::numeric_limits<double>::infinity();
      at::Tensor lse;
      SoftmaxForward(op, x, dim, false, false, true, &lse);
      lse.masked_fill_(at::amax(x, {dim}).eq(kInf).reshape(lse.sizes()), kInf);
      std::vector<int64_t> shape(self.sizes().begin(), self.sizes().end());
      if (keepdim) shape[dim] = 1;
      else shape.erase(shape.begin() + dim);
      return lse.view(shape).to(self.scalar_type());
    }
  }
  return at::native::logsumexp(self, dims, keepdim);
}

}  // namespace

std::pair<at::Tensor, at::Tensor> SafeSoftmaxLastDimWithLse(const at::Tensor& scores) {
  std::vector<int64_t> rows(scores.sizes().begin(), scores.sizes().end() - 1);
  if (scores.numel() == 0) return {at::empty_like(scores), NpuEmpty(rows, c10::kFloat, scores.device().index()).fill_(
                                                                -std::numeric_limits<float>::infinity())};
  at::Tensor lse;
  at::Tensor p = SoftmaxForward("_safe_softmax", scores, -1, false, false, true, &lse);
  return {p, lse.view(rows)};
}

}  // namespace torch_ops_nn

NPU_ATEN_LIBRARY_IMPL(m) {
  using namespace torch_ops_nn;
  NPU_IMPL("_softmax", softmax, NotDouble);
  NPU_IMPL("_softmax.out", softmax_out, NotDouble);
  NPU_IMPL("_log_softmax", log_softmax, NotDouble);
  NPU_IMPL("_log_softmax.out", log_softmax_out, NotDouble);
  NPU_IMPL("_softmax_backward_data", softmax_backward, NotDouble);
  NPU_IMPL("_softmax_backward_data.out", softmax_backward_out, NotDouble);
  NPU_IMPL("_log_softmax_backward_data", log_softmax_backward, NotDouble);
  NPU_IMPL("_log_softmax_backward_data.out", log_softmax_backward_out, NotDouble);
  m.impl("_safe_softmax", TORCH_FN(safe_softmax));
  m.impl("logsumexp", TORCH_FN(logsumexp));
}
