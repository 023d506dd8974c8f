// upsample_nearest2d (+ backward) on npu for integer scale factors, the common case (UNet / FPN /
// YOLO decoders): out[n, c, h*sh + i, w*sw + j] = x[n, c, h, w] is one device copy from a view of x
// with zero strides over (i, j); the backward sums each sh x sw block with the reduction kernel.
// Other ratios, and nearest-exact at any ratio, gather through index maps (PyTorch's nearest_idx /
// nearest_exact_idx rules, computed on the host in float as the CPU does): one index_select per dim,
// the backward one index_add per dim.
//
// upsample_bilinear2d (+ backward), any sizes and scales, align_corners either way: bilinear
// interpolation is separable, so the forward is, per spatial dim, two index_select gathers of the
// neighbour rows/columns weighted by their lambdas (the elementwise kernels), and the backward two
// index_add scatters per dim into zeros (deterministic). The indices and lambdas follow PyTorch's CPU
// rule, computed on the host in float as the CPU does (ATen/native/UpSample.h): scale = (in - 1) /
// (out - 1) with align_corners, else 1 / scale_factor when given, else in / out; source = scale * dst
// (align_corners) or max(scale * (dst + 0.5) - 0.5, 0); i0 = min(floor(source), in - 1), lambda1 =
// clamp(source - i0, 0, 1), i1 = i0 + 1 unless i0 is the last. float16/bfloat16 compute in float and
// round once, as the CPU does.
#include <ATen/core/Tensor.h>
#include <ATen/TensorOperators.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/index_add.h>
#include <ATen/ops/index_select.h>
#include <ATen/ops/zeros.h>
#include <ATen/native/Resize.h>
#include <torch/library.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <vector>
#include <optional>

#include "aten/kernel_launch.h"
#include "aten/op_common.h"
#include "interp.h"

