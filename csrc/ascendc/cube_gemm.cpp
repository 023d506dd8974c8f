// Register-blocked GEMM over the model's L0A/L0B/L0C physical layouts (see cube_gemm.h).
//
// Micro-kernel: an MR×(16·NB) block of C lives in registers; per k step it loads NB 16-float
// vectors of B (one k row of NB consecutive L0B fractals) and broadcasts MR values of A straight
// from the Zz fractal, then does MR·NB FMAs. AVX-512: MR ≤ 8, NB ≤ 3 (24 accumulators, 11 loads
// per 24 FMAs, so the two FMA ports — not the load ports — are the limit). AVX2: MR ≤ 6, NB = 1
// (a 16-column block is two ymm). Scalar: the same loops in plain C++.
// A tile never straddles a 16-row M block, so A rows are fixed offsets m0*C0 from one pointer.
// The last 16-column block is lane-masked when n % 16 != 0 (loads zero the padding, stores skip
// it), and rows past m are never computed, so garbage in fractal padding is never touched.
#include "cube_gemm.h"

// The micro-kernels rely on full unrolling of the MR×NB register block (so the accumulators stay
// in registers); GCC only does that at -O3, and the extension may be built at -O2.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("O3")
#endif

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string_view>
#include <utility>

#if defined(__x86_64__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <cpuid.h>
#include <immintrin.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <vector>
#define CUBE_X86 1
#else
#define CUBE_X86 0
#endif

