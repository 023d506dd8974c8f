// upsample_nearest2d (+ backward) on npu for integer scale factors, the common case (UNet / FPN /
// YOLO decoders): out[n, c, h*sh + i, w*sw + j] = x[n, c, h, w] is one device copy from a view of x
// with zero strides over (i, j); the backward sums each sh x sw block with the reduction kernel.
// Other ratios take the CPU fallback (same policy as an op without a kernel).
#include <ATen/core/Tensor.h>
#include <ATen/native/Resize.h>
#include <torch/library.h>

#include <cmath>
#include <optional>

#include "aten/op_common.h"
#include "core/cpu_fallback.h"

namespace torch_ops_nn {
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

at::Tensor& upsample_nearest2d_out_npu(const at::Tensor& self, c10::SymIntArrayRef output_size,
                                       std::optional<double> scales_h, std::optional<double> scales_w, at::Tensor& out) {
  const char* op = "upsample_nearest2d";
  CheckSameNpuDevice(op, {{"self", &self}, {"out", &out}});
  TORCH_CHECK(self.dim() == 4, op, ": expected a 4-D input (N, C, H, W), got ", self.dim(), "-D");
  TORCH_CHECK(output_size.size() == 2, op, ": output_size must have 2 elements, got ", output_size.size());
  const int64_t oh = output_size[0].expect_int(), ow = output_size[1].expect_int();
  TORCH_CHECK(oh > 0 && ow > 0, op, ": output size must be positive, got (", oh, ", ", ow, ")");
  const auto fh = IntegerFactor(self.size(2), oh, scales_h), fw = IntegerFactor(self.size(3), ow, scales_w);
  if (!fh || !fw) {
    CallCpuFallback("aten::upsample_nearest2d", "out", {self, output_size, scales_h, scales_w, out});
    return out;
  }
  at::native::resize_output(out, {self.size(0), self.size(1), oh, ow});
  if (out.numel() == 0) return out;
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
  TORCH_CHECK(input_size.size() == 4 && output_size.size() == 2, op,
              ": input_size must have 4 elements and output_size 2, got ", input_size.size(), " and ", output_size.size());
  const int64_t n = input_size[0].expect_int(), c = input_size[1].expect_int(), h = input_size[2].expect_int(),
                w = input_size[3].expect_int();
  const int64_t oh = output_size[0].expect_int(), ow = output_size[1].expect_int();
  TORCH_CHECK(grad.dim() == 4 && grad.size(0) == n && grad.size(1) == c && grad.size(2) == oh && grad.size(3) == ow, op,
              ": grad_output of shape ", grad.sizes(), " does not match the output shape [", n, ", ", c, ", ", oh, ", ",
              ow, "]");
  const auto fh = IntegerFactor(h, oh, scales_h), fw = IntegerFactor(w, ow, scales_w);
  if (!fh || !fw) {
    CallCpuFallback("aten::upsample_nearest2d_backward", "grad_input",
                    {grad, output_size, input_size, scales_h, scales_w, grad_input});
    return grad_input;
  }
  at::native::resize_output(grad_input, {n, c, h, w});
  if (grad_input.numel() == 0) return grad_input;
  grad_input.copy_(BlockView(grad, *fh, *fw, false).sum({3, 5}));
  return grad_input;
}

at::Tensor upsample_nearest2d_backward_npu(const at::Tensor& grad, c10::SymIntArrayRef output_size,
                                           c10::SymIntArrayRef input_size, std::optional<double> scales_h,
                                           std::optional<double> scales_w) {
  at::Tensor gi = at::empty({0}, grad.options());
  return upsample_nearest2d_backward_out_npu(grad, output_size, input_size, scales_h, scales_w, gi);
}

}  // namespace
}  // namespace torch_ops_nn

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("upsample_nearest2d", TORCH_FN(torch_ops_nn::upsample_nearest2d_npu));
  m.impl("upsample_nearest2d.out", TORCH_FN(torch_ops_nn::upsample_nearest2d_out_npu));
  m.impl("upsample_nearest2d_backward", TORCH_FN(torch_ops_nn::upsample_nearest2d_backward_npu));
  m.impl("upsample_nearest2d_backward.grad_input", TORCH_FN(torch_ops_nn::upsample_nearest2d_backward_out_npu));
}
