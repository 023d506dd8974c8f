// Elementwise ops on npu: the shared pointwise engine (checks, type promotion, broadcasting, output
// handling, launch of the Ascend C elementwise kernel), the on-device Cast, and the ATen
// registrations of the arithmetic, comparison, logical, where/masked_fill, clamp, lerp,
// addcmul/addcdiv and unary math ops. Activations live in activation.cpp.
#include <ATen/Functions.h>
#include <ATen/ops/result_type.h>
#include <ATen/ops/mul.h>
#include <ATen/ops/add.h>
#include <ATen/ops/any.h>
#include <ATen/ops/full.h>
#include <ATen/ops/isnan.h>
#include <ATen/ops/hypot.h>
#include <ATen/ops/cos.h>
#include <ATen/ops/sin.h>
#include <ATen/ops/neg.h>
#include <ATen/ops/view_as_complex.h>
#include <ATen/ops/view_as_real.h>
#include <ATen/ops/log.h>
#include <ATen/ops/where.h>
#include <ATen/ops/eq.h>
#include <ATen/ops/zeros.h>
#include <ATen/ScalarOps.h>
#include <ATen/ExpandUtils.h>
#include <ATen/MemoryOverlap.h>
#include <ATen/native/Resize.h>
#include <ATen/native/TypeProperties.h>
#include <ATen/ops/empty_strided.h>
#include <ATen/ops/logical_or.h>
#include <ATen/ops/le.h>
#include <ATen/ops/ge.h>
#include <c10/core/DeviceGuard.h>
#include <c10/core/ScalarType.h>
#include <torch/library.h>

#include <cmath>
#include <limits>
#include <optional>
#include <sstream>
#include <vector>

#include "aten/elementwise_common.h"
#include "aten/kernel_launch.h"
#include "aten/op_common.h"
#include "core/cpu_fallback.h"
#include "cast.h"
#include "elementwise.h"
#include "int64_ops.h"

namespace torch_ops_nn {

TORCH_OPS_NN_REGISTER_KERNEL(elementwise_kernel_float);
TORCH_OPS_NN_REGISTER_KERNEL(int64_binary_kernel);
TORCH_OPS_NN_REGISTER_KERNEL(elementwise_kernel_int32);
TORCH_OPS_NN_REGISTER_KERNEL(cast_kernel);

using npu_kernels::ElementwiseTiling;
using npu_kernels::EwDType;
using npu_kernels::EwMode;
using npu_kernels::EwOp;

namespace {

bool ToEwDType(c10::ScalarType t, EwDType* out) {
  switch (t) {
    case c10::kFloat: *out = EwDType::F32; return true;
    case c10::kHalf: *out = EwDType::F16; return true;
    case c10::kBFloat16: *out = EwDType::BF16; return true;
    case c10::kInt: *out = EwDType::I32; return true;
    case c10::kLong: *out = EwDType::I64; return true;
    case c10::kBool: *out = EwDType::BOOL; return true;
    case c10::kByte: *out = EwDType::U8; return true;
    case c10::kChar: *out = EwDType::I8; return true;
    case c10::kShort: *out = EwDType::I16; return true;
    default: return false;
  }
}
EwDType EwDTypeOf(c10::ScalarType t) {
  EwDType d{};
  TORCH_INTERNAL_ASSERT(ToEwDType(t, &d), "no elementwise dtype for ", t);
  return d;
}

bool IsCpuScalar(const at::Tensor& t) { return t.defined() && t.device().is_cpu() && t.dim() == 0; }

std::string ShapeStr(c10::IntArrayRef s) {
  std::ostringstream o;
  o << s;
  return o.str();
}

// Like CheckSameNpuDevice, for a list built at run time.
c10::DeviceIndex CheckDevices(const char* op, const std::vector<NamedTensor>& ts) {
  const NamedTensor* first = nullptr;
  for (const auto& nt : ts) {
    const at::Tensor& t = *nt.second;
    if (t.device().type() != kNpu) {
      std::ostringstream where;
      for (const auto& o : ts) where << (where.tellp() > 0 ? ", " : "") << "'" << o.first << "' on " << o.second->device();
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
  TORCH_CHECK(first, op, ": no npu tensor arguments");
  return first->second->device().index();
}

// ---------------------------------------------------------------- launch
struct Operand {
  at::Tensor t;     // defined: npu tensor
  double f = 0;     // host scalar (float compute)
  int64_t i = 0;    // host scalar (int compute)
};

// Folds the output into [rows, width] and gives every tensor operand a mode (see elementwise.h).
// Operands that fit no mode are materialized at the output shape.
void Canonicalize(const char* name, const at::Tensor& out, std::vector<Operand>& in, ElementwiseTiling& t,
                  std::vector<int>& tensor_idx, bool no_pad) {
  const c10::IntArrayRef out_sizes = out.sizes();
  const int nd = static_cast<int>(out_sizes.size());
  std::vector<int64_t> dims;
  std::vector<int> keep;
  for (int k = 0; k < nd; ++k)
    if (out_sizes[k] != 1) {
      dims.push_back(out_sizes[k]);
      keep.push_back(k);
    }
  const int m0 = static_cast<int>(dims.size());
  // flags[j][k]: operand j broadcasts along kept dim k.
  std::vector<std::vector<bool>> flags(tensor_idx.size(), std::vector<bool>(m0, false));
  for (size_t j = 0; j < tensor_idx.size(); ++j) {
    const at::Tensor& x = in[tensor_idx[j]].t;
    const int lead = nd - static_cast<int>(x.dim());
    for (int k = 0; k < m0; ++k) {
      const int d = keep[k] - lead;
      flags[j][k] = d < 0 || x.size(d) == 1;
    }
  }
  // Coalesce neighbouring dims with the same broadcast pattern.
  std::vector<int64_t> D;
  std::vector<std::vector<bool>> F(tensor_idx.size());
  for (int k = 0; k < m0; ++k) {
    bool same = !D.empty();
    for (size_t j = 0; same && j < tensor_idx.size(); ++j) same = flags[j][k] == F[j].back();
    if (same) {
      D.back() *= dims[k];
    } else {
      D.push_back(dims[k]);
      for (size_t j = 0; j < tensor_idx.size(); ++j) F[j].push_back(flags[j][k]);
    }
  }
  const int m = static_cast<int>(D.size());
  auto prod = [&](int a, int b) {
    int64_t p = 1;
    for (int k = a; k < b; ++k) p *= D[k];
    return p;
  };
  // Mode of operand j with the outer/inner split at s; false if none fits.
  auto classify = [&](size_t j, int s, npu_kernels::EwInput* e) {
    const auto& f = F[j];
    bool all_full = true, inner_full = true, inner_b = true, outer_b = true;
    for (int k = 0; k < m; ++k) {
      all_full &= !f[k];
      if (k >= s) inner_full &= !f[k], inner_b &= f[k];
      else outer_b &= f[k];
    }
    if (all_full) {
      e->mode = uint8_t(EwMode::FULL);
      return true;
    }
    if (s < m && outer_b && inner_full) {
      e->mode = uint8_t(EwMode::ROW);
      return true;
    }
    if (s > 0 && inner_b) {  // one run of full dims among the outer dims
      int j0 = -1, j1 = -1;
      for (int k = 0; k < s; ++k)
        if (!f[k]) {
          if (j0 < 0) j0 = k;
          else if (j1 >= 0) return false;
          if (k + 1 == s || f[k + 1]) j1 = k + 1;
        }
      if (j0 < 0) return false;
      e->mode = uint8_t(EwMode::COL);
      e->cmod = static_cast<uint64_t>(prod(j0, j1));
      e->cdiv = static_cast<uint64_t>(prod(j1, s));
      return true;
    }
    return false;
  };
  int split = -1;
  for (int s = 0; s <= m && split < 0; ++s) {
    bool ok = true;
    npu_kernels::EwInput e;
    for (size_t j = 0; ok && j < tensor_idx.size(); ++j) ok = classify(j, s, &e);
    if (ok) split = s;
  }
  // Short padded rows waste UB and DataCopyPad blocks: materialize instead. Without DataCopyPad
  // (2002) every row must be whole 32-byte blocks in every dtype.
  if (split > 0 && prod(split, m) < 16) split = -1;
  if (split > 0 && no_pad) {
    const int64_t w = prod(split, m);
    bool whole = w * out.element_size() % 32 == 0;
    for (size_t j = 0; j < tensor_idx.size(); ++j) whole = whole && w * in[tensor_idx[j]].t.element_size() % 32 == 0;
    if (!whole) split = -1;
  }
  if (split < 0) {
    for (size_t j = 0; j < tensor_idx.size(); ++j) {
      bool full = true;
      for (int k = 0; k < m; ++k) full &= !F[j][k];
      Operand& op = in[tensor_idx[j]];
      if (!full) op.t = op.t.expand(out_sizes).contiguous();
      t.in[tensor_idx[j]].mode = uint8_t(EwMode::FULL);
    }
    t.rows = 1;
    t.width = static_cast<uint64_t>(prod(0, m));
    return;
  }
  for (size_t j = 0; j < tensor_idx.size(); ++j) {
    npu_kernels::EwInput e;
    classify(j, split, &e);
    t.in[tensor_idx[j]].mode = e.mode;
    t.in[tensor_idx[j]].cdiv = e.cdiv;
    t.in[tensor_idx[j]].cmod = e.cmod;
  }
  t.rows = static_cast<uint64_t>(prod(0, split));
  t.width = static_cast<uint64_t>(prod(split, m));
  (void)name;
}

// The first dim of the dense row-major suffix of x: dims [s, nd) have strides 1, size, ... (size-1
// dims go either way).
int DenseSuffix(const at::Tensor& x) {
  int64_t expect = 1;
  int s = static_cast<int>(x.dim());
  for (int k = static_cast<int>(x.dim()) - 1; k >= 0; --k) {
    if (x.size(k) != 1) {
      if (x.stride(k) != expect) break;
      expect *= x.size(k);
    }
    s = k;
  }
  return s;
}

// Dims [0, s) of x fold into one dim of one stride (the row pitch, 0 for a single row); false when
// they do not.
bool OuterPitch(const at::Tensor& x, int s, int64_t* pitch) {
  int64_t stride = 0, expect = -1;
  for (int k = s - 1; k >= 0; --k) {
    if (x.size(k) == 1) continue;
    if (expect < 0) {
      stride = x.stride(k);
      expect = stride * x.size(k);
    } else if (x.stride(k) != expect) {
      return false;
    } else {
      expect *= x.size(k);
    }
  }
  *pitch = stride;
  return true;
}

// [lowest, highest] byte of x's elements (non-negative strides).
std::pair<uintptr_t, uintptr_t> ByteRange(const at::Tensor& x) {
  uint64_t last = 0;
  for (int64_t k = 0; k < x.dim(); ++k) last += uint64_t(x.size(k) - 1) * uint64_t(x.stride(k));
  const uintptr_t lo = reinterpret_cast<uintptr_t>(x.data_ptr());
  return {lo, lo + (last + 1) * x.element_size() - 1};
}

// Whether the byte ranges of a and b intersect.
bool RangesOverlap(const at::Tensor& a, const at::Tensor& b) {
  const auto ra = ByteRange(a), rb = ByteRange(b);
  return !(ra.second < rb.first || rb.second < ra.first);
}

// Operands of the output's shape that are 2-D strided views - rows of `width` dense elements, one
// pitch between rows (a slice of wider rows, a narrowed dim, the output of a strided in-place op) -
// are read and written in place by DataCopyPad's strides instead of copied contiguous (three
// copies for an in-place op on such a view). Each operand must be the output's own view or not
// overlap it. Fills the problem into `t`; false when the operands do not all fit.
bool PitchedRows(const at::Tensor& out, const std::vector<Operand>& in, const std::vector<int>& tensor_idx,
                 ElementwiseTiling& t) {
  std::vector<const at::Tensor*> all{&out};
  for (int i : tensor_idx) {
    if (in[i].t.sizes() != out.sizes()) return false;
    all.push_back(&in[i].t);
  }
  int s = 0;
  for (const at::Tensor* x : all) {
    for (int64_t k = 0; k < x->dim(); ++k)
      if (x->stride(k) < 0) return false;
    s = std::max(s, DenseSuffix(*x));
  }
  int64_t rows = 1, width = 1;
  for (int k = 0; k < out.dim(); ++k) (k < s ? rows : width) *= out.size(k);
  if (width < 16 || rows < 2) return false;
  std::vector<int64_t> pitch(all.size());
  for (size_t j = 0; j < all.size(); ++j) {
    if (!OuterPitch(*all[j], s, &pitch[j]) || pitch[j] < width ||
        uint64_t(pitch[j] - width) * all[j]->element_size() > 0xFFFFFFFFull)
      return false;
  }
  for (size_t j = 1; j < all.size(); ++j) {
    const at::Tensor& x = *all[j];
    if (x.data_ptr() == out.data_ptr() && x.strides() == out.strides() && x.element_size() == out.element_size())
      continue;  // the output itself (an in-place op)
    if (RangesOverlap(x, out)) return false;
  }
  t.rows = uint64_t(rows);
  t.width = uint64_t(width);
  t.out_pitch = pitch[0] == width ? 0 : uint64_t(pitch[0]);
  for (size_t j = 0; j < tensor_idx.size(); ++j) {
    npu_kernels::EwInput& e = t.in[tensor_idx[j]];
    e.mode = uint8_t(EwMode::FULL);
    e.pitch = pitch[j + 1] == width ? 0 : uint64_t(pitch[j + 1]);
  }
  return true;
}

// Runs the kernel: `out` is an npu tensor of the broadcast shape whose dtype the kernel can write;
// tensor operands are npu tensors of kernel-readable dtypes, broadcastable to `out`.
void LaunchElementwise(const PwOp& pw, const at::Tensor& out, std::vector<Operand> in, bool int_compute,
                       c10::DeviceIndex dev) {
  if (out.numel() == 0) return;
  ElementwiseTiling t;
  t.op = uint32_t(pw.op);
  t.int_compute = int_compute ? 1 : 0;
  t.out_dtype = uint8_t(EwDTypeOf(out.scalar_type()));
  for (int k = 0; k < 4; ++k) {
    t.sf[k] = pw.sf[k];
    t.si[k] = pw.si[k];
  }
  std::vector<int> tensor_idx;
  bool flat = out.is_non_overlapping_and_dense();
  for (size_t i = 0; i < in.size(); ++i) {
    Operand& o = in[i];
    if (!o.t.defined()) {
      t.in[i].mode = uint8_t(EwMode::IMM);
      t.imm_f[i] = static_cast<float>(o.f);
      t.imm_i[i] = static_cast<int32_t>(std::min<int64_t>(std::max<int64_t>(o.i, INT32_MIN), INT32_MAX));
      continue;
    }
    t.in[i].dtype = uint8_t(EwDTypeOf(o.t.scalar_type()));
    if (o.t.numel() == 1) {
      t.in[i].mode = uint8_t(EwMode::SCALAR);
      continue;
    }
    tensor_idx.push_back(static_cast<int>(i));
    flat = flat && o.t.sizes() == out.sizes() && o.t.strides() == out.strides();
  }
  at::Tensor dst = out;
  if (flat) {
    // Every operand has the output's dense layout (contiguous, channels_last, ...): one flat row.
    for (int i : tensor_idx) t.in[i].mode = uint8_t(EwMode::FULL);
    t.rows = 1;
    t.width = static_cast<uint64_t>(out.numel());
  } else if (SocInfoFor(dev).npu_arch != 2002 && PitchedRows(out, in, tensor_idx, t)) {
    // 2-D strided operands read / written in place (rows and pitches set).
  } else {
    if (!out.is_contiguous()) dst = NpuEmpty(out.sizes(), out.scalar_type(), dev);
    for (int i : tensor_idx) in[i].t = Contiguous(in[i].t);
    Canonicalize(pw.name, out, in, t, tensor_idx, SocInfoFor(dev).npu_arch == 2002);
  }
  npu_kernels::elementwise_tiling(t, SocInfoFor(dev));
  // A large output that no input shares goes past the caches: streaming stores skip reading its
  // lines first (an in-place output's lines are already cached by the read, so it keeps the hint on).
  if (uint64_t(out.numel()) * dst.element_size() >= npu_kernels::kNoL2StreamOutputBytes) {
    bool shared = false;
    for (int i : tensor_idx) shared = shared || RangesOverlap(in[i].t, dst);
    t.out_no_l2 = shared ? 0 : 1;
  }
  auto kernel = int_compute ? &elementwise_kernel_int32 : &elementwise_kernel_float;
  KernelLaunch launch{int_compute ? "elementwise_kernel_int32" : "elementwise_kernel_float",
                      ascendc_host::CoreType::AIV, t.block_dim, dev};
  launch.runs_on_2002 = true;  // plain DataCopy with aligned tails on 2002
  if (LogDebugEnabled()) {
    std::ostringstream d;
    d << "op=" << npu_kernels::EwOpName(EwOp(pw.op)) << " rows=" << t.rows << " width=" << t.width
      << " tile=" << t.tile << " rows_per_tile=" << t.rows_per_tile;
    for (size_t i = 0; i < in.size(); ++i) {
      d << " in" << i << ".mode=" << int(t.in[i].mode);
      if (t.in[i].pitch) d << " in" << i << ".pitch=" << t.in[i].pitch;
    }
    if (t.out_pitch) d << " out.pitch=" << t.out_pitch;
    if (t.out_no_l2) d << " out.no_l2=1";
    launch.detail = d.str();
  }
  auto ptr = [&](size_t i) -> void* { return i < in.size() && in[i].t.defined() ? in[i].t.data_ptr() : nullptr; };
  LaunchKernel(std::move(launch), kernel, t, ptr(0), ptr(1), ptr(2), dst.data_ptr());
  if (!dst.is_same(out)) out.copy_(dst);
}

bool IsNpuInt(c10::ScalarType t) {
  return t == c10::kInt || t == c10::kLong || t == c10::kByte || t == c10::kChar || t == c10::kShort;
}
bool KernelReads(c10::ScalarType t, bool int_compute) {
  if (int_compute) return IsNpuInt(t) || t == c10::kBool;
  return IsNpuFloat(t) || IsNpuInt(t) || t == c10::kBool;
}
bool KernelWrites(c10::ScalarType t, bool int_compute, bool bool_out) {
  if (bool_out) return t == c10::kBool;
  if (int_compute) return IsNpuInt(t);
  return IsNpuFloat(t) || IsNpuInt(t);
}

// An integer host scalar as the compute dtype holds it: PyTorch converts a scalar to the common
// dtype first, so for uint8 `x < 300` compares with 44 and `x.clamp(min=-5)` clamps at 251.
int64_t WrapToDtype(int64_t v, c10::ScalarType t) {
  switch (t) {
    case c10::kByte: return static_cast<uint8_t>(v);
    case c10::kChar: return static_cast<int8_t>(v);
    case c10::kShort: return static_cast<int16_t>(v);
    case c10::kInt: return static_cast<int32_t>(v);
    default: return v;
  }
}

double RoundTo(double v, c10::ScalarType t) {
  if (t == c10::kHalf) return static_cast<float>(c10::Half(static_cast<float>(v)));
  if (t == c10::kBFloat16) return static_cast<float>(c10::BFloat16(static_cast<float>(v)));
  if (t == c10::kFloat) return static_cast<float>(v);
  return v;
}

// NotImplementedError (not TypeError, which Python's binary operators turn into "unsupported operand").
[[noreturn]] void FailDtype(const char* op, const char* arg, c10::ScalarType t, const char* supported) {
  NPU_CHECK_DTYPE_NOT_IMPLEMENTED(false, t, op, ": argument '", arg, "' has dtype ", t,
                                  ", which is not supported; supported dtypes: ", supported);
  std::abort();  // not reached
}

// ---------------------------------------------------------------- exact int64
// The 2201 vector unit has no int64 arithmetic or compare. int64 add/sub (any int32 alpha), mul,
// comparisons, max/min, where/masked_fill, neg/abs/relu/clamp and the bitwise ops are made exact
// from int32 kernels on the two 32-bit halves of each value: the runtime's strided copy splits a
// tensor into its low/high words and joins them back (data movement only), and the int32
// elementwise kernels do the arithmetic with an explicit carry/borrow, a lexicographic (signed
// high, unsigned low) compare and 16-bit limb products. Other int64 ops run in int32 (sign is exact:
// the int64 -> int32 Cast saturates).
struct Words {
  at::Tensor lo, hi;  // int32 [N]
};

Words SplitWords(const at::Tensor& x64) {  // x64: contiguous int64 [N]
  const at::Tensor w = x64.view(c10::kInt).view({-1, 2});
  return {w.select(1, 0).contiguous(), w.select(1, 1).contiguous()};
}
at::Tensor JoinWords(const Words& r, c10::IntArrayRef sizes, c10::DeviceIndex dev) {  // -> int64 of `sizes`
  at::Tensor res = NpuEmpty(sizes, c10::kLong, dev);
  const at::Tensor w = res.reshape({-1}).view(c10::kInt).view({-1, 2});  // (a 0-dim int64 cannot view as int32)
  w.select(1, 0).copy_(r.lo);
  w.select(1, 1).copy_(r.hi);
  return res;
}

Words ArgWords(const PwArg& a, c10::IntArrayRef shape, int64_t n, c10::DeviceIndex dev) {
  if (!a.tensor || IsCpuScalar(*a.tensor)) {
    const c10::Scalar s = a.tensor ? a.tensor->item() : *a.scalar;
    const int64_t v = s.isBoolean() ? (s.toBool() ? 1 : 0) : s.toLong();
    Words w{NpuEmpty({n}, c10::kInt, dev), NpuEmpty({n}, c10::kInt, dev)};
    w.lo.fill_(static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(v))));
    w.hi.fill_(static_cast<int32_t>(v >> 32));
    return w;
  }
  at::Tensor x = *a.tensor;
  if (x.scalar_type() != c10::kLong) x = x.to(c10::kLong);
  x = x.expand(shape).contiguous().reshape({-1});
  if (x.numel() == 1 && x.stride(0) != 1) x = x.clone(at::MemoryFormat::Contiguous);  // 1 element: stride 0
  return SplitWords(x);
}

at::Tensor ULt(const at::Tensor& a, const at::Tensor& b) {  // unsigned a < b on int32 words
  const c10::Scalar flip(static_cast<int64_t>(INT32_MIN));
  return a.add(flip).lt(b.add(flip));
}
at::Tensor Eq64(const Words& a, const Words& b) { return a.lo.eq(b.lo).logical_and(a.hi.eq(b.hi)); }
at::Tensor Lt64(const Words& a, const Words& b) {
  return a.hi.lt(b.hi).logical_or(a.hi.eq(b.hi).logical_and(ULt(a.lo, b.lo)));
}
Words Where64(const at::Tensor& c, const Words& a, const Words& b) { return {a.lo.where(c, b.lo), a.hi.where(c, b.hi)}; }
Words AddSub64(const Words& a, const Words& b, bool sub) {
  Words r;
  if (!sub) {
    r.lo = a.lo.add(b.lo);
    r.hi = a.hi.add(b.hi).add(ULt(r.lo, a.lo).to(c10::kInt));  // + carry
  } else {
    r.lo = a.lo.sub(b.lo);
    r.hi = a.hi.sub(b.hi).sub(ULt(a.lo, b.lo).to(c10::kInt));  // - borrow
  }
  return r;
}

// a * b mod 2^64 from the words: lo(a) * lo(b) in full from 16-bit limbs (each limb product fits
// 32 bits; the int32 kernels wrap, so the uint32 bits are exact), plus the cross products' low
// words into the high word.
Words Mul64(const Words& a, const Words& b) {
  const int64_t kLow16 = 0xffff;
  auto lo16 = [&](const at::Tensor& v) { return at::bitwise_and(v, kLow16); };
  auto hi16 = [&](const at::Tensor& v) { return at::bitwise_and(at::bitwise_right_shift(v, 16), kLow16); };
  const at::Tensor a0 = lo16(a.lo), a1 = hi16(a.lo), b0 = lo16(b.lo), b1 = hi16(b.lo);
  const at::Tensor p00 = at::mul(a0, b0), p11 = at::mul(a1, b1);
  const at::Tensor p01 = at::mul(a0, b1);
  const at::Tensor mid = at::add(p01, at::mul(a1, b0));
  const at::Tensor mid_carry = ULt(mid, p01).to(c10::kInt);  // mid overflowed: 2^32 * 2^16 into hi
  Words r;
  r.lo = at::add(p00, at::bitwise_left_shift(mid, 16));
  const at::Tensor lo_carry = ULt(r.lo, p00).to(c10::kInt);
  at::Tensor hi = at::add(p11, hi16(mid));
  hi = at::add(hi, at::bitwise_left_shift(mid_carry, 16));
  hi = at::add(hi, lo_carry);
  hi = at::add(hi, at::mul(a.hi, b.lo));
  r.hi = at::add(hi, at::mul(a.lo, b.hi));
  return r;
}

// The binary ops the fused int64 kernel (ascendc_kernels/int64_ops.h) takes: one pass over the
// operands instead of a kernel launch per word operation. nullopt for the others.
std::optional<npu_kernels::I64Op> FusedInt64Op(const PwOp& op) {
  using npu_kernels::I64Op;
  switch (op.op) {
    case EwOp::kAdd:
      if (op.si[0] == 1) return I64Op::kAdd;
      if (op.si[0] == -1) return I64Op::kSub;
      return std::nullopt;
    case EwOp::kMul: return I64Op::kMul;
    case EwOp::kEq: return I64Op::kEq;
    case EwOp::kNe: return I64Op::kNe;
    case EwOp::kLt: return I64Op::kLt;
    case EwOp::kLe: return I64Op::kLe;
    case EwOp::kGt: return I64Op::kGt;
    case EwOp::kGe: return I64Op::kGe;
    case EwOp::kMaximum: case EwOp::kClampMinT: return I64Op::kMax;
    case EwOp::kMinimum: case EwOp::kClampMaxT: return I64Op::kMin;
    default: return std::nullopt;
  }
}

// One operand of the fused kernel: an int64 [n] tensor, or a scalar's two words.
struct I64Operand {
  at::Tensor t;
  bool scalar = false;
  int32_t lo = 0, hi = 0;
};
I64Operand FusedOperand(const PwArg& a, c10::IntArrayRef shape) {
  I64Operand r;
  if (!a.tensor || IsCpuScalar(*a.tensor)) {
    const c10::Scalar s = a.tensor ? a.tensor->item() : *a.scalar;
    const int64_t v = s.isBoolean() ? (s.toBool() ? 1 : 0) : s.toLong();
    r.scalar = true;
    r.lo = static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(v)));
    r.hi = static_cast<int32_t>(v >> 32);
    return r;
  }
  at::Tensor x = *a.tensor;
  if (x.scalar_type() != c10::kLong) x = x.to(c10::kLong);
  r.t = x.expand(shape).contiguous().reshape({-1});
  return r;
}

