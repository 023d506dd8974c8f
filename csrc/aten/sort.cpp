// sort (and through it argsort, msort) on npu: the sort kernel (ascendc_kernels/sort.h) for float32 /
// float16 / bfloat16 along any dim — always stable, so `stable=True` and the default agree with the CPU.
// Rows of up to kSortTile elements are sorted in one launch; longer rows are sorted in tiles into a
// workspace and merged in passes of four runs (one launch each). The sorted dim is moved last with one
// device copy when it is not already. The sort instructions compare half / float scores, exact for
// integers below 2^24 only: int32 / int64 keys beyond that are sorted as an LSD radix sort over 16-bit
// digits (the digit kernel writes each digit as a float; each pass is the stable float sort of the
// digits, gathered in the order of the passes before); int16 / int8 / uint8 / bool, and int32 / int64
// tensors whose values all lie within 2^24, sort as their exact float values.
#include <ATen/core/Tensor.h>
#include <ATen/ops/arange.h>
#include <ATen/ops/any.h>
#include <ATen/ops/gather.h>
#include <ATen/ops/ge.h>
#include <ATen/ops/le.h>
#include <ATen/ops/logical_or.h>
#include <ATen/ops/zeros.h>
#include <torch/library.h>

#include <algorithm>
#include <optional>
#include <tuple>

#include "aten/kernel_launch.h"
#include "aten/op_common.h"
#include "aten/sort_ops.h"
#include "core/cpu_fallback.h"
#include "elementwise.h"
#include "index_bucket.h"
#include "radix_sort.h"
#include "sort.h"

