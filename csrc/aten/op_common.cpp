#include "aten/op_common.h"

#include <ATen/core/Reduction.h>

#include <ATen/EmptyTensor.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/ge.h>
#include <ATen/ops/le.h>
#include <ATen/ops/logical_or.h>
#include <ATen/ops/view_as_real.h>
#include <c10/core/DeviceGuard.h>

#include <mutex>
#include <sstream>
#include <vector>

#include "core/npu_allocator.h"
#include "core/npu_context.h"
#include "runtime/runtime.h"

namespace torch_ops_nn {

const npu_kernels::SocInfo& SocInfoFor(c10::DeviceIndex device) {
  static std::once_flag once;
  static std::vector<npu_kernels::SocInfo> infos;
  std::call_once(once, [] {
    for (int d = 0; d < npu_rt::DeviceCount(); ++d) {
      const npu_rt::SocProfile& p = *npu_rt::GetDeviceInfo(d).soc;
      npu_kernels::SocInfo s;
      s.npu_arch = p.npu_arch;
      s.vector_cores = p.vector_cores > 0 ? p.vector_cores : p.cube_cores;
      s.cube_cores = p.cube_cores;
      s.ub_bytes = p.ub_bytes;
      s.l1_bytes = p.l1_bytes;
      s.l0a_bytes = p.l0a_bytes;
      s.l0b_bytes = p.l0b_bytes;
      s.l0c_bytes = p.l0c_bytes;
      infos.push_back(s);
    }
  });
  TORCH_CHECK(device >= 0 && device < static_cast<int>(infos.size()), "invalid npu device ", device);
  return infos[device];
}

at::Tensor ScalarOnDevice(const at::Tensor& t, const at::Tensor& like) {
  if (!t.device().is_cpu() || t.dim() != 0 || like.device().is_cpu()) return t;
  return t.to(like.device(), t.scalar_type() == c10::kDouble ? c10::kFloat : t.scalar_type());
}

at::Tensor ComplexMemoryPairs(const at::Tensor& z) { return at::view_as_real(z.is_conj() ? z.conj() : z); }
at::Tensor ComplexValuePairs(const at::Tensor& z) { return at::view_as_real(z.resolve_conj().resolve_neg()); }
bool IsNpuComplex64(const at::Tensor& t) {
  return t.defined() && t.scalar_type() == at::kComplexFloat && t.device().type() == kNpu;
}

c10::DeviceIndex CheckSameNpuDevice(const char* op, std::initializer_list<NamedTensor> tensors) {
  const NamedTensor* first = nullptr;
  for (const auto& nt : tensors) {
    const at::Tensor& t = *nt.second;
    if (!t.defined()) continue;
    if (t.device().type() != kNpu) {
      std::ostringstream where;
      for (const auto& o : tensors)
        if (o.second->defined()) where << (where.tellp() > 0 ? ", " : "") << "'" << o.first << "' on " << o.second->device();
      TORCH_CHECK(false, op, ": argument '", nt.first, "' is on ", t.device(), ", but npu tensors are expected (",
                  where.str(), "); move it with .to('npu')");
    }
    if (!first) {
      first = &nt;
      continue;
    }
    TORCH_CHECK(t.device() == first->second->device(), op, ": argument '", nt.first, "' is on ", t.device(),
                " but '", first->first, "' is on ", first->second->device(), "; all tensors must be on one device");
  }
  TORCH_CHECK(first, op, ": no tensor arguments");
  return first->second->device().index();
}

bool IsNpuFloat(c10::ScalarType t) { return t == c10::kFloat || t == c10::kHalf || t == c10::kBFloat16; }

std::optional<npu_kernels::EwDType> EwDTypeOf(c10::ScalarType t) {
  switch (t) {
    case c10::kFloat: return npu_kernels::EwDType::F32;
    case c10::kHalf: return npu_kernels::EwDType::F16;
    case c10::kBFloat16: return npu_kernels::EwDType::BF16;
    case c10::kInt: return npu_kernels::EwDType::I32;
    case c10::kLong: return npu_kernels::EwDType::I64;
    case c10::kBool: return npu_kernels::EwDType::BOOL;
    default: return std::nullopt;
  }
}

void CheckFloatDtype(const char* op, const char* arg, const at::Tensor& t) {
  NPU_CHECK_DTYPE(IsNpuFloat(t.scalar_type()), t.scalar_type(), op, ": argument '", arg, "' has dtype ", t.scalar_type(),
                   ", which is not supported; supported dtypes: Float, Half, BFloat16");
}

at::Tensor NpuEmpty(c10::IntArrayRef sizes, c10::ScalarType dtype, c10::DeviceIndex device, c10::MemoryFormat format) {
  c10::DeviceGuard guard(c10::Device(kNpu, device));
  return at::detail::empty_generic(sizes, GetNpuAllocator(), c10::DispatchKeySet(c10::DispatchKey::PrivateUse1),
                                   dtype, format);
}

at::Tensor Contiguous(const at::Tensor& t) { return t.is_contiguous() ? t : t.contiguous(); }

std::string DescribeForLog(std::initializer_list<NamedTensor> tensors) {
  std::ostringstream s;
  for (const auto& nt : tensors) {
    if (!nt.second->defined()) continue;
    s << (s.tellp() > 0 ? " " : "") << nt.first << "=" << nt.second->scalar_type() << nt.second->sizes();
  }
  return s.str();
}

int64_t WrapDim(const char* op, int64_t dim, int64_t ndim) {
  const int64_t n = ndim > 0 ? ndim : 1;
  TORCH_CHECK_INDEX(dim >= -n && dim < n, op, ": Dimension out of range (expected to be in range of [", -n, ", ",
                    n - 1, "], but got ", dim, ")");
  return dim < 0 ? dim + n : dim;
}

bool ExactAsFloat(const at::Tensor& x) {
  const c10::ScalarType t = x.scalar_type();
  if (t == c10::kBool || t == c10::kByte || t == c10::kChar || t == c10::kShort) return true;
  if (t != c10::kInt && t != c10::kLong) return false;
  const int64_t lim = int64_t(1) << 24;
  return x.numel() == 0 || !at::logical_or(at::ge(x, lim), at::le(x, -lim)).any().item<bool>();
}

std::vector<int64_t> DimsExcept(int64_t ndim, int64_t dim) {
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < ndim; ++d)
    if (d != dim) dims.push_back(d);
  return dims;
}

