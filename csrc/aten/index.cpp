// Indexing ops on npu: index_select (embedding's forward goes through it) on the index_select kernel
// (ascendc_kernels/index_select.h); tril / triu on the tril kernel (ascendc_kernels/tril.h).
#include <ATen/MemoryOverlap.h>
#include <ATen/ops/nonzero.h>
#include <ATen/ops/index_put.h>
#include <ATen/ops/aminmax.h>
#include <ATen/ops/ones.h>
#include <ATen/ops/ge.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/arange.h>
#include <ATen/ops/eq.h>
#include <ATen/ops/logical_or.h>
#include <ATen/core/Tensor.h>
#include <ATen/ExpandUtils.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/add.h>
#include <ATen/ops/constant_pad_nd.h>
#include <ATen/ops/cumsum.h>
#include <ATen/ops/lt.h>
#include <ATen/ops/where.h>
#include <ATen/ops/masked_fill.h>
#include <ATen/ops/index_select.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include <algorithm>
#include <optional>
#include <vector>

#include "aten/kernel_launch.h"
#include "aten/op_common.h"
#include "core/cpu_fallback.h"
#include "cumsum.h"
#include "elementwise.h"
#include "embedding_backward.h"
#include "gather_scatter.h"
#include "index_select.h"
#include "tril.h"

