#include "runtime/strided_copy.h"

#include <algorithm>
#include <complex>
#include <cstring>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "runtime/thread_pool.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace npu_rt {

size_t DTypeSize(DType t) {
  switch (t) {
    case DType::Bool: case DType::UInt8: case DType::Int8: return 1;
    case DType::Int16: case DType::Float16: case DType::BFloat16: return 2;
    case DType::Int32: case DType::Float32: return 4;
    case DType::Int64: case DType::Float64: case DType::Complex64: return 8;
    case DType::Complex128: return 16;
  }
  return 0;
}

const char* DTypeName(DType t) {
  static const char* names[] = {"bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16",
                                "float32", "float64", "complex64", "complex128"};
  return names[static_cast<int>(t)];
}

namespace {

// IEEE half and bfloat16 <-> float, round to nearest even.
struct F16 { uint16_t bits; };
struct BF16 { uint16_t bits; };

inline float HalfToFloat(uint16_t h) {
  const uint32_t sign = (h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1f, mant = h & 0x3ff, bits;
  if (exp == 0) {
    if (mant == 0) bits = sign;
    else {  // subnormal
      exp = 127 - 15 + 1;
      while (!(mant & 0x400)) { mant <<= 1; --exp; }
      bits = sign | (exp << 23) | ((mant & 0x3ff) << 13);
    }
  } else if (exp == 31) bits = sign | 0x7f800000u | (mant << 13);
  else bits = sign | ((exp + 127 - 15) << 23) | (mant << 13);
  float f; std::memcpy(&f, &bits, 4); return f;
}

inline uint16_t FloatToHalf(float f) {
  uint32_t x; std::memcpy(&x, &f, 4);
  const uint32_t sign = (x >> 16) & 0x8000u;
  const uint32_t absx = x & 0x7fffffffu;
  if (absx >= 0x7f800000u) return sign | 0x7c00u | (absx > 0x7f800000u ? 0x200u : 0);  // inf/nan
  if (absx >= 0x477ff000u) return sign | 0x7c00u;  // overflow -> inf (>= 65520 rounds up)
  if (absx < 0x38800000u) {  // subnormal or zero in half
    if (absx < 0x33000000u) return sign;  // < 2^-25 rounds to 0
    const uint32_t e = absx >> 23, m = (absx & 0x7fffff) | 0x800000;
    const int shift = 126 - static_cast<int>(e);  // value in units of 2^-24 (half subnormal step)
    uint32_t r = m >> (shift);
    const uint32_t rem = m & ((1u << shift) - 1), halfway = 1u << (shift - 1);
    if (rem > halfway || (rem == halfway && (r & 1))) ++r;
    return sign | r;
  }
  uint32_t r = ((absx >> 13) - ((127 - 15) << 10));
  const uint32_t rem = absx & 0x1fff;
  if (rem > 0x1000 || (rem == 0x1000 && (r & 1))) ++r;
  return sign | r;
}

inline float BF16ToFloat(uint16_t b) { uint32_t x = uint32_t(b) << 16; float f; std::memcpy(&f, &x, 4); return f; }
inline uint16_t FloatToBF16(float f) {
  uint32_t x; std::memcpy(&x, &f, 4);
  if ((x & 0x7fffffffu) > 0x7f800000u) return (x >> 16) | 0x40;  // quiet NaN
  return (x + 0x7fffu + ((x >> 16) & 1)) >> 16;
}

// Every value goes through one of three "wide" types, then narrows, as PyTorch's casts do.
template <typename T> struct Conv;
#define NPU_RT_INT_CONV(T)                                                         \
  template <> struct Conv<T> {                                                     \
    static double to_d(T v) { return static_cast<double>(v); }                     \
    static int64_t to_i(T v) { return static_cast<int64_t>(v); }                   \
    static T from_d(double v) { return static_cast<T>(static_cast<int64_t>(v)); } \
    static T from_i(int64_t v) { return static_cast<T>(v); }                       \
  };
NPU_RT_INT_CONV(uint8_t)
NPU_RT_INT_CONV(int8_t)
NPU_RT_INT_CONV(int16_t)
NPU_RT_INT_CONV(int32_t)
NPU_RT_INT_CONV(int64_t)
template <> struct Conv<bool> {
  static double to_d(bool v) { return v; }
  static int64_t to_i(bool v) { return v; }
  static bool from_d(double v) { return v != 0; }
  static bool from_i(int64_t v) { return v != 0; }
};
template <> struct Conv<float> {
  static double to_d(float v) { return v; }
  static float from_d(double v) { return static_cast<float>(v); }
};
template <> struct Conv<double> {
  static double to_d(double v) { return v; }
  static double from_d(double v) { return v; }
};
template <> struct Conv<F16> {
  static double to_d(F16 v) { return HalfToFloat(v.bits); }
  static F16 from_d(double v) { return F16{FloatToHalf(static_cast<float>(v))}; }
};
template <> struct Conv<BF16> {
  static double to_d(BF16 v) { return BF16ToFloat(v.bits); }
  static BF16 from_d(double v) { return BF16{FloatToBF16(static_cast<float>(v))}; }
};

template <typename T> constexpr bool kIsInt = std::is_integral_v<T>;

template <typename D, typename S>
inline D CastOne(S s) {
  if constexpr (std::is_same_v<D, S>) return s;
  else if constexpr (kIsInt<D> && kIsInt<S>) return Conv<D>::from_i(Conv<S>::to_i(s));
  else if constexpr (std::is_same_v<D, float> && std::is_same_v<S, F16>) return HalfToFloat(s.bits);
  else if constexpr (std::is_same_v<D, float> && std::is_same_v<S, BF16>) return BF16ToFloat(s.bits);
  else if constexpr (std::is_same_v<D, F16> && std::is_same_v<S, float>) return F16{FloatToHalf(s)};
  else if constexpr (std::is_same_v<D, BF16> && std::is_same_v<S, float>) return BF16{FloatToBF16(s)};
  else return Conv<D>::from_d(Conv<S>::to_d(s));
}

struct Coalesced {
  int ndim;
  int64_t sizes[kMaxDims];
  int64_t ds[kMaxDims], ss[kMaxDims];  // strides in elements, innermost last
};

Coalesced Coalesce(const StridedView& d, const StridedView& s) {
  Coalesced c{};
  // Walk the dims in the destination's memory order (largest stride first), so the innermost dim
  // is the one the destination is contiguous along (e.g. C for a channels_last destination).
  int order[kMaxDims];
  for (int i = 0; i < d.ndim; ++i) order[i] = i;
  std::stable_sort(order, order + d.ndim, [&](int a, int b) { return d.strides[a] > d.strides[b]; });
  int n = 0;
  for (int oi = 0; oi < d.ndim; ++oi) {
    const int i = order[oi];
    if (d.sizes[i] == 1) continue;
    if (n > 0 && c.ds[n - 1] == d.strides[i] * d.sizes[i] && c.ss[n - 1] == s.strides[i] * d.sizes[i]) {
      c.sizes[n - 1] *= d.sizes[i];
      c.ds[n - 1] = d.strides[i];
      c.ss[n - 1] = s.strides[i];
      continue;
    }
    c.sizes[n] = d.sizes[i];
    c.ds[n] = d.strides[i];
    c.ss[n] = s.strides[i];
    ++n;
  }
  if (n == 0) { c.sizes[0] = 1; c.ds[0] = c.ss[0] = 1; n = 1; }
  c.ndim = n;
  return c;
}

// Walks the rows (innermost-dim runs) of a coalesced copy from linear row `begin` on, keeping the
// destination / source offsets of the current row (in elements times `scale`) by increments: the
// next-to-innermost dim advances every row, the outer ones roll over from it.
struct RowCursor {
  int64_t idx[kMaxDims] = {};
  int64_t dstep[kMaxDims] = {}, sstep[kMaxDims] = {}, size[kMaxDims] = {};
  int64_t doff = 0, soff = 0;
  int last = -1;  // the next-to-innermost dim (-1: one row)
  inline RowCursor(const Coalesced& c, int64_t begin, int64_t scale) {
    last = c.ndim - 2;
    int64_t r = begin;
    for (int i = last; i >= 0; --i) {
      idx[i] = r % c.sizes[i];
      r /= c.sizes[i];
      dstep[i] = c.ds[i] * scale;
      sstep[i] = c.ss[i] * scale;
      size[i] = c.sizes[i];
      doff += idx[i] * dstep[i];
      soff += idx[i] * sstep[i];
    }
  }
  inline void Next() {
    for (int i = last; i >= 0; --i) {
      doff += dstep[i];
      soff += sstep[i];
      if (++idx[i] < size[i]) return;
      doff -= dstep[i] * size[i];
      soff -= sstep[i] * size[i];
      idx[i] = 0;
    }
  }
};

#if defined(__x86_64__)
// Rows of at most 64 contiguous bytes (a conv's folded taps, narrow slices): one masked load and
// store per row. Offsets in bytes.
__attribute__((target("avx512f,avx512bw"))) void CopyShortRowsAvx512(const Coalesced& c, char* dbase,
                                                                    const char* sbase, int64_t begin, int64_t end,
                                                                    int64_t esz) {
  const int64_t bytes = c.sizes[c.ndim - 1] * esz;
  const __mmask64 m = bytes >= 64 ? ~__mmask64(0) : (__mmask64(1) << bytes) - 1;
  RowCursor cur(c, begin, esz);
  for (int64_t row = begin; row < end; ++row, cur.Next())
    _mm512_mask_storeu_epi8(dbase + cur.doff, m, _mm512_maskz_loadu_epi8(m, sbase + cur.soff));
}
bool HasAvx512Bw() {
  static const bool v = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw");
  }();
  return v;
}
#endif

template <typename D, typename S>
void CopyRange(const Coalesced& c, char* dbase, const char* sbase, int64_t begin, int64_t end) {
  // Iterate rows of the innermost dim from linear row index `begin` to `end`.
  const int nd = c.ndim;
  const int64_t inner = c.sizes[nd - 1], dsi = c.ds[nd - 1], ssi = c.ss[nd - 1];
  // Short contiguous rows (a conv's folded taps, narrow slices) are copied inline: a memcpy call
  // per 7-element row cost more than the copy.
  const bool short_rows = std::is_same_v<D, S> && dsi == 1 && ssi == 1 && inner * sizeof(D) <= 64;
#if defined(__x86_64__)
  if (short_rows && HasAvx512Bw()) {
    CopyShortRowsAvx512(c, dbase, sbase, begin, end, int64_t(sizeof(D)));
    return;
  }
#endif
  RowCursor cur(c, begin, 1);
  for (int64_t row = begin; row < end; ++row, cur.Next()) {
    D* dp = reinterpret_cast<D*>(dbase) + cur.doff;
    const S* sp = reinterpret_cast<const S*>(sbase) + cur.soff;
    if constexpr (std::is_same_v<D, S>) {
      if (short_rows) {
        for (int64_t j = 0; j < inner; ++j) dp[j] = sp[j];
        goto next;
      }
      if (dsi == 1 && ssi == 1) { std::memcpy(dp, sp, inner * sizeof(D)); goto next; }
      if (dsi == 1 && ssi == 0) { std::fill(dp, dp + inner, sp[0]); goto next; }
    }
    if (dsi == 1 && ssi == 1) {
      for (int64_t j = 0; j < inner; ++j) dp[j] = CastOne<D, S>(sp[j]);
    } else {
      for (int64_t j = 0; j < inner; ++j) dp[j * dsi] = CastOne<D, S>(sp[j * ssi]);
    }
  next:;
  }
}

#if defined(__x86_64__)
// dst[a * dk + b] = src[a + b * sj] for a, b < 8, 4-byte elements: eight 8-element rows in, the
// classic unpack / shuffle / 128-bit permute transpose, eight rows out.
__attribute__((target("avx2"))) inline void Transpose8x8(float* dst, int64_t dk, const float* src, int64_t sj) {
  __m256 r0 = _mm256_loadu_ps(src), r1 = _mm256_loadu_ps(src + sj), r2 = _mm256_loadu_ps(src + 2 * sj),
         r3 = _mm256_loadu_ps(src + 3 * sj), r4 = _mm256_loadu_ps(src + 4 * sj), r5 = _mm256_loadu_ps(src + 5 * sj),
         r6 = _mm256_loadu_ps(src + 6 * sj), r7 = _mm256_loadu_ps(src + 7 * sj);
  const __m256 t0 = _mm256_unpacklo_ps(r0, r1), t1 = _mm256_unpackhi_ps(r0, r1), t2 = _mm256_unpacklo_ps(r2, r3),
               t3 = _mm256_unpackhi_ps(r2, r3), t4 = _mm256_unpacklo_ps(r4, r5), t5 = _mm256_unpackhi_ps(r4, r5),
               t6 = _mm256_unpacklo_ps(r6, r7), t7 = _mm256_unpackhi_ps(r6, r7);
  const __m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44), u1 = _mm256_shuffle_ps(t0, t2, 0xEE),
               u2 = _mm256_shuffle_ps(t1, t3, 0x44), u3 = _mm256_shuffle_ps(t1, t3, 0xEE),
               u4 = _mm256_shuffle_ps(t4, t6, 0x44), u5 = _mm256_shuffle_ps(t4, t6, 0xEE),
               u6 = _mm256_shuffle_ps(t5, t7, 0x44), u7 = _mm256_shuffle_ps(t5, t7, 0xEE);
  _mm256_storeu_ps(dst, _mm256_permute2f128_ps(u0, u4, 0x20));
  _mm256_storeu_ps(dst + dk, _mm256_permute2f128_ps(u1, u5, 0x20));
  _mm256_storeu_ps(dst + 2 * dk, _mm256_permute2f128_ps(u2, u6, 0x20));
  _mm256_storeu_ps(dst + 3 * dk, _mm256_permute2f128_ps(u3, u7, 0x20));
  _mm256_storeu_ps(dst + 4 * dk, _mm256_permute2f128_ps(u0, u4, 0x31));
  _mm256_storeu_ps(dst + 5 * dk, _mm256_permute2f128_ps(u1, u5, 0x31));
  _mm256_storeu_ps(dst + 6 * dk, _mm256_permute2f128_ps(u2, u6, 0x31));
  _mm256_storeu_ps(dst + 7 * dk, _mm256_permute2f128_ps(u3, u7, 0x31));
}

