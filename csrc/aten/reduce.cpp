// Reduction ops on npu: sum, nansum, mean, amax/amin, aminmax, max/min (full and .dim), argmax/argmin,
// var/std (+ _mean), linalg_vector_norm, any/all, count_nonzero, exact integer sums. Argument checks, output
// shapes and dtypes, the pass plan (see ascendc_kernels/reduce.h), and the kernel launches.
#include <ATen/core/Tensor.h>
#include <ATen/ops/any.h>
#include <ATen/ops/mean.h>
#include <ATen/ops/sum.h>
#include <ATen/ops/view_as_complex.h>
#include <ATen/native/Resize.h>
#include <torch/library.h>

#include <algorithm>
#include <bitset>
#include <cmath>
#include <limits>
#include <numeric>
#include <optional>
#include <tuple>
#include <vector>

#include "aten/kernel_launch.h"
#include "core/cpu_fallback.h"
#include "aten/dtype_dispatch.h"
#include "aten/op_common.h"
#include "aten/sort_ops.h"
#include "reduce.h"

namespace torch_ops_nn {

TORCH_OPS_NN_REGISTER_KERNEL(reduce_kernel);
TORCH_OPS_NN_REGISTER_KERNEL(arg_reduce_kernel);

namespace {

using npu_kernels::ReduceComb;
using npu_kernels::ReducePost;
using npu_kernels::ReducePre;

constexpr uint64_t kManySegments = 1u << 20;
// Many short rows reduce faster as columns: one device transpose, then whole-tile vector folds instead of
// per-row instructions.
constexpr uint64_t kTransposeMaxR = 32;
constexpr uint64_t kTransposeMinRows = 2048;
bool TransposeRows(uint64_t outer, uint64_t R, uint64_t inner) {
  return inner == 1 && R > 1 && R <= kTransposeMaxR && outer >= kTransposeMinRows;
}

using ReduceFn = void (*)(uint8_t*, uint8_t*, uint8_t*, uint8_t*);

// The kernels move unaligned rows and tails with DataCopyPad, which 2002 (310P) SoCs do not have.
void CheckArch(const char* op, c10::DeviceIndex dev) {
  const int arch = SocInfoFor(dev).npu_arch;
  TORCH_CHECK(arch == 2201, op, ": npu:", static_cast<int>(dev), " is an ", npu_rt::GetDeviceInfo(dev).soc->name,
              " (arch ", arch, "); this op's Ascend C kernel needs DataCopyPad, available on arch 2201 (Ascend910B)");
}


// ------------------------------------------------------------------------------- dims
using DimMask = std::bitset<64>;

// The reduced dims; none given (or an empty list) means every dim.
DimMask MakeDimMask(const char* op, const at::Tensor& self, at::OptionalIntArrayRef dim, bool empty_means_all) {
  DimMask m;
  const int64_t nd = self.dim();
  TORCH_CHECK(nd <= 64, op, ": tensors of more than 64 dims are not supported (got ", nd, ")");
  if (!dim.has_value() || (dim->empty() && empty_means_all)) {
    for (int64_t d = 0; d < nd; ++d) m.set(d);
    return m;
  }
  for (int64_t d : *dim) {
    const int64_t w = WrapDim(op, d, nd);
    TORCH_CHECK(!m[w], op, ": dim ", w, " appears multiple times in the list of dims");
    m.set(w);
  }
  if (nd == 0) m.reset();
  return m;
}

std::vector<int64_t> ReducedSizes(const at::Tensor& self, const DimMask& mask, bool keepdim) {
  std::vector<int64_t> s;
  for (int64_t d = 0; d < self.dim(); ++d) {
    if (!mask[d]) s.push_back(self.size(d));
    else if (keepdim) s.push_back(1);
  }
  return s;
}

at::Tensor IntegerSum(const char* op, const at::Tensor& self, const DimMask& mask, c10::ScalarType out_dtype);

// int64 from its low and high int32 words (two strided device copies), then the requested dtype.
at::Tensor AssembleInt64(const at::Tensor& lo, const at::Tensor& hi, c10::ScalarType out_dtype) {
  at::Tensor out = NpuEmpty({lo.numel()}, c10::kLong, lo.device().index());
  if (lo.numel() > 0) {
    at::Tensor words = out.view(c10::kInt).view({lo.numel(), 2});
    words.select(1, 0).copy_(lo);
    words.select(1, 1).copy_(hi);
  }
  return out_dtype == c10::kLong ? out : out.to(out_dtype);
}

// The kernel for an (input, output) dtype pair, or nullptr when the pair has no entry point.
ReduceFn PickReduceKernel(c10::ScalarType in, c10::ScalarType out) {
  switch (in) {
    case c10::kFloat:
      if (out == c10::kFloat) return &reduce_kernel_float_float;
      if (out == c10::kHalf) return &reduce_kernel_float_half;
      if (out == c10::kBFloat16) return &reduce_kernel_float_bf16;
      break;
    case c10::kHalf:
      if (out == c10::kFloat) return &reduce_kernel_half_float;
      if (out == c10::kHalf) return &reduce_kernel_half_half;
      break;
    case c10::kBFloat16:
      if (out == c10::kFloat) return &reduce_kernel_bf16_float;
      if (out == c10::kBFloat16) return &reduce_kernel_bf16_bf16;
      break;
    default: break;
  }
  return nullptr;
}

struct PassOp {
  ReducePre pre = npu_kernels::kPreNone;
  ReduceComb comb = npu_kernels::kCombSum;
  ReducePost post = npu_kernels::kPostNone;
  float scale = 1.0f;
  float p = 2.0f;
};

void LaunchReduceOnce(const char* op, const at::Tensor& x, const at::Tensor* center, const at::Tensor& y,
                      const npu_kernels::ReduceTiling& t) {
  CheckArch(op, x.device().index());
  ReduceFn kernel = PickReduceKernel(x.scalar_type(), y.scalar_type());
  TORCH_INTERNAL_ASSERT(kernel, op, ": no reduce kernel for ", x.scalar_type(), " -> ", y.scalar_type());
  const c10::DeviceIndex dev = x.device().index();
  KernelLaunch launch{"reduce_kernel", ascendc_host::CoreType::AIV, t.block_dim, dev};
  if (LogDebugEnabled())
    launch.detail = std::string(op) + " " + DescribeForLog({{"x", &x}, {"y", &y}}) + " [" + std::to_string(t.outer) +
                    "," + std::to_string(t.R) + "," + std::to_string(t.inner) + "] segments=" +
                    std::to_string(t.segments) + " blockDim=" + std::to_string(t.block_dim);
  LaunchKernel(std::move(launch), kernel, t, x.data_ptr(), center ? center->data_ptr() : static_cast<void*>(nullptr),
               y.data_ptr());
}

// One reduction of x[outer, R, inner] (contiguous, float dtype) into y[outer, inner] (`y_dtype`), with R split
// over the cores in two passes when the work items are too few.
at::Tensor ReduceView(const char* op, const at::Tensor& x, uint64_t outer, uint64_t R, uint64_t inner,
                      c10::ScalarType y_dtype, const PassOp& pass, const at::Tensor* center) {
  if (TransposeRows(outer, R, inner)) {
    at::Tensor xt = x.view({static_cast<int64_t>(outer), static_cast<int64_t>(R)}).t().contiguous();
    return ReduceView(op, xt, 1, R, outer, y_dtype, pass, center);
  }
  const c10::DeviceIndex dev = x.device().index();
  const auto& soc = SocInfoFor(dev);
  const uint32_t in_b = static_cast<uint32_t>(x.element_size());
  c10::ScalarType direct = PickReduceKernel(x.scalar_type(), y_dtype) ? y_dtype : c10::kFloat;
  const uint32_t out_b = static_cast<uint32_t>(c10::elementSize(direct));
  auto t = npu_kernels::reduce_tiling(outer, R, inner, in_b, out_b, pass.pre, pass.comb, kManySegments, soc);
  t.p = pass.p;  // the pre-op's order (|x|^p) applies in pass 1 too
  at::Tensor y = NpuEmpty({static_cast<int64_t>(outer * inner)}, direct, dev);
  if (outer * inner == 0) return direct == y_dtype ? y : y.to(y_dtype);
  if (t.segments > 1) {
    at::Tensor part = NpuEmpty({static_cast<int64_t>(outer * t.segments * inner)}, c10::kFloat, dev);
    LaunchReduceOnce(op, x, center, part, t);
    auto t2 = npu_kernels::reduce_tiling(outer, t.segments, inner, 4, out_b, npu_kernels::kPreNone, pass.comb, 1, soc);
    t2.post = pass.post;
    t2.scale = pass.scale;
    t2.p = pass.p;
    LaunchReduceOnce(op, part, nullptr, y, t2);
  } else {
    t.post = pass.post;
    t.scale = pass.scale;
    t.p = pass.p;
    LaunchReduceOnce(op, x, center, y, t);
  }
  return direct == y_dtype ? y : y.to(y_dtype);
}

// Dims of `sizes` grouped into alternating kept/reduced runs (size-1 dims dropped).
struct Group {
  int64_t size;
  bool reduced;
};
std::vector<Group> Coalesce(c10::IntArrayRef sizes, const DimMask& mask) {
  std::vector<Group> g;
  for (int64_t d = 0; d < static_cast<int64_t>(sizes.size()); ++d) {
    if (sizes[d] == 1) continue;
    const bool r = mask[d];
    if (!g.empty() && g.back().reduced == r) g.back().size *= sizes[d];
    else g.push_back({sizes[d], r});
  }
  return g;
}

// Associative reductions over any set of dims: one pass per reduced group, innermost group first, float
// intermediates; `first` is applied on the first pass (pre-op), `last` (scale/post) on the last.
// x contiguous; the result holds the kept elements in x's order.
at::Tensor ReduceGroupsContiguous(const char* op, const at::Tensor& x, const DimMask& mask, c10::ScalarType y_dtype,
                                  const PassOp& pass) {
  std::vector<Group> g = Coalesce(x.sizes(), mask);
  int reduced = 0;
  for (const Group& e : g) reduced += e.reduced;
  if (reduced == 0) {  // nothing to fold (reduced dims of size 1): R = 1 over every element
    return ReduceView(op, x, 1, 1, static_cast<uint64_t>(x.numel()), y_dtype, pass, nullptr);
  }
  at::Tensor cur = x;
  bool first = true;
  while (true) {
    int idx = -1;
    for (int i = static_cast<int>(g.size()) - 1; i >= 0; --i)
      if (g[i].reduced) { idx = i; break; }
    uint64_t outer = 1, inner = 1;
    for (int i = 0; i < idx; ++i) outer *= static_cast<uint64_t>(g[i].size);
    for (int i = idx + 1; i < static_cast<int>(g.size()); ++i) inner *= static_cast<uint64_t>(g[i].size);
    const uint64_t R = static_cast<uint64_t>(g[idx].size);
    const bool last = --reduced == 0;
    PassOp p;
    p.comb = pass.comb;
    if (first) p.pre = pass.pre;
    p.p = pass.p;
    if (last) {
      p.post = pass.post;
      p.scale = pass.scale;
    }
    cur = ReduceView(op, cur, outer, R, inner, last ? y_dtype : c10::kFloat, p, nullptr);
    first = false;
    if (last) return cur;
    g.erase(g.begin() + idx);
    // Merge the kept neighbours that are now adjacent.
    if (idx > 0 && idx < static_cast<int>(g.size()) && !g[idx - 1].reduced && !g[idx].reduced) {
      g[idx - 1].size *= g[idx].size;
      g.erase(g.begin() + idx);
    }
  }
}

// A dense input in another dim order (channels_last) is reduced in its memory order, without a
// copy; the kept elements come back in logical order (a copy of the small result only when the
// kept dims' memory order differs, e.g. a reduction over N of an NHWC tensor).
at::Tensor ReduceGroups(const char* op, const at::Tensor& x_in, const DimMask& mask, c10::ScalarType y_dtype,
                        const PassOp& pass) {
  const int64_t nd = x_in.dim();
  if (nd > 1 && !x_in.is_contiguous() && x_in.is_non_overlapping_and_dense()) {
    std::vector<int64_t> order(static_cast<size_t>(nd));
    for (int64_t d = 0; d < nd; ++d) order[static_cast<size_t>(d)] = d;
    std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return x_in.stride(a) > x_in.stride(b); });
    const at::Tensor xp = x_in.permute(order);
    if (xp.is_contiguous()) {
      DimMask pm;
      std::vector<int64_t> kept_dims, kept_sizes;  // kept dims in memory order
      for (int64_t i = 0; i < nd; ++i) {
        const int64_t d = order[static_cast<size_t>(i)];
        pm[static_cast<size_t>(i)] = mask[static_cast<size_t>(d)];
        if (!mask[static_cast<size_t>(d)]) {
          kept_dims.push_back(d);
          kept_sizes.push_back(x_in.size(d));
        }
      }
      at::Tensor y = ReduceGroupsContiguous(op, xp, pm, y_dtype, pass);
      if (std::is_sorted(kept_dims.begin(), kept_dims.end())) return y;
      std::vector<int64_t> logical(kept_dims.size());  // the memory-order positions, in logical order
      std::iota(logical.begin(), logical.end(), 0);
      std::sort(logical.begin(), logical.end(), [&](int64_t i, int64_t j) { return kept_dims[i] < kept_dims[j]; });
      return Contiguous(y.view(kept_sizes).permute(logical)).view(y.sizes());
    }
  }
  return ReduceGroupsContiguous(op, Contiguous(x_in), mask, y_dtype, pass);
}