void FusedInt64(npu_kernels::I64Op k, std::initializer_list<PwArg> args, const std::vector<int64_t>& shape,
                const at::Tensor& out, c10::DeviceIndex dev) {
  const I64Operand a = FusedOperand(*args.begin(), shape), b = FusedOperand(*(args.begin() + 1), shape);
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  const bool cmp = npu_kernels::I64OpIsCompare(k);
  at::Tensor res = NpuEmpty({n}, cmp ? c10::kBool : c10::kLong, dev);
  if (n > 0) {
    auto t = npu_kernels::int64_tiling(uint64_t(n), k, SocInfoFor(dev));
    t.a_scalar = a.scalar;
    t.b_scalar = b.scalar;
    t.a_lo = a.lo;
    t.a_hi = a.hi;
    t.b_lo = b.lo;
    t.b_hi = b.hi;
    void* none = nullptr;
    LaunchKernel(KernelLaunch{"int64_binary_kernel", ascendc_host::CoreType::AIV, t.block_dim, dev},
                 &int64_binary_kernel, t, a.scalar ? none : a.t.data_ptr(), b.scalar ? none : b.t.data_ptr(),
                 res.data_ptr());
  }
  out.copy_(res.view(shape));
}

bool Int64Exact(const PwOp& op, std::initializer_list<PwArg> args, const std::vector<int64_t>& shape,
                const at::Tensor& out, c10::DeviceIndex dev) {
  const EwOp k = op.op;
  if (const auto fused = FusedInt64Op(op); fused && args.size() == 2) {
    FusedInt64(*fused, args, shape, out, dev);
    return true;
  }
  const bool cmp = k == EwOp::kEq || k == EwOp::kNe || k == EwOp::kLt || k == EwOp::kLe || k == EwOp::kGt ||
                   k == EwOp::kGe;
  const bool supported = cmp || k == EwOp::kAdd || k == EwOp::kMul || k == EwOp::kMaximum ||
                         k == EwOp::kMinimum || k == EwOp::kClampMinT || k == EwOp::kClampMaxT ||
                         k == EwOp::kClampT || k == EwOp::kWhere || k == EwOp::kNeg || k == EwOp::kAbs ||
                         k == EwOp::kRelu || k == EwOp::kClamp || k == EwOp::kBitAnd || k == EwOp::kBitOr ||
                         k == EwOp::kBitXor || k == EwOp::kBitNot;
  if (!supported) return false;
  if (op.si[2] == 1 && (k == EwOp::kBitAnd || k == EwOp::kBitOr || k == EwOp::kBitXor || k == EwOp::kBitNot))
    return false;  // the kernel's raw bitwise path takes int64 bit for bit
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  std::vector<const PwArg*> a;
  for (const auto& x : args) a.push_back(&x);
  auto W = [&](size_t i) { return ArgWords(*a[i], shape, n, dev); };
  auto Const = [&](int64_t v) {
    c10::Scalar s(v);
    return ArgWords(PwArg{"", nullptr, &s}, shape, n, dev);
  };
  at::Tensor mask;  // bool result
  Words r;
  switch (k) {
    case EwOp::kEq: mask = Eq64(W(0), W(1)); break;
    case EwOp::kNe: mask = Eq64(W(0), W(1)).logical_not(); break;
    case EwOp::kLt: mask = Lt64(W(0), W(1)); break;
    case EwOp::kGt: mask = Lt64(W(1), W(0)); break;
    case EwOp::kLe: mask = Lt64(W(1), W(0)).logical_not(); break;
    case EwOp::kGe: mask = Lt64(W(0), W(1)).logical_not(); break;
    case EwOp::kAdd:
      if (op.si[0] == 1 || op.si[0] == -1) r = AddSub64(W(0), W(1), op.si[0] == -1);
      else r = AddSub64(W(0), Mul64(W(1), Const(op.si[0])), false);
      break;
    case EwOp::kMul: r = Mul64(W(0), W(1)); break;
    case EwOp::kMaximum: case EwOp::kClampMinT: {
      const Words x = W(0), y = W(1);
      r = Where64(Lt64(x, y), y, x);
      break;
    }
    case EwOp::kMinimum: case EwOp::kClampMaxT: {
      const Words x = W(0), y = W(1);
      r = Where64(Lt64(y, x), y, x);
      break;
    }
    case EwOp::kClampT: {
      const Words x = W(0), lo = W(1), hi = W(2);
      r = Where64(Lt64(x, lo), lo, x);
      r = Where64(Lt64(hi, r), hi, r);
      break;
    }
    case EwOp::kClamp: {
      r = W(0);
      if (op.si[0] & 1) {
        const Words lo = Const(op.sl[0]);
        r = Where64(Lt64(r, lo), lo, r);
      }
      if (op.si[0] & 2) {
        const Words hi = Const(op.sl[1]);
        r = Where64(Lt64(hi, r), hi, r);
      }
      break;
    }
    case EwOp::kWhere: {
      at::Tensor c = *a[0]->tensor;
      if (c.scalar_type() != c10::kBool) c = c.to(c10::kBool);
      c = c.expand(shape).contiguous().reshape({-1});
      r = Where64(c, W(1), W(2));
      break;
    }
    case EwOp::kNeg: r = AddSub64(Const(0), W(0), true); break;
    case EwOp::kBitAnd: case EwOp::kBitOr: case EwOp::kBitXor: {  // word by word
      const Words x = W(0), y = W(1);
      auto f = [k](const at::Tensor& u, const at::Tensor& v) {
        return k == EwOp::kBitAnd ? at::bitwise_and(u, v) : k == EwOp::kBitOr ? at::bitwise_or(u, v) : at::bitwise_xor(u, v);
      };
      r = {f(x.lo, y.lo), f(x.hi, y.hi)};
      break;
    }
    case EwOp::kBitNot: {
      const Words x = W(0);
      r = {at::bitwise_not(x.lo), at::bitwise_not(x.hi)};
      break;
    }
    case EwOp::kAbs: {
      const Words x = W(0), z = Const(0);
      r = Where64(Lt64(x, z), AddSub64(z, x, true), x);
      break;
    }
    case EwOp::kRelu: {
      const Words x = W(0), z = Const(0);
      r = Where64(Lt64(x, z), z, x);
      break;
    }
    default: return false;
  }
  const at::Tensor res = mask.defined() ? mask : JoinWords(r, {n}, dev);
  out.copy_(res.view(shape));
  return true;
}

}  // namespace

c10::ScalarType CommonDtype(std::initializer_list<PwArg> args) {
  at::native::ResultTypeState st;
  for (const auto& a : args) {
    if (a.tensor) st = at::native::update_result_type_state(*a.tensor, st);
    else if (a.scalar) st = at::native::update_result_type_state(*a.scalar, st);
  }
  return at::native::result_type(st);
}

at::Tensor Pointwise(const PwOp& op, std::initializer_list<PwArg> args, PwTarget target) {
  const npu_kernels::EwOpInfo info = npu_kernels::GetEwOpInfo(op.op);
  const char* name = op.name;
  // ---- devices (a CPU 0-dim tensor is a scalar, as in PyTorch's device kernels)
  std::vector<NamedTensor> devs;
  for (const auto& a : args) {
    if (!a.tensor) continue;
    TORCH_CHECK(a.tensor->defined(), name, ": argument '", a.name, "' is an undefined tensor");
    if (!IsCpuScalar(*a.tensor)) devs.push_back({a.name, a.tensor});
  }
  if (target.kind == PwTarget::kOut) devs.push_back({"out", target.tensor});
  if (target.kind == PwTarget::kInPlace && IsCpuScalar(*target.tensor)) devs.push_back({"self", target.tensor});
  const c10::DeviceIndex dev = CheckDevices(name, devs);

  // ---- dtypes
  const c10::ScalarType common = CommonDtype(args);
  c10::ScalarType result = common;
  if (op.result == PwResult::kPromoteFloat && c10::isIntegralType(common, /*includeBool=*/true))
    result = c10::typeMetaToScalarType(c10::get_default_dtype());
  // Bool values of max / min / where / clamp compute as uint8 0 / 1 (the result converts back).
  const bool bool_as_u8 = result == c10::kBool && op.int_ok && !info.bool_out && op.result != PwResult::kBool;
  const c10::ScalarType compute = bool_as_u8 ? c10::kByte : op.result == PwResult::kBool ? common : result;
  const char* first_tensor = "self";
  for (const auto& a : args)
    if (a.tensor) {
      first_tensor = a.name;
      break;
    }
  // The argument a dtype error names: the first tensor of the rejected compute dtype (not, say,
  // where's bool condition).
  const char* culprit = first_tensor;
  for (const auto& a : args)
    if (a.tensor && a.tensor->scalar_type() == compute) {
      culprit = a.name;
      break;
    }
  TORCH_CHECK_NOT_IMPLEMENTED(!(op.bool_error && common == c10::kBool), op.bool_error);
  if (op.float_only && !IsNpuFloat(compute)) {
    const char* bad = first_tensor;
    for (const auto& a : args)
      if (a.tensor && !IsNpuFloat(a.tensor->scalar_type())) {
        bad = a.name;
        break;
      }
    FailDtype(name, bad, compute, "Float, Half, BFloat16");
  }
  bool int_compute = IsNpuInt(compute);
  // uint8 / int8 / int16 values are exact in float, where a compare is one instruction (int32 lanes
  // order by a 16-bit limb key, ~12 instructions).
  if (int_compute && info.bool_out && c10::elementSize(compute) < 4) int_compute = false;
  if (int_compute && !op.int_ok) {
    if (op.result == PwResult::kBool || info.bool_out) {
      int_compute = false;  // logical ops only test != 0, which the float path keeps for any integer
    } else {
      FailDtype(name, culprit, compute, "Float, Half, BFloat16");
    }
  }
  const bool ok_compute = IsNpuFloat(compute) || IsNpuInt(compute) || (compute == c10::kBool && info.bool_out);
  if (!ok_compute)
    FailDtype(name, culprit, compute,
              op.int_ok ? "Float, Half, BFloat16, Byte, Char, Short, Int, Long" : "Float, Half, BFloat16");
  const c10::ScalarType natural = info.bool_out ? c10::kBool : result;
  c10::ScalarType out_dtype = natural;
  if (target.kind != PwTarget::kNew) {
    out_dtype = target.tensor->scalar_type();
    if (op.out_same_dtype && args.size() == 1)
      TORCH_CHECK(out_dtype == natural, name, ": Found dtype ", out_dtype, " but expected ", natural,
                  " (the output of this op must have its input's dtype)");
    TORCH_CHECK(c10::canCast(natural, out_dtype), name, ": result type ", natural,
                " can't be cast to the desired output type ", out_dtype);
  }

  // ---- shape
  std::vector<int64_t> shape;
  const char* shape_from = nullptr;
  for (const auto& a : args) {
    if (!a.tensor || IsCpuScalar(*a.tensor)) continue;
    const at::Tensor& x = *a.tensor;
    if (!shape_from) {
      shape.assign(x.sizes().begin(), x.sizes().end());
      shape_from = a.name;
      continue;
    }
    const int64_t nd = std::max<int64_t>(static_cast<int64_t>(shape.size()), x.dim());
    std::vector<int64_t> s(nd);
    for (int64_t k = 0; k < nd; ++k) {
      const int64_t i1 = k - (nd - static_cast<int64_t>(shape.size())), i2 = k - (nd - x.dim());
      const int64_t a1 = i1 >= 0 ? shape[i1] : 1, a2 = i2 >= 0 ? x.size(i2) : 1;
      TORCH_CHECK(a1 == a2 || a1 == 1 || a2 == 1, name, ": the shapes of '", shape_from, "' and '", a.name, "' (",
                  ShapeStr(x.sizes()), ") cannot be broadcast together: size ", a1, " vs ", a2, " at dimension ",
                  k - nd, " (broadcast shape so far ", ShapeStr(shape), ")");
      s[k] = a1 == 1 ? a2 : a1;
    }
    shape = std::move(s);
  }

  // ---- output
  at::Tensor out;
  if (target.kind == PwTarget::kInPlace) {
    out = *target.tensor;
    TORCH_CHECK(out.sizes() == c10::IntArrayRef(shape), name, ": output with shape ", ShapeStr(out.sizes()),
                " doesn't match the broadcast shape ", ShapeStr(shape));
  } else if (target.kind == PwTarget::kOut) {
    out = *target.tensor;
    at::native::resize_output(out, shape);
  } else {
    // Keep a shared dense layout (e.g. channels_last) like TensorIterator does.
    const at::Tensor* like = nullptr;
    bool same = true;
    for (const auto& a : args) {
      if (!a.tensor || IsCpuScalar(*a.tensor) || a.tensor->numel() <= 1) continue;
      if (a.tensor->sizes() != c10::IntArrayRef(shape) || !a.tensor->is_non_overlapping_and_dense()) {
        same = false;
        break;
      }
      if (!like) like = a.tensor;
      else same = same && like->strides() == a.tensor->strides();
    }
    if (same && like && !like->is_contiguous()) {
      c10::DeviceGuard guard(c10::Device(kNpu, dev));
      out = at::empty_strided(shape, like->strides(), like->options().dtype(out_dtype));
    } else {
      out = NpuEmpty(shape, out_dtype, dev);
    }
  }
  if (target.kind != PwTarget::kNew) {
    at::assert_no_internal_overlap(out);
    for (const auto& a : args)
      if (a.tensor && !IsCpuScalar(*a.tensor)) at::assert_no_partial_overlap(out, *a.tensor);
  }
  if (out.numel() == 0) return out;
  if (int_compute && compute == c10::kLong && Int64Exact(op, args, shape, out, dev)) return out;

  // ---- operands
  std::vector<Operand> in;
  size_t index = 0;
  for (const auto& a : args) {
    Operand o;
    // PyTorch keeps a host scalar in float only as the second operand (its mul / div / floor-div
    // kernels special-case that one); a first-operand scalar is converted like any 0-dim tensor.
    const bool keep_opmath = op.scalar_opmath && index++ == 1;
    if (a.tensor && !IsCpuScalar(*a.tensor)) {
      o.t = *a.tensor;
      if (!KernelReads(o.t.scalar_type(), int_compute)) o.t = o.t.to(compute);
      // A one-element operand of another dtype (a 0-dim tensor takes no part in promotion) is
      // converted to the compute dtype first, as PyTorch does: a 0-dim int8 -5 beside uint8 is 251,
      // a 0-dim float32 beside bfloat16 is rounded to bfloat16.
      if (o.t.numel() == 1 && o.t.scalar_type() != compute && o.t.scalar_type() != c10::kBool)
        o.t = o.t.to(compute);
      // An integer tensor beside a float16 / bfloat16 one is converted to that dtype first (PyTorch
      // computes on the common dtype's values: 28864 is 28928 in bfloat16); the kernel would read it
      // exactly into float (a quarter of int64 x bfloat16 products were an ulp off).
      if ((compute == c10::kHalf || compute == c10::kBFloat16) && c10::isIntegralType(o.t.scalar_type(), false))
        o.t = o.t.to(compute);
    } else {
      const c10::Scalar s = a.tensor ? a.tensor->item() : *a.scalar;
      double v = s.isBoolean() ? (s.toBool() ? 1.0 : 0.0) : s.toDouble();
      if (!keep_opmath) v = RoundTo(v, compute);
      o.f = v;
      o.i = s.isBoolean() ? (s.toBool() ? 1 : 0) : (s.isIntegral(false) ? s.toLong() : static_cast<int64_t>(v));
      if (IsNpuInt(compute) && !s.isFloatingPoint()) {
        o.i = WrapToDtype(o.i, compute);
        o.f = static_cast<double>(o.i);
      }
    }
    in.push_back(std::move(o));
  }
  // A float16 / bfloat16 / 8- to 32-bit integer result goes to an out= of another dtype through its own
  // dtype: PyTorch computes in the common dtype and casts that to the output (a float32 out of two
  // float16 gets float16 values, an int64 out of two int8 their wrapped int8 product).
  const bool round_first = out.scalar_type() != natural &&
                           (natural == c10::kHalf || natural == c10::kBFloat16 || natural == c10::kByte ||
                            natural == c10::kChar || natural == c10::kShort || natural == c10::kInt);
  if (!round_first && KernelWrites(out.scalar_type(), int_compute, info.bool_out)) {
    LaunchElementwise(op, out, std::move(in), int_compute, dev);
  } else {
    at::Tensor tmp = NpuEmpty(shape, info.bool_out ? c10::kBool : compute, dev);
    LaunchElementwise(op, tmp, std::move(in), int_compute, dev);
    out.copy_(tmp);
  }
  return out;
}