namespace torch_ops_nn {

TORCH_OPS_NN_REGISTER_KERNEL(sort_kernel);
TORCH_OPS_NN_REGISTER_KERNEL(sort_digit_kernel);
TORCH_OPS_NN_REGISTER_KERNEL(radix_range_kernel);
TORCH_OPS_NN_REGISTER_KERNEL(radix_count_kernel);
TORCH_OPS_NN_REGISTER_KERNEL(radix_place_kernel);

void LaunchSortRows(const at::Tensor& x, uint64_t rows, uint32_t n, uint32_t limit, bool descending,
                    const at::Tensor& v, const at::Tensor& i, c10::DeviceIndex dev) {
  const auto& soc = SocInfoFor(dev);
  const auto first =
      npu_kernels::sort_tiling(rows, n, limit, descending, uint32_t(*EwDTypeOf(x.scalar_type())), soc);
  auto launch = [&](const npu_kernels::SortTiling& t, void* ws_in, void* ws_out) {
    KernelLaunch l{"sort_kernel", ascendc_host::CoreType::AIV, t.block_dim, dev};
    if (LogDebugEnabled())
      l.detail = DescribeForLog({{"self", &x}}) + " phase=" + std::to_string(t.phase) + " run=" + std::to_string(t.run);
    LaunchKernel(std::move(l), &sort_kernel, t, x.data_ptr(), v.data_ptr(), i.data_ptr(), ws_in, ws_out);
  };
  if (first.tiles == 1) {
    launch(first, nullptr, nullptr);
    return;
  }
  // (score, index) structures: 8 bytes per element, two buffers the merge passes alternate between.
  const int64_t ws_bytes = int64_t(rows) * int64_t(n) * 8;
  at::Tensor ws0 = NpuEmpty({ws_bytes}, c10::kByte, dev), ws1 = NpuEmpty({ws_bytes}, c10::kByte, dev);
  void* in = ws0.data_ptr();
  void* out = ws1.data_ptr();
  launch(first, nullptr, in);
  for (uint64_t run = npu_kernels::kSortTile; run < n; run *= 4) {
    launch(npu_kernels::sort_merge_tiling(first, uint32_t(run), soc), in, out);
    std::swap(in, out);
  }
}

bool SortableOnNpu(c10::ScalarType t) {
  return IsNpuFloat(t) || t == c10::kInt || t == c10::kLong || t == c10::kShort || t == c10::kChar ||
         t == c10::kByte || t == c10::kBool;
}

namespace {

// Digit `digit` (16 bits, least significant = 0) of each element of the contiguous int32 / int64 x, as float.
at::Tensor DigitScores(const at::Tensor& x, uint32_t digit, c10::DeviceIndex dev) {
  at::Tensor out = NpuEmpty(x.sizes(), c10::kFloat, dev);
  const auto t = npu_kernels::sort_digit_tiling(uint64_t(x.numel()), x.scalar_type() == c10::kLong, digit,
                                                SocInfoFor(dev));
  LaunchKernel(KernelLaunch{"sort_digit_kernel", ascendc_host::CoreType::AIV, t.block_dim, dev}, &sort_digit_kernel,
               t, x.data_ptr(), out.data_ptr());
  return out;
}

}  // namespace

at::Tensor DeviceIntRangeTensor(const at::Tensor& x) {
  const c10::DeviceIndex dev = x.device().index();
  const auto rt = npu_kernels::radix_tiling(uint64_t(x.numel()), x.scalar_type() == c10::kLong, 0, 0, 0, true,
                                            SocInfoFor(dev));
  at::Tensor ext = NpuEmpty({int64_t(rt.block_dim), 2}, c10::kLong, dev);
  LaunchKernel(KernelLaunch{"radix_range_kernel", ascendc_host::CoreType::AIV, rt.block_dim, dev}, &radix_range_kernel,
               rt, x.data_ptr(), ext.data_ptr());
  // The blocks' (min, max) pairs fold on one block: the range of all of them is the range of x (every
  // block's range is non-empty).
  const auto fold = npu_kernels::radix_tiling(uint64_t(ext.numel()), true, 0, 0, 0, true, SocInfoFor(dev));
  at::Tensor range = NpuEmpty({2}, c10::kLong, dev);
  LaunchKernel(KernelLaunch{"radix_range_kernel", ascendc_host::CoreType::AIV, fold.block_dim, dev},
               &radix_range_kernel, fold, ext.data_ptr(), range.data_ptr());
  return range;
}
std::pair<int64_t, int64_t> DeviceIntRange(const at::Tensor& x) {
  const at::Tensor range = DeviceIntRangeTensor(x);
  return {range[0].item<int64_t>(), range[1].item<int64_t>()};  // (the second read waits for nothing)
}

namespace {

// A long 1-D int32 / int64 x: an LSD radix sort by bytes (radix_sort.h), over the bytes of its range
// only (max - min; ids below 2^24: three passes).
constexpr uint64_t kRadixMinLength = 16384;
std::tuple<at::Tensor, at::Tensor> RadixSort(const at::Tensor& x, bool descending, c10::DeviceIndex dev) {
  const c10::ScalarType t = x.scalar_type();
  const bool wide = t == c10::kLong;
  const uint64_t n = uint64_t(x.numel());
  const auto& soc = SocInfoFor(dev);
  const auto [lo, hi] = DeviceIntRange(x);
  // Every key - lo lies in [0, hi - lo] (wrapping in the key's width): only its bytes need passes.
  const uint64_t span = wide ? uint64_t(hi) - uint64_t(lo) : uint64_t(uint32_t(int32_t(hi) - int32_t(lo)));
  uint32_t passes = 0;
  for (uint64_t d = span; d != 0; d >>= 8) ++passes;
  if (passes == 0) return {x.clone(), at::arange(int64_t(n), x.options().dtype(c10::kLong))};  // all equal
  const uint64_t base = wide ? uint64_t(lo) : uint64_t(uint32_t(int32_t(lo)));
  at::Tensor keys[2] = {NpuEmpty(x.sizes(), t, dev), NpuEmpty(x.sizes(), t, dev)};
  at::Tensor vals[2] = {NpuEmpty(x.sizes(), c10::kInt, dev), NpuEmpty(x.sizes(), c10::kInt, dev)};
  at::Tensor ws;
  for (uint32_t p = 0; p < passes; ++p) {
    const auto rt = npu_kernels::radix_tiling(n, wide, base, 8 * p, descending ? 0xFFu : 0u, p == 0, soc);
    if (!ws.defined()) ws = NpuEmpty({int64_t(rt.ws_words)}, c10::kInt, dev);
    const at::Tensor& kin = p == 0 ? x : keys[(p - 1) % 2];
    const at::Tensor& vin = p == 0 ? vals[1] : vals[(p - 1) % 2];  // (unused on the first pass)
    const at::Tensor &kout = keys[p % 2], &vout = vals[p % 2];
    KernelLaunch count{"radix_count_kernel", ascendc_host::CoreType::AIV, rt.block_dim, dev};
    if (LogDebugEnabled()) count.detail = DescribeForLog({{"self", &x}}) + " pass=" + std::to_string(p);
    LaunchKernel(std::move(count), &radix_count_kernel, rt, kin.data_ptr(), ws.data_ptr());
    LaunchKernel(KernelLaunch{"index_bucket_scan_kernel", ascendc_host::CoreType::AIV, 1, dev},
                 &index_bucket_scan_kernel, npu_kernels::radix_scan_tiling(rt), ws.data_ptr());
    LaunchKernel(KernelLaunch{"radix_place_kernel", ascendc_host::CoreType::AIV, rt.block_dim, dev},
                 &radix_place_kernel, rt, kin.data_ptr(), vin.data_ptr(), kout.data_ptr(), vout.data_ptr(),
                 ws.data_ptr());
  }
  return {keys[(passes - 1) % 2], vals[(passes - 1) % 2].to(c10::kLong)};
}

// The stable sort of the rows of the contiguous integer x [.., n] (see the file comment).
std::tuple<at::Tensor, at::Tensor> SortIntegers(const at::Tensor& x, uint64_t rows, uint32_t n, bool descending,
                                                c10::DeviceIndex dev) {
  auto sort_float = [&](const at::Tensor& key) {
    at::Tensor kv = NpuEmpty(key.sizes(), c10::kFloat, dev), p = NpuEmpty(key.sizes(), c10::kLong, dev);
    LaunchSortRows(key, rows, n, n, descending, kv, p, dev);
    return std::make_tuple(kv, p);
  };
  const c10::ScalarType t = x.scalar_type();
  if (rows == 1 && n >= kRadixMinLength && (t == c10::kInt || t == c10::kLong)) return RadixSort(x, descending, dev);
  // Exact as floats (ids and labels usually are: one pass beats two or four).
  if (ExactAsFloat(x)) {
    auto [kv, p] = sort_float(x.to(c10::kFloat));
    return {kv.to(t), p};
  }
  at::Tensor perm;
  const uint32_t digits = t == c10::kLong ? 4 : 2;
  for (uint32_t d = 0; d < digits; ++d) {
    at::Tensor key = DigitScores(x, d, dev);
    if (perm.defined()) key = at::gather(key, -1, perm);
    at::Tensor p = std::get<1>(sort_float(key));
    perm = perm.defined() ? at::gather(perm, -1, p) : p;
  }
  return {at::gather(x, -1, perm), perm};
}

std::tuple<at::Tensor&, at::Tensor&> sort_values_npu(const at::Tensor& self, std::optional<bool> stable, int64_t dim,
                                                     bool descending, at::Tensor& values, at::Tensor& indices) {
  const char* op = "sort";
  const c10::DeviceIndex dev = CheckSameNpuDevice(op, {{"self", &self}, {"values", &values}, {"indices", &indices}});
  dim = WrapDim(op, dim, self.dim());
  const int64_t n = self.dim() == 0 ? 1 : self.size(dim);
  const bool native = SortableOnNpu(self.scalar_type()) && n <= int64_t(INT32_MAX);
  if (!native) {
    CallCpuFallback("aten::sort", "values_stable", {self, stable, dim, descending, values, indices});
    return {values, indices};
  }
  if (n <= 1 || self.numel() == 0) {  // nothing to order: the values themselves, index 0
    CopyToOutExact(op, self, values);
    CopyToOutExact(op, at::zeros(self.sizes(), self.options().dtype(c10::kLong)), indices);
    return {values, indices};
  }
  const bool last = dim == self.dim() - 1;
  const at::Tensor x = last ? Contiguous(self) : self.movedim(dim, -1).contiguous();
  at::Tensor v, i;
  if (IsNpuFloat(x.scalar_type())) {
    v = NpuEmpty(x.sizes(), x.scalar_type(), dev);
    i = NpuEmpty(x.sizes(), c10::kLong, dev);
    LaunchSortRows(x, uint64_t(x.numel() / n), uint32_t(n), uint32_t(n), descending, v, i, dev);
  } else {
    std::tie(v, i) = SortIntegers(x, uint64_t(x.numel() / n), uint32_t(n), descending, dev);
  }
  if (!last) {
    v = v.movedim(-1, dim);
    i = i.movedim(-1, dim);
  }
  CopyToOutExact(op, v, values);
  CopyToOutExact(op, i, indices);
  return {values, indices};
}

std::tuple<at::Tensor, at::Tensor> sort_npu(const at::Tensor& self, std::optional<bool> stable, int64_t dim,
                                            bool descending) {
  at::Tensor values = NpuEmpty({0}, self.scalar_type(), self.device().index());
  at::Tensor indices = NpuEmpty({0}, c10::kLong, self.device().index());
  sort_values_npu(self, stable, dim, descending, values, indices);
  return {values, indices};
}

}  // namespace
}  // namespace torch_ops_nn

NPU_ATEN_LIBRARY_IMPL(m) {
  m.impl("sort.stable", TORCH_FN(torch_ops_nn::sort_npu));
  m.impl("sort.values_stable", TORCH_FN(torch_ops_nn::sort_values_npu));
}
