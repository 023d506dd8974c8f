// grid_sampler_2d (F.grid_sample on 4-D inputs; bilinear, nearest and bicubic, zeros / border /
// reflection padding, align_corners either way) on npu, composed of the native ops: the grid's
// coordinates are unnormalized and padded as PyTorch does (GridSampler.h), each corner's value is one
// gather from the input seen as [N, C, H * W] (0 outside the image), and bilinear weights them.
// Bicubic (PyTorch's definition): the 4 x 4 taps around floor(coordinate) of the unnormalized, not yet
// padded coordinate, each tap's integer coordinate padded on its own, weighted by the cubic
// convolution coefficients (A = -0.75) of the fractional parts, rows first.
//
// Registered for the npu and its autograd key: every op used is differentiable, so autograd gives
// the input's gradient (the gathers' scatter-adds) and the grid's (through the weights and the
// coordinate transform: 0 where border / reflection clipping clamps, the reflection's sign flips, 0
// for nearest; for bicubic through the fractional parts only, as PyTorch's backward), which is what
// grid_sampler_2d_backward computes.
#include <ATen/TensorOperators.h>
#include <ATen/core/Tensor.h>
#include <ATen/ops/abs.h>
#include <ATen/ops/clamp.h>
#include <ATen/ops/floor.h>
#include <ATen/ops/fmod.h>
#include <ATen/ops/nan_to_num.h>
#include <ATen/ops/round.h>
#include <ATen/ops/where.h>
#include <torch/library.h>

#include <array>

#include "aten/op_common.h"