namespace torch_ops_nn {

TORCH_OPS_NN_REGISTER_KERNEL(interp2d_kernel);

namespace {

// The integer factor out / in when nearest indexing with this scale is block replication.
std::optional<int64_t> IntegerFactor(int64_t in, int64_t out, std::optional<double> scale) {
  if (in <= 0 || out <= 0 || out % in != 0) return std::nullopt;
  const int64_t f = out / in;
  // PyTorch: src = floor(dst * (scale ? 1 / scale : in / out)).
  if (scale && *scale > 0 && std::fabs(1.0 / *scale - 1.0 / double(f)) > 0) return std::nullopt;
  return f;
}

at::Tensor BlockView(const at::Tensor& t, int64_t fh, int64_t fw, bool replicate) {
  // [N, C, H, fh, W, fw] over t ([N, C, H, W] when replicate, else [N, C, H*fh, W*fw]).
  const auto s = t.strides();
  if (replicate) return t.as_strided({t.size(0), t.size(1), t.size(2), fh, t.size(3), fw}, {s[0], s[1], s[2], 0, s[3], 0});
  return t.as_strided({t.size(0), t.size(1), t.size(2) / fh, fh, t.size(3) / fw, fw},
                      {s[0], s[1], s[2] * fh, s[2], s[3] * fw, s[3]});
}

// The sizes of an upsampling backward ([N, C, H, W] input, [OH, OW] output), checked against grad_output.
std::array<int64_t, 6> BackwardSizes(const char* op, const at::Tensor& grad, c10::SymIntArrayRef output_size,
                                     c10::SymIntArrayRef input_size) {
  TORCH_CHECK(input_size.size() == 4 && output_size.size() == 2, op,
              ": input_size must have 4 elements and output_size 2, got ", input_size.size(), " and ", output_size.size());
  const int64_t n = input_size[0].expect_int(), c = input_size[1].expect_int(), h = input_size[2].expect_int(),
                w = input_size[3].expect_int();
  const int64_t oh = output_size[0].expect_int(), ow = output_size[1].expect_int();
  TORCH_CHECK(grad.dim() == 4 && grad.size(0) == n && grad.size(1) == c && grad.size(2) == oh && grad.size(3) == ow, op,
              ": grad_output of shape ", grad.sizes(), " does not match the output shape [", n, ", ", c, ", ", oh, ", ",
              ow, "]");
  return {n, c, h, w, oh, ow};
}

// Source index of every output position along one dim (PyTorch's nearest_idx / nearest_exact_idx).
// `shortcut`: out == in copies and out == 2 * in halves whatever the scale, as the CPU's 1-D / 2-D nearest
// kernels do; its 3-D kernel always applies the scale (scale_factor 1.1 on size 5 is not a copy there).
at::Tensor NearestMap(int64_t in, int64_t out, std::optional<double> scale, bool exact, c10::Device dev,
                      bool shortcut = true) {
  at::Tensor idx = at::empty({out}, at::TensorOptions().dtype(c10::kLong));
  int64_t* p = idx.data_ptr<int64_t>();
  const float s = scale && *scale > 0 ? static_cast<float>(1.0 / *scale) : static_cast<float>(in) / static_cast<float>(out);
  for (int64_t o = 0; o < out; ++o) {
    if (!exact && shortcut && out == in) p[o] = o;
    else if (!exact && shortcut && out == 2 * in) p[o] = o >> 1;
    else {
      const float src = exact ? (static_cast<float>(o) + 0.5f) * s : static_cast<float>(o) * s;
      p[o] = std::min(static_cast<int64_t>(std::floor(src)), in - 1);
    }
  }
  return idx.to(dev, /*non_blocking=*/true);  // the copy task keeps the host table alive: no wait
}

// x [N, C, H, W] gathered to [N, C, oh, ow] through the nearest maps.
at::Tensor NearestGather(const at::Tensor& x, int64_t oh, int64_t ow, std::optional<double> sh,
                         std::optional<double> sw, bool exact) {
  at::Tensor y = at::index_select(x, 3, NearestMap(x.size(3), ow, sw, exact, x.device()));
  return at::index_select(y, 2, NearestMap(x.size(2), oh, sh, exact, x.device()));
}

// The adjoint: grad [N, C, oh, ow] summed back to [N, C, h, w].
at::Tensor NearestScatter(const at::Tensor& grad, int64_t h, int64_t w, std::optional<double> sh,
                          std::optional<double> sw, bool exact) {
  const at::Tensor g = grad.scalar_type() == c10::kFloat ? grad : grad.to(c10::kFloat);
  at::Tensor r = at::zeros({g.size(0), g.size(1), h, g.size(3)}, g.options());
  r.index_add_(2, NearestMap(h, g.size(2), sh, exact, g.device()), g);
  at::Tensor q = at::zeros({g.size(0), g.size(1), h, w}, g.options());
  return q.index_add_(3, NearestMap(w, g.size(3), sw, exact, g.device()), r);
}

// PyTorch's upsample meta check (every backend): only the batch dim may be empty ("Non-empty 4D data
// tensor expected"); a tensor with C = 0 is an error, not an empty result.
void CheckNonEmptyData(const char* op, const at::Tensor& self) {
  bool empty = false;
  for (int64_t d = 1; d < self.dim(); ++d) empty = empty || self.size(d) == 0;
  TORCH_CHECK(self.numel() != 0 || !empty, op, ": Non-empty ", self.dim(), "D data tensor expected but got a tensor with sizes ",
              self.sizes());
}

at::Tensor& upsample_nearest2d_out_npu(const at::Tensor& self, c10::SymIntArrayRef output_size,
                                       std::optional<double> scales_h, std::optional<double> scales_w, at::Tensor& out) {
  const char* op = "upsample_nearest2d";
  CheckSameNpuDevice(op, {{"self", &self}, {"out", &out}});
  TORCH_CHECK(self.dim() == 4, op, ": expected a 4-D input (N, C, H, W), got ", self.dim(), "-D");
  CheckNonEmptyData(op, self);
  TORCH_CHECK(output_size.size() == 2, op, ": output_size must have 2 elements, got ", output_size.size());
  const int64_t oh = output_size[0].expect_int(), ow = output_size[1].expect_int();
  TORCH_CHECK(oh > 0 && ow > 0, op, ": output size must be positive, got (", oh, ", ", ow, ")");
  const auto fh = IntegerFactor(self.size(2), oh, scales_h), fw = IntegerFactor(self.size(3), ow, scales_w);
  at::native::resize_output(out, {self.size(0), self.size(1), oh, ow});
  if (out.numel() == 0) return out;
  if (!fh || !fw) {
    TORCH_CHECK(self.size(2) > 0 && self.size(3) > 0, op, ": input sizes should be greater than 0, got ", self.sizes());
    out.copy_(NearestGather(self, oh, ow, scales_h, scales_w, false));
    return out;
  }
  BlockView(out, *fh, *fw, false).copy_(BlockView(self, *fh, *fw, true));
  return out;
}

at::Tensor upsample_nearest2d_npu(const at::Tensor& self, c10::SymIntArrayRef output_size,
                                  std::optional<double> scales_h, std::optional<double> scales_w) {
  // The input's layout, as the CPU kernel keeps it.
  at::Tensor out = at::empty({0}, self.options());
  if (self.dim() == 4 && output_size.size() == 2)
    out = at::empty({self.size(0), self.size(1), output_size[0].expect_int(), output_size[1].expect_int()},
                    self.options().memory_format(self.suggest_memory_format()));
  return upsample_nearest2d_out_npu(self, output_size, scales_h, scales_w, out);
}

at::Tensor& upsample_nearest2d_backward_out_npu(const at::Tensor& grad, c10::SymIntArrayRef output_size,
                                                c10::SymIntArrayRef input_size, std::optional<double> scales_h,
                                                std::optional<double> scales_w, at::Tensor& grad_input) {
  const char* op = "upsample_nearest2d_backward";
  CheckSameNpuDevice(op, {{"grad_output", &grad}, {"grad_input", &grad_input}});
  const auto [n, c, h, w, oh, ow] = BackwardSizes(op, grad, output_size, input_size);
  const auto fh = IntegerFactor(h, oh, scales_h), fw = IntegerFactor(w, ow, scales_w);
  at::native::resize_output(grad_input, {n, c, h, w});
  if (grad_input.numel() == 0) return grad_input;
  if (!fh || !fw) {
    grad_input.copy_(NearestScatter(grad, h, w, scales_h, scales_w, false));
    return grad_input;
  }
  grad_input.copy_(BlockView(grad, *fh, *fw, false).sum({3, 5}));
  return grad_input;
}

at::Tensor upsample_nearest2d_backward_npu(const at::Tensor& grad, c10::SymIntArrayRef output_size,
                                           c10::SymIntArrayRef input_size, std::optional<double> scales_h,
                                           std::optional<double> scales_w) {
  at::Tensor gi = at::empty({0}, grad.options());
  return upsample_nearest2d_backward_out_npu(grad, output_size, input_size, scales_h, scales_w, gi);
}


at::Tensor upsample_nearest_exact2d_npu(const at::Tensor& self, c10::SymIntArrayRef output_size,
                                        std::optional<double> scales_h, std::optional<double> scales_w) {
  const char* op = "_upsample_nearest_exact2d";
  CheckSameNpuDevice(op, {{"self", &self}});
  TORCH_CHECK(self.dim() == 4, op, ": expected a 4-D input (N, C, H, W), got ", self.dim(), "-D");
  CheckNonEmptyData(op, self);
  TORCH_CHECK(output_size.size() == 2, op, ": output_size must have 2 elements, got ", output_size.size());
  const int64_t oh = output_size[0].expect_int(), ow = output_size[1].expect_int();
  TORCH_CHECK(oh > 0 && ow > 0 && self.size(2) > 0 && self.size(3) > 0, op,
              ": input and output sizes should be greater than 0, got input ", self.sizes(), " and output (", oh,
              ", ", ow, ")");
  at::Tensor out = at::empty({self.size(0), self.size(1), oh, ow},
                             self.options().memory_format(self.suggest_memory_format()));
  if (out.numel() == 0) return out;
  return out.copy_(NearestGather(self, oh, ow, scales_h, scales_w, true));
}

at::Tensor upsample_nearest_exact2d_backward_npu(const at::Tensor& grad, c10::SymIntArrayRef output_size,
                                                 c10::SymIntArrayRef input_size, std::optional<double> scales_h,
                                                 std::optional<double> scales_w) {
  const char* op = "_upsample_nearest_exact2d_backward";
  CheckSameNpuDevice(op, {{"grad_output", &grad}});
  const auto [n, c, h, w, oh, ow] = BackwardSizes(op, grad, output_size, input_size);
  at::Tensor gi = at::empty({n, c, h, w}, grad.options());
  if (gi.numel() == 0) return gi;
  return gi.copy_(NearestScatter(grad, h, w, scales_h, scales_w, true));
}

// ---- bilinear / bicubic ---------------------------------------------------------------------------

// The taps of one dim: output o = sum_t w[t][o] * input[idx[t][o]] (2 taps bilinear, 4 bicubic).
struct TapMap {
  at::Tensor idx, w;      // device: int64 [taps, out], float [taps, out]
  bool identity = false;  // out == in: a copy
};

float SourceScale(int64_t in, int64_t out, bool align_corners, std::optional<double> scale) {
  if (align_corners) return out > 1 ? static_cast<float>(in - 1) / static_cast<float>(out - 1) : 0.0f;
  return scale && *scale > 0 ? static_cast<float>(1.0 / *scale) : static_cast<float>(in) / static_cast<float>(out);
}

// PyTorch's rules (ATen/native/UpSample.h) in float: bilinear clamps a negative source to 0 and takes
// i0, i0 + 1 (not past the end) with lambdas 1 - t, t; bicubic keeps the negative source and takes
// i0 - 1 .. i0 + 2 clamped into the row with the cubic convolution coefficients (A = -0.75) of t.
// The taps of one dim on the host: idx / w [taps][out] (row-major), or identity.
struct HostTaps {
  bool identity = false;
  int64_t taps = 0;
  std::vector<int64_t> idx;
  std::vector<float> w;
};

HostTaps ComputeTaps(int64_t in, int64_t out, bool align_corners, std::optional<double> scale, bool cubic,
                     bool backward) {
  HostTaps m;
  // Equal sizes copy, except the bicubic forward under a scale other than 1: the CPU applies the scale
  // there, yet its bicubic backward (and bilinear / trilinear both ways) copies. Kept for parity.
  m.identity = in == out && (backward || !cubic || align_corners || !scale || *scale <= 0 || *scale == 1.0);
  if (m.identity) return m;
  const int64_t taps = cubic ? 4 : 2;
  m.taps = taps;
  const float ratio = SourceScale(in, out, align_corners, scale);
  m.idx.resize(static_cast<size_t>(taps * out));
  m.w.resize(static_cast<size_t>(taps * out));
  int64_t* ip = m.idx.data();
  float* wp = m.w.data();
  const float A = -0.75f;
  auto conv1 = [&](float x) { return ((A + 2) * x - (A + 3)) * x * x + 1; };
  auto conv2 = [&](float x) { return ((A * x - 5 * A) * x + 8 * A) * x - 4 * A; };
  for (int64_t o = 0; o < out; ++o) {
    // scale * (dst + 0.5) - 0.5 with one rounding, as the CPU's vectorized builds compute it (their
    // compiler fuses it into an FMA): a source just past a pixel keeps its tiny lambda (an inf there
    // stays inf instead of 0 * inf = NaN), and wide rows do not drift by an ulp of the coordinate.
    float src = align_corners ? ratio * static_cast<float>(o) : std::fma(ratio, static_cast<float>(o) + 0.5f, -0.5f);
    if (!cubic && !align_corners && src < 0.0f) src = 0.0f;
    const int64_t i0 = std::min(static_cast<int64_t>(std::floor(src)), in - 1);
    const float t = std::min(std::max(src - static_cast<float>(i0), 0.0f), 1.0f);
    if (!cubic) {
      ip[o] = i0;
      ip[out + o] = i0 + (i0 < in - 1 ? 1 : 0);
      wp[o] = 1.0f - t;
      wp[out + o] = t;
    } else {
      const float c[4] = {conv2(t + 1.0f), conv1(t), conv1(1.0f - t), conv2(1.0f - t + 1.0f)};
      for (int64_t k = 0; k < 4; ++k) {
        ip[k * out + o] = std::max<int64_t>(std::min<int64_t>(i0 - 1 + k, in - 1), 0);
        wp[k * out + o] = c[k];
      }
    }
  }
  return m;
}

TapMap MakeTapMap(int64_t in, int64_t out, bool align_corners, std::optional<double> scale, bool cubic,
                  c10::Device dev, bool backward = false) {
  const HostTaps h = ComputeTaps(in, out, align_corners, scale, cubic, backward);
  TapMap m;
  m.identity = h.identity;
  if (m.identity) return m;
  at::Tensor idx = at::empty({h.taps, out}, at::TensorOptions().dtype(c10::kLong));
  at::Tensor wt = at::empty({h.taps, out}, at::TensorOptions().dtype(c10::kFloat));
  std::copy(h.idx.begin(), h.idx.end(), idx.data_ptr<int64_t>());
  std::copy(h.w.begin(), h.w.end(), wt.data_ptr<float>());
  m.idx = idx.to(dev, /*non_blocking=*/true);  // host tables: the copy tasks keep them alive
  m.w = wt.to(dev, /*non_blocking=*/true);
  return m;
}

// The forward in one launch of interp2d_kernel (interp.h) for a contiguous NCHW input and output.
// False when the tables do not fit in UB (very wide rows): the caller composes the op.
bool InterpKernel(const char* op, const at::Tensor& x, const at::Tensor& out, const HostTaps& th, const HostTaps& tw) {
  const int64_t planes = x.size(0) * x.size(1), h = x.size(2), w = x.size(3), oh = out.size(2), ow = out.size(3);
  if (h > INT32_MAX || w > INT32_MAX || oh > INT32_MAX || ow > INT32_MAX) return false;
  const c10::DeviceIndex dev = x.device().index();
  const uint32_t taps_h = th.identity ? 1 : uint32_t(th.taps), taps_w = tw.identity ? 1 : uint32_t(tw.taps);
  const auto t = npu_kernels::interp_tiling(uint64_t(planes), uint32_t(h), uint32_t(w), uint32_t(oh), uint32_t(ow),
                                            taps_h, taps_w, uint32_t(x.element_size()), SocInfoFor(dev));
  if (!t.ok) return false;
  // W tables for kp rows of a tile: byte offsets into the float tile and the weights, per tap.
  const int64_t tile = int64_t(t.kp) * t.owp;
  at::Tensor woff = at::zeros({int64_t(taps_w), tile}, at::TensorOptions().dtype(c10::kInt));
  at::Tensor wwt = at::zeros({int64_t(taps_w), tile}, at::TensorOptions().dtype(c10::kFloat));
  int32_t* op_ = woff.data_ptr<int32_t>();
  float* wp_ = wwt.data_ptr<float>();
  for (int64_t tap = 0; tap < int64_t(taps_w); ++tap)
    for (int64_t r = 0; r < int64_t(t.kp); ++r)
      for (int64_t o = 0; o < ow; ++o) {
        const int64_t i = tw.identity ? o : tw.idx[size_t(tap * ow + o)];
        op_[tap * tile + r * t.owp + o] = static_cast<int32_t>((r * t.wp + i) * 4);
        wp_[tap * tile + r * t.owp + o] = tw.identity ? 1.0f : tw.w[size_t(tap * ow + o)];
      }
  at::Tensor hidx = at::zeros({int64_t(taps_h), int64_t(t.ohp)}, at::TensorOptions().dtype(c10::kInt));
  at::Tensor hwt = at::zeros({int64_t(taps_h), int64_t(t.ohp)}, at::TensorOptions().dtype(c10::kFloat));
  for (int64_t tap = 0; tap < int64_t(taps_h); ++tap)
    for (int64_t o = 0; o < oh; ++o) {
      hidx.data_ptr<int32_t>()[tap * t.ohp + o] = static_cast<int32_t>(th.identity ? o : th.idx[size_t(tap * oh + o)]);
      hwt.data_ptr<float>()[tap * t.ohp + o] = th.identity ? 1.0f : th.w[size_t(tap * oh + o)];
    }
  // Host tables: the copy tasks keep them alive, no wait.
  const at::Tensor d_woff = woff.to(x.device(), true), d_wwt = wwt.to(x.device(), true),
                   d_hidx = hidx.to(x.device(), true), d_hwt = hwt.to(x.device(), true);
  using Fn = void (*)(uint8_t*, uint8_t*, uint8_t*, uint8_t*, uint8_t*, uint8_t*, uint8_t*);
  Fn kernel = PickFloatKernel<Fn>(op, x.scalar_type(), &interp2d_kernel_float, &interp2d_kernel_half,
                                  &interp2d_kernel_bf16);
  KernelLaunch launch{"interp2d_kernel", ascendc_host::CoreType::AIV, t.block_dim, dev};
  if (LogDebugEnabled())
    launch.detail = std::string(op) + " " + DescribeForLog({{"self", &x}}) + " -> " + std::to_string(oh) + "x" +
                    std::to_string(ow) + " taps " + std::to_string(taps_h) + "x" + std::to_string(taps_w) +
                    " planes/tile=" + std::to_string(t.kp) + " rows/item=" + std::to_string(t.row_chunk);
  LaunchKernel(std::move(launch), kernel, t, x.data_ptr(), out.data_ptr(), d_woff.data_ptr(), d_wwt.data_ptr(),
               d_hidx.data_ptr(), d_hwt.data_ptr());
  return true;
}

// Weights of dim `d` shaped to broadcast over an `ndim`-D tensor ([N, C, rows, cols], [N, C, D, H, W]).
at::Tensor Along(const at::Tensor& l, int64_t d, int64_t ndim) {
  std::vector<int64_t> shape(static_cast<size_t>(ndim - d), 1);
  shape[0] = -1;
  return l.view(shape);
}

// x interpolated along dim d (float result).
at::Tensor InterpDim(const at::Tensor& x, int64_t d, const TapMap& m) {
  const int64_t nd = x.dim();
  at::Tensor a = at::index_select(x, d, m.idx[0]) * Along(m.w[0], d, nd);
  for (int64_t t = 1; t < m.idx.size(0); ++t) a.add_(at::index_select(x, d, m.idx[t]) * Along(m.w[t], d, nd));
  return a;
}

// The adjoint of InterpDim: g (float, size out along d) scattered back to size `in` along d.
at::Tensor InterpDimBackward(const at::Tensor& g, int64_t d, int64_t in, const TapMap& m) {
  std::vector<int64_t> size = g.sizes().vec();
  size[d] = in;
  at::Tensor r = at::zeros(size, g.options());
  for (int64_t t = 0; t < m.idx.size(0); ++t) r.index_add_(d, m.idx[t], g * Along(m.w[t], d, g.dim()));
  return r;
}

void CheckBilinearSizes(const char* op, int64_t h, int64_t w, int64_t oh, int64_t ow) {
  TORCH_CHECK(h > 0 && w > 0 && oh > 0 && ow > 0, op, ": input and output sizes should be greater than 0, but got ",
              "input (H: ", h, ", W: ", w, ") output (H: ", oh, ", W: ", ow, ")");
}

at::Tensor& InterpOut(const char* op, bool cubic, const at::Tensor& self, c10::SymIntArrayRef output_size,
                      bool align_corners, std::optional<double> scales_h, std::optional<double> scales_w,
                      at::Tensor& out) {
  CheckSameNpuDevice(op, {{"self", &self}, {"out", &out}});
  TORCH_CHECK(self.dim() == 4, op, ": expected a 4-D input (N, C, H, W), got ", self.dim(), "-D");
  CheckNonEmptyData(op, self);
  TORCH_CHECK(output_size.size() == 2, op, ": output_size must have 2 elements, got ", output_size.size());
  CheckFloatDtype(op, "self", self);
  const int64_t h = self.size(2), w = self.size(3);
  const int64_t oh = output_size[0].expect_int(), ow = output_size[1].expect_int();
  CheckBilinearSizes(op, h, w, oh, ow);
  at::native::resize_output(out, {self.size(0), self.size(1), oh, ow});
  if (out.numel() == 0) return out;
  if (self.is_contiguous() && out.is_contiguous() && out.scalar_type() == self.scalar_type()) {
    const HostTaps th = ComputeTaps(h, oh, align_corners, scales_h, cubic, false);
    const HostTaps tw = ComputeTaps(w, ow, align_corners, scales_w, cubic, false);
    if (InterpKernel(op, self, out, th, tw)) return out;
  }
  const TapMap mw = MakeTapMap(w, ow, align_corners, scales_w, cubic, self.device());
  const TapMap mh = MakeTapMap(h, oh, align_corners, scales_h, cubic, self.device());
  at::Tensor t = mw.identity ? self : InterpDim(self, 3, mw);
  if (!mh.identity) t = InterpDim(t, 2, mh);
  out.copy_(t);
  return out;
}

at::Tensor Interp(const char* op, bool cubic, const at::Tensor& self, c10::SymIntArrayRef output_size,
                  bool align_corners, std::optional<double> scales_h, std::optional<double> scales_w) {
  // The input's layout, as the CPU kernel keeps it.
  at::Tensor out = at::empty({0}, self.options());
  if (self.dim() == 4 && output_size.size() == 2)
    out = at::empty({self.size(0), self.size(1), output_size[0].expect_int(), output_size[1].expect_int()},
                    self.options().memory_format(self.suggest_memory_format()));
  return InterpOut(op, cubic, self, output_size, align_corners, scales_h, scales_w, out);
}

at::Tensor& InterpBackwardOut(const char* op, bool cubic, const at::Tensor& grad, c10::SymIntArrayRef output_size,
                              c10::SymIntArrayRef input_size, bool align_corners, std::optional<double> scales_h,
                              std::optional<double> scales_w, at::Tensor& grad_input) {
  CheckSameNpuDevice(op, {{"grad_output", &grad}, {"grad_input", &grad_input}});
  CheckFloatDtype(op, "grad_output", grad);
  const auto [n, c, h, w, oh, ow] = BackwardSizes(op, grad, output_size, input_size);
  CheckBilinearSizes(op, h, w, oh, ow);
  at::native::resize_output(grad_input, {n, c, h, w});
  if (grad_input.numel() == 0) return grad_input;
  const TapMap mw = MakeTapMap(w, ow, align_corners, scales_w, cubic, grad.device(), true);
  const TapMap mh = MakeTapMap(h, oh, align_corners, scales_h, cubic, grad.device(), true);
  at::Tensor g = grad.scalar_type() == c10::kFloat ? grad : grad.to(c10::kFloat);
  if (!mh.identity) g = InterpDimBackward(g, 2, h, mh);
  if (!mw.identity) g = InterpDimBackward(g, 3, w, mw);
  grad_input.copy_(g);
  return grad_input;
}

// The registered forms: (bilinear, bicubic) x (functional, out=), forward and backward.
#define TORCH_OPS_NN_INTERP_OPS(NAME, CUBIC)                                                                        \
  at::Tensor upsample_##NAME##2d_npu(const at::Tensor& self, c10::SymIntArrayRef output_size, bool align_corners,   \
                                     std::optional<double> sh, std::optional<double> sw) {                          \
    return Interp("upsample_" #NAME "2d", CUBIC, self, output_size, align_corners, sh, sw);                         \
  }                                                                                                                 \
  at::Tensor& upsample_##NAME##2d_out_npu(const at::Tensor& self, c10::SymIntArrayRef output_size,                  \
                                          bool align_corners, std::optional<double> sh, std::optional<double> sw,   \
                                          at::Tensor& out) {                                                        \
    return InterpOut("upsample_" #NAME "2d", CUBIC, self, output_size, align_corners, sh, sw, out);                 \
  }                                                                                                                 \
  at::Tensor& upsample_##NAME##2d_backward_out_npu(const at::Tensor& grad, c10::SymIntArrayRef output_size,         \
                                                   c10::SymIntArrayRef input_size, bool align_corners,              \
                                                   std::optional<double> sh, std::optional<double> sw,              \
                                                   at::Tensor& grad_input) {                                        \
    return InterpBackwardOut("upsample_" #NAME "2d_backward", CUBIC, grad, output_size, input_size, align_corners,  \
                             sh, sw, grad_input);                                                                   \
  }                                                                                                                 \
  at::Tensor upsample_##NAME##2d_backward_npu(const at::Tensor& grad, c10::SymIntArrayRef output_size,              \
                                              c10::SymIntArrayRef input_size, bool align_corners,                   \
                                              std::optional<double> sh, std::optional<double> sw) {                 \
    at::Tensor gi = at::empty({0}, grad.options());                                                                 \
    return upsample_##NAME##2d_backward_out_npu(grad, output_size, input_size, align_corners, sh, sw, gi);         \
  }