// The reduced dims moved to the end (one device copy when they are not already there): [kept, reduced].
at::Tensor ReducedDimsLast(const at::Tensor& x, const DimMask& mask, uint64_t* kept, uint64_t* red) {
  std::vector<int64_t> perm;
  *kept = 1;
  *red = 1;
  for (int64_t d = 0; d < x.dim(); ++d)
    if (!mask[d]) {
      perm.push_back(d);
      *kept *= static_cast<uint64_t>(x.size(d));
    }
  for (int64_t d = 0; d < x.dim(); ++d)
    if (mask[d]) {
      perm.push_back(d);
      *red *= static_cast<uint64_t>(x.size(d));
    }
  return Contiguous(x.permute(perm));
}

// outer / R / inner of one reduced dim (or of the whole tensor when dim is empty).
void SplitAround(const at::Tensor& x, std::optional<int64_t> dim, uint64_t* outer, uint64_t* R, uint64_t* inner) {
  *outer = 1;
  *inner = 1;
  if (!dim) {
    *R = static_cast<uint64_t>(x.numel());
    return;
  }
  if (x.dim() == 0) {
    *R = 1;
    return;
  }
  for (int64_t d = 0; d < *dim; ++d) *outer *= static_cast<uint64_t>(x.size(d));
  *R = static_cast<uint64_t>(x.size(*dim));
  for (int64_t d = *dim + 1; d < x.dim(); ++d) *inner *= static_cast<uint64_t>(x.size(d));
}

