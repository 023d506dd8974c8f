// Native ATen ops for tensor basics on npu: allocation, views, resize/set_, copies and fills.
// Views are metadata only; every byte that moves on the device moves in a stream task (the
// runtime's strided copy), in order with the kernels.
#include <ATen/EmptyTensor.h>
#include <vector>
#include <algorithm>
#include <ATen/ops/arange.h>
#include <ATen/ops/conj_physical.h>
#include <ATen/ops/index_select.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/_local_scalar_dense_native.h>
#include <ATen/ops/as_strided_native.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/scalar_tensor.h>
#include <ATen/ops/unfold_native.h>
#include <ATen/ops/view_as_complex_native.h>
#include <ATen/ops/view_as_real.h>
#include <ATen/ops/view_as_real_native.h>
#include <ATen/ops/view_native.h>
#include <ATen/ops/_reshape_alias_native.h>
#include <ATen/ExpandUtils.h>
#include <ATen/MemoryOverlap.h>
#include <ATen/TensorUtils.h>

#include <sstream>

#include "aten/kernel_launch.h"
#include <c10/core/DeviceGuard.h>
#include <c10/core/StorageImpl.h>
#include <torch/library.h>

#include "aten/elementwise_common.h"
#include "aten/npu_tensor.h"
#include "aten/op_common.h"
#include "core/cpu_fallback.h"
#include "core/npu_allocator.h"
#include "core/npu_context.h"
#include "core/sync_debug.h"

