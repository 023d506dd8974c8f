// 3-D convolution (nn.Conv3d: video models such as torchvision's r3d_18) on npu, as a composition of
// the 2-D cube convolution: with the input zero-padded in depth, output frame t of depth tap k reads
// input frame t * sd + k * dd, so
//   y[:, :, t] = sum_k conv2d(xp[:, :, t * sd + k * dd], w[:, :, k])
// and every tap is one batched conv2d over all N * Do output frames (the frames of tap k gathered by a
// strided depth view). The backward is the 2-D backward of each tap: grad_weight[:, :, k] from tap k's
// frames, grad_input the tap gradients added back at their frames.
//
// The transposed 3-D convolution (nn.ConvTranspose3d) scatters instead: input frame t through depth tap k
// lands on frame t * sd + k * dd of the uncropped output (depth (D - 1) * sd + dd * (kd - 1) + 1 plus the
// output padding), so
//   y_full[:, :, t * sd + k * dd] += conv_transpose2d(x[:, :, t], w[:, :, k]),   y = y_full[pd : -pd]
// with every tap one batched conv_transpose2d over all N * D input frames, added into a strided depth view
// of y_full. Its backward: grad_output zero-padded back to y_full's depth, each tap's frames through the
// 2-D transposed backward; grad_input is the sum over taps, grad_weight[:, :, k] tap k's.
#include <ATen/ATen.h>

#include "aten/conv3d.h"
#include "aten/op_common.h"