// The same for 8-byte elements in 4 x 4 blocks (unpack pairs, then swap 128-bit halves).
__attribute__((target("avx2"))) inline void Transpose4x4(double* dst, int64_t dk, const double* src, int64_t sj) {
  const __m256d r0 = _mm256_loadu_pd(src), r1 = _mm256_loadu_pd(src + sj), r2 = _mm256_loadu_pd(src + 2 * sj),
                r3 = _mm256_loadu_pd(src + 3 * sj);
  const __m256d t0 = _mm256_unpacklo_pd(r0, r1), t1 = _mm256_unpackhi_pd(r0, r1), t2 = _mm256_unpacklo_pd(r2, r3),
                t3 = _mm256_unpackhi_pd(r2, r3);
  _mm256_storeu_pd(dst, _mm256_permute2f128_pd(t0, t2, 0x20));
  _mm256_storeu_pd(dst + dk, _mm256_permute2f128_pd(t1, t3, 0x20));
  _mm256_storeu_pd(dst + 2 * dk, _mm256_permute2f128_pd(t0, t2, 0x31));
  _mm256_storeu_pd(dst + 3 * dk, _mm256_permute2f128_pd(t1, t3, 0x31));
}

// One [kb, ke) x [jb, je) tile of a transpose in B x B blocks (Block: 8x8 of 4-byte or 4x4 of 8-byte
// elements); the ragged edges element-wise.
template <typename E, int B, void (*Block)(E*, int64_t, const E*, int64_t)>
__attribute__((target("avx2"))) void TransposeTile(E* dst, int64_t dk, const E* src, int64_t sj, int64_t kb,
                                                  int64_t ke, int64_t jb, int64_t je) {
  const int64_t kB = kb + (ke - kb) / B * B, jB = jb + (je - jb) / B * B;
  for (int64_t a = kb; a < kB; a += B) {
    for (int64_t b = jb; b < jB; b += B) Block(dst + a * dk + b, dk, src + a + b * sj, sj);
    for (int64_t r = a; r < a + B; ++r)
      for (int64_t b = jB; b < je; ++b) dst[r * dk + b] = src[r + b * sj];
  }
  for (int64_t a = kB; a < ke; ++a)
    for (int64_t b = jb; b < je; ++b) dst[a * dk + b] = src[a + b * sj];
}