// ------------------------------------------------------------------------------- sum / mean
c10::ScalarType SumDtype(const at::Tensor& self, std::optional<c10::ScalarType> dtype) {
  if (dtype) return *dtype;
  if (c10::isIntegralType(self.scalar_type(), /*includeBool=*/true)) return c10::kLong;
  return self.scalar_type();
}

at::Tensor SumImpl(const char* op, const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim,
                   c10::ScalarType out_dtype, bool mean, bool nan_to_zero = false) {
  CheckSameNpuDevice(op, {{"self", &self}});
  const DimMask mask = MakeDimMask(op, self, dim, /*empty_means_all=*/true);
  if (IsNpuComplex64(self) && out_dtype == c10::kComplexFloat && !nan_to_zero) {
    // complex64: the float pairs reduced over the same dims (each part summed on its own).
    std::vector<int64_t> dims;
    for (int64_t d = 0; d < self.dim(); ++d)
      if (mask[d]) dims.push_back(d);
    const at::Tensor P = ComplexValuePairs(self);
    const at::Tensor r = dims.empty() ? P.clone() : mean ? at::mean(P, dims, keepdim) : at::sum(P, dims, keepdim);
    return at::view_as_complex(r.contiguous());
  }
  const std::vector<int64_t> out_sizes = ReducedSizes(self, mask, keepdim);
  const c10::DeviceIndex dev = self.device().index();
  if (mean) {
    TORCH_CHECK(c10::isFloatingType(self.scalar_type()) || c10::isComplexType(self.scalar_type()), op,
                "(): could not infer output dtype. Input dtype must be either a floating point or complex dtype. "
                "Got: ", self.scalar_type());
    TORCH_CHECK(c10::isFloatingType(out_dtype) || c10::isComplexType(out_dtype), op, ": dtype ", out_dtype,
                " is not supported; mean needs a floating point dtype");
  }
  const bool int_path = c10::isIntegralType(out_dtype, /*includeBool=*/true) ||
                        c10::isIntegralType(self.scalar_type(), /*includeBool=*/true);
  if (self.numel() == 0) {
    at::Tensor y = NpuEmpty(out_sizes, out_dtype, dev);
    if (y.numel() > 0) {
      if (mean) y.fill_(std::numeric_limits<double>::quiet_NaN());
      else y.zero_();
    }
    return y;
  }
  uint64_t R = 1;
  for (int64_t d = 0; d < self.dim(); ++d)
    if (mask[d]) R *= static_cast<uint64_t>(self.size(d));
  if (out_dtype == c10::kBool && !mean) {  // ATen casts the input to bool first: a sum in bool is an any()
    std::vector<int64_t> dims;
    for (int64_t d = 0; d < self.dim(); ++d)
      if (mask[d]) dims.push_back(d);
    return at::any(at::ne(self, 0), dims, keepdim).view(out_sizes);
  }
  if (int_path) {
    TORCH_CHECK(!mean, op, ": integer inputs are not supported");
    at::Tensor y = IntegerSum(op, self, mask, out_dtype);
    return y.view(out_sizes);
  }
  NPU_CHECK_DTYPE(IsNpuFloat(self.scalar_type()), self.scalar_type(), op, ": argument 'self' has dtype ",
                  self.scalar_type(), ", which is not supported on npu; supported dtypes: Float, Half, BFloat16, bool and integers");
  NPU_CHECK_DTYPE(IsNpuFloat(out_dtype) || out_dtype == c10::kDouble, out_dtype, op, ": dtype ", out_dtype,
                   " is not supported on npu; supported dtypes: Float, Half, BFloat16");
  const c10::ScalarType kernel_out = out_dtype == c10::kDouble ? c10::kFloat : out_dtype;
  PassOp pass;
  if (mean) pass.scale = static_cast<float>(1.0 / static_cast<double>(R));
  if (nan_to_zero) pass.pre = npu_kernels::kPreNanToZero;
  at::Tensor y = ReduceGroups(op, self, mask, kernel_out, pass);
  if (kernel_out != out_dtype) y = y.to(out_dtype);
  return y.view(out_sizes);
}

at::Tensor sum_dim(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim,
                   std::optional<c10::ScalarType> dtype) {
  return SumImpl("sum", self, dim, keepdim, SumDtype(self, dtype), false);
}
at::Tensor& sum_out(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim,
                    std::optional<c10::ScalarType> dtype, at::Tensor& out) {
  const c10::ScalarType dt = dtype ? *dtype : out.scalar_type();
  return CopyToOut("sum", SumImpl("sum", self, dim, keepdim, dt, false), out);
}
at::Tensor mean_dim(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim,
                    std::optional<c10::ScalarType> dtype) {
  // dtype= casts the input first (PyTorch's rule): an integer tensor has a mean in a float dtype
  if (dtype && c10::isFloatingType(*dtype) && c10::isIntegralType(self.scalar_type(), /*includeBool=*/true))
    return SumImpl("mean", self.to(*dtype), dim, keepdim, *dtype, true);
  return SumImpl("mean", self, dim, keepdim, dtype ? *dtype : self.scalar_type(), true);
}
at::Tensor& mean_out(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim,
                     std::optional<c10::ScalarType> dtype, at::Tensor& out) {
  return CopyToOut("mean", dtype ? mean_dim(self, dim, keepdim, dtype)
                                  : SumImpl("mean", self, dim, keepdim, out.scalar_type(), true), out);
}

at::Tensor nansum_npu(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim,
                  std::optional<c10::ScalarType> dtype) {
  return SumImpl("nansum", self, dim, keepdim, SumDtype(self, dtype), false, true);
}
at::Tensor& nansum_out(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim,
                       std::optional<c10::ScalarType> dtype, at::Tensor& out) {
  const c10::ScalarType dt = dtype ? *dtype : out.scalar_type();
  return CopyToOut("nansum", SumImpl("nansum", self, dim, keepdim, dt, false, true), out);
}

