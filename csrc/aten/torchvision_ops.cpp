// torchvision's detection ops on npu (registered for the torchvision namespace; torchvision itself
// defines the schemas when it is imported, the dispatcher holds these kernels until then).
//
// nms(dets [N, 4] (x1, y1, x2, y2), scores [N], iou_threshold) -> int64 indices of the kept boxes in
// decreasing score order, as torchvision's CPU kernel: a stable descending sort of the scores, then
// the greedy pass, suppressing a box whose IoU with a kept higher-scored box is > iou_threshold
// (IoU computed in float in the CPU kernel's order of operations: ascendc_kernels/nms.h). float16 /
// bfloat16 boxes (which the CPU kernel refuses) are computed in float; float64 keeps the CPU fallback.
// The number of kept boxes is read back (the output's size depends on it, as on CUDA).
//
// roi_align(input [B, C, H, W], rois [K, 5], spatial_scale, pooled_h, pooled_w, sampling_ratio, aligned)
// -> [K, C, pooled_h, pooled_w]: the forward runs roi_align_kernel (ascendc_kernels/roi_align.h) on a
// channels-last float copy of the map (none when it is channels-last float already); a RoI's batch
// index outside [0, B) is an error (the CPU kernel reads out of bounds), checked with one read back.
// Its backward (_roi_align_backward) runs roi_align_grad_kernel: each work item owns one image and a
// chunk of channels of the gradient and walks the RoIs in order (deterministic, no atomics).
//
// roi_pool -> (max per bin, int32 position h * W + w or -1): roi_pool_kernel (ascendc_kernels/roi_pool.h);
// its backward adds each bin's gradient at its position: one index_put_ with accumulate over
// (image, channel, position) (empty bins add 0 at position 0).
#include <ATen/core/Tensor.h>
#include <ATen/TensorOperators.h>
#include <ATen/ops/arange.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/index_select.h>
#include <ATen/ops/sort.h>
#include <torch/library.h>

#include <string>

#include "aten/kernel_launch.h"
#include "aten/op_common.h"
#include "core/cpu_fallback.h"
#include "nms.h"
#include "roi_align.h"
#include "roi_pool.h"