namespace torch_ops_nn {
namespace {

using at::Tensor;

// PyTorch's grid_sampler_unnormalize.
Tensor Unnormalize(const Tensor& coord, int64_t size, bool align_corners) {
  if (align_corners) return (coord + 1) / 2 * double(size - 1);
  return ((coord + 1) * double(size) - 1) / 2;
}

// PyTorch's reflect_coordinates over [twice_low / 2, twice_high / 2].
Tensor Reflect(const Tensor& coord, int64_t twice_low, int64_t twice_high) {
  if (twice_low == twice_high) return coord * 0;
  const double min = double(twice_low) / 2, span = double(twice_high - twice_low) / 2;
  const Tensor c = at::abs(coord - min);
  const Tensor extra = at::fmod(c, span);
  const Tensor flips = at::floor(c / span);
  const Tensor even = at::fmod(flips, 2) == 0;
  return at::where(even, extra + min, (extra * -1) + (span + min));
}

// The padding mode's transform of an unnormalized coordinate (PyTorch's compute_coordinates).
Tensor SourcePad(Tensor c, int64_t size, int64_t padding, bool align_corners) {
  if (padding == 1) {  // border
    c = at::clamp(c, 0, double(size - 1));
  } else if (padding == 2) {  // reflection
    c = align_corners ? Reflect(c, 0, 2 * (size - 1)) : Reflect(c, -1, 2 * size - 1);
    c = at::clamp(c, 0, double(size - 1));
  }
  return c;
}

// PyTorch's grid_sampler_compute_source_index: unnormalize, then the padding mode's transform.
Tensor SourceIndex(const Tensor& coord, int64_t size, int64_t padding, bool align_corners) {
  return SourcePad(Unnormalize(coord, size, align_corners), size, padding, align_corners);
}

// The cubic convolution weights (A = -0.75) of taps -1, 0, 1, 2 at fractional position t in [0, 1).
std::array<Tensor, 4> CubicCoefficients(const Tensor& t) {
  constexpr double A = -0.75;
  auto near = [](const Tensor& x) { return ((x * (A + 2)) - (A + 3)) * x * x + 1; };           // |x| <= 1
  auto far = [](const Tensor& x) { return ((x * A - 5 * A) * x + 8 * A) * x - 4 * A; };       // 1 < |x| < 2
  const Tensor u = (t * -1) + 1;  // 1 - t
  return {far(t + 1), near(t), near(u), far(u + 1)};
}

Tensor grid_sampler_2d_npu(const Tensor& input, const Tensor& grid, int64_t interpolation, int64_t padding,
                           bool align_corners) {
  const char* op = "grid_sampler_2d";
  CheckSameNpuDevice(op, {{"input", &input}, {"grid", &grid}});
  TORCH_CHECK(input.dim() == 4 && grid.dim() == 4, op, ": expected 4-D input and grid, got ", input.dim(), "-D and ",
              grid.dim(), "-D");
  TORCH_CHECK(input.size(0) == grid.size(0), op, ": expected grid and input to have same batch size, but got input with ",
              "sizes ", input.sizes(), " and grid with sizes ", grid.sizes());
  TORCH_CHECK(grid.size(3) == 2, op, ": expected grid to have size 2 in last dimension, but got grid with sizes ",
              grid.sizes());
  TORCH_CHECK(input.size(2) > 0 && input.size(3) > 0, op, ": expected input to have non-empty spatial dimensions, ",
              "but input has sizes ", input.sizes());
  CheckFloatDtype(op, "input", input);
  TORCH_CHECK_TYPE(grid.scalar_type() == input.scalar_type(), op, ": expected input and grid to have the same dtype, ",
                   "but input has ", input.scalar_type(), " and grid has ", grid.scalar_type());
  TORCH_CHECK(padding >= 0 && padding <= 2, op, ": padding_mode must be zeros (0), border (1) or reflection (2), got ",
              padding);
  TORCH_CHECK(interpolation >= 0 && interpolation <= 2, op,
              ": interpolation_mode must be bilinear (0), nearest (1) or bicubic (2), got ", interpolation);
  const int64_t n = input.size(0), c = input.size(1), h = input.size(2), w = input.size(3);
  const int64_t ho = grid.size(1), wo = grid.size(2);
  const bool low = input.scalar_type() != c10::kFloat;
  const Tensor x = low ? input.to(c10::kFloat) : input;
  const Tensor g = low ? grid.to(c10::kFloat) : grid;
  const Tensor ix = SourceIndex(g.select(3, 0), w, padding, align_corners);  // [N, Ho, Wo]
  const Tensor iy = SourceIndex(g.select(3, 1), h, padding, align_corners);
  const Tensor flat = x.reshape({n, c, h * w});
  // The value of integer corner (cx, cy) for every output pixel, 0 outside the image: [N, C, Ho, Wo].
  auto corner = [&](const Tensor& cx, const Tensor& cy) {
    const Tensor inside = (cx >= 0) & (cx <= double(w - 1)) & (cy >= 0) & (cy <= double(h - 1));
    const Tensor lin = at::where(inside, cy * double(w) + cx, 0.0).to(c10::kLong);  // NaN / outside: 0
    const Tensor v = flat.gather(2, lin.view({n, 1, ho * wo}).expand({n, c, ho * wo})).view({n, c, ho, wo});
    return at::where(inside.unsqueeze(1), v, 0.0);
  };
  Tensor out;
  if (interpolation == 2) {
    const Tensor ux = Unnormalize(g.select(3, 0), w, align_corners), uy = Unnormalize(g.select(3, 1), h, align_corners);
    const Tensor x0 = at::floor(ux), y0 = at::floor(uy);
    const auto cx = CubicCoefficients(ux - x0), cy = CubicCoefficients(uy - y0);
    // a tap's integer coordinate padded on its own (zeros: as is, corner() gives 0 outside)
    auto tap = [&](const Tensor& c, int64_t size) { return padding == 0 ? c : SourcePad(c, size, padding, align_corners); };
    for (int64_t i = 0; i < 4; ++i) {
      const Tensor ty = tap(y0 + double(i - 1), h);
      Tensor row = corner(tap(x0 - 1.0, w), ty) * cx[0].unsqueeze(1);
      for (int64_t j = 1; j < 4; ++j) row = row + corner(tap(x0 + double(j - 1), w), ty) * cx[j].unsqueeze(1);
      out = i == 0 ? row * cy[0].unsqueeze(1) : out + row * cy[i].unsqueeze(1);
    }
  } else if (interpolation == 1) {
    // round half to even, as the CPU's nearbyint. The grid's gradient is 0 (PyTorch returns zeros, not
    // None): a term of value 0 whose derivative is round's (0) keeps the grid in the graph.
    const Tensor rx = at::round(ix), ry = at::round(iy);
    const Tensor tie = at::nan_to_num(rx - rx.detach() + (ry - ry.detach()), 0.0, 0.0, 0.0);
    out = corner(rx, ry) + tie.unsqueeze(1);
  } else {
    const Tensor x0 = at::floor(ix), y0 = at::floor(iy), x1 = x0 + 1, y1 = y0 + 1;
    const Tensor nw = (x1 - ix) * (y1 - iy), ne = (ix - x0) * (y1 - iy);
    const Tensor sw = (x1 - ix) * (iy - y0), se = (ix - x0) * (iy - y0);
    out = corner(x0, y0) * nw.unsqueeze(1) + corner(x1, y0) * ne.unsqueeze(1) + corner(x0, y1) * sw.unsqueeze(1) +
          corner(x1, y1) * se.unsqueeze(1);
  }
  return low ? out.to(input.scalar_type()) : out;
}

}  // namespace
}  // namespace torch_ops_nn

NPU_ATEN_LIBRARY_IMPL(m) { m.impl("grid_sampler_2d", TORCH_FN(torch_ops_nn::grid_sampler_2d_npu)); }
NPU_ATEN_AUTOGRAD_LIBRARY_IMPL(m) {
  m.impl("grid_sampler_2d", TORCH_FN(torch_ops_nn::grid_sampler_2d_npu));
}
