// AVX-512 build of the contiguous vector kernels (ascendc_vec_kernels.inc); used when the CPU has
// avx512f/bw/vl/dq (chosen at run time in ascendc_vec.cpp). Compiles to nothing off x86-64.
#include "ascendc_vec_kernels.h"

#if defined(__x86_64__)
#include <immintrin.h>

#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>

#pragma GCC push_options
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"  // false positive inside _mm512_cvtph_ps (GCC 12)
#pragma GCC target("avx512f,avx512bw,avx512vl,avx512dq,avx2,fma,f16c")
namespace ascendc_host::vk::isa_avx512 {
namespace {
#define VW 64
typedef float vf __attribute__((vector_size(VW)));
typedef int32_t vi __attribute__((vector_size(VW)));
typedef uint32_t vu __attribute__((vector_size(VW)));
typedef uint16_t vh __attribute__((vector_size(VW / 2)));
inline vf LoadF16(const uint16_t* p) { return (vf)_mm512_cvtph_ps(_mm256_loadu_si256((const __m256i*)p)); }
inline void StreamStore(void* p, vf v) { _mm512_stream_ps(static_cast<float*>(p), (__m512)v); }  // p: VW-aligned
inline void StoreF16(uint16_t* p, vf v) {
  _mm256_storeu_si256((__m256i*)p, _mm512_cvtps_ph((__m512)v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
}
inline vf VSqrt(vf x) { return (vf)_mm512_sqrt_ps((__m512)x); }
inline uint32_t MoveMask(vi m) { return _mm512_test_epi32_mask((__m512i)m, (__m512i)m); }
// Hardware gather/scatter of 32-bit elements at byte offsets (offsets < 2^31: UB-sized); returns how
// many leading elements were moved (the rest run the portable loop). Scatter writes in lane order, so a
// repeated offset keeps the last value, as the portable loop does.
inline size_t Gather32Avx512(uint32_t* d, const uint8_t* base, const uint32_t* o, size_t n) {
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    __m512i idx = _mm512_loadu_si512(o + i);
    _mm512_storeu_si512(d + i, _mm512_i32gather_epi32(idx, base, 1));
  }
  return i;
}
inline size_t Scatter32Avx512(uint8_t* base, const uint32_t* a, const uint32_t* o, size_t n) {
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    __m512i idx = _mm512_loadu_si512(o + i);
    _mm512_i32scatter_epi32(base, idx, _mm512_loadu_si512(a + i), 1);
  }
  return i;
}
// GatherMask of 32-bit elements, 16 at a time with the compress-store; advances *i / *k past the
// whole groups of 16 (the rest runs the portable loop).
inline void Compress32Avx512(uint32_t* d, const uint32_t* a, const uint8_t* bits, size_t n, size_t* i, size_t* k) {
  size_t ii = 0, kk = 0;
  for (; ii + 16 <= n; ii += 16) {
    __mmask16 m;
    std::memcpy(&m, bits + ii / 8, 2);
    _mm512_mask_compressstoreu_epi32(d + kk, m, _mm512_loadu_si512(a + ii));
    kk += size_t(__builtin_popcount(unsigned(m)));
  }
  *i = ii;
  *k = kk;
}
// exp(r) for |r| <= ln2 / 2 (+ a little): the portable VExp's degree-7 polynomial, Horner with FMAs.
inline __m512 ExpPolyAvx512(__m512 r) {
  __m512 p = _mm512_set1_ps(1.98412698412698413e-4f);
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.38888888888888889e-3f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(8.33333333333333333e-3f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(4.16666666666666667e-2f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.66666666666666667e-1f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(0.5f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
  return _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
}
// exp as the portable VExp (same clamp, round-to-nearest n, Cody-Waite reduction and degree-7 polynomial),
// with roundscale for n and one scalef for p * 2^n (the portable code's p * 2^(n/2) * 2^(n - n/2) rounds
// once too), so ~16 instead of ~26 instructions per 16 lanes.
inline vf ExpAvx512(vf xv) {
  const __m512 x = (__m512)xv;
  __m512 xc = _mm512_min_ps(_mm512_max_ps(x, _mm512_set1_ps(-104.0f)), _mm512_set1_ps(89.0f));
  __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(xc, _mm512_set1_ps(1.44269504088896341f)),
                                  _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693145751953125f), xc);
  r = _mm512_fnmadd_ps(n, _mm512_set1_ps(1.428606765330187e-06f), r);
  const __m512 p = ExpPolyAvx512(r);
  // A subnormal (or zero) result, n <= -126: scalef would round it right but through a microcode
  // assist (~100x slower; masked attention exps -inf in bulk). Its bits are round(p * 2^(n + 149)),
  // an integer below 2^24 (2^23 and above carries into the smallest normal exponent), so the same
  // single rounding in the integer domain.
  const __mmask16 sub = _mm512_cmp_ps_mask(n, _mm512_set1_ps(-125.5f), _CMP_LT_OQ);
  __m512 res = _mm512_scalef_ps(p, _mm512_max_ps(n, _mm512_set1_ps(-125.0f)));
  if (sub) {
    const __m512 sc = _mm512_scalef_ps(p, _mm512_add_ps(n, _mm512_set1_ps(149.0f)));
    const __m512i bits = _mm512_cvt_roundps_epi32(sc, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    res = _mm512_mask_mov_ps(res, sub, _mm512_castsi512_ps(bits));
  }
  return (vf)_mm512_mask_mov_ps(res, _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q), x);  // NaN in, NaN out
}
// 16 bytes -> 16 float lanes (zero-extended); float lanes holding half values -> int32 rounded to
// nearest even (|x| <= 65504 never overflows; NaN -> 0 as the portable VToI32Sat).
inline vf U8ToF32Avx512(const uint8_t* p) {
  return (vf)_mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i*)p)));
}
inline vi HalfRangeToI32Avx512(vf x) {
  const __m512i r = _mm512_cvt_roundps_epi32((__m512)x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  return (vi)_mm512_maskz_mov_epi32(_mm512_cmp_ps_mask((__m512)x, (__m512)x, _CMP_ORD_Q), r);
}
#define VK_VEXP ExpAvx512
// m * exp(a + b) as the portable VMulExpSum (the same n, the same exact Cody-Waite steps and polynomial)
// with one scalef for the 2^n scaling (a single rounding, as the portable two-step product): the same
// bits, ~8 fewer instructions per 16 lanes (erfc's, so erf's and GELU's, tail). Results that may be
// subnormal (n <= -123, m >= 1/8: erfc beyond ~9.1) take a second, masked scalef: its microcode assist
// costs only vectors holding such a lane.
inline vf MulExpSumAvx512(vf mv, vf av, vf bv) {
  const __m512 a = (__m512)av, b = (__m512)bv;
  const __m512 magic = _mm512_set1_ps(12582912.0f);
  const __m512 n = _mm512_sub_ps(
      _mm512_fmadd_ps(_mm512_add_ps(a, b), _mm512_set1_ps(1.44269504088896341f), magic), magic);
  __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693145751953125f), a);
  r = _mm512_add_ps(r, b);
  r = _mm512_fnmadd_ps(n, _mm512_set1_ps(1.428606765330187e-06f), r);
  const __m512 p = _mm512_mul_ps((__m512)mv, ExpPolyAvx512(r));
  __m512 res = _mm512_scalef_ps(p, _mm512_max_ps(n, _mm512_set1_ps(-122.0f)));  // normal for n >= -122
  const __mmask16 sub = _mm512_cmp_ps_mask(n, _mm512_set1_ps(-122.5f), _CMP_LT_OQ);
  if (sub) res = _mm512_mask_scalef_ps(res, sub, p, n);
  return (vf)res;
}
#define VK_VMULEXPSUM MulExpSumAvx512
// 1/x for normal x: rcp14 (relative error < 2^-14) and one Newton step r (2 - x r) (< 2^-27), instead
// of a divide (vdivps zmm: ~10-16 cycles per 16 lanes).
inline vf RcpAvx512(vf xv) {
  const __m512 x = (__m512)xv;
  const __m512 r = _mm512_rcp14_ps(x);
  return (vf)_mm512_mul_ps(r, _mm512_fnmadd_ps(x, r, _mm512_set1_ps(2.0f)));
}
#define VK_VRCP RcpAvx512
inline vf I8ToF32Avx512(const int8_t* p) {
  return (vf)_mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_loadu_si128((const __m128i*)p)));
}
inline vf I16ToF32Avx512(const int16_t* p) {
  return (vf)_mm512_cvtepi32_ps(_mm512_cvtepi16_epi32(_mm256_loadu_si256((const __m256i*)p)));
}
// float -> int32 rounded to nearest even, saturating as the portable VToI32Sat (x86 returns INT_MIN
// for every out-of-range value: +overflow is fixed to INT_MAX, NaN to 0).
inline vi F32ToI32RintAvx512(vf xv) {
  const __m512 x = (__m512)xv;
  __m512i r = _mm512_cvt_roundps_epi32(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  r = _mm512_mask_mov_epi32(r, _mm512_cmp_ps_mask(x, _mm512_set1_ps(2147483648.0f), _CMP_GE_OQ),
                            _mm512_set1_epi32(0x7FFFFFFF));
  return (vi)_mm512_maskz_mov_epi32(_mm512_cmp_ps_mask(x, x, _CMP_ORD_Q), r);
}
#define VK_F32_TO_I32_RINT F32ToI32RintAvx512
#define VK_U8_TO_F32 U8ToF32Avx512
#define VK_I8_TO_F32 I8ToF32Avx512
#define VK_I16_TO_F32 I16ToF32Avx512
#define VK_HALF_RANGE_TO_I32 HalfRangeToI32Avx512
#define VK_GATHER32 Gather32Avx512
#define VK_SCATTER32 Scatter32Avx512
#define VK_COMPRESS32 Compress32Avx512
#include "ascendc_vec_kernels.inc"
#undef VK_VEXP
#undef VK_VMULEXPSUM
#undef VK_VRCP
#undef VK_GATHER32
#undef VK_SCATTER32
#undef VK_COMPRESS32
#undef VW
}  // namespace
void Fill(Table& t) { FillIsaTable(t); }
}  // namespace ascendc_host::vk::isa_avx512
#pragma GCC diagnostic pop
#pragma GCC pop_options

namespace ascendc_host::vk {
void FillAvx512(Table& t) {
  isa_avx512::Fill(t);
  t.isa = "avx512";
}
}  // namespace ascendc_host::vk
#else
namespace ascendc_host::vk {
void FillAvx512(Table&) {}
}  // namespace ascendc_host::vk
#endif