// dst[a * dk + b] = rows[b][k0 + a] for a, b < 16, 4-byte elements, the rows written with streaming
// (non-temporal) stores: dst + a * dk must be 64-byte aligned. Sixteen rows in, 32-bit, 64-bit and two
// 128-bit-lane rounds of unpacks / shuffles, sixteen full cache lines out.
// Only the first n (<= 16) rows of K are read and written when n < 16.
__attribute__((target("avx512f"))) inline void Transpose16x16Stream(float* dst, int64_t dk, const float* const* rows,
                                                                    int64_t k0, int n = 16) {
  __m512 r[16], t[16];
  const __mmask16 m = static_cast<__mmask16>(n >= 16 ? 0xFFFFu : (1u << n) - 1u);
  for (int i = 0; i < 16; ++i) r[i] = _mm512_maskz_loadu_ps(m, rows[i] + k0);
  for (int i = 0; i < 16; i += 2) {
    t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);
    t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
  }
  for (int i = 0; i < 16; i += 4) {
    r[i] = _mm512_castpd_ps(_mm512_unpacklo_pd(_mm512_castps_pd(t[i]), _mm512_castps_pd(t[i + 2])));
    r[i + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(_mm512_castps_pd(t[i]), _mm512_castps_pd(t[i + 2])));
    r[i + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(_mm512_castps_pd(t[i + 1]), _mm512_castps_pd(t[i + 3])));
    r[i + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(_mm512_castps_pd(t[i + 1]), _mm512_castps_pd(t[i + 3])));
  }
  for (int i = 0; i < 4; ++i) {
    t[i] = _mm512_shuffle_f32x4(r[i], r[i + 4], 0x88);
    t[i + 4] = _mm512_shuffle_f32x4(r[i], r[i + 4], 0xDD);
    t[i + 8] = _mm512_shuffle_f32x4(r[i + 8], r[i + 12], 0x88);
    t[i + 12] = _mm512_shuffle_f32x4(r[i + 8], r[i + 12], 0xDD);
  }
  for (int i = 0; i < 4; ++i) {
    r[i] = _mm512_shuffle_f32x4(t[i], t[i + 8], 0x88);
    r[i + 8] = _mm512_shuffle_f32x4(t[i], t[i + 8], 0xDD);
    r[i + 4] = _mm512_shuffle_f32x4(t[i + 4], t[i + 12], 0x88);
    r[i + 12] = _mm512_shuffle_f32x4(t[i + 4], t[i + 12], 0xDD);
  }
  for (int i = 0; i < n; ++i) _mm512_stream_ps(dst + i * dk, r[i]);
}