// ---------------------------------------------------------------- Cast
namespace {
// One cast_kernel launch: src and dst of one shape and one dense layout, dst without overlap.
void LaunchCast(const at::Tensor& src, const at::Tensor& dst, EwDType s, EwDType d) {
  if (src.numel() == 0) return;
  const c10::DeviceIndex dev = dst.device().index();
  const auto t = npu_kernels::cast_tiling(static_cast<uint64_t>(src.numel()), s, d, SocInfoFor(dev));
  KernelLaunch launch{"cast_kernel", ascendc_host::CoreType::AIV, t.block_dim, dev};
  launch.runs_on_2002 = true;  // plain DataCopy with aligned tails on 2002
  if (LogDebugEnabled()) launch.detail = DescribeForLog({{"self", &src}, {"out", &dst}});
  LaunchKernel(std::move(launch), &cast_kernel, t, src.data_ptr(), dst.data_ptr());
}
}  // namespace

bool NpuCastCopy(const at::Tensor& src, const at::Tensor& dst) {
  if (src.device() != dst.device() || src.device().type() != kNpu) return false;
  EwDType s{}, d{};
  if (!ToEwDType(src.scalar_type(), &s) || !ToEwDType(dst.scalar_type(), &d) ||
      !npu_kernels::cast_supported(s, d, SocInfoFor(src.device().index()).npu_arch))
    return false;
  const bool no_overlap = at::has_internal_overlap(dst) == at::MemOverlap::No;
  const bool same_dense = src.is_non_overlapping_and_dense() && dst.is_non_overlapping_and_dense() &&
                          src.strides() == dst.strides();
  if (src.sizes() == dst.sizes() && no_overlap && ((src.is_contiguous() && dst.is_contiguous()) || same_dense)) {
    LaunchCast(src, dst, s, d);
    return true;
  }
  // Other layouts (strided, broadcast, overlapping): move the values in their own dtype, cast densely.
  const at::Tensor dense = src.expand(dst.sizes()).contiguous();
  if (dst.is_contiguous() && no_overlap) {
    LaunchCast(dense, dst, s, d);
  } else {
    const at::Tensor cast = at::empty(dst.sizes(), dst.options().memory_format(c10::MemoryFormat::Contiguous));
    LaunchCast(dense, cast, s, d);
    dst.copy_(cast);
  }
  return true;
}

