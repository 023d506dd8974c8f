// torch.arange on npu (arange.start_out; the factory forms of arange reach it): the arange kernel
// (ascendc_kernels/arange.h) for float32 / float16 / bfloat16 and for int32 / int64 results whose
// values fit int32; other dtypes and wider integer ranges take the CPU fallback (same policy as an op
// without a kernel).
#include <ATen/core/Tensor.h>
#include <ATen/native/Resize.h>
#include <torch/library.h>

#include <cmath>
#include <limits>

#include "aten/kernel_launch.h"
#include "aten/op_common.h"
#include "arange.h"
#include "core/cpu_fallback.h"
#include "elementwise.h"

namespace torch_ops_nn {

TORCH_OPS_NN_REGISTER_KERNEL(arange_kernel);

namespace {

at::Tensor& arange_start_out(const c10::Scalar& start, const c10::Scalar& end, const c10::Scalar& step,
                             at::Tensor& out) {
  const c10::ScalarType dt = out.scalar_type();
  const bool fp = c10::isFloatingType(dt);
  // Size and checks as ATen's arange (messages included).
  double size_d;
  if (fp) {
    const double xs = start.to<double>(), xe = end.to<double>(), xst = step.to<double>();
    TORCH_CHECK(xst > 0 || xst < 0, "step must be nonzero");
    TORCH_CHECK(std::isfinite(xs) && std::isfinite(xe), "unsupported range: ", xs, " -> ", xe);
    TORCH_CHECK((xst > 0 && xe >= xs) || (xst < 0 && xe <= xs), "upper bound and larger bound inconsistent with step sign");
    size_d = std::ceil((xe - xs) / xst);
  } else {
    const int64_t xs = start.to<int64_t>(), xe = end.to<int64_t>(), xst = step.to<int64_t>();
    TORCH_CHECK(xst != 0, "step must be nonzero");
    TORCH_CHECK((xst > 0 && xe >= xs) || (xst < 0 && xe <= xs), "upper bound and larger bound inconsistent with step sign");
    size_d = std::ceil(static_cast<double>(xe - xs) / static_cast<double>(xst));
  }
  TORCH_CHECK(size_d >= 0 && size_d <= static_cast<double>(std::numeric_limits<int64_t>::max()),
              "invalid size, possible overflow?");
  const int64_t size = static_cast<int64_t>(size_d);
  if (out.numel() != size) out.resize_({size});
  if (size == 0) return out;
  npu_kernels::EwDType ew;
  bool native = size < (int64_t(1) << 31);
  switch (dt) {
    case c10::kFloat: ew = npu_kernels::EwDType::F32; break;
    case c10::kHalf: ew = npu_kernels::EwDType::F16; break;
    case c10::kBFloat16: ew = npu_kernels::EwDType::BF16; break;
    case c10::kInt: ew = npu_kernels::EwDType::I32; break;
    case c10::kLong: ew = npu_kernels::EwDType::I64; break;
    default: native = false; ew = npu_kernels::EwDType::F32; break;
  }
  if (native && !fp) {  // int32 arithmetic: every value must fit
    const int64_t xs = start.to<int64_t>(), xst = step.to<int64_t>();
    const int64_t lim = std::numeric_limits<int32_t>::max();
    const double last = double(xs) + double(xst) * double(size - 1);
    native = std::llabs(xs) <= lim && std::llabs(xst) <= lim && std::fabs(last) <= double(lim);
  }
  if (!native) {
    CallCpuFallback("aten::arange", "start_out", {start, end, step, out});
    return out;
  }
  const c10::DeviceIndex dev = out.device().index();
  at::Tensor y = out.is_contiguous() ? out : NpuEmpty({size}, dt, dev);
  auto t = npu_kernels::arange_tiling(uint64_t(size), uint32_t(ew), uint32_t(out.element_size()), SocInfoFor(dev));
  if (fp) {
    t.start_f = static_cast<float>(start.to<double>());
    t.step_f = static_cast<float>(step.to<double>());
  } else {
    t.start_i = static_cast<int32_t>(start.to<int64_t>());
    t.step_i = static_cast<int32_t>(step.to<int64_t>());
  }
  KernelLaunch launch{"arange_kernel", ascendc_host::CoreType::AIV, t.block_dim, dev};
  if (LogDebugEnabled()) launch.detail = "size=" + std::to_string(size) + " dtype=" + std::string(c10::toString(dt));
  LaunchKernel(std::move(launch), &arange_kernel, t, y.data_ptr());
  if (!y.is_same(out)) out.copy_(y);
  return out;
}

}  // namespace
}  // namespace torch_ops_nn

NPU_ATEN_LIBRARY_IMPL(m) { m.impl("arange.start_out", TORCH_FN(torch_ops_nn::arange_start_out)); }
