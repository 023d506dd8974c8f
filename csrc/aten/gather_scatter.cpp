// gather, scatter (src and value forms), scatter_add, index_add and index_copy on npu: the gather and
// scatter kernels (ascendc_kernels/gather_scatter.h). The tensors are viewed as 3-D around the indexed
// dim ([outer, dim, inner] with element strides); what cannot be viewed so is made contiguous on the
// device first (a scatter destination is then copied back). scatter_reduce (sum / prod / mean / amax /
// amin) and scatter's reduce="add" / "multiply" forms combine on the same kernels. complex128 and
// scatter_add / index_add / scatter_reduce of other dtypes than float32/16, bfloat16, int32 and int64 take
// the CPU fallback.
#include <ATen/core/Tensor.h>
#include <ATen/MemoryOverlap.h>
#include <ATen/ops/add.h>
#include <ATen/ops/lt.h>
#include <ATen/ops/mul.h>
#include <ATen/ops/where.h>
#include <ATen/ops/clamp.h>
#include <ATen/ops/logical_and.h>
#include <ATen/ops/le.h>
#include <ATen/ops/ge.h>
#include <ATen/ops/sub.h>
#include <ATen/ops/div.h>
#include <ATen/ops/scalar_tensor.h>
#include <ATen/ops/ones.h>
#include <ATen/ops/zeros.h>
#include <ATen/ops/aminmax.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include <array>
#include <cmath>
#include <tuple>
#include <limits>
#include <string>
#include <optional>
#include <vector>

#include "aten/kernel_launch.h"
#include "aten/op_common.h"
#include "aten/sort_ops.h"
#include "core/cpu_fallback.h"
#include "gather_scatter.h"
#include "index_bucket.h"