TORCH_OPS_NN_INTERP_OPS(bilinear, false)
TORCH_OPS_NN_INTERP_OPS(bicubic, true)
#undef TORCH_OPS_NN_INTERP_OPS

// ---- 3-D: trilinear and nearest / nearest-exact on [N, C, D, H, W], per dim as above (PyTorch's rules
// per dim; the backward the adjoint per dim, in float, deterministic index_add scatters).
std::array<int64_t, 3> OutSize3(const char* op, const at::Tensor& self, c10::SymIntArrayRef output_size) {
  TORCH_CHECK(self.dim() == 5, op, ": expected a 5-D input (N, C, D, H, W), got ", self.dim(), "-D");
  CheckNonEmptyData(op, self);
  TORCH_CHECK(output_size.size() == 3, op, ": output_size must have 3 elements, got ", output_size.size());
  CheckFloatDtype(op, "self", self);
  const std::array<int64_t, 3> o{output_size[0].expect_int(), output_size[1].expect_int(), output_size[2].expect_int()};
  TORCH_CHECK(self.size(2) > 0 && self.size(3) > 0 && self.size(4) > 0 && o[0] > 0 && o[1] > 0 && o[2] > 0, op,
              ": input and output sizes should be greater than 0, but got input (D: ", self.size(2), ", H: ",
              self.size(3), ", W: ", self.size(4), ") output (D: ", o[0], ", H: ", o[1], ", W: ", o[2], ")");
  return o;
}