namespace torch_ops_nn {

npu_rt::DType ToRuntimeDType(c10::ScalarType t) {
  switch (t) {
    case c10::kBool: return npu_rt::DType::Bool;
    case c10::kByte: return npu_rt::DType::UInt8;
    case c10::kChar: return npu_rt::DType::Int8;
    case c10::kShort: return npu_rt::DType::Int16;
    case c10::kInt: return npu_rt::DType::Int32;
    case c10::kLong: return npu_rt::DType::Int64;
    case c10::kHalf: return npu_rt::DType::Float16;
    case c10::kBFloat16: return npu_rt::DType::BFloat16;
    case c10::kFloat: return npu_rt::DType::Float32;
    case c10::kDouble: return npu_rt::DType::Float64;
    case c10::kComplexFloat: return npu_rt::DType::Complex64;
    case c10::kComplexDouble: return npu_rt::DType::Complex128;
    default: break;
  }
  TORCH_CHECK_TYPE(false, "npu: dtype ", t,
                   " is not supported; supported dtypes are bool, uint8, int8, int16, int32, int64, float16, "
                   "bfloat16, float32, float64, complex64, complex128");
}

npu_rt::StridedView RuntimeView(const at::Tensor& t, c10::IntArrayRef sizes) {
  npu_rt::StridedView v;
  TORCH_CHECK(static_cast<int>(sizes.size()) <= npu_rt::kMaxDims, "npu: tensors of more than ", npu_rt::kMaxDims,
              " dims are not supported (got ", sizes.size(), ")");
  v.data = static_cast<char*>(t.data_ptr());
  v.dtype = ToRuntimeDType(t.scalar_type());
  v.ndim = static_cast<int>(sizes.size());
  const int64_t lead = v.ndim - t.dim();
  for (int i = 0; i < v.ndim; ++i) {
    v.sizes[i] = sizes[i];
    const int64_t j = i - lead;
    v.strides[i] = (j < 0 || t.size(j) == 1) ? 0 : t.stride(j);
  }
  return v;
}

npu_rt::StridedView RuntimeView(const at::Tensor& t) { return RuntimeView(t, t.sizes()); }

namespace {

const c10::DispatchKeySet kNpuKeys(c10::DispatchKey::PrivateUse1);

at::Tensor empty_memory_format(c10::IntArrayRef size, std::optional<c10::ScalarType> dtype,
                               std::optional<c10::Layout> layout, std::optional<c10::Device> device,
                               std::optional<bool> pin_memory, std::optional<c10::MemoryFormat> memory_format) {
  TORCH_CHECK(!layout || *layout == c10::kStrided, "npu: only strided tensors are supported, got layout ", *layout);
  const c10::Device dev = device.value_or(c10::Device(kNpu, CurrentDevice()));
  c10::DeviceGuard guard(dev.has_index() ? dev : c10::Device(kNpu, CurrentDevice()));
  const auto st = c10::dtype_or_default(dtype);
  ToRuntimeDType(st);  // reject unsupported dtypes up front
  return at::detail::empty_generic(size, GetNpuAllocator(), kNpuKeys, st, memory_format);
}

at::Tensor empty_strided(c10::IntArrayRef size, c10::IntArrayRef stride, std::optional<c10::ScalarType> dtype,
                         std::optional<c10::Layout> layout, std::optional<c10::Device> device,
                         std::optional<bool> pin_memory) {
  TORCH_CHECK(!layout || *layout == c10::kStrided, "npu: only strided tensors are supported, got layout ", *layout);
  const c10::Device dev = device.value_or(c10::Device(kNpu, CurrentDevice()));
  c10::DeviceGuard guard(dev.has_index() ? dev : c10::Device(kNpu, CurrentDevice()));
  const auto st = c10::dtype_or_default(dtype);
  ToRuntimeDType(st);
  return at::detail::empty_strided_generic(size, stride, GetNpuAllocator(), kNpuKeys, st);
}

// Sets sizes/strides and grows the storage if it is too small (the ATen resize contract).
void ResizeImpl(at::TensorImpl* self, c10::IntArrayRef size, std::optional<c10::IntArrayRef> stride) {
  int64_t storage_size = 1;  // bytes
  if (stride) {
    self->set_sizes_and_strides(size, *stride);
    storage_size = static_cast<int64_t>(at::detail::computeStorageNbytes(size, *stride, self->dtype().itemsize()));
  } else {
    self->set_sizes_contiguous(size);
    storage_size = static_cast<int64_t>(at::detail::computeStorageNbytesContiguous(size, self->dtype().itemsize()));
  }
  const int64_t needed = storage_size + self->storage_offset() * static_cast<int64_t>(self->dtype().itemsize());
  if (self->numel() == 0) return;
  const c10::Storage& storage = self->unsafe_storage();
  if (static_cast<int64_t>(storage.nbytes()) < needed) ResizeStorageBytes(storage, static_cast<size_t>(needed));
}

const at::Tensor& resize_(const at::Tensor& self, c10::IntArrayRef size,
                          std::optional<c10::MemoryFormat> memory_format) {
  for (auto s : size) TORCH_CHECK(s >= 0, "resize_: size ", size, " has a negative dimension");
  at::TensorImpl* impl = self.unsafeGetTensorImpl();
  ResizeImpl(impl, size, std::nullopt);
  if (memory_format) {
    TORCH_CHECK(*memory_format != c10::MemoryFormat::Preserve, "resize_: unsupported memory format Preserve");
    impl->empty_tensor_restride(*memory_format);
  }
  return self;
}

at::Tensor& set_source_storage_offset(at::Tensor& self, c10::Storage source, c10::SymInt offset,
                                      c10::SymIntArrayRef size, c10::SymIntArrayRef stride) {
  const int64_t off = offset.expect_int();
  auto sz = C10_AS_INTARRAYREF_SLOW(size);
  auto st = C10_AS_INTARRAYREF_SLOW(stride);
  at::native::checkSetStorage(self, source, off, sz, st);
  self.unsafeGetTensorImpl()->set_storage_offset(off);
  ResizeImpl(self.unsafeGetTensorImpl(), sz, st.empty() ? std::nullopt : std::optional<c10::IntArrayRef>(st));
  return self;
}

at::Tensor& set_source_storage(at::Tensor& self, c10::Storage source) {
  const int64_t n = static_cast<int64_t>(source.nbytes() / self.dtype().itemsize());
  return set_source_storage_offset(self, std::move(source), 0, {c10::SymInt(n)}, {});
}

at::Tensor& set_source_tensor(at::Tensor& self, const at::Tensor& source) {
  if (self.is_same(source)) return self;
  return set_source_storage_offset(self, source.storage(), source.sym_storage_offset(), source.sym_sizes(),
                                   source.sym_strides());
}

at::Tensor& set_empty(at::Tensor& self) {
  c10::Storage storage(c10::Storage::use_byte_size_t(), 0, GetNpuAllocator(), /*resizable=*/true);
  return set_source_storage_offset(self, storage, 0, {c10::SymInt(0)}, {});
}

// The one copy path: any npu/CPU combination, any strides, any dtype pair, broadcasting src. Moves
// memory only: copy_from applies conjugate / negative view bits.
static void CopyMemory(const at::Tensor& src, const at::Tensor& dst, bool non_blocking) {
  TORCH_CHECK(dst.defined() && src.defined(), "copy_: undefined tensor");
  // Checked before the empty return: an empty destination does not make any source valid (as on the CPU).
  TORCH_CHECK(at::is_expandable_to(src.sizes(), dst.sizes()), "copy_: the source of shape ", src.sizes(),
              " cannot be broadcast to the destination of shape ", dst.sizes());
  if (dst.numel() == 0) return;
  const bool src_npu = src.device().type() == kNpu, dst_npu = dst.device().type() == kNpu;
  TORCH_CHECK((src_npu || src.is_cpu()) && (dst_npu || dst.is_cpu()), "copy_: npu copies support npu and cpu ",
              "tensors only, got ", src.device(), " -> ", dst.device());
  // Same-device dtype conversion of dense tensors: the Ascend C Cast kernel (elementwise family).
  if (src_npu && dst_npu && src.device() == dst.device() && src.scalar_type() != dst.scalar_type() &&
      NpuCastCopy(src, dst))
    return;
  if (!dst_npu) CheckSyncDebug("a copy from npu to host memory (Tensor.cpu, item, tolist, a read-back)");
  else if (!src_npu && !non_blocking) CheckSyncDebug("a blocking copy from host memory (non_blocking=False)");
  // non_blocking from pageable host memory: PyTorch (as CUDA's staged cudaMemcpyAsync) lets the caller
  // reuse the source as soon as copy_ returns, so its values are taken now into a staging copy the
  // task owns; only a pinned source is read later, by the task (the caller must then leave it alone).
  const at::Tensor src_now =
      !src_npu && dst_npu && non_blocking && !src.is_pinned() ? src.clone(c10::MemoryFormat::Preserve) : src;
  npu_rt::StridedView dv = RuntimeView(dst), sv = RuntimeView(src_now, dst.sizes());
  // Device memory is stream-ordered (a freed block is reused only by later work on its stream), so
  // like a kernel the task holds raw pointers to npu tensors; host memory has no such ordering, so
  // the task keeps a CPU tensor alive until it has run.
  auto task = [dv, sv, keep_src = src_npu ? at::Tensor() : src_now, keep_dst = dst_npu ? at::Tensor() : dst] {
    npu_rt::StridedCopy(dv, sv);
  };
  const c10::DeviceIndex exec_dev = dst_npu ? dst.device().index() : src.device().index();
  npu_rt::Stream& stream = CurrentRuntimeStream(exec_dev);
  if (src_npu && dst_npu && src.device() != dst.device()) {
    // Cross-device: order after the source device's pending work, and keep the source device
    // from reusing the source before the copy has read it.
    npu_rt::Stream& src_stream = CurrentRuntimeStream(src.device().index());
    auto before = std::make_shared<npu_rt::Event>(false), after = std::make_shared<npu_rt::Event>(false);
    NPU_RT_CALL(before->Record(src_stream); before->Block(stream));
    NPU_RT_CALL(stream.Enqueue("copy_ (npu->npu, cross-device)", std::move(task)));
    NPU_RT_CALL(after->Record(stream); after->Block(src_stream));
  } else {
    std::string detail;
    if (LogDebugEnabled()) {
      std::ostringstream d;
      d << src.scalar_type() << src.sizes() << " strides " << src.strides() << " -> " << dst.scalar_type()
        << " strides " << dst.strides();
      detail = d.str();
    }
    NPU_RT_CALL(stream.Enqueue(src_npu && dst_npu ? "copy_ (npu->npu)" : (dst_npu ? "copy_ (cpu->npu)" : "copy_ (npu->cpu)"),
                               std::move(task), std::move(detail)));
  }
  // A copy into host memory must have landed before the caller reads it; a copy from host
  // memory waits too unless non_blocking (the task holds the source alive either way).
  if (!dst_npu || (!src_npu && !non_blocking)) NPU_RT_CALL(stream.Synchronize());
}

// conj_physical_ (PyTorch's went to a CPU-only DispatchStub: an internal assert on npu): the complex
// conjugate of self's memory (whatever its conj bit says, the memory is conjugated). complex64 negates
// the imaginary floats on the vector unit; complex128 is computed by the CPU fallback's conj_physical.
at::Tensor& conj_physical_(at::Tensor& self) {
  if (!self.is_complex() || self.numel() == 0) return self;
  if (self.scalar_type() == at::kComplexFloat) {
    ComplexMemoryPairs(self).select(-1, 1).neg_();
    return self;
  }
  const at::Tensor conjugated = at::conj_physical(self.is_conj() ? self.conj() : self);
  CopyMemory(conjugated, self, /*non_blocking=*/false);
  return self;
}

// conj_physical.out (torch.fft.hfft / ihfft, resolve_conj): out = conj(self) materialized. complex64
// copies then negates the imaginary floats; real dtypes copy; complex128 takes the CPU fallback.
at::Tensor& conj_physical_out(const at::Tensor& self, at::Tensor& out) {
  if (self.is_complex() && !(self.scalar_type() == at::kComplexFloat && out.scalar_type() == at::kComplexFloat)) {
    CallCpuFallback("aten::conj_physical", "out", {self, out}, " for this dtype");
    return out;
  }
  at::native::resize_output(out, self.sizes());
  out.copy_(self);
  if (self.is_complex() && out.numel() > 0) {
    // out's value is self's; conjugating its memory conjugates its value, whatever out's conj bit.
    ComplexMemoryPairs(out).select(-1, 1).neg_();
  }
  return out;
}

// A copy between a complex and another dtype moves the real (and imaginary) parts as real tensors,
// each through the one copy path (dtype casts on the Cast kernel): real -> complex writes the real
// part and zeros the imaginary one; complex -> real keeps the real part, with the CPU's warning;
// complex64 <-> complex128 casts both parts.
static void CopyComplexCast(const at::Tensor& src, const at::Tensor& dst, bool non_blocking) {
  if (!dst.is_complex()) {
    TORCH_WARN_ONCE("Casting complex values to real discards the imaginary part");
    CopyMemory(ComplexMemoryPairs(src).select(-1, 0), dst, non_blocking);
  } else if (!src.is_complex()) {
    const at::Tensor d = ComplexMemoryPairs(dst);
    CopyMemory(src, d.select(-1, 0), non_blocking);
    d.select(-1, 1).zero_();
  } else {
    const at::Tensor d = ComplexMemoryPairs(dst), s = ComplexMemoryPairs(src);
    CopyMemory(s.expand(d.sizes()), d, non_blocking);
  }
}

at::Tensor copy_from(const at::Tensor& src, const at::Tensor& dst, bool non_blocking) {
  // Conjugate and negative views (z.conj(), z.conj().imag) are lazy bits over unchanged memory: move
  // the memory, then apply to dst what the bits differ by, as ATen's copy_ does (the raw copy alone
  // gave z.conj().resolve_conj() == z).
  const bool conj = src.is_conj() != dst.is_conj(), neg = src.is_neg() != dst.is_neg();
  if (src.scalar_type() != dst.scalar_type() && (src.is_complex() || dst.is_complex()) && dst.numel() > 0)
    CopyComplexCast(src, dst, non_blocking);
  else
    CopyMemory(src, dst, non_blocking);
  if (dst.numel() > 0 && conj) dst.conj_physical_();
  if (dst.numel() > 0 && neg) dst.neg_();
  return dst;
}

at::Tensor copy_from_and_resize(const at::Tensor& self, const at::Tensor& dst) {
  if (dst.sizes() != self.sizes()) {
    TORCH_CHECK(dst.device().type() == kNpu || dst.is_cpu(), "copy: unsupported destination device ", dst.device());
    if (dst.device().type() == kNpu) resize_(dst, self.sizes(), std::nullopt);
    else dst.resize_(self.sizes());
  }
  return copy_from(self, dst, false);
}

at::Tensor& copy_(at::Tensor& self, const at::Tensor& src, bool non_blocking) {
  if (self.is_same(src)) return self;
  // As ATen's copy_ (TensorIterator's memory-overlap checks): a destination with aliased elements
  // (an expanded view), or one that partly overlaps its source, is an error; clone the source first.
  if (self.device() == src.device()) {
    at::assert_no_internal_overlap(self);
    at::assert_no_partial_overlap(self, src);
  }
  copy_from(src, self, non_blocking);
  return self;
}

at::Tensor& fill_scalar(at::Tensor& self, const c10::Scalar& value) {
  if (self.numel() == 0) return self;
  at::Tensor v = at::scalar_tensor(value, at::TensorOptions().dtype(self.scalar_type()));  // host value
  copy_from(v, self, /*non_blocking=*/true);
  return self;
}

at::Tensor& fill_tensor(at::Tensor& self, const at::Tensor& value) {
  TORCH_CHECK(value.dim() == 0, "fill_ only supports a 0-dimension value tensor but got tensor with ", value.dim(),
              " dimensions");
  if (self.numel() == 0) return self;
  copy_from(value, self, /*non_blocking=*/true);
  return self;
}

at::Tensor& zero_(at::Tensor& self) { return fill_scalar(self, 0); }

c10::Scalar local_scalar_dense(const at::Tensor& self) {
  TORCH_CHECK(self.numel() == 1, "a Tensor with ", self.numel(), " elements cannot be converted to Scalar");
  at::Tensor host = at::empty({}, self.options().device(c10::kCPU));
  copy_from(self.reshape({}), host, false);
  return at::native::_local_scalar_dense_cpu(host);
}

// cat: data movement only -- each input is copied into its slice of the output by the runtime's
// strided copy (with the dtype cast of type promotion), as the device's DMA would.
// roll: per rolled dimension, two strided device copies (the runtime's copy engine) into a new
// tensor; no dims: the flattened tensor rolled along 0, as PyTorch defines it.
// flip: one index_select (the gather kernel) per flipped dimension with a descending index.
at::Tensor flip_npu(const at::Tensor& self, c10::IntArrayRef dims) {
  const char* op = "flip";
  std::vector<int64_t> wrapped;
  for (int64_t d : dims) wrapped.push_back(WrapDim(op, d, std::max<int64_t>(self.dim(), 1)));
  std::vector<int64_t> unique = wrapped;
  std::sort(unique.begin(), unique.end());
  unique.erase(std::unique(unique.begin(), unique.end()), unique.end());
  TORCH_CHECK(unique.size() == wrapped.size(), op, ": dims has duplicates, original flip dims size=", wrapped.size(),
              ", but unique flip dims size=", unique.size());
  at::Tensor cur = self;
  for (int64_t d : wrapped) {
    if (self.dim() == 0) break;
    const int64_t n = self.size(d);
    if (n <= 1) continue;
    cur = at::index_select(cur, d, at::arange(n - 1, -1, -1, self.options().dtype(c10::kLong)));
  }
  return cur.is_same(self) ? self.clone() : cur;
}

at::Tensor roll_npu(const at::Tensor& self, c10::IntArrayRef shifts, c10::IntArrayRef dims) {
  const char* op = "roll";
  TORCH_CHECK(!shifts.empty(), op, ": `shifts` required");
  if (dims.empty()) {
    TORCH_CHECK(shifts.size() == 1, op, ": shifts and dimensions must align. shifts: ", shifts.size(), ", dims: 0");
    const int64_t zero = 0;
    return roll_npu(self.flatten(), shifts, c10::IntArrayRef(&zero, 1)).view(self.sizes());
  }
  TORCH_CHECK(shifts.size() == dims.size(), op, ": shifts and dimensions must align. shifts: ", shifts.size(),
              ", dims: ", dims.size());
  if (self.numel() == 0) return self.clone();  // before any dim check, as ATen's roll
  at::Tensor cur = self;
  for (size_t i = 0; i < dims.size(); ++i) {
    const int64_t d = WrapDim(op, dims[i], self.dim());
    const int64_t n = self.size(d);
    at::Tensor out = at::empty_like(cur);
    const int64_t s = n == 0 ? 0 : ((shifts[i] % n) + n) % n;
    if (s == 0) {
      out.copy_(cur);
    } else {
      out.narrow(d, s, n - s).copy_(cur.narrow(d, 0, n - s));
      out.narrow(d, 0, s).copy_(cur.narrow(d, n - s, s));
    }
    cur = out;
  }
  return cur;
}

at::Tensor& cat_out(const at::ITensorListRef& tensors, int64_t dim, at::Tensor& out) {
  const char* op = "cat";
  std::vector<at::Tensor> ts;
  for (const at::Tensor& t : tensors) ts.push_back(t);
  TORCH_CHECK_VALUE(!ts.empty(), op, ": expected a non-empty list of tensors");
  // Legacy rule: 1-D empty tensors are skipped whatever the other shapes.
  const at::Tensor* ref = nullptr;
  for (const auto& t : ts)
    if (!(t.dim() == 1 && t.numel() == 0)) { ref = &t; break; }
  if (!ref) {
    at::native::resize_output(out, {0});
    return out;
  }
  dim = c10::maybe_wrap_dim(dim, ref->dim());
  std::vector<int64_t> size = ref->sizes().vec();
  int64_t total = 0;
  c10::ScalarType dtype = ts[0].scalar_type();
  bool all_cl = ref->dim() == 4;
  for (size_t i = 0; i < ts.size(); ++i) {
    const at::Tensor& t = ts[i];
    TORCH_CHECK(t.device() == out.device(), op, ": tensor ", i, " is on ", t.device(), " but the output is on ",
                out.device());
    if (i) dtype = c10::promoteTypes(dtype, t.scalar_type());
    if (t.dim() == 1 && t.numel() == 0) continue;
    TORCH_CHECK_VALUE(t.dim() == ref->dim(), op, ": tensors must have the same number of dimensions: got ",
                      ref->dim(), " and ", t.dim(), " (tensor ", i, ")");
    for (int64_t d = 0; d < t.dim(); ++d)
      TORCH_CHECK_VALUE(d == dim || t.size(d) == size[d], op, ": sizes of tensors must match except in dimension ",
                        dim, ". Expected size ", size[d], " but got size ", t.size(d), " for tensor number ", i,
                        " in the list.");
    total += t.size(dim);
    all_cl = all_cl && t.is_contiguous(c10::MemoryFormat::ChannelsLast) && !t.is_contiguous();
  }
  TORCH_CHECK_TYPE(c10::canCast(dtype, out.scalar_type()), op, ": result type ", dtype,
                   " can't be cast to the desired output type ", out.scalar_type());
  size[dim] = total;
  at::native::resize_output(out, size);
  if (all_cl && !out.is_contiguous(c10::MemoryFormat::ChannelsLast))
    out.resize_(size, c10::MemoryFormat::ChannelsLast);
  int64_t offset = 0;
  for (const auto& t : ts) {
    if (t.numel() == 0) {
      if (!(t.dim() == 1)) offset += t.dim() > dim ? t.size(dim) : 0;
      continue;
    }
    out.narrow(dim, offset, t.size(dim)).copy_(t);
    offset += t.size(dim);
  }
  return out;
}

// Tensor.record_stream(s), as CUDA's: the caching allocator does not reuse the tensor's block until the
// work queued on `s` so far has run, when the tensor is freed on another stream (multi-stream programs).
void record_stream_npu(at::Tensor& self, c10::Stream s) {
  TORCH_CHECK(self.device().type() == kNpu, "record_stream: expected an npu tensor, got one on ", self.device());
  TORCH_CHECK(s.device_type() == kNpu, "record_stream: expected an npu stream, got one of device type ",
              s.device_type());
  TORCH_CHECK(s.device_index() == self.device().index(), "record_stream: the tensor is on npu:", self.device().index(),
              " but the stream on npu:", s.device_index());
  GetNpuAllocator()->recordStream(self.storage().data_ptr(), s);
}

}  // namespace
}  // namespace torch_ops_nn