// ------------------------------------------------------------------------------- amax / amin / max / min
void CheckExtremeDtype(const char* op, const at::Tensor& self) {
  NPU_CHECK_DTYPE(IsNpuFloat(self.scalar_type()), self.scalar_type(), op, ": argument 'self' has dtype ",
                  self.scalar_type(), ", which is not supported on npu; supported dtypes: Float, Half, BFloat16");
}

// The min and / or the max over `dim` (the one not asked for is undefined); a slice holding a NaN gives
// NaN (the kernel's NaN screen, see reduce.h).
std::pair<at::Tensor, at::Tensor> Extremes(const char* op, const at::Tensor& self, c10::IntArrayRef dim, bool keepdim,
                                           bool want_min, bool want_max) {
  CheckSameNpuDevice(op, {{"self", &self}});
  CheckExtremeDtype(op, self);
  const DimMask mask = MakeDimMask(op, self, dim, true);
  const std::vector<int64_t> sizes = ReducedSizes(self, mask, keepdim);
  if (self.numel() == 0) {
    TORCH_CHECK(!dim.empty() || self.dim() == 0, op,
                "(): Expected reduction dim to be specified for input.numel() == 0. Specify the reduction dim with "
                "the 'dim' argument.");
    for (int64_t d = 0; d < self.dim(); ++d)
      TORCH_CHECK_INDEX(!mask[d] || self.size(d) != 0, op, "(): Expected reduction dim ", d,
                        " to have non-zero size.");
    auto empty = [&](bool want) { return want ? NpuEmpty(sizes, self.scalar_type(), self.device().index()) : at::Tensor(); };
    return {empty(want_min), empty(want_max)};
  }
  auto one = [&](bool want, npu_kernels::ReduceComb comb) {
    if (!want) return at::Tensor();
    PassOp pass;
    pass.comb = comb;
    return ReduceGroups(op, self, mask, self.scalar_type(), pass).view(sizes);
  };
  return {one(want_min, npu_kernels::kCombMin), one(want_max, npu_kernels::kCombMax)};
}

at::Tensor ExtremeImpl(const char* op, const at::Tensor& self, c10::IntArrayRef dim, bool keepdim, bool is_min) {
  auto [mn, mx] = Extremes(op, self, dim, keepdim, is_min, !is_min);
  return is_min ? mn : mx;
}

at::Tensor amax(const at::Tensor& self, c10::IntArrayRef dim, bool keepdim) {
  return ExtremeImpl("amax", self, dim, keepdim, false);
}
at::Tensor amin(const at::Tensor& self, c10::IntArrayRef dim, bool keepdim) {
  return ExtremeImpl("amin", self, dim, keepdim, true);
}
at::Tensor& amax_out(const at::Tensor& self, c10::IntArrayRef dim, bool keepdim, at::Tensor& out) {
  return CopyToOutExact("amax", ExtremeImpl("amax", self, dim, keepdim, false), out);
}
at::Tensor& amin_out(const at::Tensor& self, c10::IntArrayRef dim, bool keepdim, at::Tensor& out) {
  return CopyToOutExact("amin", ExtremeImpl("amin", self, dim, keepdim, true), out);
}
at::Tensor max_all(const at::Tensor& self) { return ExtremeImpl("max", self, {}, false, false); }
at::Tensor min_all(const at::Tensor& self) { return ExtremeImpl("min", self, {}, false, true); }
// max() / min() of a whole tensor: int32 / int64 exactly over their full range by the radix sort's
// range kernel (no read-back); other integers and bool through float (exact there); float64 takes
// the CPU fallback.
at::Tensor ExtremeAll(const at::Tensor& self, bool max) {
  const c10::ScalarType t = self.scalar_type();
  if ((t == c10::kInt || t == c10::kLong) && self.numel() > 0) {
    const at::Tensor range = DeviceIntRangeTensor(Contiguous(self));  // int64 (min, max)
    return range.select(0, max ? 1 : 0).to(t, /*non_blocking=*/false, /*copy=*/true);
  }
  if (IsNpuFloat(t)) return max ? max_all(self) : min_all(self);
  if (c10::isIntegralType(t, true)) return (max ? max_all(self.to(c10::kFloat)) : min_all(self.to(c10::kFloat))).to(t);
  return CallCpuFallback(max ? "aten::max" : "aten::min", "", {self})[0].toTensor();
}
at::Tensor max_all_npu(const at::Tensor& self) { return ExtremeAll(self, true); }
at::Tensor min_all_npu(const at::Tensor& self) { return ExtremeAll(self, false); }
at::Tensor& max_all_out(const at::Tensor& self, at::Tensor& out) {
  return CopyToOutExact("max", ExtremeImpl("max", self, {}, false, false), out);
}
at::Tensor& min_all_out(const at::Tensor& self, at::Tensor& out) {
  return CopyToOutExact("min", ExtremeImpl("min", self, {}, false, true), out);
}

std::tuple<at::Tensor, at::Tensor> aminmax_npu(const at::Tensor& self, std::optional<int64_t> dim, bool keepdim) {
  std::vector<int64_t> dims;
  if (dim) dims.push_back(*dim);
  if (!dim && self.dim() == 0) dims.push_back(0);
  auto [mn, mx] = Extremes("aminmax", self, dims, keepdim, true, true);
  if (!dim && keepdim && self.dim() > 0) {  // all dims reduced: keepdim gives all-ones sizes
    std::vector<int64_t> ones(self.dim(), 1);
    mn = mn.view(ones);
    mx = mx.view(ones);
  }
  return {mn, mx};
}
std::tuple<at::Tensor&, at::Tensor&> aminmax_out(const at::Tensor& self, std::optional<int64_t> dim, bool keepdim,
                                                 at::Tensor& min, at::Tensor& max) {
  auto [mn, mx] = aminmax_npu(self, dim, keepdim);
  CopyToOutExact("aminmax", mn, min);
  CopyToOutExact("aminmax", mx, max);
  return {min, max};
}

// ------------------------------------------------------------------------------- arg reductions
using ArgFn = void (*)(uint8_t*, uint8_t*, uint8_t*, uint8_t*, uint8_t*);

void LaunchArgOnce(const char* op, const at::Tensor& x, const at::Tensor* index_in, const at::Tensor* values,
                   const at::Tensor& indices, const npu_kernels::ArgReduceTiling& t) {
  CheckArch(op, x.device().index());
  ArgFn kernel = PickFloatKernel(op, x.scalar_type(), &arg_reduce_kernel_float, &arg_reduce_kernel_half,
                                 &arg_reduce_kernel_bf16);
  KernelLaunch launch{"arg_reduce_kernel", ascendc_host::CoreType::AIV, t.block_dim, x.device().index()};
  if (LogDebugEnabled())
    launch.detail = std::string(op) + " " + DescribeForLog({{"x", &x}}) + " [" + std::to_string(t.outer) + "," +
                    std::to_string(t.R) + "," + std::to_string(t.inner) + "] segments=" + std::to_string(t.segments);
  LaunchKernel(std::move(launch), kernel, t, x.data_ptr(),
               index_in ? index_in->data_ptr() : static_cast<void*>(nullptr),
               values ? values->data_ptr() : static_cast<void*>(nullptr), indices.data_ptr());
}

