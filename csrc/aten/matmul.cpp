// Matmul family on npu: mm, addmm, bmm, baddbmm (functional, out=, in-place). Argument checks,
// output, tiling, launch of the cube kernel (ascendc_kernels/matmul.cpp). Transposed operands
// (the column-major `.t()` views autograd makes) are passed as they are: the kernel reads them
// transposed in its GM -> L1 stage. addmm's beta*self and alpha go into the kernel's Fixpipe
// epilogue (shift / residual and column scale), so the result crosses GM once.
#include "aten/matmul_ops.h"
#include "core/cpu_fallback.h"

#include <ATen/Context.h>
#include <ATen/Functions.h>
#include <ATen/ExpandUtils.h>
#include <ATen/native/Resize.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include <atomic>
#include <cstdlib>
#include <iterator>
#include <map>
#include <mutex>
#include <sstream>
#include <string>
#include <tuple>

#include "aten/kernel_launch.h"
#include "aten/graph_guard.h"
#include "aten/op_common.h"
#include "gemv.h"
#include "matmul.h"

namespace {
// torch.set_float32_matmul_precision("high" / "medium") lets float matmuls trade precision for
// speed: the kernels then run the cube in HF32 mode (bf16x3 on AMX hosts, ~1e-5 relative).
inline uint32_t MatmulHf32() {
  return at::globalContext().float32MatmulPrecision() != at::Float32MatmulPrecision::HIGHEST ? 1u : 0u;
}
std::atomic<bool> g_conv_allow_hf32{true};
}  // namespace