namespace torch_ops_nn {

TORCH_OPS_NN_REGISTER_KERNEL(nms_kernel);
TORCH_OPS_NN_REGISTER_KERNEL(roi_align_kernel);
TORCH_OPS_NN_REGISTER_KERNEL(roi_align_grad_kernel);
TORCH_OPS_NN_REGISTER_KERNEL(roi_pool_kernel);

namespace {

at::Tensor nms(const at::Tensor& dets, const at::Tensor& scores, double iou_threshold) {
  constexpr const char* op = "torchvision::nms";
  TORCH_CHECK(dets.dim() == 2, op, ": boxes should be a 2d tensor, got ", dets.dim(), "D");
  TORCH_CHECK(dets.size(1) == 4, op, ": boxes should have 4 elements in dimension 1, got ", dets.size(1));
  TORCH_CHECK(scores.dim() == 1, op, ": scores should be a 1d tensor, got ", scores.dim(), "D");
  TORCH_CHECK(dets.size(0) == scores.size(0), op, ": boxes and scores should have same number of elements in ",
              "dimension 0, got ", dets.size(0), " and ", scores.size(0));
  const c10::DeviceIndex dev = CheckSameNpuDevice(op, {{"dets", &dets}, {"scores", &scores}});
  const int64_t n = dets.size(0);
  if (n == 0) return NpuEmpty({0}, c10::kLong, dev);
  const bool native = IsNpuFloat(dets.scalar_type()) && IsNpuFloat(scores.scalar_type()) && n <= INT32_MAX;
  const auto t0 = native ? npu_kernels::nms_tiling(uint32_t(n), iou_threshold, SocInfoFor(dev)) : npu_kernels::NmsTiling{};
  if (!t0.ok) {  // float64 boxes, or more boxes than the greedy pass holds in UB
    return CallCpuFallback("torchvision::nms", "", {dets, scores, iou_threshold})[0].toTensor();
  }
  const at::Tensor order = std::get<1>(at::sort(scores, /*stable=*/true, /*dim=*/0, /*descending=*/true));
  const at::Tensor sorted = at::index_select(dets, 0, order).to(c10::kFloat);
  // Four coordinate rows padded to npad lanes, and the areas (x2 - x1) * (y2 - y1).
  at::Tensor coords = NpuEmpty({4, int64_t(t0.npad)}, c10::kFloat, dev);
  coords.narrow(1, n, int64_t(t0.npad) - n).zero_();
  coords.narrow(1, 0, n).copy_(sorted.t());
  const at::Tensor areas = (coords[2] - coords[0]) * (coords[3] - coords[1]);
  at::Tensor mask = NpuEmpty({n * int64_t(t0.row_bytes)}, c10::kByte, dev);
  at::Tensor keep = NpuEmpty({int64_t(t0.npad)}, c10::kInt, dev);
  at::Tensor count = NpuEmpty({8}, c10::kInt, dev);
  for (uint32_t phase = 0; phase < 2; ++phase) {
    auto t = t0;
    t.phase = phase;
    KernelLaunch launch{"nms_kernel", ascendc_host::CoreType::AIV, phase ? 1 : t.block_dim, dev};
    if (LogDebugEnabled())
      launch.detail = std::string(op) + " n=" + std::to_string(n) + (phase ? " (greedy pass)" : " (masks)");
    LaunchKernel(std::move(launch), &nms_kernel, t, coords.data_ptr(), areas.data_ptr(), mask.data_ptr(),
                 keep.data_ptr(), count.data_ptr());
  }
  const int64_t kept = count[0].item<int64_t>();
  return at::index_select(order, 0, keep.narrow(0, 0, kept));
}

// The argument rules roi_align and roi_pool share; returns the device.
c10::DeviceIndex CheckRoiArgs(const char* op, const at::Tensor& input, const at::Tensor& rois, int64_t ph, int64_t pw) {
  TORCH_CHECK(input.dim() == 4, op, ": input should be a 4d tensor [N, C, H, W], got ", input.dim(), "D");
  TORCH_CHECK(rois.dim() == 2 && rois.size(1) == 5, op, ": rois should be a [K, 5] tensor (batch index, x1, y1, x2, ",
              "y2), got shape ", rois.sizes());
  TORCH_CHECK(ph > 0 && pw > 0, op, ": output_size should be positive, got (", ph, ", ", pw, ")");
  TORCH_CHECK(input.scalar_type() == rois.scalar_type(), op, ": input and rois should have the same dtype, got ",
              input.scalar_type(), " and ", rois.scalar_type());
  return CheckSameNpuDevice(op, {{"input", &input}, {"rois", &rois}});
}

// The RoIs' values the kernels rely on, with one read back eagerly (device checks inside NPU graphs):
// a batch index that names an image of the batch and finite coordinates (the CPU kernels read out of
// bounds or cast NaN to int there), and for roi_align's adaptive sampling (sampling_ratio <= 0) a grid
// of at most 2^24 samples per bin (its size follows the RoI's: a RoI of 1e9 pixels would loop for ever).
void CheckRois(const char* op, const at::Tensor& rois_float, int64_t batch, double spatial_scale = 0.0,
               int64_t ph = 0, int64_t pw = 0) {
  const at::Tensor bi = rois_float.select(1, 0);
  const at::Tensor xy = rois_float.narrow(1, 1, 4);
  const std::string b = std::to_string(batch);
  if (ph <= 0) {
    CheckNoneSet({{(bi < 0).logical_or_(bi >= double(batch)),
                   std::string(op) + ": a RoI's batch index (rois[:, 0]) is outside [0, " + b +
                       ") for an input of batch size " + b},
                  {xy.isfinite().logical_not_(), std::string(op) + ": a RoI has a coordinate that is inf or NaN"}});
    return;
  }
  // Adaptive grid: ceil(h * scale / ph) * ceil(w * scale / pw), at least 1 each (sizes are >= 1).
  const at::Tensor wh = (xy.narrow(1, 2, 2) - xy.narrow(1, 0, 2)).abs_().mul_(spatial_scale);
  const at::Tensor gw = (wh.select(1, 0) / double(pw)).ceil_().clamp_min_(1.0);
  const at::Tensor gh = (wh.select(1, 1) / double(ph)).ceil_().clamp_min_(1.0);
  CheckNoneSet({{(bi < 0).logical_or_(bi >= double(batch)),
                 std::string(op) + ": a RoI's batch index (rois[:, 0]) is outside [0, " + b +
                     ") for an input of batch size " + b},
                {xy.isfinite().logical_not_(), std::string(op) + ": a RoI has a coordinate that is inf or NaN"},
                {gw.mul(gh) > double(1 << 24),
                 std::string(op) + ": a RoI's adaptive sampling grid (sampling_ratio <= 0) exceeds 2^24 samples per "
                                   "bin; pass a positive sampling_ratio or smaller boxes"}});
}

at::Tensor roi_align(const at::Tensor& input, const at::Tensor& rois, double spatial_scale, c10::SymInt pooled_height,
                     c10::SymInt pooled_width, int64_t sampling_ratio, bool aligned) {
  constexpr const char* op = "torchvision::roi_align";
  const int64_t ph = pooled_height.expect_int(), pw = pooled_width.expect_int();
  const c10::DeviceIndex dev = CheckRoiArgs(op, input, rois, ph, pw);
  const int64_t K = rois.size(0), B = input.size(0), C = input.size(1), H = input.size(2), W = input.size(3);
  auto fallback = [&] {
    return CallCpuFallback("torchvision::roi_align", "", {input, rois, spatial_scale, ph, pw, sampling_ratio, aligned})[0]
        .toTensor();
  };
  if (!IsNpuFloat(input.scalar_type())) return fallback();
  at::Tensor out = NpuEmpty({K, C, ph, pw}, input.scalar_type(), dev);
  if (out.numel() == 0) return out;
  TORCH_CHECK(H > 0 && W > 0, op, ": input of shape ", input.sizes(), " has no pixels for ", K, " rois");
  const auto t = npu_kernels::roi_align_tiling(uint32_t(K), uint32_t(B), uint32_t(C), uint32_t(H), uint32_t(W),
                                               uint32_t(ph), uint32_t(pw), int32_t(sampling_ratio), aligned,
                                               spatial_scale, SocInfoFor(dev));
  if (!t.ok || K > INT32_MAX || C * H * W > INT32_MAX) return fallback();
  const at::Tensor r = rois.to(c10::kFloat).contiguous();
  CheckRois(op, r, B, spatial_scale, sampling_ratio > 0 ? 0 : ph, sampling_ratio > 0 ? 0 : pw);
  const at::Tensor x = input.to(c10::kFloat).contiguous(c10::MemoryFormat::ChannelsLast);
  at::Tensor y = NpuEmpty({K, ph, pw, C}, c10::kFloat, dev);
  KernelLaunch launch{"roi_align_kernel", ascendc_host::CoreType::AIV, t.block_dim, dev};
  if (LogDebugEnabled())
    launch.detail = std::string(op) + " " + DescribeForLog({{"input", &input}}) + " rois=" + std::to_string(K) +
                    " out=" + std::to_string(ph) + "x" + std::to_string(pw) + " sampling=" + std::to_string(sampling_ratio);
  LaunchKernel(std::move(launch), &roi_align_kernel, t, x.data_ptr(), r.data_ptr(), y.data_ptr());
  out.copy_(y.permute({0, 3, 1, 2}));
  return out;
}

at::Tensor roi_align_backward(const at::Tensor& grad, const at::Tensor& rois, double spatial_scale,
                              c10::SymInt pooled_height, c10::SymInt pooled_width, c10::SymInt batch_size,
                              c10::SymInt channels, c10::SymInt height, c10::SymInt width, int64_t sampling_ratio,
                              bool aligned) {
  constexpr const char* op = "torchvision::_roi_align_backward";
  const int64_t ph = pooled_height.expect_int(), pw = pooled_width.expect_int(), B = batch_size.expect_int(),
                C = channels.expect_int(), H = height.expect_int(), W = width.expect_int();
  const c10::DeviceIndex dev = CheckSameNpuDevice(op, {{"grad", &grad}, {"rois", &rois}});
  TORCH_CHECK(rois.dim() == 2 && rois.size(1) == 5, op, ": rois should be a [K, 5] tensor, got shape ", rois.sizes());
  const int64_t K = rois.size(0);
  TORCH_CHECK(grad.dim() == 4 && grad.size(0) == K && grad.size(1) == C && grad.size(2) == ph && grad.size(3) == pw, op,
              ": grad of shape ", grad.sizes(), " does not match [", K, ", ", C, ", ", ph, ", ", pw, "]");
  TORCH_CHECK(B >= 0 && C >= 0 && H >= 0 && W >= 0, op, ": input sizes must not be negative");
  auto fallback = [&] {
    return CallCpuFallback("torchvision::_roi_align_backward", "",
                           {grad, rois, spatial_scale, ph, pw, B, C, H, W, sampling_ratio, aligned})[0]
        .toTensor();
  };
  if (!IsNpuFloat(grad.scalar_type())) return fallback();
  at::Tensor gin = NpuEmpty({B, H, W, C}, c10::kFloat, dev);
  gin.zero_();
  if (K > 0 && gin.numel() > 0 && ph > 0 && pw > 0) {
    const auto t = npu_kernels::roi_align_tiling(uint32_t(K), uint32_t(B), uint32_t(C), uint32_t(H), uint32_t(W),
                                                 uint32_t(ph), uint32_t(pw), int32_t(sampling_ratio), aligned,
                                                 spatial_scale, SocInfoFor(dev));
    if (!t.ok || K > INT32_MAX || C * H * W > INT32_MAX) return fallback();
    const at::Tensor r = rois.to(c10::kFloat).contiguous();
    CheckRois(op, r, B, spatial_scale, sampling_ratio > 0 ? 0 : ph, sampling_ratio > 0 ? 0 : pw);
    const at::Tensor g = grad.to(c10::kFloat).permute({0, 2, 3, 1}).contiguous();  // [K, ph, pw, C]
    KernelLaunch launch{"roi_align_grad_kernel", ascendc_host::CoreType::AIV, t.grad_block_dim, dev};
    if (LogDebugEnabled())
      launch.detail = std::string(op) + " rois=" + std::to_string(K) + " input=[" + std::to_string(B) + "," +
                      std::to_string(C) + "," + std::to_string(H) + "," + std::to_string(W) + "] chunk=" +
                      std::to_string(t.chunk);
    LaunchKernel(std::move(launch), &roi_align_grad_kernel, t, g.data_ptr(), r.data_ptr(), gin.data_ptr());
  }
  at::Tensor out = NpuEmpty({B, C, H, W}, grad.scalar_type(), dev);
  out.copy_(gin.permute({0, 3, 1, 2}));
  return out;
}

std::tuple<at::Tensor, at::Tensor> roi_pool(const at::Tensor& input, const at::Tensor& rois, double spatial_scale,
                                             c10::SymInt pooled_height, c10::SymInt pooled_width) {
  constexpr const char* op = "torchvision::roi_pool";
  const int64_t ph = pooled_height.expect_int(), pw = pooled_width.expect_int();
  const c10::DeviceIndex dev = CheckRoiArgs(op, input, rois, ph, pw);
  const int64_t K = rois.size(0), B = input.size(0), C = input.size(1), H = input.size(2), W = input.size(3);
  auto fallback = [&] {
    auto r = CallCpuFallback("torchvision::roi_pool", "", {input, rois, spatial_scale, ph, pw});
    return std::make_tuple(r[0].toTensor(), r[1].toTensor());
  };
  if (!IsNpuFloat(input.scalar_type())) return fallback();
  at::Tensor out = NpuEmpty({K, C, ph, pw}, input.scalar_type(), dev);
  at::Tensor arg = NpuEmpty({K, C, ph, pw}, c10::kInt, dev);
  if (out.numel() == 0) return {out, arg};
  TORCH_CHECK(H > 0 && W > 0, op, ": input of shape ", input.sizes(), " has no pixels for ", K, " rois");
  const auto t = npu_kernels::roi_pool_tiling(uint32_t(K), uint32_t(B), uint32_t(C), uint32_t(H), uint32_t(W),
                                              uint32_t(ph), uint32_t(pw), float(spatial_scale), SocInfoFor(dev));
  if (!t.ok || K > INT32_MAX || H * W >= (int64_t(1) << 24) || C * H * W > INT32_MAX) return fallback();
  const at::Tensor r = rois.to(c10::kFloat).contiguous();
  CheckRois(op, r, B);
  const at::Tensor x = input.to(c10::kFloat).contiguous(c10::MemoryFormat::ChannelsLast);
  at::Tensor y = NpuEmpty({K, ph, pw, C}, c10::kFloat, dev);
  at::Tensor a = NpuEmpty({K, ph, pw, C}, c10::kInt, dev);
  KernelLaunch launch{"roi_pool_kernel", ascendc_host::CoreType::AIV, t.block_dim, dev};
  if (LogDebugEnabled())
    launch.detail = std::string(op) + " " + DescribeForLog({{"input", &input}}) + " rois=" + std::to_string(K);
  LaunchKernel(std::move(launch), &roi_pool_kernel, t, x.data_ptr(), r.data_ptr(), y.data_ptr(), a.data_ptr());
  out.copy_(y.permute({0, 3, 1, 2}));
  arg.copy_(a.permute({0, 3, 1, 2}));
  return {out, arg};
}

at::Tensor roi_pool_backward(const at::Tensor& grad, const at::Tensor& rois, const at::Tensor& argmax,
                             double /*spatial_scale*/, c10::SymInt pooled_height, c10::SymInt pooled_width,
                             c10::SymInt batch_size, c10::SymInt channels, c10::SymInt height, c10::SymInt width) {
  constexpr const char* op = "torchvision::_roi_pool_backward";
  const int64_t ph = pooled_height.expect_int(), pw = pooled_width.expect_int(), B = batch_size.expect_int(),
                C = channels.expect_int(), H = height.expect_int(), W = width.expect_int();
  const c10::DeviceIndex dev = CheckSameNpuDevice(op, {{"grad", &grad}, {"rois", &rois}, {"argmax", &argmax}});
  const int64_t K = rois.size(0);
  TORCH_CHECK(grad.dim() == 4 && grad.size(0) == K && grad.size(1) == C && grad.size(2) == ph && grad.size(3) == pw &&
                  argmax.sizes() == grad.sizes(),
              op, ": grad ", grad.sizes(), " and argmax ", argmax.sizes(), " must both be [", K, ", ", C, ", ", ph,
              ", ", pw, "]");
  at::Tensor gi = NpuEmpty({B, C, H * W}, grad.scalar_type(), dev);
  gi.zero_();
  if (grad.numel() > 0 && gi.numel() > 0) {
    const at::Tensor img = rois.select(1, 0).to(c10::kLong).view({K, 1, 1, 1}).expand({K, C, ph, pw});
    const at::Tensor ch = at::arange(C, grad.options().dtype(c10::kLong)).view({1, C, 1, 1}).expand({K, C, ph, pw});
    const at::Tensor valid = argmax >= 0;
    const at::Tensor pos = argmax.to(c10::kLong).clamp_min(0);
    gi.index_put_({img.reshape(-1), ch.reshape(-1), pos.reshape(-1)},
                  grad.masked_fill(valid.logical_not(), 0).reshape(-1), /*accumulate=*/true);
  }
  return gi.view({B, C, H, W});
}

}  // namespace
}  // namespace torch_ops_nn

TORCH_LIBRARY_IMPL(torchvision, PrivateUse1, m) {
  m.impl("nms", TORCH_FN(torch_ops_nn::nms));
  m.impl("roi_align", TORCH_FN(torch_ops_nn::roi_align));
  m.impl("_roi_align_backward", TORCH_FN(torch_ops_nn::roi_align_backward));
  m.impl("roi_pool", TORCH_FN(torch_ops_nn::roi_pool));
  m.impl("_roi_pool_backward", TORCH_FN(torch_ops_nn::roi_pool_backward));
}