namespace {

// ---------------------------------------------------------------- op definitions
PwOp Def(const char* name, EwOp op, PwResult r = PwResult::kPromote, bool int_ok = false) {
  PwOp p;
  p.name = name;
  p.op = op;
  p.result = r;
  p.int_ok = int_ok;
  return p;
}

const c10::Scalar kOne(1);

void CheckAlpha(const char* name, const at::Tensor& self, const at::Tensor& other, const c10::Scalar& alpha) {
  const c10::ScalarType t = CommonDtype({{"self", &self}, {"other", &other}});
  if (c10::isIntegralType(t, /*includeBool=*/true))
    TORCH_CHECK(alpha.isIntegral(true), name, ": for integral input tensors, argument 'alpha' must not be a "
                "floating point number (got ", alpha.toDouble(), ")");
}

void CheckSubNotBool(const char* name, const at::Tensor& self, const at::Tensor& other) {
  TORCH_CHECK_NOT_IMPLEMENTED(self.scalar_type() != c10::kBool && other.scalar_type() != c10::kBool, name,
                              ": Subtraction, the `-` operator, with a bool tensor is not supported. If you are "
                              "trying to invert a mask, use the `~` or `logical_not()` operator instead.");
}

// add/sub with alpha: x0 + alpha * x1. Bool + bool is a logical or (PyTorch's bool add).
PwOp AddDef(const char* name, const at::Tensor& self, const at::Tensor& other, const c10::Scalar& alpha, bool sub) {
  CheckAlpha(name, self, other, alpha);
  if (sub) CheckSubNotBool(name, self, other);
  if (CommonDtype({{"self", &self}, {"other", &other}}) == c10::kBool) return Def(name, EwOp::kLogicalOr, PwResult::kPromote);
  PwOp p = Def(name, EwOp::kAdd, PwResult::kPromote, true);
  const double a = alpha.toDouble();
  p.sf[0] = static_cast<float>(sub ? -a : a);
  const int64_t ai = alpha.isIntegral(true) ? alpha.toLong() : 0;
  p.si[0] = static_cast<int32_t>(sub ? -ai : ai);
  return p;
}

// ---- complex64 arithmetic on the float pairs. Products (rotary embeddings: view_as_complex(x) *
// freqs_cis, and their backward, grad * conj(freqs)): (a + bi)(c + di) = (ac - bd) + (ad + bc)i, each part one mul
// and one addcmul of strided float views, rounded as the CPU's naive product; a real factor scales
// both parts in one mul. Operands: complex64 / float32 npu tensors and host scalars; anything else
// (complex128, half) keeps the dtype gate's CPU fallback.
bool ComplexFloatCase(const at::Tensor& a, const at::Tensor& b) {
  if (!a.is_complex() && !b.is_complex()) return false;
  if (at::result_type(a, b) != at::kComplexFloat) return false;
  auto ok = [](const at::Tensor& t) {
    return IsCpuScalar(t) || (t.device().type() == c10::DeviceType::PrivateUse1 &&
                               (t.scalar_type() == at::kComplexFloat || t.scalar_type() == at::kFloat));
  };
  return ok(a) && ok(b) && !(IsCpuScalar(a) && IsCpuScalar(b));
}

// Pairs (re, im) of float32 npu tensors (broadcast together) into a complex64 out (written after both
// are computed, so out may alias their sources).
void ComplexFromParts(const at::Tensor& re, const at::Tensor& im, const at::Tensor& out) {
  const auto shape = at::infer_size(re.sizes(), im.sizes());
  at::native::resize_output(out, shape);
  const at::Tensor o = at::view_as_real(out);
  o.select(-1, 0).copy_(re.expand(shape));
  o.select(-1, 1).copy_(im.expand(shape));
}

// out (complex64 npu, the broadcast shape) = a * b; out may be a or b (temporaries first).
void ComplexMulInto(const at::Tensor& a_in, const at::Tensor& b_in, const at::Tensor& out) {
  const at::Tensor o = at::view_as_real(out);
  auto complex_npu = [](const at::Tensor& t) { return t.is_complex() && !IsCpuScalar(t); };
  if (!complex_npu(a_in) && !complex_npu(b_in)) {
    // A real npu tensor times a complex host scalar (x * 1j).
    const bool a_host = IsCpuScalar(a_in);
    const at::Tensor& x = a_host ? b_in : a_in;
    const c10::complex<double> c = (a_host ? a_in : b_in).item().toComplexDouble();
    ComplexFromParts(at::mul(x, static_cast<double>(static_cast<float>(c.real()))),
                     at::mul(x, static_cast<double>(static_cast<float>(c.imag()))), out);
    return;
  }
  const bool swap = !complex_npu(a_in);  // a: a complex npu tensor
  const at::Tensor& a = swap ? b_in : a_in;
  const at::Tensor& b = swap ? a_in : b_in;
  const at::Tensor A = ComplexValuePairs(a);
  const at::Tensor ar = A.select(-1, 0), ai = A.select(-1, 1);
  at::Tensor re, im;
  if (IsCpuScalar(b)) {
    const c10::complex<double> c = b.item().toComplexDouble();
    // Rounded to complex64 first, as the CPU converts the scalar to the result dtype.
    const double cr = static_cast<float>(c.real()), ci = static_cast<float>(c.imag());
    if (ci == 0.0) {
      o.copy_(at::mul(A, cr));
      return;
    }
    re = at::mul(ar, cr).add_(ai, -ci);
    im = at::mul(ar, ci).add_(ai, cr);
  } else if (!b.is_complex()) {
    o.copy_(at::mul(A, b.unsqueeze(-1)));
    return;
  } else {
    const at::Tensor B = ComplexValuePairs(b);
    const at::Tensor br = B.select(-1, 0), bi = B.select(-1, 1);
    re = at::mul(ar, br).addcmul_(ai, bi, -1);
    im = at::mul(ar, bi).addcmul_(ai, br, 1);
  }
  ComplexFromParts(re, im, out);
}

std::vector<int64_t> BroadcastShape(const at::Tensor& a, const at::Tensor& b) {
  return at::infer_size(IsCpuScalar(a) ? c10::IntArrayRef{} : a.sizes(), IsCpuScalar(b) ? c10::IntArrayRef{} : b.sizes());
}

// Sums (a + alpha * b, alpha real) part by part: each part of the output is one add (or a copy /
// fill where an operand has no such part: a real tensor's imaginary part, a host scalar's parts).
struct ComplexPart {
  at::Tensor t;    // undefined: the value s
  double s = 0.0;
};
std::pair<ComplexPart, ComplexPart> SplitComplex(const at::Tensor& x) {
  if (IsCpuScalar(x)) {
    const c10::complex<double> c = x.item().toComplexDouble();
    return {{at::Tensor(), static_cast<float>(c.real())}, {at::Tensor(), static_cast<float>(c.imag())}};
  }
  if (!x.is_complex()) return {{x, 0.0}, {at::Tensor(), 0.0}};
  const at::Tensor p = ComplexValuePairs(x);
  return {{p.select(-1, 0), 0.0}, {p.select(-1, 1), 0.0}};
}
void WriteSum(const at::Tensor& dst, const ComplexPart& a, const ComplexPart& b, double alpha) {
  if (a.t.defined() && b.t.defined()) dst.copy_(at::add(a.t, b.t, alpha));
  else if (a.t.defined()) dst.copy_(b.s == 0.0 ? a.t : at::add(a.t, alpha * b.s));
  else if (b.t.defined()) dst.copy_(at::add(at::mul(b.t, alpha), a.s));
  else dst.fill_(a.s + alpha * b.s);
}
void ComplexAddInto(const at::Tensor& a, const at::Tensor& b, double alpha, const at::Tensor& out) {
  const auto pa = SplitComplex(a), pb = SplitComplex(b);
  // Both parts into temporaries before either is written (out may be a or b).
  at::Tensor re = NpuEmpty(out.sizes(), at::kFloat, out.device().index()), im = at::empty_like(re);
  WriteSum(re, pa.first, pb.first, alpha);
  WriteSum(im, pa.second, pb.second, alpha);
  ComplexFromParts(re, im, out);
}

// Bool + bool is a logical or with alpha * other: a zero (False) alpha leaves self, as the CPU's
// a + False * b (the logical or ignored alpha).
at::Tensor BoolAddOperand(const at::Tensor& self, const at::Tensor& other, const c10::Scalar& alpha) {
  if (self.scalar_type() == c10::kBool && other.scalar_type() == c10::kBool && alpha.toDouble() == 0)
    return at::zeros_like(other);
  return other;
}

// A complex64 binary op of self and other (ComplexFloatCase) into a new (*out undefined), given (*out)
// or in-place (out null: self) output; false when not that case (the op takes its usual path).
template <class Into>
bool ComplexBinary(const char* name, const at::Tensor& self, const at::Tensor& other, at::Tensor* out, Into&& into) {
  if (!ComplexFloatCase(self, other)) return false;
  const std::vector<int64_t> shape = BroadcastShape(self, other);
  if (!out) {
    if (self.scalar_type() != at::kComplexFloat) return false;
    TORCH_CHECK(shape == self.sizes().vec(), name, ": output with shape ", self.sizes(),
                " doesn't match the broadcast shape ", shape);
  } else if (out->defined()) {
    TORCH_CHECK(c10::canCast(at::kComplexFloat, out->scalar_type()), name, ": result type ComplexFloat can't be cast to ",
                "the desired output type ", out->scalar_type());
    if (out->scalar_type() != at::kComplexFloat || out->device().type() != c10::DeviceType::PrivateUse1) return false;
    at::native::resize_output(*out, shape);
  } else {
    *out = NpuEmpty(shape, at::kComplexFloat, (IsCpuScalar(self) ? other : self).device().index());
  }
  into(out ? *out : self);
  return true;
}

// self + sign * alpha * other of complex64 values (alpha real).
bool ComplexAdd(const char* name, const at::Tensor& self, const at::Tensor& other, const c10::Scalar& alpha,
                double sign, at::Tensor* out) {
  if (sign < 0 && ComplexFloatCase(self, other)) CheckSubNotBool(name, self, other);
  return !alpha.isComplex() && ComplexBinary(name, self, other, out, [&](const at::Tensor& o) {
    ComplexAddInto(self, other, sign * alpha.toDouble(), o);
  });
}
bool ComplexMul(const char* name, const at::Tensor& self, const at::Tensor& other, at::Tensor* out) {
  return ComplexBinary(name, self, other, out, [&](const at::Tensor& o) { ComplexMulInto(self, other, o); });
}

// A complex64 operand as a complex64 npu tensor: a host scalar becomes a 0-dim npu tensor (rounded to
// complex64 first, as the CPU converts it to the result dtype), a float tensor gets a zero imaginary part.
at::Tensor AsNpuComplex64(const at::Tensor& t, c10::DeviceIndex device) {
  if (IsCpuScalar(t)) {
    const c10::complex<double> c = t.item().toComplexDouble();
    return at::scalar_tensor(c10::complex<float>(static_cast<float>(c.real()), static_cast<float>(c.imag())),
                             at::TensorOptions().dtype(at::kComplexFloat))
        .to(c10::Device(kNpu, device));
  }
  return t.is_complex() ? t : at::complex(t, at::zeros_like(t));
}

// out = a / b of complex64 values (ComplexFloatCase); out may be a or b (temporaries first). The
// CPU's algorithm (c10::complex, numpy's; a real divisor or scalar is the complex c + 0i), step by step
// in float: with c + di the divisor and |c| >= |d|, rat = d / c, scl = 1 / (c + d rat),
// re = (a + b rat) scl, im = (b - a rat) scl; otherwise rat = c / d, scl = 1 / (d + c rat),
// re = (a rat + b) scl, im = (b rat - a) scl; a zero divisor gives (a / |c|, b / |d|): inf or NaN.
void ComplexDivInto(const at::Tensor& a_in, const at::Tensor& b_in, const at::Tensor& out) {
  const c10::DeviceIndex dev = out.device().index();
  const at::Tensor A = ComplexValuePairs(AsNpuComplex64(a_in, dev)), B = ComplexValuePairs(AsNpuComplex64(b_in, dev));
  const at::Tensor a = A.select(-1, 0), b = A.select(-1, 1), c = B.select(-1, 0), d = B.select(-1, 1);
  const at::Tensor abs_c = at::abs(c), abs_d = at::abs(d);
  const at::Tensor ge = at::ge(abs_c, abs_d);
  const at::Tensor big = at::where(ge, c, d), small = at::where(ge, d, c);
  const at::Tensor rat = at::div(small, big);
  const at::Tensor scl = at::reciprocal(at::addcmul(big, small, rat));
  // ge: a + b rat, b - a rat; else: b + a rat (= a rat + b), b rat - a
  const at::Tensor p = at::where(ge, a, b), q = at::where(ge, b, a);
  at::Tensor re = at::addcmul(p, q, rat).mul_(scl);
  at::Tensor im = at::where(ge, at::addcmul(b, a, rat, -1), at::mul(b, rat).sub_(a)).mul_(scl);
  const at::Tensor zero = at::logical_and(at::eq(abs_c, 0), at::eq(abs_d, 0));
  re = at::where(zero, at::div(a, abs_c), re);
  im = at::where(zero, at::div(b, abs_d), im);
  ComplexFromParts(re, im, out);
}

// eq / ne of complex64 values (ComplexFloatCase): both parts equal.
at::Tensor ComplexEqual(const at::Tensor& a, const at::Tensor& b, bool ne) {
  const auto pa = SplitComplex(a), pb = SplitComplex(b);
  at::Tensor r;
  bool all_false = false;
  for (const auto& [x, y] : {std::pair(pa.first, pb.first), std::pair(pa.second, pb.second)}) {
    at::Tensor e;
    if (x.t.defined() && y.t.defined()) e = at::eq(x.t, y.t);
    else if (x.t.defined()) e = at::eq(x.t, y.s);
    else if (y.t.defined()) e = at::eq(y.t, x.s);
    else all_false |= x.s != y.s;  // two constants: equal parts decide nothing
    if (e.defined()) r = r.defined() ? at::logical_and(r, e) : e;
  }
  if (all_false) r = at::zeros(BroadcastShape(a, b), r.options());
  return ne ? at::logical_not(r) : r;
}

// A result computed apart from Pointwise (in float, or by the CPU fallback) delivered like Pointwise
// would: a new tensor of dtype `common`, or copied into out= / in place after the same checks.
at::Tensor DeliverResult(const char* name, const at::Tensor& r, c10::ScalarType common, PwTarget target) {
  if (target.kind == PwTarget::kNew) return r.to(common);
  TORCH_CHECK(c10::canCast(common, target.tensor->scalar_type()), name, ": result type ", common,
              " can't be cast to the desired output type ", target.tensor->scalar_type());
  if (target.kind == PwTarget::kOut) {
    at::native::resize_output(*target.tensor, r.sizes());
  } else {
    TORCH_CHECK(target.tensor->sizes() == r.sizes(), name, ": output with shape ", ShapeStr(target.tensor->sizes()),
                " doesn't match the broadcast shape ", ShapeStr(r.sizes()));
  }
  target.tensor->copy_(r);
  return *target.tensor;
}

// Unary complex64 math on the float pairs x + iy (undefined for other ops: their usual path):
//   exp:        e^x (cos y + i sin y)        (y = 0 keeps a zero imaginary part: exp(inf) = inf; C99's
//               values for an infinite x with a non-finite y)
//   log:        log |z| + i atan2(y, x)
//   reciprocal: 1 / z by ComplexDivInto (the CPU computes it as that division)
//   sgn:        z / |z|, 0 at 0
//   sqrt:       the principal root: t = sqrt((|x| + |z|) / 2); (t, y / 2t) for x >= 0, (|y| / 2t, +-t)
//               otherwise, the sign of y; (inf, y) for an infinite y, (0, y) at 0 (C99's csqrt)
at::Tensor ComplexUnary(c10::string_view name, const at::Tensor& z) {
  if (!IsNpuComplex64(z)) return {};
  const at::Tensor P = ComplexValuePairs(z);
  const at::Tensor x = P.select(-1, 0), y = P.select(-1, 1);
  at::Tensor re, im;
  if (name == "exp") {
    // e^x overflows float from x > 88.72 while e^x cos y may not: there e^(x - 88) cos y e^88.
    const at::Tensor big = at::gt(x, 88.0f);
    const at::Tensor m = at::exp(at::where(big, at::sub(x, 88.0), x));
    const at::Tensor scale = at::where(big, std::exp(88.0), 1.0);
    re = at::mul(m, at::cos(y)).mul_(scale);
    im = at::where(at::eq(y, 0), y, at::mul(m, at::sin(y)).mul_(scale));
    // C99's cexp of an infinite x and a non-finite y: (inf, NaN) for +inf, (0, +-0) for -inf.
    const at::Tensor edge = at::logical_and(at::isinf(x), at::logical_not(at::isfinite(y)));
    const at::Tensor pos = at::gt(x, 0);
    re = at::where(edge, at::where(pos, std::numeric_limits<double>::infinity(), 0.0), re);
    im = at::where(edge, at::where(pos, at::full_like(y, NAN), at::copysign(at::zeros_like(y), y)), im);
  } else if (name == "log") {
    re = at::log(at::hypot(x, y));
    im = at::atan2(y, x);
  } else if (name == "reciprocal") {
    at::Tensor r = NpuEmpty(z.sizes(), at::kComplexFloat, z.device().index());
    ComplexDivInto(at::scalar_tensor(1.0), z, r);
    return r;
  } else if (name == "sgn") {
    const at::Tensor m = at::hypot(x, y);
    const at::Tensor zero = at::eq(m, 0);
    re = at::div(x, m).masked_fill_(zero, 0);
    im = at::div(y, m).masked_fill_(zero, 0);
  } else if (name == "sqrt") {
    const at::Tensor t = at::sqrt(at::hypot(x, y).mul_(0.5).add_(at::abs(x), 0.5));  // halves: no overflow
    const at::Tensor q = at::where(at::eq(t, 0), y, at::div(y, at::mul(t, 2)));
    const at::Tensor neg = at::lt(x, 0);
    const at::Tensor inf_y = at::isinf(y);  // sqrt(x + i inf) = inf + i inf for every x (C99)
    re = at::where(neg, at::abs(q), t).masked_fill_(inf_y, std::numeric_limits<float>::infinity());
    im = at::where(inf_y, y, at::where(neg, at::copysign(t, y), q));
  } else {
    return {};
  }
  return at::complex(re, im);
}

// z ** e of complex64 z and a real exponent: z * z for 2, else polar(|z|^e, e theta).
at::Tensor ComplexPowScalar(const at::Tensor& z, double e) {
  if (e == 2.0) {
    at::Tensor out = NpuEmpty(z.sizes(), at::kComplexFloat, z.device().index());
    ComplexMulInto(z, z, out);
    return out;
  }
  if (e == 1.0) return z.resolve_conj().resolve_neg().clone();
  if (e == 0.0) return at::ones(z.sizes(), z.options());
  const at::Tensor P = ComplexValuePairs(z);
  const at::Tensor x = P.select(-1, 0), y = P.select(-1, 1);
  return at::polar(at::pow(at::hypot(x, y), e), at::atan2(y, x).mul_(e));
}

at::Tensor add_Tensor(const at::Tensor& self, const at::Tensor& other_in, const c10::Scalar& alpha) {
  if (at::Tensor out; ComplexAdd("add", self, other_in, alpha, 1.0, &out)) return out;
  const at::Tensor other = BoolAddOperand(self, other_in, alpha);
  return Pointwise(AddDef("add", self, other, alpha, false), {{"self", &self}, {"other", &other}});
}
at::Tensor& add__Tensor(at::Tensor& self, const at::Tensor& other_in, const c10::Scalar& alpha) {
  if (ComplexAdd("add_", self, other_in, alpha, 1.0, nullptr)) return self;
  const at::Tensor other = BoolAddOperand(self, other_in, alpha);
  Pointwise(AddDef("add_", self, other, alpha, false), {{"self", &self}, {"other", &other}}, PwTarget::InPlace(self));
  return self;
}
at::Tensor& add_out(const at::Tensor& self, const at::Tensor& other_in, const c10::Scalar& alpha, at::Tensor& out) {
  if (ComplexAdd("add.out", self, other_in, alpha, 1.0, &out)) return out;
  const at::Tensor other = BoolAddOperand(self, other_in, alpha);
  Pointwise(AddDef("add.out", self, other, alpha, false), {{"self", &self}, {"other", &other}}, PwTarget::Out(out));
  return out;
}
at::Tensor sub_Tensor(const at::Tensor& self, const at::Tensor& other, const c10::Scalar& alpha) {
  if (at::Tensor out; ComplexAdd("sub", self, other, alpha, -1.0, &out)) return out;
  return Pointwise(AddDef("sub", self, other, alpha, true), {{"self", &self}, {"other", &other}});
}
at::Tensor& sub__Tensor(at::Tensor& self, const at::Tensor& other, const c10::Scalar& alpha) {
  if (ComplexAdd("sub_", self, other, alpha, -1.0, nullptr)) return self;
  Pointwise(AddDef("sub_", self, other, alpha, true), {{"self", &self}, {"other", &other}}, PwTarget::InPlace(self));
  return self;
}
at::Tensor& sub_out(const at::Tensor& self, const at::Tensor& other, const c10::Scalar& alpha, at::Tensor& out) {
  if (ComplexAdd("sub.out", self, other, alpha, -1.0, &out)) return out;
  Pointwise(AddDef("sub.out", self, other, alpha, true), {{"self", &self}, {"other", &other}}, PwTarget::Out(out));
  return out;
}
// rsub(self, other, alpha) = other - alpha * self
at::Tensor rsub_Tensor(const at::Tensor& self, const at::Tensor& other, const c10::Scalar& alpha) {
  return Pointwise(AddDef("rsub", other, self, alpha, true), {{"other", &other}, {"self", &self}});
}

PwOp MulDef(const char* name, const at::Tensor& self, const at::Tensor& other) {
  if (CommonDtype({{"self", &self}, {"other", &other}}) == c10::kBool) return Def(name, EwOp::kLogicalAnd);
  PwOp p = Def(name, EwOp::kMul, PwResult::kPromote, true);
  p.scalar_opmath = true;
  return p;
}
at::Tensor mul_Tensor(const at::Tensor& self, const at::Tensor& other) {
  if (at::Tensor out; ComplexMul("mul", self, other, &out)) return out;
  return Pointwise(MulDef("mul", self, other), {{"self", &self}, {"other", &other}});
}
at::Tensor& mul__Tensor(at::Tensor& self, const at::Tensor& other) {
  if (ComplexMul("mul_", self, other, nullptr)) return self;
  Pointwise(MulDef("mul_", self, other), {{"self", &self}, {"other", &other}}, PwTarget::InPlace(self));
  return self;
}
at::Tensor& mul_out(const at::Tensor& self, const at::Tensor& other, at::Tensor& out) {
  if (ComplexMul("mul.out", self, other, &out)) return out;
  Pointwise(MulDef("mul.out", self, other), {{"self", &self}, {"other", &other}}, PwTarget::Out(out));
  return out;
}

PwOp DivDef(const char* name, std::optional<c10::string_view> mode) {
  if (!mode.has_value()) {
    PwOp p = Def(name, EwOp::kDiv, PwResult::kPromoteFloat);
    p.scalar_opmath = true;
    return p;
  }
  EwOp op;
  if (*mode == "trunc") op = EwOp::kDivTrunc;
  else if (*mode == "floor") op = EwOp::kDivFloor;
  else TORCH_CHECK(false, name, ": rounding_mode must be None, 'trunc' or 'floor', got '", std::string(*mode), "'");
  // Integer inputs are divided in float: exact while |values| < 2^24. A host scalar divisor keeps
  // float precision, as the CPU's floor / trunc kernels take it (DivRun marks that case for trunc).
  PwOp p = Def(name, op, PwResult::kPromote);
  p.scalar_opmath = true;
  return p;
}
// Integer division (floor / trunc, remainder, fmod) in float: whether every value lies within +-2^24,
// where the float path is exact (the rounded quotient's error stays below 1/|b|; else the caller takes
// the CPU fallback), and a zero divisor raises
// ZeroDivisionError as on the CPU (the float path would give a silently wrong quotient). A wrapped
// host scalar is checked on the host; the device operands give flags, read back once eagerly. Inside
// an npu graph nothing is read back: both become device checks, and a value beyond 2^24 raises at
// the next sync instead of falling back.
bool IntDivFitsFloat(const char* name, const at::Tensor& self, const at::Tensor& other) {
  if (self.numel() == 0 || other.numel() == 0) return true;  // an empty result divides nothing
  const int64_t lim = int64_t(1) << 24;
  bool host_beyond = false;  // a wrapped scalar operand beyond 2^24
  at::Tensor zero, beyond;   // device flags (0-dim bool)
  for (const at::Tensor* t : {&self, &other}) {
    const bool wide = c10::elementSize(t->scalar_type()) >= 4;  // bool, 8 / 16-bit values always fit
    if (t->device().is_cpu()) {
      if (t == &other) TORCH_CHECK(!other.eq(0).any().item<bool>(), "ZeroDivisionError");
      host_beyond = host_beyond || (wide && t->abs().max().item<int64_t>() >= lim);
      continue;
    }
    if (t == &other) zero = at::eq(other, 0).any();
    if (wide) {
      const at::Tensor o = at::logical_or(at::ge(*t, lim), at::le(*t, -lim)).any();
      beyond = beyond.defined() ? at::logical_or(beyond, o) : o;
    }
  }
  const at::Tensor& dev = self.device().is_cpu() ? other : self;
  if (CurrentRuntimeStream(dev.device().index()).capturing()) {
    const std::string msg = c10::str(name, ": integer values beyond +-2^24 are divided exactly only outside npu ",
                                     "graphs (eagerly they take the CPU fallback)");
    TORCH_CHECK(!host_beyond, msg);
    CheckNoneSet({{zero, "ZeroDivisionError"}, {beyond, msg}});
    return true;
  }
  at::Tensor code;  // bit 0: a value beyond 2^24; bit 1: a zero divisor
  if (beyond.defined()) code = beyond.to(c10::kLong);
  if (zero.defined()) {
    const at::Tensor z = at::mul(zero.to(c10::kLong), 2);
    code = code.defined() ? at::add(code, z) : z;
  }
  const int64_t c = code.defined() ? code.item<int64_t>() : 0;
  TORCH_CHECK(!(c & 2), "ZeroDivisionError");
  return !host_beyond && !(c & 1);
}


// An integer op computed in float (floor / trunc division, remainder, fmod) still sees its operands
// as the common integer dtype holds them: a one-element operand of another dtype (a host scalar or
// a 0-dim tensor) is converted first, as PyTorch does (uint8 x // -2 divides by 254).
at::Tensor AsCommon(const at::Tensor& t, c10::ScalarType common) {
  return t.numel() == 1 && t.scalar_type() != common ? t.to(common) : t;
}

// Integer division goes through the float kernel (the vector unit has no integer Div).
at::Tensor DivRun(const char* name, const at::Tensor& self_in, const at::Tensor& other_in,
                  std::optional<c10::string_view> mode, PwTarget target) {
  if (!mode.has_value() && ComplexFloatCase(self_in, other_in)) {
    at::Tensor out = target.kind == PwTarget::kOut ? *target.tensor : at::Tensor();
    if (ComplexBinary(name, self_in, other_in, target.kind == PwTarget::kInPlace ? nullptr : &out,
                      [&](const at::Tensor& o) { ComplexDivInto(self_in, other_in, o); }))
      return target.kind == PwTarget::kInPlace ? *target.tensor : out;
  }
  PwOp p = DivDef(name, mode);
  const c10::ScalarType common = CommonDtype({{"self", &self_in}, {"other", &other_in}});
  const bool int_mode = mode.has_value() && IsNpuInt(common);
  const at::Tensor self = int_mode ? AsCommon(self_in, common) : self_in;
  const at::Tensor other = int_mode ? AsCommon(other_in, common) : other_in;
  if (int_mode) {
    // Integers: the quotient is rounded in float and cast back: exact while |values| < 2^24. Larger
    // values are divided by the CPU fallback (a number, not a silently wrong one); a zero divisor
    // raises ZeroDivisionError as on the CPU.
    at::Tensor r;
    if (IntDivFitsFloat(name, self, other)) {  // (8 / 16-bit values always fit)
      PwOp f = p;
      f.result = PwResult::kPromoteFloat;
      r = Pointwise(f, {{"self", &self}, {"other", &other}});
    } else {
      r = CallCpuFallback("aten::div", "Tensor_mode", {self, other, std::string(*mode)}).back().toTensor();
    }
    return DeliverResult(name, r, common, target);
  }
  // trunc(a / b) of float16 / bfloat16: the CPU rounds the quotient to the dtype before truncating,
  // except with a host scalar divisor, whose kernel divides in float and truncates that (si[0] = 1).
  if (p.op == EwOp::kDivTrunc && IsCpuScalar(other)) p.si[0] = 1;
  return Pointwise(p, {{"self", &self}, {"other", &other}}, target);
}

// remainder (Python's %) and fmod: the kernel's exact integer quotient and a remainder rounded once,
// bit-identical to the CPU; float quotients of 2^24 and more are redone exactly in the kernel (no read
// back). Integers are computed in float while values lie within +-2^24 (one flag read), otherwise
// the CPU fallback; bool and float64 take the fallback too.
at::Tensor RemRun(const char* name, EwOp op, const at::Tensor& self_in, const at::Tensor& other_in,
                  PwTarget target) {
  const bool rem = op == EwOp::kRemainder;
  const c10::ScalarType common = CommonDtype({{"self", &self_in}, {"other", &other_in}});
  const bool is_int = IsNpuInt(common);
  const at::Tensor self = is_int ? AsCommon(self_in, common) : self_in;
  const at::Tensor other = is_int ? AsCommon(other_in, common) : other_in;
  const bool is_float = common == c10::kFloat || common == c10::kHalf || common == c10::kBFloat16;
  // (a Python scalar is rounded to the common dtype first, as the CPU's remainder / fmod do: t % 0.1 of
  // a float16 t divides by float16's 0.1)
  PwOp p = Def(name, op, PwResult::kPromote);
  if (is_float) return Pointwise(p, {{"self", &self}, {"other", &other}}, target);
  at::Tensor r;
  if (is_int && IntDivFitsFloat(name, self, other)) {
    p.result = PwResult::kPromoteFloat;
    r = Pointwise(p, {{"self", &self}, {"other", &other}});
  } else {
    r = CallCpuFallback(rem ? "aten::remainder" : "aten::fmod", "Tensor", {self, other}).back().toTensor();
  }
  return DeliverResult(name, r, common, target);
}

at::Tensor div_Tensor(const at::Tensor& self, const at::Tensor& other) {
  return DivRun("div", self, other, std::nullopt, PwTarget::New());
}
at::Tensor& div__Tensor(at::Tensor& self, const at::Tensor& other) {
  DivRun("div_", self, other, std::nullopt, PwTarget::InPlace(self));
  return self;
}
at::Tensor& div_out(const at::Tensor& self, const at::Tensor& other, at::Tensor& out) {
  DivRun("div.out", self, other, std::nullopt, PwTarget::Out(out));
  return out;
}
at::Tensor div_Tensor_mode(const at::Tensor& self, const at::Tensor& other, std::optional<c10::string_view> mode) {
  return DivRun("div", self, other, mode, PwTarget::New());
}
at::Tensor& div__Tensor_mode(at::Tensor& self, const at::Tensor& other, std::optional<c10::string_view> mode) {
  DivRun("div_", self, other, mode, PwTarget::InPlace(self));
  return self;
}
at::Tensor& div_out_mode(const at::Tensor& self, const at::Tensor& other, std::optional<c10::string_view> mode,
                         at::Tensor& out) {
  DivRun("div.out", self, other, mode, PwTarget::Out(out));
  return out;
}
#define TORCH_OPS_NN_REM(FN, NAME, OP)                                                                    \
  at::Tensor FN(const at::Tensor& self, const at::Tensor& other) {                                        \
    return RemRun(NAME, OP, self, other, PwTarget::New());                                                \
  }                                                                                                       \
  at::Tensor& FN##_out(const at::Tensor& self, const at::Tensor& other, at::Tensor& out) {                \
    RemRun(NAME ".out", OP, self, other, PwTarget::Out(out));                                             \
    return out;                                                                                           \
  }                                                                                                       \
  at::Tensor& FN##_(at::Tensor& self, const at::Tensor& other) {                                          \
    RemRun(NAME "_", OP, self, other, PwTarget::InPlace(self));                                           \
    return self;                                                                                          \
  }