namespace torch_ops_nn {

TORCH_OPS_NN_REGISTER_KERNEL(index_select_kernel);
TORCH_OPS_NN_REGISTER_KERNEL(index_linear_kernel);
TORCH_OPS_NN_REGISTER_KERNEL(index_put_kernel);
TORCH_OPS_NN_REGISTER_KERNEL(tril_kernel);
TORCH_OPS_NN_REGISTER_KERNEL(embedding_backward_kernel);
TORCH_OPS_NN_REGISTER_KERNEL(cumsum_kernel);

at::Tensor NonzeroFlat(const char* op, const at::Tensor& mask);  // mask_index.cpp
// gather_scatter.cpp: self[.., index[j], ..] (+)= source[.., j, ..] on the scatter kernels.
at::Tensor& IndexAddInto(const char* op, at::Tensor& self, int64_t dim, const at::Tensor& index,
                         const at::Tensor& source, bool add);
bool IndexAddSupported(c10::ScalarType t);

namespace {

// The dim that the one index tensor of `indices` addresses (an int32/int64 tensor, or a boolean mask of
// at least one dim), or -1 when there is none or several (those cases take the CPU fallback).
int64_t SingleIndexPosition(const c10::List<std::optional<at::Tensor>>& indices, int64_t ndim) {
  if (indices.size() > size_t(ndim)) return -1;
  int64_t pos = -1;
  for (size_t i = 0; i < indices.size(); ++i) {
    const std::optional<at::Tensor> t = indices.get(i);
    if (!t.has_value() || !t->defined()) continue;
    const c10::ScalarType st = t->scalar_type();
    const bool mask = (st == c10::kBool || st == c10::kByte) && t->dim() > 0;
    if (pos >= 0 || (st != c10::kLong && st != c10::kInt && !mask)) return -1;
    pos = int64_t(i);
  }
  return pos;
}

// A boolean mask at dim `pos` covers dims [pos, pos + mask.dim()) of self with their exact sizes.
void CheckMaskShape(const char* op, const at::Tensor& self, int64_t pos, const at::Tensor& mask) {
  const int64_t k = mask.dim();
  TORCH_CHECK_INDEX(pos + k <= self.dim(), op, ": too many indices for tensor of dimension ", self.dim(),
                    " (a mask of ", k, " dims at dim ", pos, ")");
  for (int64_t j = 0; j < k; ++j)
    TORCH_CHECK_INDEX(mask.size(j) == self.size(pos + j), op, ": the shape of the mask ", mask.sizes(), " at index ",
                      j, " does not match the shape of the indexed tensor ", self.sizes(), " at index ", pos + j);
}

// Python semantics: -d <= i < d, negatives counted from the end; an index below -d stays as given, so
// the kernel's range check reports the index the user wrote.
at::Tensor WrapNegative(const at::Tensor& idx, int64_t d) {
  const at::Tensor w = at::where(at::lt(idx, 0), at::add(idx, d), idx);
  return at::where(at::lt(w, 0), idx, w);
}

// An empty result launches no kernel, so no kernel checks the indices: then one flag read back does
// (a device check inside npu graphs), as the CPU checks them whatever the result's size.
void CheckIndicesWithoutKernel(const char* op, const at::Tensor& idx, int64_t dim, int64_t size) {
  if (idx.numel() == 0) return;
  const at::Tensor bad = at::logical_or(at::lt(idx, 0), at::ge(idx, size));
  CheckNoneSet(bad, c10::str(op, ": index out of range in self: an index lies outside [0, ", size, ") for dimension ",
                             dim, " of size ", size));
}

// check_empty: an empty result still has its indices checked (index_select's rule on the CPU; x[idx]
// does not check them then).
at::Tensor IndexSelect(const at::Tensor& self, int64_t dim, const at::Tensor& index, bool check_empty) {
  const char* op = "index_select";
  const c10::DeviceIndex dev = CheckSameNpuDevice(op, {{"self", &self}, {"index", &index}});
  TORCH_CHECK_INDEX(index.dim() <= 1, op, "(): Index is supposed to be a vector, got a ", index.dim(),
                    "-D tensor of shape ", index.sizes());
  TORCH_CHECK_TYPE(index.scalar_type() == c10::kLong || index.scalar_type() == c10::kInt, op,
                   "(): Expected dtype int32 or int64 for index, got ", index.scalar_type());
  dim = WrapDim(op, dim, self.dim());
  const at::Tensor x = self.dim() == 0 ? self.view({1}) : Contiguous(self);
  const int64_t n_idx = index.numel();
  TORCH_CHECK_INDEX(self.dim() > 0 || n_idx == 1, op, "(): Index to scalar can have only 1 value, got ", n_idx,
                    " value(s)");
  std::vector<int64_t> sizes(x.sizes().begin(), x.sizes().end());
  const int64_t d = sizes[dim];
  sizes[dim] = n_idx;
  TORCH_CHECK_INDEX(d > 0 || n_idx == 0, op, "(): index out of range in self: dimension ", dim,
                    " has size 0 and ", n_idx, " indices were given");
  at::Tensor out = NpuEmpty(sizes, x.scalar_type(), dev);
  if (out.numel() > 0) {
    uint64_t outer = 1, inner = 1;
    for (int64_t i = 0; i < dim; ++i) outer *= uint64_t(sizes[i]);
    for (int64_t i = dim + 1; i < int64_t(sizes.size()); ++i) inner *= uint64_t(sizes[i]);
    const at::Tensor idx = index.contiguous();
    const auto t = npu_kernels::index_select_tiling(outer, uint64_t(d), inner * x.element_size(), uint64_t(n_idx),
                                                    idx.scalar_type() == c10::kLong, SocInfoFor(dev), /*gather=*/true);
    KernelLaunch launch{"index_select_kernel", ascendc_host::CoreType::AIV, t.block_dim, dev};
    if (LogDebugEnabled()) launch.detail = DescribeForLog({{"self", &x}, {"index", &idx}}) + " dim=" + std::to_string(dim);
    LaunchKernel(std::move(launch), &index_select_kernel, t, x.data_ptr(), idx.data_ptr(), out.data_ptr());
  } else if (check_empty) {
    CheckIndicesWithoutKernel("index_select()", index, dim, d);
  }
  if (self.dim() == 0) return out.squeeze(0);
  return out;
}
at::Tensor index_select_npu(const at::Tensor& self, int64_t dim, const at::Tensor& index) {
  return IndexSelect(self, dim, index, /*check_empty=*/true);
}

at::Tensor& index_select_out(const at::Tensor& self, int64_t dim, const at::Tensor& index, at::Tensor& out) {
  return CopyToOutExact("index_select", index_select_npu(self, dim, index), out);
}

// ---- tril / triu (the tril kernel; any dtype)
void LaunchTril(const char* op, const at::Tensor& x, const at::Tensor& y, int64_t k, bool upper) {
  const c10::DeviceIndex dev = x.device().index();
  const int64_t R = x.size(-2), C = x.size(-1);
  if (x.numel() == 0) return;
  const uint64_t batch = uint64_t(x.numel() / (R * C));
  const auto t = npu_kernels::tril_tiling(batch, uint64_t(R), uint64_t(C), k, uint32_t(x.element_size()), upper,
                                          x.is_same(y), SocInfoFor(dev));
  KernelLaunch launch{"tril_kernel", ascendc_host::CoreType::AIV, t.block_dim, dev};
  if (LogDebugEnabled()) launch.detail = std::string(op) + " " + DescribeForLog({{"self", &x}}) + " diagonal=" + std::to_string(k);
  LaunchKernel(std::move(launch), &tril_kernel, t, x.data_ptr(), y.data_ptr());
}
at::Tensor TrilImpl(const char* op, const at::Tensor& self, int64_t k, bool upper) {
  CheckSameNpuDevice(op, {{"self", &self}});
  TORCH_CHECK(self.dim() >= 2, op, ": input tensor must have at least 2 dimensions, got ", self.dim());
  const at::Tensor x = Contiguous(self);
  at::Tensor y = NpuEmpty(x.sizes(), x.scalar_type(), x.device().index());
  LaunchTril(op, x, y, k, upper);
  return y;
}
at::Tensor tril_npu(const at::Tensor& self, int64_t k) { return TrilImpl("tril", self, k, false); }
at::Tensor triu_npu(const at::Tensor& self, int64_t k) { return TrilImpl("triu", self, k, true); }
at::Tensor& TrilInPlace(const char* op, at::Tensor& self, int64_t k, bool upper) {
  CheckSameNpuDevice(op, {{"self", &self}});
  TORCH_CHECK(self.dim() >= 2, op, ": input tensor must have at least 2 dimensions, got ", self.dim());
  if (self.is_contiguous()) {
    LaunchTril(op, self, self, k, upper);
  } else {
    self.copy_(TrilImpl(op, self, k, upper));
  }
  return self;
}
at::Tensor& tril_(at::Tensor& self, int64_t k) { return TrilInPlace("tril_", self, k, false); }
at::Tensor& triu_(at::Tensor& self, int64_t k) { return TrilInPlace("triu_", self, k, true); }
at::Tensor& tril_out(const at::Tensor& self, int64_t k, at::Tensor& out) {
  return CopyToOutExact("tril", TrilImpl("tril.out", self, k, false), out);
}
at::Tensor& triu_out(const at::Tensor& self, int64_t k, at::Tensor& out) {
  return CopyToOutExact("triu", TrilImpl("triu.out", self, k, true), out);
}

// ---- embedding_dense_backward (the embedding_backward kernel; scale_grad_by_freq takes the CPU fallback)
at::Tensor embedding_dense_backward_npu(const at::Tensor& grad, const at::Tensor& indices, c10::SymInt num_weights_s,
                                        c10::SymInt padding_idx_s, bool scale_grad_by_freq) {
  const char* op = "embedding_dense_backward";
  const int64_t num_weights = num_weights_s.expect_int(), padding_idx = padding_idx_s.expect_int();
  if (scale_grad_by_freq || !IsNpuFloat(grad.scalar_type())) {
    return CallCpuFallback("aten::embedding_dense_backward", "",
                           {grad, indices, num_weights_s, padding_idx_s, scale_grad_by_freq})
        .back()
        .toTensor();
  }
  const c10::DeviceIndex dev = CheckSameNpuDevice(op, {{"grad_output", &grad}, {"indices", &indices}});
  TORCH_CHECK_TYPE(indices.scalar_type() == c10::kLong || indices.scalar_type() == c10::kInt, op,
                   ": Expected dtype int32 or int64 for indices, got ", indices.scalar_type());
  TORCH_CHECK(num_weights >= 0, op, ": num_weights must be non-negative, got ", num_weights);
  const int64_t n = indices.numel();
  const int64_t dim = grad.numel() / (n > 0 ? n : 1);
  TORCH_CHECK(n == 0 || grad.numel() == n * dim, op, ": grad_output of shape ", grad.sizes(),
              " does not match ", n, " indices");
  const int64_t d = n > 0 ? dim : (grad.dim() > 0 ? grad.size(-1) : 0);
  at::Tensor out = NpuEmpty({num_weights, d}, grad.scalar_type(), dev);
  if (out.numel() == 0) return out;
  if (n == 0) return out.zero_();
  const at::Tensor g = Contiguous(grad), idx = indices.contiguous();
  const auto t = npu_kernels::embedding_backward_tiling(uint64_t(n), uint64_t(d), uint64_t(num_weights), padding_idx,
                                                        idx.scalar_type() == c10::kLong, uint32_t(g.element_size()),
                                                        SocInfoFor(dev));
  using Fn = void (*)(uint8_t*, uint8_t*, uint8_t*, uint8_t*);
  Fn kernel = PickFloatKernel<Fn>(op, g.scalar_type(), &embedding_backward_kernel_float, &embedding_backward_kernel_half,
                                  &embedding_backward_kernel_bf16);
  KernelLaunch launch{"embedding_backward_kernel", ascendc_host::CoreType::AIV, t.block_dim, dev};
  if (LogDebugEnabled()) launch.detail = DescribeForLog({{"grad_output", &g}, {"indices", &idx}});
  LaunchKernel(std::move(launch), kernel, t, g.data_ptr(), idx.data_ptr(), out.data_ptr());
  return out;
}

// ---- cumsum / cumprod (the cumsum kernel; float32/16/bf16 keep their dtype, int32/int64/bool scan exactly
// into int64)
at::Tensor& CumScanOut(const char* op, bool prod, const at::Tensor& self, int64_t dim,
                       std::optional<c10::ScalarType> dtype, at::Tensor& out) {
  const c10::DeviceIndex dev = CheckSameNpuDevice(op, {{"self", &self}, {"out", &out}});
  // PyTorch casts the input to `dtype` before the scan (a float input scanned as int64 sums truncated
  // elements, not a truncated float sum).
  if (dtype && *dtype != self.scalar_type()) return CumScanOut(op, prod, self.to(*dtype), dim, std::nullopt, out);
  dim = WrapDim(op, dim, self.dim());
  // Computed in the input's float dtype, or exactly in int64 for integers; then `out`'s dtype.
  const auto in = EwDTypeOf(self.scalar_type());
  const c10::ScalarType natural = c10::isIntegralType(self.scalar_type(), true) ? c10::kLong : self.scalar_type();
  if (!in && c10::isIntegralType(self.scalar_type(), false))  // uint8 / int8 / int16: exactly via int32
    return CumScanOut(op, prod, self.to(c10::kInt), dim, dtype, out);
  if (!in) {
    CallCpuFallback(prod ? "aten::cumprod" : "aten::cumsum", "out", {self, dim, dtype, out});
    return out;
  }
  at::native::resize_output(out, self.sizes());
  if (self.numel() == 0) return out;
  const at::Tensor x = self.dim() == 0 ? self.view({1}) : Contiguous(self);
  uint64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < dim; ++i) outer *= uint64_t(x.size(i));
  for (int64_t i = dim + 1; i < x.dim(); ++i) inner *= uint64_t(x.size(i));
  // One long float line (a 1-D tensor): cut into C segments of M elements scanned side by side as
  // columns (the path below: wide vector adds on every core), then each segment gets the total of the
  // segments before it (an exclusive scan of the C totals) in one broadcast add. The line mode adds
  // one element at a time on one core's scalar unit (1M elements 3.0 ms, here 1.7; the CPU 0.6) and
  // its rounding error grows with R, here with M + C (1e7 elements: 3.8e-5 relative, here 1.7e-6).
  // float16 / bfloat16 are summed in float and rounded once, as the CPU accumulates them. Several
  // lines already run side by side on several cores; short ones are cheaper than the launches.
  if (inner == 1 && outer == 1 && !prod && c10::isFloatingType(self.scalar_type()) && x.size(dim) >= 32768) {
    const int64_t R = x.size(dim), C = std::min<int64_t>(2048, R / 64), M = (R + C - 1) / C;
    at::Tensor xf = x.reshape({R}).to(c10::kFloat);
    if (C * M > R) xf = at::constant_pad_nd(xf, {0, C * M - R}, 0);
    const at::Tensor seg = at::cumsum(xf.view({C, M}), 1);  // C >= 512 rows of M >= 64: as columns
    const at::Tensor totals = seg.select(1, M - 1);
    const at::Tensor before = at::constant_pad_nd(at::cumsum(totals.narrow(0, 0, C - 1), 0), {1, 0}, 0);
    out.copy_(at::add(seg, before.unsqueeze(1)).view({C * M}).narrow(0, 0, R).view(x.sizes()));
    return out;
  }
  // Many float rows scanned along their length: the line mode adds one element at a time on the scalar
  // unit; the transpose makes them columns, which the column mode adds a whole row of at a time.
  const uint64_t R = uint64_t(x.size(dim));
  if (inner == 1 && outer >= 16 && R >= 2 && c10::isFloatingType(self.scalar_type())) {
    const at::Tensor xt = x.view({int64_t(outer), int64_t(R)}).t().contiguous();  // [R, outer]
    at::Tensor yt = NpuEmpty(xt.sizes(), natural, dev);
    auto t = npu_kernels::cumsum_tiling(1, R, outer, uint32_t(*in), uint32_t(*EwDTypeOf(natural)), SocInfoFor(dev));
    t.prod = prod ? 1 : 0;
    KernelLaunch launch{"cumsum_kernel", ascendc_host::CoreType::AIV, t.block_dim, dev};
    if (LogDebugEnabled()) launch.detail = DescribeForLog({{"self", &x}}) + " dim=" + std::to_string(dim) + " (as columns)";
    LaunchKernel(std::move(launch), &cumsum_kernel, t, xt.data_ptr(), yt.data_ptr());
    if (out.is_contiguous()) out.view({int64_t(outer), int64_t(R)}).copy_(yt.t());
    else out.copy_(yt.t().contiguous().view(x.sizes()));
    return out;
  }
  at::Tensor y = NpuEmpty(x.sizes(), natural, dev);
  auto t = npu_kernels::cumsum_tiling(outer, R, inner, uint32_t(*in),
                                      uint32_t(*EwDTypeOf(natural)), SocInfoFor(dev));
  t.prod = prod ? 1 : 0;
  KernelLaunch launch{"cumsum_kernel", ascendc_host::CoreType::AIV, t.block_dim, dev};
  if (LogDebugEnabled()) launch.detail = DescribeForLog({{"self", &x}}) + " dim=" + std::to_string(dim);
  LaunchKernel(std::move(launch), &cumsum_kernel, t, x.data_ptr(), y.data_ptr());
  out.copy_(self.dim() == 0 ? y.squeeze(0) : y);  // (casts to out's dtype)
  return out;
}
at::Tensor CumScan(const char* op, bool prod, const at::Tensor& self, int64_t dim,
                   std::optional<c10::ScalarType> dtype) {
  const c10::ScalarType rt = dtype ? *dtype
                                   : (c10::isIntegralType(self.scalar_type(), true) ? c10::kLong : self.scalar_type());
  at::Tensor out = at::empty({0}, self.options().dtype(rt));
  return CumScanOut(op, prod, self, dim, dtype, out);
}
at::Tensor& cumsum_out_npu(const at::Tensor& self, int64_t dim, std::optional<c10::ScalarType> dtype, at::Tensor& out) {
  return CumScanOut("cumsum", false, self, dim, dtype, out);
}
at::Tensor cumsum_npu(const at::Tensor& self, int64_t dim, std::optional<c10::ScalarType> dtype) {
  return CumScan("cumsum", false, self, dim, dtype);
}
at::Tensor& cumsum_inplace(at::Tensor& self, int64_t dim, std::optional<c10::ScalarType> dtype) {
  return self.copy_(cumsum_npu(self, dim, dtype));
}
at::Tensor& cumprod_out_npu(const at::Tensor& self, int64_t dim, std::optional<c10::ScalarType> dtype, at::Tensor& out) {
  return CumScanOut("cumprod", true, self, dim, dtype, out);
}
at::Tensor cumprod_npu(const at::Tensor& self, int64_t dim, std::optional<c10::ScalarType> dtype) {
  return CumScan("cumprod", true, self, dim, dtype);
}
at::Tensor& cumprod_inplace(at::Tensor& self, int64_t dim, std::optional<c10::ScalarType> dtype) {
  return self.copy_(cumprod_npu(self, dim, dtype));
}
// prod over a dim / over all elements: the last element of the running product (the same kernel;
// integers and bool into int64 as the CPU's prod, float dtypes in float).
at::Tensor ProdDim(const at::Tensor& self, int64_t dim, bool keepdim, std::optional<c10::ScalarType> dtype) {
  const char* op = "prod";
  CheckSameNpuDevice(op, {{"self", &self}});
  if (self.dim() == 0) return CumScan(op, true, self, 0, dtype);
  dim = WrapDim(op, dim, self.dim());
  if (self.size(dim) == 0) {
    std::vector<int64_t> sizes = self.sizes().vec();
    if (keepdim) sizes[dim] = 1;
    else sizes.erase(sizes.begin() + dim);
    const c10::ScalarType rt =
        dtype ? *dtype : (c10::isIntegralType(self.scalar_type(), true) ? c10::kLong : self.scalar_type());
    return at::ones(sizes, self.options().dtype(rt));
  }
  at::Tensor r = CumScan(op, true, self, dim, dtype).narrow(dim, self.size(dim) - 1, 1);
  return keepdim ? r.contiguous() : r.squeeze(dim).contiguous();
}
at::Tensor prod_all(const at::Tensor& self, std::optional<c10::ScalarType> dtype) {
  return ProdDim(self.reshape({-1}), 0, false, dtype);
}
at::Tensor& prod_int_out(const at::Tensor& self, int64_t dim, bool keepdim, std::optional<c10::ScalarType> dtype,
                         at::Tensor& out) {
  return CopyToOut("prod", ProdDim(self, dim, keepdim, dtype ? dtype : out.scalar_type()), out);  // (as sum's out=)
}

// ---- Several integer index tensors (x[i, j], x[:, i, j], x[i, :, j]: NumPy's advanced indexing). They
// broadcast to one shape B and address their dims jointly, so those dims act as one dim of their sizes'
// product, addressed by the linear index sum_j i_j * (product of the later indexed dims' sizes), which the
// index_linear kernel computes (negatives wrapped; a bad index fails its assert naming the index, its dim
// and the size). Positions it did not write keep `product` (out of range): kernels go on after a failed
// assert, and a bad index in one dim could otherwise land on a valid linear position.
struct JointIndex {
  std::vector<int64_t> dims;  // the indexed dims of self, ascending
  at::Tensor linear;          // int64, shape B
  bool adjacent = false;      // dims are consecutive: they collapse in place and B takes their place
  // Where the indexed dims sit in Arranged(self): from there, dims.size() of them.
  int64_t First() const { return adjacent ? dims.front() : 0; }
  // self itself when the dims are adjacent, else permuted with them first (where PyTorch puts B).
  at::Tensor Arranged(const at::Tensor& self) const {
    if (adjacent) return self;
    std::vector<int64_t> perm(dims);
    for (int64_t d = 0; d < self.dim(); ++d)
      if (std::find(dims.begin(), dims.end(), d) == dims.end()) perm.push_back(d);
    return self.permute(perm);
  }
};
// nullopt unless there are two to eight index tensors and all are int32 / int64.
std::optional<JointIndex> JointIndexOf(const char* op, const at::Tensor& self,
                                       const c10::List<std::optional<at::Tensor>>& indices) {
  if (indices.size() > size_t(self.dim())) return std::nullopt;
  JointIndex j;
  std::vector<at::Tensor> idx;
  for (size_t i = 0; i < indices.size(); ++i) {
    const std::optional<at::Tensor> t = indices.get(i);
    if (!t.has_value() || !t->defined()) continue;
    if (t->scalar_type() != c10::kLong && t->scalar_type() != c10::kInt) return std::nullopt;
    j.dims.push_back(int64_t(i));
    idx.push_back(*t);
  }
  if (idx.size() < 2) return std::nullopt;
  for (const at::Tensor& t : idx) CheckSameNpuDevice(op, {{"self", &self}, {"indices", &t}});
  std::vector<int64_t> shape(idx[0].sizes().begin(), idx[0].sizes().end());
  for (size_t i = 1; i < idx.size(); ++i) {
    try {
      shape = at::infer_size(shape, idx[i].sizes());
    } catch (const c10::Error&) {
      std::string all;
      for (const at::Tensor& t : idx) all += (all.empty() ? "" : ", ") + c10::str(t.sizes());
      TORCH_CHECK_INDEX(false, op, ": shape mismatch: indexing tensors could not be broadcast together with shapes ",
                        all);
    }
  }
  if (idx.size() > npu_kernels::IndexLinearTiling::kMaxIndices) return std::nullopt;
  // The indices broadcast into the rows of one [q, n] int64 buffer, then the index_linear kernel.
  const c10::DeviceIndex dev = self.device().index();
  const int64_t q = int64_t(idx.size()), n = c10::multiply_integers(shape);
  at::Tensor rows = NpuEmpty({q, n}, c10::kLong, dev);
  int64_t total = 1;
  auto t = npu_kernels::index_linear_tiling(uint64_t(n), uint32_t(q), SocInfoFor(dev));
  for (int64_t i = 0; i < q; ++i) {
    rows.select(0, i).view(shape).copy_(idx[size_t(i)].expand(shape));
    t.dims[i] = uint32_t(j.dims[size_t(i)]);
    t.sizes[i] = uint64_t(self.size(j.dims[size_t(i)]));
    total *= self.size(j.dims[size_t(i)]);
  }
  at::Tensor linear = NpuEmpty({n}, c10::kLong, dev);
  linear.fill_(total);
  if (n > 0) {
    KernelLaunch launch{"index_linear_kernel", ascendc_host::CoreType::AIV, t.block_dim, dev};
    if (LogDebugEnabled()) launch.detail = DescribeForLog({{"indices", &rows}});
    LaunchKernel(std::move(launch), &index_linear_kernel, t, rows.data_ptr(), linear.data_ptr());
  }
  j.linear = linear.view(shape);
  j.adjacent = j.dims.back() - j.dims.front() == int64_t(j.dims.size()) - 1;
  return j;
}

// ---- x[idx] (aten::index.Tensor) with one integer index tensor: index_select along that dim, negative
// indices wrapped as Python does; with one boolean mask over dims [pos, pos + k): those dims flattened,
// then index_select of the mask's set positions (NonzeroFlat). Several integer index tensors: one
// index_select of their joint linear index over the indexed dims collapsed into one (adjacent dims in
// place; separated ones moved to the front first, where PyTorch puts the result's B dims too). Masks
// among several indices and 0-dim masks take the CPU fallback.
// Index tensors may live on the CPU, as PyTorch's device indexing allows (x[cpu_idx], x[cpu_mask],
// x[cpu_idx] = v): they are copied to self's device first.
c10::List<std::optional<at::Tensor>> IndicesOnDevice(const at::Tensor& self,
                                                    const c10::List<std::optional<at::Tensor>>& indices) {
  bool any = false;
  for (size_t i = 0; i < indices.size(); ++i) {
    const std::optional<at::Tensor> t = indices.get(i);
    any = any || (t.has_value() && t->defined() && t->device().is_cpu());
  }
  if (!any || self.device().is_cpu()) return indices;
  c10::List<std::optional<at::Tensor>> moved;
  for (size_t i = 0; i < indices.size(); ++i) {
    const std::optional<at::Tensor> t = indices.get(i);
    moved.push_back(t.has_value() && t->defined() && t->device().is_cpu() ? std::optional<at::Tensor>(t->to(self.device()))
                                                                           : t);
  }
  return moved;
}

// A mask beside other indices (x[mask, idx] = v: RetinaNet's loss targets): each k-dim mask becomes
// its k long coordinate columns (nonzero), as ATen's own index expansion does, for the joint-index path.
std::optional<c10::List<std::optional<at::Tensor>>> MasksAsLongIndices(
    const char* op, const at::Tensor& self, const c10::List<std::optional<at::Tensor>>& indices) {
  bool has_mask = false;
  int defined = 0;
  for (size_t i = 0; i < indices.size(); ++i) {
    const std::optional<at::Tensor> t = indices.get(i);
    if (!t.has_value() || !t->defined()) continue;
    ++defined;
    const bool boolean = t->scalar_type() == c10::kBool || t->scalar_type() == c10::kByte;
    if (boolean && t->dim() == 0) return std::nullopt;  // x[True]: the CPU fallback
    has_mask = has_mask || boolean;
  }
  if (!has_mask || defined < 2) return std::nullopt;
  c10::List<std::optional<at::Tensor>> out;
  int64_t dim = 0;
  for (size_t i = 0; i < indices.size(); ++i) {
    const std::optional<at::Tensor> t = indices.get(i);
    if (t.has_value() && t->defined() && (t->scalar_type() == c10::kBool || t->scalar_type() == c10::kByte)) {
      CheckSameNpuDevice(op, {{"self", &self}, {"indices", &*t}});
      CheckMaskShape(op, self, dim, *t);
      const at::Tensor nz = at::nonzero(*t);  // [count, k]
      for (int64_t j = 0; j < t->dim(); ++j) out.push_back(nz.select(1, j));
      dim += t->dim();
    } else {
      out.push_back(t);
      ++dim;
    }
  }
  return out;
}

at::Tensor index_tensor_npu(const at::Tensor& self, const c10::List<std::optional<at::Tensor>>& indices_in) {
  const c10::List<std::optional<at::Tensor>> indices = IndicesOnDevice(self, indices_in);
  const int64_t pos = SingleIndexPosition(indices, self.dim());
  if (pos < 0) {
    if (auto expanded = MasksAsLongIndices("index", self, indices)) return index_tensor_npu(self, *expanded);
    if (std::optional<JointIndex> j = JointIndexOf("index", self, indices)) {
      const int64_t at_dim = j->First();
      const at::Tensor src = j->Arranged(self).flatten(at_dim, at_dim + int64_t(j->dims.size()) - 1);
      at::Tensor r = IndexSelect(src, at_dim, j->linear.reshape({-1}), /*check_empty=*/false);
      std::vector<int64_t> shape(src.sizes().begin(), src.sizes().begin() + at_dim);
      shape.insert(shape.end(), j->linear.sizes().begin(), j->linear.sizes().end());
      shape.insert(shape.end(), src.sizes().begin() + at_dim + 1, src.sizes().end());
      return r.view(shape);
    }
    return CallCpuFallback("aten::index", "Tensor", {self, indices}).back().toTensor();
  }
  const at::Tensor idx = *indices.get(size_t(pos));
  const char* op = "index";
  CheckSameNpuDevice(op, {{"self", &self}, {"indices", &idx}});
  if (idx.scalar_type() == c10::kBool || idx.scalar_type() == c10::kByte) {
    const int64_t k = idx.dim();
    CheckMaskShape(op, self, pos, idx);
    return at::index_select(self.flatten(pos, pos + k - 1), pos, NonzeroFlat(op, idx));
  }
  const int64_t d = self.size(pos);
  // Python semantics: -d <= i < d, negatives counted from the end (the kernel checks the range).
  at::Tensor r = IndexSelect(self, pos, WrapNegative(idx, d).reshape({-1}), /*check_empty=*/false);
  std::vector<int64_t> shape(self.sizes().begin(), self.sizes().begin() + pos);
  shape.insert(shape.end(), idx.sizes().begin(), idx.sizes().end());
  shape.insert(shape.end(), self.sizes().begin() + pos + 1, self.sizes().end());
  return r.view(shape);
}


// ---- put_: self viewed as its flat row-major sequence, indexed by `index` (negatives from the end):
// index_put_ on that flat view (a contiguous copy for a strided self, copied back).
at::Tensor& put_npu(at::Tensor& self, const at::Tensor& index, const at::Tensor& source, bool accumulate) {
  CheckSameNpuDevice("put_", {{"self", &self}, {"index", &index}, {"source", &source}});
  TORCH_CHECK(index.scalar_type() == c10::kLong, "put_(): Expected a long tensor for index, but got ",
              index.scalar_type());
  TORCH_CHECK(self.scalar_type() == source.scalar_type(), "put_(): self and source expected to have the same dtype, ",
              "but got self.dtype = ", self.scalar_type(), " and source.dtype = ", source.scalar_type());
  TORCH_CHECK_INDEX(source.numel() == index.numel(), "put_(): Expected source and index to have the same number of ",
                    "elements, but got source.numel() = ", source.numel(), ", index.numel() = ", index.numel());
  at::assert_no_internal_overlap(self);
  at::assert_no_overlap(self, index);
  at::assert_no_overlap(self, source);
  if (index.numel() == 0) return self;
  const int64_t n = self.numel();
  const auto [lo, hi] = at::aminmax(index);
  for (const int64_t i : {lo.item<int64_t>(), hi.item<int64_t>()})  // (the first waits; the second is ready)
    TORCH_CHECK_INDEX(i >= -n && i < n, "put_(): out of range: tried to access index ", i, " on a tensor of ", n,
                      " elements.");
  const bool flat_in_place = self.is_contiguous();
  at::Tensor flat = (flat_in_place ? self : self.contiguous()).view({-1});
  flat.index_put_({index.reshape({-1})}, source.reshape({-1}), accumulate);
  if (!flat_in_place) self.copy_(flat.view(self.sizes()));
  return self;
}

// ---- x[indices] = values (aten::_index_put_impl_, behind index_put_ and Tensor.__setitem__) with one
// index tensor and accumulate=False: a long index moves rows of the values to the indexed rows (the
// index_put kernel, index_select's reverse); a boolean mask with a single value is masked_fill_; a
// boolean mask with values puts them at the mask's set positions (NonzeroFlat) over the masked dims
// flattened. accumulate=True adds through the scatter_add kernel (repeated indices add up, in index order).
// Several integer indices go through their joint linear index (JointIndexOf) over their dims collapsed
// into one; masks beside other indices first become their long coordinates (MasksAsLongIndices).
at::Tensor& index_put_impl_npu(at::Tensor& self, const c10::List<std::optional<at::Tensor>>& indices_in,
                               const at::Tensor& values, bool accumulate, bool unsafe) {
  const c10::List<std::optional<at::Tensor>> indices = IndicesOnDevice(self, indices_in);
  const int64_t pos = SingleIndexPosition(indices, self.dim());
  if (pos < 0) {
    if (auto expanded = MasksAsLongIndices("index_put_", self, indices))
      return index_put_impl_npu(self, *expanded, values, accumulate, unsafe);
    // Several integer indices: their dims (moved to the front when separated, where the indexing result
    // puts them) collapse into one, which their joint linear index addresses as the one index below
    // does; in place when self's memory allows that view, else on a contiguous copy written back.
    if (std::optional<JointIndex> j = JointIndexOf("index_put_", self, indices)) {
      at::Tensor view = j->Arranged(self);
      const int64_t first = j->First();
      const bool in_place = view.is_contiguous();
      at::Tensor work = in_place ? view : view.contiguous();
      at::Tensor target = work.flatten(first, first + int64_t(j->dims.size()) - 1);
      c10::List<std::optional<at::Tensor>> one;
      for (int64_t d = 0; d < first; ++d) one.push_back(std::nullopt);
      one.push_back(j->linear);
      index_put_impl_npu(target, one, values, accumulate, unsafe);
      if (!in_place) view.copy_(work);
      return self;
    }
  }
  if (pos >= 0 && accumulate && IsSmallInt(self.scalar_type()) && values.scalar_type() == self.scalar_type()) {
    // uint8 / int8 / int16 accumulate in an int32 copy; the copy back wraps as the CPU's adds do.
    at::Tensor w = self.to(c10::kInt);
    index_put_impl_npu(w, indices, values.to(c10::kInt), accumulate, unsafe);
    self.copy_(w);
    return self;
  }
  if (pos < 0 || (accumulate && !IndexAddSupported(self.scalar_type()))) {
    CallCpuFallback("aten::_index_put_impl_", "", {self, indices, values, accumulate, unsafe});
    return self;
  }
  const char* op = "index_put_";
  at::Tensor idx = *indices.get(size_t(pos));
  const c10::DeviceIndex dev = CheckSameNpuDevice(op, {{"self", &self}, {"indices", &idx}, {"values", &values}});
  TORCH_CHECK_TYPE(values.scalar_type() == self.scalar_type(), op, ": values dtype ", values.scalar_type(),
                   " must match the destination's ", self.scalar_type(), " (Index put requires the source and "
                   "destination dtypes match)");
  at::Tensor target = self;  // the tensor whose dim `pos` the (long) index addresses
  if (idx.scalar_type() == c10::kBool || idx.scalar_type() == c10::kByte) {
    const int64_t k = idx.dim();
    CheckMaskShape(op, self, pos, idx);
    const c10::ScalarType st = self.scalar_type();
    if (values.numel() == 1 && !accumulate && (IsNpuFloat(st) || st == c10::kInt || st == c10::kLong)) {
      // One value: masked_fill_ with the mask placed at dims [pos, pos + k) (no read-back).
      std::vector<int64_t> shape(size_t(self.dim()), 1);
      for (int64_t j = 0; j < k; ++j) shape[size_t(pos + j)] = idx.size(j);
      self.masked_fill_(idx.to(c10::kBool).reshape(shape), values.reshape({}));
      return self;
    }
    std::vector<int64_t> flat(self.sizes().begin(), self.sizes().begin() + pos);
    flat.push_back(-1);
    flat.insert(flat.end(), self.sizes().begin() + pos + k, self.sizes().end());
    if (!self.is_contiguous()) {  // the flattened view must alias self
      CallCpuFallback("aten::_index_put_impl_", "", {self, indices, values, accumulate, unsafe});
      return self;
    }
    target = self.view(flat);
    idx = NonzeroFlat(op, idx);
  }
  // Long index at dim `pos` of target: values broadcast to target[:pos] + idx.shape + target[pos+1:].
  const int64_t d = target.size(pos), n = idx.numel();
  std::vector<int64_t> vshape(target.sizes().begin(), target.sizes().begin() + pos);
  vshape.insert(vshape.end(), idx.sizes().begin(), idx.sizes().end());
  vshape.insert(vshape.end(), target.sizes().begin() + pos + 1, target.sizes().end());
  TORCH_CHECK(at::is_expandable_to(values.sizes(), vshape), op, ": shape mismatch: value tensor of shape ",
              values.sizes(), " cannot be broadcast to indexing result of shape ", c10::IntArrayRef(vshape));
  if (n == 0) return self;
  TORCH_CHECK_INDEX(d > 0, op, ": index out of range: dimension ", pos, " has size 0");
  if (target.numel() == 0) return self;  // (the CPU checks no range then either)
  uint64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < pos; ++i) outer *= uint64_t(target.size(i));
  for (int64_t i = pos + 1; i < target.dim(); ++i) inner *= uint64_t(target.size(i));
  const at::Tensor flat_idx = WrapNegative(idx, d).reshape({-1}).contiguous();
  if (accumulate) {  // duplicates add up: the scatter_add kernel (each destination row owned by one core)
    std::vector<int64_t> rows(target.sizes().begin(), target.sizes().end());
    rows[size_t(pos)] = n;
    IndexAddInto(op, target, pos, flat_idx, values.expand(vshape).reshape(rows), true);
    return self;
  }
  const at::Tensor v = values.expand(vshape).contiguous();
  // The kernel writes into contiguous memory; a non-contiguous self is written through a copy.
  at::Tensor dst = target.is_contiguous() ? target : target.contiguous();
  const auto t = npu_kernels::index_select_tiling(outer, uint64_t(d), inner * dst.element_size(), uint64_t(n),
                                                  flat_idx.scalar_type() == c10::kLong, SocInfoFor(dev));
  KernelLaunch launch{"index_put_kernel", ascendc_host::CoreType::AIV, t.block_dim, dev};
  if (LogDebugEnabled()) launch.detail = DescribeForLog({{"self", &dst}, {"index", &flat_idx}}) + " dim=" + std::to_string(pos);
  LaunchKernel(std::move(launch), &index_put_kernel, t, v.data_ptr(), flat_idx.data_ptr(), dst.data_ptr());
  if (!dst.is_same(target)) target.copy_(dst);
  return self;
}
}  // namespace
}  // namespace torch_ops_nn