// Values (when wanted) and int64 indices of the max/min over R of x[outer, R, inner] (contiguous).
std::tuple<at::Tensor, at::Tensor> ArgView(const char* op, const at::Tensor& x, uint64_t outer, uint64_t R,
                                           uint64_t inner, bool is_min, bool want_values) {
  TORCH_CHECK(R <= static_cast<uint64_t>(std::numeric_limits<int32_t>::max()), op, ": reducing ", R,
              " elements is not supported on npu (the limit is 2^31 - 1)");
  if (TransposeRows(outer, R, inner)) {
    at::Tensor xt = x.view({static_cast<int64_t>(outer), static_cast<int64_t>(R)}).t().contiguous();
    return ArgView(op, xt, 1, R, outer, is_min, want_values);
  }
  const c10::DeviceIndex dev = x.device().index();
  const auto& soc = SocInfoFor(dev);
  const uint32_t in_b = static_cast<uint32_t>(x.element_size());
  auto t = npu_kernels::arg_reduce_tiling(outer, R, inner, in_b, is_min, kManySegments, soc);
  at::Tensor values = want_values ? NpuEmpty({static_cast<int64_t>(outer * inner)}, x.scalar_type(), dev) : at::Tensor();
  at::Tensor indices = NpuEmpty({static_cast<int64_t>(outer * inner)}, c10::kLong, dev);
  if (outer * inner == 0) return {values, indices};
  if (t.segments > 1) {
    const int64_t n1 = static_cast<int64_t>(outer * t.segments);
    at::Tensor v1 = NpuEmpty({n1}, x.scalar_type(), dev);
    at::Tensor i1 = NpuEmpty({n1}, c10::kLong, dev);
    LaunchArgOnce(op, x, nullptr, &v1, i1, t);
    auto t2 = npu_kernels::arg_reduce_tiling(outer, t.segments, 1, in_b, is_min, 1, soc);
    t2.index_in = 1;
    t2.write_values = want_values ? 1 : 0;
    LaunchArgOnce(op, v1, &i1, want_values ? &values : nullptr, indices, t2);
  } else {
    t.write_values = want_values ? 1 : 0;
    LaunchArgOnce(op, x, nullptr, want_values ? &values : nullptr, indices, t);
  }
  return {values, indices};
}

std::tuple<at::Tensor, at::Tensor> ArgImpl(const char* op, const at::Tensor& self, std::optional<int64_t> dim_opt,
                                           bool keepdim, bool is_min, bool want_values) {
  CheckSameNpuDevice(op, {{"self", &self}});
  CheckExtremeDtype(op, self);
  std::optional<int64_t> dim;
  if (dim_opt) dim = WrapDim(op, *dim_opt, self.dim());
  std::vector<int64_t> out_sizes;
  if (dim && self.dim() > 0) {
    for (int64_t d = 0; d < self.dim(); ++d) {
      if (d != *dim) out_sizes.push_back(self.size(d));
      else if (keepdim) out_sizes.push_back(1);
    }
  } else if (!dim && keepdim) {
    out_sizes.assign(self.dim(), 1);
  }
  if (self.numel() == 0) {
    TORCH_CHECK_INDEX(dim.has_value(), op, "(): Expected reduction dim to be specified for input.numel() == 0.");
    TORCH_CHECK_INDEX(self.dim() == 0 || self.size(*dim) != 0, op, "(): Expected reduction dim ", *dim,
                      " to have non-zero size.");
    at::Tensor v = want_values ? NpuEmpty(out_sizes, self.scalar_type(), self.device().index()) : at::Tensor();
    return {v, NpuEmpty(out_sizes, c10::kLong, self.device().index())};
  }
  at::Tensor x = Contiguous(self);
  uint64_t outer, R, inner;
  SplitAround(x, dim, &outer, &R, &inner);
  // NaN wins, at its first index, as on the CPU: the kernel finds it in the same pass.
  auto [values, indices] = ArgView(op, x, outer, R, inner, is_min, want_values);
  if (want_values) values = values.view(out_sizes);
  return {values, indices.view(out_sizes)};
}

at::Tensor argmax_npu(const at::Tensor& self, std::optional<int64_t> dim, bool keepdim) {
  return std::get<1>(ArgImpl("argmax", self, dim, keepdim, false, false));
}
at::Tensor argmin_npu(const at::Tensor& self, std::optional<int64_t> dim, bool keepdim) {
  return std::get<1>(ArgImpl("argmin", self, dim, keepdim, true, false));
}
at::Tensor& argmax_out(const at::Tensor& self, std::optional<int64_t> dim, bool keepdim, at::Tensor& out) {
  return CopyToOutExact("argmax", argmax_npu(self, dim, keepdim), out);
}
at::Tensor& argmin_out(const at::Tensor& self, std::optional<int64_t> dim, bool keepdim, at::Tensor& out) {
  return CopyToOutExact("argmin", argmin_npu(self, dim, keepdim), out);
}
std::tuple<at::Tensor, at::Tensor> max_dim(const at::Tensor& self, int64_t dim, bool keepdim) {
  return ArgImpl("max", self, dim, keepdim, false, true);
}
std::tuple<at::Tensor, at::Tensor> min_dim(const at::Tensor& self, int64_t dim, bool keepdim) {
  return ArgImpl("min", self, dim, keepdim, true, true);
}
std::tuple<at::Tensor&, at::Tensor&> max_dim_out(const at::Tensor& self, int64_t dim, bool keepdim, at::Tensor& max,
                                                 at::Tensor& max_values) {
  auto [v, i] = max_dim(self, dim, keepdim);
  CopyToOutExact("max", v, max);
  CopyToOutExact("max", i, max_values);
  return {max, max_values};
}
std::tuple<at::Tensor&, at::Tensor&> min_dim_out(const at::Tensor& self, int64_t dim, bool keepdim, at::Tensor& min,
                                                 at::Tensor& min_indices) {
  auto [v, i] = min_dim(self, dim, keepdim);
  CopyToOutExact("min", v, min);
  CopyToOutExact("min", i, min_indices);
  return {min, min_indices};
}