TORCH_OPS_NN_REM(remainder_Tensor, "remainder", EwOp::kRemainder)
// scalar % tensor: the scalar as a wrapped 0-dim CPU tensor, as the Tensor overload receives it.
at::Tensor remainder_Scalar_Tensor(const at::Scalar& self, const at::Tensor& other) {
  return RemRun("remainder", EwOp::kRemainder, at::native::wrapped_scalar_tensor(self), other, PwTarget::New());
}
at::Tensor& remainder_Scalar_Tensor_out(const at::Scalar& self, const at::Tensor& other, at::Tensor& out) {
  RemRun("remainder.out", EwOp::kRemainder, at::native::wrapped_scalar_tensor(self), other, PwTarget::Out(out));
  return out;
}
TORCH_OPS_NN_REM(fmod_Tensor, "fmod", EwOp::kFmod)
#undef TORCH_OPS_NN_REM

// isposinf / isneginf (scaled_dot_product_attention's math path uses isneginf): a comparison with
// +-inf on the compare kernel; integer and bool tensors are never infinite.
at::Tensor IsSignedInf(const at::Tensor& self, double inf) {
  if (at::isFloatingType(self.scalar_type())) return at::eq(self, inf);
  return at::zeros(self.sizes(), self.options().dtype(c10::kBool));
}
at::Tensor& isposinf_out(const at::Tensor& self, at::Tensor& out) {
  CheckSameNpuDevice("isposinf", {{"self", &self}});
  return CopyToOut("isposinf", IsSignedInf(self, INFINITY), out);
}
at::Tensor& isneginf_out(const at::Tensor& self, at::Tensor& out) {
  CheckSameNpuDevice("isneginf", {{"self", &self}});
  return CopyToOut("isneginf", IsSignedInf(self, -INFINITY), out);
}
at::Tensor isposinf(const at::Tensor& self) {
  CheckSameNpuDevice("isposinf", {{"self", &self}});
  return IsSignedInf(self, INFINITY);
}
at::Tensor isneginf(const at::Tensor& self) {
  CheckSameNpuDevice("isneginf", {{"self", &self}});
  return IsSignedInf(self, -INFINITY);
}

// xlogy(x, y) = x * log(y), 0 where x == 0, NaN where y is NaN (PyTorch's definition; kl_div uses it):
// the native log / mul / compare / where kernels, in the promoted float dtype.
at::Tensor XlogyCompute(const at::Tensor& self, const at::Tensor& other) {
  for (const at::Tensor* t : {&self, &other})
    TORCH_CHECK(!t->device().is_cpu() || t->dim() == 0, "xlogy: expected npu tensors or scalars, but ",
                t == &self ? "'self'" : "'other'", " is a CPU tensor of shape ", ShapeStr(t->sizes()),
                "; move it with .to('npu')");
  c10::ScalarType dt = at::result_type(self, other);
  if (!at::isFloatingType(dt)) dt = c10::typeMetaToScalarType(c10::get_default_dtype());
  const at::Tensor x = self.to(dt), y = other.to(dt);
  at::Tensor r = at::where(at::eq(x, 0), at::zeros({}, x.options()), at::mul(x, at::log(y)));
  return at::where(at::isnan(y), at::full({}, std::numeric_limits<double>::quiet_NaN(), r.options()), r);
}
at::Tensor xlogy_Tensor(const at::Tensor& self, const at::Tensor& other) { return XlogyCompute(self, other); }
at::Tensor& xlogy_OutTensor(const at::Tensor& self, const at::Tensor& other, at::Tensor& out) {
  return CopyToOut("xlogy.out", XlogyCompute(self, other), out);
}
at::Tensor& xlogy__Tensor(at::Tensor& self, const at::Tensor& other) {
  const at::Tensor r = XlogyCompute(self, other);
  return DeliverResult("xlogy_", r, r.scalar_type(), PwTarget::InPlace(self)), self;  // (an int self refuses floats)
}

// sin / cos: the kernel reduces arguments by pi/4 in three exact parts while |x| < 8192 and redoes
// the rare larger finite ones on the scalar unit with an exact (Payne-Hanek) reduction, so nothing
// is read back to the host (integers are computed in float too).
at::Tensor TrigRun(const char* name, EwOp op, const at::Tensor& self, PwTarget target) {
  return Pointwise(Def(name, op, PwResult::kPromoteFloat, false), {{"self", &self}}, target);
}
#define TORCH_OPS_NN_TRIG(FN, OP)                                                                     \
  at::Tensor FN(const at::Tensor& self) { return TrigRun(#FN, OP, self, PwTarget::New()); }           \
  at::Tensor& FN##_out(const at::Tensor& self, at::Tensor& out) {                                     \
    TrigRun(#FN ".out", OP, self, PwTarget::Out(out));                                                \
    return out;                                                                                       \
  }                                                                                                   \
  at::Tensor& FN##_(at::Tensor& self) {                                                               \
    TrigRun(#FN "_", OP, self, PwTarget::InPlace(self));                                              \
    return self;                                                                                      \
  }
TORCH_OPS_NN_TRIG(sin, EwOp::kSin)
TORCH_OPS_NN_TRIG(cos, EwOp::kCos)
#undef TORCH_OPS_NN_TRIG

at::Tensor floor_divide(const at::Tensor& self, const at::Tensor& other) {
  return DivRun("floor_divide", self, other, "floor", PwTarget::New());
}
at::Tensor& floor_divide_out(const at::Tensor& self, const at::Tensor& other, at::Tensor& out) {
  DivRun("floor_divide.out", self, other, "floor", PwTarget::Out(out));
  return out;
}
at::Tensor& floor_divide__Tensor(at::Tensor& self, const at::Tensor& other) {
  DivRun("floor_divide_", self, other, "floor", PwTarget::InPlace(self));
  return self;
}

// ---- maximum / minimum
#define TORCH_OPS_NN_BINARY(FN, NAME, OP, RESULT, INT_OK)                                                       \
  at::Tensor FN(const at::Tensor& self, const at::Tensor& other) {                                            \
    return Pointwise(Def(NAME, OP, RESULT, INT_OK), {{"self", &self}, {"other", &other}});                   \
  }                                                                                                           \
  at::Tensor& FN##_out(const at::Tensor& self, const at::Tensor& other, at::Tensor& out) {                    \
    Pointwise(Def(NAME ".out", OP, RESULT, INT_OK), {{"self", &self}, {"other", &other}}, PwTarget::Out(out)); \
    return out;                                                                                               \
  }                                                                                                           \
  at::Tensor& FN##_(at::Tensor& self, const at::Tensor& other) {                                              \
    Pointwise(Def(NAME "_", OP, RESULT, INT_OK), {{"self", &self}, {"other", &other}},                        \
              PwTarget::InPlace(self));                                                                       \
    return self;                                                                                              \
  }
TORCH_OPS_NN_BINARY(maximum, "maximum", EwOp::kMaximum, PwResult::kPromote, true)
TORCH_OPS_NN_BINARY(minimum, "minimum", EwOp::kMinimum, PwResult::kPromote, true)
TORCH_OPS_NN_BINARY(logical_and, "logical_and", EwOp::kLogicalAnd, PwResult::kBool, false)
TORCH_OPS_NN_BINARY(logical_or, "logical_or", EwOp::kLogicalOr, PwResult::kBool, false)
TORCH_OPS_NN_BINARY(logical_xor, "logical_xor", EwOp::kLogicalXor, PwResult::kBool, false)

// Logical ops keep the dtype of an in-place target: the bool result is cast into it.
at::Tensor logical_not(const at::Tensor& self) {
  return Pointwise(Def("logical_not", EwOp::kLogicalNot, PwResult::kBool), {{"self", &self}});
}
at::Tensor& logical_not_out(const at::Tensor& self, at::Tensor& out) {
  Pointwise(Def("logical_not.out", EwOp::kLogicalNot, PwResult::kBool), {{"self", &self}}, PwTarget::Out(out));
  return out;
}
at::Tensor& logical_not_(at::Tensor& self) {
  Pointwise(Def("logical_not_", EwOp::kLogicalNot, PwResult::kBool), {{"self", &self}}, PwTarget::InPlace(self));
  return self;
}

// ---- bitwise and / or / xor / not, shifts
// Bool tensors take the logical ops. Integers: the kernel's And / Or / Not on the uint16 halves of
// int32 lanes (uint8 / int8 / int16 loaded into int32 and stored wrapped, which bitwise ops commute
// with); int64 runs the int32 op on the low and high words. Shifts follow PyTorch's rule for amounts
// outside [0, width): 0 for a left shift, a shift by width - signed for a right shift.
int32_t BitWidth(c10::ScalarType t) { return static_cast<int32_t>(c10::elementSize(t) * 8); }

c10::ScalarType CheckBitwise(const char* name, std::initializer_list<PwArg> args, bool shift) {
  for (const auto& a : args) {
    const c10::ScalarType t = a.tensor ? a.tensor->scalar_type() : a.scalar->type();
    if (!c10::isIntegralType(t, /*includeBool=*/true))
      FailDtype(name, a.name, t, shift ? "Byte, Char, Short, Int, Long" : "Bool, Byte, Char, Short, Int, Long");
  }
  const c10::ScalarType common = CommonDtype(args);
  if (shift && common == c10::kBool) FailDtype(name, args.begin()->name, common, "Byte, Char, Short, Int, Long");
  return common;
}

PwOp BitDef(const char* name, EwOp op, c10::ScalarType common) {
  PwOp p = Def(name, op, PwResult::kPromote, true);
  p.si[0] = BitWidth(common);
  p.si[1] = common == c10::kByte ? 0 : 1;
  return p;
}

// int64 shifts by a host scalar on the 32-bit words (x >>> k: the arithmetic shift with the sign
// bits masked off).
at::Tensor Shift64(const at::Tensor& x, int64_t k, bool left) {
  at::Tensor x64 = x.contiguous().reshape({-1});
  const Words w = SplitWords(x64);
  auto lsr = [](const at::Tensor& v, int64_t n) {  // logical right shift of int32 words, 0 < n < 32
    return at::bitwise_and(at::bitwise_right_shift(v, n), static_cast<int64_t>((uint32_t(1) << (32 - n)) - 1));
  };
  Words r;
  if (left) {
    if (k < 0 || k >= 64) return at::zeros_like(x);
    if (k == 0) return x.clone();
    if (k < 32) {
      r.lo = at::bitwise_left_shift(w.lo, k);
      r.hi = at::bitwise_or(at::bitwise_left_shift(w.hi, k), lsr(w.lo, 32 - k));
    } else {
      r.lo = at::zeros_like(w.lo);
      r.hi = at::bitwise_left_shift(w.lo, k - 32);
    }
  } else {
    if (k < 0 || k >= 63) k = 63;
    if (k == 0) return x.clone();
    if (k < 32) {
      r.lo = at::bitwise_or(lsr(w.lo, k), at::bitwise_left_shift(w.hi, 32 - k));
      r.hi = at::bitwise_right_shift(w.hi, k);
    } else {
      r.lo = at::bitwise_right_shift(w.hi, k - 32);
      r.hi = at::bitwise_right_shift(w.hi, 31);
    }
  }
  return JoinWords(r, x.sizes(), x.device().index());
}

at::Tensor BitwiseRun(const char* name, EwOp logical, EwOp bit, const at::Tensor& self, const at::Tensor* other,
                      PwTarget target) {
  const bool binary = other != nullptr;
  const c10::ScalarType common =
      binary ? CheckBitwise(name, {{"self", &self}, {"other", other}}, false) : CheckBitwise(name, {{"self", &self}}, false);
  if (common == c10::kBool) {
    PwOp p = Def(name, logical, PwResult::kBool);
    p.out_same_dtype = true;  // (bitwise_not: a unary op)
    return binary ? Pointwise(p, {{"self", &self}, {"other", other}}, target) : Pointwise(p, {{"self", &self}}, target);
  }
  PwOp p = BitDef(name, bit, common);
  p.out_same_dtype = true;
  // Operands of the result's dtype and shape (host scalars up to 4 bytes) go bit for bit through the
  // kernel's raw path: no conversions, and int64 needs no split into words.
  bool raw = true;
  const at::Tensor* ts[2] = {&self, other};
  std::vector<int64_t> shape;
  for (const at::Tensor* t : ts) {
    if (!t) continue;
    if (IsCpuScalar(*t)) {
      raw = raw && c10::elementSize(common) <= 4;
      continue;
    }
    if (shape.empty()) shape.assign(t->sizes().begin(), t->sizes().end());
    raw = raw && t->scalar_type() == common && t->sizes() == c10::IntArrayRef(shape) && t->numel() > 1;
  }
  if (target.kind != PwTarget::kNew) raw = raw && target.tensor->scalar_type() == common;
  p.si[2] = raw ? 1 : 0;
  return binary ? Pointwise(p, {{"self", &self}, {"other", other}}, target) : Pointwise(p, {{"self", &self}}, target);
}

at::Tensor ShiftRun(const char* name, bool left, const at::Tensor& self, const at::Tensor& other, PwTarget target) {
  const c10::ScalarType common = CheckBitwise(name, {{"self", &self}, {"other", &other}}, true);
  if (common == c10::kLong) {
    at::Tensor r;
    if (IsCpuScalar(other)) {
      at::Tensor x = self.scalar_type() == c10::kLong ? self : self.to(c10::kLong);
      r = Shift64(x, other.item<int64_t>(), left);
    } else {  // per-element int64 amounts: the CPU fallback (int64 has no vector shift)
      r = CallCpuFallback(left ? "aten::bitwise_left_shift" : "aten::bitwise_right_shift", "Tensor", {self, other})
              .back()
              .toTensor();
    }
    return DeliverResult(name, r, common, target);
  }
  PwOp p = BitDef(name, left ? EwOp::kShiftLeft : EwOp::kShiftRight, common);
  return Pointwise(p, {{"self", &self}, {"other", &other}}, target);
}