std::array<int64_t, 5> InSize3(const char* op, const at::Tensor& grad, c10::SymIntArrayRef output_size,
                               c10::SymIntArrayRef input_size) {
  TORCH_CHECK(input_size.size() == 5 && output_size.size() == 3, op,
              ": input_size must have 5 elements and output_size 3, got ", input_size.size(), " and ",
              output_size.size());
  std::array<int64_t, 5> in{};
  for (int i = 0; i < 5; ++i) in[i] = input_size[i].expect_int();
  TORCH_CHECK(grad.dim() == 5 && grad.size(0) == in[0] && grad.size(1) == in[1] &&
                  grad.size(2) == output_size[0].expect_int() && grad.size(3) == output_size[1].expect_int() &&
                  grad.size(4) == output_size[2].expect_int(),
              op, ": grad_output of shape ", grad.sizes(), " does not match the output size ", output_size);
  CheckFloatDtype(op, "grad_output", grad);
  return in;
}

at::Tensor upsample_trilinear3d_npu(const at::Tensor& self, c10::SymIntArrayRef output_size, bool align_corners,
                                    std::optional<double> sd, std::optional<double> sh, std::optional<double> sw) {
  const char* op = "upsample_trilinear3d";
  CheckSameNpuDevice(op, {{"self", &self}});
  const auto o = OutSize3(op, self, output_size);
  at::Tensor out = at::empty({self.size(0), self.size(1), o[0], o[1], o[2]},
                             self.options().memory_format(self.suggest_memory_format()));
  if (out.numel() == 0) return out;
  const std::optional<double> sc[3] = {sd, sh, sw};
  at::Tensor t = self;
  for (int64_t d = 4; d >= 2; --d) {
    const TapMap m = MakeTapMap(self.size(d), o[d - 2], align_corners, sc[d - 2], false, self.device());
    if (!m.identity) t = InterpDim(t, d, m);
  }
  return out.copy_(t);
}