namespace torch_ops_nn {

bool ConvAllowHf32() { return g_conv_allow_hf32.load(std::memory_order_relaxed); }
void SetConvAllowHf32(bool on) { g_conv_allow_hf32.store(on, std::memory_order_relaxed); }

TORCH_OPS_NN_REGISTER_KERNEL(matmul_kernel);
TORCH_OPS_NN_REGISTER_KERNEL(scale_cast_kernel);
TORCH_OPS_NN_REGISTER_KERNEL(gemv_kernel);

namespace {

std::string ShapeStr(const at::Tensor& t) {
  std::ostringstream s;
  for (int64_t i = 0; i < t.dim(); ++i) s << (i ? "x" : "") << t.size(i);
  return s.str();
}

// A batched matrix operand as the kernel reads it.
struct Operand {
  at::Tensor t;   // keeps the storage alive (may be a contiguous copy)
  bool trans;     // stored transposed: element (r, c) at c*ld + r
  int64_t ld;     // pitch of the stored rows
  int64_t batch;  // elements between batch matrices
};

// x: [B, R, C]. Row-major (stride(2) == 1) and column-major (stride(1) == 1) matrices are read
// natively; anything else is made contiguous on the device.
Operand Classify(const at::Tensor& x) {
  const int64_t R = x.size(1), C = x.size(2);
  const int64_t s0 = x.size(0) == 1 ? 0 : x.stride(0), s1 = x.stride(1), s2 = x.stride(2);
  const bool row_major = (C == 1 || s2 == 1) && (R == 1 || s1 >= C);
  const bool col_major = (R == 1 || s1 == 1) && (C == 1 || s2 >= R);
  if (row_major) return {x, false, R == 1 ? C : s1, s0};
  if (col_major) return {x, true, C == 1 ? R : s2, s0};
  at::Tensor c = x.contiguous();
  return {c, false, C, x.size(0) == 1 ? 0 : R * C};
}

// Packed copies of a transposed B operand (a Linear's weight: B = w.t(), w [N, K] row-major) in the
// kernel's L1 panel order [ceil(K/C0)][N16][C0], so repeated matmuls with the same weight (inference:
// an LSTM's steps, a decoder's tokens) skip the ND -> NZ scatter of every B panel in every tile: for
// an LSTM's 16 x 512 x 2048 steps that scatter took twice the cube's time. Keyed by the storage (the
// .t() view is a new tensor every call) and checked against its version counter, so an in-place
// update is never missed; a weak reference to the storage tells a freed storage's entry apart (copies
// of freed storages are dropped whenever a new operand is seen). Packed on
// the second sighting (a one-off operand is not worth the copy); never for tensors autograd tracks
// (training changes them every step) or inference tensors (no version counter).
// TORCH_OPS_NN_MATMUL_WEIGHT_CACHE=0 turns it off.
struct PackedB {
  c10::weak_intrusive_ptr<c10::StorageImpl> storage;
  uint32_t version;
  at::Tensor packed;  // undefined after the first sighting
};
using PackKey = std::tuple<const c10::StorageImpl*, int64_t, int64_t, int64_t, int64_t, c10::ScalarType, bool>;
std::mutex g_pack_mu;
std::map<PackKey, PackedB>& g_pack = *new std::map<PackKey, PackedB>;  // never destroyed (device tensors)
uint64_t g_pack_bytes = 0;
constexpr uint64_t kMaxPackBytes = uint64_t(512) << 20;

at::Tensor PackTransposedB(const at::Tensor& w, int64_t N, int64_t K) {
  const int64_t c0 = 32 / int64_t(w.element_size()), k1 = (K + c0 - 1) / c0, n16 = (N + 15) / 16 * 16;
  at::Tensor f = NpuEmpty({k1 * n16 * c0}, w.scalar_type(), w.device().index());
  f.zero_();
  at::Tensor src = w;
  if (K % c0 != 0) {  // zero-pad K to whole C0 groups
    src = NpuEmpty({N, k1 * c0}, w.scalar_type(), w.device().index());
    src.zero_();
    src.narrow(1, 0, K).copy_(w);
  }
  // f[k1][n][c] = src[n][k1 * C0 + c]
  f.as_strided({N, k1, c0}, {c0, n16 * c0, 1}).copy_(src.view({N, k1, c0}));
  return f;
}

// The cached packed copy of b (a K x N operand stored transposed: the op's own argument, whose version
// counter is the user's -- views made inside a kernel get fresh counters), or undefined: the cube's
// Nz panels, or with `kn` b row-major (K x N contiguous) for the small-M vector GEMV.
at::Tensor CachedPackedB(const at::Tensor& b, bool kn) {
  static const bool enabled = [] {
    const char* v = std::getenv("TORCH_OPS_NN_MATMUL_WEIGHT_CACHE");
    return !(v && v[0] == '0');
  }();
  if (!enabled || b.dim() != 2 || b.is_inference() || (c10::GradMode::is_enabled() && b.requires_grad())) return {};
  const int64_t K = b.size(0), N = b.size(1);
  if (b.stride(0) != 1 || b.stride(1) != K || N < 16 || K < 16) return {};  // w = b.t() contiguous [N, K]
  if (npu_rt::Graph* graph = CapturingGraph())  // a replay repacks only when b changed (graph_guard.h)
    return GuardedCopy(graph, {kn ? 4 : 3}, {&b}, [&] { return kn ? b.contiguous() : PackTransposedB(b.t(), N, K); });
  const PackKey key{b.storage().unsafeGetStorageImpl(), b.storage_offset(), N, K, b.stride(1), b.scalar_type(), kn};
  std::lock_guard<std::mutex> g(g_pack_mu);
  auto drop = [](std::map<PackKey, PackedB>::iterator e) {
    if (e->second.packed.defined()) g_pack_bytes -= uint64_t(e->second.packed.nbytes());
    return g_pack.erase(e);
  };
  auto it = g_pack.find(key);
  // An entry of a freed storage whose address came back is not this storage's.
  if (it != g_pack.end() && it->second.storage.lock().get() != std::get<0>(key)) {
    drop(it);
    it = g_pack.end();
  }
  const uint32_t version = b._version();
  if (it != g_pack.end() && it->second.version == version) {
    if (it->second.packed.defined()) return it->second.packed;
    at::Tensor packed = kn ? b.contiguous() : PackTransposedB(b.t(), N, K);  // the second sighting
    const uint64_t bytes = uint64_t(packed.nbytes());
    if (bytes > kMaxPackBytes / 4) return {};
    if (g_pack_bytes + bytes > kMaxPackBytes) {
      for (auto& e : g_pack) e.second.packed = at::Tensor();
      g_pack_bytes = 0;
    }
    it->second.packed = packed;
    g_pack_bytes += bytes;
    return packed;
  }
  if (it != g_pack.end()) drop(it);  // written since: start over
  for (auto e = g_pack.begin(); e != g_pack.end();) e = e->second.storage.expired() ? drop(e) : std::next(e);
  g_pack.emplace(key, PackedB{c10::weak_intrusive_ptr<c10::StorageImpl>(b.storage().getWeakStorageImpl()), version, {}});
  return {};
}

// Products of one or two rows run on the vector cores (gemv.h, GemvFits) when B can be streamed by rows.
// TORCH_OPS_NN_GEMV=0 keeps them on the cube (for comparisons).
bool UseGemv(int64_t M, int64_t K, int64_t N, int64_t elem_bytes) {
  static const bool enabled = [] {
    const char* v = std::getenv("TORCH_OPS_NN_GEMV");
    return !(v && v[0] == '0');
  }();
  return enabled && npu_kernels::GemvFits(uint64_t(M), uint64_t(K), uint64_t(N), uint32_t(elem_bytes));
}

// An epilogue holding the cached copy of b (mm / addmm's mat2, addmv's mat^T) in the form the kernel
// for M rows reads: row-major for the GEMV, the cube's panels otherwise.
MatmulEpilogue CachedB(const at::Tensor& b, int64_t M) {
  MatmulEpilogue ep;
  if (b.dim() == 2 && UseGemv(M, b.size(0), b.size(1), b.element_size())) ep.b_kn = CachedPackedB(b, true);
  else ep.b_nz = CachedPackedB(b, false);
  return ep;
}

}  // namespace

// Drops every packed matmul operand (torch.npu.empty_cache calls it).
void ClearMatmulWeightCache() {
  std::lock_guard<std::mutex> g(g_pack_mu);
  g_pack.clear();
  g_pack_bytes = 0;
}

at::Tensor ScaleCast(const at::Tensor& x_in, double scale, c10::ScalarType dtype) {
  at::Tensor x = Contiguous(x_in);
  const c10::DeviceIndex dev = x.device().index();
  at::Tensor y = NpuEmpty(x.sizes(), dtype, dev);
  if (x.numel() == 0) return y;
  using Fn = void (*)(uint8_t*, uint8_t*, uint8_t*);
  Fn fn = nullptr;
  const c10::ScalarType in = x.scalar_type();
  if (dtype == c10::kFloat) {
    fn = PickFloatKernel<Fn>("scale_cast", in, &scale_cast_kernel_float_to_float, &scale_cast_kernel_half_to_float,
                             &scale_cast_kernel_bf16_to_float);
  } else {
    TORCH_CHECK(dtype == in, "scale_cast: unsupported conversion ", in, " -> ", dtype);
    fn = PickFloatKernel<Fn>("scale_cast", in, &scale_cast_kernel_float_to_float, &scale_cast_kernel_half_same,
                             &scale_cast_kernel_bf16_same);
  }
  const auto tiling = npu_kernels::scale_cast_tiling(static_cast<uint64_t>(x.numel()), SocInfoFor(dev),
                                                     static_cast<float>(scale));
  KernelLaunch launch{"scale_cast_kernel", ascendc_host::CoreType::AIV, tiling.block_dim, dev};
  LaunchKernel(std::move(launch), fn, tiling, x.data_ptr(), y.data_ptr());
  return y;
}

namespace {

// The operand layouts and epilogue fields the cube's and the GEMV's tilings share.
template <class Tiling>
void SetLayoutAndEpilogue(Tiling& t, const Operand& A, const Operand& B, const at::Tensor& out,
                          const MatmulEpilogue& ep) {
  t.lda = uint64_t(A.ld);
  t.ldb = uint64_t(B.ld);
  t.a_batch = uint64_t(A.batch);
  t.b_batch = uint64_t(B.batch);
  t.ldc = uint64_t(out.stride(1));
  t.c_batch = uint64_t(out.stride(0));
  t.has_scale = ep.scale.defined();
  t.has_shift = ep.shift.defined();
  t.has_residual = ep.residual.defined();
  t.relu = ep.relu;
  t.rowwise = ep.rowwise;
  if (ep.residual.defined()) {
    t.ldr = uint64_t(ep.residual.stride(1));
    t.r_batch = uint64_t(ep.residual.size(0) == 1 ? 0 : ep.residual.stride(0));
  }
}

// The small-M path (gemv.h): A row-major, B row-major K x N (`Bk`). False when the shape does not fit.
bool GemvMatmul(const char* op, const at::Tensor& a, Operand A, const Operand& Bk, const at::Tensor& out,
                const MatmulEpilogue& ep) {
  const int64_t B = out.size(0), M = out.size(1), N = out.size(2), K = a.size(2);
  const c10::DeviceIndex dev = out.device().index();
  const int64_t esz = out.element_size();
  auto t = npu_kernels::gemv_tiling(uint32_t(B), uint32_t(M), uint32_t(N), uint32_t(K), uint32_t(esz), SocInfoFor(dev));
  if (!t.ok) return false;
  if (A.trans) A = Classify(a.contiguous());  // one or two rows: a small copy
  SetLayoutAndEpilogue(t, A, Bk, out, ep);
  using Fn = void (*)(uint8_t*, uint8_t*, uint8_t*, uint8_t*, uint8_t*, uint8_t*, uint8_t*, uint8_t*);
  Fn kernel = PickFloatKernel<Fn>(op, out.scalar_type(), &gemv_kernel_float, &gemv_kernel_half, &gemv_kernel_bf16);
  // Split K: the partial sums' workspace, then the reduce phase applies the epilogue.
  at::Tensor ws;
  if (t.splits > 1) ws = NpuEmpty({int64_t(t.splits) * B * M * N}, c10::kFloat, dev);
  void* none = nullptr;
  for (uint32_t phase = 0; phase < (t.splits > 1 ? 2u : 1u); ++phase) {
    t.phase = phase;
    KernelLaunch launch{"gemv_kernel", ascendc_host::CoreType::AIV, phase ? t.red_block_dim : t.block_dim, dev};
    if (LogDebugEnabled())
      launch.detail = std::string(op) + " " + DescribeForLog({{"a", &a}}) + " M=" + std::to_string(M) + " N=" +
                      std::to_string(N) + " K=" + std::to_string(K) + " chunk=" + std::to_string(t.nw) + "x" +
                      std::to_string(t.kc) + " splits=" + std::to_string(t.splits) + (phase ? " (reduce)" : "");
    LaunchKernel(std::move(launch), kernel, t, A.t.data_ptr(), Bk.t.data_ptr(), out.data_ptr(),
                 ep.scale.defined() ? ep.scale.data_ptr() : none, ep.shift.defined() ? ep.shift.data_ptr() : none,
                 ep.residual.defined() ? ep.residual.data_ptr() : none, ws.defined() ? ws.data_ptr() : none);
  }
  return true;
}

}  // namespace

void CubeBatchedMatmul(const char* op, const at::Tensor& a, const at::Tensor& b, const at::Tensor& out,
                       const MatmulEpilogue& ep) {
  const int64_t B = out.size(0), M = out.size(1), N = out.size(2), K = a.size(2);
  if (B == 0 || M == 0 || N == 0) return;
  TORCH_CHECK(K > 0, op, ": internal error: K = 0 reached the cube kernel");
  TORCH_CHECK(M <= UINT32_MAX && N <= UINT32_MAX && K <= UINT32_MAX && B <= UINT32_MAX, op,
              ": matrix dimensions above 2^32 are not supported (", B, "x", M, "x", N, "x", K, ")");
  const Operand A = Classify(a), Bm = Classify(b);
  // A few rows against a B that can be streamed by rows (row-major, or a weight's cached row-major
  // copy): the vector cores' GEMV.
  if (UseGemv(M, K, N, out.element_size())) {
    const at::Tensor& kn = ep.b_kn;
    if (!Bm.trans) {
      if (GemvMatmul(op, a, A, Bm, out, ep)) return;
    } else if (kn.defined() && Bm.batch == 0) {
      TORCH_CHECK(kn.scalar_type() == out.scalar_type() && kn.is_contiguous() && kn.dim() == 2 && kn.size(0) == K &&
                      kn.size(1) == N,
                  op, ": internal error: row-major B of shape ", kn.sizes(), " does not match K ", K, " x N ", N);
      if (GemvMatmul(op, a, A, Operand{kn, false, N, 0}, out, ep)) return;
    }
  }
  const c10::DeviceIndex dev = out.device().index();
  const int64_t esz = out.element_size();
  auto t = npu_kernels::matmul_tiling(uint32_t(B), uint32_t(M), uint32_t(N), uint32_t(K), uint32_t(esz), A.trans,
                                      Bm.trans, SocInfoFor(dev));
  t.hf32 = (ep.hf32 < 0 ? MatmulHf32() : uint32_t(ep.hf32 != 0)) && M >= kHf32MinGemmRows && N >= kHf32MinGemmRows;
  SetLayoutAndEpilogue(t, A, Bm, out, ep);
  void* b_ptr = Bm.t.data_ptr();
  const at::Tensor& b_nz = ep.b_nz;
  if (b_nz.defined() && Bm.trans && Bm.batch == 0) {
    const int64_t c0 = 32 / esz, n16 = (N + 15) / 16 * 16;
    TORCH_CHECK(b_nz.scalar_type() == out.scalar_type() && b_nz.is_contiguous() &&
                    b_nz.numel() == (K + c0 - 1) / c0 * n16 * c0,
                op, ": internal error: packed B of ", b_nz.numel(), " elements does not match K ", K, " x N ", N);
    if (n16 <= 65535) {
      t.b_nz = 1;
      t.b_n16 = uint32_t(n16);
      b_ptr = b_nz.data_ptr();
    }
  }
  using Fn = void (*)(uint8_t*, uint8_t*, uint8_t*, uint8_t*, uint8_t*, uint8_t*, uint8_t*);
  Fn kernel = PickFloatKernel<Fn>(op, out.scalar_type(), &matmul_kernel_float, &matmul_kernel_half,
                                  &matmul_kernel_bf16);
  KernelLaunch launch{"matmul_kernel", ascendc_host::CoreType::AIC, t.block_dim, dev};
  if (LogDebugEnabled())
    launch.detail = std::string(op) + " " + DescribeForLog({{"a", &a}, {"b", &b}}) + " trans=" +
                    std::to_string(A.trans) + std::to_string(Bm.trans) + " tile=" + std::to_string(t.base_m) + "x" +
                    std::to_string(t.base_n) + "x" + std::to_string(t.k_l1) + " blockDim=" + std::to_string(t.block_dim) +
                    (t.b_nz ? " b=nz" : "");
  void* none = nullptr;
  LaunchKernel(std::move(launch), kernel, t, A.t.data_ptr(), b_ptr, out.data_ptr(),
               ep.scale.defined() ? ep.scale.data_ptr() : none, ep.shift.defined() ? ep.shift.data_ptr() : none,
               ep.residual.defined() ? ep.residual.data_ptr() : none);
}

namespace {

void CheckMatmulArgs(const char* op, const at::Tensor& m1, const at::Tensor& m2, int64_t dims, const char* n1,
                     const char* n2) {
  TORCH_CHECK(m1.dim() == dims, op, ": argument '", n1, "' must be a ", dims, "-D tensor, got ", m1.dim(),
              "-D (shape ", m1.sizes(), ")");
  TORCH_CHECK(m2.dim() == dims, op, ": argument '", n2, "' must be a ", dims, "-D tensor, got ", m2.dim(),
              "-D (shape ", m2.sizes(), ")");
  CheckFloatDtype(op, n1, m1);
  CheckFloatDtype(op, n2, m2);
  TORCH_CHECK_TYPE(m1.scalar_type() == m2.scalar_type(), op, ": expected '", n1, "' and '", n2,
                   "' to have the same dtype, but got ", m1.scalar_type(), " and ", m2.scalar_type());
  if (dims == 3)
    TORCH_CHECK(m1.size(0) == m2.size(0), op, ": batch sizes differ: '", n1, "' has ", m1.size(0), " (shape ",
                ShapeStr(m1), "), '", n2, "' has ", m2.size(0), " (shape ", ShapeStr(m2), ")");
  TORCH_CHECK(m1.size(dims - 1) == m2.size(dims - 2), op, ": ", n1, " and ", n2, " shapes cannot be multiplied (",
              ShapeStr(m1), " and ", ShapeStr(m2), "): ", n1, " has ", m1.size(dims - 1), " columns but ", n2,
              " has ", m2.size(dims - 2), " rows");
}

// self [..] broadcast into [B, M, N] as the epilogue's shift (row vector) or residual, scaled by beta.
void AddSelfToEpilogue(const char* op, const at::Tensor& self, double beta, int64_t B, int64_t M, int64_t N,
                       c10::ScalarType dtype, MatmulEpilogue& ep) {
  if (beta == 0.0) return;  // self is ignored (NaN in self does not propagate), as on CPU
  TORCH_CHECK_TYPE(self.scalar_type() == dtype, op, ": expected 'self' to have dtype ", dtype, " like the matrices, but got ",
                   self.scalar_type());
  std::vector<int64_t> full = B < 0 ? std::vector<int64_t>{M, N} : std::vector<int64_t>{B, M, N};
  TORCH_CHECK(at::is_expandable_to(self.sizes(), full), op, ": 'self' of shape ", self.sizes(),
              " cannot be broadcast to the result shape ", c10::IntArrayRef(full));
  if (self.numel() == N && (self.dim() == 0 ? N == 1 : self.size(-1) == N)) {
    // A row vector (a Linear bias): per-column shift, in float.
    at::Tensor row = self.reshape({N});
    ep.shift = (beta == 1.0 && dtype == c10::kFloat) ? Contiguous(row) : ScaleCast(row, beta, c10::kFloat);
    return;
  }
  at::Tensor r = self.expand(full).contiguous();
  if (beta != 1.0) r = ScaleCast(r, beta, dtype);
  ep.residual = B < 0 ? r.unsqueeze(0) : r;
}

at::Tensor AlphaScale(double alpha, int64_t N, c10::DeviceIndex dev) {
  if (alpha == 1.0) return {};
  at::Tensor s = NpuEmpty({N}, c10::kFloat, dev);
  s.fill_(alpha);
  return s;
}

// addmm / baddbmm core: out3 [B, M, N] contiguous.
void AddMatmulInto(const char* op, const at::Tensor& self, const at::Tensor& a3, const at::Tensor& b3,
                   const at::Scalar& beta_s, const at::Scalar& alpha_s, const at::Tensor& out3, bool batched,
                   MatmulEpilogue ep = {}) {
  const int64_t B = out3.size(0), M = out3.size(1), N = out3.size(2), K = a3.size(2);
  const double beta = beta_s.toDouble(), alpha = alpha_s.toDouble();
  const c10::DeviceIndex dev = out3.device().index();
  if (self.defined()) AddSelfToEpilogue(op, self, beta, batched ? B : -1, M, N, out3.scalar_type(), ep);
  if (out3.numel() == 0) return;
  if (K == 0) {  // alpha * (empty sum) = 0: the result is beta * self
    if (ep.residual.defined()) {
      out3.copy_(ep.residual.expand_as(out3));
    } else if (ep.shift.defined()) {
      out3.copy_(ep.shift.expand_as(out3));
    } else {
      out3.zero_();
    }
    return;
  }
  ep.scale = AlphaScale(alpha, N, dev);
  CubeBatchedMatmul(op, a3, b3, out3, ep);
}

// Writes through `out` directly when it is a contiguous tensor of the right shape that does not
// alias the operands; otherwise through a temporary.
template <typename F>
at::Tensor& WriteOut(at::Tensor& out, c10::IntArrayRef sizes, c10::ScalarType dtype,
                     std::initializer_list<const at::Tensor*> inputs, F&& compute) {
  at::native::resize_output(out, sizes);
  bool direct = out.is_contiguous() && out.scalar_type() == dtype;
  for (const at::Tensor* in : inputs)
    if (in->defined() && in->numel() > 0 && out.numel() > 0 && out.is_alias_of(*in)) direct = false;
  if (direct) {
    compute(out);
  } else {
    at::Tensor tmp = NpuEmpty(sizes, dtype, out.device().index());
    compute(tmp);
    out.copy_(tmp);
  }
  return out;
}

at::Tensor As3D(const at::Tensor& t) { return t.dim() == 3 ? t : t.unsqueeze(0); }

// The cube multiplies float16 / bfloat16 / float32 (and HF32): float64, complex and integer matmuls
// run on the CPU fallback, as a device without such a GEMM runs them on its host CPU.
bool HostMatmul(std::initializer_list<const at::Tensor*> ts) {
  if (AnyHostOnlyDtype(ts)) return true;
  for (const at::Tensor* t : ts)
    if (t->defined() && c10::isIntegralType(t->scalar_type(), /*includeBool=*/true)) return true;
  return false;
}

// complex64 products on the cube's float GEMM: with A = Ar + i Ai and B = Br + i Bi,
// [Ar | Ai] (M x 2K) @ [[Br, Bi], [-Bi, Br]] (2K x 2N) = [Ar Br - Ai Bi | Ar Bi + Ai Br] = [Cr | Ci],
// one GEMM (the four real products of the CPU's complex GEMM). 2-D (mm) or 3-D (bmm) operands; an
// undefined result when they are not both complex64 npu tensors (the usual path: the CPU fallback).
at::Tensor ComplexMatmul(const char* op, const at::Tensor& a, const at::Tensor& b) {
  if (!IsNpuComplex64(a) || !IsNpuComplex64(b)) return {};
  const int64_t d = a.dim();
  TORCH_CHECK(d == b.dim() && (d == 2 || d == 3), op, ": expected ", d == 3 ? "3-D" : "2-D",
              " tensors, but got ", a.dim(), "-D and ", b.dim(), "-D");
  TORCH_CHECK(a.size(-1) == b.size(-2), op, ": mat1 and mat2 shapes cannot be multiplied (", a.size(-2), "x",
              a.size(-1), " and ", b.size(-2), "x", b.size(-1), ")");
  TORCH_CHECK(d == 2 || a.size(0) == b.size(0), op, ": batch1 and batch2 must have the same batch size, got ",
              a.size(0), " and ", b.size(0));
  CheckSameNpuDevice(op, {{"self", &a}, {"mat2", &b}});
  const int64_t N = b.size(-1);
  std::vector<int64_t> out_shape = a.sizes().vec();
  out_shape.back() = N;
  if (a.numel() == 0 || b.numel() == 0) return at::zeros(out_shape, a.options());  // (K = 0: zeros)
  std::vector<int64_t> x_shape = a.sizes().vec();
  x_shape.back() *= 2;
  // [..., M, K, 2] -> [..., M, 2, K] -> [..., M, 2K]: the real parts, then the imaginary ones.
  const at::Tensor X = ComplexValuePairs(a).movedim(-1, -2).reshape(x_shape);
  const at::Tensor B = ComplexValuePairs(b);
  const at::Tensor br = B.select(-1, 0), bi = B.select(-1, 1);
  const at::Tensor Y = at::cat({at::cat({br, bi}, -1), at::cat({at::neg(bi), br}, -1)}, -2);
  const at::Tensor R = d == 2 ? at::mm(X, Y) : at::bmm(X, Y);
  std::vector<int64_t> r_shape = out_shape;
  r_shape.insert(r_shape.end() - 1, 2);
  // [..., M, 2N] -> [..., M, 2, N] -> [..., M, N, 2], into a new tensor (size-1 dims of a contiguous
  // view may carry strides view_as_complex rejects)
  at::Tensor out = NpuEmpty(out_shape, at::kComplexFloat, a.device().index());
  at::view_as_real(out).copy_(R.view(r_shape).movedim(-2, -1));
  return out;
}

// ---- mm ----
at::Tensor& mm_out(const at::Tensor& self, const at::Tensor& mat2, at::Tensor& out) {
  if (IsNpuComplex64(out))
    if (at::Tensor r = ComplexMatmul("mm", self, mat2); r.defined())
      return at::native::resize_output(out, r.sizes()), out.copy_(r);
  if (HostMatmul({&self, &mat2, &out})) return CallCpuFallback("aten::mm", "out", {self, mat2, out}), out;
  CheckSameNpuDevice("mm", {{"self", &self}, {"mat2", &mat2}, {"out", &out}});
  CheckMatmulArgs("mm", self, mat2, 2, "self", "mat2");
  TORCH_CHECK_TYPE(out.scalar_type() == self.scalar_type(), "mm: expected 'out' to have dtype ", self.scalar_type(),
                   ", but got ", out.scalar_type());
  const int64_t M = self.size(0), N = mat2.size(1);
  return WriteOut(out, {M, N}, self.scalar_type(), {&self, &mat2}, [&](const at::Tensor& o) {
    if (self.size(1) == 0) { o.zero_(); return; }
    CubeBatchedMatmul("mm", As3D(self), As3D(mat2), As3D(o), CachedB(mat2, M));
  });
}

at::Tensor mm(const at::Tensor& self, const at::Tensor& mat2) {
  if (at::Tensor r = ComplexMatmul("mm", self, mat2); r.defined()) return r;
  if (HostMatmul({&self, &mat2})) return CallCpuFallback("aten::mm", "", {self, mat2})[0].toTensor();
  CheckSameNpuDevice("mm", {{"self", &self}, {"mat2", &mat2}});
  CheckMatmulArgs("mm", self, mat2, 2, "self", "mat2");
  at::Tensor out = NpuEmpty({self.size(0), mat2.size(1)}, self.scalar_type(), self.device().index());
  if (out.numel() == 0) return out;
  if (self.size(1) == 0) return out.zero_();
  CubeBatchedMatmul("mm", As3D(self), As3D(mat2), As3D(out), CachedB(mat2, self.size(0)));
  return out;
}

// ---- bmm ----
at::Tensor& bmm_out(const at::Tensor& self, const at::Tensor& mat2, at::Tensor& out) {
  if (IsNpuComplex64(out))
    if (at::Tensor r = ComplexMatmul("bmm", self, mat2); r.defined())
      return at::native::resize_output(out, r.sizes()), out.copy_(r);
  if (HostMatmul({&self, &mat2, &out})) return CallCpuFallback("aten::bmm", "out", {self, mat2, out}), out;
  CheckSameNpuDevice("bmm", {{"self", &self}, {"mat2", &mat2}, {"out", &out}});
  CheckMatmulArgs("bmm", self, mat2, 3, "self", "mat2");
  TORCH_CHECK_TYPE(out.scalar_type() == self.scalar_type(), "bmm: expected 'out' to have dtype ",
                   self.scalar_type(), ", but got ", out.scalar_type());
  return WriteOut(out, {self.size(0), self.size(1), mat2.size(2)}, self.scalar_type(), {&self, &mat2},
                  [&](const at::Tensor& o) {
                    if (self.size(2) == 0) { o.zero_(); return; }
                    CubeBatchedMatmul("bmm", self, mat2, o);
                  });
}

at::Tensor bmm(const at::Tensor& self, const at::Tensor& mat2) {
  if (at::Tensor r = ComplexMatmul("bmm", self, mat2); r.defined()) return r;
  if (HostMatmul({&self, &mat2})) return CallCpuFallback("aten::bmm", "", {self, mat2})[0].toTensor();
  CheckSameNpuDevice("bmm", {{"self", &self}, {"mat2", &mat2}});
  CheckMatmulArgs("bmm", self, mat2, 3, "self", "mat2");
  at::Tensor out = NpuEmpty({self.size(0), self.size(1), mat2.size(2)}, self.scalar_type(), self.device().index());
  if (out.numel() == 0) return out;
  if (self.size(2) == 0) return out.zero_();
  CubeBatchedMatmul("bmm", self, mat2, out);
  return out;
}

// ---- addmm ----
at::Tensor& addmm_out(const at::Tensor& self, const at::Tensor& mat1, const at::Tensor& mat2, const at::Scalar& beta,
                      const at::Scalar& alpha, at::Tensor& out) {
  if (HostMatmul({&self, &mat1, &mat2, &out}))
    return CallCpuFallback("aten::addmm", "out", {self, mat1, mat2, beta, alpha, out}), out;
  CheckSameNpuDevice("addmm", {{"self", &self}, {"mat1", &mat1}, {"mat2", &mat2}, {"out", &out}});
  CheckMatmulArgs("addmm", mat1, mat2, 2, "mat1", "mat2");
  TORCH_CHECK_TYPE(out.scalar_type() == mat1.scalar_type(), "addmm: expected 'out' to have dtype ",
                   mat1.scalar_type(), ", but got ", out.scalar_type());
  const int64_t M = mat1.size(0), N = mat2.size(1);
  // In place on self (addmm_): the epilogue reads each residual element right before writing the
  // same element, so a contiguous self may be the output.
  return WriteOut(out, {M, N}, mat1.scalar_type(), {&mat1, &mat2}, [&](const at::Tensor& o) {
    AddMatmulInto("addmm", self, As3D(mat1), As3D(mat2), beta, alpha, As3D(o), false, CachedB(mat2, mat1.size(0)));
  });
}

at::Tensor addmm(const at::Tensor& self, const at::Tensor& mat1, const at::Tensor& mat2, const at::Scalar& beta,
                 const at::Scalar& alpha) {
  if (IsNpuComplex64(self)) {
    if (at::Tensor r = ComplexMatmul("addmm", mat1, mat2); r.defined()) {  // beta * self + alpha * mat1 @ mat2
      if (alpha.toComplexDouble() != 1.0) r = at::mul(r, alpha);
      return beta.toComplexDouble() == 0.0 ? r : at::add(r, at::mul(self, beta));
    }
  }
  if (HostMatmul({&self, &mat1, &mat2}))
    return CallCpuFallback("aten::addmm", "", {self, mat1, mat2, beta, alpha})[0].toTensor();
  CheckSameNpuDevice("addmm", {{"self", &self}, {"mat1", &mat1}, {"mat2", &mat2}});
  CheckMatmulArgs("addmm", mat1, mat2, 2, "mat1", "mat2");
  at::Tensor out = NpuEmpty({mat1.size(0), mat2.size(1)}, mat1.scalar_type(), mat1.device().index());
  AddMatmulInto("addmm", self, As3D(mat1), As3D(mat2), beta, alpha, As3D(out), false, CachedB(mat2, mat1.size(0)));
  return out;
}

at::Tensor& addmm_(at::Tensor& self, const at::Tensor& mat1, const at::Tensor& mat2, const at::Scalar& beta,
                   const at::Scalar& alpha) {
  TORCH_CHECK(self.dim() == 2 && mat1.dim() == 2 && mat2.dim() == 2 && self.size(0) == mat1.size(0) &&
                  self.size(1) == mat2.size(mat2.dim() - 1),
              "addmm_: 'self' of shape ", self.sizes(), " must have the result shape [", mat1.size(0), ", ",
              mat2.dim() == 2 ? mat2.size(1) : -1, "] for the in-place form");
  return addmm_out(self, mat1, mat2, beta, alpha, self);
}

// ---- baddbmm ----
at::Tensor& baddbmm_out(const at::Tensor& self, const at::Tensor& batch1, const at::Tensor& batch2,
                        const at::Scalar& beta, const at::Scalar& alpha, at::Tensor& out) {
  if (HostMatmul({&self, &batch1, &batch2, &out}))
    return CallCpuFallback("aten::baddbmm", "out", {self, batch1, batch2, beta, alpha, out}), out;
  CheckSameNpuDevice("baddbmm", {{"self", &self}, {"batch1", &batch1}, {"batch2", &batch2}, {"out", &out}});
  CheckMatmulArgs("baddbmm", batch1, batch2, 3, "batch1", "batch2");
  TORCH_CHECK_TYPE(out.scalar_type() == batch1.scalar_type(), "baddbmm: expected 'out' to have dtype ",
                   batch1.scalar_type(), ", but got ", out.scalar_type());
  return WriteOut(out, {batch1.size(0), batch1.size(1), batch2.size(2)}, batch1.scalar_type(), {&batch1, &batch2},
                  [&](const at::Tensor& o) {
                    AddMatmulInto("baddbmm", self, batch1, batch2, beta, alpha, o, true);
                  });
}

at::Tensor baddbmm(const at::Tensor& self, const at::Tensor& batch1, const at::Tensor& batch2, const at::Scalar& beta,
                   const at::Scalar& alpha) {
  if (HostMatmul({&self, &batch1, &batch2}))
    return CallCpuFallback("aten::baddbmm", "", {self, batch1, batch2, beta, alpha})[0].toTensor();
  CheckSameNpuDevice("baddbmm", {{"self", &self}, {"batch1", &batch1}, {"batch2", &batch2}});
  CheckMatmulArgs("baddbmm", batch1, batch2, 3, "batch1", "batch2");
  at::Tensor out = NpuEmpty({batch1.size(0), batch1.size(1), batch2.size(2)}, batch1.scalar_type(),
                            batch1.device().index());
  AddMatmulInto("baddbmm", self, batch1, batch2, beta, alpha, out, true);
  return out;
}

at::Tensor& baddbmm_(at::Tensor& self, const at::Tensor& batch1, const at::Tensor& batch2, const at::Scalar& beta,
                     const at::Scalar& alpha) {
  TORCH_CHECK(self.dim() == 3 && batch1.dim() == 3 && batch2.dim() == 3 && self.size(0) == batch1.size(0) &&
                  self.size(1) == batch1.size(1) && self.size(2) == batch2.size(2),
              "baddbmm_: 'self' of shape ", self.sizes(), " must have the result shape for the in-place form");
  return baddbmm_out(self, batch1, batch2, beta, alpha, self);
}

// ---- addmv (mv and matmul(matrix, vector) reach it), dot ----
void CheckMv(const char* op, const at::Tensor& mat, const at::Tensor& vec) {
  TORCH_CHECK(mat.dim() == 2, op, ": argument 'mat' must be a 2-D tensor, got ", mat.dim(), "-D (shape ", mat.sizes(), ")");
  TORCH_CHECK(vec.dim() == 1, op, ": argument 'vec' must be a 1-D tensor, got ", vec.dim(), "-D (shape ", vec.sizes(), ")");
  CheckFloatDtype(op, "mat", mat);
  TORCH_CHECK_TYPE(mat.scalar_type() == vec.scalar_type(), op, ": expected 'mat' and 'vec' to have the same dtype, but got ",
                   mat.scalar_type(), " and ", vec.scalar_type());
  TORCH_CHECK(mat.size(1) == vec.size(0), op, ": size mismatch, got mat ", ShapeStr(mat), " and vec ", vec.size(0),
              ": mat has ", mat.size(1), " columns but vec has ", vec.size(0), " elements");
}

at::Tensor& addmv_out(const at::Tensor& self, const at::Tensor& mat, const at::Tensor& vec, const at::Scalar& beta,
                      const at::Scalar& alpha, at::Tensor& out) {
  if (HostMatmul({&self, &mat, &vec, &out}))
    return CallCpuFallback("aten::addmv", "out", {self, mat, vec, beta, alpha, out}), out;
  CheckSameNpuDevice("addmv", {{"self", &self}, {"mat", &mat}, {"vec", &vec}, {"out", &out}});
  CheckMv("addmv", mat, vec);
  TORCH_CHECK_TYPE(out.scalar_type() == mat.scalar_type(), "addmv: expected 'out' to have dtype ", mat.scalar_type(),
                   ", but got ", out.scalar_type());
  const int64_t n = mat.size(0);
  TORCH_CHECK(self.dim() <= 1 && at::is_expandable_to(self.sizes(), {n}), "addmv: 'self' of shape ", self.sizes(),
              " cannot be broadcast to the result shape [", n, "]");
  // As one row: out[1, n] = vec[1, K] @ mat^T [K, n]. A one-row product is what the small-M GEMV
  // takes (mat^T read through the cached row-major copy of a repeated mat, or directly when mat is
  // column-major), and even on the cube it beats n rows against a single column (measured: 4096 x
  // 4096 in 2.9 ms against 4.8).
  const at::Tensor mt = mat.t();
  return WriteOut(out, {n}, mat.scalar_type(), {&mat, &vec}, [&](const at::Tensor& o) {
    AddMatmulInto("addmv", self, vec.view({1, 1, vec.size(0)}), As3D(mt), beta, alpha, o.view({1, 1, n}), false,
                  CachedB(mt, 1));
  });
}

at::Tensor addmv(const at::Tensor& self, const at::Tensor& mat, const at::Tensor& vec, const at::Scalar& beta,
                 const at::Scalar& alpha) {
  at::Tensor out = NpuEmpty({0}, mat.scalar_type(), mat.device().index());
  return addmv_out(self, mat, vec, beta, alpha, out);
}

at::Tensor& addmv_(at::Tensor& self, const at::Tensor& mat, const at::Tensor& vec, const at::Scalar& beta,
                   const at::Scalar& alpha) {
  TORCH_CHECK(self.dim() == 1 && mat.dim() == 2 && self.size(0) == mat.size(0), "addmv_: 'self' of shape ",
              self.sizes(), " must have the result shape [", mat.dim() == 2 ? mat.size(0) : -1, "] for the in-place form");
  return addmv_out(self, mat, vec, beta, alpha, self);
}

// dot / vdot of complex64 vectors: a 1 x n by n x 1 ComplexMatmul (vdot conjugates the first).
at::Tensor ComplexDot(const char* op, const at::Tensor& a, const at::Tensor& b) {
  if (!IsNpuComplex64(a) || !IsNpuComplex64(b)) return {};
  TORCH_CHECK(a.dim() == 1 && b.dim() == 1, op, ": 1-D tensors expected, but got ", a.dim(), "-D and ", b.dim(),
              "-D tensors");
  TORCH_CHECK(a.size(0) == b.size(0), op, ": expected both vectors to have the same number of elements, but got ",
              a.size(0), " and ", b.size(0));
  return ComplexMatmul(op, a.unsqueeze(0), b.unsqueeze(1)).view(c10::IntArrayRef{});  // (a bare {} is view(dtype))
}

at::Tensor dot(const at::Tensor& self, const at::Tensor& other) {
  if (at::Tensor r = ComplexDot("dot", self, other); r.defined()) return r;
  if (HostMatmul({&self, &other})) return CallCpuFallback("aten::dot", "", {self, other})[0].toTensor();
  CheckSameNpuDevice("dot", {{"self", &self}, {"tensor", &other}});
  TORCH_CHECK(self.dim() == 1 && other.dim() == 1, "dot: 1-D tensors expected, but got ", self.dim(), "-D and ",
              other.dim(), "-D tensors");
  CheckFloatDtype("dot", "self", self);
  TORCH_CHECK_TYPE(self.scalar_type() == other.scalar_type(), "dot: expected both vectors to have the same dtype, but got ",
                   self.scalar_type(), " and ", other.scalar_type());
  TORCH_CHECK(self.size(0) == other.size(0), "dot: expected both vectors to have the same number of elements, but got ",
              self.size(0), " and ", other.size(0));
  at::Tensor out = NpuEmpty({}, self.scalar_type(), self.device().index());
  if (self.size(0) == 0) return out.zero_();
  CubeBatchedMatmul("dot", self.view({1, 1, self.size(0)}), other.view({1, other.size(0), 1}), out.view({1, 1, 1}));
  return out;
}
// vdot = dot(conj(self), other); for real vectors the dot itself.
at::Tensor vdot(const at::Tensor& self, const at::Tensor& other) {
  if (at::Tensor r = ComplexDot("vdot", self.conj(), other); r.defined()) return r;
  if (self.is_complex() || other.is_complex()) return CallCpuFallback("aten::vdot", "", {self, other})[0].toTensor();
  return torch_ops_nn::dot(self, other);
}

}  // namespace
}  // namespace torch_ops_nn

