// Kernel-level checks of the cube instructions (kernel_cube.h), run by test/ascendc/test_cube.py.
// Each check prints one line "PASS <name>" or "FAIL <name>: <why>"; error checks print the
// KernelError message they caught ("PASS err_<name>: <message>").
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "cube_gemm.h"
#include "kernel_operator.h"

using namespace AscendC;
using ascendc_host::CoreConfig;
using ascendc_host::CoreType;
using ascendc_host::KernelError;

namespace {

int g_fail = 0;
std::mt19937 g_rng(7);

void Report(bool ok, const std::string& name, const std::string& why = "") {
  if (ok) std::printf("PASS %s\n", name.c_str());
  else { std::printf("FAIL %s: %s\n", name.c_str(), why.c_str()); ++g_fail; }
}

void Run(const char* kernel, const std::function<void()>& body, int arch = 2201) {
  CoreConfig cfg;
  cfg.npu_arch = arch;
  cfg.bounds_check = true;
  ascendc_host::RunBlock(kernel, cfg, CoreType::AIC, 0, 1, body);
}

// Values exact in half and bfloat16, so sums of products are exact in float.
float Small() { return float(int(g_rng() % 17) - 8) / 8.0f; }

template <typename T>
std::vector<T> Fill(size_t n, std::vector<float>& ref) {
  std::vector<T> v(n);
  ref.resize(n);
  for (size_t i = 0; i < n; ++i) { ref[i] = Small(); v[i] = T(ref[i]); }
  return v;
}

template <typename T> float ToF(T v) { return float(v); }

constexpr uint32_t CeilAlign(uint32_t a, uint32_t b) { return (a + b - 1) / b * b; }

// ---------------------------------------------------------------------------------------------
// GM -> L1 (Nd2Nz) -> L0A/L0B (LoadData 2D) -> Mmad -> Fixpipe (or the epilogue extension).
// B is K×N for 16-bit types (loaded with ifTranspose), and N×K (B transposed) for float.
struct MatmulOpts {
  bool relu = false;
  bool bias = false;
  bool accumulate_twice = false;  // run Mmad twice over K halves (init, then accumulate)
  bool epilogue = false;          // ext::FixpipeWithEpilogue with scale, shift, residual, relu
};

template <typename TIn, typename TOut>
void CheckMatmul(const char* name, int M, int N, int K, const MatmulOpts& o) {
  std::vector<float> ra, rb, rbias, rscale, rshift, rres;
  const bool bT = std::is_same_v<TIn, float>;
  std::vector<TIn> A = Fill<TIn>(size_t(M) * K, ra), B = Fill<TIn>(size_t(K) * N, rb);  // B: K×N or N×K
  std::vector<float> bias(N), scale(N), shift(N);
  for (int j = 0; j < N; ++j) { bias[j] = Small(); scale[j] = Small(); shift[j] = Small(); }
  std::vector<TOut> residual = Fill<TOut>(size_t(M) * N, rres);
  std::vector<TOut> C(size_t(M) * N, TOut(-777.0f));
  const int c0 = 32 / sizeof(TIn), frac = 512 / sizeof(TIn);
  const int M16 = CeilAlign(M, 16), N16 = CeilAlign(N, 16), M1 = M16 / 16, N1 = N16 / 16;
  const int K1 = (K + c0 - 1) / c0, Kc = K1 * c0;
  try {
    Run(name, [&] {
      TPipe pipe;
      TBuf<TPosition::A1> a1b; TBuf<TPosition::B1> b1b; TBuf<TPosition::A2> a2b; TBuf<TPosition::B2> b2b;
      TBuf<TPosition::CO1> c1b; TBuf<TPosition::C2> btb;
      pipe.InitBuffer(a1b, M16 * Kc * sizeof(TIn));
      pipe.InitBuffer(b1b, (bT ? N16 * Kc : CeilAlign(K, 16) * N16) * sizeof(TIn));
      pipe.InitBuffer(a2b, M1 * K1 * 512);
      pipe.InitBuffer(b2b, (bT ? K1 : CeilAlign(K, 16) / 16) * N1 * 512);
      pipe.InitBuffer(c1b, M16 * N16 * 4);
      if (o.bias) pipe.InitBuffer(btb, CeilAlign(N * 4, 64));
      LocalTensor<TIn> a1 = a1b.Get<TIn>(), b1 = b1b.Get<TIn>(), a2 = a2b.Get<TIn>(), b2 = b2b.Get<TIn>();
      LocalTensor<float> c1 = c1b.Get<float>();
      GlobalTensor<TIn> gA, gB;
      gA.SetGlobalBuffer(A.data(), A.size());
      gB.SetGlobalBuffer(B.data(), B.size());
      GlobalTensor<TOut> gC;
      gC.SetGlobalBuffer(C.data(), C.size());
      // A (M×K) -> L1 Nz: K/C0 column blocks of M16 rows.
      DataCopy(a1, gA, Nd2NzParams(1, M, K, 0, K, M16, 1, 0));
      for (int mi = 0; mi < M1; ++mi)
        LoadData(a2[mi * K1 * frac], a1[mi * 16 * c0], LoadData2DParams(0, K1, M1, 0, 0, false, 0));
      int KB1;
      if (bT) {  // B^T (N×K) -> L1 Nz: fractal (ni, ki) at ki*N1 + ni == the Zn slot; plain copy.
        DataCopy(b1, gB, Nd2NzParams(1, N, K, 0, K, N16, 1, 0));
        for (int ki = 0; ki < K1; ++ki)
          LoadData(b2[ki * N1 * frac], b1[ki * N1 * frac], LoadData2DParams(0, N1, 1, 0, 0, false, 0));
        KB1 = K1;
      } else {   // B (K×N) -> L1 Nz: fractal (ki, ni) at ni*KB1 + ki; transposed into Zn.
        KB1 = CeilAlign(K, 16) / 16;
        DataCopy(b1, gB, Nd2NzParams(1, K, N, 0, N, KB1 * 16, 1, 0));
        for (int ki = 0; ki < KB1; ++ki)
          LoadData(b2[ki * N1 * frac], b1[ki * frac], LoadData2DParams(0, N1, KB1, 0, 0, true, 0));
      }
      if (o.bias) {
        LocalTensor<float> bt = btb.Get<float>();
        std::memcpy(bt.HostPtr(), bias.data(), N * 4);  // test shortcut for DataCopy C1 -> C2
        MmadParams mp(M, N, K, 0, false, true);
        mp.cmatrixSource = true;
        Mmad(c1, a2, b2, bt, mp);
      } else if (o.accumulate_twice) {
        // K split at a fractal boundary: A fractals (mi, ki) with ki >= kh live at mi*K1 + kh;
        // with a row pitch of K1 fractals that needs a per-M-block LoadData, so split N instead:
        // first Mmad k = kh*c0 (init), second k = K - kh*c0 over shifted A/B views (accumulate).
        const int kh = K1 / 2;
        if (kh == 0 || M1 != 1) throw std::runtime_error("accumulate case needs K1 >= 2 and M <= 16");
        Mmad(c1, a2, b2, MmadParams(M, N, kh * c0, 0, false, true));
        Mmad(c1, a2[kh * frac], b2[kh * N1 * frac], MmadParams(M, N, K - kh * c0, 0, false, false));
      } else {
        Mmad(c1, a2, b2, MmadParams(M, N, K, 0, false, true));
      }
      FixpipeParamsV220 fp(N, M, M16, N, o.relu);
      if constexpr (std::is_same_v<TOut, half>) fp.quantPre = F322F16;
      if constexpr (std::is_same_v<TOut, bfloat16_t>) fp.quantPre = F322BF16;
      if (o.epilogue) {
        ext::FixpipeEpilogue<TOut> e;
        e.scale.SetGlobalBuffer(scale.data(), N);
        e.shift.SetGlobalBuffer(shift.data(), N);
        e.residual.SetGlobalBuffer(residual.data(), residual.size());
        e.relu = true;
        ext::FixpipeWithEpilogue(gC, c1, fp, e);
      } else {
        Fixpipe(gC, c1, fp);
      }
    });
  } catch (const std::exception& e) {
    Report(false, name, e.what());
    return;
  }
  for (int r = 0; r < M; ++r)
    for (int c = 0; c < N; ++c) {
      double s = o.bias ? bias[c] : 0.0;
      for (int k = 0; k < K; ++k)
        s += double(ra[size_t(r) * K + k]) * (bT ? rb[size_t(c) * K + k] : rb[size_t(k) * N + c]);
      float v = float(s);
      if (o.epilogue) v = v * scale[c] + shift[c] + rres[size_t(r) * N + c];
      if (o.relu || o.epilogue) v = std::max(v, 0.0f);
      const float want = ToF(TOut(v)), got = ToF(C[size_t(r) * N + c]);
      const float tol = o.epilogue ? 1e-6f * std::fabs(want) + 1e-6f : 0.0f;
      if (!(std::fabs(got - want) <= tol)) {
        char buf[200];
        std::snprintf(buf, sizeof buf, "C[%d][%d] = %g, want %g (M=%d N=%d K=%d)", r, c, got, want, M, N, K);
        Report(false, name, buf);
        return;
      }
    }
  Report(true, name);
}

// m == 1: Mmad reads L0A as a plain vector of k elements (GEMV form).
template <typename TIn>
void CheckGemv(const char* name, int N, int K) {
  std::vector<float> ra, rb;
  std::vector<TIn> A = Fill<TIn>(K, ra), B = Fill<TIn>(size_t(K) * N, rb);
  std::vector<float> C(N, -1.f);
  const int frac = 512 / sizeof(TIn), c0 = 32 / sizeof(TIn);
  const int N16 = CeilAlign(N, 16), N1 = N16 / 16, KB1 = CeilAlign(K, 16) / 16;
  const int afr = (K * int(sizeof(TIn)) + 511) / 512;
  const bool bT = std::is_same_v<TIn, float>;  // float B is given transposed (N×K)
  try {
    Run(name, [&] {
      TPipe pipe;
      TBuf<TPosition::A1> a1b; TBuf<TPosition::B1> b1b; TBuf<TPosition::A2> a2b; TBuf<TPosition::B2> b2b;
      TBuf<TPosition::CO1> c1b;
      pipe.InitBuffer(a1b, afr * 512);
      const int KC1 = (K + c0 - 1) / c0;  // K fractals (>= KB1)
      pipe.InitBuffer(b1b, std::max(KB1 * 16, KC1 * c0) * N16 * sizeof(TIn));
      pipe.InitBuffer(a2b, afr * 512);
      pipe.InitBuffer(b2b, KC1 * N1 * 512);
      pipe.InitBuffer(c1b, 16 * N16 * 4);
      auto a1 = a1b.Get<TIn>(), b1 = b1b.Get<TIn>(), a2 = a2b.Get<TIn>(), b2 = b2b.Get<TIn>();
      auto c1 = c1b.Get<float>();
      GlobalTensor<TIn> gA, gB;
      gA.SetGlobalBuffer(A.data(), A.size());
      gB.SetGlobalBuffer(B.data(), B.size());
      GlobalTensor<float> gC;
      gC.SetGlobalBuffer(C.data(), C.size());
      // One row with a C0-block stride of one 32 B unit: a contiguous vector in L1.
      DataCopy(a1, gA, Nd2NzParams(1, 1, K, 0, K, 1, 1, 0));
      LoadData(a2, a1, LoadData2DParams(0, afr, 1, 0, 0, false, 0));
      if (bT) {  // B^T (N×K)
        DataCopy(b1, gB, Nd2NzParams(1, N, K, 0, K, N16, 1, 0));
        for (int ki = 0; ki < (K + c0 - 1) / c0; ++ki)
          LoadData(b2[ki * N1 * frac], b1[ki * N1 * frac], LoadData2DParams(0, N1, 1, 0, 0, false, 0));
      } else {
        DataCopy(b1, gB, Nd2NzParams(1, K, N, 0, N, KB1 * 16, 1, 0));
        for (int ki = 0; ki < KB1; ++ki)
          LoadData(b2[ki * N1 * frac], b1[ki * frac], LoadData2DParams(0, N1, KB1, 0, 0, true, 0));
      }
      Mmad(c1, a2, b2, MmadParams(1, N, K, 0, false, true));
      Fixpipe(gC, c1, FixpipeParamsV220(N, 1, 16, N, false));
    });
  } catch (const std::exception& e) {
    Report(false, name, e.what());
    return;
  }
  for (int c = 0; c < N; ++c) {
    double s = 0;
    for (int k = 0; k < K; ++k) s += double(ra[k]) * (bT ? rb[size_t(c) * K + k] : rb[size_t(k) * N + c]);
    if (C[c] != float(s)) {
      char buf[160];
      std::snprintf(buf, sizeof buf, "C[%d] = %g, want %g", c, C[c], float(s));
      Report(false, name, buf);
      return;
    }
  }
  Report(true, name);
}


// LoadDataWithTranspose (b32): B row-major K x N and A stored transposed (K x M), each 16-row
// group of K copied to L1 as consecutive 16x8 fractal pairs, transposed into L0B Zn / L0A Zz;
// with the rowwise epilogue (scale/shift per output row).
void CheckLoadTransposeF32(const char* name, int M, int N, int K) {
  std::vector<float> ra, rb, rs, rh;
  std::vector<float> At = Fill<float>(size_t(K) * M, ra), B = Fill<float>(size_t(K) * N, rb);  // At: K x M
  std::vector<float> sc = Fill<float>(M, rs), sh = Fill<float>(M, rh);
  std::vector<float> C(size_t(M) * N, -7.f);
  const int M16 = CeilAlign(M, 16), N16 = CeilAlign(N, 16), K16 = CeilAlign(K, 16);
  const int M1 = M16 / 16, N1 = N16 / 16, KG = K16 / 16, KF = KG * 2;  // L0A pitch (kDirectionAlign)
  try {
    Run(name, [&] {
      TPipe pipe;
      TBuf<TPosition::A1> a1b; TBuf<TPosition::B1> b1b; TBuf<TPosition::A2> a2b; TBuf<TPosition::B2> b2b;
      TBuf<TPosition::CO1> c1b;
      pipe.InitBuffer(a1b, K16 * M16 * 4); pipe.InitBuffer(b1b, K16 * N16 * 4);
      pipe.InitBuffer(a2b, M1 * KF * 512); pipe.InitBuffer(b2b, KF * N1 * 512);
      pipe.InitBuffer(c1b, M16 * N16 * 4);
      auto a1 = a1b.Get<float>(), b1 = b1b.Get<float>(), a2 = a2b.Get<float>(), b2 = b2b.Get<float>();
      auto c1 = c1b.Get<float>();
      GlobalTensor<float> gA, gB, gC, gS, gH;
      gA.SetGlobalBuffer(At.data(), At.size()); gB.SetGlobalBuffer(B.data(), B.size());
      gC.SetGlobalBuffer(C.data(), C.size()); gS.SetGlobalBuffer(sc.data(), M); gH.SetGlobalBuffer(sh.data(), M);
      for (int g = 0; g < KG; ++g) {
        const int rows = std::min(16, K - g * 16);
        DataCopy(a1[g * 16 * M16], gA[size_t(g) * 16 * M], Nd2NzParams(1, rows, M, 0, M, 16, 1, 0));
        DataCopy(b1[g * 16 * N16], gB[size_t(g) * 16 * N], Nd2NzParams(1, rows, N, 0, N, 16, 1, 0));
        LoadDataWithTranspose(a2[2 * g * 128], a1, LoadData2dTransposeParams(g * M1, M1, 1, KF - 1, 0, 0));
        LoadDataWithTranspose(b2[2 * g * N1 * 128], b1, LoadData2dTransposeParams(g * N1, N1, 1, 0, N1 - 1, 0));
      }
      MmadParams mp(M, N, K, 0, false, true);
      mp.kDirectionAlign = true;
      Mmad(c1, a2, b2, mp);
      FixpipeParamsV220 fp(N, M, M16, N, false);
      ext::FixpipeEpilogue<float> e;
      e.scale = gS; e.shift = gH; e.rowwise = true;
      ext::FixpipeWithEpilogue(gC, c1, fp, e);
    });
  } catch (const std::exception& e) {
    Report(false, name, e.what());
    return;
  }
  for (int r = 0; r < M; ++r)
    for (int c = 0; c < N; ++c) {
      double s = 0;
      for (int k = 0; k < K; ++k) s += double(ra[size_t(k) * M + r]) * rb[size_t(k) * N + c];
      const float want = float(s) * rs[r] + rh[r], got = C[size_t(r) * N + c];
      if (!(std::fabs(got - want) <= 1e-5f * std::fabs(want) + 1e-5f)) {
        char buf[200];
        std::snprintf(buf, sizeof buf, "C[%d][%d] = %g, want %g", r, c, got, want);
        Report(false, name, buf);
        return;
      }
    }
  Report(true, name);
}

// ---------------------------------------------------------------------------------------------
// Reads L0A (documented Zz fractals) or L0B (k-major fractals) back from the model's physical
// layout (cube_gemm.h), fractal by fractal.
template <typename T>
void ReadL0(std::vector<T>& out, const T* l0, bool is_b) {
  using namespace ascendc_host::cube;
  const CubeDtype dt = std::is_same_v<T, float> ? CubeDtype::kFloat32
                       : std::is_same_v<T, half> ? CubeDtype::kFloat16 : CubeDtype::kBFloat16;
  const size_t fe = 512 / sizeof(T);
  for (size_t f = 0; f * fe < out.size(); ++f) {
    const uint8_t* src = reinterpret_cast<const uint8_t*>(l0 + f * fe);
    const L0Layout lay = CubeL0Layout(dt, false);  // these kernels leave HF32 mode off
    if (is_b) CubeGetL0B(out.data() + f * fe, src, dt, lay);
    else CubeGetL0A(out.data() + f * fe, src, dt, lay);
  }
}

// Load3D: NC1HWC0 feature map in L1 -> L0A window (checked against a naive im2col through the
// documented Zz positions) and -> a full convolution through Mmad + Fixpipe.
struct ConvCase {
  int C, H, W, fh, fw, sh, sw, dh, dw, pl, pr, pt, pb;
};

template <typename T>
void CheckLoad3D(const char* name, const ConvCase& cc, int cout, bool window_to_l0b) {
  const int c0 = 32 / sizeof(T), C1 = (cc.C + c0 - 1) / c0;
  const int Hout = (cc.H + cc.pt + cc.pb - ((cc.fh - 1) * cc.dh + 1)) / cc.sh + 1;
  const int Wout = (cc.W + cc.pl + cc.pr - ((cc.fw - 1) * cc.dw + 1)) / cc.sw + 1;
  const int M = Hout * Wout, K = C1 * cc.fh * cc.fw * c0;
  std::vector<float> rx;
  std::vector<T> x = Fill<T>(size_t(C1) * cc.H * cc.W * c0, rx);  // NC1HWC0, N = 1
  for (int c1 = 0; c1 < C1; ++c1)  // channels beyond C are zero
    for (int p = 0; p < cc.H * cc.W; ++p)
      for (int q = 0; q < c0; ++q)
        if (c1 * c0 + q >= int(cc.C)) { x[(size_t(c1) * cc.H * cc.W + p) * c0 + q] = T(0.f); rx[(size_t(c1) * cc.H * cc.W + p) * c0 + q] = 0.f; }
  auto im2col = [&](int row, int col) -> float {
    const int oh = row / Wout, ow = row % Wout;
    const int c1 = col / (cc.fh * cc.fw * c0), kh = (col / c0) / cc.fw % cc.fh, kw = (col / c0) % cc.fw, q = col % c0;
    const int ih = oh * cc.sh + kh * cc.dh - cc.pt, iw = ow * cc.sw + kw * cc.dw - cc.pl;
    if (ih < 0 || ih >= cc.H || iw < 0 || iw >= cc.W) return 0.f;
    return rx[((size_t(c1) * cc.H + ih) * cc.W + iw) * c0 + q];
  };
  // Window: all of M from row 16, K from the second C0 column group.
  const int mStart = M > 32 ? 16 : 0, kStart = K > c0 ? c0 : 0;
  const int mExt = M - mStart, kExt = K - kStart;  // both reach the end of the im2col matrix
  const int mfr = (mExt + 15) / 16, kfr = (kExt + c0 - 1) / c0;
  std::vector<T> l0(size_t(mfr) * kfr * 512 / sizeof(T));
  // Weights for the full convolution: B^T (cout × K) for float, B (K × cout) for 16-bit.
  std::vector<float> rw;
  std::vector<T> w = Fill<T>(size_t(K) * cout, rw);
  std::vector<float> y(size_t(M) * cout, -5.f);
  const int M16 = CeilAlign(M, 16), N16 = CeilAlign(cout, 16), N1 = N16 / 16, K1 = K / c0, frac = 512 / sizeof(T);
  const bool bT = std::is_same_v<T, float>;
  std::string what;
  try {
    Run(name, [&] {
      TPipe pipe;
      TBuf<TPosition::A1> fmb; TBuf<TPosition::B1> b1b; TBuf<TPosition::A2> a2b; TBuf<TPosition::B2> b2b;
      TBuf<TPosition::CO1> c1b;
      pipe.InitBuffer(fmb, x.size() * sizeof(T));
      pipe.InitBuffer(a2b, std::max<size_t>(size_t(M16 / 16) * K1 * 512, l0.size() * sizeof(T)));
      pipe.InitBuffer(b2b, std::max<size_t>(size_t(K1) * N1 * 512, l0.size() * sizeof(T)));
      pipe.InitBuffer(b1b, size_t(K1 > 0 ? CeilAlign(K, 16) : 0) * N16 * sizeof(T) + (bT ? N16 * K * 4 : 0));
      pipe.InitBuffer(c1b, M16 * N16 * 4);
      auto fm = fmb.Get<T>(), a2 = a2b.Get<T>(), b2 = b2b.Get<T>(), b1 = b1b.Get<T>();
      auto c1 = c1b.Get<float>();
      GlobalTensor<T> gx, gw;
      gx.SetGlobalBuffer(x.data(), x.size());
      gw.SetGlobalBuffer(w.data(), w.size());
      DataCopy(fm, gx, uint32_t(x.size()));
      uint8_t pads[4] = {uint8_t(cc.pl), uint8_t(cc.pr), uint8_t(cc.pt), uint8_t(cc.pb)};
      // 1) the window alone, inspected through the host pointer.
      LoadData3DParamsV2<T> p;
      for (int i = 0; i < 4; ++i) p.padList[i] = pads[i];
      p.l1H = cc.H; p.l1W = cc.W; p.channelSize = C1 * c0;
      p.kExtension = kExt; p.mExtension = mExt; p.kStartPt = kStart; p.mStartPt = mStart;
      p.strideW = cc.sw; p.strideH = cc.sh; p.filterW = cc.fw; p.filterH = cc.fh;
      p.dilationFilterW = cc.dw; p.dilationFilterH = cc.dh; p.padValue = T(0.f);
      if (window_to_l0b) {
        LoadData(b2, fm, p);
        ReadL0<T>(l0, b2.HostPtr(), true);
      } else {
        LoadData(a2, fm, p);
        ReadL0<T>(l0, a2.HostPtr(), false);
      }
      // 2) the whole convolution: SetFmatrix + padding registers, isSetFMatrix = false.
      SetFmatrix(cc.H, cc.W, pads, FmatrixMode::FMATRIX_LEFT);
      SetLoadDataPaddingValue(T(0.f));
      LoadData3DParamsV2<T> q = p;
      q.l1H = 1; q.l1W = 1;  // ignored: taken from SetFmatrix
      q.kExtension = K; q.mExtension = M; q.kStartPt = 0; q.mStartPt = 0;
      static constexpr IsResetLoad3dConfig kUseRegs = {false, false};
      LoadData<T, kUseRegs>(a2, fm, q);
      if (bT) {  // w holds B^T (cout × K)
        DataCopy(b1, gw, Nd2NzParams(1, cout, K, 0, K, N16, 1, 0));
        for (int ki = 0; ki < K1; ++ki)
          LoadData(b2[ki * N1 * frac], b1[ki * N1 * frac], LoadData2DParams(0, N1, 1, 0, 0, false, 0));
      } else {   // w holds B (K × cout)
        const int KB1 = CeilAlign(K, 16) / 16;
        DataCopy(b1, gw, Nd2NzParams(1, K, cout, 0, cout, KB1 * 16, 1, 0));
        for (int ki = 0; ki < KB1; ++ki)
          LoadData(b2[ki * N1 * frac], b1[ki * frac], LoadData2DParams(0, N1, KB1, 0, 0, true, 0));
      }
      Mmad(c1, a2, b2, MmadParams(M, cout, K, 0, false, true));
      GlobalTensor<float> gy;
      gy.SetGlobalBuffer(y.data(), y.size());
      Fixpipe(gy, c1, FixpipeParamsV220(cout, M, M16, cout, false));
    });
  } catch (const std::exception& e) {
    Report(false, name, e.what());
    return;
  }
  for (int i = 0; i < mExt; ++i)
    for (int j = 0; j < kExt; ++j) {
      size_t off;
      if (window_to_l0b)  // physical L0B: fractal (j/c0, i/16) of the K×mExt matrix, k-major
        off = (size_t(j / c0) * mfr + i / 16) * (512 / sizeof(T)) + (j % c0) * 16 + i % 16;
      else                // documented Zz
        off = (size_t(i / 16) * kfr + j / c0) * (512 / sizeof(T)) + (i % 16) * c0 + j % c0;
      const float got = ToF(l0[off]), want = im2col(mStart + i, kStart + j);
      if (got != want) {
        char buf[200];
        std::snprintf(buf, sizeof buf, "window (%d,%d) = %g, want %g", i, j, got, want);
        Report(false, name, buf);
        return;
      }
    }
  for (int r = 0; r < M; ++r)
    for (int c = 0; c < cout; ++c) {
      double s = 0;
      for (int k = 0; k < K; ++k) s += double(im2col(r, k)) * (bT ? rw[size_t(c) * K + k] : rw[size_t(k) * cout + c]);
      if (y[size_t(r) * cout + c] != float(s)) {
        char buf[200];
        std::snprintf(buf, sizeof buf, "conv y[%d][%d] = %g, want %g", r, c, y[size_t(r) * cout + c], float(s));
        Report(false, name, buf);
        return;
      }
    }
  Report(true, name);
}


// Load3D with enTranspose into L0A: the window^T (K rows x M columns) in Zz, rows padded to 16,
// columns to 16 (float: two 16x8 fractals per 16 columns), checked element by element.
template <typename T>
void CheckLoad3DTranspose(const char* name, const ConvCase& cc) {
  const int c0 = 32 / sizeof(T), C1 = (cc.C + c0 - 1) / c0;
  const int Hout = (cc.H + cc.pt + cc.pb - ((cc.fh - 1) * cc.dh + 1)) / cc.sh + 1;
  const int Wout = (cc.W + cc.pl + cc.pr - ((cc.fw - 1) * cc.dw + 1)) / cc.sw + 1;
  const int M = Hout * Wout, K = C1 * cc.fh * cc.fw * c0;
  std::vector<float> rx;
  std::vector<T> x = Fill<T>(size_t(C1) * cc.H * cc.W * c0, rx);
  auto im2col = [&](int row, int col) -> float {
    const int oh = row / Wout, ow = row % Wout;
    const int c1 = col / (cc.fh * cc.fw * c0), kh = (col / c0) / cc.fw % cc.fh, kw = (col / c0) % cc.fw, q = col % c0;
    const int ih = oh * cc.sh + kh * cc.dh - cc.pt, iw = ow * cc.sw + kw * cc.dw - cc.pl;
    if (ih < 0 || ih >= cc.H || iw < 0 || iw >= cc.W) return 0.f;
    return rx[((size_t(c1) * cc.H + ih) * cc.W + iw) * c0 + q];
  };
  const int mStart = M > 32 ? 16 : 0, mExt = M - mStart;
  const int rowblk = (K + 15) / 16, colfr = (mExt + 15) / 16 * (16 / c0);
  std::vector<T> l0(size_t(rowblk) * colfr * 512 / sizeof(T));
  try {
    Run(name, [&] {
      TPipe pipe;
      TBuf<TPosition::A1> fmb; TBuf<TPosition::A2> a2b;
      pipe.InitBuffer(fmb, x.size() * sizeof(T));
      pipe.InitBuffer(a2b, l0.size() * sizeof(T));
      auto fm = fmb.Get<T>(), a2 = a2b.Get<T>();
      GlobalTensor<T> gx;
      gx.SetGlobalBuffer(x.data(), x.size());
      DataCopy(fm, gx, uint32_t(x.size()));
      LoadData3DParamsV2<T> p;
      p.padList[0] = cc.pl; p.padList[1] = cc.pr; p.padList[2] = cc.pt; p.padList[3] = cc.pb;
      p.l1H = cc.H; p.l1W = cc.W; p.channelSize = C1 * c0;
      p.kExtension = K; p.mExtension = mExt; p.kStartPt = 0; p.mStartPt = mStart;
      p.strideW = cc.sw; p.strideH = cc.sh; p.filterW = cc.fw; p.filterH = cc.fh;
      p.dilationFilterW = cc.dw; p.dilationFilterH = cc.dh; p.enTranspose = true;
      LoadData(a2, fm, p);
      ReadL0<T>(l0, a2.HostPtr(), false);
    });
  } catch (const std::exception& e) {
    Report(false, name, e.what());
    return;
  }
  for (int i = 0; i < K; ++i)
    for (int j = 0; j < mExt; ++j) {
      const size_t off = (size_t(i / 16) * colfr + j / c0) * (512 / sizeof(T)) + (i % 16) * c0 + j % c0;
      const float got = ToF(l0[off]), want = im2col(mStart + j, i);
      if (got != want) {
        char buf[200];
        std::snprintf(buf, sizeof buf, "A'[%d][%d] = %g, want %g", i, j, got, want);
        Report(false, name, buf);
        return;
      }
    }
  Report(true, name);
}

// ---------------------------------------------------------------------------------------------
// Each broken rule must raise a KernelError naming the kernel and the instruction.
void ExpectError(const char* name, const std::vector<std::string>& needles, const std::function<void()>& body,
                 int arch = 2201) {
  std::string kernel = std::string("cube_err_") + name;
  try {
    Run(kernel.c_str(), body, arch);
  } catch (const KernelError& e) {
    std::string msg = e.what();
    for (const std::string& n : needles)
      if (msg.find(n) == std::string::npos) {
        Report(false, std::string("err_") + name, "message lacks '" + n + "': " + msg);
        return;
      }
    if (msg.find(kernel) == std::string::npos) {
      Report(false, std::string("err_") + name, "message lacks the kernel name: " + msg);
      return;
    }
    std::printf("PASS err_%s: %s\n", name, msg.c_str());
    return;
  } catch (const std::exception& e) {
    Report(false, std::string("err_") + name, std::string("not a KernelError: ") + e.what());
    return;
  }
  Report(false, std::string("err_") + name, "no error raised");
}

struct CubeBufs {
  TPipe pipe;
  TBuf<TPosition::A1> a1b; TBuf<TPosition::B1> b1b; TBuf<TPosition::A2> a2b; TBuf<TPosition::B2> b2b;
  TBuf<TPosition::CO1> c1b;
  CubeBufs() {
    pipe.InitBuffer(a1b, 64 * 1024);
    pipe.InitBuffer(b1b, 64 * 1024);
    pipe.InitBuffer(a2b, 32 * 1024);
    pipe.InitBuffer(b2b, 32 * 1024);
    pipe.InitBuffer(c1b, 64 * 1024);
  }
};

void CheckErrors() {
  static std::vector<half> gbuf(64 * 1024);
  ExpectError("mmad_dst_position", {"Mmad", "dst"}, [] {
    CubeBufs b;
    Mmad(b.a2b.Get<float>(), b.a2b.Get<half>(), b.b2b.Get<half>(), MmadParams(16, 16, 16, 0, false, true));
  });
  ExpectError("mmad_fm_position", {"Mmad", "fm"}, [] {
    CubeBufs b;
    Mmad(b.c1b.Get<float>(), b.b2b.Get<half>(), b.b2b.Get<half>(), MmadParams(16, 16, 16, 0, false, true));
  });
  ExpectError("mmad_filter_position", {"Mmad", "filter"}, [] {
    CubeBufs b;
    Mmad(b.c1b.Get<float>(), b.a2b.Get<half>(), b.a1b.Get<half>(), MmadParams(16, 16, 16, 0, false, true));
  });
  ExpectError("mmad_m_4096", {"Mmad", "4095"}, [] {
    CubeBufs b;
    Mmad(b.c1b.Get<float>(), b.a2b.Get<half>(), b.b2b.Get<half>(), MmadParams(4096, 16, 16, 0, false, true));
  });
  ExpectError("mmad_fm_align", {"Mmad", "fm"}, [] {
    CubeBufs b;
    Mmad(b.c1b.Get<float>(), b.a2b.Get<half>()[128], b.b2b.Get<half>(), MmadParams(16, 16, 16, 0, false, true));
  });
  ExpectError("mmad_dst_align", {"Mmad", "dst"}, [] {
    CubeBufs b;
    Mmad(b.c1b.Get<float>()[64], b.a2b.Get<half>(), b.b2b.Get<half>(), MmadParams(16, 16, 16, 0, false, true));
  });
  ExpectError("mmad_footprint", {"Mmad", "fm"}, [] {
    CubeBufs b;  // 32 KB of L0A holds 32 half fractals; 256x256 needs 256
    Mmad(b.c1b.Get<float>(), b.a2b.Get<half>(), b.b2b.Get<half>(), MmadParams(256, 16, 256, 0, false, true));
  });
  ExpectError("mmad_dtype", {"Mmad", "float"}, [] {
    CubeBufs b;
    Mmad(b.c1b.Get<half>(), b.a2b.Get<half>(), b.b2b.Get<half>(), MmadParams(16, 16, 16, 0, false, true));
  });
  ExpectError("load2d_dst_footprint", {"LoadData", "dst"}, [] {
    CubeBufs b;  // 32 KB of L0A = 64 fractals
    LoadData(b.a2b.Get<half>(), b.a1b.Get<half>(), LoadData2DParams(0, 65, 1, 0, 0, false, 0));
  });
  ExpectError("load2d_src_footprint", {"LoadData", "src"}, [] {
    CubeBufs b;  // 64 KB of L1 = 128 fractals
    LoadData(b.a2b.Get<half>(), b.a1b.Get<half>(), LoadData2DParams(100, 2, 30, 0, 0, false, 0));
  });
  ExpectError("load2d_transpose_b32", {"LoadData", "ifTranspose"}, [] {
    CubeBufs b;
    LoadData(b.b2b.Get<float>(), b.b1b.Get<float>(), LoadData2DParams(0, 1, 1, 0, 0, true, 0));
  });
  ExpectError("load2d_dst_position", {"LoadData", "dst"}, [] {
    CubeBufs b;
    LoadData(b.c1b.Get<half>(), b.a1b.Get<half>(), LoadData2DParams(0, 1, 1, 0, 0, false, 0));
  });
  ExpectError("nd2nz_dst_position", {"Nd2Nz", "dst"}, [] {
    CubeBufs b;
    GlobalTensor<half> g;
    g.SetGlobalBuffer(gbuf.data(), gbuf.size());
    DataCopy(b.a2b.Get<half>(), g, Nd2NzParams(1, 16, 16, 0, 16, 16, 1, 0));  // L0A is not L1
  });
  ExpectError("nd2nz_dst_footprint", {"Nd2Nz", "dst"}, [] {
    CubeBufs b;
    GlobalTensor<half> g;
    g.SetGlobalBuffer(gbuf.data(), gbuf.size());
    DataCopy(b.a1b.Get<half>(), g, Nd2NzParams(1, 256, 256, 0, 256, 256, 1, 0));  // 128 KB into 64 KB
  });
  ExpectError("fixpipe_nz_nsize", {"Fixpipe", "multiple of 16"}, [] {
    CubeBufs b;
    GlobalTensor<float> g;
    g.SetGlobalBuffer(reinterpret_cast<float*>(gbuf.data()), gbuf.size() / 2);
    Fixpipe<float, float, CFG_NZ>(g, b.c1b.Get<float>(), FixpipeParamsV220(8, 16, 16, 2, false));
  });
  ExpectError("fixpipe_quant", {"Fixpipe", "quantPre"}, [] {
    CubeBufs b;
    GlobalTensor<half> g;
    g.SetGlobalBuffer(gbuf.data(), gbuf.size());
    Fixpipe(g, b.c1b.Get<float>(), FixpipeParamsV220(16, 16, 16, 16, false));  // NoQuant into half
  });
  ExpectError("fixpipe_src_position", {"Fixpipe", "src"}, [] {
    CubeBufs b;
    GlobalTensor<float> g;
    g.SetGlobalBuffer(reinterpret_cast<float*>(gbuf.data()), gbuf.size() / 2);
    Fixpipe(g, b.a2b.Get<float>(), FixpipeParamsV220(16, 16, 16, 16, false));
  });
  ExpectError("fixpipe_gm_range", {"Fixpipe", "dst"}, [] {
    CubeBufs b;
    static std::vector<float> small(100);
    GlobalTensor<float> g;
    g.SetGlobalBuffer(small.data(), small.size());
    Fixpipe(g, b.c1b.Get<float>(), FixpipeParamsV220(16, 16, 16, 16, false));
  });
  auto l3 = [](auto mutate) {
    return [mutate] {
      CubeBufs b;
      LoadData3DParamsV2<half> p;
      p.l1H = 8; p.l1W = 8; p.channelSize = 16; p.kExtension = 144; p.mExtension = 64;
      p.filterH = 3; p.filterW = 3;
      p.padList[0] = p.padList[1] = p.padList[2] = p.padList[3] = 1;
      mutate(p);
      LoadData(b.a2b.Get<half>(), b.a1b.Get<half>(), p);
    };
  };
  ExpectError("load3d_stride", {"LoadData", "[1, 63]"}, l3([](LoadData3DParamsV2<half>& p) { p.strideW = 64; }));
  ExpectError("load3d_kstart", {"LoadData", "kStartPt"}, l3([](LoadData3DParamsV2<half>& p) { p.kStartPt = 8; p.kExtension = 128; }));
  ExpectError("load3d_kext", {"LoadData", "kExtension"}, l3([](LoadData3DParamsV2<half>& p) { p.kExtension = 24; }));
  ExpectError("load3d_mext", {"LoadData", "mExtension"}, l3([](LoadData3DParamsV2<half>& p) { p.mExtension = 20; }));
  ExpectError("load3d_channel", {"LoadData", "channelSize"}, l3([](LoadData3DParamsV2<half>& p) { p.channelSize = 12; }));
  ExpectError("load3d_kwindow", {"LoadData", "K window"}, l3([](LoadData3DParamsV2<half>& p) { p.kExtension = 160; }));
  ExpectError("load3d_dst_footprint", {"LoadData", "dst"}, l3([](LoadData3DParamsV2<half>& p) {
    p.l1H = 64; p.l1W = 64; p.mExtension = 4096; }));
  ExpectError("load3d_fmatrix_unset", {"LoadData", "SetFmatrix"}, [] {
    CubeBufs b;
    LoadData3DParamsV2<half> p;
    p.l1H = 8; p.l1W = 8; p.channelSize = 16; p.kExtension = 16; p.mExtension = 64;
    static constexpr IsResetLoad3dConfig kRegs = {false, true};
    LoadData<half, kRegs>(b.a2b.Get<half>(), b.a1b.Get<half>(), p);
  });
  ExpectError("fixpipe_on_2002", {"Fixpipe", "2002"}, [] {
    CubeBufs b;
    GlobalTensor<float> g;
    g.SetGlobalBuffer(reinterpret_cast<float*>(gbuf.data()), gbuf.size() / 2);
    Fixpipe(g, b.c1b.Get<float>(), FixpipeParamsV220(16, 16, 16, 16, false));
  }, 2002);
}

// 2002: Mmad -> DataCopy CO1 -> CO2 (float -> half, NZ kept) then a strided UB -> GM copy per block.
void CheckCo2Path() {
  const int M = 32, N = 32, K = 32;
  std::vector<float> ra, rb;
  std::vector<half> A = Fill<half>(M * K, ra), B = Fill<half>(K * N, rb);
  std::vector<half> nz(M * N);
  try {
    Run("cube_2002_co2", [&] {
      TPipe pipe;
      TBuf<TPosition::A1> a1b; TBuf<TPosition::B1> b1b; TBuf<TPosition::A2> a2b; TBuf<TPosition::B2> b2b;
      TBuf<TPosition::CO1> c1b; TBuf<TPosition::CO2> c2b;
      pipe.InitBuffer(a1b, M * K * 2); pipe.InitBuffer(b1b, K * N * 2);
      pipe.InitBuffer(a2b, M * K * 2); pipe.InitBuffer(b2b, K * N * 2);
      pipe.InitBuffer(c1b, M * N * 4); pipe.InitBuffer(c2b, M * N * 2);
      auto a1 = a1b.Get<half>(), b1 = b1b.Get<half>(), a2 = a2b.Get<half>(), b2 = b2b.Get<half>();
      GlobalTensor<half> gA, gB;
      gA.SetGlobalBuffer(A.data(), A.size());
      gB.SetGlobalBuffer(B.data(), B.size());
      DataCopy(a1, gA, Nd2NzParams(1, M, K, 0, K, M, 1, 0));
      DataCopy(b1, gB, Nd2NzParams(1, K, N, 0, N, K, 1, 0));
      for (int mi = 0; mi < M / 16; ++mi)
        LoadData(a2[mi * (K / 16) * 256], a1[mi * 256], LoadData2DParams(0, K / 16, M / 16, 0, 0, false, 0));
      for (int ki = 0; ki < K / 16; ++ki)
        LoadData(b2[ki * (N / 16) * 256], b1[ki * 256], LoadData2DParams(0, N / 16, K / 16, 0, 0, true, 0));
      auto c1 = c1b.Get<float>();
      Mmad(c1, a2, b2, MmadParams(M, N, K, 0, false, true));
      auto c2 = c2b.Get<half>();
      DataCopyEnhancedParams e;
      e.blockMode = BlockMode::BLOCK_MODE_MATRIX;
      DataCopy(c2, c1, DataCopyParams(1, (M / 16) * (N / 16), 0, 0), e);
      std::memcpy(nz.data(), c2.HostPtr(), nz.size() * 2);
    }, 2002);
  } catch (const std::exception& e) {
    Report(false, "co2_path_2002", e.what());
    return;
  }
  for (int r = 0; r < M; ++r)
    for (int c = 0; c < N; ++c) {
      double s = 0;
      for (int k = 0; k < K; ++k) s += double(ra[r * K + k]) * rb[k * N + c];
      const float got = float(nz[(c / 16) * M * 16 + r * 16 + c % 16]);
      if (got != float(half(float(s)))) {
        Report(false, "co2_path_2002", "mismatch at " + std::to_string(r) + "," + std::to_string(c));
        return;
      }
    }
  Report(true, "co2_path_2002");
}

}  // namespace