namespace ascendc_host::cube {
namespace {

enum Mode : int { kModeAcc = 0, kModeZero = 1, kModeBias = 2 };

struct KArgs {
  const float* a;  // A at (row r0 of an M block, k = first k of this chunk)
  const float* a2; // straddling tiles: rows r >= SPLIT are at a2 + (r - SPLIT) * C0 (next M block)
  long a_frac;     // floats from one K fractal of A to the next (16*C0; C0 for GEMV)
  const float* b;  // B at fractal (first ki of the chunk, ni = first column block of the tile)
  long b_frac;     // floats from K fractal row ki to ki+1 (nFractals*C0*16)
  float* c;        // C at (row, first column block of the tile), Nz
  long c_blk;      // floats between 16-column blocks of C (M1*256)
  const float* bias;  // kModeBias: bias of the tile's first column
  int k;           // k steps in this chunk
  int mode;
  uint32_t mask;   // valid lanes of the last column block (0xFFFF when full)
};
using KernelFn = void (*)(const KArgs&);

// ------------------------------------------------------------------------------------------
// Scalar fallback (any architecture).
template <int C0>
void KernelScalar(const KArgs& p, int mr, int nb) {
  float acc[16][16 * 4];
  const int ncols = nb * 16;
  for (int r = 0; r < mr; ++r)
    for (int j = 0; j < ncols; ++j) {
      const int blk = j / 16, lane = j % 16;
      const bool valid = blk < nb - 1 || ((p.mask >> lane) & 1u);
      if (!valid) { acc[r][j] = 0.f; continue; }
      if (p.mode == kModeAcc) acc[r][j] = p.c[blk * p.c_blk + r * 16 + lane];
      else if (p.mode == kModeBias) acc[r][j] = p.bias[j];
      else acc[r][j] = 0.f;
    }
  const float* a = p.a;
  const float* b = p.b;
  int k0 = 0;
  for (int kk = 0; kk < p.k; ++kk) {
    for (int r = 0; r < mr; ++r) {
      const float av = a[r * C0 + k0];
      for (int blk = 0; blk < nb; ++blk) {
        const float* bp = b + blk * C0 * 16 + k0 * 16;
        for (int lane = 0; lane < 16; ++lane) acc[r][blk * 16 + lane] += av * bp[lane];
      }
    }
    if (++k0 == C0) { k0 = 0; a += p.a_frac; b += p.b_frac; }
  }
  for (int r = 0; r < mr; ++r)
    for (int j = 0; j < ncols; ++j) {
      const int blk = j / 16, lane = j % 16;
      if (blk < nb - 1 || ((p.mask >> lane) & 1u)) p.c[blk * p.c_blk + r * 16 + lane] = acc[r][j];
    }
}

#if CUBE_X86
// ------------------------------------------------------------------------------------------
// AVX-512F.
// One k step: NB vector loads of B, MR broadcasts of A, MR·NB FMAs.
template <int MR, int NB, int C0, bool MASKED>
__attribute__((target("avx512f"), always_inline)) inline void Step512(__m512 (&acc)[MR][NB], const float* a,
                                                                    const float* b, int k0, __mmask16 last) {
  __m512 bv[NB];
#pragma GCC unroll 8
  for (int j = 0; j < NB; ++j) {
    const float* bp = b + j * C0 * 16 + k0 * 16;
    bv[j] = (MASKED && j == NB - 1) ? _mm512_maskz_loadu_ps(last, bp) : _mm512_loadu_ps(bp);
  }
#pragma GCC unroll 16
  for (int r = 0; r < MR; ++r) {
    const __m512 av = _mm512_set1_ps(a[r * C0 + k0]);
#pragma GCC unroll 8
    for (int j = 0; j < NB; ++j) acc[r][j] = _mm512_fmadd_ps(av, bv[j], acc[r][j]);
  }
}

template <int MR, int NB, int C0, bool MASKED>
__attribute__((target("avx512f"))) void KernelAvx512(const KArgs& p) {
  const __mmask16 last = MASKED ? static_cast<__mmask16>(p.mask) : static_cast<__mmask16>(0xFFFF);
  __m512 acc[MR][NB];
  if (p.mode == kModeAcc) {
    #pragma GCC unroll 16
    for (int r = 0; r < MR; ++r)
      #pragma GCC unroll 16
      for (int j = 0; j < NB; ++j) {
        const float* cp = p.c + j * p.c_blk + r * 16;
        acc[r][j] = (MASKED && j == NB - 1) ? _mm512_maskz_loadu_ps(last, cp) : _mm512_loadu_ps(cp);
      }
  } else if (p.mode == kModeBias) {
    #pragma GCC unroll 16
    for (int j = 0; j < NB; ++j) {
      const __m512 bv = (MASKED && j == NB - 1) ? _mm512_maskz_loadu_ps(last, p.bias + j * 16)
                                                : _mm512_loadu_ps(p.bias + j * 16);
      #pragma GCC unroll 16
      for (int r = 0; r < MR; ++r) acc[r][j] = bv;
    }
  } else {
    #pragma GCC unroll 16
    for (int r = 0; r < MR; ++r)
      #pragma GCC unroll 16
      for (int j = 0; j < NB; ++j) acc[r][j] = _mm512_setzero_ps();
  }
  const float* a = p.a;
  const float* b = p.b;
  const long a_frac = p.a_frac, b_frac = p.b_frac;
  int k = p.k;
  for (; k >= C0; k -= C0) {
#pragma GCC unroll 16
    for (int k0 = 0; k0 < C0; ++k0) Step512<MR, NB, C0, MASKED>(acc, a, b, k0, last);
    a += a_frac;
    b += b_frac;
  }
  for (int k0 = 0; k0 < k; ++k0) Step512<MR, NB, C0, MASKED>(acc, a, b, k0, last);
  #pragma GCC unroll 16
  for (int r = 0; r < MR; ++r)
    #pragma GCC unroll 16
    for (int j = 0; j < NB; ++j) {
      float* cp = p.c + j * p.c_blk + r * 16;
      if (MASKED && j == NB - 1) _mm512_mask_storeu_ps(cp, last, acc[r][j]);
      else _mm512_storeu_ps(cp, acc[r][j]);
    }
}

// ------------------------------------------------------------------------------------------
// AVX2 + FMA: one 16-column block = two ymm.
template <bool MASKED>
__attribute__((target("avx2,fma"), always_inline)) inline void Load2(const float* q, __m256& lo, __m256& hi,
                                                                  __m256i m0, __m256i m1) {
  if (MASKED) { lo = _mm256_maskload_ps(q, m0); hi = _mm256_maskload_ps(q + 8, m1); }
  else { lo = _mm256_loadu_ps(q); hi = _mm256_loadu_ps(q + 8); }
}
template <int MR, int C0, bool MASKED, int SPLIT = MR>
__attribute__((target("avx2,fma"), always_inline)) inline void Step256(__m256 (&acc)[MR][2], const float* a,
                                                                     const float* b, int k0, __m256i m0, __m256i m1,
                                                                     const float* a2 = nullptr) {
  __m256 b0, b1;
  Load2<MASKED>(b + k0 * 16, b0, b1, m0, m1);
#pragma GCC unroll 16
  for (int r = 0; r < MR; ++r) {
    const __m256 av = _mm256_broadcast_ss(r < SPLIT ? a + r * C0 + k0 : a2 + (r - SPLIT) * C0 + k0);
    acc[r][0] = _mm256_fmadd_ps(av, b0, acc[r][0]);
    acc[r][1] = _mm256_fmadd_ps(av, b1, acc[r][1]);
  }
}

// The lanes of a 16-column block's two halves that `mask` (bit j = column j) keeps, as maskload masks.
__attribute__((target("avx2,fma"), always_inline)) inline void LaneMasks(uint32_t mask, __m256i& m0, __m256i& m1) {
  const __m256i lanes0 = _mm256_setr_epi32(1, 2, 4, 8, 16, 32, 64, 128);
  const __m256i lanes1 = _mm256_setr_epi32(256, 512, 1024, 2048, 4096, 8192, 16384, 32768);
  const __m256i mk = _mm256_set1_epi32(static_cast<int>(mask));
  m0 = _mm256_cmpeq_epi32(_mm256_and_si256(mk, lanes0), lanes0);
  m1 = _mm256_cmpeq_epi32(_mm256_and_si256(mk, lanes1), lanes1);
}

// SPLIT < MR: a tile straddling two M blocks (rows SPLIT.. come from p.a2); see DriveFloat.
// KS > 1: short row tiles (a 16-row block's remainder, M = 1 GEMVs) have too few accumulators to
// cover the FMA latency (MR = 1 is one dependent chain of FMA pairs, a quarter of the two FMA ports),
// so they keep KS independent partial sums over interleaved k steps (k0 % KS), added at the end.
template <int MR, int C0, bool MASKED, int SPLIT = MR, int KS = 1>
__attribute__((target("avx2,fma"))) void KernelAvx2(const KArgs& p) {
  static_assert(C0 % KS == 0, "the k phases must tile a fractal's C0 steps");
  __m256i m0 = _mm256_set1_epi32(-1), m1 = _mm256_set1_epi32(-1);
  if (MASKED) LaneMasks(p.mask, m0, m1);
  __m256 acc[KS][MR][2];
  if (p.mode == kModeAcc) {
    #pragma GCC unroll 16
    for (int r = 0; r < MR; ++r) Load2<MASKED>(p.c + r * 16, acc[0][r][0], acc[0][r][1], m0, m1);
  } else if (p.mode == kModeBias) {
    __m256 lo, hi;
    Load2<MASKED>(p.bias, lo, hi, m0, m1);
    #pragma GCC unroll 16
    for (int r = 0; r < MR; ++r) { acc[0][r][0] = lo; acc[0][r][1] = hi; }
  } else {
    #pragma GCC unroll 16
    for (int r = 0; r < MR; ++r) acc[0][r][0] = acc[0][r][1] = _mm256_setzero_ps();
  }
  #pragma GCC unroll 8
  for (int s = 1; s < KS; ++s)
    #pragma GCC unroll 16
    for (int r = 0; r < MR; ++r) acc[s][r][0] = acc[s][r][1] = _mm256_setzero_ps();
  const float* a = p.a;
  const float* a2 = p.a2;
  const float* b = p.b;
  int k = p.k;
  for (; k >= C0; k -= C0) {
#pragma GCC unroll 16
    for (int k0 = 0; k0 < C0; ++k0) Step256<MR, C0, MASKED, SPLIT>(acc[k0 % KS], a, b, k0, m0, m1, a2);
    a += p.a_frac;
    if (SPLIT < MR) a2 += p.a_frac;
    b += p.b_frac;
  }
  for (int k0 = 0; k0 < k; ++k0) Step256<MR, C0, MASKED, SPLIT>(acc[0], a, b, k0, m0, m1, a2);
  #pragma GCC unroll 16
  for (int r = 0; r < MR; ++r) {
    #pragma GCC unroll 8
    for (int s = 1; s < KS; ++s) {
      acc[0][r][0] = _mm256_add_ps(acc[0][r][0], acc[s][r][0]);
      acc[0][r][1] = _mm256_add_ps(acc[0][r][1], acc[s][r][1]);
    }
    float* cp = p.c + r * 16;
    if (MASKED) { _mm256_maskstore_ps(cp, m0, acc[0][r][0]); _mm256_maskstore_ps(cp + 8, m1, acc[0][r][1]); }
    else { _mm256_storeu_ps(cp, acc[0][r][0]); _mm256_storeu_ps(cp + 8, acc[0][r][1]); }
  }
}
#endif  // CUBE_X86

// ------------------------------------------------------------------------------------------
// Kernel tables.
constexpr int kMaxMR = 8;
constexpr int kMaxNB = 3;

struct IsaKernels {
  const char* name;
  bool avx512;  // the FMA kernels are the AVX-512 ones (conversions may use AVX-512 too)
  bool amx;     // float / bfloat16 Mmad on AMX over the kAmx layouts
  int max_mr, max_nb;
  int kc;  // k chunk (multiple of 16): keeps the B panel of one tile column in L1
  KernelFn fn[2][kMaxMR + 1][kMaxNB + 1][2];  // [C0==16][mr][nb][masked]
  // One column block, kStraddleRows rows from one M block and 1 or 2 from the next:
  // [C0==16][rows from the next block - 1][masked]; null where the ISA has none.
  KernelFn straddle[2][2][2];
};
// A last M block of 1-2 rows joins the 16 before it (16 + r rows in three tiles: 6, 6 and 4 + r
// straddling the boundary) instead of a tile of its own: a 1-row tile streams the whole B panel
// for two FMAs per k step (49-pixel images leave one such row per image).
constexpr int kStraddleRows = 4;

template <int C0, int MR, int NB>
void ScalarThunk(const KArgs& p) { KernelScalar<C0>(p, MR, NB); }

template <int C0, int MR, int NB>
void FillScalar(IsaKernels& t) {
  t.fn[C0 == 16][MR][NB][0] = &ScalarThunk<C0, MR, NB>;
  t.fn[C0 == 16][MR][NB][1] = &ScalarThunk<C0, MR, NB>;
}

template <int C0, int MR>
void FillScalarRow(IsaKernels& t) {
  FillScalar<C0, MR, 1>(t);
  FillScalar<C0, MR, 2>(t);
  FillScalar<C0, MR, 3>(t);
}

template <int C0, int... MRs>
void FillScalarAll(IsaKernels& t, std::integer_sequence<int, MRs...>) {
  (FillScalarRow<C0, MRs + 1>(t), ...);
}

IsaKernels MakeScalar() {
  IsaKernels t{};
  t.name = "scalar";
  t.max_mr = 8;
  t.max_nb = 3;
  t.kc = 256;
  FillScalarAll<8>(t, std::make_integer_sequence<int, 8>{});
  FillScalarAll<16>(t, std::make_integer_sequence<int, 8>{});
  return t;
}

#if CUBE_X86
template <int C0, int MR, int NB>
void FillAvx512(IsaKernels& t) {
  t.fn[C0 == 16][MR][NB][0] = &KernelAvx512<MR, NB, C0, false>;
  t.fn[C0 == 16][MR][NB][1] = &KernelAvx512<MR, NB, C0, true>;
}
template <int C0, int MR>
void FillAvx512Row(IsaKernels& t) {
  FillAvx512<C0, MR, 1>(t);
  FillAvx512<C0, MR, 2>(t);
  FillAvx512<C0, MR, 3>(t);
}
template <int C0, int... MRs>
void FillAvx512All(IsaKernels& t, std::integer_sequence<int, MRs...>) {
  (FillAvx512Row<C0, MRs + 1>(t), ...);
}
IsaKernels MakeAvx512() {
  IsaKernels t{};
  t.name = "avx512";
  t.avx512 = true;
  t.max_mr = 8;
  t.max_nb = 3;
  t.kc = 256;
  FillAvx512All<8>(t, std::make_integer_sequence<int, 8>{});
  FillAvx512All<16>(t, std::make_integer_sequence<int, 8>{});
  return t;
}

template <int C0, int... MRs>
void FillAvx2All(IsaKernels& t, std::integer_sequence<int, MRs...>) {
  ((t.fn[C0 == 16][MRs + 1][1][0] = &KernelAvx2<MRs + 1, C0, false>,
    t.fn[C0 == 16][MRs + 1][1][1] = &KernelAvx2<MRs + 1, C0, true>), ...);
  t.straddle[C0 == 16][0][0] = &KernelAvx2<kStraddleRows + 1, C0, false, kStraddleRows>;
  t.straddle[C0 == 16][0][1] = &KernelAvx2<kStraddleRows + 1, C0, true, kStraddleRows>;
  t.straddle[C0 == 16][1][0] = &KernelAvx2<kStraddleRows + 2, C0, false, kStraddleRows>;
  t.straddle[C0 == 16][1][1] = &KernelAvx2<kStraddleRows + 2, C0, true, kStraddleRows>;
  // 1-3 rows: 8 or 12 accumulators through k-phase partial sums.
  t.fn[C0 == 16][1][1][0] = &KernelAvx2<1, C0, false, 1, 4>;
  t.fn[C0 == 16][1][1][1] = &KernelAvx2<1, C0, true, 1, 4>;
  t.fn[C0 == 16][2][1][0] = &KernelAvx2<2, C0, false, 2, 2>;
  t.fn[C0 == 16][2][1][1] = &KernelAvx2<2, C0, true, 2, 2>;
  t.fn[C0 == 16][3][1][0] = &KernelAvx2<3, C0, false, 3, 2>;
  t.fn[C0 == 16][3][1][1] = &KernelAvx2<3, C0, true, 3, 2>;
}
IsaKernels MakeAvx2() {
  IsaKernels t{};
  t.name = "avx2";
  t.max_mr = 6;
  t.max_nb = 1;
  t.kc = 256;
  FillAvx2All<8>(t, std::make_integer_sequence<int, 6>{});
  FillAvx2All<16>(t, std::make_integer_sequence<int, 6>{});
  return t;
}
#endif

const IsaKernels& ScalarKernels() { static const IsaKernels t = MakeScalar(); return t; }
#if CUBE_X86
const IsaKernels& Avx512Kernels() { static const IsaKernels t = MakeAvx512(); return t; }
const IsaKernels& AmxKernels() {
  static const IsaKernels t = [] {
    IsaKernels k = MakeAvx512();
    k.name = "amx";
    k.amx = true;
    return k;
  }();
  return t;
}
const IsaKernels& Avx2Kernels() { static const IsaKernels t = MakeAvx2(); return t; }
#endif

#if CUBE_X86
// AMX-BF16 + AMX-TILE + AVX512-BF16 on the CPU and the tile state granted by the OS (per process).
bool CpuHasAmx() {
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return false;
  if (!((d >> 22) & 1u) || !((d >> 24) & 1u)) return false;  // AMX-BF16, AMX-TILE
  if (!__get_cpuid_count(7, 1, &a, &b, &c, &d)) return false;
  return (a >> 5) & 1u;  // AVX512-BF16
}
bool AmxUsable() {
  static const bool ok = [] {
    __builtin_cpu_init();
    if (!__builtin_cpu_supports("avx512f") || !__builtin_cpu_supports("avx512bw") ||
        !__builtin_cpu_supports("avx512vl") || !CpuHasAmx())
      return false;
    return syscall(SYS_arch_prctl, 0x1023 /*ARCH_REQ_XCOMP_PERM*/, 18 /*XFEATURE_XTILEDATA*/) == 0;
  }();
  return ok;
}
#endif

const IsaKernels* IsaByName(std::string_view want) {
  if (want == "scalar") return &ScalarKernels();
#if CUBE_X86
  __builtin_cpu_init();
  if (want == "amx" && AmxUsable()) return &AmxKernels();
  if (want == "avx512" && __builtin_cpu_supports("avx512f")) return &Avx512Kernels();
  if (want == "avx2" && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return &Avx2Kernels();
#endif
  return nullptr;
}

const IsaKernels* DetectIsa() {
  if (const char* f = std::getenv("TORCH_OPS_NN_CUBE_ISA"); f && *f)
    if (const IsaKernels* k = IsaByName(f)) return k;
#if CUBE_X86
  const char* off = std::getenv("TORCH_OPS_NN_NO_AMX");
  if (!(off && *off && *off != '0') && AmxUsable()) return &AmxKernels();
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) return &Avx512Kernels();
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return &Avx2Kernels();
#endif
  return &ScalarKernels();
}

std::atomic<const IsaKernels*> g_forced{nullptr};

const IsaKernels& ActiveIsa() {
  if (const IsaKernels* f = g_forced.load(std::memory_order_relaxed)) return *f;
  static const IsaKernels* detected = DetectIsa();
  return *detected;
}

// 64-byte aligned, grow-only per-thread buffer of T.
template <typename T>
struct AlignedScratch {
  T* p = nullptr;
  size_t cap = 0;
  T* Get(size_t n) {
    if (n > cap) {
      ::operator delete[](p, std::align_val_t(64));
      cap = std::max(n, cap * 2);
      p = static_cast<T*>(::operator new[](cap * sizeof(T), std::align_val_t(64)));
    }
    return p;
  }
  ~AlignedScratch() { ::operator delete[](p, std::align_val_t(64)); }
};
using Scratch = AlignedScratch<float>;
thread_local Scratch t_scratch_a, t_scratch_b, t_panel_b;

// ------------------------------------------------------------------------------------------
// Blocked driver over one float GEMM in the model layouts.
template <int C0>
void DriveFloat(const IsaKernels& isa, float* c, const float* a, long a_block, long a_frac,
                const float* b, const CubeGemmShape& s) {
  const int m = s.m, n = s.n, k = s.k;
  const int m1 = (m + 15) / 16, n1 = (n + 15) / 16;
  const long c_blk = static_cast<long>(m1) * 256;
  const long b_frac = static_cast<long>(n1) * C0 * 16;
  const uint32_t tail_mask = (n % 16) ? ((1u << (n % 16)) - 1u) : 0xFFFFu;
  const int first_mode = s.init == CubeInit::kAccumulate ? kModeAcc
                         : s.init == CubeInit::kBias     ? kModeBias
                                                         : kModeZero;
  const int kc_step = isa.kc;
  const int max_nb = isa.max_nb, max_mr = isa.max_mr;
  // Worth a copy when the panel is not one run already and at least three row blocks read it.
  const bool pack_b = n1 > max_nb && m1 > 2;
  float* panel = pack_b ? t_panel_b.Get(static_cast<size_t>((kc_step + C0 - 1) / C0) * max_nb * C0 * 16) : nullptr;
  for (int kc = 0; kc < k; kc += kc_step) {
    KArgs p{};
    p.k = std::min(kc_step, k - kc);
    p.mode = kc == 0 ? first_mode : kModeAcc;
    p.a_frac = a_frac;
    p.b_frac = b_frac;
    p.c_blk = c_blk;
    const long kf = kc / C0;
    // The column blocks spread evenly over the fewest groups of at most max_nb (n1 = 4: 2 + 2, not
    // 3 + 1): a one-block tile loads one B vector and MR broadcasts for MR FMAs and runs ~15%
    // slower per FMA than two or three blocks.
    const int groups = (n1 + max_nb - 1) / max_nb;
    for (int g = 0, nb0 = 0, nb = 0; nb0 < n1; ++g, nb0 += nb) {
      nb = (n1 - nb0 + groups - g - 1) / (groups - g);
      const bool masked = nb0 + nb == n1 && (n % 16) != 0;
      p.mask = masked ? tail_mask : 0xFFFFu;
      p.b = b + kf * b_frac + static_cast<long>(nb0) * C0 * 16;
      if (pack_b) {
        // The Zn grid keeps a column block's k fractals n1 fractals apart (a multiple of 4 KiB for
        // 8 or 16 blocks, so they share a few L1 sets and evict each other while every row
        // block streams them): copy the block's panel for this k chunk to one contiguous run.
        const long run = static_cast<long>(nb) * C0 * 16;
        const long frs = (p.k + C0 - 1) / C0;
        for (long f = 0; f < frs; ++f) std::memcpy(panel + f * run, p.b + f * b_frac, run * sizeof(float));
        p.b = panel;
        p.b_frac = run;
      }
      p.bias = s.bias ? s.bias + nb0 * 16 : nullptr;
      for (int mi = 0; mi < m1; ++mi) {
        const int rows = std::min(16, m - mi * 16);
        const int rest = m - (mi + 1) * 16;  // rows after this block
        if (mi + 2 == m1 && rest <= 2 && max_mr == 6 && isa.straddle[C0 == 16][rest - 1][masked]) {
          // 6 + 6 rows here, then rows 12..15 with the last block's 1-2 rows in one tile.
          for (int r0 = 0; r0 < 12; r0 += 6) {
            p.a = a + mi * a_block + kf * a_frac + r0 * C0;
            p.c = c + nb0 * c_blk + (mi * 16 + r0) * 16;
            isa.fn[C0 == 16][6][nb][masked](p);
          }
          p.a = a + mi * a_block + kf * a_frac + (16 - kStraddleRows) * C0;
          p.a2 = a + (mi + 1) * a_block + kf * a_frac;
          p.c = c + nb0 * c_blk + (mi * 16 + 16 - kStraddleRows) * 16;
          isa.straddle[C0 == 16][rest - 1][masked](p);
          break;
        }
        const int tiles = (rows + max_mr - 1) / max_mr;
        const int base = rows / tiles, extra = rows % tiles;
        int r0 = 0;
        for (int t = 0; t < tiles; ++t) {
          const int mr = base + (t < extra ? 1 : 0);
          p.a = a + mi * a_block + kf * a_frac + r0 * C0;
          p.c = c + nb0 * c_blk + (mi * 16 + r0) * 16;
          isa.fn[C0 == 16][mr][nb][masked](p);
          r0 += mr;
        }
      }
    }
  }
}

// ------------------------------------------------------------------------------------------
// half / bfloat16 → float conversion into a per-thread scratch.
float HalfToFloat(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1Fu, man = h & 0x3FFu;
  uint32_t bits;
  if (exp == 0) {
    float v = static_cast<float>(man) * 5.9604644775390625e-8f;  // man * 2^-24
    std::memcpy(&bits, &v, 4);
    bits |= sign;
  } else if (exp == 31) {
    bits = sign | 0x7F800000u | (man << 13);
  } else {
    bits = sign | ((exp + 112) << 23) | (man << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

void ConvertScalar(float* dst, const uint16_t* src, size_t count, bool bf16) {
  if (bf16) {
    for (size_t i = 0; i < count; ++i) {
      const uint32_t bits = static_cast<uint32_t>(src[i]) << 16;
      std::memcpy(dst + i, &bits, 4);
    }
  } else {
    for (size_t i = 0; i < count; ++i) dst[i] = HalfToFloat(src[i]);
  }
}

#if CUBE_X86
__attribute__((target("avx512f"))) void ConvertAvx512(float* dst, const uint16_t* src, size_t count,
                                                      bool bf16) {
  size_t i = 0;
  if (bf16) {
    for (; i + 16 <= count; i += 16) {
      const __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + i));
      _mm512_storeu_si512(dst + i, _mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
    }
  } else {
    for (; i + 16 <= count; i += 16) {
      const __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + i));
      _mm512_storeu_ps(dst + i, _mm512_cvtph_ps(h));
    }
  }
  ConvertScalar(dst + i, src + i, count - i, bf16);
}
__attribute__((target("avx2,f16c"))) void ConvertAvx2(float* dst, const uint16_t* src, size_t count,
                                                      bool bf16) {
  size_t i = 0;
  if (bf16) {
    for (; i + 8 <= count; i += 8) {
      const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i));
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + i),
                          _mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
    }
  } else {
    for (; i + 8 <= count; i += 8) {
      const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i));
      _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(h));
    }
  }
  ConvertScalar(dst + i, src + i, count - i, bf16);
}
#endif