// one_hot: a broadcast comparison of the indices with 0..C-1 on the compare kernel (aten's version
// scatters, which has no npu kernel). The class values are checked first (a flag read back; a device
// check inside npu graphs), so a bad class is an error, not a zero row.
at::Tensor one_hot_npu(const at::Tensor& self, int64_t num_classes) {
  const char* op = "one_hot";
  TORCH_CHECK(self.scalar_type() == c10::kLong, op, ": one_hot is only applicable to index tensor of type LongTensor, got ",
              self.scalar_type());
  TORCH_CHECK(num_classes >= -1, op, ": num_classes should be positive or -1, got ", num_classes);
  if (self.numel() == 0) {
    TORCH_CHECK(num_classes > 0, op, ": Can not infer total number of classes from empty tensor.");  // (0 too, as ATen)
    std::vector<int64_t> shape(self.sizes().begin(), self.sizes().end());
    shape.push_back(num_classes);
    return at::empty(shape, self.options());
  }
  const std::string negative = c10::str(op, ": Class values must be non-negative.");
  if (num_classes == -1) {  // the class count comes from the data: read back
    TORCH_CHECK(!at::lt(self, 0).any().item<bool>(), negative);
    num_classes = self.max().item<int64_t>() + 1;  // (the int64 full max reduction is a CPU fallback)
  } else {  // one read back eagerly; device checks in npu graphs
    torch_ops_nn::CheckNoneSet({{at::lt(self, 0), negative},
                  {at::ge(self, num_classes),
                   c10::str(op, ": Class values must be smaller than num_classes (", num_classes, ").")}});
  }
  return at::eq(self.unsqueeze(-1), at::arange(num_classes, self.options())).to(c10::kLong);
}

