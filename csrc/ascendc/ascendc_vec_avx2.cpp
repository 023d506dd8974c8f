// AVX2 + FMA + F16C build of the contiguous vector kernels (ascendc_vec_kernels.inc).
// Compiles to nothing off x86-64.
#include "ascendc_vec_kernels.h"

#if defined(__x86_64__)
#include <immintrin.h>

#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>

#pragma GCC push_options
#pragma GCC target("avx2,fma,f16c")
namespace ascendc_host::vk::isa_avx2 {
namespace {
#define VW 32
typedef float vf __attribute__((vector_size(VW)));
typedef int32_t vi __attribute__((vector_size(VW)));
typedef uint32_t vu __attribute__((vector_size(VW)));
typedef uint16_t vh __attribute__((vector_size(VW / 2)));
inline vf LoadF16(const uint16_t* p) { return (vf)_mm256_cvtph_ps(_mm_loadu_si128((const __m128i*)p)); }
inline void StreamStore(void* p, vf v) { _mm256_stream_ps(static_cast<float*>(p), (__m256)v); }  // p: VW-aligned
inline void StoreF16(uint16_t* p, vf v) {
  _mm_storeu_si128((__m128i*)p, _mm256_cvtps_ph((__m256)v, _MM_FROUND_TO_NEAREST_INT));
}
inline vf VSqrt(vf x) { return (vf)_mm256_sqrt_ps((__m256)x); }
inline uint32_t MoveMask(vi m) { return uint32_t(_mm256_movemask_ps((__m256)m)); }
#include "ascendc_vec_kernels.inc"
#undef VW
}  // namespace
void Fill(Table& t) { FillIsaTable(t); }
}  // namespace ascendc_host::vk::isa_avx2
#pragma GCC pop_options

namespace ascendc_host::vk {
void FillAvx2(Table& t) {
  isa_avx2::Fill(t);
  t.isa = "avx2";
}
}  // namespace ascendc_host::vk
#else
namespace ascendc_host::vk {
void FillAvx2(Table&) {}
}  // namespace ascendc_host::vk
#endif