void Convert(const IsaKernels& isa, float* dst, const uint16_t* src, size_t count, bool bf16) {
#if CUBE_X86
  if (isa.avx512) return ConvertAvx512(dst, src, count, bf16);
  if (isa.name[0] == 'a') {
    static const bool f16c = __builtin_cpu_supports("f16c");
    if (f16c) return ConvertAvx2(dst, src, count, bf16);
  }
#else
  (void)isa;
#endif
  ConvertScalar(dst, src, count, bf16);
}

#if CUBE_X86
// ------------------------------------------------------------------------------------------
// AMX (family "amx"): float and bfloat16 Mmad over the kAmx layouts (cube_gemm.h).
//   A tiles are the L0A groups themselves when a 32-k chunk is one whole aligned group (packed
//   into a scratch tile otherwise: the K tail, a misaligned pitch, GEMV);
//   B tiles are gathered per call from the VNNI fractals (the K-neighbours of a fractal are
//   nFractals slots apart in the Zn grid), with K past k zeroed — so garbage (NaN) in padding
//   never meets a zero of the other operand;
//   C tiles are the L0C Nz fractals; tiles with rows past m / columns past n are stored through
//   a scratch tile so the padding of L0C is never written (as with the FMA kernels).
// float: C += Ahi*Bhi + Ahi*Blo + Alo*Bhi per 32-k chunk, 2x2 C tiles per block.
#define CUBE_AMX_TARGET __attribute__((target("amx-tile,amx-bf16,avx512f,avx512bw,avx512vl,avx512bf16,avx512dq")))

