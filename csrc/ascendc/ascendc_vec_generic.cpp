// Portable build of the contiguous vector kernels (baseline ISA: SSE2 on x86-64, NEON/ASIMD on aarch64),
// plus scalar implementations of every Cast pair of §4.3 (the SIMD tables override the hot ones).
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>
#include <utility>

#include "ascendc_vec_kernels.h"

namespace ascendc_host::vk {

namespace isa_generic {
namespace {
#define VW 16
typedef float vf __attribute__((vector_size(VW)));
typedef int32_t vi __attribute__((vector_size(VW)));
typedef uint32_t vu __attribute__((vector_size(VW)));
typedef uint16_t vh __attribute__((vector_size(VW / 2)));
// A non-temporal store where the target has one (SSE on x86-64), a plain one elsewhere.
inline void StreamStore(void* p, vf v) {
#if defined(__x86_64__)
  __builtin_ia32_movntps(static_cast<float*>(p), v);
#else
  std::memcpy(p, &v, sizeof v);
#endif
}
// Branch-free binary16 <-> binary32 on integer lanes (same results as the scalar helpers).
inline vf LoadF16(const uint16_t* p) {
  vh h16;
  std::memcpy(&h16, p, sizeof h16);
  vu h = __builtin_convertvector(h16, vu);
  vu sign = (h & 0x8000u) << 16;
  vu em = h & 0x7FFFu;
  vu normal = (em << 13) + 0x38000000u;
  vu special = (em << 13) + 0x70000000u;
  vf sub = __builtin_convertvector(em, vf) * 5.9604644775390625e-8f;
  vu r = em >= 0x7C00u ? special : normal;
  r = em < 0x0400u ? (vu)sub : r;
  return (vf)(r | sign);
}
inline void StoreF16(uint16_t* p, vf v) {
  vu x = (vu)v;
  vu sign = (x >> 16) & 0x8000u;
  vu ax = x & 0x7FFFFFFFu;
  vu normal = (ax + 0xC8000FFFu + ((ax >> 13) & 1u)) >> 13;
  vu sub = (vu)((vf)ax + 0.5f) - 0x3F000000u;
  vu special = ax > 0x7F800000u ? (0x7E00u | ((ax >> 13) & 0x3FFu)) : (vu{} + 0x7C00u);
  vu r = ax < 0x38800000u ? sub : normal;
  r = ax >= 0x477FF000u ? (vu{} + 0x7C00u) : r;
  r = ax >= 0x7F800000u ? special : r;
  vh out = __builtin_convertvector(r | sign, vh);
  std::memcpy(p, &out, sizeof out);
}
inline vf VSqrt(vf x) {
  for (int i = 0; i < VW / 4; ++i) x[i] = __builtin_sqrtf(x[i]);
  return x;
}
inline uint32_t MoveMask(vi m) {
  uint32_t r = 0;
  for (int i = 0; i < VW / 4; ++i) r |= uint32_t(m[i] != 0) << i;
  return r;
}
#include "ascendc_vec_kernels.inc"
#undef VW
}  // namespace
}  // namespace isa_generic

namespace {

template <typename T>
long double ToLD(T v) {
  if constexpr (std::is_same_v<T, half> || std::is_same_v<T, bfloat16_t>)
    return static_cast<long double>(float(v));
  else
    return static_cast<long double>(v);
}

long double RoundInt(long double v, int m) {
  switch (m) {
    case 2: return floorl(v);
    case 3: return ceill(v);
    case 4: return roundl(v);
    case 5: return truncl(v);
    default: return nearbyintl(v);  // NONE / RINT: to nearest even
  }
}

// Rounds v to a binary format with `mant` fraction bits, minimum normal exponent `emin` and largest
// finite value `maxf`, in RoundMode m (IEEE directed-rounding overflow rules).
long double RoundToFormat(long double v, int m, int mant, int emin, long double maxf) {
  if (v == 0 || std::isnan(v) || std::isinf(v)) return v;
  int e;
  frexpl(v, &e);
  int q = (e - 1 > emin ? e - 1 : emin) - mant;
  long double sc = ldexpl(v, -q);
  long double r;
  if (m == 6) {  // round to odd
    r = truncl(sc);
    if (r != sc && fmodl(r, 2.0L) == 0) r += sc > 0 ? 1 : -1;
  } else {
    r = RoundInt(sc, m);
  }
  long double res = ldexpl(r, q);
  if (fabsl(res) > maxf) {
    const long double inf = std::numeric_limits<long double>::infinity();
    bool pos = res > 0;
    switch (m) {
      case 2: res = pos ? maxf : -inf; break;
      case 3: res = pos ? inf : -maxf; break;
      case 5: case 6: res = pos ? maxf : -maxf; break;
      default: res = pos ? inf : -inf; break;
    }
  }
  return res;
}

template <typename D, typename S, int M>
D CastOne(S s) {
  long double v = ToLD(s);
  if constexpr (std::is_integral_v<D>) {
    if (std::isnan(v)) return D(0);
    long double r = RoundInt(v, M);
    if (r <= static_cast<long double>(std::numeric_limits<D>::min())) return std::numeric_limits<D>::min();
    if (r >= static_cast<long double>(std::numeric_limits<D>::max())) return std::numeric_limits<D>::max();
    return static_cast<D>(r);
  } else if constexpr (std::is_same_v<D, float>) {
    return static_cast<float>(M <= 1 ? v : RoundToFormat(v, M, 23, -126, FLT_MAX));
  } else if constexpr (std::is_same_v<D, half>) {
    return M <= 1 ? half(static_cast<float>(v)) : half(static_cast<float>(RoundToFormat(v, M, 10, -14, 65504.0L)));
  } else {
    static_assert(std::is_same_v<D, bfloat16_t>);
    return M <= 1 ? bfloat16_t(static_cast<float>(v))
                  : bfloat16_t(static_cast<float>(RoundToFormat(v, M, 7, -126, 3.38953138925153547590470800371487866880e38L)));
  }
}

template <typename D, typename S, int M>
void CastScalar(void* d, const void* a, size_t n) {
  D* dp = static_cast<D*>(d);
  const S* sp = static_cast<const S*>(a);
  for (size_t i = 0; i < n; ++i) dp[i] = CastOne<D, S, M>(sp[i]);
}

template <typename D, typename S, int... Ms>
void Reg(Table& t) {
  ((t.cast[int(DTypeOf<D>)][int(DTypeOf<S>)][Ms] = CastScalar<D, S, Ms>), ...);
}

}  // namespace

void FillGeneric(Table& t) {
  t.isa = "generic";
  // The 2201 pairs of §4.3 (modes: 0 NONE, 1 RINT, 2 FLOOR, 3 CEIL, 4 ROUND, 5 TRUNC, 6 ODD).
  Reg<float, half, 0>(t);
  Reg<int32_t, half, 1, 2, 3, 4, 5>(t);
  Reg<int16_t, half, 1, 2, 3, 4, 5>(t);
  Reg<int8_t, half, 0, 1, 2, 3, 4, 5>(t);
  Reg<uint8_t, half, 0, 1, 2, 3, 4, 5>(t);
  Reg<float, float, 1, 2, 3, 4, 5>(t);
  Reg<int32_t, float, 1, 2, 3, 4, 5>(t);
  Reg<int64_t, float, 1, 2, 3, 4, 5>(t);
  Reg<int16_t, float, 1, 2, 3, 4, 5>(t);
  Reg<bfloat16_t, float, 1, 2, 3, 4, 5>(t);
  Reg<half, float, 0, 1, 2, 3, 4, 5, 6>(t);
  Reg<float, bfloat16_t, 0>(t);
  Reg<int32_t, bfloat16_t, 1, 2, 3, 4, 5>(t);
  Reg<half, uint8_t, 0>(t);
  Reg<half, int8_t, 0>(t);
  Reg<half, int16_t, 0, 1, 2, 3, 4, 5>(t);
  Reg<float, int16_t, 0>(t);
  Reg<float, int32_t, 0, 1, 2, 3, 4, 5>(t);
  Reg<int16_t, int32_t, 0>(t);
  Reg<int64_t, int32_t, 0>(t);
  Reg<int32_t, int64_t, 0>(t);
  Reg<float, int64_t, 1, 2, 3, 4, 5>(t);
  // Portable vector kernels for everything else (and the hot casts).
  isa_generic::FillIsaTable(t);
}

}  // namespace ascendc_host::vk
