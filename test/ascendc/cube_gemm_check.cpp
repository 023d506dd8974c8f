// Standalone check + benchmark of the cube micro-kernel (csrc/ascendc/cube_gemm.cpp).
//   g++ -O3 -std=c++20 -Icsrc/ascendc test/ascendc/cube_gemm_check.cpp csrc/ascendc/cube_gemm.cpp -o cube_gemm_check
//   ./cube_gemm_check check        # correctness over odd sizes, dtypes, init modes, ISAs
//   ./cube_gemm_check bench        # GFLOP/s per call on one core
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "cube_gemm.h"

using namespace ascendc_host::cube;

namespace {

uint16_t FloatToHalfExact(float f) {  // for values exactly representable in half (normal or 0)
  uint32_t x;
  std::memcpy(&x, &f, 4);
  const uint32_t sign = (x >> 16) & 0x8000u;
  if ((x & 0x7FFFFFFFu) == 0) return static_cast<uint16_t>(sign);
  const int exp = static_cast<int>((x >> 23) & 0xFF) - 127 + 15;
  return static_cast<uint16_t>(sign | (exp << 10) | ((x >> 13) & 0x3FF));
}
uint16_t FloatToBf16Exact(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  return static_cast<uint16_t>(x >> 16);
}

bool g_hf32 = true;  // float operands in HF32 mode (bf16x3 on AMX) for the exact-value grid

struct Case {
  int m, n, k;
  CubeDtype t;
  CubeInit init;
  bool gemv;
  int extra_kfrac;  // extra fractals in the A row pitch
};

// Packs logical row-major A (m×k) and B (k×n) into the model's physical L0A/L0B layouts of the
// active ISA family (through the same writers LoadData uses: documented Zz rows for A, k-major
// fractals for B), with garbage (NaN) in every padding slot so a kernel that reads padding fails.
// Buffers are 2 KB aligned, like the L0 pools (the AMX layouts group fractals by address).
template <typename E>
void Pack(const Case& cs, const std::vector<float>& A, const std::vector<float>& B, std::vector<E>& pa,
          std::vector<E>& pb, E (*conv)(float), size_t& a_off, size_t& b_off) {
  const int c0 = CubeC0(cs.t);
  const int m1 = (cs.m + 15) / 16, n1 = (cs.n + 15) / 16, k1 = (cs.k + c0 - 1) / c0;
  const int akf = k1 + cs.extra_kfrac;
  const E nan = conv(std::nanf(""));
  const size_t fe = 512 / sizeof(E);  // elements per fractal
  const size_t a_frac = cs.gemv ? size_t(k1 + 15) / 16 + 1 : size_t(m1) * akf;
  const size_t b_frac = size_t(k1) * n1;
  pa.assign((a_frac + 8) * fe, nan);
  pb.assign((b_frac + 8) * fe, nan);
  a_off = (2048 - reinterpret_cast<uintptr_t>(pa.data()) % 2048) % 2048 / sizeof(E);
  b_off = (2048 - reinterpret_cast<uintptr_t>(pb.data()) % 2048) % 2048 / sizeof(E);
  // Documented content, fractal by fractal, then written through the layout's writers.
  std::vector<E> doc(a_frac * fe, nan);
  if (cs.gemv) {
    for (int j = 0; j < cs.k; ++j) doc[j] = conv(A[j]);
  } else {
    for (int r = 0; r < cs.m; ++r)
      for (int j = 0; j < cs.k; ++j)
        doc[(static_cast<size_t>(r / 16) * akf + j / c0) * 16 * c0 + (r % 16) * c0 + j % c0] =
            conv(A[static_cast<size_t>(r) * cs.k + j]);
  }
  for (size_t f = 0; f < a_frac; ++f)
    CubePutL0A(reinterpret_cast<uint8_t*>(pa.data() + a_off + f * fe), doc.data() + f * fe, 0, 16, cs.t,
               CubeL0Layout(cs.t, g_hf32));
  std::vector<E> km(b_frac * fe, nan);
  for (int j = 0; j < cs.k; ++j)
    for (int col = 0; col < cs.n; ++col)
      km[(static_cast<size_t>(j / c0) * n1 + col / 16) * c0 * 16 + L0BPhysOffset(j % c0, col % 16)] =
          conv(B[static_cast<size_t>(j) * cs.n + col]);
  for (size_t f = 0; f < b_frac; ++f)
    CubePutL0B(reinterpret_cast<uint8_t*>(pb.data() + b_off + f * fe), km.data() + f * fe, cs.t, CubeL0Layout(cs.t, g_hf32));
}

float Ident(float f) { return f; }
uint16_t ToHalf(float f) { return std::isnan(f) ? 0x7E00 : FloatToHalfExact(f); }
uint16_t ToBf16(float f) { return FloatToBf16Exact(f); }

size_t CIndex(int m, int r, int col) {
  const int m1 = (m + 15) / 16;
  return static_cast<size_t>(col / 16) * m1 * 256 + static_cast<size_t>(r) * 16 + col % 16;
}

bool RunCase(const Case& cs, std::mt19937& rng) {
  const int m = cs.gemv ? 1 : cs.m;
  Case c2 = cs;
  c2.m = m;
  std::uniform_int_distribution<int> d(-8, 8);
  std::vector<float> A(static_cast<size_t>(m) * cs.k), B(static_cast<size_t>(cs.k) * cs.n),
      bias(cs.n);
  for (auto& v : A) v = d(rng) / 8.0f;  // exact in half and bf16; sums exact in float
  for (auto& v : B) v = d(rng) / 4.0f;
  for (auto& v : bias) v = d(rng) / 2.0f;
  const int m1 = (m + 15) / 16, n1 = (cs.n + 15) / 16;
  std::vector<float> C(static_cast<size_t>(m1) * n1 * 256, std::nanf("")), Cref(static_cast<size_t>(m) * cs.n);
  // Accumulate mode starts from a known C.
  for (int r = 0; r < m; ++r)
    for (int col = 0; col < cs.n; ++col) {
      const float init = cs.init == CubeInit::kAccumulate ? static_cast<float>((r + col) % 5) : 0.f;
      if (cs.init == CubeInit::kAccumulate) C[CIndex(m, r, col)] = init;
      double s = cs.init == CubeInit::kBias ? bias[col] : init;
      for (int j = 0; j < cs.k; ++j) s += static_cast<double>(A[static_cast<size_t>(r) * cs.k + j]) * B[static_cast<size_t>(j) * cs.n + col];
      Cref[static_cast<size_t>(r) * cs.n + col] = static_cast<float>(s);
    }
  CubeGemmShape s;
  s.m = m; s.n = cs.n; s.k = cs.k; s.init = cs.init; s.bias = bias.data(); s.gemv = cs.gemv; s.hf32 = g_hf32;
  s.a_k_fractals = (cs.k + CubeC0(cs.t) - 1) / CubeC0(cs.t) + cs.extra_kfrac;
  size_t ao = 0, bo = 0;
  if (cs.t == CubeDtype::kFloat32) {
    std::vector<float> pa, pb;
    Pack<float>(c2, A, B, pa, pb, Ident, ao, bo);
    CubeGemm(C.data(), pa.data() + ao, pb.data() + bo, cs.t, s);
  } else {
    std::vector<uint16_t> pa, pb;
    Pack<uint16_t>(c2, A, B, pa, pb, cs.t == CubeDtype::kFloat16 ? ToHalf : ToBf16, ao, bo);
    CubeGemm(C.data(), pa.data() + ao, pb.data() + bo, cs.t, s);
  }
  for (int r = 0; r < m1 * 16; ++r)
    for (int col = 0; col < n1 * 16; ++col) {
      if (r < m && col < cs.n) continue;
      // Padding of the C fractals is never written (it was NaN, and stays NaN in accumulate mode).
      if (!std::isnan(C[CIndex(m, r, col)])) {
        std::printf("FAIL isa=%s m=%d n=%d k=%d dtype=%d: C padding (%d,%d) was written\n", CubeGemmIsa(), m, cs.n,
                    cs.k, static_cast<int>(cs.t), r, col);
        return false;
      }
    }
  for (int r = 0; r < m; ++r)
    for (int col = 0; col < cs.n; ++col) {
      const float got = C[CIndex(m, r, col)], want = Cref[static_cast<size_t>(r) * cs.n + col];
      if (!(got == want)) {
        std::printf("FAIL isa=%s m=%d n=%d k=%d dtype=%d init=%d gemv=%d at (%d,%d): got %g want %g\n",
                    CubeGemmIsa(), m, cs.n, cs.k, static_cast<int>(cs.t), static_cast<int>(cs.init),
                    cs.gemv, r, col, got, want);
        return false;
      }
    }
  return true;
}

// float on random normal data against a double reference: max |C - ref| / sum_k |a||b| over C.
double AccuracyF32(int m, int n, int k, CubeInit init, std::mt19937& rng) {
  std::normal_distribution<float> d;
  std::vector<float> A(size_t(m) * k), B(size_t(k) * n), bias(n);
  for (auto& v : A) v = d(rng);
  for (auto& v : B) v = d(rng);
  for (auto& v : bias) v = d(rng);
  const int m1 = (m + 15) / 16, n1 = (n + 15) / 16;
  std::vector<float> C(size_t(m1) * n1 * 256, std::nanf(""));
  for (int r = 0; r < m; ++r)
    for (int col = 0; col < n; ++col) C[CIndex(m, r, col)] = init == CubeInit::kAccumulate ? d(rng) : 0.f;
  std::vector<float> C0 = C;
  Case cs{m, n, k, CubeDtype::kFloat32, init, false, 0};
  std::vector<float> pa, pb;
  size_t ao = 0, bo = 0;
  Pack<float>(cs, A, B, pa, pb, Ident, ao, bo);
  CubeGemmShape s;
  s.m = m; s.n = n; s.k = k; s.init = init; s.bias = bias.data(); s.hf32 = g_hf32;
  CubeGemm(C.data(), pa.data() + ao, pb.data() + bo, CubeDtype::kFloat32, s);
  double worst = 0;
  for (int r = 0; r < m; ++r)
    for (int col = 0; col < n; ++col) {
      double ref = init == CubeInit::kAccumulate ? C0[CIndex(m, r, col)] : init == CubeInit::kBias ? bias[col] : 0.0;
      double mag = std::fabs(ref);
      for (int j = 0; j < k; ++j) {
        const double p = double(A[size_t(r) * k + j]) * B[size_t(j) * n + col];
        ref += p;
        mag += std::fabs(p);
      }
      worst = std::max(worst, std::fabs(C[CIndex(m, r, col)] - ref) / mag);
    }
  return worst;
}

int Check() {
  std::mt19937 rng(1234);
  const int sizes[] = {1, 15, 16, 17, 100, 257};
  int fails = 0, runs = 0;
  for (const char* isa : {"amx", "avx512", "avx2", "scalar"}) {
    if (!CubeGemmForceIsa(isa)) { std::printf("skip isa %s (not supported)\n", isa); continue; }
    for (CubeDtype t : {CubeDtype::kFloat32, CubeDtype::kFloat16, CubeDtype::kBFloat16})
      for (int m : sizes)
        for (int n : sizes)
          for (int k : sizes) {
            if (std::string(isa) == "scalar" && m * n * k > 300000) continue;
            const CubeInit init = static_cast<CubeInit>((m + n + k) % 3);
            fails += !RunCase({m, n, k, t, init, false, (m + k) % 2}, rng);
            ++runs;
          }
    // Last M blocks of 1-2 rows (joined to the block before in a tile straddling the boundary) and
    // 2-3 row tiles (k-phase partial sums); n = 64 spreads four column blocks as 2 + 2.
    for (CubeDtype t : {CubeDtype::kFloat32, CubeDtype::kFloat16, CubeDtype::kBFloat16})
      for (int m : {2, 3, 18, 33, 34, 35, 49, 50})
        for (int n : {16, 17, 40, 64})
          for (int k : {7, 64, 300}) {
            const CubeInit init = static_cast<CubeInit>((m + n + k) % 3);
            fails += !RunCase({m, n, k, t, init, false, (m + n) % 2}, rng);
            ++runs;
          }
    for (CubeDtype t : {CubeDtype::kFloat32, CubeDtype::kFloat16, CubeDtype::kBFloat16})
      for (int n : sizes)
        for (int k : {1, 7, 8, 9, 33, 300}) {
          fails += !RunCase({1, n, k, t, CubeInit::kAccumulate, true, 0}, rng);
          ++runs;
        }
    for (bool hf32 : {false, true}) {  // float accuracy on random data (HF32 on AMX: bf16x3)
      g_hf32 = hf32;
      double worst = 0;
      const int shapes[][3] = {{37, 45, 300}, {128, 256, 64}, {1, 33, 77}, {16, 16, 4095}, {100, 17, 9}};
      int i = 0;
      for (const auto& sh : shapes) worst = std::max(worst, AccuracyF32(sh[0], sh[1], sh[2], static_cast<CubeInit>(i++ % 3), rng));
      const bool bf16x3 = CubeL0Layout(CubeDtype::kFloat32, hf32) == L0Layout::kAmx;
      std::printf("isa %s hf32 %d float max error / sum|a||b| = %.2e\n", isa, int(hf32), worst);
      fails += worst > (bf16x3 ? 3e-5 : 1e-6);
      ++runs;
    }
    g_hf32 = true;
    // Large k crosses the k-chunking.
    fails += !RunCase({40, 70, 1000, CubeDtype::kFloat32, CubeInit::kAccumulate, false, 0}, rng);
    fails += !RunCase({33, 50, 4095, CubeDtype::kFloat16, CubeInit::kBias, false, 1}, rng);
    runs += 2;
  }
  CubeGemmForceIsa(nullptr);
  std::printf("cube_gemm check: %d/%d cases passed%s\n", runs - fails, runs, fails ? "" : " OK");
  return fails ? 1 : 0;
}

int Bench(int argc, char** argv) {
  if (argc > 2) CubeGemmForceIsa(argv[2]);
  std::printf("isa: %s\n", CubeGemmIsa());
  for (CubeDtype t : {CubeDtype::kFloat32, CubeDtype::kFloat16, CubeDtype::kBFloat16}) {
    // Cubes, then tiles that fill a 910B L0C (128 KB float) with L0A/L0B within 64 KB.
    const int shapes[][3] = {{64, 64, 64}, {128, 128, 128}, {256, 256, 256}, {128, 256, 64}, {256, 128, 64}, {128, 128, 256}};
    for (const auto& sh : shapes) {
      for (CubeInit init : {CubeInit::kZero, CubeInit::kAccumulate}) {
        const int m = sh[0], n = sh[1], k = sh[2];
        const int sz = m;
        const int c0 = CubeC0(t);
        const size_t esz = t == CubeDtype::kFloat32 ? 4 : 2;
        std::vector<unsigned char> pa(static_cast<size_t>(m) * k * esz + 64), pb(static_cast<size_t>(k) * n * esz + 64);
        for (size_t i = 0; i < pa.size(); i += 2) { pa[i] = 0; pa[i + 1] = 0x3C; }  // 1.0h / tiny floats
        for (size_t i = 0; i < pb.size(); i += 2) { pb[i] = 0; pb[i + 1] = 0x3C; }
        if (t == CubeDtype::kFloat32) {
          for (size_t i = 0; i + 4 <= pa.size(); i += 4) { float v = 0.5f; std::memcpy(&pa[i], &v, 4); }
          for (size_t i = 0; i + 4 <= pb.size(); i += 4) { float v = 0.25f; std::memcpy(&pb[i], &v, 4); }
        }
        std::vector<float> c(static_cast<size_t>(m) * n, 0.f);
        CubeGemmShape s;
        s.m = m; s.n = n; s.k = k; s.init = init;
        (void)c0;
        const double flops = 2.0 * m * n * k;
        int iters = static_cast<int>(std::max(20.0, 4e9 / flops));
        for (int i = 0; i < 5; ++i) CubeGemm(c.data(), pa.data(), pb.data(), t, s);
        double best = 1e30;
        for (int rep = 0; rep < 5; ++rep) {
          auto t0 = std::chrono::steady_clock::now();
          for (int i = 0; i < iters / 5; ++i) CubeGemm(c.data(), pa.data(), pb.data(), t, s);
          double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / (iters / 5);
          best = std::min(best, sec);
        }
        (void)sz;
        std::printf("%-5s m=%-4d n=%-4d k=%-4d %-5s %7.1f GFLOP/s  (%.2f us/call)\n",
                    t == CubeDtype::kFloat32 ? "f32" : t == CubeDtype::kFloat16 ? "f16" : "bf16", m, n, k,
                    init == CubeInit::kZero ? "init" : "accum", flops / best * 1e-9, best * 1e6);
      }
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "check";
  if (mode == "bench") return Bench(argc, argv);
  return Check();
}