// ------------------------------------------------------------------------------- var / std
// Returns (var or std in self's dtype, mean in float) over the dims of `mask`.
std::tuple<at::Tensor, at::Tensor> VarImpl(const char* op, const at::Tensor& self, at::OptionalIntArrayRef dim,
                                           const std::optional<c10::Scalar>& correction, bool keepdim, bool take_sqrt) {
  CheckSameNpuDevice(op, {{"self", &self}});
  TORCH_CHECK(c10::isFloatingType(self.scalar_type()) || c10::isComplexType(self.scalar_type()),
              op, ": std and var only support floating point and complex dtypes (got ", self.scalar_type(), ")");
  CheckExtremeDtype(op, self);
  const DimMask mask = MakeDimMask(op, self, dim, true);
  const std::vector<int64_t> out_sizes = ReducedSizes(self, mask, keepdim);
  const double corr = correction ? correction->toDouble() : 1.0;
  const c10::DeviceIndex dev = self.device().index();
  uint64_t kept, R;
  at::Tensor x = ReducedDimsLast(Contiguous(self), mask, &kept, &R);
  if (self.numel() == 0 || R == 0) {
    at::Tensor v = NpuEmpty(out_sizes, self.scalar_type(), dev);
    at::Tensor m = NpuEmpty(out_sizes, self.scalar_type(), dev);
    if (v.numel() > 0) {
      v.fill_(std::numeric_limits<double>::quiet_NaN());
      m.fill_(std::numeric_limits<double>::quiet_NaN());
    }
    return {v, m};
  }
  PassOp mean_pass;
  mean_pass.scale = static_cast<float>(1.0 / static_cast<double>(R));
  at::Tensor mean = ReduceView(op, x, kept, R, 1, c10::kFloat, mean_pass, nullptr);
  PassOp dev_pass;
  dev_pass.pre = npu_kernels::kPreCenterSq;
  const double dof = std::max(0.0, static_cast<double>(R) - corr);
  if (dof <= 0) {
    TORCH_WARN(op, "(): degrees of freedom is <= 0. Correction should be strictly less than the reduction factor "
                   "(input numel divided by output numel).");
  }
  dev_pass.scale = static_cast<float>(1.0 / dof);
  if (take_sqrt) dev_pass.post = npu_kernels::kPostSqrt;
  at::Tensor var = ReduceView(op, x, kept, R, 1, self.scalar_type(), dev_pass, &mean);
  return {var.view(out_sizes), mean.view(out_sizes)};
}

at::Tensor var_correction(const at::Tensor& self, at::OptionalIntArrayRef dim,
                          const std::optional<c10::Scalar>& correction, bool keepdim) {
  return std::get<0>(VarImpl("var", self, dim, correction, keepdim, false));
}
at::Tensor std_correction(const at::Tensor& self, at::OptionalIntArrayRef dim,
                          const std::optional<c10::Scalar>& correction, bool keepdim) {
  return std::get<0>(VarImpl("std", self, dim, correction, keepdim, true));
}
at::Tensor& var_correction_out(const at::Tensor& self, at::OptionalIntArrayRef dim,
                               const std::optional<c10::Scalar>& correction, bool keepdim, at::Tensor& out) {
  return CopyToOut("var", var_correction(self, dim, correction, keepdim), out);
}
at::Tensor& std_correction_out(const at::Tensor& self, at::OptionalIntArrayRef dim,
                               const std::optional<c10::Scalar>& correction, bool keepdim, at::Tensor& out) {
  return CopyToOut("std", std_correction(self, dim, correction, keepdim), out);
}
std::tuple<at::Tensor, at::Tensor> var_mean_correction(const at::Tensor& self, at::OptionalIntArrayRef dim,
                                                       const std::optional<c10::Scalar>& correction, bool keepdim) {
  auto [v, m] = VarImpl("var_mean", self, dim, correction, keepdim, false);
  return {v, m.scalar_type() == self.scalar_type() ? m : m.to(self.scalar_type())};
}
std::tuple<at::Tensor, at::Tensor> std_mean_correction(const at::Tensor& self, at::OptionalIntArrayRef dim,
                                                       const std::optional<c10::Scalar>& correction, bool keepdim) {
  auto [v, m] = VarImpl("std_mean", self, dim, correction, keepdim, true);
  return {v, m.scalar_type() == self.scalar_type() ? m : m.to(self.scalar_type())};
}

// ------------------------------------------------------------------------------- linalg_vector_norm
at::Tensor VectorNorm(const at::Tensor& self, const c10::Scalar& ord, at::OptionalIntArrayRef dim, bool keepdim,
                      std::optional<c10::ScalarType> dtype) {
  const char* op = "linalg.vector_norm";
  CheckSameNpuDevice(op, {{"self", &self}});
  TORCH_CHECK(c10::isFloatingType(self.scalar_type()) || c10::isComplexType(self.scalar_type()), op,
              ": Expected a floating point or complex tensor as input. Got ", self.scalar_type());
  CheckExtremeDtype(op, self);
  const c10::ScalarType out_dtype = dtype ? *dtype : self.scalar_type();
  NPU_CHECK_DTYPE(IsNpuFloat(out_dtype), out_dtype, op, ": dtype ", out_dtype,
                  " is not supported on npu; supported dtypes: Float, Half, BFloat16");
  const double p = ord.toDouble();
  const DimMask mask = MakeDimMask(op, self, dim, true);
  const std::vector<int64_t> out_sizes = ReducedSizes(self, mask, keepdim);
  const c10::DeviceIndex dev = self.device().index();
  if (self.numel() == 0) {
    at::Tensor y = NpuEmpty(out_sizes, out_dtype, dev);
    TORCH_CHECK(y.numel() == 0 || (p >= 0 && !std::isinf(p)), op, " cannot compute the ", ord,
                " norm on an empty tensor because the operation does not have an identity");
    if (y.numel() > 0) y.zero_();
    return y;
  }
  PassOp pass;
  if (std::isinf(p)) {
    pass.pre = npu_kernels::kPreAbs;
    pass.comb = p > 0 ? npu_kernels::kCombMax : npu_kernels::kCombMin;
  } else if (p == 0) {
    pass.pre = npu_kernels::kPreNonZero;
  } else if (p == 1) {
    pass.pre = npu_kernels::kPreAbs;
  } else if (p == 2) {
    pass.pre = npu_kernels::kPreSquare;
    pass.post = npu_kernels::kPostSqrt;
  } else {
    pass.pre = npu_kernels::kPrePowAbs;
    pass.post = npu_kernels::kPostPowInv;
    pass.p = static_cast<float>(p);
  }
  // The input is cast to dtype first when one is given (ATen semantics), so the kernel sees that dtype.
  at::Tensor x = (dtype && *dtype != self.scalar_type()) ? self.to(*dtype) : self;
  at::Tensor y = ReduceGroups(op, x, mask, out_dtype, pass);
  return y.view(out_sizes);
}

at::Tensor& VectorNormOut(const at::Tensor& self, const c10::Scalar& ord, at::OptionalIntArrayRef dim, bool keepdim,
                          std::optional<c10::ScalarType> dtype, at::Tensor& out) {
  return CopyToOutExact("linalg.vector_norm", VectorNorm(self, ord, dim, keepdim, dtype), out);
}