// Infinite hi parts (x = +-inf, or |x| above bfloat16's largest finite value) written to L0 by this
// thread since the block began: hi*hi + hi*lo + lo*hi then has inf * 0 or inf - inf terms (NaN where
// the float product is +-inf), so GemmAmx computes such blocks from hi + lo in float instead.
thread_local bool t_amx_inf = false;

// 16 floats -> bf16 hi = RNE(x), lo = RNE(x - hi); lo = 0 where hi is infinite (lanes ORed into `inf`).
CUBE_AMX_TARGET inline void Split16(__m512 x, __m256i& hi, __m256i& lo, __mmask16& inf) {
  const __m256i h = (__m256i)_mm512_cvtneps_pbh(x);
  const __m512 hf = _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
  const __mmask16 big = _mm512_fpclass_ps_mask(hf, 0x18);
  const __m512 r = _mm512_maskz_sub_ps(static_cast<__mmask16>(~big), x, hf);
  inf |= big;
  hi = h;
  lo = (__m256i)_mm512_cvtneps_pbh(r);
}

// The same for 32 floats, two vectors per convert: hi = [bf16(v0) | bf16(v1)], lo likewise.
CUBE_AMX_TARGET inline void Split32(__m512 v0, __m512 v1, __m512i& hi, __m512i& lo, __mmask16& inf) {
  const __m512i h = (__m512i)_mm512_cvtne2ps_pbh(v1, v0);
  const __m512 hf0 = _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm512_castsi512_si256(h)), 16));
  const __m512 hf1 = _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm512_extracti64x4_epi64(h, 1)), 16));
  const __mmask16 big0 = _mm512_fpclass_ps_mask(hf0, 0x18), big1 = _mm512_fpclass_ps_mask(hf1, 0x18);
  inf |= big0 | big1;
  hi = h;
  lo = (__m512i)_mm512_cvtne2ps_pbh(_mm512_maskz_sub_ps(static_cast<__mmask16>(~big1), v1, hf1),
                                     _mm512_maskz_sub_ps(static_cast<__mmask16>(~big0), v0, hf0));
}