bool HaveAvx512F() {
  static const bool ok = [] { __builtin_cpu_init(); return __builtin_cpu_supports("avx512f") != 0; }();
  return ok;
}

bool HaveAvx2() {
  static const bool ok = [] { __builtin_cpu_init(); return __builtin_cpu_supports("avx2") != 0; }();
  return ok;
}
#endif

// The dims of a transposing copy (K = dim k, J = the last dim) split for its tasks: `inner` dims whose
// destination strides continue J's run (ds == J, then J * that size, ...; the run kept <= max_run
// elements) and the `outer` rest. Returns the run's length; outer_count gets the outer dims' product.
struct TransposeDims {
  int inner[kMaxDims], ni = 0, outer[kMaxDims], no = 0;
  int64_t run = 1, outer_count = 1;
  TransposeDims(const Coalesced& c, int k, int64_t max_run) {
    const int nd = c.ndim;
    run = c.sizes[nd - 1];
    for (bool found = true; found;) {
      found = false;
      for (int i = 0; i < nd - 1; ++i)
        if (i != k && c.ds[i] == run && c.sizes[i] > 1 && run * c.sizes[i] <= max_run &&
            std::find(inner, inner + ni, i) == inner + ni) {
          inner[ni++] = i;
          run *= c.sizes[i];
          found = true;
          break;
        }
    }
    for (int i = 0; i < nd - 1; ++i)
      if (i != k && std::find(inner, inner + ni, i) == inner + ni) {
        outer[no++] = i;
        outer_count *= c.sizes[i];
      }
  }
  // The destination / source element offsets of outer index o.
  void OuterOffsets(const Coalesced& c, int64_t o, int64_t& doff, int64_t& soff) const {
    doff = soff = 0;
    for (int q = no - 1; q >= 0; --q) {
      const int i = outer[q];
      const int64_t idx = o % c.sizes[i];
      o /= c.sizes[i];
      doff += idx * c.ds[i];
      soff += idx * c.ss[i];
    }
  }
};

