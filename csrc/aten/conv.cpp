// 2-D convolution on npu: convolution_overrideable / convolution_backward_overrideable (where
// ATen routes out-of-tree backends for F.conv2d, nn.Conv2d and autograd) and ConvForward (conv.h),
// all on the cube kernel of ascendc_kernels/conv2d.cpp.
//   forward      : img2col (LoadData 3D) x weights, epilogue (bias / BN scale+shift / residual /
//                  ReLU) on the accumulator. NCHW input is moved to NHWC first (the L1 feature
//                  map is C1HWC0); NCHW output comes straight from the kernel (form 1).
//   grad_input   : the convolution of grad_output (zero-upsampled by the stride) with the
//                  weights transposed per group and flipped (the kernel reverses the taps).
//   grad_weight  : the convolution of x^T (images as channels) with grad_output^T as the filter
//                  (stride and dilation swap), in bands of grad_output rows chained through the
//                  epilogue's residual, so the reduction is deterministic.
//   grad_bias    : sums over N, H, W as cube GEMMs with a ones vector.
#include "aten/conv.h"

#include <ATen/Context.h>
#include <ATen/native/Resize.h>
#include <c10/core/DeviceGuard.h>
#include <c10/core/GradMode.h>
#include <torch/library.h>

#include <ATen/ops/constant_pad_nd.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/eye.h>
#include <ATen/ops/matmul.h>
#include <ATen/ops/zeros.h>

#include <cstdlib>
#include <map>
#include <optional>
#include <mutex>
#include <vector>
#include <sstream>
#include <string>
#include <tuple>

#include "aten/conv3d.h"
#include "aten/kernel_launch.h"
#include "aten/matmul_ops.h"
#include "aten/op_common.h"
#include "aten/graph_guard.h"
#include "aten/tensor_stamp.h"
#include "conv2d.h"
#include "conv_depthwise.h"
#include "conv_fold.h"