at::Tensor upsample_trilinear3d_backward_npu(const at::Tensor& grad, c10::SymIntArrayRef output_size,
                                             c10::SymIntArrayRef input_size, bool align_corners,
                                             std::optional<double> sd, std::optional<double> sh,
                                             std::optional<double> sw) {
  const char* op = "upsample_trilinear3d_backward";
  CheckSameNpuDevice(op, {{"grad_output", &grad}});
  const auto in = InSize3(op, grad, output_size, input_size);
  at::Tensor gi = at::empty({in[0], in[1], in[2], in[3], in[4]}, grad.options());
  if (gi.numel() == 0) return gi;
  const std::optional<double> sc[3] = {sd, sh, sw};
  at::Tensor g = grad.scalar_type() == c10::kFloat ? grad : grad.to(c10::kFloat);
  for (int64_t d = 2; d <= 4; ++d) {
    const TapMap m = MakeTapMap(in[d], grad.size(d), align_corners, sc[d - 2], false, grad.device(), true);
    if (!m.identity) g = InterpDimBackward(g, d, in[d], m);
  }
  return gi.copy_(g);
}

at::Tensor Nearest3d(const char* op, const at::Tensor& self, c10::SymIntArrayRef output_size,
                     std::optional<double> sd, std::optional<double> sh, std::optional<double> sw, bool exact) {
  CheckSameNpuDevice(op, {{"self", &self}});
  const auto o = OutSize3(op, self, output_size);
  if (self.size(0) * self.size(1) == 0)
    return at::empty({self.size(0), self.size(1), o[0], o[1], o[2]}, self.options());
  const std::optional<double> sc[3] = {sd, sh, sw};
  at::Tensor t = self;
  for (int64_t d = 4; d >= 2; --d)
    if (exact || o[d - 2] != self.size(d) || (sc[d - 2] && *sc[d - 2] != 1.0))
      t = at::index_select(t, d, NearestMap(self.size(d), o[d - 2], sc[d - 2], exact, self.device(), false));
  // a new tensor even when every dim keeps its size (a functional op must not return its input)
  return t.is_same(self) ? self.clone() : t.contiguous(self.suggest_memory_format());
}