#if defined(__x86_64__)
// The transpose of a large 4-byte copy (the destination >= kStreamTransposeBytes, past the caches:
// conv weight re-layouts in training, NCHW <-> NHWC of big activations), a block of 16 destination
// columns at a time: the block's 16 source rows (contiguous along K) are read front to back over K
// (16 sequential streams the prefetchers follow) and each 16 x 16 tile leaves as 16 whole destination
// lines by streaming stores (no read for ownership, no half-written line evicted and fetched again).
// The columns are the destination rows' contiguous run: J and the inner dims that continue it (a
// weight's [c1][c0][kh][kw] run gathered from [c1][kh][kw][c0] rows), each column's source row
// looked up in a table. Tiled the usual way a cold 512 x 4608 transpose ran at 2.3x a memcpy's time,
// this way at ~1x. Needs a run of whole 16-column blocks and 64-byte-aligned destination rows.
constexpr int64_t kStreamTransposeBytes = int64_t(1) << 20;

bool StreamTranspose(const Coalesced& c, int k, float* dst, const float* src) {
  const int nd = c.ndim;
  const int64_t J = c.sizes[nd - 1], K = c.sizes[k], sj = c.ss[nd - 1], dk = c.ds[k];
  if (!HaveAvx512F() || dk % 16 != 0 || reinterpret_cast<uintptr_t>(dst) % 64 != 0) return false;
  // The destination rows' contiguous run: J, then every dim whose destination stride continues it.
  const TransposeDims dims(c, k, int64_t(1) << 20);
  const int64_t L = dims.run, outer = dims.outer_count;
  if (L % 16 != 0) return false;
  for (int q = 0; q < dims.no; ++q)
    if (c.ds[dims.outer[q]] % 16 != 0) return false;
  if (outer * L * K * 4 < kStreamTransposeBytes) return false;
  // Source offset of each column of the run.
  thread_local std::vector<int64_t> col_src;
  col_src.resize(L);
  for (int64_t col = 0; col < L; ++col) {
    int64_t r = col / J, off = (col % J) * sj;
    for (int q = 0; q < dims.ni; ++q) {
      const int i = dims.inner[q];
      off += (r % c.sizes[i]) * c.ss[i];
      r /= c.sizes[i];
    }
    col_src[col] = off;
  }
  const int64_t* cs = col_src.data();
  // Tasks: (outer index, group of 16-column blocks, chunk of K), ~16K elements or more each; K is
  // chunked only when the groups are few.
  const int64_t cblocks = L / 16, cgroup = std::clamp<int64_t>(16384 / (16 * K), 1, cblocks);
  const int64_t groups = (cblocks + cgroup - 1) / cgroup, per = outer * groups;
  const int64_t kchunks = per >= 16 ? 1 : std::min<int64_t>((16 + per - 1) / per, std::max<int64_t>(1, K / 256));
  const int64_t kc = (K + kchunks - 1) / kchunks;
  GlobalThreadPool().ParallelFor(per * kchunks, [&](int64_t t) {
    const int64_t ch = t % kchunks, cg = (t / kchunks) % groups;
    int64_t doff, soff;
    dims.OuterOffsets(c, t / kchunks / groups, doff, soff);
    const int64_t k0 = ch * kc, k1 = std::min(K, k0 + kc);
    for (int64_t cb = cg * cgroup; cb < std::min(cblocks, (cg + 1) * cgroup); ++cb) {
      float* d = dst + doff + cb * 16;
      const float* rows[16];
      for (int r = 0; r < 16; ++r) rows[r] = src + soff + cs[cb * 16 + r];
      for (int64_t a = k0; a < k1; a += 16)
        Transpose16x16Stream(d + a * dk, dk, rows, a, int(std::min<int64_t>(16, k1 - a)));
    }
    _mm_sfence();  // the streaming stores are visible before the task is reported done
  });
  return true;
}
#endif

