// Antialiased bilinear / bicubic interpolation (F.interpolate(..., antialias=True), torchvision's
// Resize(antialias=True) on tensors) and their backward, which took the CPU fallback.
//
// Antialiased resampling is separable and linear: along each dim, output i is a normalized weighted sum
// of the inputs within a support window around its center, so the op is out = Wh @ x @ Ww^T per (n, c)
// plane with two small dense weight matrices, and the backward is grad_in = Wh^T @ grad_out @ Ww. The
// weights follow the CPU's rule (ATen/native/cpu/UpSampleKernel.cpp, _compute_weights_aa), computed on
// the host in the same float / double steps: scale = area_pixel_compute_scale (in - 1) / (out - 1)
// with align_corners, else 1 / scale_factor when given, else in / out; support = interp_size / 2,
// times scale when downsampling; center = scale * (i + 0.5); the window [xmin, xmin + xsize) with
// xmin = max(int(center - support + 0.5), 0), xsize = min(int(center + support + 0.5), in) - xmin;
// w_j = filter((j + xmin - center + 0.5) / max(scale, 1)), normalized to sum 1. Filters: bilinear
// max(0, 1 - |x|), bicubic Keys' cubic with a = -0.5. A dim whose size does not change is skipped
// (its matrix is the identity), as the CPU skips it. The two matmuls run on the cube (in float for
// 16-bit inputs, which the CPU does not support and CUDA does); channels_last inputs give
// channels_last results, as on the CPU.
#include <ATen/ATen.h>
#include <torch/library.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <vector>

#include "aten/op_common.h"