NPU_ATEN_LIBRARY_IMPL(m) {
  m.impl("one_hot", TORCH_FN(one_hot_npu));
  m.impl("index.Tensor", TORCH_FN(torch_ops_nn::index_tensor_npu));
  m.impl("_index_put_impl_", TORCH_FN(torch_ops_nn::index_put_impl_npu));
  m.impl("put_", TORCH_FN(torch_ops_nn::put_npu));
  m.impl("cumsum", TORCH_FN(torch_ops_nn::cumsum_npu));
  m.impl("cumsum.out", TORCH_FN(torch_ops_nn::cumsum_out_npu));
  m.impl("cumsum_", TORCH_FN(torch_ops_nn::cumsum_inplace));
  m.impl("cumprod", TORCH_FN(torch_ops_nn::cumprod_npu));
  m.impl("cumprod.out", TORCH_FN(torch_ops_nn::cumprod_out_npu));
  m.impl("cumprod_", TORCH_FN(torch_ops_nn::cumprod_inplace));
  m.impl("prod", TORCH_FN(torch_ops_nn::prod_all));
  m.impl("prod.int_out", TORCH_FN(torch_ops_nn::prod_int_out));
  m.impl("embedding_dense_backward", TORCH_FN(torch_ops_nn::embedding_dense_backward_npu));
  m.impl("tril", TORCH_FN(torch_ops_nn::tril_npu));
  m.impl("tril_", TORCH_FN(torch_ops_nn::tril_));
  m.impl("tril.out", TORCH_FN(torch_ops_nn::tril_out));
  m.impl("triu", TORCH_FN(torch_ops_nn::triu_npu));
  m.impl("triu_", TORCH_FN(torch_ops_nn::triu_));
  m.impl("triu.out", TORCH_FN(torch_ops_nn::triu_out));
  m.impl("index_select", TORCH_FN(torch_ops_nn::index_select_npu));
  m.impl("index_select.out", TORCH_FN(torch_ops_nn::index_select_out));
}