#define TORCH_OPS_NN_BITWISE(FN, NAME, OP)                                                                     \
  at::Tensor FN(const at::Tensor& self, const at::Tensor& other) {                                            \
    return BitwiseRun(NAME, EwOp::kLogical##OP, EwOp::kBit##OP, self, &other, PwTarget::New());              \
  }                                                                                                           \
  at::Tensor& FN##_out(const at::Tensor& self, const at::Tensor& other, at::Tensor& out) {                    \
    BitwiseRun(NAME ".out", EwOp::kLogical##OP, EwOp::kBit##OP, self, &other, PwTarget::Out(out));           \
    return out;                                                                                               \
  }                                                                                                           \
  at::Tensor& FN##_(at::Tensor& self, const at::Tensor& other) {                                              \
    BitwiseRun(NAME "_", EwOp::kLogical##OP, EwOp::kBit##OP, self, &other, PwTarget::InPlace(self));         \
    return self;                                                                                              \
  }
TORCH_OPS_NN_BITWISE(bitwise_and, "bitwise_and", And)
TORCH_OPS_NN_BITWISE(bitwise_or, "bitwise_or", Or)
TORCH_OPS_NN_BITWISE(bitwise_xor, "bitwise_xor", Xor)
at::Tensor bitwise_not(const at::Tensor& self) {
  return BitwiseRun("bitwise_not", EwOp::kLogicalNot, EwOp::kBitNot, self, nullptr, PwTarget::New());
}
at::Tensor& bitwise_not_out(const at::Tensor& self, at::Tensor& out) {
  BitwiseRun("bitwise_not.out", EwOp::kLogicalNot, EwOp::kBitNot, self, nullptr, PwTarget::Out(out));
  return out;
}
at::Tensor& bitwise_not_(at::Tensor& self) {
  BitwiseRun("bitwise_not_", EwOp::kLogicalNot, EwOp::kBitNot, self, nullptr, PwTarget::InPlace(self));
  return self;
}

// A Python scalar as the CPU 0-dim tensor TensorIterator sees (a wrapped number: it does not promote).
at::Tensor WrappedScalar(const c10::Scalar& s) {
  at::Tensor t = c10::scalar_to_tensor(s);
  t.unsafeGetTensorImpl()->set_wrapped_number(true);
  return t;
}
#define TORCH_OPS_NN_SHIFT(NAME, LEFT, DUNDER)                                                                   \
  at::Tensor NAME##_Tensor(const at::Tensor& self, const at::Tensor& other) {                                    \
    return ShiftRun(#NAME, LEFT, self, other, PwTarget::New());                                                   \
  }                                                                                                              \
  at::Tensor& NAME##_Tensor_out(const at::Tensor& self, const at::Tensor& other, at::Tensor& out) {               \
    ShiftRun(#NAME ".out", LEFT, self, other, PwTarget::Out(out));                                                 \
    return out;                                                                                                  \
  }                                                                                                              \
  at::Tensor& NAME##__Tensor(at::Tensor& self, const at::Tensor& other) {                                        \
    ShiftRun(#NAME "_", LEFT, self, other, PwTarget::InPlace(self));                                               \
    return self;                                                                                                 \
  }                                                                                                              \
  at::Tensor DUNDER##_Scalar(const at::Tensor& self, const c10::Scalar& other) {                                 \
    return ShiftRun(#NAME, LEFT, self, WrappedScalar(other), PwTarget::New());                                     \
  }                                                                                                              \
  at::Tensor& DUNDER##i_Scalar(at::Tensor& self, const c10::Scalar& other) {                                     \
    ShiftRun(#NAME "_", LEFT, self, WrappedScalar(other), PwTarget::InPlace(self));                                 \
    return self;                                                                                                 \
  }
TORCH_OPS_NN_SHIFT(bitwise_left_shift, true, lshift)
TORCH_OPS_NN_SHIFT(bitwise_right_shift, false, rshift)

// ---- comparisons (Tensor and Scalar forms, out=, in-place)
// (eq / ne with a complex64 operand: ComplexEqual on the float pairs)
#define TORCH_OPS_NN_COMPARE(FN, OP)                                                                            \
  at::Tensor FN##_Tensor(const at::Tensor& self, const at::Tensor& other) {                                    \
    if ((OP == EwOp::kEq || OP == EwOp::kNe) && ComplexFloatCase(self, other))                                 \
      return ComplexEqual(self, other, OP == EwOp::kNe);                                                       \
    return Pointwise(Def(#FN, OP, PwResult::kBool, true), {{"self", &self}, {"other", &other}});              \
  }                                                                                                            \
  at::Tensor FN##_Scalar(const at::Tensor& self, const c10::Scalar& other) {                                   \
    if ((OP == EwOp::kEq || OP == EwOp::kNe) && self.is_complex()) {                                           \
      const at::Tensor o = WrappedScalar(other);                                                               \
      if (ComplexFloatCase(self, o)) return ComplexEqual(self, o, OP == EwOp::kNe);                            \
    }                                                                                                          \
    return Pointwise(Def(#FN, OP, PwResult::kBool, true), {{"self", &self}, {"other", nullptr, &other}});     \
  }                                                                                                            \
  at::Tensor& FN##_Tensor_out(const at::Tensor& self, const at::Tensor& other, at::Tensor& out) {              \
    Pointwise(Def(#FN ".Tensor_out", OP, PwResult::kBool, true), {{"self", &self}, {"other", &other}},        \
              PwTarget::Out(out));                                                                             \
    return out;                                                                                                \
  }                                                                                                            \
  at::Tensor& FN##_Scalar_out(const at::Tensor& self, const c10::Scalar& other, at::Tensor& out) {             \
    Pointwise(Def(#FN ".Scalar_out", OP, PwResult::kBool, true), {{"self", &self}, {"other", nullptr, &other}}, \
              PwTarget::Out(out));                                                                             \
    return out;                                                                                                \
  }                                                                                                            \
  at::Tensor& FN##__Tensor(at::Tensor& self, const at::Tensor& other) {                                        \
    Pointwise(Def(#FN "_", OP, PwResult::kBool, true), {{"self", &self}, {"other", &other}},                  \
              PwTarget::InPlace(self));                                                                        \
    return self;                                                                                               \
  }                                                                                                            \
  at::Tensor& FN##__Scalar(at::Tensor& self, const c10::Scalar& other) {                                       \
    Pointwise(Def(#FN "_", OP, PwResult::kBool, true), {{"self", &self}, {"other", nullptr, &other}},         \
              PwTarget::InPlace(self));                                                                        \
    return self;                                                                                               \
  }
TORCH_OPS_NN_COMPARE(eq, EwOp::kEq)
TORCH_OPS_NN_COMPARE(ne, EwOp::kNe)
TORCH_OPS_NN_COMPARE(lt, EwOp::kLt)
TORCH_OPS_NN_COMPARE(le, EwOp::kLe)
TORCH_OPS_NN_COMPARE(gt, EwOp::kGt)
TORCH_OPS_NN_COMPARE(ge, EwOp::kGe)

// ---- where / masked_fill
void CheckCondition(const char* name, const char* arg, const at::Tensor& c) {
  TORCH_CHECK_TYPE(c.scalar_type() == c10::kBool || c.scalar_type() == c10::kByte, name, ": argument '", arg,
                   "' must be a bool tensor, got dtype ", c.scalar_type());
}
at::Tensor where_self(const at::Tensor& condition, const at::Tensor& self, const at::Tensor& other) {
  CheckCondition("where", "condition", condition);
  // The condition takes no part in type promotion (a bool never changes a numeric result type).
  at::Tensor cond = condition.scalar_type() == c10::kBool ? condition : condition.to(c10::kBool);
  if (ComplexFloatCase(self, other)) {  // complex64: each part chosen on its own
    const auto pa = SplitComplex(self), pb = SplitComplex(other);
    auto pick = [&](const ComplexPart& a, const ComplexPart& b) {
      if (a.t.defined() && b.t.defined()) return at::where(cond, a.t, b.t);
      if (a.t.defined()) return at::where(cond, a.t, b.s);
      if (b.t.defined()) return at::where(cond, a.s, b.t);
      return at::where(cond, a.s, b.s);
    };
    return at::complex(pick(pa.first, pb.first), pick(pa.second, pb.second));
  }
  return Pointwise(Def("where", EwOp::kWhere, PwResult::kPromote, true),
                   {{"condition", &cond}, {"self", &self}, {"other", &other}});
}
at::Tensor& where_self_out(const at::Tensor& condition, const at::Tensor& self, const at::Tensor& other,
                           at::Tensor& out) {
  const c10::ScalarType rt = at::result_type(self, other);  // where's out= takes no casting (every backend)
  TORCH_CHECK(out.scalar_type() == rt, "where.self_out: expected out type to be ", rt, " but got ", out.scalar_type());
  const at::Tensor r = where_self(condition, self, other);
  at::native::resize_output(out, r.sizes());
  out.copy_(r);
  return out;
}

at::Tensor& masked_fill__Scalar(at::Tensor& self, const at::Tensor& mask, const c10::Scalar& value) {
  TORCH_CHECK_TYPE(mask.scalar_type() == c10::kBool, "masked_fill_: argument 'mask' must be a bool tensor, got dtype ",
                   mask.scalar_type());
  // self = where(mask, value, self) in place; value is converted to self's dtype first, with PyTorch's
  // overflow check (a value self's dtype cannot hold raises, as on the CPU).
  const c10::ScalarType st = self.scalar_type();
  if (st != c10::kBool)
    AT_DISPATCH_ALL_TYPES_AND2(c10::kHalf, c10::kBFloat16, st, "masked_fill_", [&] { (void)value.to<scalar_t>(); });
  const c10::Scalar v = st == c10::kBool                       ? c10::Scalar(value.toBool())
                        : c10::isIntegralType(st, false) ? c10::Scalar(value.toLong())
                                                         : c10::Scalar(value.toDouble());
  Pointwise(Def("masked_fill_", EwOp::kWhere, PwResult::kPromote, true),
            {{"mask", &mask}, {"value", nullptr, &v}, {"self", &self}}, PwTarget::InPlace(self));
  return self;
}
at::Tensor& masked_fill__Tensor(at::Tensor& self, const at::Tensor& mask, const at::Tensor& value) {
  TORCH_CHECK(value.dim() == 0, "masked_fill_ only supports a 0-dimensional value tensor, but got tensor with ",
              value.dim(), " dimension(s).");
  if (IsCpuScalar(value)) return masked_fill__Scalar(self, mask, value.item());
  CheckDevices("masked_fill_", {{"self", &self}, {"mask", &mask}, {"value", &value}});
  TORCH_CHECK_TYPE(mask.scalar_type() == c10::kBool, "masked_fill_: argument 'mask' must be a bool tensor, got dtype ",
                   mask.scalar_type());
  at::Tensor v = value.scalar_type() == self.scalar_type() ? value : value.to(self.scalar_type());
  Pointwise(Def("masked_fill_", EwOp::kWhere, PwResult::kPromote, true),
            {{"mask", &mask}, {"value", &v}, {"self", &self}}, PwTarget::InPlace(self));
  return self;
}

// ---- clamp
int64_t BoundToInt64(double v) {  // an integral float bound, saturated to int64
  if (!(v > -9.2233720368547758e18)) return INT64_MIN;
  if (!(v < 9.2233720368547758e18)) return INT64_MAX;
  return static_cast<int64_t>(v);
}
PwOp ClampDef(const char* name, const std::optional<c10::Scalar>& lo, const std::optional<c10::Scalar>& hi) {
  TORCH_CHECK(lo.has_value() || hi.has_value(), name, ": at least one of 'min' or 'max' must not be None");
  PwOp p = Def(name, EwOp::kClamp, PwResult::kPromote, true);
  p.out_same_dtype = true;
  p.bool_error = "\"clamp_npu\" not implemented for 'Bool'";  // bool bounds on a bool tensor, as the CPU
  p.si[0] = (lo ? 1 : 0) | (hi ? 2 : 0);
  if (lo) {
    p.sf[0] = static_cast<float>(lo->toDouble());
    p.sl[0] = lo->isIntegral(true) ? lo->toLong() : BoundToInt64(std::ceil(lo->toDouble()));
    p.si[1] = static_cast<int32_t>(std::clamp<int64_t>(p.sl[0], INT32_MIN, INT32_MAX));
  }
  if (hi) {
    p.sf[1] = static_cast<float>(hi->toDouble());
    p.sl[1] = hi->isIntegral(true) ? hi->toLong() : BoundToInt64(std::floor(hi->toDouble()));
    p.si[2] = static_cast<int32_t>(std::clamp<int64_t>(p.sl[1], INT32_MIN, INT32_MAX));
  }
  return p;
}
// The result dtype of clamp(self, scalars) promotes with the bounds (int tensor, float bound -> float).
c10::ScalarType ClampResult(const at::Tensor& self, const std::optional<c10::Scalar>& lo,
                            const std::optional<c10::Scalar>& hi) {
  at::native::ResultTypeState st = at::native::update_result_type_state(self, {});
  if (lo) st = at::native::update_result_type_state(*lo, st);
  if (hi) st = at::native::update_result_type_state(*hi, st);
  return at::native::result_type(st);
}
at::Tensor ClampRun(const char* name, const at::Tensor& self, const std::optional<c10::Scalar>& lo,
                    const std::optional<c10::Scalar>& hi, PwTarget target) {
  PwOp p = ClampDef(name, lo, hi);
  const c10::ScalarType r = ClampResult(self, lo, hi);
  if (r != self.scalar_type() && (c10::isFloatingType(r) || self.scalar_type() == c10::kBool)) {
    // int tensor, float bounds (or bool tensor, int bounds): computed in the promoted dtype
    at::Tensor x = self.to(r);
    if (target.kind == PwTarget::kNew) return Pointwise(p, {{"self", &x}});
    // out= must be of dtype r; in place, r (float or int64) never casts back to self's dtype
    TORCH_CHECK(target.kind == PwTarget::kOut, name, ": result type ", r, " can't be cast to the desired output type ",
                self.scalar_type());
    return Pointwise(p, {{"self", &x}}, target);
  }
  const bool small_int = r == c10::kByte || r == c10::kChar || r == c10::kShort || r == c10::kInt;
  if (c10::isFloatingType(r) || small_int) {  // a bound the dtype cannot hold raises, as on the CPU
    AT_DISPATCH_ALL_TYPES_AND2(c10::kHalf, c10::kBFloat16, r, "clamp", [&] {
      if (lo) (void)lo->to<scalar_t>();
      if (hi) (void)hi->to<scalar_t>();
    });
  }
  if (small_int) {
    // The bounds as the dtype holds them, converted as PyTorch's clamp does (negative bounds wrap for uint8).
    auto wrap = [&](const c10::Scalar& b) { return static_cast<int32_t>(WrapToDtype(b.toLong(), r)); };
    if (lo) p.si[1] = wrap(*lo);
    if (hi) p.si[2] = wrap(*hi);
  }
  return Pointwise(p, {{"self", &self}}, target);
}
at::Tensor clamp(const at::Tensor& self, const std::optional<c10::Scalar>& lo, const std::optional<c10::Scalar>& hi) {
  return ClampRun("clamp", self, lo, hi, PwTarget::New());
}
at::Tensor& clamp_out(const at::Tensor& self, const std::optional<c10::Scalar>& lo,
                      const std::optional<c10::Scalar>& hi, at::Tensor& out) {
  ClampRun("clamp.out", self, lo, hi, PwTarget::Out(out));
  return out;
}
at::Tensor& clamp_(at::Tensor& self, const std::optional<c10::Scalar>& lo, const std::optional<c10::Scalar>& hi) {
  ClampRun("clamp_", self, lo, hi, PwTarget::InPlace(self));
  return self;
}
at::Tensor clamp_min(const at::Tensor& self, const c10::Scalar& lo) {
  return ClampRun("clamp_min", self, lo, std::nullopt, PwTarget::New());
}
at::Tensor& clamp_min_out(const at::Tensor& self, const c10::Scalar& lo, at::Tensor& out) {
  ClampRun("clamp_min.out", self, lo, std::nullopt, PwTarget::Out(out));
  return out;
}
at::Tensor& clamp_min_(at::Tensor& self, const c10::Scalar& lo) {
  ClampRun("clamp_min_", self, lo, std::nullopt, PwTarget::InPlace(self));
  return self;
}
at::Tensor clamp_max(const at::Tensor& self, const c10::Scalar& hi) {
  return ClampRun("clamp_max", self, std::nullopt, hi, PwTarget::New());
}
at::Tensor& clamp_max_out(const at::Tensor& self, const c10::Scalar& hi, at::Tensor& out) {
  ClampRun("clamp_max.out", self, std::nullopt, hi, PwTarget::Out(out));
  return out;
}
at::Tensor& clamp_max_(at::Tensor& self, const c10::Scalar& hi) {
  ClampRun("clamp_max_", self, std::nullopt, hi, PwTarget::InPlace(self));
  return self;
}
at::Tensor ClampTRun(const char* name, const at::Tensor& self, const std::optional<at::Tensor>& lo,
                     const std::optional<at::Tensor>& hi, PwTarget target) {
  const bool has_lo = lo.has_value() && lo->defined(), has_hi = hi.has_value() && hi->defined();
  TORCH_CHECK(has_lo || has_hi, name, ": at least one of 'min' or 'max' must not be None");
  if (has_lo && has_hi)
    return Pointwise(Def(name, EwOp::kClampT, PwResult::kPromote, true),
                     {{"self", &self}, {"min", &*lo}, {"max", &*hi}}, target);
  if (has_lo)
    return Pointwise(Def(name, EwOp::kClampMinT, PwResult::kPromote, true), {{"self", &self}, {"min", &*lo}}, target);
  return Pointwise(Def(name, EwOp::kClampMaxT, PwResult::kPromote, true), {{"self", &self}, {"max", &*hi}}, target);
}
at::Tensor clamp_Tensor(const at::Tensor& self, const std::optional<at::Tensor>& lo,
                        const std::optional<at::Tensor>& hi) {
  return ClampTRun("clamp", self, lo, hi, PwTarget::New());
}
at::Tensor& clamp_Tensor_out(const at::Tensor& self, const std::optional<at::Tensor>& lo,
                             const std::optional<at::Tensor>& hi, at::Tensor& out) {
  ClampTRun("clamp.Tensor_out", self, lo, hi, PwTarget::Out(out));
  return out;
}
at::Tensor& clamp__Tensor(at::Tensor& self, const std::optional<at::Tensor>& lo, const std::optional<at::Tensor>& hi) {
  ClampTRun("clamp_", self, lo, hi, PwTarget::InPlace(self));
  return self;
}
at::Tensor clamp_min_Tensor(const at::Tensor& self, const at::Tensor& lo) {
  return ClampTRun("clamp_min", self, lo, std::nullopt, PwTarget::New());
}
at::Tensor& clamp_min_Tensor_out(const at::Tensor& self, const at::Tensor& lo, at::Tensor& out) {
  ClampTRun("clamp_min.Tensor_out", self, lo, std::nullopt, PwTarget::Out(out));
  return out;
}
at::Tensor& clamp_min__Tensor(at::Tensor& self, const at::Tensor& lo) {
  ClampTRun("clamp_min_", self, lo, std::nullopt, PwTarget::InPlace(self));
  return self;
}
at::Tensor clamp_max_Tensor(const at::Tensor& self, const at::Tensor& hi) {
  return ClampTRun("clamp_max", self, std::nullopt, hi, PwTarget::New());
}
at::Tensor& clamp_max_Tensor_out(const at::Tensor& self, const at::Tensor& hi, at::Tensor& out) {
  ClampTRun("clamp_max.Tensor_out", self, std::nullopt, hi, PwTarget::Out(out));
  return out;
}
at::Tensor& clamp_max__Tensor(at::Tensor& self, const at::Tensor& hi) {
  ClampTRun("clamp_max_", self, std::nullopt, hi, PwTarget::InPlace(self));
  return self;
}

// ---- lerp, addcmul, addcdiv
PwOp LerpSDef(const char* name, const c10::Scalar& w) {
  PwOp p = Def(name, EwOp::kLerpS);
  p.float_only = true;
  const float wf = static_cast<float>(w.toDouble());
  p.sf[0] = wf;
  p.sf[1] = 1.0f - wf;
  return p;
}
// lerp's rule on every backend: end (and a tensor weight) have self's dtype.
void CheckLerpDtypes(const at::Tensor& self, const at::Tensor& end, const at::Tensor* weight = nullptr) {
  TORCH_CHECK(self.scalar_type() == end.scalar_type(), "lerp: expected dtype ", self.scalar_type(),
              " for `end` but got dtype ", end.scalar_type());
  if (weight)
    TORCH_CHECK(self.scalar_type() == weight->scalar_type(), "lerp: expected dtype ", self.scalar_type(),
                " for `weight` but got dtype ", weight->scalar_type());
}
at::Tensor lerp_Scalar(const at::Tensor& self, const at::Tensor& end, const c10::Scalar& w) {
  CheckLerpDtypes(self, end);
  return Pointwise(LerpSDef("lerp", w), {{"self", &self}, {"end", &end}});
}
at::Tensor& lerp_Scalar_out(const at::Tensor& self, const at::Tensor& end, const c10::Scalar& w, at::Tensor& out) {
  CheckLerpDtypes(self, end);
  Pointwise(LerpSDef("lerp.Scalar_out", w), {{"self", &self}, {"end", &end}}, PwTarget::Out(out));
  return out;
}
at::Tensor& lerp__Scalar(at::Tensor& self, const at::Tensor& end, const c10::Scalar& w) {
  CheckLerpDtypes(self, end);
  Pointwise(LerpSDef("lerp_", w), {{"self", &self}, {"end", &end}}, PwTarget::InPlace(self));
  return self;
}
PwOp LerpTDef(const char* name) {
  PwOp p = Def(name, EwOp::kLerp);
  p.float_only = true;
  return p;
}
at::Tensor lerp_Tensor(const at::Tensor& self, const at::Tensor& end, const at::Tensor& w) {
  CheckLerpDtypes(self, end, &w);
  return Pointwise(LerpTDef("lerp"), {{"self", &self}, {"end", &end}, {"weight", &w}});
}
at::Tensor& lerp_Tensor_out(const at::Tensor& self, const at::Tensor& end, const at::Tensor& w, at::Tensor& out) {
  CheckLerpDtypes(self, end, &w);
  Pointwise(LerpTDef("lerp.Tensor_out"), {{"self", &self}, {"end", &end}, {"weight", &w}}, PwTarget::Out(out));
  return out;
}
at::Tensor& lerp__Tensor(at::Tensor& self, const at::Tensor& end, const at::Tensor& w) {
  CheckLerpDtypes(self, end, &w);
  Pointwise(LerpTDef("lerp_"), {{"self", &self}, {"end", &end}, {"weight", &w}}, PwTarget::InPlace(self));
  return self;
}

PwOp AddcDef(const char* name, EwOp op, const c10::Scalar& value) {
  PwOp p = Def(name, op);
  p.float_only = true;
  p.sf[0] = static_cast<float>(value.toDouble());
  return p;
}
// addcmul of integers = self + value * t1 * t2 through the exact integer mul / add (wrapping to
// the dtype as the CPU's integer arithmetic); floats take the fused kernel op.
at::Tensor AddcRun(const char* name, EwOp op, const at::Tensor& self, const at::Tensor& t1, const at::Tensor& t2,
                   const c10::Scalar& v, PwTarget target) {
  // ATen's rule on every backend: no addcdiv of two integer tensors
  TORCH_CHECK(op != EwOp::kAddcdiv || !c10::isIntegralType(t1.scalar_type(), /*includeBool=*/true) ||
                  !c10::isIntegralType(t2.scalar_type(), /*includeBool=*/true),
              name, ": integer division with addcdiv is no longer supported (tensor1 ", t1.scalar_type(), ", tensor2 ",
              t2.scalar_type(), "); for the old result use (input + value * torch.trunc(tensor1 / tensor2))"
              ".to(input.dtype), for a true division pass float tensors");
  const c10::ScalarType common = CommonDtype({{"self", &self}, {"tensor1", &t1}, {"tensor2", &t2}});
  if (op == EwOp::kAddcmul && IsNpuInt(common)) {
    // The value is converted to the integer dtype as the CPU and CUDA kernels do: truncated (0.5 -> 0),
    // with PyTorch's overflow check (c10::Scalar::to).
    c10::Scalar vi = v;
    AT_DISPATCH_INTEGRAL_TYPES(common, "addcmul", [&] { vi = c10::Scalar(static_cast<int64_t>(v.to<scalar_t>())); });
    const at::Tensor r = at::add(self.to(common), at::mul(t1.to(common), t2.to(common)), vi);
    return DeliverResult(name, r, common, target);
  }
  return Pointwise(AddcDef(name, op, v), {{"self", &self}, {"tensor1", &t1}, {"tensor2", &t2}}, target);
}
#define TORCH_OPS_NN_ADDC(FN, NAME, OP)                                                                         \
  at::Tensor FN(const at::Tensor& self, const at::Tensor& t1, const at::Tensor& t2, const c10::Scalar& v) {    \
    return AddcRun(NAME, OP, self, t1, t2, v, PwTarget::New());                                                \
  }                                                                                                            \
  at::Tensor& FN##_out(const at::Tensor& self, const at::Tensor& t1, const at::Tensor& t2, const c10::Scalar& v, \
                       at::Tensor& out) {                                                                      \
    AddcRun(NAME ".out", OP, self, t1, t2, v, PwTarget::Out(out));                                             \
    return out;                                                                                                \
  }                                                                                                            \
  at::Tensor& FN##_(at::Tensor& self, const at::Tensor& t1, const at::Tensor& t2, const c10::Scalar& v) {      \
    AddcRun(NAME "_", OP, self, t1, t2, v, PwTarget::InPlace(self));                                           \
    return self;                                                                                               \
  }
TORCH_OPS_NN_ADDC(addcmul, "addcmul", EwOp::kAddcmul)
TORCH_OPS_NN_ADDC(addcdiv, "addcdiv", EwOp::kAddcdiv)

// ---- unary math
// neg and abs reject bool as PyTorch does on every backend (neg's meta check; abs has no bool kernel).
PwOp UnaryDef(const char* name, EwOp op, PwResult r, bool int_ok) {
  PwOp p = Def(name, op, r, int_ok);
  p.out_same_dtype = r == PwResult::kPromote;  // abs, neg, sign, sgn (exp, log...: out= may be any float dtype)
  if (op == EwOp::kNeg)
    p.bool_error = "Negation, the `-` operator, on a bool tensor is not supported. If you are trying to invert a "
                   "mask, use the `~` or `logical_not()` operator instead.";
  if (op == EwOp::kAbs) p.bool_error = "\"abs_npu\" not implemented for 'Bool'";
  return p;
}
// (complex64 operands of exp / log / reciprocal / sgn / sqrt: ComplexUnary on the float pairs)
#define TORCH_OPS_NN_UNARY(FN, NAME, OP, RESULT, INT_OK)                                                       \
  at::Tensor FN(const at::Tensor& self) {                                                                     \
    if (at::Tensor z = ComplexUnary(NAME, self); z.defined()) return z;                                       \
    return Pointwise(UnaryDef(NAME, OP, RESULT, INT_OK), {{"self", &self}});                                       \
  }                                                                                                           \
  at::Tensor& FN##_out(const at::Tensor& self, at::Tensor& out) {                                             \
    if (at::Tensor z = ComplexUnary(NAME, self); z.defined())                                                 \
      return DeliverResult(NAME ".out", z, z.scalar_type(), PwTarget::Out(out)), out;                         \
    Pointwise(UnaryDef(NAME ".out", OP, RESULT, INT_OK), {{"self", &self}}, PwTarget::Out(out));                    \
    return out;                                                                                               \
  }                                                                                                           \
  at::Tensor& FN##_(at::Tensor& self) {                                                                       \
    if (at::Tensor z = ComplexUnary(NAME, self); z.defined())                                                 \
      return DeliverResult(NAME "_", z, z.scalar_type(), PwTarget::InPlace(self)), self;                      \
    Pointwise(UnaryDef(NAME "_", OP, RESULT, INT_OK), {{"self", &self}}, PwTarget::InPlace(self));                  \
    return self;                                                                                              \
  }