int main() {
  CheckMatmul<half, float>("matmul_f16_f32_30x40x70", 30, 40, 70, {});
  CheckMatmul<half, half>("matmul_f16_f16_relu_17x33x16", 17, 33, 16, {.relu = true});
  CheckMatmul<bfloat16_t, bfloat16_t>("matmul_bf16_bf16_45x50x90", 45, 50, 90, {});
  CheckMatmul<float, float>("matmul_f32_f32_100x200x65", 100, 200, 65, {});
  CheckMatmul<float, half>("matmul_f32_f16_15x17x9", 15, 17, 9, {});
  CheckMatmul<half, float>("matmul_f16_bias_30x40x70", 30, 40, 70, {.bias = true});
  CheckMatmul<half, float>("matmul_f16_accumulate_16x48x100", 16, 48, 100, {.accumulate_twice = true});
  CheckMatmul<float, float>("matmul_f32_accumulate_9x20x37", 9, 20, 37, {.accumulate_twice = true});
  CheckMatmul<half, half>("epilogue_f16_50x64x40", 50, 64, 40, {.epilogue = true});
  CheckMatmul<float, float>("epilogue_f32_33x20x24", 33, 20, 24, {.epilogue = true});
  CheckLoadTransposeF32("matmul_f32_load_transpose_rowwise_33x40x37", 33, 40, 37);
  CheckLoadTransposeF32("matmul_f32_load_transpose_rowwise_16x16x16", 16, 16, 16);
  CheckGemv<half>("gemv_f16_n40_k70", 40, 70);
  CheckGemv<float>("gemv_f32_n17_k33", 17, 33);
  CheckLoad3D<half>("load3d_f16_s2_p1", {32, 9, 11, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1}, 24, false);
  CheckLoad3D<half>("load3d_f16_dil2_asym", {16, 10, 8, 3, 2, 1, 1, 2, 2, 2, 0, 1, 3}, 16, false);
  CheckLoad3D<float>("load3d_f32_s1_p0", {16, 6, 7, 2, 2, 1, 1, 1, 1, 0, 0, 0, 0}, 20, false);
  CheckLoad3D<half>("load3d_f16_to_l0b", {32, 9, 11, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1}, 24, true);
  CheckLoad3D<float>("load3d_f32_to_l0b", {16, 7, 7, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1}, 20, true);
  CheckLoad3DTranspose<half>("load3d_f16_entranspose", {32, 9, 11, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1});
  CheckLoad3DTranspose<float>("load3d_f32_entranspose", {16, 7, 9, 3, 2, 1, 2, 2, 1, 1, 0, 2, 1});
  CheckCo2Path();
  CheckErrors();
  std::printf("cube_kernel_check: %s (%d failures)\n", g_fail ? "FAILED" : "OK", g_fail);
  return g_fail ? 1 : 0;
}