at::Tensor Nearest3dBackward(const char* op, const at::Tensor& grad, c10::SymIntArrayRef output_size,
                             c10::SymIntArrayRef input_size, std::optional<double> sd, std::optional<double> sh,
                             std::optional<double> sw, bool exact) {
  CheckSameNpuDevice(op, {{"grad_output", &grad}});
  const auto in = InSize3(op, grad, output_size, input_size);
  const std::optional<double> sc[3] = {sd, sh, sw};
  at::Tensor g = grad.scalar_type() == c10::kFloat ? grad : grad.to(c10::kFloat);
  for (int64_t d = 2; d <= 4 && g.numel() != 0; ++d) {
    std::vector<int64_t> size = g.sizes().vec();
    size[d] = in[d];
    // (the CPU's 3-D backward takes the 2-D shortcut rule, unlike its forward: kept for parity)
    g = at::zeros(size, g.options()).index_add_(d, NearestMap(in[d], grad.size(d), sc[d - 2], exact, grad.device()), g);
  }
  if (g.numel() == 0) g = at::zeros({in[0], in[1], in[2], in[3], in[4]}, g.options());
  return g.is_same(grad) ? grad.clone() : g.to(grad.scalar_type());
}

at::Tensor upsample_nearest3d_npu(const at::Tensor& self, c10::SymIntArrayRef output_size, std::optional<double> sd,
                                  std::optional<double> sh, std::optional<double> sw) {
  return Nearest3d("upsample_nearest3d", self, output_size, sd, sh, sw, false);
}
at::Tensor upsample_nearest_exact3d_npu(const at::Tensor& self, c10::SymIntArrayRef output_size,
                                        std::optional<double> sd, std::optional<double> sh, std::optional<double> sw) {
  return Nearest3d("_upsample_nearest_exact3d", self, output_size, sd, sh, sw, true);
}
at::Tensor upsample_nearest3d_backward_npu(const at::Tensor& grad, c10::SymIntArrayRef output_size,
                                           c10::SymIntArrayRef input_size, std::optional<double> sd,
                                           std::optional<double> sh, std::optional<double> sw) {
  return Nearest3dBackward("upsample_nearest3d_backward", grad, output_size, input_size, sd, sh, sw, false);
}
at::Tensor upsample_nearest_exact3d_backward_npu(const at::Tensor& grad, c10::SymIntArrayRef output_size,
                                                 c10::SymIntArrayRef input_size, std::optional<double> sd,
                                                 std::optional<double> sh, std::optional<double> sw) {
  return Nearest3dBackward("_upsample_nearest_exact3d_backward", grad, output_size, input_size, sd, sh, sw, true);
}

}  // namespace
}  // namespace torch_ops_nn