// neg of complex64 negates both floats of each pair; torch.complex / torch.polar build the pairs from
// float32 parts (polar: abs * cos(angle), abs * sin(angle) with the vector unit's cos / sin).
at::Tensor neg(const at::Tensor& self) {
  if (IsNpuComplex64(self)) return at::view_as_complex(at::neg(ComplexValuePairs(self)).contiguous());
  return Pointwise(UnaryDef("neg", EwOp::kNeg, PwResult::kPromote, true), {{"self", &self}});
}
at::Tensor& neg_out(const at::Tensor& self, at::Tensor& out) {
  if (IsNpuComplex64(self) && IsNpuComplex64(out) && self.device() == out.device()) {
    at::native::resize_output(out, self.sizes());
    at::view_as_real(out).copy_(at::neg(ComplexValuePairs(self)));
    return out;
  }
  Pointwise(UnaryDef("neg.out", EwOp::kNeg, PwResult::kPromote, true), {{"self", &self}}, PwTarget::Out(out));
  return out;
}
at::Tensor& neg_(at::Tensor& self) {
  if (IsNpuComplex64(self)) {
    self.copy_(torch_ops_nn::neg(self));  // copy_ applies self's conj / neg bits
    return self;
  }
  Pointwise(UnaryDef("neg_", EwOp::kNeg, PwResult::kPromote, true), {{"self", &self}}, PwTarget::InPlace(self));
  return self;
}

bool FloatPartsCase(const at::Tensor& a, const at::Tensor& b, const at::Tensor& out) {
  const auto npu = c10::DeviceType::PrivateUse1;
  return a.scalar_type() == at::kFloat && b.scalar_type() == at::kFloat && out.scalar_type() == at::kComplexFloat &&
         a.device().type() == npu && b.device() == a.device() && out.device() == a.device();
}
at::Tensor& complex_out(const at::Tensor& real, const at::Tensor& imag, at::Tensor& out) {
  if (!FloatPartsCase(real, imag, out)) {
    CallCpuFallback("aten::complex", "out", {real, imag, out}, " for these dtypes");
    return out;
  }
  ComplexFromParts(real, imag, out);
  return out;
}
at::Tensor& polar_out(const at::Tensor& abs, const at::Tensor& angle, at::Tensor& out) {
  if (!FloatPartsCase(abs, angle, out)) {
    CallCpuFallback("aten::polar", "out", {abs, angle, out}, " for these dtypes");
    return out;
  }
  ComplexFromParts(at::mul(abs, at::cos(angle)), at::mul(abs, at::sin(angle)), out);
  return out;
}
// abs of complex64 is the magnitude hypot(re, im) of the float pairs (a float tensor, as the CPU's
// std::abs; spectrogram magnitudes); other complex dtypes take the CPU fallback through the gate.
at::Tensor abs(const at::Tensor& self) {
  if (self.scalar_type() == at::kComplexFloat) {
    const at::Tensor r = ComplexMemoryPairs(self);
    return at::hypot(r.select(-1, 0), r.select(-1, 1));
  }
  return Pointwise(UnaryDef("abs", EwOp::kAbs, PwResult::kPromote, true), {{"self", &self}});
}
at::Tensor& abs_out(const at::Tensor& self, at::Tensor& out) {
  if (self.scalar_type() == at::kComplexFloat && out.scalar_type() == at::kFloat) {
    const at::Tensor r = ComplexMemoryPairs(self);
    return at::hypot_out(out, r.select(-1, 0), r.select(-1, 1));
  }
  Pointwise(UnaryDef("abs.out", EwOp::kAbs, PwResult::kPromote, true), {{"self", &self}}, PwTarget::Out(out));
  return out;
}
// angle: atan2(imag, real) of complex64 (a float tensor, the CPU's std::arg); of a float tensor pi where
// negative and 0 elsewhere, NaN kept (other dtypes: the dtype gate's CPU fallback).
at::Tensor angle_npu(const at::Tensor& self) {
  if (IsNpuComplex64(self)) {
    const at::Tensor P = ComplexValuePairs(self);
    return at::atan2(P.select(-1, 1), P.select(-1, 0));
  }
  NPU_CHECK_DTYPE(IsNpuFloat(self.scalar_type()), self.scalar_type(), "angle: argument 'self' has dtype ",
                  self.scalar_type(), ", which is not supported; supported dtypes: Float, Half, BFloat16, ComplexFloat");
  CheckSameNpuDevice("angle", {{"self", &self}});
  const at::Tensor r = at::zeros_like(self).masked_fill_(at::lt(self, 0), M_PI);
  return at::where(at::isnan(self), self, r);
}
at::Tensor& angle_out(const at::Tensor& self, at::Tensor& out) {
  const at::Tensor r = angle_npu(self);
  return DeliverResult("angle.out", r, r.scalar_type(), PwTarget::Out(out)), out;
}
at::Tensor& abs_(at::Tensor& self) {
  Pointwise(UnaryDef("abs_", EwOp::kAbs, PwResult::kPromote, true), {{"self", &self}}, PwTarget::InPlace(self));
  return self;
}
TORCH_OPS_NN_UNARY(exp, "exp", EwOp::kExp, PwResult::kPromoteFloat, false)
TORCH_OPS_NN_UNARY(log, "log", EwOp::kLog, PwResult::kPromoteFloat, false)
TORCH_OPS_NN_UNARY(sqrt, "sqrt", EwOp::kSqrt, PwResult::kPromoteFloat, false)
TORCH_OPS_NN_UNARY(rsqrt, "rsqrt", EwOp::kRsqrt, PwResult::kPromoteFloat, false)
TORCH_OPS_NN_UNARY(reciprocal, "reciprocal", EwOp::kReciprocal, PwResult::kPromoteFloat, false)
TORCH_OPS_NN_UNARY(sign, "sign", EwOp::kSign, PwResult::kPromote, true)
TORCH_OPS_NN_UNARY(sgn, "sgn", EwOp::kSign, PwResult::kPromote, true)

TORCH_OPS_NN_UNARY(log1p, "log1p", EwOp::kLog1p, PwResult::kPromoteFloat, false)
TORCH_OPS_NN_UNARY(erf, "erf", EwOp::kErf, PwResult::kPromoteFloat, false)
TORCH_OPS_NN_UNARY(erfc, "erfc", EwOp::kErfc, PwResult::kPromoteFloat, false)
TORCH_OPS_NN_UNARY(erfinv, "erfinv", EwOp::kErfinv, PwResult::kPromoteFloat, false)
TORCH_OPS_NN_UNARY(lgamma, "lgamma", EwOp::kLgamma, PwResult::kPromoteFloat, false)
TORCH_OPS_NN_UNARY(digamma, "digamma", EwOp::kDigamma, PwResult::kPromoteFloat, false)
TORCH_OPS_NN_UNARY(expm1, "expm1", EwOp::kExpm1, PwResult::kPromoteFloat, false)

// ---- isnan / nan_to_num / frac
at::Tensor isnan_npu(const at::Tensor& self) {
  if (!c10::isFloatingType(self.scalar_type()))  // integers and bool are never NaN
    return at::zeros(self.sizes(), self.options().dtype(c10::kBool));
  return Pointwise(Def("isnan", EwOp::kIsNan, PwResult::kBool), {{"self", &self}});
}
PwOp NanToNumDef(const char* name, const at::Tensor& self, std::optional<double> nan, std::optional<double> posinf,
                 std::optional<double> neginf) {
  PwOp p = Def(name, EwOp::kNanToNum);
  p.float_only = true;
  // Defaults as PyTorch: 0 for NaN, the dtype's largest / lowest finite value for the infinities.
  double big = std::numeric_limits<float>::max();
  if (self.scalar_type() == c10::kHalf) big = double(std::numeric_limits<c10::Half>::max());
  else if (self.scalar_type() == c10::kBFloat16) big = double(std::numeric_limits<c10::BFloat16>::max());
  p.sf[0] = static_cast<float>(nan.value_or(0.0));
  p.sf[1] = static_cast<float>(posinf.value_or(big));
  p.sf[2] = static_cast<float>(neginf.value_or(-big));
  return p;
}
at::Tensor nan_to_num_npu(const at::Tensor& self, std::optional<double> nan, std::optional<double> posinf,
                          std::optional<double> neginf) {
  if (!c10::isFloatingType(self.scalar_type())) return self.clone();
  return Pointwise(NanToNumDef("nan_to_num", self, nan, posinf, neginf), {{"self", &self}});
}
at::Tensor& nan_to_num_out(const at::Tensor& self, std::optional<double> nan, std::optional<double> posinf,
                           std::optional<double> neginf, at::Tensor& out) {
  TORCH_CHECK(out.scalar_type() == self.scalar_type(), "nan_to_num: dtype of out: ", out.scalar_type(),
              " should be same as input: ", self.scalar_type());
  if (!c10::isFloatingType(self.scalar_type())) return at::native::resize_output(out, self.sizes()), out.copy_(self);
  Pointwise(NanToNumDef("nan_to_num.out", self, nan, posinf, neginf), {{"self", &self}}, PwTarget::Out(out));
  return out;
}
at::Tensor& nan_to_num_(at::Tensor& self, std::optional<double> nan, std::optional<double> posinf,
                        std::optional<double> neginf) {
  if (!c10::isFloatingType(self.scalar_type())) return self;
  Pointwise(NanToNumDef("nan_to_num_", self, nan, posinf, neginf), {{"self", &self}}, PwTarget::InPlace(self));
  return self;
}
PwOp FracDef(const char* name) {
  PwOp p = Def(name, EwOp::kFrac);
  p.out_same_dtype = true;
  p.float_only = true;
  return p;
}
at::Tensor frac(const at::Tensor& self) { return Pointwise(FracDef("frac"), {{"self", &self}}); }
at::Tensor& frac_out(const at::Tensor& self, at::Tensor& out) {
  Pointwise(FracDef("frac.out"), {{"self", &self}}, PwTarget::Out(out));
  return out;
}
at::Tensor& frac_(at::Tensor& self) {
  Pointwise(FracDef("frac_"), {{"self", &self}}, PwTarget::InPlace(self));
  return self;
}