NPU_ATEN_LIBRARY_IMPL(m) {
  m.impl("addmv", TORCH_FN(torch_ops_nn::addmv));
  m.impl("addmv.out", TORCH_FN(torch_ops_nn::addmv_out));
  m.impl("addmv_", TORCH_FN(torch_ops_nn::addmv_));
  m.impl("dot", TORCH_FN(torch_ops_nn::dot));
  m.impl("vdot", TORCH_FN(torch_ops_nn::vdot));
  m.impl("mm", TORCH_FN(torch_ops_nn::mm));
  m.impl("mm.out", TORCH_FN(torch_ops_nn::mm_out));
  m.impl("bmm", TORCH_FN(torch_ops_nn::bmm));
  m.impl("bmm.out", TORCH_FN(torch_ops_nn::bmm_out));
  m.impl("addmm", TORCH_FN(torch_ops_nn::addmm));
  m.impl("addmm.out", TORCH_FN(torch_ops_nn::addmm_out));
  m.impl("addmm_", TORCH_FN(torch_ops_nn::addmm_));
  m.impl("baddbmm", TORCH_FN(torch_ops_nn::baddbmm));
  m.impl("baddbmm.out", TORCH_FN(torch_ops_nn::baddbmm_out));
  m.impl("baddbmm_", TORCH_FN(torch_ops_nn::baddbmm_));
}