namespace torch_ops_nn {
namespace {

using at::Tensor;

float AreaPixelScale(int64_t in, int64_t out, bool align_corners, std::optional<double> scale) {
  if (align_corners) return out > 1 ? static_cast<float>(in - 1) / static_cast<float>(out - 1) : 0.0f;
  return scale && *scale > 0 ? static_cast<float>(1.0 / *scale) : static_cast<float>(in) / static_cast<float>(out);
}

float BilinearFilter(float x) {
  if (x < 0) x = -x;
  return x < 1 ? 1 - x : 0;
}

float BicubicFilter(float x) {
  constexpr float a = -0.5f;  // the antialiasing cubic (PIL's), not interpolation's -0.75
  if (x < 0) x = -x;
  if (x < 1) return ((a + 2) * x - (a + 3)) * x * x + 1;
  if (x < 2) return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a;
  return 0;
}

// The [out, in] weight matrix of one dim (row i: output i's weights over the inputs).
Tensor AaWeights(int64_t in, int64_t out, bool align_corners, std::optional<double> scale_opt, bool cubic) {
  const float scale = AreaPixelScale(in, out, align_corners, scale_opt);
  const float interp = cubic ? 4.0f : 2.0f;
  const float support = scale >= 1.0f ? interp * 0.5f * scale : interp * 0.5f;
  const float invscale = scale >= 1.0f ? 1.0f / scale : 1.0f;
  Tensor w = at::zeros({out, in}, at::kFloat);
  float* p = w.data_ptr<float>();
  std::vector<float> row;
  for (int64_t i = 0; i < out; ++i) {
    const float center = static_cast<float>(scale * (static_cast<double>(i) + 0.5));
    const int64_t xmin = std::max<int64_t>(static_cast<int64_t>(center - support + 0.5), 0);
    const int64_t xsize = std::min<int64_t>(static_cast<int64_t>(center + support + 0.5), in) - xmin;
    row.assign(static_cast<size_t>(std::max<int64_t>(xsize, 0)), 0.0f);
    float total = 0;
    for (int64_t j = 0; j < xsize; ++j) {
      const float x = static_cast<float>((static_cast<double>(j + xmin) - center + 0.5) * invscale);
      row[static_cast<size_t>(j)] = cubic ? BicubicFilter(x) : BilinearFilter(x);
      total += row[static_cast<size_t>(j)];
    }
    for (int64_t j = 0; j < xsize; ++j) p[i * in + xmin + j] = total != 0 ? row[static_cast<size_t>(j)] / total : row[static_cast<size_t>(j)];
  }
  return w;
}

struct AaArgs {
  int64_t n, c, ih, iw, oh, ow;
};

void CheckAa(const char* op, const Tensor& t, const char* arg, c10::SymIntArrayRef output_size, AaArgs& a) {
  CheckSameNpuDevice(op, {{arg, &t}});
  CheckFloatDtype(op, arg, t);
  TORCH_CHECK(output_size.size() == 2, op, ": It is expected output_size equals to 2, but got size ", output_size.size());
  a.oh = output_size[0].expect_int();
  a.ow = output_size[1].expect_int();
  TORCH_CHECK(a.oh > 0 && a.ow > 0, op, ": Input and output sizes should be greater than 0, but got output (H: ", a.oh,
              ", W: ", a.ow, ")");
}

// x [n, c, h, w] (any layout) -> the resampled planes; wh [oh, h] and ww [ow, w] on the host, either
// undefined for a dim that keeps its size.
Tensor Resample(const Tensor& x, const Tensor& wh, const Tensor& ww) {
  const bool cl = x.dim() == 4 && !x.is_contiguous() && x.is_contiguous(at::MemoryFormat::ChannelsLast);
  Tensor y = x.to(at::kFloat);
  const auto dev = x.device();
  if (ww.defined()) y = at::matmul(y, ww.to(dev, /*non_blocking=*/true).t());  // [.., h, ow]
  if (wh.defined()) y = at::matmul(wh.to(dev, /*non_blocking=*/true), y);      // [.., oh, ow]
  y = y.to(x.scalar_type());
  if (!ww.defined() && !wh.defined()) y = y.clone();
  return cl ? y.contiguous(at::MemoryFormat::ChannelsLast) : y.contiguous();
}

Tensor AaForward(const char* op, const Tensor& self, c10::SymIntArrayRef output_size, bool align_corners,
                 std::optional<double> scales_h, std::optional<double> scales_w, bool cubic) {
  AaArgs a{};
  CheckAa(op, self, "self", output_size, a);
  // As the CPU: a 4-D tensor whose non-batch dims are non-empty (a batch of 0 is fine).
  TORCH_CHECK(self.dim() == 4 && self.size(1) > 0 && self.size(2) > 0 && self.size(3) > 0, op,
              ": Non-empty 4D data tensor expected but got a tensor with sizes ", self.sizes());
  a.ih = self.size(2);
  a.iw = self.size(3);
  if (self.numel() == 0) return at::empty({self.size(0), self.size(1), a.oh, a.ow}, self.options());
  const Tensor wh = a.ih == a.oh ? Tensor() : AaWeights(a.ih, a.oh, align_corners, scales_h, cubic);
  const Tensor ww = a.iw == a.ow ? Tensor() : AaWeights(a.iw, a.ow, align_corners, scales_w, cubic);
  return Resample(self, wh, ww);
}

Tensor AaBackward(const char* op, const Tensor& grad, c10::SymIntArrayRef output_size, c10::SymIntArrayRef input_size,
                  bool align_corners, std::optional<double> scales_h, std::optional<double> scales_w, bool cubic) {
  AaArgs a{};
  CheckAa(op, grad, "grad_output", output_size, a);
  TORCH_CHECK(input_size.size() == 4, op, ": It is expected input_size equals to 4, but got size ", input_size.size());
  a.n = input_size[0].expect_int();
  a.c = input_size[1].expect_int();
  a.ih = input_size[2].expect_int();
  a.iw = input_size[3].expect_int();
  TORCH_CHECK(grad.dim() == 4 && grad.size(0) == a.n && grad.size(1) == a.c && grad.size(2) == a.oh &&
                  grad.size(3) == a.ow,
              op, ": Expected grad_output to have the shape [", a.n, ", ", a.c, ", ", a.oh, ", ", a.ow, "], got ",
              grad.sizes());
  if (grad.numel() == 0) return at::zeros({a.n, a.c, a.ih, a.iw}, grad.options());
  // grad_in = Wh^T @ grad @ Ww: the forward's resampling with the transposed matrices.
  const Tensor wh = a.ih == a.oh ? Tensor() : AaWeights(a.ih, a.oh, align_corners, scales_h, cubic).t().contiguous();
  const Tensor ww = a.iw == a.ow ? Tensor() : AaWeights(a.iw, a.ow, align_corners, scales_w, cubic).t().contiguous();
  return Resample(grad, wh, ww);
}

Tensor bilinear_aa(const Tensor& self, c10::SymIntArrayRef output_size, bool align_corners,
                   std::optional<double> scales_h, std::optional<double> scales_w) {
  return AaForward("_upsample_bilinear2d_aa", self, output_size, align_corners, scales_h, scales_w, false);
}
Tensor bicubic_aa(const Tensor& self, c10::SymIntArrayRef output_size, bool align_corners,
                  std::optional<double> scales_h, std::optional<double> scales_w) {
  return AaForward("_upsample_bicubic2d_aa", self, output_size, align_corners, scales_h, scales_w, true);
}
Tensor bilinear_aa_backward(const Tensor& grad, c10::SymIntArrayRef output_size, c10::SymIntArrayRef input_size,
                            bool align_corners, std::optional<double> scales_h, std::optional<double> scales_w) {
  return AaBackward("_upsample_bilinear2d_aa_backward", grad, output_size, input_size, align_corners, scales_h,
                    scales_w, false);
}
Tensor bicubic_aa_backward(const Tensor& grad, c10::SymIntArrayRef output_size, c10::SymIntArrayRef input_size,
                           bool align_corners, std::optional<double> scales_h, std::optional<double> scales_w) {
  return AaBackward("_upsample_bicubic2d_aa_backward", grad, output_size, input_size, align_corners, scales_h,
                    scales_w, true);
}

}  // namespace
}  // namespace torch_ops_nn

NPU_ATEN_LIBRARY_IMPL(m) {
  m.impl("_upsample_bilinear2d_aa", TORCH_FN(torch_ops_nn::bilinear_aa));
  m.impl("_upsample_bicubic2d_aa", TORCH_FN(torch_ops_nn::bicubic_aa));
  m.impl("_upsample_bilinear2d_aa_backward", TORCH_FN(torch_ops_nn::bilinear_aa_backward));
  m.impl("_upsample_bicubic2d_aa_backward", TORCH_FN(torch_ops_nn::bicubic_aa_backward));
}