namespace torch_ops_nn {

namespace {

struct Conv3dGeom {
  int64_t n, c, d, h, w, co, kd, sd, pd, dd, dout;
};

int64_t At3(c10::IntArrayRef v, size_t i, const char* op, const char* name) {
  TORCH_CHECK(v.size() == 3 || v.size() == 1, op, ": ", name, " must have 3 values for a 3-D convolution, got ",
              v.size());
  return v.size() == 3 ? v[i] : v[0];
}

Conv3dGeom Check3d(const char* op, const at::Tensor& x, const at::Tensor& w, c10::IntArrayRef stride,
                   c10::IntArrayRef padding, c10::IntArrayRef dilation, int64_t groups) {
  TORCH_CHECK(x.dim() == 5, op, ": expected a 5-D input [N, C, D, H, W], got ", x.dim(), "-D of shape ", x.sizes());
  TORCH_CHECK(w.dim() == 5, op, ": expected a 5-D weight [Cout, C/groups, kd, kh, kw], got ", w.dim(),
              "-D of shape ", w.sizes());
  TORCH_CHECK(groups >= 1 && x.size(1) == w.size(1) * groups, op, ": input has ", x.size(1),
              " channels but weight of shape ", w.sizes(), " with groups=", groups, " expects ", w.size(1) * groups);
  Conv3dGeom g{x.size(0), x.size(1), x.size(2), x.size(3), x.size(4), w.size(0), w.size(2),
               At3(stride, 0, op, "stride"), At3(padding, 0, op, "padding"), At3(dilation, 0, op, "dilation"), 0};
  TORCH_CHECK(g.sd >= 1 && g.dd >= 1 && g.pd >= 0, op, ": depth stride ", g.sd, " and dilation ", g.dd,
              " must be >= 1 and padding ", g.pd, " >= 0");
  const int64_t span = g.dd * (g.kd - 1) + 1;
  TORCH_CHECK(g.d + 2 * g.pd >= span, op, ": the padded input depth ", g.d + 2 * g.pd,
              " is smaller than the dilated kernel depth ", span);
  g.dout = (g.d + 2 * g.pd - span) / g.sd + 1;
  return g;
}

std::vector<int64_t> Tail2(c10::IntArrayRef v) {
  return v.size() == 3 ? std::vector<int64_t>{v[1], v[2]} : std::vector<int64_t>{v[0], v[0]};
}

// Depth-padded input and the view of tap k's frames, as [N * Do, C, H, W] (a copy).
at::Tensor PadDepth(const at::Tensor& x, int64_t pd) {
  return pd == 0 ? x : at::constant_pad_nd(x, {0, 0, 0, 0, pd, pd}, 0);
}
at::Tensor TapView(const at::Tensor& xp, const Conv3dGeom& g, int64_t k) {
  return xp.slice(2, k * g.dd, k * g.dd + (g.dout - 1) * g.sd + 1, g.sd);  // [N, C, Do, H, W]
}
at::Tensor Frames(const at::Tensor& v) {  // [N, C, Do, H, W] -> [N * Do, C, H, W]
  return v.transpose(1, 2).reshape({v.size(0) * v.size(2), v.size(1), v.size(3), v.size(4)});
}

// Taps are summed in float for half / bfloat16 (each tap's 2-D result is rounded once, the sum not at
// every step), then rounded to the operands' dtype.
c10::ScalarType AccType(const at::Tensor& t) {
  return t.scalar_type() == at::kHalf || t.scalar_type() == at::kBFloat16 ? at::kFloat : t.scalar_type();
}

struct ConvT3dGeom {
  int64_t n, c, d, co, kd, sd, pd, dd, opd, dfull, dout;
};

// Shapes of a transposed 3-D convolution: weight [C, Co / groups, kd, kh, kw].
ConvT3dGeom CheckT3d(const char* op, const at::Tensor& x, const at::Tensor& w, c10::IntArrayRef stride,
                     c10::IntArrayRef padding, c10::IntArrayRef output_padding, c10::IntArrayRef dilation,
                     int64_t groups) {
  TORCH_CHECK(x.dim() == 5, op, ": expected a 5-D input [N, C, D, H, W], got ", x.dim(), "-D of shape ", x.sizes());
  TORCH_CHECK(w.dim() == 5, op, ": expected a 5-D weight [C, Cout/groups, kd, kh, kw], got ", w.dim(),
              "-D of shape ", w.sizes());
  TORCH_CHECK(groups >= 1 && x.size(1) == w.size(0), op, ": input has ", x.size(1),
              " channels but weight of shape ", w.sizes(), " expects ", w.size(0));
  ConvT3dGeom g{x.size(0), x.size(1), x.size(2), w.size(1) * groups, w.size(2), At3(stride, 0, op, "stride"),
                At3(padding, 0, op, "padding"), At3(dilation, 0, op, "dilation"),
                At3(output_padding, 0, op, "output_padding"), 0, 0};
  TORCH_CHECK(g.sd >= 1 && g.dd >= 1 && g.pd >= 0 && g.opd >= 0, op, ": depth stride ", g.sd, " and dilation ", g.dd,
              " must be >= 1, padding ", g.pd, " and output_padding ", g.opd, " >= 0");
  TORCH_CHECK(g.opd < g.sd || g.opd < g.dd, op, ": depth output_padding ", g.opd,
              " must be smaller than either the stride ", g.sd, " or the dilation ", g.dd);
  g.dfull = (g.d - 1) * g.sd + g.dd * (g.kd - 1) + 1 + g.opd;
  g.dout = g.dfull - 2 * g.pd;
  TORCH_CHECK(g.dout >= 1, op, ": the output depth (", g.d, " - 1) * ", g.sd, " - 2 * ", g.pd, " + ", g.dd, " * (",
              g.kd, " - 1) + ", g.opd, " + 1 = ", g.dout, " is too small");
  return g;
}

// Output frames of tap k in the uncropped output: [N, Co, D, H, W] with depth stride sd.
at::Tensor TapOut(const at::Tensor& yfull, const ConvT3dGeom& g, int64_t k) {
  return yfull.slice(2, k * g.dd, k * g.dd + (g.d - 1) * g.sd + 1, g.sd);
}

}  // namespace

at::Tensor ConvTranspose3dForward(const at::Tensor& x, const at::Tensor& w, const std::optional<at::Tensor>& bias,
                                  c10::IntArrayRef stride, c10::IntArrayRef padding, c10::IntArrayRef output_padding,
                                  c10::IntArrayRef dilation, int64_t groups) {
  const char* op = "conv_transpose3d";
  const ConvT3dGeom g = CheckT3d(op, x, w, stride, padding, output_padding, dilation, groups);
  const auto s2 = Tail2(stride), p2 = Tail2(padding), d2 = Tail2(dilation), op2 = Tail2(output_padding);
  const at::Tensor xf = Frames(x);  // [N * D, C, H, W]
  at::Tensor yfull;
  for (int64_t k = 0; k < g.kd; ++k) {
    at::Tensor yk = at::convolution(xf, w.select(2, k), std::nullopt, s2, p2, d2, true, op2, groups);
    if (!yfull.defined())
      yfull = at::zeros({g.n, g.co, g.dfull, yk.size(2), yk.size(3)}, yk.options().dtype(AccType(yk)));
    TapOut(yfull, g, k).add_(yk.reshape({g.n, g.d, g.co, yk.size(2), yk.size(3)}).transpose(1, 2));
  }
  at::Tensor y = (g.pd == 0 ? yfull : yfull.narrow(2, g.pd, g.dout)).to(x.scalar_type()).contiguous();
  if (bias.has_value() && bias->defined()) y.add_(bias->reshape({1, g.co, 1, 1, 1}));
  return y;
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> ConvTranspose3dBackward(
    const at::Tensor& grad_output, const at::Tensor& x, const at::Tensor& w, c10::IntArrayRef stride,
    c10::IntArrayRef padding, c10::IntArrayRef output_padding, c10::IntArrayRef dilation, int64_t groups,
    std::array<bool, 3> mask) {
  const char* op = "conv_transpose3d_backward";
  const ConvT3dGeom g = CheckT3d(op, x, w, stride, padding, output_padding, dilation, groups);
  TORCH_CHECK(grad_output.dim() == 5 && grad_output.size(0) == g.n && grad_output.size(1) == g.co &&
                  grad_output.size(2) == g.dout,
              op, ": grad_output of shape ", grad_output.sizes(), " does not match the output's [", g.n, ", ", g.co,
              ", ", g.dout, ", ...]");
  const auto s2 = Tail2(stride), p2 = Tail2(padding), d2 = Tail2(dilation), op2 = Tail2(output_padding);
  const at::Tensor gfull = PadDepth(grad_output, g.pd);  // depth dfull
  const at::Tensor xf = Frames(x);
  at::Tensor gx, gw, gb;
  if (mask[1]) gw = at::empty(w.sizes(), w.options());
  for (int64_t k = 0; k < g.kd && (mask[0] || mask[1]); ++k) {
    auto [gxk, gwk, unused] = at::convolution_backward(Frames(TapOut(gfull, g, k)), xf, w.select(2, k), std::nullopt,
                                                       s2, p2, d2, true, op2, groups, {mask[0], mask[1], false});
    if (mask[1]) gw.select(2, k).copy_(gwk);
    if (mask[0]) {
      if (gx.defined()) gx.add_(gxk);
      else gx = gxk.to(AccType(gxk));
    }
  }
  if (mask[2]) gb = grad_output.sum({0, 2, 3, 4});
  if (mask[0])
    gx = gx.reshape({g.n, g.d, g.c, x.size(3), x.size(4)}).transpose(1, 2).to(x.scalar_type()).contiguous();
  return {gx, gw, gb};
}

at::Tensor Conv3dForward(const at::Tensor& x, const at::Tensor& w, const std::optional<at::Tensor>& bias,
                         c10::IntArrayRef stride, c10::IntArrayRef padding, c10::IntArrayRef dilation, int64_t groups) {
  const char* op = "conv3d";
  const Conv3dGeom g = Check3d(op, x, w, stride, padding, dilation, groups);
  const auto s2 = Tail2(stride), p2 = Tail2(padding), d2 = Tail2(dilation);
  const at::Tensor xp = PadDepth(x, g.pd);
  at::Tensor acc;
  for (int64_t k = 0; k < g.kd; ++k) {
    at::Tensor yk = at::convolution(Frames(TapView(xp, g, k)), w.select(2, k), std::nullopt, s2, p2, d2, false,
                                    {0, 0}, groups);
    if (acc.defined()) acc.add_(yk);
    else acc = g.kd == 1 ? yk : yk.to(AccType(yk));
  }
  // [N * Do, Co, Ho, Wo] -> [N, Co, Do, Ho, Wo]
  at::Tensor y =
      acc.reshape({g.n, g.dout, g.co, acc.size(2), acc.size(3)}).transpose(1, 2).to(x.scalar_type()).contiguous();
  if (bias.has_value() && bias->defined()) y.add_(bias->reshape({1, g.co, 1, 1, 1}));
  return y;
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> Conv3dBackward(const at::Tensor& grad_output, const at::Tensor& x,
                                                              const at::Tensor& w, c10::IntArrayRef stride,
                                                              c10::IntArrayRef padding, c10::IntArrayRef dilation,
                                                              int64_t groups, std::array<bool, 3> mask) {
  const char* op = "conv3d_backward";
  const Conv3dGeom g = Check3d(op, x, w, stride, padding, dilation, groups);
  TORCH_CHECK(grad_output.dim() == 5 && grad_output.size(0) == g.n && grad_output.size(1) == g.co &&
                  grad_output.size(2) == g.dout,
              op, ": grad_output of shape ", grad_output.sizes(), " does not match the output's [", g.n, ", ", g.co,
              ", ", g.dout, ", ...]");
  const auto s2 = Tail2(stride), p2 = Tail2(padding), d2 = Tail2(dilation);
  const at::Tensor g2 = Frames(grad_output);  // [N * Do, Co, Ho, Wo]
  const at::Tensor xp = PadDepth(x, g.pd);
  at::Tensor gxp, gw, gb;
  if (mask[0]) gxp = at::zeros(xp.sizes(), x.options().dtype(AccType(x)));
  if (mask[1]) gw = at::empty(w.sizes(), w.options());
  for (int64_t k = 0; k < g.kd && (mask[0] || mask[1]); ++k) {
    const at::Tensor xk = Frames(TapView(xp, g, k));
    auto [gxk, gwk, unused] = at::convolution_backward(g2, xk, w.select(2, k), std::nullopt, s2, p2, d2, false,
                                                       {0, 0}, groups, {mask[0], mask[1], false});
    if (mask[1]) gw.select(2, k).copy_(gwk);
    if (mask[0]) {
      at::Tensor back = gxk.reshape({g.n, g.dout, g.c, g.h, g.w}).transpose(1, 2);
      TapView(gxp, g, k).add_(back);
    }
  }
  if (mask[2]) gb = grad_output.sum({0, 2, 3, 4});
  at::Tensor gi;
  if (mask[0]) gi = (g.pd == 0 ? gxp : gxp.narrow(2, g.pd, g.d)).to(x.scalar_type()).contiguous();
  return {gi, gw, gb};
}

}  // namespace torch_ops_nn