using npu_kernels::EwRound;
PwOp RoundDef(const char* name, EwRound m) {
  PwOp p = Def(name, EwOp::kRound, PwResult::kPromote, /*int_ok=*/true);  // integers: themselves
  p.out_same_dtype = true;
  p.si[0] = int32_t(m);
  // bool has no rounding kernel on the CPU or CUDA (integers are copies, bool is refused)
  static constexpr const char* kBoolError[] = {"\"floor_npu\" not implemented for 'Bool'",
                                               "\"ceil_npu\" not implemented for 'Bool'",
                                               "\"trunc_npu\" not implemented for 'Bool'",
                                               "\"round_npu\" not implemented for 'Bool'"};
  p.bool_error = m == EwRound::kFloor ? kBoolError[0] : m == EwRound::kCeil ? kBoolError[1]
                 : m == EwRound::kTrunc ? kBoolError[2] : kBoolError[3];
  return p;
}
#define TORCH_OPS_NN_ROUND(FN, MODE)                                                                           \
  at::Tensor FN(const at::Tensor& self) { return Pointwise(RoundDef(#FN, MODE), {{"self", &self}}); }          \
  at::Tensor& FN##_out(const at::Tensor& self, at::Tensor& out) {                                             \
    Pointwise(RoundDef(#FN ".out", MODE), {{"self", &self}}, PwTarget::Out(out));                              \
    return out;                                                                                               \
  }                                                                                                           \
  at::Tensor& FN##_(at::Tensor& self) {                                                                       \
    Pointwise(RoundDef(#FN "_", MODE), {{"self", &self}}, PwTarget::InPlace(self));                            \
    return self;                                                                                              \
  }
TORCH_OPS_NN_ROUND(floor, EwRound::kFloor)
TORCH_OPS_NN_ROUND(ceil, EwRound::kCeil)
TORCH_OPS_NN_ROUND(trunc, EwRound::kTrunc)
TORCH_OPS_NN_ROUND(round, EwRound::kRint)

// ---- pow
PwOp PowTDef(const char* name) {
  PwOp p = Def(name, EwOp::kPow, PwResult::kPromote);
  p.float_only = true;
  return p;
}
// Integer tensors to integer tensor powers take the CPU fallback (exact; no vector integer pow here).
at::Tensor PowTRun(const char* name, const at::Tensor& self, const at::Tensor& e, PwTarget target) {
  const c10::ScalarType common = CommonDtype({{"self", &self}, {"exponent", &e}});
  if (IsNpuInt(common)) {
    const at::Tensor r = CallCpuFallback("aten::pow", "Tensor_Tensor", {self, e}).back().toTensor();
    return DeliverResult(name, r, common, target);
  }
  return Pointwise(PowTDef(name), {{"self", &self}, {"exponent", &e}}, target);
}
at::Tensor pow_Tensor_Tensor(const at::Tensor& self, const at::Tensor& e) {
  return PowTRun("pow", self, e, PwTarget::New());
}
at::Tensor& pow_Tensor_Tensor_out(const at::Tensor& self, const at::Tensor& e, at::Tensor& out) {
  PowTRun("pow.Tensor_Tensor_out", self, e, PwTarget::Out(out));
  return out;
}
at::Tensor& pow__Tensor(at::Tensor& self, const at::Tensor& e) {
  PowTRun("pow_", self, e, PwTarget::InPlace(self));
  return self;
}

// An integer tensor to a non-negative integer power, wrapping as PyTorch's integer pow does: square
// and multiply in the kernel's int32 lanes (uint8 / int8 / int16 / int32), int64 as exact int64 muls.
at::Tensor IntPowRun(const char* name, const at::Tensor& self, const c10::Scalar& e, c10::ScalarType common,
                     PwTarget target) {
  const int64_t k = e.toLong();
  TORCH_CHECK(k >= 0, name, ": integers to negative integer powers are not allowed (exponent ", k, ")");
  if (k <= 1 || common == c10::kLong) {
    at::Tensor x = self.scalar_type() == common ? self : self.to(common);
    at::Tensor r = k == 0 ? at::ones_like(x) : x.clone();
    if (k > 1) {
      at::Tensor sq = x;
      int64_t rest = k - 1;  // r = x * x^(k - 1), x^(k - 1) from the squares x^(2^i) of its bits
      while (rest > 0) {
        if (rest & 1) r = at::mul(r, sq);
        rest >>= 1;
        if (rest > 0) sq = at::mul(sq, sq);
      }
    }
    return DeliverResult(name, r, common, target);
  }
  PwOp p = Def(name, EwOp::kPowScalar, PwResult::kPromote, true);
  p.si[3] = static_cast<int32_t>(std::min<int64_t>(k, INT32_MAX));
  return Pointwise(p, {{"self", &self}, {"exponent", nullptr, &e}}, target);
}

at::Tensor PowScalarRun(const char* name, const at::Tensor& self, const c10::Scalar& e, PwTarget target) {
  if (IsNpuComplex64(self) && !e.isComplex() && !e.isBoolean())
    return DeliverResult(name, ComplexPowScalar(self, e.toDouble()), at::kComplexFloat, target);
  if (e.isIntegral(/*includeBool=*/false)) {
    const c10::ScalarType common = CommonDtype({{"self", &self}, {"exponent", nullptr, &e}});
    if (IsNpuInt(common)) return IntPowRun(name, self, e, common, target);
  }
  PwOp p = Def(name, EwOp::kPowScalar, PwResult::kPromote);
  p.float_only = true;
  // The CPU kernel converts the exponent to the tensor's dtype (float16's 0.1 is 0.0999755859375; one
  // it cannot hold raises, as there).
  const c10::ScalarType common = CommonDtype({{"self", &self}, {"exponent", nullptr, &e}});
  if (common == c10::kHalf) (void)e.to<c10::Half>();
  if (common == c10::kBFloat16) (void)e.to<c10::BFloat16>();
  const double x = RoundTo(e.isBoolean() ? (e.toBool() ? 1.0 : 0.0) : e.toDouble(), common);
  if (x == 0.0 || x == 1.0) {  // x ** 0 = 1, x ** 1 = x (in the promoted dtype)
    const c10::ScalarType r = CommonDtype({{"self", &self}, {"exponent", nullptr, &e}});
    NPU_CHECK_DTYPE_NOT_IMPLEMENTED(IsNpuFloat(r), r, name, ": argument 'self' has dtype ", r,
                     ", which is not supported; supported dtypes: Float, Half, BFloat16");
    at::Tensor res;
    if (target.kind == PwTarget::kNew) {
      res = NpuEmpty(self.sizes(), r, self.device().index());
    } else {
      res = *target.tensor;
      if (target.kind == PwTarget::kOut) at::native::resize_output(res, self.sizes());
    }
    if (x == 0.0) res.fill_(1);
    else if (!res.is_same(self)) res.copy_(self);
    return res;
  }
  using F = npu_kernels::EwPowForm;
  F form = F::kGeneral;
  if (x == 2.0) form = F::kSquare;
  else if (x == 3.0) form = F::kCube;
  else if (x == 0.5) form = F::kSqrt;
  else if (x == -0.5) form = F::kRsqrt;
  else if (x == -1.0) form = F::kReciprocal;
  else if (x == -2.0) form = F::kInvSquare;
  p.si[0] = int32_t(form);
  p.sf[0] = static_cast<float>(x);
  p.si[1] = std::nearbyint(x) == x ? 1 : 0;
  p.si[2] = p.si[1] && std::fmod(std::fabs(x), 2.0) == 1.0 ? 1 : 0;
  return Pointwise(p, {{"self", &self}, {"exponent", nullptr, &e}}, target);
}
at::Tensor pow_Tensor_Scalar(const at::Tensor& self, const c10::Scalar& e) {
  return PowScalarRun("pow", self, e, PwTarget::New());
}
at::Tensor& pow_Tensor_Scalar_out(const at::Tensor& self, const c10::Scalar& e, at::Tensor& out) {
  PowScalarRun("pow.Tensor_Scalar_out", self, e, PwTarget::Out(out));
  return out;
}
at::Tensor& pow__Scalar(at::Tensor& self, const c10::Scalar& e) {
  PowScalarRun("pow_", self, e, PwTarget::InPlace(self));
  return self;
}
// base ** exponent with a scalar base: exp(exponent * ln(base)) for base > 0; other bases use the
// tensor-tensor form.
at::Tensor PowScalarBaseRun(const char* name, const c10::Scalar& base, const at::Tensor& e_in, PwTarget target) {
  const double b = base.isBoolean() ? (base.toBool() ? 1.0 : 0.0) : base.toDouble();
  const c10::ScalarType common = CommonDtype({{"self", nullptr, &base}, {"exponent", &e_in}});
  if (IsNpuInt(common)) {  // an integer base to integer powers: exact on the CPU (the fallback)
    const at::Tensor r = CallCpuFallback("aten::pow", "Scalar", {base, e_in}).back().toTensor();
    return DeliverResult(name, r, common, target);
  }
  // a float base to integer powers: the powers in the result's float dtype
  const at::Tensor e = c10::isIntegralType(e_in.scalar_type(), true) && c10::isFloatingType(common)
                           ? e_in.to(common) : e_in;
  // The base is converted to the result's dtype first, as PyTorch's wrapped scalar is (1e10 is
  // float16's inf).
  const double bc = RoundTo(b, common);
  if (bc > 0.0 && std::isfinite(bc)) {
    PwOp p = Def(name, EwOp::kScalarPow, PwResult::kPromote);
    p.float_only = true;
    const double lb = std::log(bc);
    p.sf[0] = static_cast<float>(lb);
    p.sf[1] = static_cast<float>(lb - static_cast<double>(p.sf[0]));  // ln(base) = sf0 + sf1 (double-float)
    return Pointwise(p, {{"exponent", &e}}, target);
  }
  PwOp p = PowTDef(name);
  return Pointwise(p, {{"self", nullptr, &base}, {"exponent", &e}}, target);
}
at::Tensor pow_Scalar(const c10::Scalar& base, const at::Tensor& e) {
  return PowScalarBaseRun("pow", base, e, PwTarget::New());
}
at::Tensor& pow_Scalar_out(const c10::Scalar& base, const at::Tensor& e, at::Tensor& out) {
  PowScalarBaseRun("pow.Scalar_out", base, e, PwTarget::Out(out));
  return out;
}

}  // namespace
}  // namespace torch_ops_nn

NPU_ATEN_LIBRARY_IMPL(m) {
  using namespace torch_ops_nn;
  m.impl("add.Tensor", TORCH_FN(torch_ops_nn::add_Tensor));
  m.impl("add_.Tensor", TORCH_FN(torch_ops_nn::add__Tensor));
  m.impl("add.out", TORCH_FN(torch_ops_nn::add_out));
  m.impl("sub.Tensor", TORCH_FN(torch_ops_nn::sub_Tensor));
  m.impl("sub_.Tensor", TORCH_FN(torch_ops_nn::sub__Tensor));
  m.impl("sub.out", TORCH_FN(torch_ops_nn::sub_out));
  m.impl("rsub.Tensor", TORCH_FN(torch_ops_nn::rsub_Tensor));
  m.impl("mul.Tensor", TORCH_FN(torch_ops_nn::mul_Tensor));
  m.impl("mul_.Tensor", TORCH_FN(torch_ops_nn::mul__Tensor));
  m.impl("mul.out", TORCH_FN(torch_ops_nn::mul_out));
  m.impl("div.Tensor", TORCH_FN(torch_ops_nn::div_Tensor));
  m.impl("div_.Tensor", TORCH_FN(torch_ops_nn::div__Tensor));
  m.impl("div.out", TORCH_FN(torch_ops_nn::div_out));
  m.impl("div.Tensor_mode", TORCH_FN(torch_ops_nn::div_Tensor_mode));
  m.impl("div_.Tensor_mode", TORCH_FN(torch_ops_nn::div__Tensor_mode));
  m.impl("div.out_mode", TORCH_FN(torch_ops_nn::div_out_mode));
  m.impl("xlogy.Tensor", TORCH_FN(torch_ops_nn::xlogy_Tensor));
  m.impl("xlogy.OutTensor", TORCH_FN(torch_ops_nn::xlogy_OutTensor));
  m.impl("xlogy_.Tensor", TORCH_FN(torch_ops_nn::xlogy__Tensor));
  m.impl("isposinf", TORCH_FN(torch_ops_nn::isposinf));
  m.impl("isposinf.out", TORCH_FN(torch_ops_nn::isposinf_out));
  m.impl("isneginf", TORCH_FN(torch_ops_nn::isneginf));
  m.impl("isneginf.out", TORCH_FN(torch_ops_nn::isneginf_out));
  m.impl("remainder.Tensor", TORCH_FN(torch_ops_nn::remainder_Tensor));
  m.impl("remainder.Tensor_out", TORCH_FN(torch_ops_nn::remainder_Tensor_out));
  m.impl("remainder_.Tensor", TORCH_FN(torch_ops_nn::remainder_Tensor_));
  m.impl("remainder.Scalar_Tensor", TORCH_FN(torch_ops_nn::remainder_Scalar_Tensor));
  m.impl("remainder.Scalar_Tensor_out", TORCH_FN(torch_ops_nn::remainder_Scalar_Tensor_out));
  m.impl("fmod.Tensor", TORCH_FN(torch_ops_nn::fmod_Tensor));
  m.impl("fmod.Tensor_out", TORCH_FN(torch_ops_nn::fmod_Tensor_out));
  m.impl("fmod_.Tensor", TORCH_FN(torch_ops_nn::fmod_Tensor_));
  m.impl("floor_divide", TORCH_FN(torch_ops_nn::floor_divide));
  m.impl("floor_divide.out", TORCH_FN(torch_ops_nn::floor_divide_out));
  m.impl("floor_divide_.Tensor", TORCH_FN(torch_ops_nn::floor_divide__Tensor));
  m.impl("maximum", TORCH_FN(torch_ops_nn::maximum));
  m.impl("maximum.out", TORCH_FN(torch_ops_nn::maximum_out));
  m.impl("minimum", TORCH_FN(torch_ops_nn::minimum));
  m.impl("minimum.out", TORCH_FN(torch_ops_nn::minimum_out));
  m.impl("logical_and", TORCH_FN(torch_ops_nn::logical_and));
  m.impl("logical_and.out", TORCH_FN(torch_ops_nn::logical_and_out));
  m.impl("logical_and_", TORCH_FN(torch_ops_nn::logical_and_));
  m.impl("logical_or", TORCH_FN(torch_ops_nn::logical_or));
  m.impl("logical_or.out", TORCH_FN(torch_ops_nn::logical_or_out));
  m.impl("logical_or_", TORCH_FN(torch_ops_nn::logical_or_));
  m.impl("logical_xor", TORCH_FN(torch_ops_nn::logical_xor));
  m.impl("logical_xor.out", TORCH_FN(torch_ops_nn::logical_xor_out));
  m.impl("logical_xor_", TORCH_FN(torch_ops_nn::logical_xor_));
  m.impl("logical_not", TORCH_FN(torch_ops_nn::logical_not));
  m.impl("logical_not.out", TORCH_FN(torch_ops_nn::logical_not_out));
  m.impl("logical_not_", TORCH_FN(torch_ops_nn::logical_not_));
  m.impl("bitwise_and.Tensor", TORCH_FN(torch_ops_nn::bitwise_and));
  m.impl("bitwise_and.Tensor_out", TORCH_FN(torch_ops_nn::bitwise_and_out));
  m.impl("bitwise_and_.Tensor", TORCH_FN(torch_ops_nn::bitwise_and_));
  m.impl("bitwise_or.Tensor", TORCH_FN(torch_ops_nn::bitwise_or));
  m.impl("bitwise_or.Tensor_out", TORCH_FN(torch_ops_nn::bitwise_or_out));
  m.impl("bitwise_or_.Tensor", TORCH_FN(torch_ops_nn::bitwise_or_));
  m.impl("bitwise_xor.Tensor", TORCH_FN(torch_ops_nn::bitwise_xor));
  m.impl("bitwise_xor.Tensor_out", TORCH_FN(torch_ops_nn::bitwise_xor_out));
  m.impl("bitwise_xor_.Tensor", TORCH_FN(torch_ops_nn::bitwise_xor_));
  m.impl("bitwise_not", TORCH_FN(torch_ops_nn::bitwise_not));
  m.impl("bitwise_not.out", TORCH_FN(torch_ops_nn::bitwise_not_out));
  m.impl("bitwise_not_", TORCH_FN(torch_ops_nn::bitwise_not_));
  m.impl("bitwise_left_shift.Tensor", TORCH_FN(torch_ops_nn::bitwise_left_shift_Tensor));
  m.impl("bitwise_left_shift.Tensor_out", TORCH_FN(torch_ops_nn::bitwise_left_shift_Tensor_out));
  m.impl("bitwise_left_shift_.Tensor", TORCH_FN(torch_ops_nn::bitwise_left_shift__Tensor));
  m.impl("__lshift__.Tensor", TORCH_FN(torch_ops_nn::bitwise_left_shift_Tensor));
  m.impl("__ilshift__.Tensor", TORCH_FN(torch_ops_nn::bitwise_left_shift__Tensor));
  m.impl("__lshift__.Scalar", TORCH_FN(torch_ops_nn::lshift_Scalar));
  m.impl("__ilshift__.Scalar", TORCH_FN(torch_ops_nn::lshifti_Scalar));
  m.impl("bitwise_right_shift.Tensor", TORCH_FN(torch_ops_nn::bitwise_right_shift_Tensor));
  m.impl("bitwise_right_shift.Tensor_out", TORCH_FN(torch_ops_nn::bitwise_right_shift_Tensor_out));
  m.impl("bitwise_right_shift_.Tensor", TORCH_FN(torch_ops_nn::bitwise_right_shift__Tensor));
  m.impl("__rshift__.Tensor", TORCH_FN(torch_ops_nn::bitwise_right_shift_Tensor));
  m.impl("__irshift__.Tensor", TORCH_FN(torch_ops_nn::bitwise_right_shift__Tensor));
  m.impl("__rshift__.Scalar", TORCH_FN(torch_ops_nn::rshift_Scalar));
  m.impl("__irshift__.Scalar", TORCH_FN(torch_ops_nn::rshifti_Scalar));
#define TORCH_OPS_NN_REG_COMPARE(FN)                       \
  m.impl(#FN ".Tensor", TORCH_FN(torch_ops_nn::FN##_Tensor));            \
  m.impl(#FN ".Scalar", TORCH_FN(torch_ops_nn::FN##_Scalar));            \
  m.impl(#FN ".Tensor_out", TORCH_FN(torch_ops_nn::FN##_Tensor_out));    \
  m.impl(#FN ".Scalar_out", TORCH_FN(torch_ops_nn::FN##_Scalar_out));    \
  m.impl(#FN "_.Tensor", TORCH_FN(torch_ops_nn::FN##__Tensor));          \
  m.impl(#FN "_.Scalar", TORCH_FN(torch_ops_nn::FN##__Scalar));
  TORCH_OPS_NN_REG_COMPARE(eq)
  TORCH_OPS_NN_REG_COMPARE(ne)
  TORCH_OPS_NN_REG_COMPARE(lt)
  TORCH_OPS_NN_REG_COMPARE(le)
  TORCH_OPS_NN_REG_COMPARE(gt)
  TORCH_OPS_NN_REG_COMPARE(ge)
#undef TORCH_OPS_NN_REG_COMPARE
  m.impl("where.self", TORCH_FN(torch_ops_nn::where_self));
  m.impl("where.self_out", TORCH_FN(torch_ops_nn::where_self_out));
  m.impl("masked_fill_.Scalar", TORCH_FN(torch_ops_nn::masked_fill__Scalar));
  m.impl("masked_fill_.Tensor", TORCH_FN(torch_ops_nn::masked_fill__Tensor));
  m.impl("clamp", TORCH_FN(torch_ops_nn::clamp));
  m.impl("clamp.out", TORCH_FN(torch_ops_nn::clamp_out));
  m.impl("clamp_", TORCH_FN(torch_ops_nn::clamp_));
  m.impl("clamp.Tensor", TORCH_FN(torch_ops_nn::clamp_Tensor));
  m.impl("clamp.Tensor_out", TORCH_FN(torch_ops_nn::clamp_Tensor_out));
  m.impl("clamp_.Tensor", TORCH_FN(torch_ops_nn::clamp__Tensor));
  m.impl("clamp_min", TORCH_FN(torch_ops_nn::clamp_min));
  m.impl("clamp_min.out", TORCH_FN(torch_ops_nn::clamp_min_out));
  m.impl("clamp_min_", TORCH_FN(torch_ops_nn::clamp_min_));
  m.impl("clamp_min.Tensor", TORCH_FN(torch_ops_nn::clamp_min_Tensor));
  m.impl("clamp_min.Tensor_out", TORCH_FN(torch_ops_nn::clamp_min_Tensor_out));
  m.impl("clamp_min_.Tensor", TORCH_FN(torch_ops_nn::clamp_min__Tensor));
  m.impl("clamp_max", TORCH_FN(torch_ops_nn::clamp_max));
  m.impl("clamp_max.out", TORCH_FN(torch_ops_nn::clamp_max_out));
  m.impl("clamp_max_", TORCH_FN(torch_ops_nn::clamp_max_));
  m.impl("clamp_max.Tensor", TORCH_FN(torch_ops_nn::clamp_max_Tensor));
  m.impl("clamp_max.Tensor_out", TORCH_FN(torch_ops_nn::clamp_max_Tensor_out));
  m.impl("clamp_max_.Tensor", TORCH_FN(torch_ops_nn::clamp_max__Tensor));
  m.impl("lerp.Scalar", TORCH_FN(torch_ops_nn::lerp_Scalar));
  m.impl("lerp.Scalar_out", TORCH_FN(torch_ops_nn::lerp_Scalar_out));
  m.impl("lerp_.Scalar", TORCH_FN(torch_ops_nn::lerp__Scalar));
  m.impl("lerp.Tensor", TORCH_FN(torch_ops_nn::lerp_Tensor));
  m.impl("lerp.Tensor_out", TORCH_FN(torch_ops_nn::lerp_Tensor_out));
  m.impl("lerp_.Tensor", TORCH_FN(torch_ops_nn::lerp__Tensor));
  m.impl("addcmul", TORCH_FN(torch_ops_nn::addcmul));
  m.impl("addcmul.out", TORCH_FN(torch_ops_nn::addcmul_out));
  m.impl("addcmul_", TORCH_FN(torch_ops_nn::addcmul_));
  m.impl("addcdiv", TORCH_FN(torch_ops_nn::addcdiv));
  m.impl("addcdiv.out", TORCH_FN(torch_ops_nn::addcdiv_out));
  m.impl("addcdiv_", TORCH_FN(torch_ops_nn::addcdiv_));
#define TORCH_OPS_NN_REG_UNARY(FN)          \
  m.impl(#FN, TORCH_FN(torch_ops_nn::FN));                \
  m.impl(#FN ".out", TORCH_FN(torch_ops_nn::FN##_out));   \
  m.impl(#FN "_", TORCH_FN(torch_ops_nn::FN##_));
  TORCH_OPS_NN_REG_UNARY(neg)
  m.impl("complex.out", TORCH_FN(torch_ops_nn::complex_out));
  m.impl("angle", TORCH_FN(torch_ops_nn::angle_npu));
  m.impl("angle.out", TORCH_FN(torch_ops_nn::angle_out));
  m.impl("polar.out", TORCH_FN(torch_ops_nn::polar_out));
  TORCH_OPS_NN_REG_UNARY(abs)
  TORCH_OPS_NN_REG_UNARY(exp)
  TORCH_OPS_NN_REG_UNARY(log)
  TORCH_OPS_NN_REG_UNARY(sqrt)
  TORCH_OPS_NN_REG_UNARY(rsqrt)
  TORCH_OPS_NN_REG_UNARY(reciprocal)
  TORCH_OPS_NN_REG_UNARY(sign)
  TORCH_OPS_NN_REG_UNARY(sgn)
  TORCH_OPS_NN_REG_UNARY(floor)
  TORCH_OPS_NN_REG_UNARY(ceil)
  TORCH_OPS_NN_REG_UNARY(trunc)
  TORCH_OPS_NN_REG_UNARY(round)
  TORCH_OPS_NN_REG_UNARY(log1p)
  TORCH_OPS_NN_REG_UNARY(erf)
  TORCH_OPS_NN_REG_UNARY(erfc)
  TORCH_OPS_NN_REG_UNARY(erfinv)
  TORCH_OPS_NN_REG_UNARY(lgamma)
  TORCH_OPS_NN_REG_UNARY(digamma)
  TORCH_OPS_NN_REG_UNARY(sin)
  TORCH_OPS_NN_REG_UNARY(cos)
  TORCH_OPS_NN_REG_UNARY(expm1)
  TORCH_OPS_NN_REG_UNARY(frac)
#undef TORCH_OPS_NN_REG_UNARY
  m.impl("isnan", TORCH_FN(torch_ops_nn::isnan_npu));
  m.impl("nan_to_num", TORCH_FN(torch_ops_nn::nan_to_num_npu));
  m.impl("nan_to_num.out", TORCH_FN(torch_ops_nn::nan_to_num_out));
  m.impl("nan_to_num_", TORCH_FN(torch_ops_nn::nan_to_num_));
  m.impl("pow.Tensor_Tensor", TORCH_FN(torch_ops_nn::pow_Tensor_Tensor));
  m.impl("pow.Tensor_Tensor_out", TORCH_FN(torch_ops_nn::pow_Tensor_Tensor_out));
  m.impl("pow_.Tensor", TORCH_FN(torch_ops_nn::pow__Tensor));
  m.impl("pow.Tensor_Scalar", TORCH_FN(torch_ops_nn::pow_Tensor_Scalar));
  m.impl("pow.Tensor_Scalar_out", TORCH_FN(torch_ops_nn::pow_Tensor_Scalar_out));
  m.impl("pow_.Scalar", TORCH_FN(torch_ops_nn::pow__Scalar));
  m.impl("pow.Scalar", TORCH_FN(torch_ops_nn::pow_Scalar));
  m.impl("pow.Scalar_out", TORCH_FN(torch_ops_nn::pow_Scalar_out));
}