CUBE_AMX_TARGET void PutL0AAmx(uint8_t* dst, const uint8_t* src, int r0, int rows, CubeDtype t) {
  const uintptr_t d = reinterpret_cast<uintptr_t>(dst);
  if (t == CubeDtype::kFloat32) {
    uint8_t* g = reinterpret_cast<uint8_t*>(d & ~uintptr_t(2047));
    uint8_t* col = g + ((d >> 9) & 3) * 16;
    __mmask16 inf = 0;
    for (int i = 0; i < rows; i += 2) {
      const bool two = i + 1 < rows;
      const __m512 x = _mm512_maskz_loadu_ps(two ? __mmask16(0xFFFF) : __mmask16(0x00FF), src + i * 32);
      __m256i hi, lo;
      Split16(x, hi, lo, inf);
      uint8_t* p = col + (r0 + i) * 64;
      _mm_storeu_si128(reinterpret_cast<__m128i*>(p), _mm256_castsi256_si128(hi));
      _mm_storeu_si128(reinterpret_cast<__m128i*>(p + 1024), _mm256_castsi256_si128(lo));
      if (two) {
        _mm_storeu_si128(reinterpret_cast<__m128i*>(p + 64), _mm256_extracti128_si256(hi, 1));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(p + 64 + 1024), _mm256_extracti128_si256(lo, 1));
      }
    }
    if (inf) t_amx_inf = true;
  } else {
    uint8_t* g = reinterpret_cast<uint8_t*>(d & ~uintptr_t(1023));
    uint8_t* col = g + ((d >> 9) & 1) * 32;
    for (int i = 0; i < rows; ++i)
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(col + (r0 + i) * 64),
                          _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + i * 32)));
  }
}

// [x0..x15 | y0..y15] -> x0 y0 x1 y1 ... (16-bit lanes; indices >= 32 pick from the second operand).
CUBE_AMX_TARGET inline __m512i PairInterleave(__m256i x, __m256i y) {
  const __m512i idx = _mm512_set_epi16(47, 15, 46, 14, 45, 13, 44, 12, 43, 11, 42, 10, 41, 9, 40, 8, 39, 7, 38, 6,
                                       37, 5, 36, 4, 35, 3, 34, 2, 33, 1, 32, 0);
  return _mm512_permutex2var_epi16(_mm512_castsi256_si512(x), idx, _mm512_castsi256_si512(y));
}

// The float L0B fractal from its documented transpose S (16 rows n0 x 8 floats k0, row-major: the
// im2col window as gathered), without the k-major intermediate. A VNNI pair row p holds, for each
// n0, the 64-bit pair S[n0][2p..2p+1]: a 16 x 4 transpose of 64-bit elements (two permute rounds),
// after which each pair row is 32 floats in VNNI order, split into hi / lo.
CUBE_AMX_TARGET void PutL0BRowsF32Amx(uint8_t* dst, const float* s) {
  __m512i z[8];  // z[i]: rows 2i, 2i+1 as 8 qwords (row r qword q = pair q)
  for (int i = 0; i < 8; ++i) z[i] = _mm512_loadu_si512(s + 16 * i);
  // Round 1, per 4 rows (z[2j], z[2j+1]): pairs 0,1 of the 4 rows, then pairs 2,3.
  const __m512i lo01 = _mm512_setr_epi64(0, 4, 8, 12, 1, 5, 9, 13), hi23 = _mm512_setr_epi64(2, 6, 10, 14, 3, 7, 11, 15);
  __m512i a01[4], a23[4];
  for (int j = 0; j < 4; ++j) {
    a01[j] = _mm512_permutex2var_epi64(z[2 * j], lo01, z[2 * j + 1]);
    a23[j] = _mm512_permutex2var_epi64(z[2 * j], hi23, z[2 * j + 1]);
  }
  // Round 2, per 8 rows (quads 2h, 2h+1): pair p of the 8 rows.
  const __m512i first = _mm512_setr_epi64(0, 1, 2, 3, 8, 9, 10, 11), second = _mm512_setr_epi64(4, 5, 6, 7, 12, 13, 14, 15);
  // Each pair row's 32 floats (two halves of 8 rows) split by Split32.
  __mmask16 inf = 0;
  for (int p = 0; p < 4; ++p) {
    const __m512i* src = p < 2 ? a01 : a23;
    const __m512i sel = (p % 2) ? second : first;
    const __m512 v0 = _mm512_castsi512_ps(_mm512_permutex2var_epi64(src[0], sel, src[1]));
    const __m512 v1 = _mm512_castsi512_ps(_mm512_permutex2var_epi64(src[2], sel, src[3]));
    __m512i hi, lo;
    Split32(v0, v1, hi, lo, inf);
    _mm512_storeu_si512(dst + p * 64, hi);
    _mm512_storeu_si512(dst + 256 + p * 64, lo);
  }
  if (inf) t_amx_inf = true;
}

CUBE_AMX_TARGET void PutL0BAmx(uint8_t* dst, const uint8_t* km, CubeDtype t) {
  if (t == CubeDtype::kFloat32) {
    const float* f = reinterpret_cast<const float*>(km);
    // k rows 2p and 2p + 1 split together (Split32), then interleaved into the pair row: x0 y0 x1 y1 ...
    const __m512i pair = _mm512_set_epi16(31, 15, 30, 14, 29, 13, 28, 12, 27, 11, 26, 10, 25, 9, 24, 8, 23, 7, 22, 6,
                                          21, 5, 20, 4, 19, 3, 18, 2, 17, 1, 16, 0);
    __mmask16 inf = 0;
    for (int p = 0; p < 4; ++p) {
      __m512i h, l;
      Split32(_mm512_loadu_ps(f + (2 * p) * 16), _mm512_loadu_ps(f + (2 * p + 1) * 16), h, l, inf);
      _mm512_storeu_si512(dst + p * 64, _mm512_permutexvar_epi16(pair, h));
      _mm512_storeu_si512(dst + 256 + p * 64, _mm512_permutexvar_epi16(pair, l));
    }
    if (inf) t_amx_inf = true;
  } else {
    for (int p = 0; p < 8; ++p)
      _mm512_storeu_si512(dst + p * 64,
                          PairInterleave(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(km + (2 * p) * 32)),
                                         _mm256_loadu_si256(reinterpret_cast<const __m256i*>(km + (2 * p + 1) * 32))));
  }
}