// A same-dtype copy whose destination is contiguous along the innermost dim while the source is
// contiguous along another dim is a (batched) 2-D transpose (NCHW <-> NHWC, .t().contiguous()).
// Row-by-row it would read one element per cache line over a whole plane; done in 32 x 32 tiles
// both sides stay in L1. Returns false when the copy is not of that shape.
template <typename T>
bool TransposeCopy(const Coalesced& c, char* dbase, const char* sbase) {
  const int nd = c.ndim;
  if (nd < 2 || c.ds[nd - 1] != 1 || c.ss[nd - 1] == 1 || c.ss[nd - 1] == 0) return false;
  int k = -1;
  for (int i = nd - 2; i >= 0; --i)
    if (c.ss[i] == 1) { k = i; break; }
  if (k < 0) return false;
  const int64_t J = c.sizes[nd - 1], K = c.sizes[k], sj = c.ss[nd - 1], dk = c.ds[k];
  // Fewer than 8 destination-contiguous elements (an RGB image to channels_last: J = 3) take the
  // scalar tile loop below; row by row they would pay the row cursor for every J-element row.
  if (J < 2 || K < 8) return false;
#if defined(__x86_64__)
  if constexpr (sizeof(T) == 4) {
    if (StreamTranspose(c, k, reinterpret_cast<float*>(dbase), reinterpret_cast<const float*>(sbase))) return true;
  }
#endif
  // Outer dims that continue J in the destination (ds == J, then ds == J * that size, ...) run inside a
  // task: its K rows are then written whole (e.g. a [cout][c1][c0][kh][kw] weight from a
  // [c1][kh][kw][c0][cout] buffer: J = kh * kw is 9 elements, the c0 groups complete the 72-element rows),
  // instead of 9-element pieces of every row from tasks on different threads.
  const TransposeDims dims(c, k, 4096);
  const int* inner_dims = dims.inner;
  const int ni = dims.ni;
  const int64_t inner = dims.run / J, outer = dims.outer_count;
  constexpr int64_t kTile = 32, kBand = 128;  // a task: kBand rows of K for one outer index
  const int64_t bands = (K + kBand - 1) / kBand;
  T* dst = reinterpret_cast<T*>(dbase);
  const T* src = reinterpret_cast<const T*>(sbase);
  auto piece = [&](int64_t doff, int64_t soff, int64_t band) {
    const int64_t k0 = band * kBand, k1 = std::min(K, k0 + kBand);
#if defined(__x86_64__)
    if constexpr (sizeof(T) == 4 || sizeof(T) == 8) {
      if (HaveAvx2() && J >= 8) {
        // Bits move through float / double registers untouched (no arithmetic).
        using E = std::conditional_t<sizeof(T) == 4, float, double>;
        E* d = reinterpret_cast<E*>(dst + doff);
        const E* s = reinterpret_cast<const E*>(src + soff);
        for (int64_t jb = 0; jb < J; jb += kTile)
          for (int64_t kb = k0; kb < k1; kb += kTile) {
            const int64_t ke = std::min(k1, kb + kTile), je = std::min(J, jb + kTile);
            if constexpr (sizeof(T) == 4) TransposeTile<float, 8, Transpose8x8>(d, dk, s, sj, kb, ke, jb, je);
            else TransposeTile<double, 4, Transpose4x4>(d, dk, s, sj, kb, ke, jb, je);
          }
        return;
      }
    }
#endif
    for (int64_t jb = 0; jb < J; jb += kTile) {
      const int64_t je = std::min(J, jb + kTile);
      for (int64_t kb = k0; kb < k1; kb += kTile) {
        const int64_t ke = std::min(k1, kb + kTile);
        for (int64_t a = kb; a < ke; ++a) {
          T* dp = dst + doff + a * dk;
          const T* sp = src + soff + a;
          for (int64_t b = jb; b < je; ++b) dp[b] = sp[b * sj];
        }
      }
    }
  };
  auto task = [&](int64_t t) {
    int64_t doff0, soff0;
    const int64_t band = t % bands;
    dims.OuterOffsets(c, t / bands, doff0, soff0);
    for (int64_t in = 0; in < inner; ++in) {
      int64_t doff = doff0, soff = soff0, r = in;
      for (int q = 0; q < ni; ++q) {  // inner_dims[0] is the fastest (its ds is J)
        const int i = inner_dims[q];
        const int64_t idx = r % c.sizes[i];
        r /= c.sizes[i];
        doff += idx * c.ds[i];
        soff += idx * c.ss[i];
      }
      piece(doff, soff, band);
    }
  };
  const int64_t tasks = outer * bands;
  if (tasks * inner * J * kBand < (int64_t{1} << 15)) {
    for (int64_t t = 0; t < tasks; ++t) task(t);
  } else {
    GlobalThreadPool().ParallelFor(tasks, task);
  }
  return true;
}