NPU_ATEN_LIBRARY_IMPL(m) {
  using namespace torch_ops_nn;
  m.impl("record_stream", TORCH_FN(record_stream_npu));
  m.impl("empty.memory_format", TORCH_FN(empty_memory_format));
  m.impl("empty_strided", TORCH_FN(empty_strided));
  m.impl("as_strided", TORCH_FN(at::native::as_strided_tensorimpl));
  m.impl("view", TORCH_FN(at::native::view));
  m.impl("_reshape_alias", TORCH_FN(at::native::_reshape_alias));
  // Views with a per-backend registration in ATen: without these they took the CPU fallback, which
  // returned a copy (writes through the "view" were lost).
  m.impl("unfold", TORCH_FN(at::native::unfold));
  m.impl("view_as_real", TORCH_FN(at::native::view_as_real));
  m.impl("view_as_complex", TORCH_FN(at::native::view_as_complex));
  m.impl("resize_", TORCH_FN(resize_));
  m.impl("set_.source_Storage", TORCH_FN(set_source_storage));
  m.impl("set_.source_Storage_storage_offset", TORCH_FN(set_source_storage_offset));
  m.impl("set_.source_Tensor", TORCH_FN(set_source_tensor));
  m.impl("set_", TORCH_FN(set_empty));
  m.impl("_copy_from", TORCH_FN(copy_from));
  m.impl("_copy_from_and_resize", TORCH_FN(copy_from_and_resize));
  m.impl("copy_", TORCH_FN(copy_));
  m.impl("conj_physical_", TORCH_FN(conj_physical_));
  m.impl("conj_physical.out", TORCH_FN(conj_physical_out));
  m.impl("fill_.Scalar", TORCH_FN(fill_scalar));
  m.impl("fill_.Tensor", TORCH_FN(fill_tensor));
  m.impl("zero_", TORCH_FN(zero_));
  m.impl("_local_scalar_dense", TORCH_FN(local_scalar_dense));
  m.impl("cat.out", TORCH_FN(cat_out));
  m.impl("roll", TORCH_FN(roll_npu));
  m.impl("flip", TORCH_FN(flip_npu));
}