namespace torch_ops_nn {

TORCH_OPS_NN_REGISTER_KERNEL(gather_kernel);
TORCH_OPS_NN_REGISTER_KERNEL(scatter_kernel);
TORCH_OPS_NN_REGISTER_KERNEL(scatter_add_kernel);
TORCH_OPS_NN_REGISTER_KERNEL(scatter_add_private_kernel);
TORCH_OPS_NN_REGISTER_KERNEL(index_bucket_count_kernel);
TORCH_OPS_NN_REGISTER_KERNEL(index_bucket_scan_kernel);
TORCH_OPS_NN_REGISTER_KERNEL(index_bucket_place_kernel);

namespace {

using KernelFn = void (*)(uint8_t*, uint8_t*, uint8_t*, uint8_t*);
using ScatterFn = void (*)(uint8_t*, uint8_t*, uint8_t*, uint8_t*, uint8_t*);

// [outer, dim, inner] element strides of `t` around `dim`, when the dims before `dim` (and those after)
// collapse into one stride each; size-1 dims are ignored.
struct View3 {
  int64_t O = 1, D = 1, Q = 1, so = 0, sd = 0, sq = 0;
};
std::optional<View3> Collapse3(const at::Tensor& t, int64_t dim) {
  View3 v;
  v.D = t.size(dim);
  v.sd = t.stride(dim);
  auto run = [&](int64_t b, int64_t e, int64_t& n, int64_t& stride) {
    n = 1;
    stride = 0;
    bool first = true;
    for (int64_t k = e - 1; k >= b; --k) {  // innermost first
      if (t.size(k) == 1) continue;
      if (first) stride = t.stride(k), first = false;
      else if (t.stride(k) != stride * n) return false;
      n *= t.size(k);
    }
    return true;
  };
  if (!run(0, dim, v.O, v.so)) return std::nullopt;
  if (!run(dim + 1, t.dim(), v.Q, v.sq)) return std::nullopt;
  return v;
}

// Strides as [outer, dim, inner] for an index / src tensor of the index's shape (any strides): a
// contiguous copy when they do not collapse.
std::array<int64_t, 3> Strides3(at::Tensor& t, int64_t dim) {
  std::optional<View3> v = Collapse3(t, dim);
  if (!v) {
    t = t.contiguous();
    v = Collapse3(t, dim);
  }
  return {v->so, v->sd, v->sq};
}

KernelFn PickGather(int64_t es) {
  switch (es) {
    case 1: return &gather_kernel_b1;
    case 2: return &gather_kernel_b2;
    case 4: return &gather_kernel_b4;
    case 8: return &gather_kernel_b8;
    default: return nullptr;
  }
}
ScatterFn PickScatter(int64_t es) {
  switch (es) {
    case 1: return &scatter_kernel_b1;
    case 2: return &scatter_kernel_b2;
    case 4: return &scatter_kernel_b4;
    case 8: return &scatter_kernel_b8;
    default: return nullptr;
  }
}

using Combine = npu_kernels::ScatterOp;

// The combining scatter kernel of a dtype (float32/16, bfloat16, int32, int64), or null.
ScatterFn PickCombine(Combine c, c10::ScalarType t) {
#define GS_PICK(prefix)                               \
  switch (t) {                                        \
    case c10::kFloat: return &prefix##_float;         \
    case c10::kHalf: return &prefix##_half;           \
    case c10::kBFloat16: return &prefix##_bf16;       \
    case c10::kInt: return &prefix##_int32;           \
    case c10::kLong: return &prefix##_int64;          \
    default: return nullptr;                          \
  }
  switch (c) {
    case npu_kernels::kScatterAdd: GS_PICK(scatter_add_kernel)
    case npu_kernels::kScatterMul: GS_PICK(scatter_mul_kernel)
    case npu_kernels::kScatterMax: GS_PICK(scatter_max_kernel)
    case npu_kernels::kScatterMin: GS_PICK(scatter_min_kernel)
    default: return nullptr;
  }
#undef GS_PICK
}
ScatterFn PickAdd(c10::ScalarType t) { return PickCombine(npu_kernels::kScatterAdd, t); }

// gather / scatter take int64 or int32 indices (an empty index any dtype), as on the CPU.
void CheckIndexDtype(const char* op, const at::Tensor& index, bool allow_int32) {
  const bool ok = index.scalar_type() == c10::kLong || (allow_int32 && index.scalar_type() == c10::kInt) ||
                  (allow_int32 && index.numel() == 0);
  TORCH_CHECK_TYPE(ok, op, "(): Expected dtype ", allow_int32 ? "int32/int64" : "int64", " for index, got ",
                   index.scalar_type());
}

// gather / scatter's shape rules: the same number of dims; index no larger than self apart from `dim`
// (and no larger than src anywhere).
void CheckShapes(const char* op, const at::Tensor& self, int64_t dim, const at::Tensor& index, const at::Tensor* src) {
  TORCH_CHECK_INDEX(index.dim() == self.dim() || index.numel() == 0 || (index.dim() <= 1 && self.dim() <= 1), op,
                    "(): Index tensor must have the same number of dimensions as self tensor (index has ",
                    index.dim(), ", self has ", self.dim(), ")");
  if (src != nullptr)
    TORCH_CHECK_INDEX(index.dim() == src->dim() || index.numel() == 0 || (index.dim() <= 1 && src->dim() <= 1), op,
                      "(): Index tensor must have the same number of dimensions as src tensor (index has ",
                      index.dim(), ", src has ", src->dim(), ")");
  if (index.numel() == 0 || index.dim() != self.dim()) return;
  for (int64_t d = 0; d < index.dim(); ++d) {
    TORCH_CHECK(d == dim || index.size(d) <= self.size(d), op, "(): Expected index ", index.sizes(),
                " to be no larger than self ", self.sizes(), " apart from dimension ", dim,
                src ? " and to be no larger size than src " : "", src ? src->sizes() : c10::IntArrayRef{});
    TORCH_CHECK(src == nullptr || index.size(d) <= src->size(d), op, "(): Expected index ", index.sizes(),
                " to be no larger than self ", self.sizes(), " apart from dimension ", dim,
                " and to be no larger size than src ", src->sizes());
  }
}

// self narrowed to the index's sizes in every dim but `dim`.
at::Tensor NarrowTo(const at::Tensor& t, const at::Tensor& index, int64_t skip) {
  at::Tensor r = t;
  for (int64_t d = 0; d < t.dim(); ++d)
    if (d != skip && r.size(d) != index.size(d)) r = r.narrow(d, 0, index.size(d));
  return r;
}

void SetIndexAndSrc(npu_kernels::GatherScatterTiling& t, const std::array<int64_t, 3>& is,
                    const std::array<int64_t, 3>& vs) {
  t.io = uint64_t(is[0]), t.ij = uint64_t(is[1]), t.iq = uint64_t(is[2]);
  t.vo = uint64_t(vs[0]), t.vj = uint64_t(vs[1]), t.vq = uint64_t(vs[2]);
}

// out (contiguous, the index's shape) = gather of `src3` (self narrowed; same dims as index).
void LaunchGather(const char* op, at::Tensor src3, int64_t dim, at::Tensor index, const at::Tensor& out,
                  c10::DeviceIndex dev) {
  std::optional<View3> v = Collapse3(src3, dim);
  if (!v) {
    src3 = src3.contiguous();
    v = Collapse3(src3, dim);
  }
  const std::array<int64_t, 3> is = Strides3(index, dim);
  auto t = npu_kernels::gather_tiling(uint64_t(v->O), uint64_t(v->D), uint64_t(index.size(dim)), uint64_t(v->Q),
                                      uint32_t(src3.element_size()), index.scalar_type() == c10::kLong,
                                      SocInfoFor(dev));
  t.so = uint64_t(v->so), t.sd = uint64_t(v->sd), t.sq = uint64_t(v->sq);
  SetIndexAndSrc(t, is, {0, 0, 0});
  npu_kernels::gather_row_mode(t, SocInfoFor(dev));
  KernelLaunch launch{"gather_kernel", ascendc_host::CoreType::AIV, t.block_dim, dev};
  if (LogDebugEnabled()) launch.detail = DescribeForLog({{"self", &src3}, {"index", &index}}) + " dim=" + std::to_string(dim);
  LaunchKernel(std::move(launch), PickGather(src3.element_size()), t, src3.data_ptr(), index.data_ptr(),
               out.data_ptr());
}

// The bucket workspace of a scatter whose index is shared (index_bucket.h): the index's positions j
// (element stride `ij`) sorted by window of 2^shift indices; fills the scatter tiling's workspace
// fields. Undefined when the windows or positions are too many for the bucket kernels, or the workspace
// does not fit in device memory.
// With one update per position (O == Q == 1) of a src element of <= 4 bytes, the pairs carry the values
// (src is read in order here, not at scattered positions by the scatter).
at::Tensor BucketIndex(const char* op, const at::Tensor& index, int64_t ij, const at::Tensor& src, int64_t vj,
                       c10::DeviceIndex dev, npu_kernels::GatherScatterTiling* t) {
  const bool idx64 = index.scalar_type() == c10::kLong;
  const uint64_t J = t->J;
  auto bk = npu_kernels::index_bucket_tiling(J, t->D, t->shift, idx64, SocInfoFor(dev));
  if (bk.W == 0) return {};
  if (t->O == 1 && t->Q == 1 && vj != 0 && src.element_size() <= 4) {
    bk.payload = uint32_t(src.element_size());
    bk.src_stride = uint64_t(vj);
    t->payload = 1;
  }
  // The positions as one contiguous vector (index[0, j, 0] at stride ij).
  at::Tensor ws;
  try {  // 8 bytes per update: when the device has no room, the unbucketed scatter (no workspace) runs
    ws = NpuEmpty({int64_t(bk.ws_words)}, c10::kInt, dev);
  } catch (const c10::OutOfMemoryError&) {
    return {};
  }
  const at::Tensor idx = ij == 1 ? index : index.as_strided({int64_t(J)}, {ij}, index.storage_offset()).contiguous();
  KernelLaunch count{"index_bucket_count_kernel", ascendc_host::CoreType::AIV, bk.block_dim, dev};
  if (LogDebugEnabled())
    count.detail = std::string(op) + " positions=" + std::to_string(J) + " windows=" + std::to_string(bk.W);
  LaunchKernel(std::move(count), &index_bucket_count_kernel, bk, idx.data_ptr(), ws.data_ptr());
  LaunchKernel(KernelLaunch{"index_bucket_scan_kernel", ascendc_host::CoreType::AIV, 1, dev}, &index_bucket_scan_kernel,
               bk, ws.data_ptr());
  LaunchKernel(KernelLaunch{"index_bucket_place_kernel", ascendc_host::CoreType::AIV, bk.block_dim, dev},
               &index_bucket_place_kernel, bk, idx.data_ptr(), src.data_ptr(), ws.data_ptr());
  t->starts_at = bk.starts_at;
  t->pairs_at = bk.pairs_at;
  t->ws_words = bk.ws_words;
  return ws;
}

// Integer scatter_add with private copies: at least this many updates, into at most this many elements.
constexpr uint64_t kPrivateMinUpdates = 65536, kPrivateMaxLength = 16384;

// dst3 (self narrowed; same dims as index) [index] = / += src (the index's shape, any strides).
void LaunchScatter(const char* op, const at::Tensor& dst3, int64_t dim, at::Tensor index, at::Tensor src, Combine how,
                   c10::DeviceIndex dev) {
  std::optional<View3> v = Collapse3(dst3, dim);
  const bool direct = v && (v->Q == 1 || v->sq == 1) && (v->Q == 1 || v->sd >= v->Q) && v->sd >= 0 && v->so >= 0;
  at::Tensor dst = direct ? dst3 : dst3.contiguous();
  if (!direct) v = Collapse3(dst, dim);
  const std::array<int64_t, 3> is = Strides3(index, dim), vs = Strides3(src, dim);
  const int64_t sd = v->Q == 1 && v->D == 1 ? 1 : v->sd;
  auto t = npu_kernels::scatter_tiling(uint64_t(v->O), uint64_t(v->D), uint64_t(index.size(dim)), uint64_t(v->Q),
                                       uint64_t(sd), uint32_t(dst.element_size()), index.scalar_type() == c10::kLong,
                                       SocInfoFor(dev));
  t.so = uint64_t(v->so), t.sq = 1;
  SetIndexAndSrc(t, is, vs);
  ScatterFn fn = how == npu_kernels::kScatterAssign ? PickScatter(dst.element_size()) : PickCombine(how, dst.scalar_type());
  static const char* const names[] = {"scatter_kernel", "scatter_add_kernel", "scatter_mul_kernel", "scatter_max_kernel",
                                      "scatter_min_kernel"};
  // Many integer additions into a short 1-D destination (bincount): private copies per block, summed.
  const c10::ScalarType dt = dst.scalar_type();
  if (how == npu_kernels::kScatterAdd && (dt == c10::kInt || dt == c10::kLong) && v->O == 1 && v->Q == 1 &&
      t.flat && t.dtiles == 1 && t.J >= kPrivateMinUpdates && t.D <= kPrivateMaxLength) {
    npu_kernels::GatherScatterTiling pt = t;
    const uint64_t per_elem = 32 / uint64_t(dst.element_size());
    pt.row_elems = uint32_t((t.D + per_elem - 1) / per_elem * per_elem);
    const uint64_t blocks = std::min<uint64_t>(uint64_t(MaxBlockDim(dev, ascendc_host::CoreType::AIV)),
                                               t.J / (kPrivateMinUpdates / 2));
    pt.units_per_core = (t.J + blocks - 1) / blocks;
    pt.block_dim = uint32_t((t.J + pt.units_per_core - 1) / pt.units_per_core);
    // Zeroed: a block that meets a bad index stops before writing its row, which then adds nothing.
    at::Tensor partial = at::zeros({int64_t(pt.block_dim), int64_t(pt.row_elems)}, dst.options());
    KernelLaunch launch{"scatter_add_private_kernel", ascendc_host::CoreType::AIV, pt.block_dim, dev};
    if (LogDebugEnabled()) launch.detail = DescribeForLog({{"self", &dst}, {"index", &index}, {"src", &src}});
    LaunchKernel(std::move(launch), dt == c10::kInt ? &scatter_add_private_kernel_int32 : &scatter_add_private_kernel_int64,
                 pt, src.data_ptr(), index.data_ptr(), partial.data_ptr());
    dst.add_(partial.narrow(1, 0, int64_t(t.D)).sum(0).view(dst.sizes()));
    if (!direct) dst3.copy_(dst);
    return;
  }
  // An index shared by every row and column (index_add, an expanded index, 1-D): bucketed by window
  // when the destination spans several windows or the updates are many.
  at::Tensor ws;
  const bool shared = (v->O == 1 || is[0] == 0) && (v->Q == 1 || is[2] == 0);
  const c10::ScalarType st = dt;
  const bool one_value = vs[1] == 0 && vs[2] == 0 && (dst.element_size() == 2 || dst.element_size() == 4);
  const bool vrow_ok = (vs[2] == 1 || (one_value && how == npu_kernels::kScatterAssign)) && v->Q >= 8 &&
                       (how == npu_kernels::kScatterAssign ||
                        (how == npu_kernels::kScatterAdd && (IsNpuFloat(st) || st == c10::kInt)));
  if (shared && (t.dtiles >= 2 || (vrow_ok && t.J * t.Q >= 4096))) {
    npu_kernels::GatherScatterTiling bt = t;
    if (npu_kernels::scatter_bucket_tiling(bt, vrow_ok, SocInfoFor(dev))) {
      ws = BucketIndex(op, index, is[1], src, vs[1], dev, &bt);
      if (ws.defined()) t = bt;
    }
  }
  KernelLaunch launch{names[int(how)], ascendc_host::CoreType::AIV, t.block_dim, dev};
  if (LogDebugEnabled())
    launch.detail = DescribeForLog({{"self", &dst}, {"index", &index}, {"src", &src}}) + " dim=" + std::to_string(dim) +
                    (t.bucket ? " bucketed windows=" + std::to_string(t.dtiles) + (t.vrow ? " rows" : "") : "");
  LaunchKernel(std::move(launch), fn, t, src.data_ptr(), index.data_ptr(), dst.data_ptr(),
               ws.defined() ? ws.data_ptr() : index.data_ptr());
  if (!direct) dst3.copy_(dst);
}

bool SupportedBySize(const at::Tensor& t) {
  const int64_t es = t.element_size();
  return es == 1 || es == 2 || es == 4 || es == 8;
}

// ---- gather
at::Tensor gather_npu(const at::Tensor& self, int64_t dim, const at::Tensor& index, bool sparse_grad) {
  const char* op = "gather";
  const c10::DeviceIndex dev = CheckSameNpuDevice(op, {{"self", &self}, {"index", &index}});
  CheckIndexDtype(op, index, true);
  dim = WrapDim(op, dim, self.dim());
  CheckShapes(op, self, dim, index, nullptr);
  if (!SupportedBySize(self))
    return CallCpuFallback("aten::gather", "", {self, dim, index, sparse_grad}).back().toTensor();
  at::Tensor out = NpuEmpty(index.sizes(), self.scalar_type(), dev);
  if (index.numel() == 0) return out;
  const at::Tensor s = self.dim() == 0 ? self.view({1}) : self;
  const at::Tensor i = index.dim() == 0 ? index.view({1}) : index;
  TORCH_CHECK_INDEX(s.size(dim) > 0, op, "(): index out of range: dimension ", dim, " of self has size 0");
  LaunchGather(op, NarrowTo(s, i, dim), dim, i, out, dev);
  return out;
}

at::Tensor& gather_out_npu(const at::Tensor& self, int64_t dim, const at::Tensor& index, bool sparse_grad,
                           at::Tensor& out) {
  return CopyToOutExact("gather", gather_npu(self, dim, index, sparse_grad), out);
}

// ---- scatter / scatter_add (in place on self; src already the right dtype, on self's device)
at::Tensor& ScatterInto(const char* op, at::Tensor& self, int64_t dim, const at::Tensor& index,
                        const at::Tensor& src, bool scalar, Combine how, c10::DeviceIndex dev) {
  if (index.numel() == 0) return self;
  at::assert_no_internal_overlap(self);
  at::assert_no_overlap(self, index);  // as the CPU: the source / index must not alias self
  if (!scalar) at::assert_no_overlap(self, src);
  const at::Tensor s = self.dim() == 0 ? self.view({1}) : self;
  const at::Tensor i = index.dim() == 0 ? index.view({1}) : index;
  TORCH_CHECK_INDEX(s.size(dim) > 0, op, "(): index out of range: dimension ", dim, " of self has size 0");
  at::Tensor v = src.dim() == 0 ? src.view({1}) : src;
  if (scalar) {
    v = v.expand(i.sizes());
  } else {
    for (int64_t d = 0; d < i.dim(); ++d)
      TORCH_CHECK_INDEX(i.size(d) <= v.size(d), op, "(): Expected index ", index.sizes(),
                        " to be no larger size than src ", src.sizes(), " (dimension ", d, ")");
    v = NarrowTo(v, i, -1);
  }
  LaunchScatter(op, NarrowTo(s, i, dim), dim, i, v, how, dev);
  return self;
}

bool ScatterSupported(const at::Tensor& self, bool add) {
  return add ? PickAdd(self.scalar_type()) != nullptr : SupportedBySize(self);
}

// self[index] = src (scatter_) or += src (scatter_add_), checked as the CPU checks.
at::Tensor& ScatterTensor(const char* op, const char* fallback, at::Tensor& self, int64_t dim, const at::Tensor& index,
                          const at::Tensor& src, bool add) {
  const c10::DeviceIndex dev = CheckSameNpuDevice(op, {{"self", &self}, {"index", &index}, {"src", &src}});
  CheckIndexDtype(op, index, true);
  TORCH_CHECK_TYPE(self.scalar_type() == src.scalar_type(), op, "(): Expected self.dtype to be equal to src.dtype ",
                   "(self is ", self.scalar_type(), ", src is ", src.scalar_type(), ")");
  dim = WrapDim(op, dim, self.dim());
  CheckShapes(op, self, dim, index, &src);
  if (!ScatterSupported(self, add) && add && IsSmallInt(self.scalar_type())) {
    // uint8 / int8 / int16 add in an int32 copy; the copy back wraps as the CPU's adds do.
    at::Tensor w = self.to(c10::kInt);
    ScatterTensor(op, fallback, w, dim, index, src.to(c10::kInt), add);
    self.copy_(w);
    return self;
  }
  if (!ScatterSupported(self, add)) {
    CallCpuFallback(fallback, add ? "" : "src", {self, dim, index, src});
    return self;
  }
  return ScatterInto(op, self, dim, index, src, false, add ? npu_kernels::kScatterAdd : npu_kernels::kScatterAssign, dev);
}

at::Tensor& scatter_src_(at::Tensor& self, int64_t dim, const at::Tensor& index, const at::Tensor& src) {
  return ScatterTensor("scatter", "aten::scatter_", self, dim, index, src, false);
}

// A 0-dim npu tensor holding `v` (a scatter's value, broadcast over the index).
at::Tensor NpuScalar(const c10::Scalar& v, c10::ScalarType st, c10::DeviceIndex dev) {
  at::Tensor t = NpuEmpty({}, st, dev);
  t.fill_(v);
  return t;
}

// self[index] = value (how = kScatterAssign) or combined with it (scatter's reduce= forms).
at::Tensor& ScatterValue(at::Tensor& self, int64_t dim, const at::Tensor& index, const c10::Scalar& value,
                         Combine how, std::optional<c10::string_view> reduce) {
  const char* op = "scatter";
  const c10::DeviceIndex dev = CheckSameNpuDevice(op, {{"self", &self}, {"index", &index}});
  CheckIndexDtype(op, index, true);
  dim = WrapDim(op, dim, self.dim());
  CheckShapes(op, self, dim, index, nullptr);
  if (how == npu_kernels::kScatterAssign ? !SupportedBySize(self) : !PickCombine(how, self.scalar_type())) {
    if (reduce) CallCpuFallback("aten::scatter_", "value_reduce", {self, dim, index, value, std::string(*reduce)});
    else CallCpuFallback("aten::scatter_", "value", {self, dim, index, value});
    return self;
  }
  return ScatterInto(op, self, dim, index, NpuScalar(value, self.scalar_type(), dev), true, how, dev);
}

at::Tensor& scatter_value_(at::Tensor& self, int64_t dim, const at::Tensor& index, const c10::Scalar& value) {
  return ScatterValue(self, dim, index, value, npu_kernels::kScatterAssign, std::nullopt);
}

at::Tensor& scatter_add_inplace(at::Tensor& self, int64_t dim, const at::Tensor& index, const at::Tensor& src) {
  return ScatterTensor("scatter_add", "aten::scatter_add_", self, dim, index, src, true);
}

// ---- scatter_reduce (sum / prod / mean / amax / amin, include_self or not), as the CPU computes it:
// without include_self the scattered positions first get the reduction's identity (a scatter of one
// value), so only the src values combine there; mean adds, counts the updates per position with a
// scatter_add of ones (plus one for self when included) and divides (floor division for integers),
// positions nobody scattered to keep self.
at::Tensor& scatter_reduce_inplace(at::Tensor& self, int64_t dim, const at::Tensor& index, const at::Tensor& src,
                                   c10::string_view reduce, bool include_self) {
  const char* op = "scatter_reduce";
  const c10::DeviceIndex dev = CheckSameNpuDevice(op, {{"self", &self}, {"index", &index}, {"src", &src}});
  CheckIndexDtype(op, index, true);
  TORCH_CHECK_TYPE(self.scalar_type() == src.scalar_type(), op, "(): Expected self.dtype to be equal to src.dtype ",
                   "(self is ", self.scalar_type(), ", src is ", src.scalar_type(), ")");
  const bool mean = reduce == "mean";
  const Combine how = reduce == "sum" || mean ? npu_kernels::kScatterAdd
                      : reduce == "prod"      ? npu_kernels::kScatterMul
                      : reduce == "amax"      ? npu_kernels::kScatterMax
                      : reduce == "amin"      ? npu_kernels::kScatterMin
                                              : npu_kernels::kScatterAssign;
  TORCH_CHECK(how != npu_kernels::kScatterAssign, op, "(): reduce argument must be either sum, prod, mean, amax or amin, got ",
              reduce);
  dim = WrapDim(op, dim, self.dim());
  CheckShapes(op, self, dim, index, &src);
  if (!PickCombine(how, self.scalar_type()) && !mean && IsSmallInt(self.scalar_type()) &&
      src.scalar_type() == self.scalar_type()) {
    // sum / prod wrap modulo the width in any order, amax / amin are exact: an int32 copy, copied back.
    at::Tensor w = self.to(c10::kInt);
    scatter_reduce_inplace(w, dim, index, src.to(c10::kInt), reduce, include_self);
    self.copy_(w);
    return self;
  }
  if (!PickCombine(how, self.scalar_type())) {
    CallCpuFallback("aten::scatter_reduce_", "two", {self, dim, index, src, std::string(reduce), include_self});
    return self;
  }
  if (index.numel() == 0) return self;
  const c10::ScalarType st = self.scalar_type();
  const bool integral = c10::isIntegralType(st, false);
  at::Tensor count;
  if (mean) {
    count = NpuEmpty(self.sizes(), st, dev);
    count.fill_(include_self ? 1 : 0);
    ScatterInto(op, count, dim, index, NpuScalar(1, st, dev), true, npu_kernels::kScatterAdd, dev);
  }
  if (!include_self) {
    c10::Scalar identity = 0;
    if (how == npu_kernels::kScatterMul) identity = 1;
    if (how == npu_kernels::kScatterMax)
      identity = integral ? (st == c10::kInt ? c10::Scalar(std::numeric_limits<int32_t>::lowest())
                                             : c10::Scalar(std::numeric_limits<int64_t>::lowest()))
                          : c10::Scalar(-std::numeric_limits<double>::infinity());
    if (how == npu_kernels::kScatterMin)
      identity = integral ? (st == c10::kInt ? c10::Scalar(std::numeric_limits<int32_t>::max())
                                             : c10::Scalar(std::numeric_limits<int64_t>::max()))
                          : c10::Scalar(std::numeric_limits<double>::infinity());
    ScatterInto(op, self, dim, index, NpuScalar(identity, st, dev), true, npu_kernels::kScatterAssign, dev);
  }
  ScatterInto(op, self, dim, index, src, false, how, dev);
  if (mean) {
    const at::Tensor n = count.clamp_min(1);
    if (integral) self.div_(n, "floor");
    else self.div_(n);
  }
  return self;
}

// scatter_(dim, index, src or value, reduce="add" | "multiply"): scatter_reduce's sum / prod with self
// included.
Combine ScatterReduceArg(const char* op, c10::string_view reduce) {
  TORCH_CHECK(reduce == "add" || reduce == "multiply", op, "(): reduce argument must be either add or multiply, got ",
              reduce);
  return reduce == "add" ? npu_kernels::kScatterAdd : npu_kernels::kScatterMul;
}
at::Tensor& scatter_src_reduce_(at::Tensor& self, int64_t dim, const at::Tensor& index, const at::Tensor& src,
                                c10::string_view reduce) {
  const Combine how = ScatterReduceArg("scatter", reduce);
  return scatter_reduce_inplace(self, dim, index, src, how == npu_kernels::kScatterAdd ? "sum" : "prod", true);
}
at::Tensor& scatter_value_reduce_(at::Tensor& self, int64_t dim, const at::Tensor& index, const c10::Scalar& value,
                                  c10::string_view reduce) {
  return ScatterValue(self, dim, index, value, ScatterReduceArg("scatter", reduce), reduce);
}

// The functional and out= forms of an in-place op: on a clone of self.
template <auto Inplace, typename... Args>
at::Tensor OnClone(const at::Tensor& self, Args... args) {
  at::Tensor r = self.clone();
  return Inplace(r, args...);
}
template <auto Inplace, const char* Name, typename... Args>
at::Tensor& OnCloneOut(const at::Tensor& self, Args... args, at::Tensor& out) {
  return CopyToOutExact(Name, OnClone<Inplace, Args...>(self, args...), out);
}
constexpr char kScatterReduce[] = "scatter_reduce";
constexpr char kScatter[] = "scatter", kScatterAdd[] = "scatter_add", kIndexAdd[] = "index_add",
               kIndexCopy[] = "index_copy";

}  // namespace

// ---- index_add_ / index_copy_ (and index_put_ with accumulate=True): self[.., index[j], ..] (+)= source[.., j, ..]
// with a vector index, negatives as given (index_put_ wraps them before). The scatter kernels with the
// index broadcast over the other dims (bucketed by window, whole rows by vector adds, when it pays).
at::Tensor& IndexAddInto(const char* op, at::Tensor& self, int64_t dim, const at::Tensor& index,
                         const at::Tensor& source, bool add) {
  const c10::DeviceIndex dev = CheckSameNpuDevice(op, {{"self", &self}, {"index", &index}, {"source", &source}});
  const int64_t n = index.numel();
  if (n == 0 || self.numel() == 0) return self;
  at::assert_no_internal_overlap(self);
  at::assert_no_overlap(self, index);  // as the CPU: the source / index must not alias self
  at::assert_no_overlap(self, source);
  const at::Tensor s = self.dim() == 0 ? self.view({1}) : self;
  std::vector<int64_t> shape(s.sizes().begin(), s.sizes().end()), ishape(size_t(s.dim()), 1);
  shape[size_t(dim)] = n;
  ishape[size_t(dim)] = n;
  const at::Tensor i = index.reshape({n}).view(ishape).expand(shape);
  const at::Tensor v = source.reshape(shape);
  LaunchScatter(op, s, dim, i, v, add ? npu_kernels::kScatterAdd : npu_kernels::kScatterAssign, dev);
  return self;
}

bool IndexAddSupported(c10::ScalarType t) { return PickAdd(t) != nullptr; }

namespace {

void CheckIndexAdd(const char* op, const at::Tensor& self, int64_t dim, const at::Tensor& index,
                   const at::Tensor& source) {
  TORCH_CHECK_INDEX(index.dim() <= 1, op, "(): Index is supposed to be a vector, got a ", index.dim(),
                    "-D tensor of shape ", index.sizes());
  CheckIndexDtype(op, index, true);
  TORCH_CHECK_TYPE(self.scalar_type() == source.scalar_type(), op, "(): self (", self.scalar_type(),
                   ") and source (", source.scalar_type(), ") must have the same scalar type");
  const int64_t sdim = source.dim() == 0 ? 1 : source.dim(), selfdim = self.dim() == 0 ? 1 : self.dim();
  TORCH_CHECK_INDEX(sdim == selfdim, op, "(): source (", source.dim(), "-D) and self (", self.dim(),
                    "-D) must have the same number of dimensions");
  const int64_t n = index.numel();
  const int64_t sn = source.dim() == 0 ? 1 : source.size(dim);
  TORCH_CHECK_INDEX(n == sn, op, "(): Number of indices (", n, ") should be equal to source.size(dim) (", sn, ")");
  for (int64_t d = 0; d < self.dim(); ++d)
    TORCH_CHECK_INDEX(d == dim || self.size(d) == source.size(d), op, "(): self and source must have the same ",
                      "size at dimension ", d, "; self: ", self.sizes(), ", source: ", source.sizes());
}

at::Tensor& index_add_inplace(at::Tensor& self, int64_t dim, const at::Tensor& index, const at::Tensor& source,
                              const c10::Scalar& alpha) {
  const char* op = "index_add_";
  CheckSameNpuDevice(op, {{"self", &self}, {"index", &index}, {"source", &source}});
  dim = WrapDim(op, dim, self.dim());
  CheckIndexAdd(op, self, dim, index, source);
  if (!IndexAddSupported(self.scalar_type()) && IsSmallInt(self.scalar_type()) &&
      source.scalar_type() == self.scalar_type()) {
    at::Tensor w = self.to(c10::kInt);  // an int32 copy; the copy back wraps as the CPU's adds do
    index_add_inplace(w, dim, index, source.to(c10::kInt), alpha);
    self.copy_(w);
    return self;
  }
  if (!IndexAddSupported(self.scalar_type())) {
    CallCpuFallback("aten::index_add_", "", {self, dim, index, source, alpha});
    return self;
  }
  const bool one = alpha.isIntegral(true) ? alpha.toLong() == 1 : alpha.toDouble() == 1.0;
  return IndexAddInto(op, self, dim, index, one ? source : at::mul(source, alpha), true);
}

at::Tensor& index_copy_inplace(at::Tensor& self, int64_t dim, const at::Tensor& index, const at::Tensor& source) {
  const char* op = "index_copy_";
  CheckSameNpuDevice(op, {{"self", &self}, {"index", &index}, {"source", &source}});
  dim = WrapDim(op, dim, self.dim());
  CheckIndexAdd(op, self, dim, index, source);
  TORCH_CHECK_TYPE(index.scalar_type() == c10::kLong, op, "(): Expected a long tensor for index, but got ",
                   index.scalar_type());
  if (!SupportedBySize(self)) {
    CallCpuFallback("aten::index_copy_", "", {self, dim, index, source});
    return self;
  }
  return IndexAddInto(op, self, dim, index, source, false);
}

// ---- Counting on the scatter_add kernel. The result's length (bincount) or range (histc without one)
// comes from the data, read back: int32 / int64 through the radix sort's exact range kernel, floats
// through aminmax (bincount's values beyond 2^24 take the CPU fallback).
std::pair<double, double> DeviceMinMax(const at::Tensor& x) {
  if (x.scalar_type() == c10::kLong || x.scalar_type() == c10::kInt) {  // exact, one pass, no float copy
    const auto [lo, hi] = DeviceIntRange(Contiguous(x));
    return {double(lo), double(hi)};
  }
  const auto mm = at::aminmax(x.scalar_type() == c10::kFloat ? x : x.to(c10::kFloat));
  return {std::get<0>(mm).item<double>(), std::get<1>(mm).item<double>()};  // (the second read waits for nothing)
}

at::Tensor bincount_npu(const at::Tensor& self, const std::optional<at::Tensor>& weights_opt, int64_t minlength) {
  const char* op = "bincount";
  const at::Tensor weights = weights_opt.value_or(at::Tensor());
  TORCH_CHECK(minlength >= 0, "minlength should be >= 0");
  TORCH_CHECK(self.dim() == 1 && c10::isIntegralType(self.scalar_type(), false),
              "bincount only supports 1-d non-negative integral inputs.");
  if (weights.defined()) {
    TORCH_CHECK(weights.dim() == 1 && weights.size(0) == self.size(0),
                "weights should be 1-d and have the same length as input");
    CheckSameNpuDevice(op, {{"self", &self}, {"weights", &weights}});
  }
  // The CPU's result dtype: float32 weights give float32, other weights float64, none int64.
  const c10::ScalarType rt = !weights.defined() ? c10::kLong
                             : weights.scalar_type() == c10::kFloat ? c10::kFloat : c10::kDouble;
  const c10::DeviceIndex dev = self.device().index();
  if (self.numel() == 0) return at::zeros({minlength}, self.options().dtype(rt));
  const auto [lo, hi] = DeviceMinMax(self);
  TORCH_CHECK(lo >= 0, "bincount only supports 1-d non-negative integral inputs.");
  if (rt == c10::kDouble || hi >= double(1 << 24))
    return CallCpuFallback("aten::bincount", "", {self, weights_opt, minlength}).back().toTensor();
  const int64_t n = std::max<int64_t>(minlength, int64_t(hi) + 1);
  at::Tensor out = NpuEmpty({n}, rt, dev);
  out.zero_();
  const at::Tensor idx = self.to(c10::kLong);
  const at::Tensor src = weights.defined() ? weights : at::ones({1}, self.options().dtype(rt)).expand({self.size(0)});
  return out.scatter_add_(0, idx, src);
}

at::Tensor histc_npu(const at::Tensor& self, int64_t bins, const c10::Scalar& min, const c10::Scalar& max) {
  TORCH_CHECK(bins > 0, "torch.histogram(): bins must be > 0, but got ", bins, " for dimension 0");
  if (!IsNpuFloat(self.scalar_type()))
    return CallCpuFallback("aten::histc", "", {self, bins, min, max}).back().toTensor();
  double lo = min.toDouble(), hi = max.toDouble();
  if (lo == hi && self.numel() > 0) std::tie(lo, hi) = DeviceMinMax(self);
  if (lo == hi) { lo -= 1; hi += 1; }
  TORCH_CHECK(std::isfinite(lo) && std::isfinite(hi), "torch.histc: range of [", lo, ", ", hi, "] is not finite");
  TORCH_CHECK(lo < hi, "torch.histc: max must be larger than min");
  // Counts accumulate exactly in int32 (a float16 count stops at 2048: the CPU's half histc loses counts
  // there, by an amount that depends on its threading), then take the input's dtype.
  if (self.numel() == 0) return at::zeros({bins}, self.options());
  // The CPU's bin of x: trunc((x - lo) * bins / (hi - lo)) in the input dtype, op by op, with the edges
  // rounded to it; x == hi falls in the last bin; x outside [lo, hi] and NaN are not counted.
  const at::Tensor x = self.reshape({-1});
  const at::Tensor elo = at::scalar_tensor(lo, x.options()), ehi = at::scalar_tensor(hi, x.options());
  const at::Tensor pos = at::div(at::mul(at::sub(x, elo), double(bins)), at::sub(ehi, elo));
  const at::Tensor inside = at::logical_and(at::ge(x, elo), at::le(x, ehi));
  const at::Tensor bin = at::clamp(at::where(inside, pos, 0.0).to(c10::kLong), 0, bins - 1);
  at::Tensor counts = at::zeros({bins}, x.options().dtype(c10::kInt));  // exact integer counts
  counts.scatter_add_(0, bin, inside.to(c10::kInt));
  return counts.to(self.scalar_type());
}

}  // namespace
}  // namespace torch_ops_nn