constexpr int64_t kChunkElems = 1 << 18;  // ~1 MiB of float per host-thread piece

// run(b, e) over rows [0, rows) of row_elems elements each: whole, or in ~kChunkElems pieces over the
// host threads when there are at least two pieces' worth.
template <class F>
void ForRowChunks(int64_t rows, int64_t row_elems, F&& run) {
  const int64_t per = std::max<int64_t>(1, kChunkElems / row_elems);
  if (rows * row_elems < 2 * kChunkElems || rows <= per) return run(0, rows);
  GlobalThreadPool().ParallelFor((rows + per - 1) / per, [&](int64_t p) { run(p * per, std::min(rows, (p + 1) * per)); });
}

// dst[j * k + q] = src[j * ss] for j < n, q < k: each source element repeated k times (a broadcast
// innermost dim, as nearest upsampling by an integer factor copies its expanded view).
#if defined(__x86_64__)
__attribute__((target("avx512f"))) int64_t RepeatPairsAvx512(float* dp, const float* sp, int64_t n) {
  const __m512i lo = _mm512_setr_epi32(0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7);
  const __m512i hi = _mm512_setr_epi32(8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13, 14, 14, 15, 15);
  int64_t j = 0;
  for (; j + 16 <= n; j += 16) {
    const __m512 v = _mm512_loadu_ps(sp + j);
    _mm512_storeu_ps(dp + 2 * j, _mm512_permutexvar_ps(lo, v));
    _mm512_storeu_ps(dp + 2 * j + 16, _mm512_permutexvar_ps(hi, v));
  }
  return j;
}
#endif
template <typename E>
void RepeatEach(E* dp, const E* sp, int64_t n, int64_t ss, int64_t k) {
  int64_t j = 0;
#if defined(__x86_64__)
  if constexpr (sizeof(E) == 4 && std::is_trivially_copyable_v<E>) {
    if (k == 2 && ss == 1 && HaveAvx512F())
      j = RepeatPairsAvx512(reinterpret_cast<float*>(dp), reinterpret_cast<const float*>(sp), n);
  }
#endif
  for (; j < n; ++j) {
    const E v = sp[j * ss];
    for (int64_t q = 0; q < k; ++q) dp[j * k + q] = v;
  }
}