namespace torch_ops_nn {

TORCH_OPS_NN_REGISTER_KERNEL(conv2d_kernel);
TORCH_OPS_NN_REGISTER_KERNEL(conv2d_dw_kernel);
TORCH_OPS_NN_REGISTER_KERNEL(conv_fold_kernel);
TORCH_OPS_NN_REGISTER_KERNEL(conv_depthwise_kernel);

namespace {

constexpr c10::MemoryFormat kCL = c10::MemoryFormat::ChannelsLast;

struct Geom {
  int64_t n, c, h, w, cout, groups, kh, kw, sh, sw, dh, dw, pt, pb, pl, pr;
};

int64_t OutSize(int64_t in, int64_t p0, int64_t p1, int64_t k, int64_t s, int64_t d) {
  return (in + p0 + p1 - ((k - 1) * d + 1)) / s + 1;
}

// NCHW -> NHWC: the runtime's strided copy (a tiled transpose; several times faster than the
// identity matmul on the cube this used to be).
at::Tensor ToChannelsLast(const at::Tensor& x) { return x.contiguous(kCL); }

// The kernel launch. x: [n, c, h, w] (any layout; made NHWC), w_cl: weights whose memory is
// [cout][kh][kw][cg] (contiguous unless w_co_stride says otherwise). Returns the output (NHWC
// for out_cl, else NCHW) or, with `residual_out` given, writes there.
// w_frac: the same weights in the kernel's L1 fractal order (WeightFractal), or undefined.
at::Tensor ConvCore(const char* op, const at::Tensor& x_in, const at::Tensor& w_cl, const Geom& g, bool flip,
                    bool out_cl, const at::Tensor& scale, const at::Tensor& shift, const at::Tensor& residual,
                    bool relu, int64_t x_batch = -1, int64_t w_co_stride = -1, const at::Tensor& w_frac = {},
                    bool x_5hd = false) {
  const int64_t ho = OutSize(g.h, g.pt, g.pb, g.kh, g.sh, g.dh), wo = OutSize(g.w, g.pl, g.pr, g.kw, g.sw, g.dw);
  // Load3D pads less than the dilated kernel; callers move any excess out (ExcessPadding, GradInput).
  const int64_t effh = (g.kh - 1) * g.dh + 1, effw = (g.kw - 1) * g.dw + 1;
  TORCH_CHECK(g.pt < effh && g.pb < effh && g.pl < effw && g.pr < effw, op, ": internal error: padding (", g.pt, ", ",
              g.pb, ", ", g.pl, ", ", g.pr, ") reaches the dilated kernel's size ", effh, "x", effw);
  const c10::DeviceIndex dev = x_in.device().index();
  at::Tensor out = NpuEmpty({g.n, g.cout, ho, wo}, x_in.scalar_type(), dev,
                            out_cl ? kCL : c10::MemoryFormat::Contiguous);
  if (out.numel() == 0) return out;
  if (!x_5hd && x_batch < 0 && g.groups == 1 && g.kh == 1 && g.kw == 1 && (g.sh > 1 || g.sw > 1) && g.pt == 0 && g.pb == 0 &&
      g.pl == 0 && g.pr == 0 && !flip) {
    // 1x1 with a stride: subsample the input (a strided device copy), then the stride-1 GEMM.
    at::Tensor xs = x_in.slice(2, 0, c10::nullopt, g.sh).slice(3, 0, c10::nullopt, g.sw)
                        .contiguous(out_cl ? kCL : c10::MemoryFormat::Contiguous);
    Geom g1 = g;
    g1.h = xs.size(2);
    g1.w = xs.size(3);
    g1.sh = g1.sw = 1;
    return ConvCore(op, xs, w_cl, g1, false, out_cl, scale, shift, residual, relu, -1, -1, w_frac);
  }
  if (!x_5hd && x_batch < 0 && g.groups == 1 && g.kh == 1 && g.kw == 1 && g.sh == 1 && g.sw == 1 && g.pt == 0 &&
      g.pb == 0 && g.pl == 0 && g.pr == 0) {
    // A 1x1, stride-1 convolution is a plain GEMM: no img2col, and NCHW needs no layout change.
    const int64_t hw = g.h * g.w;
    at::Tensor wm = w_cl.reshape({1, g.cout, g.c});  // [cout][c]
    MatmulEpilogue ep;
    ep.scale = scale;
    ep.shift = shift;
    ep.relu = relu;
    ep.hf32 = ConvAllowHf32() ? 1 : 0;
    if (!out_cl) {
      ep.rowwise = true;
      if (residual.defined()) ep.residual = residual.contiguous().view({g.n, g.cout, hw});
      CubeBatchedMatmul(op, wm, x_in.contiguous().view({g.n, g.c, hw}), out.view({g.n, g.cout, hw}), ep);
    } else {
      if (residual.defined()) ep.residual = residual.contiguous(kCL).permute({0, 2, 3, 1}).reshape({1, g.n * hw, g.cout});
      // The fractal weights [c1][1][cout16][C0] are B^T in the kernel's L1 panel order.
      if (w_frac.defined()) ep.b_nz = w_frac.view({-1});
      at::Tensor xm = x_in.contiguous(kCL).permute({0, 2, 3, 1}).reshape({1, g.n * hw, g.c});
      CubeBatchedMatmul(op, xm, wm.transpose(1, 2), out.permute({0, 2, 3, 1}).reshape({1, g.n * hw, g.cout}), ep);
    }
    return out;
  }
  // NCHW output puts the pixels on the cube's N side, in 16-column fractals: with few pixels (a
  // 7x7 map: 49 -> 64 columns) that pads away a quarter of the multiply-adds. Such convs run with the
  // pixels on the M side (the channels_last form) and transpose their small output instead.
  const int64_t pix = ho * wo;
  if (!out_cl && !residual.defined() && x_batch < 0 && (pix + 15) / 16 * 16 - pix > pix / 8)
    return ConvCore(op, x_in, w_cl, g, flip, true, scale, shift, residual, relu, x_batch, w_co_stride, w_frac, x_5hd)
        .contiguous();
  const bool x_ready = x_batch >= 0 || x_5hd;
  at::Tensor x = x_ready ? x_in : ToChannelsLast(x_in);
  const auto& soc = SocInfoFor(dev);
  auto t = npu_kernels::conv2d_tiling(uint32_t(g.n), uint32_t(g.c), uint32_t(g.h), uint32_t(g.w), uint32_t(g.cout),
                                      uint32_t(g.groups), uint32_t(g.kh), uint32_t(g.kw), uint32_t(g.sh),
                                      uint32_t(g.sw), uint32_t(g.dh), uint32_t(g.dw), uint32_t(g.pt), uint32_t(g.pb),
                                      uint32_t(g.pl), uint32_t(g.pr), uint32_t(x.element_size()), out_cl ? 0 : 1, soc);
  t.hf32 = ConvAllowHf32() && pix >= kHf32MinConvPixels ? 1u : 0u;
  TORCH_CHECK(t.ok, op, ": no cube blocking fits the SoC's L1 (", soc.l1_bytes, " B) for an input row of width ", g.w,
              " with ", g.c / g.groups, " channels per group and a ", g.kh, "x", g.kw, " kernel");
  if (x_batch >= 0) t.x_batch = uint64_t(x_batch);
  t.x_5hd = x_5hd;
  if (w_co_stride >= 0) t.w_co_stride = uint64_t(w_co_stride);
  t.flip = flip;
  const bool frac = w_frac.defined() && !flip && w_co_stride < 0;
  if (frac) {
    t.w_fractal = 1;
    t.w_cog16 = uint32_t(w_frac.size(3));
  }
  t.has_scale = scale.defined();
  t.has_shift = shift.defined();
  t.relu = relu;
  at::Tensor res;
  if (residual.defined()) {
    res = residual.contiguous(out_cl ? kCL : c10::MemoryFormat::Contiguous);
    t.has_residual = 1;
  }
  using Fn = void (*)(uint8_t*, uint8_t*, uint8_t*, uint8_t*, uint8_t*, uint8_t*, uint8_t*);
  Fn kernel = PickFloatKernel<Fn>(op, x.scalar_type(), &conv2d_kernel_float, &conv2d_kernel_half, &conv2d_kernel_bf16);
  KernelLaunch launch{"conv2d_kernel", ascendc_host::CoreType::AIC, t.block_dim, dev};
  if (LogDebugEnabled()) {
    std::ostringstream d;
    d << op << " x=" << x.sizes() << " k=" << g.kh << "x" << g.kw << " s=" << g.sh << " groups=" << g.groups
      << " form=" << (out_cl ? 0 : 1) << " tile=" << t.tile_pix << "x" << t.tile_co << " c1_chunk=" << t.c1_chunk
      << " blockDim=" << t.block_dim << (t.w_fractal ? " weights=fractal" : "") << (x_5hd ? " input=5HD" : "");
    launch.detail = d.str();
  }
  void* none = nullptr;
  LaunchKernel(std::move(launch), kernel, t, x.data_ptr(), frac ? w_frac.data_ptr() : w_cl.data_ptr(), out.data_ptr(),
               scale.defined() ? scale.data_ptr() : none, shift.defined() ? shift.data_ptr() : none,
               res.defined() ? res.data_ptr() : none);
  return out;
}

std::string Dims(c10::IntArrayRef s) {
  std::ostringstream o;
  o << s;
  return o.str();
}

void CheckConvArgs(const char* op, const at::Tensor& x, const at::Tensor& w, const ConvParams& p) {
  TORCH_CHECK(x.dim() == 4, op, ": expected a 4-D input [N, C, H, W], got a ", x.dim(), "-D tensor of shape ",
              x.sizes(), " (npu convolutions: 1-D, 2-D and 3-D, transposed too)");
  TORCH_CHECK(w.dim() == 4, op, ": expected a 4-D weight [Cout, C/groups, kh, kw], got a ", w.dim(),
              "-D tensor of shape ", w.sizes());
  CheckFloatDtype(op, "input", x);
  TORCH_CHECK_TYPE(w.scalar_type() == x.scalar_type(), op, ": input dtype ", x.scalar_type(),
                   " and weight dtype ", w.scalar_type(), " differ");
  TORCH_CHECK(p.groups >= 1, op, ": groups must be positive, got ", p.groups);
  TORCH_CHECK(x.size(1) == w.size(1) * p.groups, op, ": given groups=", p.groups, ", weight of size ", w.sizes(),
              " expects the input to have ", w.size(1) * p.groups, " channels, but the input of size ", x.sizes(),
              " has ", x.size(1));
  TORCH_CHECK(w.size(0) % p.groups == 0, op, ": the weight's ", w.size(0), " output channels are not divisible by groups=",
              p.groups);
  const char* hw[2] = {"height", "width"};
  for (int i = 0; i < 2; ++i) {
    const int64_t k = w.size(2 + i), s = p.stride[i], pad = p.padding[i], d = p.dilation[i];
    TORCH_CHECK(s >= 1 && s <= 63, op, ": stride ", s, " (", hw[i], ") must be in [1, 63] (Load3D)");
    TORCH_CHECK(d >= 1 && d <= 255, op, ": dilation ", d, " (", hw[i], ") must be in [1, 255] (Load3D)");
    TORCH_CHECK(pad >= 0 && pad <= 255, op, ": padding ", pad, " (", hw[i], ") must be in [0, 255] (Load3D)");
    TORCH_CHECK(k >= 1 && k <= 511, op, ": kernel ", hw[i], " ", k, " must be in [1, 511] (Load3D)");
    const int64_t eff = (k - 1) * d + 1;
    const int64_t in = x.size(2 + i);
    TORCH_CHECK(in + 2 * pad >= eff, op, ": output ", hw[i], " (", in, " + 2*", pad, " - ", d, "*(", k, "-1) - 1)/", s,
                " + 1 is not positive: the padded input ", hw[i], " ", in + 2 * pad,
                " is smaller than the dilated kernel ", eff);
    TORCH_CHECK(pad < eff, op, ": padding ", pad, " (", hw[i], ") must be smaller than the dilated kernel size ", eff,
                " on npu");
  }
  TORCH_CHECK(w.size(2) * w.size(3) * w.size(1) <= 65535 && x.size(1) <= 65535, op,
              ": kh*kw*C/groups = ", w.size(2) * w.size(3) * w.size(1), " must be at most 65535 (Nd2Nz strides)");
}

// ---- cached weight copies -------------------------------------------------------------------
// The kernel reads weights as [cout][kh][kw][cg] (or, for spatial kernels, in its L1 fractal order);
// an NCHW (OIHW) weight needs a strided copy, which at batch 1 costs about as much as the
// convolution itself. The copy is cached per weight
// tensor and checked against its version counter, storage, sizes and strides, so an in-place
// update (optimizer step, load_state_dict) is never missed. Not used for weights autograd
// tracks (requires_grad under grad mode, i.e. training). Entries hold a weak reference: a freed weight's copy is dropped at the
// next conv call or torch.npu.empty_cache(). Inference tensors have no version counter and are
// copied on every call.
// Caveat: writes through `w.data` (a separate version counter) are not seen; set
// TORCH_OPS_NN_CONV_WEIGHT_CACHE=0 to copy on every call.
struct CachedCopy {
  TensorStamp stamp;
  at::Tensor copy;
  int64_t groups;  // the grouping the copy was laid out for (the fractal order depends on it)
};
using CopyCache = std::map<const c10::TensorImpl*, CachedCopy>;
std::mutex g_wcache_mu;
// Never destroyed: device tensors must not be freed during static destruction at exit.
CopyCache& g_wcache = *new CopyCache;  // channels_last copies (WeightChannelsLast)
CopyCache& g_fcache = *new CopyCache;  // fractal-order copies (WeightFractal)
uint64_t g_wcache_bytes = 0;           // both caches share one budget
constexpr uint64_t kMaxWeightCacheBytes = uint64_t(1) << 30;

// Whether w's copies may be cached: the cache is on and w has a version counter that autograd does
// not bump every step (training weights change every step anyway). While an npu graph captures, the
// copy is a guarded region of the graph instead (graph_guard.h).
bool Cacheable(const at::Tensor& w) {
  static const bool enabled = [] {
    const char* v = std::getenv("TORCH_OPS_NN_CONV_WEIGHT_CACHE");
    return !(v && v[0] == '0');
  }();
  return enabled && TensorStamp::Stampable(w) && !(c10::GradMode::is_enabled() && w.requires_grad());
}

// w's copy in `cache` if its stamp (and grouping) still matches, else undefined (a stale copy is
// dropped). Every call first drops the copies of weights that no longer exist, in both caches, so a
// freed weight's device memory comes back at the next conv call, hit or miss.
at::Tensor CacheFind(CopyCache& cache, const at::Tensor& w, int64_t groups) {
  std::lock_guard<std::mutex> g(g_wcache_mu);
  for (CopyCache* c : {&g_wcache, &g_fcache}) {
    for (auto jt = c->begin(); jt != c->end();) {
      if (jt->second.stamp.Expired()) {
        g_wcache_bytes -= uint64_t(jt->second.copy.nbytes());
        jt = c->erase(jt);
      } else {
        ++jt;
      }
    }
  }
  auto it = cache.find(w.unsafeGetTensorImpl());
  if (it == cache.end()) return {};
  if (it->second.stamp.Matches(&w) && it->second.groups == groups) return it->second.copy;
  g_wcache_bytes -= uint64_t(it->second.copy.nbytes());
  cache.erase(it);
  return {};
}

void CacheInsert(CopyCache& cache, const at::Tensor& w, const at::Tensor& copy, int64_t groups) {
  const uint64_t bytes = uint64_t(copy.nbytes());
  std::lock_guard<std::mutex> g(g_wcache_mu);
  if (bytes > kMaxWeightCacheBytes / 4 || cache.count(w.unsafeGetTensorImpl())) return;
  if (g_wcache_bytes + bytes > kMaxWeightCacheBytes) {
    g_wcache.clear();
    g_fcache.clear();
    g_wcache_bytes = 0;
  }
  g_wcache_bytes += bytes;
  cache.emplace(w.unsafeGetTensorImpl(), CachedCopy{TensorStamp(w), copy, groups});
}

at::Tensor WeightChannelsLast(const at::Tensor& w) {
  if (!Cacheable(w)) return w.contiguous(kCL);
  if (npu_rt::Graph* graph = CapturingGraph()) return GuardedCopy(graph, {1}, {&w}, [&] { return w.contiguous(kCL); });
  if (at::Tensor hit = CacheFind(g_wcache, w, 0); hit.defined()) return hit;
  if (w.is_contiguous(kCL)) return w.contiguous(kCL);  // nothing to copy
  at::Tensor cl = w.contiguous(kCL);
  CacheInsert(g_wcache, w, cl, 0);
  return cl;
}

// The weights of a convolution whose kernel width is unfolded into the channels (see
// UnfoldWidthIntoChannels): w'[o][c*kw + j][i][0] = w[o][c][i][j], laid out [o][i][0][c*kw + j]
// (channels_last): one copy of w permuted to [o][i][c][j] is that memory.
at::Tensor UnfoldWeightWidth(const at::Tensor& w) {
  const int64_t cout = w.size(0), ck = w.size(1) * w.size(3), kh = w.size(2);
  return w.permute({0, 2, 1, 3}).contiguous().as_strided({cout, ck, kh, 1}, {kh * ck, 1, ck, ck});
}

// The weights in the conv kernel's L1 order, [groups][c1g][taps][cog16][C0] with zero padding, cached
// like WeightChannelsLast; undefined for weights autograd tracks (the kernel then gathers the
// 32-byte pieces with Nd2Nz itself). With `unfold_width`, those of UnfoldWeightWidth(w) (groups 1),
// cached under w.
at::Tensor MakeWeightFractal(const at::Tensor& w_in, int64_t groups, bool unfold_width) {
  const at::Tensor w = unfold_width ? UnfoldWeightWidth(w_in) : w_in;
  const int64_t c0 = 32 / int64_t(w.element_size());
  const int64_t cout = w.size(0), cg = w.size(1), taps = w.size(2) * w.size(3), cog = cout / groups;
  const int64_t c1g = (cg + c0 - 1) / c0, cog16 = (cog + 15) / 16 * 16;
  at::Tensor f = NpuEmpty({groups, c1g, taps, cog16, c0}, w.scalar_type(), w.device().index());
  f.zero_();
  at::Tensor src = w.reshape({groups, cog, cg, taps});
  if (cg != c1g * c0) {
    at::Tensor p = NpuEmpty({groups, cog, c1g * c0, taps}, w.scalar_type(), w.device().index());
    p.zero_();
    p.narrow(2, 0, cg).copy_(src);
    src = p;
  }
  f.permute({0, 3, 1, 4, 2}).narrow(1, 0, cog).copy_(src.reshape({groups, cog, c1g, c0, taps}));
  return f;
}
at::Tensor WeightFractal(const at::Tensor& w_in, int64_t groups, bool unfold_width = false) {
  if (!Cacheable(w_in)) return {};
  if (npu_rt::Graph* graph = CapturingGraph())
    return GuardedCopy(graph, {2, groups, unfold_width}, {&w_in},
                       [&] { return MakeWeightFractal(w_in, groups, unfold_width); });
  const int64_t tag = unfold_width ? -1 : groups;  // the cache's layout key
  if (at::Tensor hit = CacheFind(g_fcache, w_in, tag); hit.defined()) return hit;
  at::Tensor f = MakeWeightFractal(w_in, groups, unfold_width);
  CacheInsert(g_fcache, w_in, f, tag);
  return f;
}

bool WantChannelsLast(const at::Tensor& x, const at::Tensor& w) {
  return x.suggest_memory_format() == kCL || w.suggest_memory_format() == kCL;
}

// Few input channels (a network's first layer: 3 channels, 7x7 taps) pad every tap's channels to
// the cube's C0 (8 float / 16 half): 2.7x the multiply-adds for RGB. Unfolding the kernel's width
// into the channels turns conv(x, w[O][C][kh][kw]) into conv(x', w'[O][C*kw][kh][1]) with
// x'[n][c*kw+j][h][wo] = x_padded[n][c][h][wo*sw + j]: the same sums over C*kw*kh products, with
// C*kw channels padded once per row of taps. x' is written channels_last (what the cube reads).
// Returns an undefined tensor when the unfold does not save at least a third of the K extent.
struct Unfolded {
  at::Tensor x, w, w_frac;  // w_frac: w in the kernel's fractal order (cached), or undefined
  Geom g;
  bool x_5hd = false;  // x is [n][c1][h][wo][c0] (conv_fold_kernel), else channels_last
};

// A kernel's offset table for one geometry (`key`, `n` uint32 entries written by `fill`), built on
// the host once (a host tensor: no device memory stays behind) and copied to the device per call,
// without waiting: the copy task holds the (never modified) host table until it has run. Pinned, so
// that copy reads it in place (a non_blocking copy stages a pageable source at the call).
template <typename Fill>
at::Tensor CachedOffsetTable(const char* kind, std::vector<uint32_t> key, int64_t n, Fill&& fill,
                             c10::DeviceIndex dev) {
  static std::mutex mu;
  static auto& cache = *new std::map<std::pair<std::string, std::vector<uint32_t>>, at::Tensor>;
  const auto k = std::make_pair(std::string(kind), std::move(key));
  at::Tensor host;
  {
    std::lock_guard<std::mutex> g(mu);
    auto it = cache.find(k);
    if (it != cache.end()) {
      host = it->second;
    } else {
      host = at::empty({n}, at::TensorOptions().dtype(at::kInt).pinned_memory(true));
      fill(reinterpret_cast<uint32_t*>(host.data_ptr<int32_t>()));
      if (cache.size() > 128) cache.clear();
      cache.emplace(k, host);
    }
  }
  return host.to(at::Device(c10::DeviceType::PrivateUse1, dev), /*non_blocking=*/true);
}

// The Gather offsets of conv_fold_kernel for one geometry.
at::Tensor FoldOffsets(const npu_kernels::ConvFoldTiling& t, c10::DeviceIndex dev) {
  return CachedOffsetTable("fold", {t.c, t.w, t.kw, t.sw, t.pl, t.pr, t.x_cl, t.elem_bytes, t.rows},
                           int64_t(t.table_elems), [&](uint32_t* o) { npu_kernels::conv_fold_offsets(t, o); }, dev);
}

// x (NCHW or NHWC, made contiguous in the nearer of the two) folded into 5HD by conv_fold_kernel,
// or undefined when the fold does not fit the UB or a DataCopy stride.
at::Tensor FoldWidth5hd(const at::Tensor& x_in, const Geom& g, int64_t wo) {
  const bool cl = x_in.suggest_memory_format() == kCL && !x_in.is_contiguous();
  const at::Tensor x = x_in.contiguous(cl ? kCL : c10::MemoryFormat::Contiguous);
  const c10::DeviceIndex dev = x.device().index();
  const auto t = npu_kernels::conv_fold_tiling(uint32_t(g.n), uint32_t(g.c), uint32_t(g.h), uint32_t(g.w),
                                               uint32_t(g.kw), uint32_t(g.sw), uint32_t(g.pl), uint32_t(g.pr),
                                               cl ? 1u : 0u, uint32_t(x.element_size()), SocInfoFor(dev));
  if (!t.ok || int64_t(t.wo) != wo || uint64_t(g.h) * uint64_t(wo) > 65535) return {};
  at::Tensor y = NpuEmpty({g.n, int64_t(t.c1), g.h, wo, int64_t(t.c0)}, x.scalar_type(), dev);
  const at::Tensor off = FoldOffsets(t, dev);
  using Fn = void (*)(uint8_t*, uint8_t*, uint8_t*, uint8_t*);
  Fn kernel = PickFloatKernel<Fn>("conv2d", x.scalar_type(), &conv_fold_kernel_float, &conv_fold_kernel_half,
                                  &conv_fold_kernel_bf16);
  KernelLaunch launch{"conv_fold_kernel", ascendc_host::CoreType::AIV, t.block_dim, dev};
  if (LogDebugEnabled()) {
    std::ostringstream d;
    d << "x=" << x.sizes() << (cl ? " NHWC" : " NCHW") << " kw=" << g.kw << " sw=" << g.sw << " -> 5HD " << y.sizes()
      << " rows=" << t.rows;
    launch.detail = d.str();
  }
  LaunchKernel(std::move(launch), kernel, t, x.data_ptr(), off.data_ptr(), y.data_ptr());
  return y;
}

std::optional<Unfolded> UnfoldWidthIntoChannels(const at::Tensor& x, const at::Tensor& w, const Geom& g) {
  if (g.groups != 1 || g.dh != 1 || g.dw != 1 || g.kw < 2) return std::nullopt;
  const int64_t c0 = 32 / int64_t(x.element_size());
  auto up = [&](int64_t v) { return (v + c0 - 1) / c0 * c0; };
  const int64_t k_old = up(g.c) * g.kh * g.kw, k_new = up(g.c * g.kw) * g.kh;
  if (3 * k_new > 2 * k_old) return std::nullopt;
  const int64_t wo = OutSize(g.w, g.pl, g.pr, g.kw, g.sw, g.dw), wp = g.w + g.pl + g.pr;
  if (wo <= 0) return std::nullopt;
  // The unfolded weights in fractal order from the cache (spatial kernels, as in ConvForward);
  // otherwise a channels_last copy per call. With the fractal copy the kernel never reads `wu`, which
  // is then only its shape (a view of the larger fractal copy).
  const int64_t ck = g.c * g.kw;
  const at::Tensor w_frac = g.kh > 1 ? WeightFractal(w, 1, /*unfold_width=*/true) : at::Tensor();
  const at::Tensor wu = w_frac.defined() ? w_frac.as_strided({g.cout, ck, g.kh, 1}, {g.kh * ck, 1, ck, ck})
                                         : UnfoldWeightWidth(w);
  Geom gu = g;
  gu.c = ck;
  gu.w = wo;
  gu.kw = 1;
  gu.sw = 1;
  gu.pl = gu.pr = 0;
  // x' in 5HD straight from x on the vector cores.
  if (at::Tensor x5 = FoldWidth5hd(x, g, wo); x5.defined()) return Unfolded{x5, wu, w_frac, gu, true};
  // Otherwise by two copies. Zero-padded along W only (H padding stays the conv's), contiguous NCHW:
  // only the pad columns are filled, the rest is the copy of x.
  at::Tensor xp = NpuEmpty({g.n, g.c, g.h, wp}, x.scalar_type(), x.device().index());
  if (g.pl > 0) xp.narrow(3, 0, g.pl).zero_();
  if (g.pr > 0) xp.narrow(3, g.pl + g.w, g.pr).zero_();
  xp.narrow(3, g.pl, g.w).copy_(x);
  at::Tensor xu = NpuEmpty({g.n, g.c * g.kw, g.h, wo}, x.scalar_type(), x.device().index(), kCL);
  // xu (channels_last) seen as [n][c][j][h][wo]; xp seen as [n][c][j][h][wo] -> xp[n][c][h][wo*sw + j].
  xu.as_strided({g.n, g.c, g.kw, g.h, wo}, {g.h * wo * ck, g.kw, 1, wo * ck, ck})
      .copy_(xp.as_strided({g.n, g.c, g.kw, g.h, wo}, {g.c * g.h * wp, g.h * wp, 1, wp, g.sw}));
  return Unfolded{xu, wu, w_frac, gu};
}

// The strided depthwise kernel's Gather offsets for one geometry.
at::Tensor DepthwiseOffsets(const npu_kernels::ConvDepthwiseTiling& t, c10::DeviceIndex dev) {
  return CachedOffsetTable("depthwise", {t.u_rows, t.pitch, t.sh, t.sw, t.bpitch, t.wo}, int64_t(t.u_rows) * t.pitch,
                           [&](uint32_t* o) { npu_kernels::conv_depthwise_offsets(t, o); }, dev);
}

// A depthwise convolution (groups = C = Cout), with the epilogue's per-channel scale / shift / ReLU,
// on the vector cores (conv_depthwise.h), which read and write NCHW (a channels_last input and output
// cost a copy each, far less than the cube's one-channel GEMMs); undefined when it does not apply (a
// residual, a padding or size the kernel does not take).
bool IsDepthwise(const Geom& g) { return g.groups == g.c && g.cout == g.c && g.groups > 1; }

npu_kernels::ConvDepthwiseTiling DepthwiseTiling(const Geom& g, uint32_t elem_bytes, bool grad_weight,
                                                 c10::DeviceIndex dev) {
  npu_kernels::ConvDepthwiseTiling t{};
  for (int64_t v : {g.n, g.c, g.h, g.w, g.kh, g.kw, g.sh, g.sw, g.dh, g.dw, g.pt, g.pb, g.pl, g.pr})
    if (v < 0 || v > int64_t(1) << 30) return t;  // ok = 0
  return npu_kernels::conv_depthwise_tiling(uint32_t(g.n), uint32_t(g.c), uint32_t(g.h), uint32_t(g.w), uint32_t(g.kh),
                                            uint32_t(g.kw), uint32_t(g.sh), uint32_t(g.sw), uint32_t(g.dh),
                                            uint32_t(g.dw), uint32_t(g.pt), uint32_t(g.pb), uint32_t(g.pl),
                                            uint32_t(g.pr), elem_bytes, grad_weight, SocInfoFor(dev));
}

using DepthwiseFn = void (*)(uint8_t*, uint8_t*, uint8_t*, uint8_t*, uint8_t*, uint8_t*, uint8_t*);

void LaunchDepthwise(const char* what, const npu_kernels::ConvDepthwiseTiling& t, const at::Tensor& x, const Geom& g,
                     void* w, void* scale, void* shift, void* y) {
  const c10::DeviceIndex dev = x.device().index();
  const at::Tensor off = t.strided ? DepthwiseOffsets(t, dev) : at::Tensor();
  DepthwiseFn kernel = PickFloatKernel<DepthwiseFn>("conv2d", x.scalar_type(), &conv_depthwise_kernel_float,
                                                    &conv_depthwise_kernel_half, &conv_depthwise_kernel_bf16);
  KernelLaunch launch{"conv_depthwise_kernel", ascendc_host::CoreType::AIV, t.block_dim, dev};
  if (LogDebugEnabled()) {
    std::ostringstream d;
    d << what << " x=" << x.sizes() << " k=" << g.kh << "x" << g.kw << " s=" << g.sh << "x" << g.sw
      << " rows=" << t.rows << " pitch=" << t.pitch;
    launch.detail = d.str();
  }
  LaunchKernel(std::move(launch), kernel, t, x.data_ptr(), w, scale, shift, off.defined() ? off.data_ptr() : nullptr,
               y);
}

at::Tensor DepthwiseForward(const at::Tensor& x_in, const at::Tensor& w, const Geom& g, const at::Tensor& scale,
                            const at::Tensor& shift, const ConvEpilogue& e, bool out_cl, bool flip = false) {
  if (!IsDepthwise(g) || e.residual.defined() || g.n * g.c == 0) return {};
  const c10::DeviceIndex dev = x_in.device().index();
  auto t = DepthwiseTiling(g, uint32_t(x_in.element_size()), false, dev);
  if (!t.ok) return {};
  const at::Tensor x = Contiguous(x_in);
  t.has_scale = scale.defined() ? 1 : 0;
  t.has_shift = shift.defined() ? 1 : 0;
  t.relu = e.relu ? 1 : 0;
  t.flip = flip ? 1 : 0;
  const at::Tensor wf = w.scalar_type() == c10::kFloat ? Contiguous(w) : ScaleCast(w, 1.0, c10::kFloat);
  at::Tensor y = NpuEmpty({g.n, g.c, int64_t(t.ho), int64_t(t.wo)}, x.scalar_type(), dev);
  LaunchDepthwise("conv2d", t, x, g, wf.data_ptr(), scale.defined() ? scale.data_ptr() : nullptr,
                  shift.defined() ? shift.data_ptr() : nullptr, y.data_ptr());
  if (out_cl) return y.contiguous(kCL);
  return y;
}


// Padding of the dilated kernel's size or more (PyTorch allows it: the border rows of a convolution's
// output then see only zeros; a transposed convolution's output is cropped past its full extent). The
// cube's Load3D pads less than the kernel, so the excess e = pad - (eff - 1) per dim is moved out of the
// kernel: explicit zeros around a convolution's input, an extra crop of a transposed one's output.
// Returns e ({0, 0} when none) and lowers `p.padding` by it.
std::array<int64_t, 2> ExcessPadding(const at::Tensor& weight, ConvParams& p) {
  std::array<int64_t, 2> e{0, 0};
  if (weight.dim() != 4) return e;
  for (int i = 0; i < 2; ++i) {
    const int64_t eff = (weight.size(2 + i) - 1) * p.dilation[i] + 1;
    if (eff >= 1 && p.padding[i] >= eff) e[i] = p.padding[i] - (eff - 1);
    p.padding[i] -= e[i];
  }
  return e;
}
at::Tensor PadHW(const at::Tensor& t, std::array<int64_t, 2> e) {
  return at::constant_pad_nd(t, {e[1], e[1], e[0], e[0]}, 0);
}
at::Tensor CropHW(const at::Tensor& t, std::array<int64_t, 2> e) {
  return t.narrow(2, e[0], t.size(2) - 2 * e[0]).narrow(3, e[1], t.size(3) - 2 * e[1]).contiguous(t.suggest_memory_format());
}
}  // namespace

at::Tensor ConvForward(const at::Tensor& x, const at::Tensor& w, const ConvParams& p, const ConvEpilogue& e) {
  const char* op = "conv2d";
  if (x.dim() == 4 && w.dim() == 4) {  // (the fused ops come here directly)
    ConvParams q = p;
    if (const auto ex = ExcessPadding(w, q); ex[0] || ex[1]) return ConvForward(PadHW(x, ex), w, q, e);
  }
  CheckSameNpuDevice(op, {{"input", &x}, {"weight", &w}, {"bias", &e.bias}, {"scale", &e.scale}, {"shift", &e.shift},
                          {"residual", &e.residual}});
  CheckConvArgs(op, x, w, p);
  const int64_t cout = w.size(0);
  TORCH_CHECK(!(e.bias.defined() && e.scale.defined()), op,
              ": pass either bias or scale/shift in the epilogue (fold the bias into shift: shift + bias * scale)");
  auto vec = [&](const at::Tensor& v, const char* name) -> at::Tensor {
    if (!v.defined()) return v;
    TORCH_CHECK(v.dim() == 1 && v.size(0) == cout, op, ": ", name, " must have shape [", cout, "] (one per output channel), got ",
                v.sizes());
    TORCH_CHECK_TYPE(v.scalar_type() == c10::kFloat || v.scalar_type() == x.scalar_type(), op, ": ", name,
                     " has dtype ", v.scalar_type(), "; expected Float or the input's ", x.scalar_type());
    return v.scalar_type() == c10::kFloat ? Contiguous(v) : ScaleCast(v, 1.0, c10::kFloat);
  };
  at::Tensor scale = vec(e.scale, "scale"), shift = vec(e.shift, "shift"), bias = vec(e.bias, "bias");
  if (bias.defined()) {
    TORCH_CHECK(!shift.defined(), op, ": pass either bias or shift in the epilogue (fold one into the other)");
    shift = bias;
  }
  Geom g{x.size(0), x.size(1), x.size(2), x.size(3), cout, p.groups, w.size(2), w.size(3), p.stride[0],
         p.stride[1], p.dilation[0], p.dilation[1], p.padding[0], p.padding[0], p.padding[1], p.padding[1]};
  const bool out_cl = WantChannelsLast(x, w);
  if (e.residual.defined()) {
    const int64_t ho = OutSize(g.h, g.pt, g.pb, g.kh, g.sh, g.dh), wo = OutSize(g.w, g.pl, g.pr, g.kw, g.sw, g.dw);
    TORCH_CHECK(e.residual.sizes() == c10::IntArrayRef({g.n, cout, ho, wo}), op, ": residual of shape ",
                e.residual.sizes(), " must have the output shape ", Dims({g.n, cout, ho, wo}));
    TORCH_CHECK_TYPE(e.residual.scalar_type() == x.scalar_type(), op, ": residual dtype ", e.residual.scalar_type(),
                     " must be the input's ", x.scalar_type());
  }
  if (at::Tensor y = DepthwiseForward(x, w, g, scale, shift, e, out_cl); y.defined()) return y;
  if (auto u = UnfoldWidthIntoChannels(x, w, g))
    return ConvCore(op, u->x, u->w, u->g, false, out_cl, scale, shift, e.residual, e.relu, -1, -1, u->w_frac, u->x_5hd);
  // Weights as [cout][kh][kw][cg] (a no-op for 1x1 kernels and channels_last weights).
  // Spatial kernels read a cached fractal-order copy when there is one (then no channels_last copy is
  // made: the kernel never reads w_cl).
  // 1x1 kernels (a GEMM) read it as their packed B when the output is channels_last.
  const bool one_by_one = g.kh * g.kw == 1;
  const at::Tensor w_frac = !one_by_one || (g.groups == 1 && out_cl) ? WeightFractal(w, g.groups) : at::Tensor();
  const at::Tensor w_cl = w_frac.defined() && !one_by_one ? w : WeightChannelsLast(w);
  return ConvCore(op, x, w_cl, g, false, out_cl, scale, shift, e.residual, e.relu, -1, -1, w_frac);
}

namespace {

std::array<int64_t, 2> Pair(c10::IntArrayRef v, const char* op, const char* name) {
  TORCH_CHECK(v.size() == 2 || v.size() == 1, op, ": ", name, " must have 2 values for a 2-D convolution, got ",
              v.size(), " (only 2-D convolution is supported on npu)");
  return v.size() == 2 ? std::array<int64_t, 2>{v[0], v[1]} : std::array<int64_t, 2>{v[0], v[0]};
}

at::Tensor ConvTransposeForward(const at::Tensor& x, const at::Tensor& w, const std::optional<at::Tensor>& bias,
                                const ConvParams& p, std::array<int64_t, 2> output_padding);

// What the fallback of a convolution of this dtype lacks, for its warning / error.
std::string DtypeReason(c10::ScalarType t) { return std::string(" for ") + c10::toString(t) + " operands"; }

at::Tensor convolution_overrideable(const at::Tensor& input, const at::Tensor& weight,
                                    const std::optional<at::Tensor>& bias, c10::IntArrayRef stride,
                                    c10::IntArrayRef padding, c10::IntArrayRef dilation, bool transposed,
                                    c10::IntArrayRef output_padding, int64_t groups) {
  const char* op = transposed ? "conv_transpose2d" : "conv2d";
  // float64 / complex (no such cube dtype) and integers run on the CPU fallback (as aten::convolution:
  // the CPU has no convolution_overrideable).
  const at::Tensor no_bias;
  const bool host_dtype = AnyHostOnlyDtype({&input, &weight, bias.has_value() ? &*bias : &no_bias}) ||
                          c10::isIntegralType(input.scalar_type(), /*includeBool=*/true);
  if (host_dtype)
    return CallCpuFallback("aten::convolution", "", {input, weight, bias, stride, padding, dilation, transposed,
                                                     output_padding, groups},
                           DtypeReason(input.scalar_type()).c_str())[0]
        .toTensor();
  if (input.dim() == 5)
    return transposed ? ConvTranspose3dForward(input, weight, bias, stride, padding, output_padding, dilation, groups)
                      : Conv3dForward(input, weight, bias, stride, padding, dilation, groups);
  TORCH_CHECK(input.dim() == 4, op, ": expected a 4-D input [N, C, H, W], got a ", input.dim(), "-D tensor of shape ",
              input.sizes(), " (npu convolutions: 1-D, 2-D and 3-D, transposed too)");
  ConvParams p;
  p.stride = Pair(stride, op, "stride");
  p.padding = Pair(padding, op, "padding");
  p.dilation = Pair(dilation, op, "dilation");
  p.groups = groups;
  if (transposed) {
    // Padding of the kernel's size or more: an extra crop of the output (a convolution's excess
    // padding is ConvForward's).
    if (const auto ex = ExcessPadding(weight, p); ex[0] || ex[1]) {
      const std::vector<int64_t> pad{p.padding[0], p.padding[1]};
      at::Tensor full =
          torch_ops_nn::convolution_overrideable(input, weight, bias, stride, pad, dilation, true, output_padding, groups);
      for (int i = 0; i < 2; ++i)
        TORCH_CHECK(full.size(2 + i) >= 2 * ex[i], op, ": output ", i ? "width" : "height", " ",
                    full.size(2 + i) - 2 * ex[i], " (padding ", p.padding[i] + ex[i], ") is negative");
      return CropHW(full, ex);
    }
    return ConvTransposeForward(input, weight, bias, p, Pair(output_padding, op, "output_padding"));
  }
  ConvEpilogue e;
  if (bias.has_value() && bias->defined()) {
    CheckSameNpuDevice(op, {{"input", &input}, {"bias", &*bias}});
    TORCH_CHECK_TYPE(bias->scalar_type() == input.scalar_type(), op, ": input dtype ", input.scalar_type(),
                     " and bias dtype ", bias->scalar_type(), " differ");
    e.bias = *bias;
  }
  return ConvForward(input, weight, p, e);
}

// grad_bias[c] = sum over n, h, w of grad_output[n, c, h, w], as GEMMs with ones vectors.
at::Tensor GradBias(const at::Tensor& go) {
  const int64_t n = go.size(0), c = go.size(1), hw = go.size(2) * go.size(3);
  const c10::DeviceIndex dev = go.device().index();
  const auto dt = go.scalar_type();
  at::Tensor out = NpuEmpty({c}, dt, dev);
  if (n * hw == 0) return out.zero_();
  if (go.suggest_memory_format() == kCL) {
    at::Tensor g2 = go.contiguous(kCL).permute({0, 2, 3, 1}).reshape({n * hw, c});  // [N*HW, C] view
    at::Tensor ones = NpuEmpty({1, n * hw}, dt, dev).fill_(1);
    at::Tensor r = out.view({1, 1, c});
    CubeBatchedMatmul("convolution_backward (grad_bias)", ones.unsqueeze(0), g2.unsqueeze(0), r);
    return out;
  }
  at::Tensor g2 = go.contiguous().view({n * c, hw});
  at::Tensor ones = NpuEmpty({hw, 1}, dt, dev).fill_(1);
  at::Tensor per = NpuEmpty({1, n * c, 1}, dt, dev);
  CubeBatchedMatmul("convolution_backward (grad_bias)", g2.unsqueeze(0), ones.unsqueeze(0), per);
  at::Tensor ones_n = NpuEmpty({1, 1, n}, dt, dev).fill_(1);
  CubeBatchedMatmul("convolution_backward (grad_bias)", ones_n, per.view({1, n, c}), out.view({1, 1, c}));
  return out;
}

// A grad_input convolution with very few output channels (the input channels of a network's first
// layer: 3) pads them to a 16-wide fractal on the cube: ~5x the multiply-adds, ResNet's stem 2.7x the
// CPU's time. For those, the flipped stride-1 convolution
//   part[ci, y, x] = sum_{co, i, j} g_pad[co, y + i, x + j] * w[ci, T0-1-i, T1-1-j, co]
// runs as one GEMM, cols[(ci, i, j), p] = sum_co w[ci, i, j, co] * g[co, p] (M = ci * taps, no
// padding to speak of), and a col2im: part[y, x] = sum_{i, j} cols[(i, j), (y + T0-1-i - pad_lo,
// x + T1-1-j - pad_lo')]. With g's rows widened to the full frame's width F (zero columns), tap
// (i, j)'s block lands on the flattened frame at offset i * F + j as one contiguous run per (n, ci)
// (a row's zero columns wrap onto the next row's left edge, adding nothing): one in-place add of a
// 2-D strided view per tap, no copies. g: [N, cout, Hg, Wg]; w: [cin, T0, T1, cout].
constexpr int64_t kColGradInputMaxChannels = 8;
at::Tensor ColGradInput(const at::Tensor& g, const at::Tensor& w, const int64_t pad_lo[2], const int64_t out[2]) {
  const int64_t n = g.size(0), cout = g.size(1), hg = g.size(2), wg = g.size(3);
  const int64_t cin = w.size(0), t0 = w.size(1), t1 = w.size(2);
  const c10::DeviceIndex dev = g.device().index();
  // The frame: every block's reach, and the crop (a padding beyond T - 1 leaves zero rows / columns).
  const int64_t fh = std::max(hg + t0 - 1, t0 - 1 - pad_lo[0] + out[0]);
  const int64_t fw = std::max(wg + t1 - 1, t1 - 1 - pad_lo[1] + out[1]);
  at::Tensor gw = NpuEmpty({n, cout, hg, fw}, g.scalar_type(), dev);
  gw.narrow(3, wg, fw - wg).zero_();
  gw.narrow(3, 0, wg).copy_(g);
  const int64_t run = hg * fw;
  at::Tensor cols = at::matmul(w.reshape({cin * t0 * t1, cout}), gw.view({n, cout, run}));  // [n, cin*taps, run]
  at::Tensor planes = cols.view({n * cin, t0 * t1, run});
  const int64_t frame = fh * fw + t1;  // + the last block's wrapped tail
  at::Tensor full = NpuEmpty({n * cin, frame}, g.scalar_type(), dev);
  full.zero_();
  for (int64_t i = 0; i < t0; ++i)
    for (int64_t j = 0; j < t1; ++j) full.narrow(1, i * fw + j, run).add_(planes.select(1, i * t1 + j));
  return full.narrow(1, 0, fh * fw)
      .view({n, cin, fh, fw})
      .narrow(2, t0 - 1 - pad_lo[0], out[0])
      .narrow(3, t1 - 1 - pad_lo[1], out[1]);
}

// grad_input: conv(upsample_s(grad_output), flip(W^T per group), stride 1, dilation d).
// The input's sizes `in_size` and whether the result is channels_last come from the caller (the
// convolution's input for its backward; the output for conv_transpose2d, which is this map).
at::Tensor GradInput(const at::Tensor& go, c10::IntArrayRef in_size, bool cl, const at::Tensor& weight,
                     const ConvParams& p) {
  const int64_t G = p.groups, cout = weight.size(0), cog = cout / G, cig = weight.size(1), cin = cig * G;
  const int64_t kh = weight.size(2), kw = weight.size(3);
  const int64_t H = in_size[2], W = in_size[3], ho = go.size(2), wo = go.size(3);
  const c10::ScalarType dt = go.scalar_type();
  const c10::DeviceIndex dev = go.device().index();
  at::Tensor gu = go;
  const int64_t sh = p.stride[0], sw = p.stride[1];
  if (kh == 1 && kw == 1 && (sh > 1 || sw > 1) && p.padding[0] == 0 && p.padding[1] == 0) {
    // 1x1 with a stride: the stride-1 gradient lands on every s-th input pixel, the rest is 0.
    ConvParams p1 = p;
    p1.stride = {1, 1};
    at::Tensor gs = GradInput(go, {in_size[0], in_size[1], ho, wo}, cl, weight, p1);
    at::Tensor gi = NpuEmpty(in_size, dt, dev, cl ? kCL : c10::MemoryFormat::Contiguous);
    gi.zero_();
    gi.slice(2, 0, c10::nullopt, sh).slice(3, 0, c10::nullopt, sw).narrow(2, 0, ho).narrow(3, 0, wo).copy_(gs);
    return gi;
  }
  if ((sh > 1 || sw > 1) && p.dilation[0] == 1 && p.dilation[1] == 1) {
    // Stride phases: the input pixels (a + sh*i, b + sw*j) receive grad_output through the taps
    // kh = (a + ph) mod sh (+ sh*t) only, a stride-1 convolution with that flipped sub-kernel.
    // Each phase writes its own pixels, so no work is spent on inserted zeros.
    struct Phase {
      int64_t a, b, r[2], taps[2], out[2], pad_lo[2], pad_hi[2], crop_lo[2], crop_hi[2];
      bool empty;
    };
    std::vector<Phase> phases;
    bool ok = true;
    const int64_t s2[2] = {sh, sw}, ksz[2] = {kh, kw}, insz[2] = {H, W}, gsz[2] = {ho, wo};
    for (int64_t a = 0; a < sh; ++a) {
      for (int64_t b = 0; b < sw; ++b) {
        Phase f{};
        f.a = a;
        f.b = b;
        const int64_t ph2[2] = {a, b};
        int64_t* r = f.r; int64_t* taps = f.taps; int64_t* out = f.out; int64_t* pad_lo = f.pad_lo;
        int64_t* pad_hi = f.pad_hi; int64_t* crop_lo = f.crop_lo; int64_t* crop_hi = f.crop_hi;
        bool empty = false;
        for (int i = 0; i < 2; ++i) {
          out[i] = (insz[i] - ph2[i] + s2[i] - 1) / s2[i];
          r[i] = (ph2[i] + p.padding[i]) % s2[i];
          taps[i] = ksz[i] > r[i] ? (ksz[i] - r[i] + s2[i] - 1) / s2[i] : 0;
          if (out[i] <= 0 || taps[i] == 0) { empty = true; break; }
          const int64_t q = (ph2[i] + p.padding[i] - r[i]) / s2[i];
          const int64_t lo = taps[i] - 1 - q;
          const int64_t hi = out[i] - gsz[i] - lo + taps[i] - 1;
          crop_lo[i] = lo < 0 ? -lo : 0;
          crop_hi[i] = hi < 0 ? -hi : 0;
          pad_lo[i] = lo < 0 ? 0 : lo;
          pad_hi[i] = hi < 0 ? 0 : hi;
          if (gsz[i] - crop_lo[i] - crop_hi[i] <= 0) { empty = true; break; }
          if (pad_lo[i] >= taps[i] || pad_hi[i] >= taps[i] || pad_hi[i] > 255) ok = false;
        }
        f.empty = empty;
        phases.push_back(f);
      }
    }
    if (ok) {
      at::Tensor wt_full = weight.contiguous().view({G, cog, cig, kh, kw}).permute({0, 2, 3, 4, 1}).contiguous()
                               .view({cin, kh, kw, cog});
      at::Tensor gi = NpuEmpty(in_size, dt, dev, cl ? kCL : c10::MemoryFormat::Contiguous);
      for (const Phase& f : phases) {
        const int64_t a = f.a, b = f.b;
        const int64_t* r = f.r; const int64_t* taps = f.taps; const int64_t* out = f.out;
        const int64_t* pad_lo = f.pad_lo; const int64_t* pad_hi = f.pad_hi;
        const int64_t* crop_lo = f.crop_lo; const int64_t* crop_hi = f.crop_hi;
        const bool empty = f.empty;
        at::Tensor dst = gi.slice(2, a, c10::nullopt, sh).slice(3, b, c10::nullopt, sw);
        if (empty) {
          if (dst.numel()) dst.zero_();
          continue;
        }
        at::Tensor gph = go.narrow(2, crop_lo[0], ho - crop_lo[0] - crop_hi[0])
                             .narrow(3, crop_lo[1], wo - crop_lo[1] - crop_hi[1]);
        at::Tensor wsub = wt_full.slice(1, r[0], c10::nullopt, sh).slice(2, r[1], c10::nullopt, sw).contiguous();
        if (G == 1 && cin <= kColGradInputMaxChannels) {
          dst.copy_(ColGradInput(gph, wsub, pad_lo, out));
          continue;
        }
        Geom g{gph.size(0), cout, gph.size(2), gph.size(3), cin, G, taps[0], taps[1], 1, 1, 1, 1,
               pad_lo[0], pad_hi[0], pad_lo[1], pad_hi[1]};
        at::Tensor part = ConvCore("convolution_backward (grad_input)", gph, wsub, g, true, cl, {}, {}, {}, false);
        TORCH_CHECK(part.size(2) == out[0] && part.size(3) == out[1], "convolution_backward: internal error: phase (",
                    a, ", ", b, ") gives ", part.sizes(), ", expected ", out[0], "x", out[1]);
        dst.copy_(part);
      }
      return gi;
    }
  }
  if (sh > 1 || sw > 1) {
    gu = NpuEmpty({go.size(0), cout, (ho - 1) * sh + 1, (wo - 1) * sw + 1}, go.scalar_type(), go.device().index(),
                  cl ? kCL : c10::MemoryFormat::Contiguous);
    gu.zero_();
    gu.slice(2, 0, c10::nullopt, sh).slice(3, 0, c10::nullopt, sw).copy_(go);
  }
  // Input rows / columns after the last window (rem > padding) get no gradient: a bottom / right
  // padding of the dilated kernel's size or more. ConvCore pads less than the kernel (as Load3D), so
  // that excess `ex` becomes zero rows / columns written around its result (ColGradInput reads only
  // the low padding and crops on its own).
  int64_t pad[2][2], ex[2];
  int64_t size[2] = {gu.size(2), gu.size(3)};
  const int64_t in_sz[2] = {H, W}, k[2] = {kh, kw};
  for (int i = 0; i < 2; ++i) {
    const int64_t eff = (k[i] - 1) * p.dilation[i] + 1;
    const int64_t rem = (in_sz[i] + 2 * p.padding[i] - eff) % p.stride[i];
    int64_t lo = eff - 1 - p.padding[i], hi = eff - 1 - p.padding[i] + rem;
    // Negative padding = rows of the upsampled gradient the input never saw: crop them.
    const int64_t crop_lo = lo < 0 ? -lo : 0, crop_hi = hi < 0 ? -hi : 0;
    if (crop_lo || crop_hi) gu = gu.narrow(2 + i, crop_lo, size[i] - crop_lo - crop_hi);
    size[i] -= crop_lo + crop_hi;
    pad[i][0] = lo < 0 ? 0 : lo;
    pad[i][1] = hi < 0 ? 0 : hi;
    ex[i] = pad[i][1] > eff - 1 ? pad[i][1] - (eff - 1) : 0;
    pad[i][1] -= ex[i];
  }
  // W^T per group as [cin][kh][kw][cog]: W.view(G, cog, cig, kh, kw) -> [G, cig, kh, kw, cog].
  at::Tensor wt = weight.contiguous().view({G, cog, cig, kh, kw}).permute({0, 2, 3, 4, 1}).contiguous();
  if (G == 1 && cin <= kColGradInputMaxChannels && p.dilation[0] == 1 && p.dilation[1] == 1) {
    const int64_t lo[2] = {pad[0][0], pad[1][0]}, out[2] = {H, W};
    return ColGradInput(gu, wt.view({cin, kh, kw, cout}), lo, out).contiguous(cl ? kCL : c10::MemoryFormat::Contiguous);
  }
  Geom g{gu.size(0), cout, size[0], size[1], cin, G, kh, kw, 1, 1, p.dilation[0], p.dilation[1],
         pad[0][0], pad[0][1], pad[1][0], pad[1][1]};
  at::Tensor gi = ConvCore("convolution_backward (grad_input)", gu, wt, g, true, cl, {}, {}, {}, false);
  TORCH_CHECK(gi.size(2) == H - ex[0] && gi.size(3) == W - ex[1], "convolution_backward: internal error: grad_input "
              "is ", gi.sizes(), ", expected spatial ", H - ex[0], "x", W - ex[1]);
  if (ex[0] == 0 && ex[1] == 0) return gi;
  at::Tensor full = NpuEmpty(in_size, dt, dev, cl ? kCL : c10::MemoryFormat::Contiguous);
  full.zero_();
  full.narrow(2, 0, H - ex[0]).narrow(3, 0, W - ex[1]).copy_(gi);
  return full;
}

// grad_weight[co, ci, a, b] = sum_n sum_(oh,ow) go[n, co, oh, ow] * xpad[n, ci, oh*s + a*d, ow*s + b*d]
// = a convolution with images = input channels, channels = batch, filter = grad_output (Ho x Wo,
// dilation = the stride), stride = the dilation. Done per group, in bands of grad_output rows
// (so a band's filter fits L1), each band adding the previous one through the residual.
at::Tensor GradWeight(const at::Tensor& go, const at::Tensor& input, const at::Tensor& weight, const ConvParams& p) {
  const char* op = "convolution_backward (grad_weight)";
  const int64_t G = p.groups, cout = weight.size(0), cog = cout / G, cig = weight.size(1);
  const int64_t kh = weight.size(2), kw = weight.size(3), N = input.size(0), H = input.size(2), W = input.size(3);
  const int64_t ho = go.size(2), wo = go.size(3);
  const int64_t sh = p.stride[0], sw = p.stride[1], dh = p.dilation[0], dw = p.dilation[1];
  const int64_t ph = p.padding[0], pw = p.padding[1];
  const c10::DeviceIndex dev = input.device().index();
  const auto dt = input.scalar_type();
  at::Tensor dW = NpuEmpty(weight.sizes(), dt, dev, WantChannelsLast(input, weight) ? kCL : c10::MemoryFormat::Contiguous);
  if (G == 1 && kh == 1 && kw == 1 && (sh > 1 || sw > 1) && ph == 0 && pw == 0) {
    // 1x1 with a stride: the stride-1 case on the subsampled input.
    at::Tensor xs = input.slice(2, 0, c10::nullopt, sh).slice(3, 0, c10::nullopt, sw).narrow(2, 0, ho).narrow(3, 0, wo);
    ConvParams p1 = p;
    p1.stride = {1, 1};
    return GradWeight(go, xs, weight, p1);
  }
  if (G == 1 && kh == 1 && kw == 1 && sh == 1 && sw == 1 && ph == 0 && pw == 0) {
    // 1x1, stride 1: dW [cout, cin] = sum_n G[n] (cout x HW) . x[n]^T (HW x cin), a GEMM.
    const int64_t hw = H * W;
    at::Tensor acc = NpuEmpty({1, cout, cig}, dt, dev);
    if (WantChannelsLast(input, weight) || go.suggest_memory_format() == kCL) {
      at::Tensor a = go.contiguous(kCL).permute({0, 2, 3, 1}).reshape({N * hw, cout}).t().unsqueeze(0);
      at::Tensor b = input.contiguous(kCL).permute({0, 2, 3, 1}).reshape({1, N * hw, cig});
      MatmulEpilogue ep;
      ep.hf32 = ConvAllowHf32() ? 1 : 0;
      CubeBatchedMatmul(op, a, b, acc, ep);
    } else {
      at::Tensor gc = go.contiguous().view({N, cout, hw}), xc = input.contiguous().view({N, cig, hw});
      // Chained through the residual (read right before the same element is written): a
      // deterministic sum over n.
      for (int64_t n = 0; n < N; ++n) {
        MatmulEpilogue ep;
        ep.hf32 = ConvAllowHf32() ? 1 : 0;
        if (n > 0) ep.residual = acc;
        CubeBatchedMatmul(op, gc.narrow(0, n, 1), xc.narrow(0, n, 1).transpose(1, 2), acc, ep);
      }
    }
    dW.copy_(acc.view({cout, cig, 1, 1}));
    return dW;
  }
  {
    // The cube grad_weight kernel: dW^T = im2col(x)^T . grad_output, summed over all images and
    // pixels in L0C (im2col window transposed into L0A by Load3D's enTranspose).
    const bool go_cl = go.suggest_memory_format() == kCL || WantChannelsLast(input, weight);
    // Returns ws viewed as [G, cog, c1g, c0, kh, kw] (undefined when no blocking fits). x5: x already
    // in 5HD (the width fold), of `cin` channels, h x w, the geometry given.
    auto cube_dw = [&](const at::Tensor& x5, int64_t cin, int64_t h, int64_t w, int64_t kh_, int64_t kw_,
                       int64_t sh_, int64_t sw_, int64_t ph_, int64_t pw_) -> at::Tensor {
      auto t = npu_kernels::conv2d_dw_tiling(uint32_t(N), uint32_t(cin), uint32_t(h), uint32_t(w), uint32_t(cout),
                                             uint32_t(G), uint32_t(kh_), uint32_t(kw_), uint32_t(sh_), uint32_t(sw_),
                                             uint32_t(dh), uint32_t(dw), uint32_t(ph_), uint32_t(ph_), uint32_t(pw_),
                                             uint32_t(pw_), uint32_t(input.element_size()), go_cl, SocInfoFor(dev));
      t.hf32 = ConvAllowHf32() && int64_t(N) * t.ho * t.wo >= kHf32MinGradWeightPixels ? 1u : 0u;
      t.x_5hd = x5.defined() ? 1u : 0u;
      if (!t.ok || sh_ > 63 || sw_ > 63) return {};
      const int64_t c0 = 32 / input.element_size();
      const int64_t c1g = (cin / G + c0 - 1) / c0, kg = c1g * kh_ * kw_ * c0;
      at::Tensor xin = x5.defined() ? x5 : ToChannelsLast(input);
      at::Tensor gc = go_cl ? go.contiguous(kCL) : go.contiguous();
      // Split-K: float partials per split, added here (one rounding to the dtype, deterministic).
      at::Tensor ws = t.splits > 1 ? NpuEmpty({int64_t(t.splits), G, kg, cog}, c10::kFloat, dev)
                                   : NpuEmpty({G, kg, cog}, dt, dev);
      using Fn = void (*)(uint8_t*, uint8_t*, uint8_t*, uint8_t*);
      Fn kernel = PickFloatKernel<Fn>(op, dt, &conv2d_dw_kernel_float, &conv2d_dw_kernel_half, &conv2d_dw_kernel_bf16);
      KernelLaunch launch{"conv2d_dw_kernel", ascendc_host::CoreType::AIC, t.block_dim, dev};
      if (LogDebugEnabled())
        launch.detail = std::string(op) + " x=" + Dims(input.sizes()) + (x5.defined() ? " width-folded" : "") +
                        " tile_c1=" + std::to_string(t.tile_c1) + " tile_co=" + std::to_string(t.tile_co) +
                        " pix_step=" + std::to_string(t.pix_step) + "x" + std::to_string(t.a2_bufs) +
                        " splits=" + std::to_string(t.splits) + " blockDim=" + std::to_string(t.block_dim);
      LaunchKernel(std::move(launch), kernel, t, xin.data_ptr(), gc.data_ptr(), ws.data_ptr());
      if (t.splits > 1) ws = ws.sum(0);
      // ws [G][c1g][kh][kw][c0][cog] -> [G, cog, c1g, c0, kh, kw]
      return ws.view({G, c1g, kh_, kw_, c0, cog}).permute({0, 5, 1, 4, 2, 3});
    };
    // A few input channels (a first layer): the kernel width folded into the channels, as the
    // forward does (UnfoldWidthIntoChannels): dW'[o][c * kw + j][i] = dW[o][c][i][j].
    if (G == 1 && dh == 1 && dw == 1 && kw >= 2 && cig * kw <= 65535) {
      const int64_t c0 = 32 / input.element_size();
      auto up = [&](int64_t v) { return (v + c0 - 1) / c0 * c0; };
      Geom g{N, cig, H, W, cout, 1, kh, kw, sh, sw, 1, 1, ph, ph, pw, pw};
      if (3 * up(cig * kw) * kh <= 2 * up(cig) * kh * kw) {
        if (at::Tensor x5 = FoldWidth5hd(input, g, wo); x5.defined()) {
          if (at::Tensor src = cube_dw(x5, cig * kw, H, wo, kh, 1, sh, 1, ph, 0); src.defined()) {
            // [1, cout, c1', c0, kh, 1] -> [cout, c1' * c0 = (c, j) padded, kh] -> [cout, c, j, kh]
            at::Tensor f = src.reshape({cout, src.size(2) * c0, kh}).narrow(1, 0, cig * kw);
            dW.copy_(f.view({cout, cig, kw, kh}).permute({0, 1, 3, 2}));
            return dW;
          }
        }
      }
    }
    if (at::Tensor src = cube_dw(at::Tensor(), input.size(1), H, W, kh, kw, sh, sw, ph, pw); src.defined()) {
      // One strided copy into dW's own layout when cig fills whole c0 groups (else through a
      // [.., c1g * c0, ..] copy, narrowed).
      const int64_t c0 = src.size(3), c1g = src.size(2);
      if (c1g * c0 == cig) {
        dW.view({G, cog, c1g, c0, kh, kw}).copy_(src);  // (splitting dims is a view in either memory format)
        return dW;
      }
      dW.copy_(src.reshape({G * cog, c1g * c0, kh, kw}).narrow(1, 0, cig));
      return dW;
    }
  }
  // Fallback (blockings that do not fit): the convolution of x^T with grad_output^T as the filter.
  TORCH_CHECK(wo <= 511, op, ": grad_output width ", wo, " must be at most 511 (Load3D filter width)");
  TORCH_CHECK(sh <= 255 && sw <= 255, op, ": stride must be at most 255");
  TORCH_CHECK(dh <= 63 && dw <= 63, op, ": dilation must be at most 63 (Load3D stride)");
  // x^T as NHWC of images=ci, channels=n: memory [cin][H][W][N]; go^T: memory [cout][Ho][Wo][N].
  at::Tensor xt = input.permute({1, 2, 3, 0}).contiguous();
  at::Tensor gt = go.permute({1, 2, 3, 0}).contiguous();
  const auto& soc = SocInfoFor(dev);
  const int64_t need_w = (kw - 1) * dw + (wo - 1) * sw + 1;
  const int64_t pr = need_w - pw - W > 0 ? need_w - pw - W : 0;
  for (int64_t gi = 0; gi < G; ++gi) {
    // Band height: the largest that the kernel's blocking fits.
    int64_t band = ho < 511 ? ho : 511;  // Load3D filter height limit
    for (;;) {
      const int64_t eff = (band - 1) * sh + 1, need_h = (kh - 1) * dh + eff;
      auto t = npu_kernels::conv2d_tiling(uint32_t(cig), uint32_t(N), uint32_t(need_h < H ? need_h : H), uint32_t(W),
                                          uint32_t(cog), 1, uint32_t(band), uint32_t(wo), uint32_t(dh), uint32_t(dw),
                                          uint32_t(sh), uint32_t(sw), 0, uint32_t(need_h), uint32_t(pw), uint32_t(pr),
                                          uint32_t(input.element_size()), 1, soc);
      if (t.ok || band == 1) {
        TORCH_CHECK(t.ok, op, ": no cube blocking fits the SoC's L1 for an input of width ", W);
        break;
      }
      band = (band + 1) / 2;
    }
    at::Tensor acc;
    for (int64_t oa = 0; oa < ho; oa += band) {
      const int64_t nb = ho - oa < band ? ho - oa : band;
      const int64_t eff = (nb - 1) * sh + 1;
      const int64_t need_h = (kh - 1) * dh + eff;       // input rows the band's output (kh rows) reads
      const int64_t base = oa * sh - ph;                 // first of them (may be in the padding)
      const int64_t top = base < 0 ? -base : 0;
      const int64_t r0 = base < 0 ? 0 : base;
      int64_t rows = H - r0;
      if (rows > need_h - top) rows = need_h - top;
      if (rows < 1) continue;                             // the band only meets padding rows
      const int64_t bottom = need_h - top - rows;
      at::Tensor xin = xt.narrow(0, gi * cig, cig).narrow(1, r0, rows);   // [cig][rows][W][N], batch stride H*W*N
      at::Tensor xin4 = xin.permute({0, 3, 1, 2});                         // [cig, N, rows, W] view
      at::Tensor wband = gt.narrow(0, gi * cog, cog).narrow(1, oa, nb);   // [cog][nb][wo][N], co stride ho*wo*N
      Geom g{cig, N, rows, W, cog, 1, nb, wo, dh, dw, sh, sw, top, bottom, pw, pr};
      acc = ConvCore(op, xin4, wband, g, false, false, {}, {}, acc, false, H * W * N, ho * wo * N);
    }
    at::Tensor part = acc.defined() ? acc.narrow(2, 0, kh).narrow(3, 0, kw).permute({1, 0, 2, 3})
                                    : NpuEmpty({cog, cig, kh, kw}, dt, dev).zero_();
    dW.narrow(0, gi * cog, cog).copy_(part);
  }
  return dW;
}

// ---- conv_transpose2d ----------------------------------------------------------------------------
// The transposed convolution is the input gradient of the convolution it transposes:
//   conv_transpose2d(x, w) = GradInput(grad_output = x) of conv2d(., w),
// w [Cin, Cout/groups, kh, kw] being that convolution's weight (Cout -> Cin channels). So it runs on
// the same cube kernel (taps reversed, stride phases), and its backward is
//   grad_x = conv2d(grad_y, w),  grad_w = GradWeight(grad_output = x, input = grad_y),  grad_b = sum.

// Output sizes and the argument checks (as PyTorch's, with the numbers).
std::array<int64_t, 4> ConvTransposeOutSize(const char* op, const at::Tensor& x, const at::Tensor& w,
                                            const ConvParams& p, std::array<int64_t, 2> output_padding) {
  TORCH_CHECK(w.dim() == 4, op, ": expected a 4-D weight [Cin, Cout/groups, kh, kw], got a ", w.dim(),
              "-D tensor of shape ", w.sizes());
  CheckFloatDtype(op, "input", x);
  TORCH_CHECK_TYPE(w.scalar_type() == x.scalar_type(), op, ": input dtype ", x.scalar_type(), " and weight dtype ",
                   w.scalar_type(), " differ");
  TORCH_CHECK(p.groups >= 1, op, ": groups must be positive, got ", p.groups);
  TORCH_CHECK(x.size(1) == w.size(0), op, ": the weight of size ", w.sizes(), " expects the input to have ", w.size(0),
              " channels (its first dim), but the input of size ", x.sizes(), " has ", x.size(1));
  TORCH_CHECK(w.size(0) % p.groups == 0, op, ": the weight's ", w.size(0), " input channels are not divisible by groups=",
              p.groups);
  std::array<int64_t, 4> out{x.size(0), w.size(1) * p.groups, 0, 0};
  const char* hw[2] = {"height", "width"};
  for (int i = 0; i < 2; ++i) {
    const int64_t k = w.size(2 + i), s = p.stride[i], pad = p.padding[i], d = p.dilation[i], op_i = output_padding[i];
    TORCH_CHECK(op_i >= 0 && (op_i < s || op_i < d), op, ": output_padding ", op_i, " (", hw[i],
                ") must be non-negative and smaller than either stride ", s, " or dilation ", d);
    out[2 + i] = (x.size(2 + i) - 1) * s - 2 * pad + d * (k - 1) + op_i + 1;
    TORCH_CHECK(out[2 + i] > 0, op, ": output ", hw[i], " (", x.size(2 + i), " - 1)*", s, " - 2*", pad, " + ", d, "*(", k,
                " - 1) + ", op_i, " + 1 = ", out[2 + i], " is not positive");
  }
  // The convolution this transposes, from the output back to x, must itself be valid.
  const at::Tensor shape_only = at::empty(out, at::TensorOptions().dtype(x.scalar_type()).device(c10::kMeta));
  CheckConvArgs(op, shape_only, w, p);
  return out;
}

// An output_padding of a stride or more (allowed when it is below the dilation): the output is that of
// x extended by e = output_padding / stride zero rows (columns) at the end with output_padding % stride,
// which the kernels' geometry (output_padding < stride) covers; the zero rows add nothing. Returns the
// extension per dim ({0, 0} when none is needed) and reduces `output_padding` in place.
std::array<int64_t, 2> OutputPaddingExtension(const ConvParams& p, std::array<int64_t, 2>& output_padding) {
  std::array<int64_t, 2> e{0, 0};
  for (int i = 0; i < 2; ++i) {
    e[i] = output_padding[i] / p.stride[i];
    output_padding[i] %= p.stride[i];
  }
  return e;
}
at::Tensor ExtendRows(const at::Tensor& x, std::array<int64_t, 2> e) {
  return e[0] == 0 && e[1] == 0 ? x : at::constant_pad_nd(x, {0, e[1], 0, e[0]}, 0);
}

at::Tensor ConvTransposeForward(const at::Tensor& x_in, const at::Tensor& w, const std::optional<at::Tensor>& bias,
                                const ConvParams& p, std::array<int64_t, 2> output_padding) {
  const char* op = "conv_transpose2d";
  const bool has_bias = bias.has_value() && bias->defined();
  const at::Tensor no_bias;
  CheckSameNpuDevice(op, {{"input", &x_in}, {"weight", &w}, {"bias", has_bias ? &*bias : &no_bias}});
  const std::array<int64_t, 4> out = ConvTransposeOutSize(op, x_in, w, p, output_padding);
  const at::Tensor x = ExtendRows(x_in, OutputPaddingExtension(p, output_padding));
  if (has_bias) {
    TORCH_CHECK(bias->dim() == 1 && bias->size(0) == out[1], op, ": bias must have shape [", out[1],
                "] (one per output channel), got ", bias->sizes());
    TORCH_CHECK_TYPE(bias->scalar_type() == x.scalar_type(), op, ": input dtype ", x.scalar_type(), " and bias dtype ",
                     bias->scalar_type(), " differ");
  }
  const bool cl = WantChannelsLast(x, w);
  at::Tensor y;
  if (x.numel() == 0) {
    y = NpuEmpty(out, x.scalar_type(), x.device().index(), cl ? kCL : c10::MemoryFormat::Contiguous);
    if (y.numel()) y.zero_();
  } else {
    y = GradInput(x, out, cl, w, p);
  }
  if (has_bias && y.numel()) y.add_(bias->view({1, -1, 1, 1}));
  return y;
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> ConvTransposeBackward(const at::Tensor& grad_output, const at::Tensor& x_in,
                                                                     const at::Tensor& w, const ConvParams& p,
                                                                     std::array<int64_t, 2> output_padding,
                                                                     std::array<bool, 3> output_mask) {
  const char* op = "conv_transpose2d backward";
  CheckSameNpuDevice(op, {{"grad_output", &grad_output}, {"input", &x_in}, {"weight", &w}});
  const std::array<int64_t, 4> out = ConvTransposeOutSize(op, x_in, w, p, output_padding);
  const std::array<int64_t, 2> ext = OutputPaddingExtension(p, output_padding);
  const at::Tensor x = ExtendRows(x_in, ext);
  TORCH_CHECK(grad_output.sizes() == c10::IntArrayRef(out), op, ": grad_output of shape ", grad_output.sizes(),
              " does not match the output shape ", Dims(out));
  TORCH_CHECK_TYPE(grad_output.scalar_type() == x.scalar_type(), op, ": grad_output dtype ", grad_output.scalar_type(),
                   " differs from the input's ", x.scalar_type());
  at::Tensor gi, gw, gb;
  const bool empty = x.numel() == 0 || grad_output.numel() == 0;
  if (output_mask[0]) {
    if (empty) gi = NpuEmpty(x_in.sizes(), x.scalar_type(), x.device().index()).zero_();
    else gi = ConvForward(grad_output, w, p);
    if (gi.size(2) != x_in.size(2) || gi.size(3) != x_in.size(3))  // the extension's rows are not inputs
      gi = gi.narrow(2, 0, x_in.size(2)).narrow(3, 0, x_in.size(3)).contiguous(gi.suggest_memory_format());
  }
  if (output_mask[1]) {
    if (empty) gw = NpuEmpty(w.sizes(), w.scalar_type(), w.device().index()).zero_();
    else gw = GradWeight(x, grad_output, w, p);
  }
  if (output_mask[2]) gb = GradBias(grad_output);
  return {gi, gw, gb};
}

// Depthwise backward on the vector kernel (conv_depthwise.h); undefined when it does not apply.
// grad_input: the convolution of grad_output (zeros between its pixels for a stride) with the flipped
// kernel, padded so that it lands on the input's pixels.
at::Tensor DepthwiseGradInput(const at::Tensor& go, const at::Tensor& weight, const Geom& g) {
  const int64_t ho = go.size(2), wo = go.size(3);
  const int64_t effh = (g.kh - 1) * g.dh + 1, effw = (g.kw - 1) * g.dw + 1;
  at::Tensor gd = Contiguous(go);
  const int64_t lh = (ho - 1) * g.sh + 1, lw = (wo - 1) * g.sw + 1;
  if (g.sh > 1 || g.sw > 1) {
    at::Tensor z = NpuEmpty({g.n, g.c, lh, lw}, go.scalar_type(), go.device().index());
    z.zero_();
    z.slice(2, 0, c10::nullopt, g.sh).slice(3, 0, c10::nullopt, g.sw).copy_(gd);
    gd = z;
  }
  const Geom gi{g.n, g.c, lh, lw, g.c, g.c, g.kh, g.kw, 1, 1, g.dh, g.dw,
                effh - 1 - g.pt, g.h - lh + g.pt, effw - 1 - g.pl, g.w - lw + g.pl};
  if (gi.pt < 0 || gi.pb < 0 || gi.pl < 0 || gi.pr < 0) return {};
  at::Tensor r = DepthwiseForward(gd, weight, gi, {}, {}, ConvEpilogue{}, false, /*flip=*/true);
  if (r.defined() && (r.size(2) != g.h || r.size(3) != g.w)) return {};
  return r;
}

// grad_weight: per (image, channel, row chunk) the kernel's partial sums of grad_output times each
// tap's input, summed here over images and chunks.
at::Tensor DepthwiseGradWeight(const at::Tensor& go, const at::Tensor& input, const at::Tensor& weight, const Geom& g) {
  const c10::DeviceIndex dev = input.device().index();
  const auto t = DepthwiseTiling(g, uint32_t(input.element_size()), true, dev);
  if (!t.ok || int64_t(t.ho) != go.size(2) || int64_t(t.wo) != go.size(3)) return {};
  const at::Tensor x = Contiguous(input), gd = Contiguous(go);
  at::Tensor partial = NpuEmpty({int64_t(t.units), g.kh * g.kw}, c10::kFloat, dev);
  LaunchDepthwise("convolution_backward (grad_weight)", t, x, g, nullptr, gd.data_ptr(), nullptr, partial.data_ptr());
  at::Tensor gw = partial.view({g.n, g.c, int64_t(t.chunks), g.kh * g.kw}).sum(c10::IntArrayRef{0, 2});
  return gw.view(weight.sizes()).to(weight.scalar_type());
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> convolution_backward_overrideable(
    const at::Tensor& grad_output, const at::Tensor& input, const at::Tensor& weight, c10::IntArrayRef stride,
    c10::IntArrayRef padding, c10::IntArrayRef dilation, bool transposed, c10::IntArrayRef output_padding,
    int64_t groups, std::array<bool, 3> output_mask) {
  const char* op = "convolution_backward";
  const bool host_dtype = AnyHostOnlyDtype({&grad_output, &input, &weight}) ||
                          c10::isIntegralType(input.scalar_type(), /*includeBool=*/true);
  if (host_dtype) {
    const int64_t cout = transposed ? weight.size(1) * groups : weight.size(0);
    const std::optional<std::vector<int64_t>> bias_sizes =
        output_mask[2] ? std::optional<std::vector<int64_t>>(std::vector<int64_t>{cout}) : std::nullopt;
    torch::jit::Stack r = CallCpuFallback(
        "aten::convolution_backward", "",
        {grad_output, input, weight, bias_sizes, stride, padding, dilation, transposed, output_padding, groups,
         c10::List<bool>({output_mask[0], output_mask[1], output_mask[2]})},
        DtypeReason(input.scalar_type()).c_str());
    auto get = [&](size_t i) { return r[i].isNone() ? at::Tensor() : r[i].toTensor(); };
    return {get(0), get(1), get(2)};
  }
  if (input.dim() == 5)
    return transposed ? ConvTranspose3dBackward(grad_output, input, weight, stride, padding, output_padding, dilation,
                                                groups, output_mask)
                      : Conv3dBackward(grad_output, input, weight, stride, padding, dilation, groups, output_mask);
  ConvParams p;
  p.stride = Pair(stride, op, "stride");
  p.padding = Pair(padding, op, "padding");
  p.dilation = Pair(dilation, op, "dilation");
  p.groups = groups;
  if (const auto ex = ExcessPadding(weight, p); ex[0] || ex[1]) {
    const std::vector<int64_t> pad{p.padding[0], p.padding[1]};
    if (transposed)  // the output was cropped by ex: its gradient there is zero
      return torch_ops_nn::convolution_backward_overrideable(PadHW(grad_output, ex), input, weight, stride, pad, dilation, true,
                                               output_padding, groups, output_mask);
    auto [gi, gw, gb] = torch_ops_nn::convolution_backward_overrideable(grad_output, PadHW(input, ex), weight, stride, pad, dilation,
                                                          false, output_padding, groups, output_mask);
    return {gi.defined() ? CropHW(gi, ex) : gi, gw, gb};
  }
  if (transposed)
    return ConvTransposeBackward(grad_output, input, weight, p, Pair(output_padding, op, "output_padding"), output_mask);
  CheckSameNpuDevice(op, {{"grad_output", &grad_output}, {"input", &input}, {"weight", &weight}});
  CheckConvArgs(op, input, weight, p);
  TORCH_CHECK_TYPE(grad_output.scalar_type() == input.scalar_type(), op, ": grad_output dtype ",
                   grad_output.scalar_type(), " differs from the input's ", input.scalar_type());
  const int64_t ho = OutSize(input.size(2), p.padding[0], p.padding[0], weight.size(2), p.stride[0], p.dilation[0]);
  const int64_t wo = OutSize(input.size(3), p.padding[1], p.padding[1], weight.size(3), p.stride[1], p.dilation[1]);
  TORCH_CHECK(grad_output.dim() == 4 && grad_output.size(0) == input.size(0) && grad_output.size(1) == weight.size(0) &&
                  grad_output.size(2) == ho && grad_output.size(3) == wo,
              op, ": grad_output of shape ", grad_output.sizes(), " does not match the output shape ",
              Dims({input.size(0), weight.size(0), ho, wo}));
  at::Tensor gi, gw, gb;
  const bool empty = input.numel() == 0 || grad_output.numel() == 0;
  const Geom g{input.size(0), input.size(1), input.size(2), input.size(3), weight.size(0), p.groups, weight.size(2),
               weight.size(3), p.stride[0], p.stride[1], p.dilation[0], p.dilation[1], p.padding[0], p.padding[0],
               p.padding[1], p.padding[1]};
  if (!empty && IsDepthwise(g)) {
    const bool cl = WantChannelsLast(input, weight);
    if (output_mask[0]) {
      gi = DepthwiseGradInput(grad_output, weight, g);
      if (gi.defined() && cl) gi = gi.contiguous(kCL);
    }
    if (output_mask[1]) {
      gw = DepthwiseGradWeight(grad_output, input, weight, g);
      if (gw.defined() && cl) gw = gw.contiguous(kCL);
    }
  }
  if (output_mask[0] && !gi.defined()) {
    if (empty) gi = NpuEmpty(input.sizes(), input.scalar_type(), input.device().index()).zero_();
    else gi = GradInput(grad_output, input.sizes(), WantChannelsLast(input, weight), weight, p);
  }
  if (output_mask[1] && !gw.defined()) {
    if (empty) gw = NpuEmpty(weight.sizes(), weight.scalar_type(), weight.device().index()).zero_();
    else gw = GradWeight(grad_output, input, weight, p);
  }
  if (output_mask[2]) gb = GradBias(grad_output);
  return {gi, gw, gb};
}

// Test hook for ConvForward's epilogue (the fused ops of the lead build on it; this exposes it
// to the Python tests without claiming a public op name).
at::Tensor conv2d_epilogue_for_tests(const at::Tensor& x, const at::Tensor& w, const std::optional<at::Tensor>& bias,
                                     const std::optional<at::Tensor>& scale, const std::optional<at::Tensor>& shift,
                                     const std::optional<at::Tensor>& residual, bool relu, c10::IntArrayRef stride,
                                     c10::IntArrayRef padding, c10::IntArrayRef dilation, int64_t groups) {
  ConvParams p;
  p.stride = Pair(stride, "conv2d", "stride");
  p.padding = Pair(padding, "conv2d", "padding");
  p.dilation = Pair(dilation, "conv2d", "dilation");
  p.groups = groups;
  ConvEpilogue e;
  if (bias) e.bias = *bias;
  if (scale) e.scale = *scale;
  if (shift) e.shift = *shift;
  if (residual) e.residual = *residual;
  e.relu = relu;
  return ConvForward(x, w, p, e);
}

}  // namespace
}  // namespace torch_ops_nn

TORCH_LIBRARY(torch_ops_nn_conv_testing, m) {
  m.def("conv2d_epilogue(Tensor x, Tensor w, Tensor? bias, Tensor? scale, Tensor? shift, Tensor? residual, bool relu, "
        "int[2] stride, int[2] padding, int[2] dilation, int groups) -> Tensor");
}
TORCH_LIBRARY_IMPL(torch_ops_nn_conv_testing, PrivateUse1, m) {
  m.impl("conv2d_epilogue", TORCH_FN(torch_ops_nn::conv2d_epilogue_for_tests));
}

NPU_ATEN_LIBRARY_IMPL(m) {
  m.impl("convolution_overrideable", TORCH_FN(torch_ops_nn::convolution_overrideable));
  m.impl("convolution_backward_overrideable", TORCH_FN(torch_ops_nn::convolution_backward_overrideable));
}

namespace torch_ops_nn {
// Drops every cached conv weight copy (torch.npu.empty_cache calls it).
void ClearConvWeightCache() {
  std::lock_guard<std::mutex> g(g_wcache_mu);
  g_wcache.clear();
  g_fcache.clear();
  g_wcache_bytes = 0;
}
}  // namespace torch_ops_nn