// A whole 2 KB float L0A group (4 fractals) from each fractal's 16 rows (32 B of floats each): row r
// of the group's A tiles is row r of fractals 0..3 side by side, so one Split32 splits it and two 64 B
// stores write it (PutL0AAmx writes 16 B pieces, a fractal at a time).
CUBE_AMX_TARGET void PutL0AGroupF32Amx(uint8_t* g, const uint8_t* const* rows) {
  __mmask16 inf = 0;
  for (int r = 0; r < 16; ++r) {
    const __m512 v0 = _mm512_castsi512_ps(_mm512_inserti64x4(
        _mm512_castsi256_si512(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(rows[r]))),
        _mm256_loadu_si256(reinterpret_cast<const __m256i*>(rows[16 + r])), 1));
    const __m512 v1 = _mm512_castsi512_ps(_mm512_inserti64x4(
        _mm512_castsi256_si512(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(rows[32 + r]))),
        _mm256_loadu_si256(reinterpret_cast<const __m256i*>(rows[48 + r])), 1));
    __m512i h, l;
    Split32(v0, v1, h, l, inf);
    _mm512_store_si512(g + r * 64, h);
    _mm512_store_si512(g + 1024 + r * 64, l);
  }
  if (inf) t_amx_inf = true;
}

struct alignas(64) AmxTileConfig {
  uint8_t palette = 1;
  uint8_t start_row = 0;
  uint8_t reserved[14] = {};
  uint16_t colsb[16] = {};
  uint8_t rows[16] = {};
};

using ByteScratch = AlignedScratch<uint8_t>;
thread_local ByteScratch t_amx_a, t_amx_b, t_amx_bias;
thread_local std::vector<const uint8_t*> t_amx_aptr;

struct AmxCtx {
  float* c;
  long c_blk;                 // floats between 16-column blocks of C
  const uint8_t* const* ap;   // [m1][kq] A tile (hi; lo at +1 KB)
  const uint8_t* bs;          // [2][kq] B tiles (TB bytes each) of the current column-block pair
  const float* bias_tiles;    // kBias: [n1][256]
  int m, n, m1, n1, kq;
  int init;                   // kModeAcc / kModeZero / kModeBias
};

// C tile (i, j) of a block lives in tile register 2i + j; A(i) in 4 + i; B(j) in 6 + j.
// C tiles 0..3 (MC x NC of them) += A tiles 4/5 x B tiles 6/7.
template <int MC, int NC>
inline void DotTiles() {
  _tile_dpbf16ps(0, 4, 6);
  if constexpr (NC > 1) _tile_dpbf16ps(1, 4, 7);
  if constexpr (MC > 1) _tile_dpbf16ps(2, 5, 6);
  if constexpr (MC > 1 && NC > 1) _tile_dpbf16ps(3, 5, 7);
}

template <bool SPLIT, int MC, int NC>
CUBE_AMX_TARGET void AmxBlock(const AmxCtx& x, int mi, int ni) {
  constexpr long TB = SPLIT ? 2048 : 1024;
  float* cp[2][2];
  bool part[2][2];
  for (int i = 0; i < MC; ++i)
    for (int j = 0; j < NC; ++j) {
      cp[i][j] = x.c + (ni + j) * x.c_blk + (mi + i) * 256;
      part[i][j] = (mi + i == x.m1 - 1 && x.m % 16) || (ni + j == x.n1 - 1 && x.n % 16);
    }
  if (x.init == kModeZero) {
    _tile_zero(0);
    if constexpr (NC > 1) _tile_zero(1);
    if constexpr (MC > 1) _tile_zero(2);
    if constexpr (MC > 1 && NC > 1) _tile_zero(3);
  } else if (x.init == kModeAcc) {
    _tile_loadd(0, cp[0][0], 64);
    if constexpr (NC > 1) _tile_loadd(1, cp[0][1], 64);
    if constexpr (MC > 1) _tile_loadd(2, cp[1][0], 64);
    if constexpr (MC > 1 && NC > 1) _tile_loadd(3, cp[1][1], 64);
  } else {
    _tile_loadd(0, x.bias_tiles + ni * 256, 64);
    if constexpr (NC > 1) _tile_loadd(1, x.bias_tiles + (ni + 1) * 256, 64);
    if constexpr (MC > 1) _tile_loadd(2, x.bias_tiles + ni * 256, 64);
    if constexpr (MC > 1 && NC > 1) _tile_loadd(3, x.bias_tiles + (ni + 1) * 256, 64);
  }
  const uint8_t* const* a0 = x.ap + long(mi) * x.kq;
  const uint8_t* const* a1 = a0 + x.kq;
  const uint8_t* b0 = x.bs;  // the gathered panel of column blocks ni, ni + 1
  const uint8_t* b1 = b0 + long(x.kq) * TB;
  for (int q = 0; q < x.kq; ++q) {
    const long bo = long(q) * TB;
    _tile_loadd(4, a0[q], 64);
    if constexpr (MC > 1) _tile_loadd(5, a1[q], 64);
    _tile_loadd(6, b0 + bo, 64);
    if constexpr (NC > 1) _tile_loadd(7, b1 + bo, 64);
    DotTiles<MC, NC>();
    if constexpr (SPLIT) {
      _tile_loadd(6, b0 + bo + 1024, 64);
      if constexpr (NC > 1) _tile_loadd(7, b1 + bo + 1024, 64);
      DotTiles<MC, NC>();
      _tile_loadd(4, a0[q] + 1024, 64);
      if constexpr (MC > 1) _tile_loadd(5, a1[q] + 1024, 64);
      _tile_loadd(6, b0 + bo, 64);
      if constexpr (NC > 1) _tile_loadd(7, b1 + bo, 64);
      DotTiles<MC, NC>();
    }
  }
  alignas(64) float tmp[4][256];
  float* dst[2][2];
  for (int i = 0; i < MC; ++i)
    for (int j = 0; j < NC; ++j) dst[i][j] = part[i][j] ? tmp[2 * i + j] : cp[i][j];
  _tile_stored(0, dst[0][0], 64);
  if constexpr (NC > 1) _tile_stored(1, dst[0][1], 64);
  if constexpr (MC > 1) _tile_stored(2, dst[1][0], 64);
  if constexpr (MC > 1 && NC > 1) _tile_stored(3, dst[1][1], 64);
  for (int i = 0; i < MC; ++i)
    for (int j = 0; j < NC; ++j) {
      if (!part[i][j]) continue;
      const int rows = std::min(16, x.m - (mi + i) * 16), cols = std::min(16, x.n - (ni + j) * 16);
      const __mmask16 cm = static_cast<__mmask16>((1u << cols) - 1u);
      for (int r = 0; r < rows; ++r)
        _mm512_mask_storeu_ps(cp[i][j] + r * 16, cm, _mm512_load_ps(tmp[2 * i + j] + r * 16));
    }
}

// Copies `count` 16-bit elements (count <= 32) of one tile row, zeroing the rest of the 64 B.
CUBE_AMX_TARGET inline void CopyRow16(uint8_t* d, const uint8_t* s, int count) {
  const __mmask32 mk = count >= 32 ? __mmask32(0xFFFFFFFFu) : __mmask32((1u << count) - 1u);
  _mm512_storeu_si512(d, _mm512_maskz_loadu_epi16(mk, s));
}

// The kq B tiles of 16-column block ni from the VNNI fractals (the K-neighbours of a fractal are n1
// slots apart in the Zn grid), K past k zeroed.
template <bool SPLIT>
CUBE_AMX_TARGET void GatherBAmx(uint8_t* o, const uint8_t* b, int ni, int n1, int k, int kq) {
  constexpr int C0 = SPLIT ? 8 : 16;
  constexpr long TB = SPLIT ? 2048 : 1024;
  for (int q = 0; q < kq; ++q, o += TB)
    for (int pr = 0; pr < 16; ++pr) {
      const int kk = 32 * q + 2 * pr;
      const int cnt = kk >= k ? 0 : (kk + 1 < k ? 32 : -1);  // -1: only the even lane of each pair
      const uint8_t* f = b + (long(kk / C0) * n1 + ni) * 512 + ((kk % C0) / 2) * 64;
      for (int part = 0; part < (SPLIT ? 2 : 1); ++part) {
        uint8_t* d = o + part * 1024 + pr * 64;
        if (cnt == 32) _mm512_storeu_si512(d, _mm512_loadu_si512(f + part * 256));
        else if (cnt == 0) _mm512_storeu_si512(d, _mm512_setzero_si512());
        else _mm512_storeu_si512(d, _mm512_maskz_loadu_epi16(__mmask32(0x55555555u), f + part * 256));
      }
    }
}