NPU_ATEN_LIBRARY_IMPL(m) {
  m.impl("upsample_nearest2d", TORCH_FN(torch_ops_nn::upsample_nearest2d_npu));
  m.impl("upsample_nearest2d.out", TORCH_FN(torch_ops_nn::upsample_nearest2d_out_npu));
  m.impl("upsample_nearest2d_backward", TORCH_FN(torch_ops_nn::upsample_nearest2d_backward_npu));
  m.impl("upsample_nearest2d_backward.grad_input", TORCH_FN(torch_ops_nn::upsample_nearest2d_backward_out_npu));
  m.impl("_upsample_nearest_exact2d", TORCH_FN(torch_ops_nn::upsample_nearest_exact2d_npu));
  m.impl("_upsample_nearest_exact2d_backward", TORCH_FN(torch_ops_nn::upsample_nearest_exact2d_backward_npu));
  m.impl("upsample_bilinear2d", TORCH_FN(torch_ops_nn::upsample_bilinear2d_npu));
  m.impl("upsample_bilinear2d.out", TORCH_FN(torch_ops_nn::upsample_bilinear2d_out_npu));
  m.impl("upsample_bilinear2d_backward", TORCH_FN(torch_ops_nn::upsample_bilinear2d_backward_npu));
  m.impl("upsample_bilinear2d_backward.grad_input", TORCH_FN(torch_ops_nn::upsample_bilinear2d_backward_out_npu));
  m.impl("upsample_bicubic2d", TORCH_FN(torch_ops_nn::upsample_bicubic2d_npu));
  m.impl("upsample_bicubic2d.out", TORCH_FN(torch_ops_nn::upsample_bicubic2d_out_npu));
  m.impl("upsample_bicubic2d_backward", TORCH_FN(torch_ops_nn::upsample_bicubic2d_backward_npu));
  m.impl("upsample_bicubic2d_backward.grad_input", TORCH_FN(torch_ops_nn::upsample_bicubic2d_backward_out_npu));
  m.impl("upsample_trilinear3d", TORCH_FN(torch_ops_nn::upsample_trilinear3d_npu));
  m.impl("upsample_trilinear3d_backward", TORCH_FN(torch_ops_nn::upsample_trilinear3d_backward_npu));
  m.impl("upsample_nearest3d", TORCH_FN(torch_ops_nn::upsample_nearest3d_npu));
  m.impl("upsample_nearest3d_backward", TORCH_FN(torch_ops_nn::upsample_nearest3d_backward_npu));
  m.impl("_upsample_nearest_exact3d", TORCH_FN(torch_ops_nn::upsample_nearest_exact3d_npu));
  m.impl("_upsample_nearest_exact3d_backward", TORCH_FN(torch_ops_nn::upsample_nearest_exact3d_backward_npu));
}