at::Tensor& CopyToOut(const char* op, const at::Tensor& result, at::Tensor& out) {
  CheckSameNpuDevice(op, {{"out", &out}});
  TORCH_CHECK(c10::canCast(result.scalar_type(), out.scalar_type()), op, ": result type ", result.scalar_type(),
              " can't be cast to the desired output type ", out.scalar_type());
  at::native::resize_output(out, result.sizes());
  if (out.is_same(result)) return out;
  out.copy_(result);
  return out;
}

void CheckNonBatchDimsNotEmpty(const char* op, const char* name, const at::Tensor& t) {
  for (int64_t i = 1; i < t.dim(); ++i)
    TORCH_CHECK(t.size(i) > 0, op, "(): Expected ", name, " to have non-zero size for non-batch dimensions, but ", name,
                " has sizes ", t.sizes(), " with dimension ", i, " being empty");
}

at::Tensor& CopyToOutExact(const char* op, const at::Tensor& result, at::Tensor& out) {
  TORCH_CHECK(out.scalar_type() == result.scalar_type(), op, ": expected out tensor to have dtype ",
              result.scalar_type(), ", but got ", out.scalar_type(), " instead");
  return CopyToOut(op, result, out);
}

at::Tensor ApplyReduction(const at::Tensor& loss, int64_t reduction) {
  if (reduction == at::Reduction::Mean) return loss.mean();
  if (reduction == at::Reduction::Sum) return loss.sum();
  return loss;
}

}  // namespace torch_ops_nn