template <bool SPLIT>
CUBE_AMX_TARGET void GemmAmx(float* c, const uint8_t* a, const uint8_t* b, const CubeGemmShape& s, int akf) {
  constexpr int C0 = SPLIT ? 8 : 16, G = SPLIT ? 4 : 2, ESZ = SPLIT ? 4 : 2;
  constexpr long TB = SPLIT ? 2048 : 1024;
  const int m = s.m, n = s.n, k = s.k;
  const int m1 = (m + 15) / 16, n1 = (n + 15) / 16, kq = (k + 31) / 32;
  // ---- A tiles.
  t_amx_aptr.resize(size_t(m1) * kq);
  const uint8_t** ap = t_amx_aptr.data();
  size_t npack = 0;
  for (int mi = 0; mi < m1; ++mi)
    for (int q = 0; q < kq; ++q) {
      const uint8_t* d = a + (long(mi) * akf + long(G) * q) * 512;
      const bool direct = !s.gemv && 32 * (q + 1) <= k && (reinterpret_cast<uintptr_t>(d) % TB) == 0;
      ap[mi * kq + q] = direct ? d : nullptr;
      npack += !direct;
    }
  if (npack) {
    uint8_t* sc = t_amx_a.Get(npack * TB);
    for (int mi = 0; mi < m1; ++mi)
      for (int q = 0; q < kq; ++q) {
        if (ap[mi * kq + q]) continue;
        uint8_t* o = sc;
        sc += TB;
        ap[mi * kq + q] = o;
        if (s.gemv) {
          // Row 0 = the documented vector a[32q .. 32q+31]; other rows 0.
          std::memset(o, 0, TB);
          for (int j = 32 * q; j < std::min(k, 32 * q + 32); ++j) {
            const uintptr_t e = reinterpret_cast<uintptr_t>(a) + uintptr_t(j) * ESZ;
            const uintptr_t fr = e & ~uintptr_t(511);
            const int r = int((e & 511) / 32), k0 = int((e & 31) / ESZ);
            const uint8_t* src = reinterpret_cast<const uint8_t*>(fr & ~uintptr_t(TB - 1)) + r * 64 +
                                 (int((fr >> 9) & (G - 1)) * C0 + k0) * 2;
            std::memcpy(o + (j - 32 * q) * 2, src, 2);
            if (SPLIT) std::memcpy(o + 1024 + (j - 32 * q) * 2, src + 1024, 2);
          }
          continue;
        }
        for (int f = 0; f < G; ++f) {
          const int ki = G * q + f;
          const int valid = std::clamp(k - ki * C0, 0, C0);
          const uint8_t* fr = a + (long(mi) * akf + ki) * 512;
          const uintptr_t fu = reinterpret_cast<uintptr_t>(fr);
          const uint8_t* src = reinterpret_cast<const uint8_t*>(fu & ~uintptr_t(TB - 1)) + int((fu >> 9) & (G - 1)) * C0 * 2;
          const __mmask32 mk = static_cast<__mmask32>((1ull << valid) - 1ull);
          for (int part = 0; part < (SPLIT ? 2 : 1); ++part)
            for (int r = 0; r < 16; ++r) {
              uint8_t* dd = o + part * 1024 + r * 64 + f * C0 * 2;
              const __m256i v = valid ? _mm256_maskz_loadu_epi16(mk, src + part * 1024 + r * 64) : _mm256_setzero_si256();
              if (SPLIT) _mm_storeu_si128(reinterpret_cast<__m128i*>(dd), _mm256_castsi256_si128(v));
              else _mm256_storeu_si256(reinterpret_cast<__m256i*>(dd), v);
            }
        }
      }
  }
  // ---- B tiles: gathered per pair of 16-column blocks ([2][kq] tiles, L1-resident) just before the
  // row blocks that use them, so the gathered copy is written and read in L1.
  uint8_t* bs = t_amx_b.Get(size_t(2) * kq * TB);
  // ---- Bias rows.
  const float* bias_tiles = nullptr;
  if (s.init == CubeInit::kBias) {
    float* bt = reinterpret_cast<float*>(t_amx_bias.Get(size_t(n1) * 1024));
    for (int ni = 0; ni < n1; ++ni) {
      const int cols = std::min(16, n - ni * 16);
      const __m512 row = _mm512_maskz_loadu_ps(static_cast<__mmask16>((1u << cols) - 1u), s.bias + ni * 16);
      for (int r = 0; r < 16; ++r) _mm512_store_ps(bt + ni * 256 + r * 16, row);
    }
    bias_tiles = bt;
  }
  AmxCtx x{c, long(m1) * 256, ap, bs, bias_tiles, m, n, m1, n1, kq,
           s.init == CubeInit::kAccumulate ? kModeAcc : s.init == CubeInit::kBias ? kModeBias : kModeZero};
  AmxTileConfig cfg;
  for (int t = 0; t < 8; ++t) { cfg.rows[t] = 16; cfg.colsb[t] = 64; }
  _tile_loadconfig(&cfg);
  for (int ni = 0; ni < n1; ni += 2) {
    const bool n2 = ni + 1 < n1;
    GatherBAmx<SPLIT>(bs, b, ni, n1, k, kq);
    if (n2) GatherBAmx<SPLIT>(bs + long(kq) * TB, b, ni + 1, n1, k, kq);
    for (int mi = 0; mi < m1; mi += 2) {
      const bool m2 = mi + 1 < m1;
      if (m2 && n2) AmxBlock<SPLIT, 2, 2>(x, mi, ni);
      else if (m2) AmxBlock<SPLIT, 2, 1>(x, mi, ni);
      else if (n2) AmxBlock<SPLIT, 1, 2>(x, mi, ni);
      else AmxBlock<SPLIT, 1, 1>(x, mi, ni);
    }
  }
  _tile_release();
}
#endif
}  // namespace

const char* CubeGemmIsa() { return ActiveIsa().name; }

bool CubeGemmForceIsa(const char* isa) {
  if (!isa) { g_forced.store(nullptr); return true; }
  const IsaKernels* k = IsaByName(isa);
  if (!k) return false;
  g_forced.store(k);
  return true;
}

L0Layout CubeL0Layout(CubeDtype t, bool hf32) {
  const bool amx = ActiveIsa().amx && (t == CubeDtype::kBFloat16 || (t == CubeDtype::kFloat32 && hf32));
  return amx ? L0Layout::kAmx : L0Layout::kFma;
}

void CubePutL0A(uint8_t* dst, const void* src, int r0, int rows, CubeDtype t, L0Layout lay) {
#if CUBE_X86
  if (lay == L0Layout::kAmx) return PutL0AAmx(dst, static_cast<const uint8_t*>(src), r0, rows, t);
#endif
  std::memcpy(dst + r0 * 32, src, size_t(rows) * 32);
}

namespace {
float Bf16ToF(const uint8_t* p) {
  uint16_t h;
  std::memcpy(&h, p, 2);
  const uint32_t bits = uint32_t(h) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}
}  // namespace