NPU_ATEN_LIBRARY_IMPL(m) {
  using namespace torch_ops_nn;
  m.impl("gather", TORCH_FN(gather_npu));
  m.impl("gather.out", TORCH_FN(gather_out_npu));
  using Idx = const at::Tensor&;
  m.impl("scatter.src", TORCH_FN((OnClone<scatter_src_, int64_t, Idx, Idx>)));
  m.impl("scatter_.src", TORCH_FN(scatter_src_));
  m.impl("scatter.src_out", TORCH_FN((OnCloneOut<scatter_src_, kScatter, int64_t, Idx, Idx>)));
  m.impl("scatter.value", TORCH_FN((OnClone<scatter_value_, int64_t, Idx, const c10::Scalar&>)));
  m.impl("scatter_.value", TORCH_FN(scatter_value_));
  m.impl("scatter.value_out", TORCH_FN((OnCloneOut<scatter_value_, kScatter, int64_t, Idx, const c10::Scalar&>)));
  m.impl("scatter_add", TORCH_FN((OnClone<scatter_add_inplace, int64_t, Idx, Idx>)));
  m.impl("scatter_add_", TORCH_FN(scatter_add_inplace));
  m.impl("scatter_add.out", TORCH_FN((OnCloneOut<scatter_add_inplace, kScatterAdd, int64_t, Idx, Idx>)));
  m.impl("bincount", TORCH_FN(bincount_npu));
  m.impl("histc", TORCH_FN(histc_npu));
  using Red = c10::string_view;
  m.impl("scatter.reduce", TORCH_FN((OnClone<scatter_src_reduce_, int64_t, Idx, Idx, Red>)));
  m.impl("scatter_.reduce", TORCH_FN(scatter_src_reduce_));
  m.impl("scatter.reduce_out", TORCH_FN((OnCloneOut<scatter_src_reduce_, kScatter, int64_t, Idx, Idx, Red>)));
  m.impl("scatter.value_reduce", TORCH_FN((OnClone<scatter_value_reduce_, int64_t, Idx, const c10::Scalar&, Red>)));
  m.impl("scatter_.value_reduce", TORCH_FN(scatter_value_reduce_));
  m.impl("scatter.value_reduce_out",
         TORCH_FN((OnCloneOut<scatter_value_reduce_, kScatter, int64_t, Idx, const c10::Scalar&, Red>)));
  m.impl("scatter_reduce.two", TORCH_FN((OnClone<scatter_reduce_inplace, int64_t, Idx, Idx, Red, bool>)));
  m.impl("scatter_reduce_.two", TORCH_FN(scatter_reduce_inplace));
  m.impl("scatter_reduce.two_out", TORCH_FN((OnCloneOut<scatter_reduce_inplace, kScatterReduce, int64_t, Idx, Idx, Red,
                                                         bool>)));
  m.impl("index_add", TORCH_FN((OnClone<index_add_inplace, int64_t, Idx, Idx, const c10::Scalar&>)));
  m.impl("index_add_", TORCH_FN(index_add_inplace));
  m.impl("index_add.out", TORCH_FN((OnCloneOut<index_add_inplace, kIndexAdd, int64_t, Idx, Idx, const c10::Scalar&>)));
  m.impl("index_copy", TORCH_FN((OnClone<index_copy_inplace, int64_t, Idx, Idx>)));
  m.impl("index_copy_", TORCH_FN(index_copy_inplace));
  m.impl("index_copy.out", TORCH_FN((OnCloneOut<index_copy_inplace, kIndexCopy, int64_t, Idx, Idx>)));
}