// ------------------------------------------------------------------------------- any / all
// any = max over (x != 0), all = min over (x != 0), in float; bool and integer inputs are first converted to
// half on the device (a non-zero integer never becomes 0).
at::Tensor AnyAllImpl(const char* op, const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim,
                      bool is_all) {
  CheckSameNpuDevice(op, {{"self", &self}});
  NPU_CHECK_DTYPE(!c10::isComplexType(self.scalar_type()) && self.scalar_type() != c10::kDouble, self.scalar_type(),
                  op, ": argument 'self' has dtype ", self.scalar_type(), ", which is not supported on npu");
  const DimMask mask = MakeDimMask(op, self, dim, /*empty_means_all=*/false);
  const std::vector<int64_t> out_sizes = ReducedSizes(self, mask, keepdim);
  const c10::ScalarType out_dtype = self.scalar_type() == c10::kByte ? c10::kByte : c10::kBool;
  if (self.numel() == 0) {
    at::Tensor y = NpuEmpty(out_sizes, out_dtype, self.device().index());
    if (y.numel() > 0) y.fill_(is_all ? 1 : 0);
    return y;
  }
  at::Tensor x = IsNpuFloat(self.scalar_type()) ? self : self.to(c10::kHalf);
  PassOp pass;
  pass.pre = npu_kernels::kPreNonZero;
  pass.comb = is_all ? npu_kernels::kCombMin : npu_kernels::kCombMax;
  at::Tensor y = ReduceGroups(op, x, mask, c10::kFloat, pass);
  return y.to(out_dtype).view(out_sizes);
}

at::Tensor any_all(const at::Tensor& self) { return AnyAllImpl("any", self, std::nullopt, false, false); }
at::Tensor any_dim(const at::Tensor& self, int64_t dim, bool keepdim) {
  return AnyAllImpl("any", self, c10::IntArrayRef{dim}, keepdim, false);
}
// any / all write a bool or uint8 out= (ATen's rule on every backend), whatever the input's dtype.
at::Tensor& AnyAllOut(const char* op, const at::Tensor& r, at::Tensor& out) {
  TORCH_CHECK(out.scalar_type() == c10::kBool || out.scalar_type() == c10::kByte, op,
              " only supports bool tensor for result, got: ", out.scalar_type());
  return CopyToOut(op, r.scalar_type() == out.scalar_type() ? r : r.to(out.scalar_type()), out);  // (0 / 1 values)
}
at::Tensor any_dims(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim) {
  return AnyAllImpl("any", self, dim, keepdim, false);
}
at::Tensor& any_all_out(const at::Tensor& self, at::Tensor& out) { return AnyAllOut("any", any_all(self), out); }
at::Tensor& any_dim_out(const at::Tensor& self, int64_t dim, bool keepdim, at::Tensor& out) {
  return AnyAllOut("any", any_dim(self, dim, keepdim), out);
}
at::Tensor& any_dims_out(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim, at::Tensor& out) {
  return AnyAllOut("any", any_dims(self, dim, keepdim), out);
}
at::Tensor all_all(const at::Tensor& self) { return AnyAllImpl("all", self, std::nullopt, false, true); }
at::Tensor all_dim(const at::Tensor& self, int64_t dim, bool keepdim) {
  return AnyAllImpl("all", self, c10::IntArrayRef{dim}, keepdim, true);
}
at::Tensor all_dims(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim) {
  return AnyAllImpl("all", self, dim, keepdim, true);
}
at::Tensor& all_all_out(const at::Tensor& self, at::Tensor& out) { return AnyAllOut("all", all_all(self), out); }
at::Tensor& all_dim_out(const at::Tensor& self, int64_t dim, bool keepdim, at::Tensor& out) {
  return AnyAllOut("all", all_dim(self, dim, keepdim), out);
}
at::Tensor& all_dims_out(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim, at::Tensor& out) {
  return AnyAllOut("all", all_dims(self, dim, keepdim), out);
}

// count_nonzero: an exact integer sum of (x != 0) (the != comes from a dtype conversion to bool on the device).
at::Tensor count_nonzero_npu(const at::Tensor& self, c10::IntArrayRef dim) {
  const char* op = "count_nonzero";
  CheckSameNpuDevice(op, {{"self", &self}});
  const DimMask mask = MakeDimMask(op, self, dim, true);
  const std::vector<int64_t> out_sizes = ReducedSizes(self, mask, false);
  if (self.numel() == 0) {
    at::Tensor y = NpuEmpty(out_sizes, c10::kLong, self.device().index());
    if (y.numel() > 0) y.zero_();
    return y;
  }
  at::Tensor b = self.scalar_type() == c10::kBool ? self : self.to(c10::kBool);
  return IntegerSum(op, b, mask, c10::kLong).view(out_sizes);
}

// ------------------------------------------------------------------------------- integer sums
TORCH_OPS_NN_REGISTER_KERNEL(int_sum_kernel);

// Runs int_sum_kernel on a[outer, R, inner] (+ b) -> (lo, hi) int32 planes of outer * inner.
std::tuple<at::Tensor, at::Tensor> IntSumView(const at::Tensor& a, const at::Tensor* b, bool a_unsigned,
                                              uint64_t outer, uint64_t R, uint64_t inner) {
  const c10::DeviceIndex dev = a.device().index();
  const int64_t n = static_cast<int64_t>(outer * inner);
  at::Tensor lo = NpuEmpty({n}, c10::kInt, dev);
  at::Tensor hi = NpuEmpty({n}, c10::kInt, dev);
  if (n == 0) return {lo, hi};
  CheckArch("sum", dev);
  const auto t = npu_kernels::int_sum_tiling(outer, R, inner, a_unsigned, b != nullptr, SocInfoFor(dev));
  KernelLaunch launch{"int_sum_kernel", ascendc_host::CoreType::AIV, t.block_dim, dev};
  if (LogDebugEnabled())
    launch.detail = "sum [" + std::to_string(outer) + "," + std::to_string(R) + "," + std::to_string(inner) +
                    "] planes=" + std::to_string(b ? 2 : 1) + " blockDim=" + std::to_string(t.block_dim);
  LaunchKernel(std::move(launch), &int_sum_kernel, t, a.data_ptr(), b ? b->data_ptr() : static_cast<void*>(nullptr),
               lo.data_ptr(), hi.data_ptr());
  return {lo, hi};
}