template <typename D, typename S>
void CopyTyped(const StridedView& d, const StridedView& s) {
  const Coalesced c = Coalesce(d, s);
  if constexpr (std::is_same_v<D, S>) {
    if (TransposeCopy<D>(c, d.data, s.data)) return;
    const int nd = c.ndim;
    if (nd >= 2 && c.ds[nd - 1] == 1 && c.ss[nd - 1] == 0 && c.sizes[nd - 1] <= 16 && c.ds[nd - 2] == c.sizes[nd - 1]) {
      // A broadcast innermost dim of k under a dim the destination continues: rows of the dim above,
      // each source element written k times (a row per innermost run was 2 elements for x2 upsampling).
      Coalesced c2 = c;
      c2.ndim = nd - 1;
      const int64_t k = c.sizes[nd - 1], n = c.sizes[nd - 2], ss = c.ss[nd - 2];
      int64_t rows2 = 1;
      for (int i = 0; i < nd - 2; ++i) rows2 *= c.sizes[i];
      auto run = [&](int64_t b, int64_t e) {
        RowCursor cur(c2, b, 1);
        for (int64_t row = b; row < e; ++row, cur.Next())
          RepeatEach<D>(reinterpret_cast<D*>(d.data) + cur.doff, reinterpret_cast<const D*>(s.data) + cur.soff, n, ss, k);
      };
      ForRowChunks(rows2, n * k, run);
      return;
    }
  }
  int64_t rows = 1;
  for (int i = 0; i < c.ndim - 1; ++i) rows *= c.sizes[i];
  const int64_t total = rows * c.sizes[c.ndim - 1];
  if (total < 2 * kChunkElems || rows == 1) {
    if (rows == 1 && total >= 2 * kChunkElems && c.ds[0] == 1 && c.ss[0] <= 1) {
      // One long contiguous row: split it.
      const int64_t pieces = (total + kChunkElems - 1) / kChunkElems;
      GlobalThreadPool().ParallelFor(pieces, [&](int64_t p) {
        const int64_t b = p * kChunkElems, e = std::min(total, b + kChunkElems);
        Coalesced cc = c;
        cc.sizes[0] = e - b;
        CopyRange<D, S>(cc, d.data + b * sizeof(D), s.data + b * c.ss[0] * sizeof(S), 0, 1);
      });
      return;
    }
    CopyRange<D, S>(c, d.data, s.data, 0, rows);
    return;
  }
  ForRowChunks(rows, c.sizes[c.ndim - 1],
               [&](int64_t b, int64_t e) { CopyRange<D, S>(c, d.data, s.data, b, e); });
}

template <typename D>
void DispatchSrc(const StridedView& d, const StridedView& s) {
  switch (s.dtype) {
    case DType::Bool: return CopyTyped<D, bool>(d, s);
    case DType::UInt8: return CopyTyped<D, uint8_t>(d, s);
    case DType::Int8: return CopyTyped<D, int8_t>(d, s);
    case DType::Int16: return CopyTyped<D, int16_t>(d, s);
    case DType::Int32: return CopyTyped<D, int32_t>(d, s);
    case DType::Int64: return CopyTyped<D, int64_t>(d, s);
    case DType::Float16: return CopyTyped<D, F16>(d, s);
    case DType::BFloat16: return CopyTyped<D, BF16>(d, s);
    case DType::Float32: return CopyTyped<D, float>(d, s);
    case DType::Float64: return CopyTyped<D, double>(d, s);
    default: break;
  }
  throw std::invalid_argument(std::string("copy: unsupported source dtype ") + DTypeName(s.dtype));
}

struct C64 { float re, im; };
struct C128 { double re, im; };

}  // namespace

void StridedCopy(const StridedView& d, const StridedView& s) {
  if (d.ndim != s.ndim) throw std::invalid_argument("copy: source and destination ranks differ");
  for (int i = 0; i < d.ndim; ++i)
    if (d.sizes[i] == 0) return;
  const bool dc = d.dtype == DType::Complex64 || d.dtype == DType::Complex128;
  const bool sc = s.dtype == DType::Complex64 || s.dtype == DType::Complex128;
  if (dc || sc) {
    if (d.dtype != s.dtype)
      throw std::invalid_argument(std::string("copy: casting between ") + DTypeName(s.dtype) + " and " +
                                  DTypeName(d.dtype) + " is not supported on npu");
    if (d.dtype == DType::Complex64) return CopyTyped<C64, C64>(d, s);
    return CopyTyped<C128, C128>(d, s);
  }
  switch (d.dtype) {
    case DType::Bool: return DispatchSrc<bool>(d, s);
    case DType::UInt8: return DispatchSrc<uint8_t>(d, s);
    case DType::Int8: return DispatchSrc<int8_t>(d, s);
    case DType::Int16: return DispatchSrc<int16_t>(d, s);
    case DType::Int32: return DispatchSrc<int32_t>(d, s);
    case DType::Int64: return DispatchSrc<int64_t>(d, s);
    case DType::Float16: return DispatchSrc<F16>(d, s);
    case DType::BFloat16: return DispatchSrc<BF16>(d, s);
    case DType::Float32: return DispatchSrc<float>(d, s);
    case DType::Float64: return DispatchSrc<double>(d, s);
    default: break;
  }
  throw std::invalid_argument(std::string("copy: unsupported destination dtype ") + DTypeName(d.dtype));
}

}  // namespace npu_rt
