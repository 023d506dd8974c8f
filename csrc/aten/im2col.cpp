// im2col / col2im (F.unfold / F.fold, each the other's backward) on npu, as device copies:
//   im2col: the zero-padded input seen through a strided view [N, C, kh, kw, oh, ow] (tap (i, j) of
//           output pixel (y, x) is padded pixel (y * sh + i * dh, x * sw + j * dw)), copied contiguous:
//           exactly the [N, C * kh * kw, oh * ow] column layout.
//   col2im: the adjoint: each tap's [N, C, oh, ow] plane added into the same strided window of a zero
//           padded output (kh * kw strided adds, in tap order as the CPU sums), the padding cropped.
// Argument checks follow PyTorch's (its messages, with the numbers).
#include <ATen/core/Tensor.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/zeros.h>
#include <torch/library.h>

#include <array>

#include "aten/op_common.h"

namespace torch_ops_nn {
namespace {

using at::Tensor;

struct Window {
  std::array<int64_t, 2> k, d, p, s;
};

Window CheckWindow(const char* op, at::IntArrayRef kernel, at::IntArrayRef dilation, at::IntArrayRef padding,
                   at::IntArrayRef stride) {
  TORCH_CHECK(kernel.size() == 2 && dilation.size() == 2 && padding.size() == 2 && stride.size() == 2, op,
              ": kernel_size, dilation, padding and stride must have 2 values each, got ", kernel.size(), ", ",
              dilation.size(), ", ", padding.size(), ", ", stride.size());
  Window w{{kernel[0], kernel[1]}, {dilation[0], dilation[1]}, {padding[0], padding[1]}, {stride[0], stride[1]}};
  TORCH_CHECK(w.k[0] > 0 && w.k[1] > 0, op, ": kernel size should be greater than zero, but got kernel_height: ", w.k[0],
              " kernel_width: ", w.k[1]);
  TORCH_CHECK(w.d[0] > 0 && w.d[1] > 0, op, ": dilation should be greater than zero, but got dilation_height: ",
              w.d[0], " dilation_width: ", w.d[1]);
  TORCH_CHECK(w.p[0] >= 0 && w.p[1] >= 0, op, ": padding should be non-negative, but got pad_height: ", w.p[0],
              " pad_width: ", w.p[1]);
  TORCH_CHECK(w.s[0] > 0 && w.s[1] > 0, op, ": stride should be greater than zero, but got stride_height: ", w.s[0],
              " stride_width: ", w.s[1]);
  return w;
}

int64_t Blocks(int64_t in, int64_t k, int64_t d, int64_t p, int64_t s) { return (in + 2 * p - (d * (k - 1) + 1)) / s + 1; }

// The [N, C, kh, kw, oh, ow] window view of a padded [N, C, Hp, Wp] tensor (contiguous).
Tensor WindowView(const Tensor& xp, const Window& w, int64_t oh, int64_t ow) {
  const auto st = xp.strides();
  return xp.as_strided({xp.size(0), xp.size(1), w.k[0], w.k[1], oh, ow},
                       {st[0], st[1], w.d[0] * st[2], w.d[1] * st[3], w.s[0] * st[2], w.s[1] * st[3]});
}

Tensor im2col_npu(const Tensor& self, at::IntArrayRef kernel, at::IntArrayRef dilation, at::IntArrayRef padding,
                  at::IntArrayRef stride) {
  const char* op = "im2col";
  CheckSameNpuDevice(op, {{"self", &self}});
  const Window w = CheckWindow(op, kernel, dilation, padding, stride);
  TORCH_CHECK((self.dim() == 3 || self.dim() == 4) && self.size(-1) > 0 && self.size(-2) > 0 && self.size(-3) > 0, op,
              ": expected a non-empty 3-D or 4-D input (C, H, W) or (N, C, H, W), got ", self.sizes());
  const bool batched = self.dim() == 4;
  const Tensor x = batched ? self : self.unsqueeze(0);
  const int64_t n = x.size(0), c = x.size(1), h = x.size(2), wd = x.size(3);
  const int64_t oh = Blocks(h, w.k[0], w.d[0], w.p[0], w.s[0]), ow = Blocks(wd, w.k[1], w.d[1], w.p[1], w.s[1]);
  TORCH_CHECK(oh >= 1 && ow >= 1, op, ": given input with spatial size (", h, ", ", wd, "), kernel_size (", w.k[0],
              ", ", w.k[1], "), dilation (", w.d[0], ", ", w.d[1], "), padding (", w.p[0], ", ", w.p[1],
              "), calculated shape of the array of sliding blocks as (", oh, ", ", ow, "), but its components must ",
              "be at least one.");
  Tensor xp = x;
  if (w.p[0] || w.p[1] || !x.is_contiguous()) {
    xp = at::zeros({n, c, h + 2 * w.p[0], wd + 2 * w.p[1]}, x.options());
    xp.narrow(2, w.p[0], h).narrow(3, w.p[1], wd).copy_(x);
  }
  Tensor cols = WindowView(xp, w, oh, ow).contiguous().view({n, c * w.k[0] * w.k[1], oh * ow});
  return batched ? cols : cols.squeeze(0);
}

Tensor& im2col_out(const Tensor& self, at::IntArrayRef kernel, at::IntArrayRef dilation, at::IntArrayRef padding,
                   at::IntArrayRef stride, Tensor& out) {
  return CopyToOutExact("im2col", im2col_npu(self, kernel, dilation, padding, stride), out);
}

Tensor col2im_npu(const Tensor& self, c10::SymIntArrayRef output_size, at::IntArrayRef kernel,
                  at::IntArrayRef dilation, at::IntArrayRef padding, at::IntArrayRef stride) {
  const char* op = "col2im";
  CheckSameNpuDevice(op, {{"self", &self}});
  const Window w = CheckWindow(op, kernel, dilation, padding, stride);
  TORCH_CHECK(output_size.size() == 2, op, ": output_size must have 2 values, got ", output_size.size());
  const int64_t h = output_size[0].expect_int(), wd = output_size[1].expect_int();
  TORCH_CHECK(h > 0 && wd > 0, op, ": output_size should be greater than zero, but got (", h, ", ", wd, ")");
  TORCH_CHECK((self.dim() == 2 || self.dim() == 3) && self.size(-1) > 0 && self.size(-2) > 0, op,
              ": expected a non-empty 2-D or 3-D input (C * kh * kw, L) or (N, C * kh * kw, L), got ", self.sizes());
  const bool batched = self.dim() == 3;
  const Tensor cols = batched ? self : self.unsqueeze(0);
  const int64_t taps = w.k[0] * w.k[1];
  TORCH_CHECK(cols.size(1) % taps == 0, op, ": expected size of input's dimension 1 to be divisible by the product of ",
              "kernel_size, but got input.size(1)=", cols.size(1), " and kernel_size=(", w.k[0], ", ", w.k[1], ")");
  const int64_t oh = Blocks(h, w.k[0], w.d[0], w.p[0], w.s[0]), ow = Blocks(wd, w.k[1], w.d[1], w.p[1], w.s[1]);
  TORCH_CHECK(oh >= 1 && ow >= 1 && cols.size(2) == oh * ow, op, ": given output_size=(", h, ", ", wd,
              "), kernel_size=(", w.k[0], ", ", w.k[1], "), dilation=(", w.d[0], ", ", w.d[1], "), padding=(", w.p[0],
              ", ", w.p[1], "), stride=(", w.s[0], ", ", w.s[1], "), expected size of input's dimension 2 to match ",
              "the calculated number of sliding blocks ", oh, " * ", ow, " = ", oh * ow, ", but got input.size(2)=",
              cols.size(2), ".");
  const int64_t n = cols.size(0), c = cols.size(1) / taps;
  Tensor outp = at::zeros({n, c, h + 2 * w.p[0], wd + 2 * w.p[1]}, cols.options());
  const Tensor planes = cols.reshape({n, c, w.k[0], w.k[1], oh, ow});
  const Tensor win = WindowView(outp, w, oh, ow);
  for (int64_t i = 0; i < w.k[0]; ++i)
    for (int64_t j = 0; j < w.k[1]; ++j) win.select(2, i).select(2, j).add_(planes.select(2, i).select(2, j));
  Tensor out = outp.narrow(2, w.p[0], h).narrow(3, w.p[1], wd);
  out = out.contiguous();
  return batched ? out : out.squeeze(0);
}

}  // namespace
}  // namespace torch_ops_nn

NPU_ATEN_LIBRARY_IMPL(m) {
  using namespace torch_ops_nn;
  m.impl("im2col", TORCH_FN(im2col_npu));
  m.impl("im2col.out", TORCH_FN(im2col_out));
  m.impl("col2im", TORCH_FN(col2im_npu));
}