// Exact int64 sums of bool/integer tensors over the dims of `mask` (flat result of the output's numel).
at::Tensor IntegerSum(const char* op, const at::Tensor& self, const DimMask& mask, c10::ScalarType out_dtype) {
  const c10::DeviceIndex dev = self.device().index();
  at::Tensor x = self;
  if (!c10::isIntegralType(x.scalar_type(), /*includeBool=*/true)) x = x.to(out_dtype);  // sum(float, dtype=int)
  TORCH_CHECK_TYPE(c10::isIntegralType(x.scalar_type(), true), op, ": dtype ", x.scalar_type(), " is not supported");
  x = Contiguous(x);
  // int32 planes: a = the value (int32 and narrower) or the low words (int64, unsigned); b = the high words.
  const bool is64 = x.scalar_type() == c10::kLong;
  at::Tensor a, b;
  if (is64) {
    // (as_strided: a contiguous one-element view may carry any stride, e.g. a matrix's diagonal)
    at::Tensor words = x.as_strided({x.numel()}, {1}).view(c10::kInt).view({x.numel(), 2});
    a = words.select(1, 0).contiguous().view(x.sizes());
    b = words.select(1, 1).contiguous().view(x.sizes());
  } else {
    a = x.scalar_type() == c10::kInt ? x : x.to(c10::kInt);
  }
  // [outer, R, inner] with inner > 1 directly when one group of dims is reduced; otherwise the reduced dims
  // go first ([R, kept]) — or, for a full reduction, a zero-padded [R / L, L] then [L, 1].
  std::vector<Group> g = Coalesce(x.sizes(), mask);
  int groups = 0, idx = -1;
  for (int i = 0; i < static_cast<int>(g.size()); ++i)
    if (g[i].reduced) { ++groups; idx = i; }
  uint64_t outer = 1, R = 1, inner = 1;
  if (groups == 1 && idx + 1 < static_cast<int>(g.size())) {
    for (int i = 0; i < idx; ++i) outer *= static_cast<uint64_t>(g[i].size);
    R = static_cast<uint64_t>(g[idx].size);
    for (int i = idx + 1; i < static_cast<int>(g.size()); ++i) inner *= static_cast<uint64_t>(g[i].size);
  } else {
    std::vector<int64_t> perm;
    for (int64_t d = 0; d < x.dim(); ++d)
      if (mask[d]) { perm.push_back(d); R *= static_cast<uint64_t>(x.size(d)); }
    for (int64_t d = 0; d < x.dim(); ++d)
      if (!mask[d]) { perm.push_back(d); inner *= static_cast<uint64_t>(x.size(d)); }
    a = Contiguous(a.permute(perm));
    if (is64) b = Contiguous(b.permute(perm));
    constexpr uint64_t kLanes = 1024;
    if (inner == 1 && R > 4 * kLanes) {  // full reduction: lanes of kLanes columns, then the lanes
      const int64_t rows = static_cast<int64_t>((R + kLanes - 1) / kLanes);
      auto padded = [&](const at::Tensor& p) {
        at::Tensor z = NpuEmpty({rows * static_cast<int64_t>(kLanes)}, c10::kInt, dev);
        z.zero_();
        z.narrow(0, 0, static_cast<int64_t>(R)).copy_(p.view({-1}));
        return z;
      };
      at::Tensor pa = padded(a);
      at::Tensor pb = is64 ? padded(b) : at::Tensor();
      auto [lo1, hi1] = IntSumView(pa, is64 ? &pb : nullptr, is64, 1, static_cast<uint64_t>(rows), kLanes);
      a = lo1;
      b = hi1;
      R = kLanes;
      auto [lo, hi] = IntSumView(a, &b, true, 1, R, 1);
      return AssembleInt64(lo, hi, out_dtype);
    }
  }
  auto [lo, hi] = IntSumView(a, is64 ? &b : nullptr, is64, outer, R, inner);
  return AssembleInt64(lo, hi, out_dtype);
}



}  // namespace

}  // namespace torch_ops_nn

NPU_ATEN_LIBRARY_IMPL(m) {
  using namespace torch_ops_nn;
  NPU_IMPL("sum.dim_IntList", sum_dim, NotDoubleOrComplex64);
  NPU_IMPL("sum.IntList_out", sum_out, NotDoubleOrComplex64);
  NPU_IMPL("nansum", nansum_npu, NotDouble);
  NPU_IMPL("nansum.out", nansum_out, NotDouble);
  NPU_IMPL_INT_VIA_FLOAT("aminmax", aminmax_npu);
  NPU_IMPL("aminmax.out", aminmax_out, FloatOnly);
  NPU_IMPL("count_nonzero.dim_IntList", count_nonzero_npu, NotDouble);
  NPU_IMPL("mean.dim", mean_dim, NotDoubleOrComplex64);
  NPU_IMPL("mean.out", mean_out, NotDoubleOrComplex64);
  NPU_IMPL_INT_VIA_FLOAT("amax", amax);
  NPU_IMPL("amax.out", amax_out, FloatOnly);
  NPU_IMPL_INT_VIA_FLOAT("amin", amin);
  NPU_IMPL("amin.out", amin_out, FloatOnly);
  m.impl("max", TORCH_FN(max_all_npu));
  NPU_IMPL("max.unary_out", max_all_out, FloatOnly);
  m.impl("min", TORCH_FN(min_all_npu));
  NPU_IMPL("min.unary_out", min_all_out, FloatOnly);
  NPU_IMPL_INT_VIA_FLOAT("max.dim", max_dim);
  NPU_IMPL("max.dim_max", max_dim_out, FloatOnly);
  NPU_IMPL_INT_VIA_FLOAT("min.dim", min_dim);
  NPU_IMPL("min.dim_min", min_dim_out, FloatOnly);
  NPU_IMPL_INT_VIA_FLOAT_NO_BOOL("argmax", argmax_npu);
  NPU_IMPL("argmax.out", argmax_out, FloatOnly);
  NPU_IMPL_INT_VIA_FLOAT_NO_BOOL("argmin", argmin_npu);
  NPU_IMPL("argmin.out", argmin_out, FloatOnly);
  NPU_IMPL("var.correction", var_correction, NotDouble);
  NPU_IMPL("var.correction_out", var_correction_out, NotDouble);
  NPU_IMPL("std.correction", std_correction, NotDouble);
  NPU_IMPL("std.correction_out", std_correction_out, NotDouble);
  NPU_IMPL("var_mean.correction", var_mean_correction, NotDouble);
  NPU_IMPL("std_mean.correction", std_mean_correction, NotDouble);
  NPU_IMPL("linalg_vector_norm", VectorNorm, NotDouble);
  NPU_IMPL("linalg_vector_norm.out", VectorNormOut, NotDouble);
  NPU_IMPL("any", any_all, NotDouble);
  NPU_IMPL("any.dim", any_dim, NotDouble);
  NPU_IMPL("any.dims", any_dims, NotDouble);
  NPU_IMPL("any.all_out", any_all_out, NotDouble);
  NPU_IMPL("any.out", any_dim_out, NotDouble);
  NPU_IMPL("any.dims_out", any_dims_out, NotDouble);
  NPU_IMPL("all", all_all, NotDouble);
  NPU_IMPL("all.dim", all_dim, NotDouble);
  NPU_IMPL("all.dims", all_dims, NotDouble);
  NPU_IMPL("all.all_out", all_all_out, NotDouble);
  NPU_IMPL("all.out", all_dim_out, NotDouble);
  NPU_IMPL("all.dims_out", all_dims_out, NotDouble);
}