void CubeGetL0A(void* doc, const uint8_t* src, CubeDtype t, L0Layout lay) {
  if (lay != L0Layout::kAmx) { std::memcpy(doc, src, 512); return; }
  const uintptr_t d = reinterpret_cast<uintptr_t>(src);
  if (t == CubeDtype::kFloat32) {
    const uint8_t* col = reinterpret_cast<const uint8_t*>(d & ~uintptr_t(2047)) + ((d >> 9) & 3) * 16;
    float* o = static_cast<float*>(doc);
    for (int r = 0; r < 16; ++r)
      for (int k0 = 0; k0 < 8; ++k0) o[r * 8 + k0] = Bf16ToF(col + r * 64 + k0 * 2) + Bf16ToF(col + 1024 + r * 64 + k0 * 2);
  } else {
    const uint8_t* col = reinterpret_cast<const uint8_t*>(d & ~uintptr_t(1023)) + ((d >> 9) & 1) * 32;
    for (int r = 0; r < 16; ++r) std::memcpy(static_cast<uint8_t*>(doc) + r * 32, col + r * 64, 32);
  }
}

void CubeGetL0B(void* kmajor, const uint8_t* src, CubeDtype t, L0Layout lay) {
  if (lay != L0Layout::kAmx) { std::memcpy(kmajor, src, 512); return; }
  if (t == CubeDtype::kFloat32) {
    float* o = static_cast<float*>(kmajor);
    for (int k0 = 0; k0 < 8; ++k0)
      for (int n0 = 0; n0 < 16; ++n0) {
        const int off = (k0 / 2) * 64 + n0 * 4 + (k0 % 2) * 2;
        o[k0 * 16 + n0] = Bf16ToF(src + off) + Bf16ToF(src + 256 + off);
      }
  } else {
    uint8_t* o = static_cast<uint8_t*>(kmajor);
    for (int k0 = 0; k0 < 16; ++k0)
      for (int n0 = 0; n0 < 16; ++n0) std::memcpy(o + (k0 * 16 + n0) * 2, src + (k0 / 2) * 64 + n0 * 4 + (k0 % 2) * 2, 2);
  }
}

void CubePutL0BRowsF32(uint8_t* dst, const void* rows) {
#if CUBE_X86
  PutL0BRowsF32Amx(dst, static_cast<const float*>(rows));
#else
  (void)dst, (void)rows;
#endif
}

void CubePutL0AGroupF32(uint8_t* group, const uint8_t* const* rows) {
#if CUBE_X86
  PutL0AGroupF32Amx(group, rows);
#else
  (void)group, (void)rows;
#endif
}

void CubePutL0B(uint8_t* dst, const void* kmajor, CubeDtype t, L0Layout lay) {
#if CUBE_X86
  if (lay == L0Layout::kAmx) return PutL0BAmx(dst, static_cast<const uint8_t*>(kmajor), t);
#endif
  std::memcpy(dst, kmajor, 512);
}

void CubeBlockBegin() {
#if CUBE_X86
  t_amx_inf = false;
#endif
}

namespace {
#if CUBE_X86
// Float HF32 Mmad over the kAmx layouts in float from hi + lo (the FMA kernels), for blocks whose L0
// data holds infinities (t_amx_inf): inf * w is then +-inf as the cube gives, where bf16x3's
// hi*lo and lo*hi terms would add inf * 0 or inf - inf.
void GemmAmxAsFloat(const IsaKernels& isa, float* c, const uint8_t* a, const uint8_t* b, const CubeGemmShape& s,
                    int akf) {
  const int m1 = (s.m + 15) / 16, n1 = (s.n + 15) / 16, kf = (s.k + 7) / 8;
  float* bs = t_scratch_b.Get(size_t(kf) * n1 * 128);
  for (long f = 0; f < long(kf) * n1; ++f)
    CubeGetL0B(bs + f * 128, b + f * 512, CubeDtype::kFloat32, L0Layout::kAmx);
  if (s.gemv) {
    // Element j of the vector sits where the L0A group layout puts documented address a + 4 j.
    float* av = t_scratch_a.Get(size_t(kf) * 8);
    for (int j = 0; j < s.k; ++j) {
      const uintptr_t e = reinterpret_cast<uintptr_t>(a) + uintptr_t(j) * 4;
      const uintptr_t fr = e & ~uintptr_t(511);
      const uint8_t* src = reinterpret_cast<const uint8_t*>(fr & ~uintptr_t(2047)) + ((e & 511) / 32) * 64 +
                           (((fr >> 9) & 3) * 8 + (e & 31) / 4) * 2;
      av[j] = Bf16ToF(src) + Bf16ToF(src + 1024);
    }
    DriveFloat<8>(isa, c, av, 0, 8, bs, s);
    return;
  }
  float* as = t_scratch_a.Get(size_t(m1) * kf * 128);
  for (int mi = 0; mi < m1; ++mi)
    for (int ki = 0; ki < kf; ++ki)
      CubeGetL0A(as + (long(mi) * kf + ki) * 128, a + (long(mi) * akf + ki) * 512, CubeDtype::kFloat32,
                 L0Layout::kAmx);
  DriveFloat<8>(isa, c, as, long(kf) * 128, 128, bs, s);
}
#endif
}  // namespace

void CubeGemm(float* c, const void* a, const void* b, CubeDtype type, const CubeGemmShape& s) {
  if (s.m <= 0 || s.n <= 0 || s.k <= 0) return;
  const IsaKernels& isa = ActiveIsa();
  const int c0 = CubeC0(type);
  const int k_frac = (s.k + c0 - 1) / c0;
  const int a_k_frac = s.a_k_fractals > 0 ? s.a_k_fractals : k_frac;
  const int m1 = (s.m + 15) / 16, n1 = (s.n + 15) / 16;
#if CUBE_X86
  if (CubeL0Layout(type, s.hf32) == L0Layout::kAmx) {
    if (type == CubeDtype::kFloat32 && t_amx_inf)
      GemmAmxAsFloat(isa, c, static_cast<const uint8_t*>(a), static_cast<const uint8_t*>(b), s, a_k_frac);
    else if (type == CubeDtype::kFloat32)
      GemmAmx<true>(c, static_cast<const uint8_t*>(a), static_cast<const uint8_t*>(b), s, a_k_frac);
    else GemmAmx<false>(c, static_cast<const uint8_t*>(a), static_cast<const uint8_t*>(b), s, a_k_frac);
    return;
  }
#endif
  if (type == CubeDtype::kFloat32) {
    const float* af = static_cast<const float*>(a);
    const float* bf = static_cast<const float*>(b);
    if (s.gemv) DriveFloat<8>(isa, c, af, 0, 8, bf, s);
    else DriveFloat<8>(isa, c, af, static_cast<long>(a_k_frac) * 128, 128, bf, s);
    return;
  }
  const bool bf16 = type == CubeDtype::kBFloat16;
  const uint16_t* ah = static_cast<const uint16_t*>(a);
  const uint16_t* bh = static_cast<const uint16_t*>(b);
  // B: the first k_frac fractal rows of the Zn grid are contiguous.
  const size_t b_count = static_cast<size_t>(k_frac) * n1 * 256;
  float* bs = t_scratch_b.Get(b_count);
  Convert(isa, bs, bh, b_count, bf16);
  if (s.gemv) {
    float* as = t_scratch_a.Get(static_cast<size_t>(k_frac) * 16);
    Convert(isa, as, ah, static_cast<size_t>(s.k), bf16);
    DriveFloat<16>(isa, c, as, 0, 16, bs, s);
    return;
  }
  // A: per M block, the first k_frac fractals (the rest of the row pitch is not read).
  const size_t a_row = static_cast<size_t>(k_frac) * 256;
  float* as = t_scratch_a.Get(a_row * m1);
  for (int mi = 0; mi < m1; ++mi)
    Convert(isa, as + mi * a_row, ah + static_cast<size_t>(mi) * a_k_frac * 256, a_row, bf16);
  DriveFloat<16>(isa, c, as, static_cast<long>(a_row), 256, bs, s);
}

}  // namespace ascendc_host::cube
