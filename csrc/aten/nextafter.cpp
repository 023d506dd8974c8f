// nextafter (torch.nextafter), which took the CPU fallback: the next representable value after self
// toward other, on the bits. Finite nonzero self steps its integer image by one, up in magnitude when
// other lies away from zero beyond it ((other > self) == (self > 0)), down otherwise (inf steps down to
// the largest finite value); a zero steps to the smallest subnormal with other's sign; self == other
// gives other (so nextafter(0, -0) is -0); NaN in either gives NaN. float32 steps on int32 images,
// float16 / bfloat16 on int16 ones; float64 takes the CPU fallback.
#include <ATen/ATen.h>
#include <torch/library.h>

#include <limits>

#include "aten/op_common.h"
#include "core/cpu_fallback.h"

namespace torch_ops_nn {
namespace {

using at::Tensor;

Tensor NextAfter(const char* op, const Tensor& self_in, const Tensor& other_in) {
  // A CPU 0-dim operand is a scalar (as in TensorIterator): its dtype takes part in the promotion,
  // its value moves to the other operand's device.
  const c10::ScalarType dtype = at::result_type(self_in, other_in);
  const Tensor self = ScalarOnDevice(self_in, other_in), other = ScalarOnDevice(other_in, self_in);
  CheckSameNpuDevice(op, {{"self", &self}, {"other", &other}});
  // float64 goes to the CPU fallback through the dtype gate; integers are an error (the CPU has no
  // integer nextafter either).
  NPU_CHECK_DTYPE(!IsHostOnlyDtype(dtype), dtype, op, ": float64 / complex operands (", dtype,
                  ") have no vector-unit kernel");
  TORCH_CHECK_TYPE(dtype == at::kFloat || dtype == at::kHalf || dtype == at::kBFloat16, op,
                   ": expected floating inputs of dtype Float, Half or BFloat16, got ", self.scalar_type(), " and ",
                   other.scalar_type());
  const auto shape = at::infer_size(self.sizes(), other.sizes());
  const Tensor a = self.to(dtype).expand(shape).contiguous(), b = other.to(dtype).expand(shape);
  const bool wide = dtype == at::kFloat;
  const Tensor bits = a.view(wide ? at::kInt : at::kShort);
  const Tensor step = at::where(at::eq(at::gt(b, a), at::gt(a, 0)), 1, -1).to(bits.scalar_type());
  // The smallest subnormal: bit pattern 1, negated by the sign bit (int16 0x8001 / int32 0x80000001).
  const int64_t neg_tiny = wide ? std::numeric_limits<int32_t>::min() + 1 : std::numeric_limits<int16_t>::min() + 1;
  Tensor next = at::where(at::eq(a, 0), at::where(at::gt(b, 0), 1, neg_tiny).to(bits.scalar_type()), bits + step);
  Tensor r = next.view(dtype);
  r = at::where(at::eq(a, b), b, r);
  return at::where(at::logical_or(at::isnan(a), at::isnan(b)), a + b, r);
}

Tensor nextafter_npu(const Tensor& self, const Tensor& other) {
  return NextAfter("nextafter", self, other);
}

Tensor& nextafter_out_npu(const Tensor& self, const Tensor& other, Tensor& out) {
  return CopyToOut("nextafter.out", NextAfter("nextafter", self, other), out);
}

Tensor& nextafter__npu(Tensor& self, const Tensor& other) {
  const Tensor r = NextAfter("nextafter_", self, other);
  TORCH_CHECK(c10::canCast(r.scalar_type(), self.scalar_type()), "nextafter_: result type ", r.scalar_type(),
              " can't be cast to the desired output type ", self.scalar_type());
  TORCH_CHECK(r.sizes() == self.sizes(), "nextafter_: the result of shape ", r.sizes(),
              " does not fit 'self' of shape ", self.sizes(), " for the in-place form");
  return self.copy_(r);
}

}  // namespace
}  // namespace torch_ops_nn

NPU_ATEN_LIBRARY_IMPL(m) {
  m.impl("nextafter", TORCH_FN(torch_ops_nn::nextafter_npu));
  m.impl("nextafter.out", TORCH_FN(torch_ops_nn::nextafter_out_npu));
  m.impl("nextafter_", TORCH_FN(torch_ops_nn::nextafter__npu));
}
