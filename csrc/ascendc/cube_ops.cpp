// Cube instructions of the host model: checks and data movement behind kernel_cube.h.
// Layouts: L1 is documented (byte-for-byte what DataCopy writes); L0A Zz and L0C Nz are documented;
// L0B fractals are stored k-major (see cube_gemm.h). Every rule that fails throws KernelError
// through Fail(): "<kernel>: <instruction> <operand/field> <rule with numbers>".
#include <algorithm>
#include <array>
#include <utility>
#include <cstring>
#include <vector>
#include <cstdlib>
#include <string_view>

#include "cube_gemm.h"
#include "kernel_cube.h"

#if defined(__x86_64__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <immintrin.h>
#define CUBE_OPS_X86 1
#else
#define CUBE_OPS_X86 0
#endif

namespace ascendc_host {
namespace {

using AscendC::TPosition;

int ElemSize(CubeElem t) {
  switch (t) {
    case CubeElem::F32: case CubeElem::I32: case CubeElem::U32: return 4;
    case CubeElem::F16: case CubeElem::BF16: case CubeElem::I16: case CubeElem::U16: return 2;
    default: return 1;
  }
}
const char* ElemName(CubeElem t) {
  switch (t) {
    case CubeElem::F32: return "float";
    case CubeElem::F16: return "half";
    case CubeElem::BF16: return "bfloat16_t";
    case CubeElem::I8: return "int8_t";
    case CubeElem::U8: return "uint8_t";
    case CubeElem::I32: return "int32_t";
    case CubeElem::U32: return "uint32_t";
    case CubeElem::I16: return "int16_t";
    case CubeElem::U16: return "uint16_t";
  }
  return "?";
}
inline uint64_t CeilDivU(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

bool Is2002() { return LocalCore().cfg.npu_arch == 2002; }

// ---- per-core Load3D / HF32 registers --------------------------------------------------------
// These are core registers on the device; the model keeps them per host thread and resets them
// whenever a different block starts on this thread, so no block sees another block's settings.
struct CubeRegs {
  const CoreState* core = nullptr;
  const char* kernel = nullptr;
  int32_t block = -1, block_num = -1;
  uint64_t serial = 0;
  bool fmatrix_set = false;
  uint16_t l1H = 0, l1W = 0;
  uint8_t pad[4] = {0, 0, 0, 0};
  uint64_t pad_bits = 0;
  AscendC::LoadDataRepeatParam repeat;
  bool hf32 = false;
};
thread_local CubeRegs t_regs;

// A block is identified by (core state, kernel, block index, block count) and, once the core
// offers one, by a per-block serial number (CoreState::block_serial), which also separates two
// launches of the same kernel that run the same block index on the same thread.
template <typename C>
uint64_t BlockSerial(const C& c) {
  if constexpr (requires { c.block_serial; }) return uint64_t(c.block_serial);
  else return 0;
}

CubeRegs& Regs() {
  CoreState& c = CurrentCore();
  if (t_regs.core != &c || t_regs.kernel != c.kernel_name || t_regs.block != c.block_idx ||
      t_regs.block_num != c.block_num || t_regs.serial != BlockSerial(c)) {
    t_regs = CubeRegs{};
    t_regs.core = &c;
    t_regs.kernel = c.kernel_name;
    t_regs.block = c.block_idx;
    t_regs.block_num = c.block_num;
    t_regs.serial = BlockSerial(c);
  }
  return t_regs;
}

// dst[c*rows + r] = src[r*cols + c] for one fractal of `esz`-byte elements.
template <typename E>
void TransposeT(E* dst, const E* src, int rows, int cols) {
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) dst[c * rows + r] = src[r * cols + c];
}

#if CUBE_OPS_X86
// 16 rows × 8 float columns -> 8 rows × 16: the float L0B fractal.
// Three rounds of two-source permutes (24 in all) instead of 8 gathers of 16 loads each: register
// z[i] holds rows 2i, 2i+1; each round interleaves pairs so that after round 3 register c is column
// c. Round 1 (z[2p], z[2p+1]): rows 4p..4p+3 of columns 4h..4h+3, column-major. Round 2 joins
// row quads p, p+1: rows 8q..8q+7 of two columns. Round 3 joins the row halves: one column.
__attribute__((target("avx512f"))) void Transpose16x8F32Avx512(float* dst, const float* src) {
  __m512 z[8], y[8], x[8];
  for (int i = 0; i < 8; ++i) z[i] = _mm512_loadu_ps(src + 16 * i);
  // y[2p + h]: for c in 0..3: [z0[4h+c], z0[8+4h+c], z1[4h+c], z1[8+4h+c]] (z0 = z[2p], z1 = z[2p+1]).
  const __m512i r1lo = _mm512_setr_epi32(0, 8, 16, 24, 1, 9, 17, 25, 2, 10, 18, 26, 3, 11, 19, 27);
  const __m512i r1hi = _mm512_setr_epi32(4, 12, 20, 28, 5, 13, 21, 29, 6, 14, 22, 30, 7, 15, 23, 31);
  for (int p = 0; p < 4; ++p) {
    y[2 * p] = _mm512_permutex2var_ps(z[2 * p], r1lo, z[2 * p + 1]);
    y[2 * p + 1] = _mm512_permutex2var_ps(z[2 * p], r1hi, z[2 * p + 1]);
  }
  // x[4q + 2h + j]: columns 4h + 2j, 4h + 2j + 1, rows 8q..8q+7: [A col, B col] per column, where
  // A = y[4q + h] (rows 8q..8q+3), B = y[4q + 2 + h] (rows 8q+4..8q+7).
  const __m512i r2lo = _mm512_setr_epi32(0, 1, 2, 3, 16, 17, 18, 19, 4, 5, 6, 7, 20, 21, 22, 23);
  const __m512i r2hi = _mm512_setr_epi32(8, 9, 10, 11, 24, 25, 26, 27, 12, 13, 14, 15, 28, 29, 30, 31);
  for (int q = 0; q < 2; ++q)
    for (int h = 0; h < 2; ++h) {
      x[4 * q + 2 * h] = _mm512_permutex2var_ps(y[4 * q + h], r2lo, y[4 * q + 2 + h]);
      x[4 * q + 2 * h + 1] = _mm512_permutex2var_ps(y[4 * q + h], r2hi, y[4 * q + 2 + h]);
    }
  // Column c = 4h + 2j + e: rows 0..7 from x[2h + j] half e, rows 8..15 from x[4 + 2h + j] half e.
  const __m512i r3lo = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23);
  const __m512i r3hi = _mm512_setr_epi32(8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31);
  for (int hj = 0; hj < 4; ++hj) {
    _mm512_storeu_ps(dst + (2 * hj) * 16, _mm512_permutex2var_ps(x[hj], r3lo, x[4 + hj]));
    _mm512_storeu_ps(dst + (2 * hj + 1) * 16, _mm512_permutex2var_ps(x[hj], r3hi, x[4 + hj]));
  }
}
// The data-movement fast paths follow TORCH_OPS_NN_CUBE_ISA too (avx2 / scalar: no AVX-512 paths;
// scalar: no AVX2 ones either), so an AVX-512 host can test the paths an AVX2-only host takes.
std::string_view CubeIsaOverride() {
  const char* f = std::getenv("TORCH_OPS_NN_CUBE_ISA");
  return f ? std::string_view(f) : std::string_view();
}
bool HasAvx512() {
  static const bool v = [] {
    __builtin_cpu_init();
    const std::string_view o = CubeIsaOverride();
    return __builtin_cpu_supports("avx512f") != 0 && o != "avx2" && o != "scalar";
  }();
  return v;
}
bool HasAvx2() {
  static const bool v = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") != 0 && __builtin_cpu_supports("fma") != 0 && CubeIsaOverride() != "scalar";
  }();
  return v;
}

// 8x8 floats in registers, transposed (rows r[0..7] -> columns).
__attribute__((target("avx2,fma"), always_inline)) inline void Transpose8x8Avx2(__m256 (&r)[8]) {
  __m256 t[8], u[8];
  for (int i = 0; i < 4; ++i) {
    t[2 * i] = _mm256_unpacklo_ps(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm256_unpackhi_ps(r[2 * i], r[2 * i + 1]);
  }
  for (int i = 0; i < 2; ++i) {
    u[4 * i] = _mm256_shuffle_ps(t[4 * i], t[4 * i + 2], _MM_SHUFFLE(1, 0, 1, 0));
    u[4 * i + 1] = _mm256_shuffle_ps(t[4 * i], t[4 * i + 2], _MM_SHUFFLE(3, 2, 3, 2));
    u[4 * i + 2] = _mm256_shuffle_ps(t[4 * i + 1], t[4 * i + 3], _MM_SHUFFLE(1, 0, 1, 0));
    u[4 * i + 3] = _mm256_shuffle_ps(t[4 * i + 1], t[4 * i + 3], _MM_SHUFFLE(3, 2, 3, 2));
  }
  for (int i = 0; i < 4; ++i) {
    r[i] = _mm256_permute2f128_ps(u[i], u[4 + i], 0x20);
    r[4 + i] = _mm256_permute2f128_ps(u[i], u[4 + i], 0x31);
  }
}
// 16 rows x 8 float columns -> 8 rows x 16 (the float L0B fractal): two 8x8 transposes.
__attribute__((target("avx2,fma"))) void Transpose16x8F32Avx2(float* dst, const float* src) {
  __m256 a[8], b[8];
  for (int i = 0; i < 8; ++i) {
    a[i] = _mm256_loadu_ps(src + 8 * i);
    b[i] = _mm256_loadu_ps(src + 64 + 8 * i);
  }
  Transpose8x8Avx2(a);
  Transpose8x8Avx2(b);
  for (int c = 0; c < 8; ++c) {
    _mm256_storeu_ps(dst + 16 * c, a[c]);
    _mm256_storeu_ps(dst + 16 * c + 8, b[c]);
  }
}
#endif

#if CUBE_OPS_X86
// 16x16 16-bit elements (a half / bfloat16 fractal) transposed in registers: 16-, 32- and 64-bit
// interleaves transpose the 8x8 blocks of each 128-bit lane, then the lanes are exchanged.
__attribute__((target("avx2"))) void Transpose16x16U16Avx2(uint16_t* dst, const uint16_t* src) {
  __m256i a[16], b[16], c[16];
  for (int i = 0; i < 16; ++i) a[i] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + 16 * i));
  for (int i = 0; i < 8; ++i) {
    b[2 * i] = _mm256_unpacklo_epi16(a[2 * i], a[2 * i + 1]);
    b[2 * i + 1] = _mm256_unpackhi_epi16(a[2 * i], a[2 * i + 1]);
  }
  for (int h = 0; h < 16; h += 8)      // rows h..h+7: b pairs (0,2) (1,3) (4,6) (5,7)
    for (int q = 0; q < 8; q += 4)
      for (int j = 0; j < 2; ++j) {
        c[h + q + 2 * j] = _mm256_unpacklo_epi32(b[h + q + j], b[h + q + j + 2]);
        c[h + q + 2 * j + 1] = _mm256_unpackhi_epi32(b[h + q + j], b[h + q + j + 2]);
      }
  for (int h = 0; h < 16; h += 8)      // column i of rows h..h+7 (lane 0: i, lane 1: 8 + i)
    for (int j = 0; j < 4; ++j) {
      b[h + 2 * j] = _mm256_unpacklo_epi64(c[h + j], c[h + j + 4]);
      b[h + 2 * j + 1] = _mm256_unpackhi_epi64(c[h + j], c[h + j + 4]);
    }
  for (int i = 0; i < 8; ++i) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + 16 * i), _mm256_permute2x128_si256(b[i], b[8 + i], 0x20));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + 16 * (8 + i)), _mm256_permute2x128_si256(b[i], b[8 + i], 0x31));
  }
}
#endif

void TransposeFractal(uint8_t* dst, const uint8_t* src, int rows, int cols, int esz) {
  switch (esz) {
    case 4:
#if CUBE_OPS_X86
      if (rows == 16 && cols == 8 && HasAvx512()) {
        Transpose16x8F32Avx512(reinterpret_cast<float*>(dst), reinterpret_cast<const float*>(src));
        return;
      }
      if (rows == 16 && cols == 8 && HasAvx2()) {
        Transpose16x8F32Avx2(reinterpret_cast<float*>(dst), reinterpret_cast<const float*>(src));
        return;
      }
#endif
      TransposeT(reinterpret_cast<uint32_t*>(dst), reinterpret_cast<const uint32_t*>(src), rows, cols);
      return;
    case 2:
#if CUBE_OPS_X86
      if (rows == 16 && cols == 16 && HasAvx2()) {
        Transpose16x16U16Avx2(reinterpret_cast<uint16_t*>(dst), reinterpret_cast<const uint16_t*>(src));
        return;
      }
#endif
      TransposeT(reinterpret_cast<uint16_t*>(dst), reinterpret_cast<const uint16_t*>(src), rows, cols);
      return;
    default:
      TransposeT(dst, src, rows, cols);
      return;
  }
}

void FillPattern(uint8_t* dst, size_t bytes, uint64_t bits, int esz) {
  for (size_t i = 0; i < bytes; i += esz) std::memcpy(dst + i, &bits, esz);
}

// Writers of the physical L0A / L0B layouts (cube_gemm.h): documented fractal content in, the
// active layout out (a plain copy for the FMA layouts and for types Mmad does not take).
// The layout follows the core's HF32 register (float: bf16x3 on AMX only in HF32 mode), so a
// kernel must not switch HF32 mode between loading float operands and the Mmad that reads them.
struct L0Writer {
  bool amx = false;
  cube::CubeDtype dt = cube::CubeDtype::kFloat16;
  explicit L0Writer(CubeElem t);
  // Rows [r0, r0 + rows) of a Zz fractal (32 B per row; src at row r0).
  void A(uint8_t* d, const uint8_t* src, int r0 = 0, int rows = 16) const {
    if (amx) cube::CubePutL0A(d, src, r0, rows, dt, cube::L0Layout::kAmx);
    else std::memcpy(d + r0 * 32, src, size_t(rows) * 32);
  }
  // An L0B fractal from its k-major form.
  void B(uint8_t* d, const uint8_t* kmajor) const {
    if (amx) cube::CubePutL0B(d, kmajor, dt, cube::L0Layout::kAmx);
    else std::memcpy(d, kmajor, 512);
  }
};

L0Writer::L0Writer(CubeElem t) {
  if (t == CubeElem::F32 || t == CubeElem::BF16) {
    dt = t == CubeElem::F32 ? cube::CubeDtype::kFloat32 : cube::CubeDtype::kBFloat16;
    amx = cube::CubeL0Layout(dt, Regs().hf32) == cube::L0Layout::kAmx;
  }
}

}  // namespace

namespace {
// dst[0, 32) = src[0, bytes) followed by zeros (bytes < 32); never reads past src + bytes.
void CopyPartialBlockScalar(uint8_t* dst, const uint8_t* src, uint32_t bytes) {
  std::memcpy(dst, src, bytes);
  std::memset(dst + bytes, 0, 32 - bytes);
}
#if CUBE_OPS_X86
__attribute__((target("avx512bw,avx512vl"))) void CopyPartialBlockAvx512(uint8_t* dst, const uint8_t* src,
                                                                         uint32_t bytes) {
  const __mmask32 m = static_cast<__mmask32>((1ull << bytes) - 1);
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst), _mm256_maskz_loadu_epi8(m, src));
}
#endif
inline void CopyPartialBlock(uint8_t* dst, const uint8_t* src, uint32_t bytes) {
#if CUBE_OPS_X86
  static const bool bw = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl");
  }();
  if (bw) return CopyPartialBlockAvx512(dst, src, bytes);
#endif
  CopyPartialBlockScalar(dst, src, bytes);
}
}  // namespace

#if CUBE_OPS_X86
// Nd2Nz fast path for dstNzNStride == 1 (consecutive source rows are consecutive 32 B rows of a
// C0 block): four source rows at a time, so every destination write is two whole 64 B lines
// (128 B contiguous per C0 block). Writing one 32 B row per block instead touches each
// destination line twice, one row apart, with the blocks a power-of-two stride apart: the lines
// share an L1d set, are evicted between the two halves and fetched again from L2.
// `full` whole 32 B blocks per row; s[i] = source row i (4 rows); d = destination of row 0.
// Also used for four matrices whose destinations are 32 B apart (same pattern).
__attribute__((target("avx512f"))) void Nd2NzRows4Avx512(uint8_t* d, const uint8_t* const s[4], uint64_t full,
                                                         uint64_t blk_step, uint64_t pf_dist) {
  uint64_t b = 0;
  for (; b + 2 <= full; b += 2) {
    if (pf_dist) {
      for (int i = 0; i < 4; ++i) __builtin_prefetch(s[i] + b * 32 + pf_dist);
    }
    const __m512i r0 = _mm512_loadu_si512(s[0] + b * 32), r1 = _mm512_loadu_si512(s[1] + b * 32);
    const __m512i r2 = _mm512_loadu_si512(s[2] + b * 32), r3 = _mm512_loadu_si512(s[3] + b * 32);
    uint8_t* d0 = d + b * blk_step;
    uint8_t* d1 = d0 + blk_step;
    // Block b: rows 0..3 = low 32 B of r0..r3; block b+1: the high halves.
    _mm512_storeu_si512(d0, _mm512_shuffle_i64x2(r0, r1, 0x44));
    _mm512_storeu_si512(d0 + 64, _mm512_shuffle_i64x2(r2, r3, 0x44));
    _mm512_storeu_si512(d1, _mm512_shuffle_i64x2(r0, r1, 0xEE));
    _mm512_storeu_si512(d1 + 64, _mm512_shuffle_i64x2(r2, r3, 0xEE));
  }
  for (; b < full; ++b) {
    uint8_t* d0 = d + b * blk_step;
    for (int i = 0; i < 4; ++i)
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(d0 + 32 * i),
                          _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s[i] + b * 32)));
  }
}

// The same with AVX2: per block, the four rows' 32 B pieces as one 128 B run.
__attribute__((target("avx2"))) void Nd2NzRows4Avx2(uint8_t* d, const uint8_t* const s[4], uint64_t full,
                                                    uint64_t blk_step, uint64_t pf_dist) {
  for (uint64_t b = 0; b < full; ++b) {
    if (pf_dist && (b & 1) == 0)
      for (int i = 0; i < 4; ++i) __builtin_prefetch(s[i] + b * 32 + pf_dist);
    uint8_t* d0 = d + b * blk_step;
    const __m256i r0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s[0] + b * 32));
    const __m256i r1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s[1] + b * 32));
    const __m256i r2 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s[2] + b * 32));
    const __m256i r3 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s[3] + b * 32));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(d0), r0);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(d0 + 32), r1);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(d0 + 64), r2);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(d0 + 96), r3);
  }
}

// Four rows (or matrices) whose destinations are 32 B apart: the whole blocks, then the zero-padded
// partial block of `tail_bytes` (0: none).
void Nd2NzRows4(uint8_t* d, const uint8_t* const s[4], uint64_t full, uint64_t blk_step, uint64_t pf_dist,
                uint32_t tail_bytes) {
  if (HasAvx512()) Nd2NzRows4Avx512(d, s, full, blk_step, pf_dist);
  else Nd2NzRows4Avx2(d, s, full, blk_step, pf_dist);
  if (tail_bytes)
    for (int i = 0; i < 4; ++i) CopyPartialBlock(d + full * blk_step + 32 * i, s[i] + full * 32, tail_bytes);
}
#endif

// =================================================================================================
// DataCopy GM -> L1 with ND -> NZ.
constexpr uint64_t kNd2NzPrefetchRows = 4;
// The four-row path prefetches at least this far ahead (4 rows of a short K are only 1 KiB: the lines
// arrived late for activations in DRAM; 8 KiB measured slower than 4).
constexpr uint64_t kNd2NzPrefetchBytes = 4096;
void CubeNd2Nz(const LocalOperand& dst, const GlobalOperand& src, CubeElem t, const AscendC::Nd2NzParams& p) {
  static const char* I = "DataCopy(Nd2NzParams)";
  CoreState& core = CurrentCore();
  const int esz = ElemSize(t);
  if (esz == 1 && t != CubeElem::I8 && t != CubeElem::U8)
    Fail("%s: element type %s is not supported", I, ElemName(t));
  if (p.ndNum > 4095) Fail("%s: ndNum %u exceeds 4095", I, p.ndNum);
  if (p.nValue > 16384) Fail("%s: nValue %u exceeds 16384", I, p.nValue);
  if (p.ndNum == 0 || p.nValue == 0 || p.dValue == 0) {
    CheckLocal(I, "dst", dst, PhysMask(PhysBuf::L1), 32, 0);
    return;
  }
  if (p.dstNzC0Stride < 1 || p.dstNzC0Stride > 16384)
    Fail("%s: dstNzC0Stride %u is outside [1, 16384] (32 B units)", I, p.dstNzC0Stride);
  if (p.dstNzNStride < 1 || p.dstNzNStride > 16384)
    Fail("%s: dstNzNStride %u is outside [1, 16384] (32 B units)", I, p.dstNzNStride);
  const uint64_t c0 = 32 / esz;
  const uint64_t d = p.dValue, n = p.nValue, nd = p.ndNum;
  const uint64_t dblocks = CeilDivU(d, c0);
  const uint64_t c0_step = uint64_t(p.dstNzC0Stride) * c0, n_step = uint64_t(p.dstNzNStride) * c0;
  const uint64_t dst_elems = (nd - 1) * p.dstNzMatrixStride + (dblocks - 1) * c0_step + (n - 1) * n_step + c0;
  CheckLocal(I, "dst", dst, PhysMask(PhysBuf::L1), 32, dst_elems * esz);
  const uint64_t src_elems = (nd - 1) * p.srcNdMatrixStride + (n - 1) * p.srcDValue + d;
  CheckGlobal(I, "src", src, src_elems * esz);
  const uint64_t tail = d % c0;  // valid elements in the last C0 block (0 = full)
  // Rows outer, column blocks inner: each source row is read once, sequentially (GM rows of a
  // big matrix sit on different pages, so a block-outer walk would miss on every row); the
  // destination pieces of one row are 32 B writes into the core's (cache-resident) L1.
  const uint64_t full = tail ? dblocks - 1 : dblocks;
  const uint64_t row_step = n_step * esz, src_row = uint64_t(p.srcDValue) * esz, blk_step = c0_step * esz;
  uint64_t mat0 = 0;
#if CUBE_OPS_X86
  // Matrices whose destinations are 32 B apart (the conv weights' [c1][tap][co16][C0] grid, one
  // matrix per output channel): four matrices at a time, so each write is whole 64 B lines.
  // (Each group writes 128 B per C0 block and row: only when blocks and rows are that far apart.)
  const bool wide = (dblocks <= 1 || blk_step >= 128) && (n <= 1 || row_step >= 128);
  if (wide && row_step != 32 && uint64_t(p.dstNzMatrixStride) * esz == 32 && (HasAvx512() || HasAvx2())) {
    const uint64_t ms = uint64_t(p.srcNdMatrixStride) * esz;
    for (; mat0 + 4 <= nd; mat0 += 4) {
      const uint8_t* s_mat = src.ptr + mat0 * ms;
      uint8_t* d_mat = dst.ptr + mat0 * 32;
      const uint64_t pf = mat0 + 8 <= nd ? 4 * ms : 0;
      for (uint64_t r = 0; r < n; ++r) {
        const uint8_t* rows[4] = {s_mat + r * src_row, s_mat + ms + r * src_row, s_mat + 2 * ms + r * src_row,
                                  s_mat + 3 * ms + r * src_row};
        Nd2NzRows4(d_mat + r * row_step, rows, full, blk_step, pf, uint32_t(tail * esz));
      }
    }
  }
#endif
  for (uint64_t mat = mat0; mat < nd; ++mat) {
    const uint8_t* s_mat = src.ptr + mat * p.srcNdMatrixStride * esz;
    uint8_t* d_mat = dst.ptr + mat * p.dstNzMatrixStride * esz;
    uint64_t r0 = 0;
#if CUBE_OPS_X86
    if (row_step == 32 && (dblocks <= 1 || blk_step >= 128) && (HasAvx512() || HasAvx2())) {
      // Prefetch the lines of rows `ahead` on while copying these four (rows are on other pages).
      const uint64_t ahead = std::max<uint64_t>(4, (kNd2NzPrefetchBytes + src_row - 1) / src_row);
      for (; r0 + 4 <= n; r0 += 4) {
        const uint8_t* rows[4] = {s_mat + r0 * src_row, s_mat + (r0 + 1) * src_row, s_mat + (r0 + 2) * src_row,
                                  s_mat + (r0 + 3) * src_row};
        const uint64_t pf = r0 + 4 + ahead <= n ? ahead * src_row : 0;
        Nd2NzRows4(d_mat + r0 * row_step, rows, full, blk_step, pf, uint32_t(tail * esz));
      }
    }
#endif
    for (uint64_t r = r0; r < n; ++r) {
      const uint8_t* s = s_mat + r * src_row;
      // Software prefetch a few rows ahead, one line per 64 B copied (rows are on other pages,
      // where the hardware prefetcher does not follow).
      const uint8_t* pf = r + kNd2NzPrefetchRows < n ? s + kNd2NzPrefetchRows * src_row : nullptr;
      uint8_t* d = d_mat + r * row_step;
      uint64_t b = 0;
      for (; b + 2 <= full; b += 2) {
        if (pf) __builtin_prefetch(pf + b * 32);
        std::memcpy(d + b * blk_step, s + b * 32, 32);
        std::memcpy(d + (b + 1) * blk_step, s + b * 32 + 32, 32);
      }
      for (; b < full; ++b) std::memcpy(d + b * blk_step, s + b * 32, 32);
      if (tail) CopyPartialBlock(d + full * blk_step, s + full * 32, uint32_t(tail * esz));  // zero padded to 32 B
    }
  }
  core.counters.gm_to_local_bytes += nd * n * d * esz;
}

// =================================================================================================
// LoadData 2D.
namespace {
// Whole-fractal and 32 B piece copies as vector moves (ymm / zmm when inlined into an AVX2 / AVX-512
// function; rep movs or a libc call for a 512 B memcpy of run-time size cost more than the copy).
typedef uint8_t V32 __attribute__((vector_size(32)));
inline __attribute__((always_inline)) void Copy32(uint8_t* d, const uint8_t* s) {
  V32 t;
  __builtin_memcpy(&t, s, 32);
  __builtin_memcpy(d, &t, 32);
}
// In 32 B pieces: a 64 B vector type has no register outside AVX-512 and went through the stack.
inline __attribute__((always_inline)) void Copy512(uint8_t* d, const uint8_t* s) {
  V32 t[16];
#pragma GCC unroll 16
  for (int i = 0; i < 16; ++i) __builtin_memcpy(&t[i], s + 32 * i, 32);
#pragma GCC unroll 16
  for (int i = 0; i < 16; ++i) __builtin_memcpy(d + 32 * i, &t[i], 32);
}

// `count` 512 B fractals, dstep / sstep bytes apart.
inline __attribute__((always_inline)) void CopyFractalsBody(uint8_t* d, uint64_t dstep, const uint8_t* s,
                                                            int64_t sstep, uint64_t count) {
  for (uint64_t i = 0; i < count; ++i, d += dstep, s += sstep) Copy512(d, s);
}
#if CUBE_OPS_X86
__attribute__((target("avx2"))) void CopyFractalsAvx2(uint8_t* d, uint64_t dstep, const uint8_t* s, int64_t sstep,
                                                      uint64_t count) {
  CopyFractalsBody(d, dstep, s, sstep, count);
}
#endif
void CopyFractals(uint8_t* d, uint64_t dstep, const uint8_t* s, int64_t sstep, uint64_t count) {
#if CUBE_OPS_X86
  if (HasAvx2()) return CopyFractalsAvx2(d, dstep, s, sstep, count);
#endif
  CopyFractalsBody(d, dstep, s, sstep, count);
}

// Float LoadDataWithTranspose to L0B in the FMA layout, `count` squares: square S (two source
// fractals, S columns 0-7 then 8-15, 16 rows of 32 B each) becomes two k-major L0B fractals
// whose 64 B rows are S's rows whole: rows 0-7 at d, rows 8-15 at d + fgap.
inline __attribute__((always_inline)) void SquaresToL0BF32Body(uint8_t* d, uint64_t dstep, uint64_t fgap,
                                                               const uint8_t* s, uint64_t sstep, uint64_t count) {
  for (uint64_t i = 0; i < count; ++i, d += dstep, s += sstep) {
#pragma GCC unroll 16
    for (int r = 0; r < 16; ++r) {
      uint8_t* o = d + (r < 8 ? 0 : fgap) + (r % 8) * 64;
      Copy32(o, s + r * 32);
      Copy32(o + 32, s + 512 + r * 32);
    }
  }
}
#if CUBE_OPS_X86
__attribute__((target("avx2"))) void SquaresToL0BF32Avx2(uint8_t* d, uint64_t dstep, uint64_t fgap, const uint8_t* s,
                                                         uint64_t sstep, uint64_t count) {
  SquaresToL0BF32Body(d, dstep, fgap, s, sstep, count);
}
#endif
void SquaresToL0BF32(uint8_t* d, uint64_t dstep, uint64_t fgap, const uint8_t* s, uint64_t sstep, uint64_t count) {
#if CUBE_OPS_X86
  if (HasAvx2()) return SquaresToL0BF32Avx2(d, dstep, fgap, s, sstep, count);
#endif
  SquaresToL0BF32Body(d, dstep, fgap, s, sstep, count);
}
}  // namespace

void CubeLoad2D(const LocalOperand& dst, const LocalOperand* src_local, const GlobalOperand* src_gm, CubeElem t,
                const AscendC::LoadData2DParams& p) {
  static const char* I = "LoadData(LoadData2DParams)";
  CoreState& core = CurrentCore();
  const int esz = ElemSize(t);
  const PhysBuf dphys = core.PhysOf(dst.pos);
  const bool to_l0a = dphys == PhysBuf::L0A, to_l0b = dphys == PhysBuf::L0B;
  const uint64_t rep = p.repeatTimes;
  const uint64_t dst_bytes = rep ? ((rep - 1) * (uint64_t(p.dstGap) + 1) + 1) * 512 : 0;
  if (src_gm) {
    CheckLocal(I, "dst", dst, PhysMask(PhysBuf::L0A) | PhysMask(PhysBuf::L0B) | PhysMask(PhysBuf::L1),
               dphys == PhysBuf::L1 ? 32 : 512, dst_bytes);
  } else {
    CheckLocal(I, "dst", dst, PhysMask(PhysBuf::L0A) | PhysMask(PhysBuf::L0B), 512, dst_bytes);
  }
  if (p.ifTranspose) {
    if (src_gm) Fail("%s: ifTranspose is only supported from L1 (A1/B1) to L0A/L0B, the source is GM", I);
    if (esz != 2) Fail("%s: ifTranspose needs a 16-bit type (half/bfloat16_t), got %s", I, ElemName(t));
  }
  if (p.addrMode != 0 && !(src_gm && dphys == PhysBuf::L1))
    Fail("%s: addrMode %u (decreasing source addresses) is only supported for GM -> L1", I, p.addrMode);
  uint64_t first = p.startIndex, last = p.startIndex;
  if (rep) {
    if (p.addrMode) {
      const uint64_t back = (rep - 1) * p.srcStride;
      if (back > p.startIndex)
        Fail("%s: with addrMode 1 fractal index startIndex %u - (repeatTimes %llu - 1) * srcStride %u is negative", I,
             p.startIndex, (unsigned long long)rep, p.srcStride);
      first = p.startIndex - back;
    } else {
      last = p.startIndex + (rep - 1) * p.srcStride;
    }
  }
  const uint64_t src_bytes = rep ? (last + 1) * 512 : 0;
  if (src_local) CheckLocal(I, "src", *src_local, PhysMask(PhysBuf::L1), 32, src_bytes);
  else CheckGlobal(I, "src", *src_gm, src_bytes);
  (void)first;
  if (rep == 0) return;
  const uint8_t* sbase = src_local ? src_local->ptr : src_gm->ptr;
  const int c0 = 32 / esz;
  const L0Writer w(t);
  if (to_l0a && !p.ifTranspose && !w.amx) {
    // The FMA layout's L0A fractal is the source fractal: fixed-size 512 B moves (a run-time-size
    // memcpy per fractal cost more than the copy).
    const int64_t sstep = p.addrMode ? -int64_t(p.srcStride) * 512 : int64_t(p.srcStride) * 512;
    CopyFractals(dst.ptr, (uint64_t(p.dstGap) + 1) * 512, sbase + uint64_t(p.startIndex) * 512, sstep, rep);
    if (src_gm) core.counters.gm_to_local_bytes += rep * 512;
    return;
  }
  alignas(64) uint8_t tmp[512];
  auto src_of = [&](uint64_t i) {
    return sbase + (p.addrMode ? p.startIndex - i * p.srcStride : p.startIndex + i * p.srcStride) * 512;
  };
  // Float into the AMX L0A layout with consecutive destinations: whole 2 KB groups (four fractals)
  // at once where they line up, as Load3D's windows (CubePutL0AGroupF32); the rest one by one below.
  const bool groups = to_l0a && !p.ifTranspose && w.amx && esz == 4 && p.dstGap == 0;
  for (uint64_t i = 0; i < rep; ++i) {
    const uint8_t* s = src_of(i);
    uint8_t* d = dst.ptr + i * (uint64_t(p.dstGap) + 1) * 512;
    if (groups && reinterpret_cast<uintptr_t>(d) % 2048 == 0 && i + 4 <= rep) {
      const uint8_t* rows[64];
      for (int f = 0; f < 4; ++f)
        for (int r = 0; r < 16; ++r) rows[16 * f + r] = src_of(i + f) + r * 32;
      cube::CubePutL0AGroupF32(d, rows);
      i += 3;
      continue;
    }
    if (to_l0a) {
      if (p.ifTranspose) {  // Zz = transpose of the 16x16 source
        TransposeFractal(tmp, s, 16, 16, 2);
        w.A(d, tmp);
      } else {
        w.A(d, s);
      }
    } else if (to_l0b) {
      // Documented Zn fractal = the source bytes (or their 16x16 transpose); k-major = its transpose.
      if (p.ifTranspose) {
        w.B(d, s);
      } else if (!w.amx) {
        TransposeFractal(d, s, 16, c0, esz);  // the k-major form is the FMA layout itself
      } else {
        TransposeFractal(tmp, s, 16, c0, esz);
        w.B(d, tmp);
      }
    } else {
      std::memcpy(d, s, 512);
    }
  }
  if (src_gm) core.counters.gm_to_local_bytes += rep * 512;
}

// =================================================================================================
// LoadDataWithTranspose (L1 -> L0A/L0B). A square S (16x16 elements) is read from L1 (b16: one
// fractal; b32: two consecutive 16x8 fractals side by side) and S^T is written as documented
// fractals (b16: one 16x16; b32: two 16x8, T rows 0-15 x cols 0-7 then x cols 8-15).
void CubeLoad2DTranspose(const LocalOperand& dst, const LocalOperand& src, CubeElem t,
                         const AscendC::LoadData2dTransposeParams& p) {
  static const char* I = "LoadDataWithTranspose";
  CoreState& core = CurrentCore();
  const int esz = ElemSize(t);
  if (esz != 2 && esz != 4) Fail("%s: element type %s is not modelled (b16 and b32 only)", I, ElemName(t));
  const PhysBuf dphys = core.PhysOf(dst.pos);
  const bool to_l0b = dphys == PhysBuf::L0B;
  if (p.addrMode != 0) Fail("%s: addrMode %u is not supported from L1 (0 only)", I, p.addrMode);
  const uint64_t rep = p.repeatTimes;
  const uint64_t fr_per = esz == 4 ? 2 : 1;  // fractals per square
  const uint64_t sq_bytes = fr_per * 512;
  const uint64_t dst_bytes =
      rep ? (rep - 1) * (uint64_t(p.dstGap) + 1) * 512 + (fr_per == 2 ? (uint64_t(p.dstFracGap) + 1) * 512 : 0) + 512 : 0;
  CheckLocal(I, "dst", dst, PhysMask(PhysBuf::L0A) | PhysMask(PhysBuf::L0B), 512, dst_bytes);
  const uint64_t src_bytes = rep ? (p.startIndex + (rep - 1) * uint64_t(p.srcStride) + 1) * sq_bytes : 0;
  CheckLocal(I, "src", src, PhysMask(PhysBuf::L1), 32, src_bytes);
  if (rep == 0) return;
  const L0Writer w(t);
  if (esz == 4 && to_l0b && !w.amx)
    return SquaresToL0BF32(dst.ptr, (uint64_t(p.dstGap) + 1) * 512, (uint64_t(p.dstFracGap) + 1) * 512,
                           src.ptr + p.startIndex * sq_bytes, uint64_t(p.srcStride) * sq_bytes, rep);
  alignas(64) uint32_t tmp[2][128];
  for (uint64_t i = 0; i < rep; ++i) {
    const uint8_t* s = src.ptr + (p.startIndex + i * p.srcStride) * sq_bytes;
    uint8_t* d0 = dst.ptr + i * (uint64_t(p.dstGap) + 1) * 512;
    if (esz == 2) {
      // Documented result S^T; its k-major L0B form is S itself.
      if (to_l0b) {
        w.B(d0, s);
      } else {
        TransposeFractal(reinterpret_cast<uint8_t*>(tmp[0]), s, 16, 16, 2);
        w.A(d0, reinterpret_cast<uint8_t*>(tmp[0]));
      }
      continue;
    }
    uint8_t* d1 = d0 + (uint64_t(p.dstFracGap) + 1) * 512;
    const uint32_t* f0 = reinterpret_cast<const uint32_t*>(s);        // S[r][c], c < 8: f0[r*8 + c]
    const uint32_t* f1 = reinterpret_cast<const uint32_t*>(s + 512);  // c >= 8: f1[r*8 + c - 8]
    if (to_l0b) {
      // Documented dst fractal j: 16 rows (S column) x 8 cols (S rows 8j..8j+7); its k-major
      // form = its transpose: 8 rows (S rows 8j..) x 16 (S columns) = S rows laid out whole.
      for (int r = 0; r < 16; ++r) {
        uint32_t* o = tmp[r / 8] + (r % 8) * 16;
        std::memcpy(o, f0 + r * 8, 32);
        std::memcpy(o + 8, f1 + r * 8, 32);
      }
      w.B(d0, reinterpret_cast<uint8_t*>(tmp[0]));
      w.B(d1, reinterpret_cast<uint8_t*>(tmp[1]));
    } else {
      for (int c = 0; c < 16; ++c) {
        const uint32_t* col = c < 8 ? f0 + c : f1 + (c - 8);
        for (int r = 0; r < 16; ++r) tmp[r / 8][c * 8 + (r % 8)] = col[r * 8];
      }
      w.A(d0, reinterpret_cast<uint8_t*>(tmp[0]));
      w.A(d1, reinterpret_cast<uint8_t*>(tmp[1]));
    }
  }
}

// =================================================================================================
// LoadData 3D v2 (img2col) and its registers.
void CubeSetFmatrix(uint16_t l1H, uint16_t l1W, const uint8_t padList[4], AscendC::FmatrixMode m) {
  if (m != AscendC::FmatrixMode::FMATRIX_LEFT) Fail("SetFmatrix: only FMATRIX_LEFT is modelled");
  CubeRegs& r = Regs();
  r.fmatrix_set = true;
  r.l1H = l1H;
  r.l1W = l1W;
  for (int i = 0; i < 4; ++i) r.pad[i] = padList[i];
}
void CubeSetLoad3DPadding(uint64_t bits) { Regs().pad_bits = bits; }
void CubeSetLoadDataRepeat(const AscendC::LoadDataRepeatParam& p) {
  if (p.repeatMode > 1) Fail("SetLoadDataRepeat: repeatMode %u is not 0 (M) or 1 (K)", p.repeatMode);
  Regs().repeat = p;
}

namespace {

// One img2col window (one repeat of Load3D): the fractal of 16 output pixels x C0 K values at (kf, rb)
// is gathered from the C1HWC0 feature map in L1 (a stride-1 run of 16 pixels inside the map is one
// contiguous 512 B source; padding rows take the pad pattern, K beyond the img2col extent zeros) and
// handed to an `Out`, which writes it in the destination layout. Out::Direct(kf, rb) names where the
// gathered rows may go as they are (the L0A Zz fractal of the FMA layout), or null.
struct Im2colArgs {
  const uint8_t* src;
  uint64_t plane_bytes, ks, kfr, mfr, ktot, fhw;
  int c0;
  int32_t filterW, dilH, dilW, l1H, l1W, strideW;
  const int32_t* ih0;
  const int32_t* iw0;
  const uint8_t* run;
  const uint8_t* pad32;
};

// The filter tap of window K fractal kf: its C1 plane and (dh, dw) offset, or beyond the img2col's K
// (zeros).
struct Im2colTap {
  const uint8_t* splane;
  int32_t dh, dw;
  bool beyond;
};
inline __attribute__((always_inline)) Im2colTap TapOf(const Im2colArgs& a, uint64_t kf) {
  const uint64_t col = a.ks + kf * a.c0;
  const bool beyond = col >= a.ktot;
  const uint64_t cc1 = beyond ? 0 : col / (a.fhw * a.c0), khw = beyond ? 0 : (col / a.c0) % a.fhw;
  return {a.src + cc1 * a.plane_bytes, int32_t(khw / a.filterW) * a.dilH, int32_t(khw % a.filterW) * a.dilW, beyond};
}
// Row rb*16 of a "run" (16 consecutive output pixels of one row, all inside the map at this tap: its
// pieces are strideW * 32 B apart in one input row), or null when the block is not one.
inline __attribute__((always_inline)) const uint8_t* RunStart(const Im2colArgs& a, const Im2colTap& t, uint64_t rb) {
  const int32_t ihr = a.ih0[rb * 16] + t.dh, iwr = a.iw0[rb * 16] + t.dw;
  if (!a.run[rb] || ihr < 0 || ihr >= a.l1H || iwr < 0 || iwr + 15 * a.strideW >= a.l1W) return nullptr;
  return t.splane + (uint64_t(ihr) * a.l1W + uint64_t(iwr)) * 32;
}
// The 32 B source of window row i at this tap: its input pixel, or the pad pattern outside the map.
inline __attribute__((always_inline)) const uint8_t* RowSource(const Im2colArgs& a, const Im2colTap& t, uint64_t i) {
  const int32_t ih = a.ih0[i] + t.dh, iw = a.iw0[i] + t.dw;
  const bool pad = ih < 0 || ih >= a.l1H || iw < 0 || iw >= a.l1W;
  return pad ? a.pad32 : t.splane + (uint64_t(ih) * a.l1W + uint64_t(iw)) * 32;
}

template <class Out>
inline __attribute__((always_inline)) void Im2colWindow(const Im2colArgs& a, const Out& out) {
  for (uint64_t kf = 0; kf < a.kfr; ++kf) {
    const Im2colTap tap = TapOf(a, kf);
    for (uint64_t rb = 0; rb < a.mfr; ++rb) {
      alignas(64) uint8_t tmp[512];
      uint8_t* direct = out.Direct(kf, rb);
      uint8_t* g = direct ? direct : tmp;  // where gathered rows go
      const uint8_t* fs = g;
      const uint8_t* p = tap.beyond ? nullptr : RunStart(a, tap, rb);
      if (tap.beyond) {
        std::memset(g, 0, 512);
      } else if (p && a.strideW == 1) {
        fs = p;  // one contiguous 512 B source
      } else if (p) {
        const uint64_t step = uint64_t(a.strideW) * 32;
        for (int r = 0; r < 16; ++r) Copy32(g + r * 32, p + r * step);
      } else {
        for (int r = 0; r < 16; ++r) Copy32(g + r * 32, RowSource(a, tap, rb * 16 + r));
      }
      out.Put(kf, rb, fs);
    }
  }
}

// L0A Zz of the FMA layout: fractal (rb, kf), row r = C0 consecutive K values of pixel rb*16 + r.
struct Im2colToZz {
  uint8_t* dwin;
  uint64_t kfr;
  inline __attribute__((always_inline)) uint8_t* Direct(uint64_t kf, uint64_t rb) const {
    return dwin + (rb * kfr + kf) * 512;
  }
  inline __attribute__((always_inline)) void Put(uint64_t kf, uint64_t rb, const uint8_t* fs) const {
    uint8_t* d = Direct(kf, rb);
    if (fs != d) Copy512(d, fs);
  }
};
// L0B of the FMA layout (the transposed window): fractal (kf, rb), k-major k0*16 + n0.
struct Im2colToKMajor {
  uint8_t* dwin;
  uint64_t mfr;
  int c0, esz;
  uint8_t* Direct(uint64_t, uint64_t) const { return nullptr; }
  inline __attribute__((always_inline)) void Put(uint64_t kf, uint64_t rb, const uint8_t* fs) const {
    TransposeFractal(dwin + (kf * mfr + rb) * 512, fs, 16, c0, esz);
  }
};
// Any destination through the L0 writer (AMX layouts) and enTranspose (the window^T in Zz, rows padded
// to 16, b32 columns split over two 16x8 fractals).
struct Im2colToWriter {
  const L0Writer* w;
  uint8_t* dwin;
  uint64_t kfr, mfr, t_colfr;
  int c0, esz;
  bool trans_a, to_l0b;
  uint8_t* Direct(uint64_t, uint64_t) const { return nullptr; }
  void Put(uint64_t kf, uint64_t rb, const uint8_t* fs) const {
    alignas(64) uint8_t tt[512];
    if (trans_a) {
      // Window^T in Zz: element (row kf*C0 + k0, col rb*16 + r) = S[r][k0].
      if (c0 == 16) {
        TransposeFractal(tt, fs, 16, 16, esz);
        w->A(dwin + (kf * t_colfr + rb) * 512, tt);
      } else {
        TransposeFractal(tt, fs, 16, 8, esz);  // S^T: 8 rows (k0) x 16 columns (r)
        alignas(64) uint8_t h0[256], h1[256];  // its left / right 8 columns
        for (int k0 = 0; k0 < 8; ++k0) {
          std::memcpy(h0 + k0 * 32, tt + k0 * 64, 32);
          std::memcpy(h1 + k0 * 32, tt + k0 * 64 + 32, 32);
        }
        const uint64_t rowblk = kf / 2, row0 = (kf % 2) * 8;
        uint8_t* f0 = dwin + (rowblk * t_colfr + 2 * rb) * 512;
        w->A(f0, h0, int(row0), 8);
        w->A(f0 + 512, h1, int(row0), 8);
      }
    } else if (!to_l0b) {
      w->A(dwin + (rb * kfr + kf) * 512, fs);
    } else {
      uint8_t* d = dwin + (kf * mfr + rb) * 512;
      if (w->amx && esz == 4) return cube::CubePutL0BRowsF32(d, fs);  // w->amx: float under kAmx
      TransposeFractal(tt, fs, 16, c0, esz);
      w->B(d, tt);
    }
  }
};

// Float windows into the AMX L0A layout, a 2 KB group (four K-consecutive fractals of one 16-row block)
// at a time: the group's row r is row r of its four fractals side by side (see CubePutL0AGroupF32).
// The rows of each fractal are found as in Im2colWindow. Needs kfr % 4 == 0 and a group-aligned dwin.
void Im2colAmxAGroups(const Im2colArgs& a, uint8_t* dwin) {
  alignas(32) static const uint8_t kZero32[32] = {};
  const uint8_t* rows[64];
  for (uint64_t kf0 = 0; kf0 < a.kfr; kf0 += 4) {
    const Im2colTap taps[4] = {TapOf(a, kf0), TapOf(a, kf0 + 1), TapOf(a, kf0 + 2), TapOf(a, kf0 + 3)};
    for (uint64_t rb = 0; rb < a.mfr; ++rb) {
      for (int f = 0; f < 4; ++f) {
        const uint8_t** rp = rows + 16 * f;
        const uint8_t* p = taps[f].beyond ? nullptr : RunStart(a, taps[f], rb);
        const uint64_t step = uint64_t(a.strideW) * 32;
        if (taps[f].beyond) {
          for (int r = 0; r < 16; ++r) rp[r] = kZero32;
        } else if (p) {
          for (int r = 0; r < 16; ++r) rp[r] = p + r * step;
        } else {
          for (int r = 0; r < 16; ++r) rp[r] = RowSource(a, taps[f], rb * 16 + r);
        }
      }
      cube::CubePutL0AGroupF32(dwin + (rb * a.kfr + kf0) * 512, rows);
    }
  }
}

// The FMA-layout windows with vector moves of the host's widest ISA.
#if CUBE_OPS_X86
__attribute__((target("avx512f,avx512bw,avx512vl"))) void Im2colFmaAvx512(const Im2colArgs& a, uint8_t* dwin,
                                                                          bool to_b, int esz) {
  if (to_b) Im2colWindow(a, Im2colToKMajor{dwin, a.mfr, a.c0, esz});
  else Im2colWindow(a, Im2colToZz{dwin, a.kfr});
}
#endif
void Im2colFmaGeneric(const Im2colArgs& a, uint8_t* dwin, bool to_b, int esz) {
  if (to_b) Im2colWindow(a, Im2colToKMajor{dwin, a.mfr, a.c0, esz});
  else Im2colWindow(a, Im2colToZz{dwin, a.kfr});
}
}  // namespace

void CubeLoad3D(const LocalOperand& dst, const LocalOperand& src, CubeElem t, const Load3DArgs& a0) {
  static const char* I = "LoadData(LoadData3DParamsV2)";
  CoreState& core = CurrentCore();
  CubeRegs& regs = Regs();
  Load3DArgs a = a0;
  if (a.useFmatrix) {
    if (!regs.fmatrix_set) Fail("%s: isSetFMatrix = false but SetFmatrix was not called in this block", I);
    a.l1H = regs.l1H;
    a.l1W = regs.l1W;
    for (int i = 0; i < 4; ++i) a.pad[i] = regs.pad[i];
  }
  if (a.usePadding) a.padBits = regs.pad_bits;
  const int esz = ElemSize(t);
  if (esz == 1) Fail("%s: 8-bit img2col is not modelled (type %s)", I, ElemName(t));
  const PhysBuf dphys = core.PhysOf(dst.pos);
  const bool to_l0b = dphys == PhysBuf::L0B;
  const int c0 = 32 / esz;
  if (a.fMatrixCtrl) Fail("%s: fMatrixCtrl must be false on 2201", I);
  if (a.enSmallK) Fail("%s: enSmallK is not modelled", I);
  if (a.enTranspose && to_l0b) Fail("%s: enTranspose applies to an L0A destination (L0B is always transposed)", I);
  const bool trans_a = a.enTranspose;
  if (a.strideW < 1 || a.strideW > 63 || a.strideH < 1 || a.strideH > 63)
    Fail("%s: strideW %u / strideH %u must be in [1, 63]", I, a.strideW, a.strideH);
  if (a.dilW < 1 || a.dilH < 1) Fail("%s: dilationFilterW %u / dilationFilterH %u must be >= 1", I, a.dilW, a.dilH);
  if (a.filterW < 1 || a.filterH < 1) Fail("%s: filterW %u / filterH %u must be >= 1", I, a.filterW, a.filterH);
  // channelSize rules (2201) — only whole C0 groups are modelled.
  const uint32_t cs = a.channelSize;
  if (cs != 0) {
    const bool ok = esz == 2 ? (cs == 4 || cs == 8 || cs % 16 == 0 || cs % 16 == 4 || cs % 16 == 8)
                             : (cs == 4 || cs % 8 == 0 || cs % 8 == 4);
    if (!ok)
      Fail("%s: channelSize %u is not allowed for %s (b16: 4, 8, N*16, N*16+4, N*16+8; b32: 4, N*8, N*8+4)", I, cs,
           ElemName(t));
    if (cs % c0 != 0)
      Fail("%s: channelSize %u is not a multiple of C0 = %d; small-channel img2col is not modelled", I, cs, c0);
  }
  const uint64_t rep_n = regs.repeat.repeatTime;
  if (a.l1H == 0 || a.l1W == 0 || cs == 0 || a.kExtension == 0 || a.mExtension == 0 || rep_n == 0) {
    CheckLocal(I, "dst", dst, PhysMask(PhysBuf::L0A) | PhysMask(PhysBuf::L0B), 512, 0);
    return;
  }
  if (a.mStartPt > 32767) Fail("%s: mStartPt %u exceeds 32767", I, a.mStartPt);
  if (a.kStartPt % c0) Fail("%s: kStartPt %u is not a multiple of C0 = %d", I, a.kStartPt, c0);
  const int64_t top = a.pad[2], bottom = a.pad[3], left = a.pad[0], right = a.pad[1];
  const int64_t eff_h = int64_t(a.filterH - 1) * a.dilH + 1, eff_w = int64_t(a.filterW - 1) * a.dilW + 1;
  const int64_t hp = a.l1H + top + bottom, wp = a.l1W + left + right;
  if (hp < eff_h || wp < eff_w)
    Fail("%s: dilated filter %lldx%lld is larger than the padded feature map %lldx%lld", I, (long long)eff_h,
         (long long)eff_w, (long long)hp, (long long)wp);
  const int64_t hout = (hp - eff_h) / a.strideH + 1, wout = (wp - eff_w) / a.strideW + 1;
  const uint64_t c1 = cs / c0;
  const uint64_t ktot = c1 * a.filterH * a.filterW * c0, mtot = uint64_t(hout * wout);
  const uint64_t kext = a.kExtension, mext = a.mExtension;
  const bool rep_k = regs.repeat.repeatMode == 1;
  // Window of each repeat (inferred: repeatStride counts 16 rows (M) or C0 columns (K); the
  // destination advances by one window per repeat).
  auto k_start = [&](uint64_t r) { return a.kStartPt + (rep_k ? r * regs.repeat.repeatStride * c0 : 0); };
  auto m_start = [&](uint64_t r) { return a.mStartPt + (rep_k ? 0 : r * regs.repeat.repeatStride * 16); };
  for (uint64_t r : {uint64_t(0), rep_n - 1}) {
    if (k_start(r) + kext > ktot)
      Fail("%s: K window [%llu, %llu) exceeds the img2col K = C1 %llu * filterH %u * filterW %u * C0 %d = %llu", I,
           (unsigned long long)k_start(r), (unsigned long long)(k_start(r) + kext), (unsigned long long)c1, a.filterH,
           a.filterW, c0, (unsigned long long)ktot);
    if (esz == 2) {
      if (kext % c0 && k_start(r) + kext != ktot)
        Fail("%s: kExtension %llu is not a multiple of C0 = %d and does not reach the end of K (%llu)", I,
             (unsigned long long)kext, c0, (unsigned long long)ktot);
      if (mext % 16 && m_start(r) + mext < mtot)
        Fail("%s: mExtension %llu is not a multiple of 16 and does not reach the end of M (%llu)", I,
             (unsigned long long)mext, (unsigned long long)mtot);
    }
  }
  const uint64_t kfr = CeilDivU(kext, c0), mfr = CeilDivU(mext, 16);
  // enTranspose: the window^T (kext rows x mext cols) in Zz, rows padded to 16, columns to 16
  // (b32: two 16x8 fractals per 16 columns, the K padding of a transposed operand).
  const uint64_t t_rowblk = CeilDivU(kext, 16), t_colfr = mfr * (16 / c0);
  const uint64_t win_bytes = trans_a ? t_rowblk * t_colfr * 512 : kfr * mfr * 512;
  CheckLocal(I, "dst", dst, PhysMask(PhysBuf::L0A) | PhysMask(PhysBuf::L0B), 512, win_bytes * rep_n);
  const uint64_t plane = uint64_t(a.l1H) * a.l1W * c0;  // elements of one C1 plane
  CheckLocal(I, "src", src, PhysMask(PhysBuf::L1), 32, c1 * plane * esz);

  uint8_t pad32[32];
  FillPattern(pad32, 32, a.padBits, esz);
  const uint64_t rows = mfr * 16;
  // Per window row: top-left input coordinate (before the kernel offset).
  thread_local std::vector<int32_t> ih0, iw0;
  ih0.resize(rows);
  iw0.resize(rows);
  const uint64_t fhw = uint64_t(a.filterH) * a.filterW;
  const L0Writer w(t);
  // A 16-row group is a "run" when its rows are 16 consecutive output pixels of one output row:
  // for any tap inside the map its 16 pieces are then strideW * 32 B apart in one input row (one
  // contiguous 512 B source at stride 1), checked once per fractal instead of per row.
  thread_local std::vector<uint8_t> run;
  run.resize(mfr);
  for (uint64_t rr = 0; rr < rep_n; ++rr) {
    const uint64_t ms = m_start(rr), ks = k_start(rr);
    uint8_t* dwin = dst.ptr + rr * win_bytes;
    {
      // Row coordinates by increment (no division per row).
      int64_t oh = int64_t(ms / wout), ow = int64_t(ms % wout);
      for (uint64_t i = 0; i < rows; ++i) {
        ih0[i] = int32_t(oh * a.strideH - top);
        iw0[i] = int32_t(ow * a.strideW - left);
        if (++ow == wout) { ow = 0; ++oh; }
      }
    }
    for (uint64_t rb = 0; rb < mfr; ++rb) {
      const uint64_t i0 = rb * 16;
      run[rb] = ih0[i0] == ih0[i0 + 15] && iw0[i0 + 15] == iw0[i0] + 15 * int32_t(a.strideW);
    }
    Im2colArgs ia;
    ia.src = src.ptr; ia.plane_bytes = plane * esz; ia.ks = ks; ia.kfr = kfr; ia.mfr = mfr;
    ia.ktot = ktot; ia.fhw = fhw; ia.c0 = c0; ia.filterW = int32_t(a.filterW);
    ia.dilH = int32_t(a.dilH); ia.dilW = int32_t(a.dilW); ia.l1H = int32_t(a.l1H); ia.l1W = int32_t(a.l1W);
    ia.strideW = int32_t(a.strideW); ia.ih0 = ih0.data(); ia.iw0 = iw0.data(); ia.run = run.data(); ia.pad32 = pad32;
    if (w.amx && esz == 4 && !trans_a && !to_l0b && kfr % 4 == 0 && reinterpret_cast<uintptr_t>(dwin) % 2048 == 0) {
      Im2colAmxAGroups(ia, dwin);
      continue;
    }
    if (trans_a || w.amx) {
      Im2colWindow(ia, Im2colToWriter{&w, dwin, kfr, mfr, t_colfr, c0, esz, trans_a, to_l0b});
      continue;
    }
#if CUBE_OPS_X86
    if (HasAvx512()) {
      Im2colFmaAvx512(ia, dwin, to_l0b, esz);
      continue;
    }
#endif
    Im2colFmaGeneric(ia, dwin, to_l0b, esz);
  }
}

// =================================================================================================
// Mmad.
void CubeSetHF32(bool enable) { Regs().hf32 = enable; }

void CubeMmad(const LocalOperand& dst, const LocalOperand& fm, const LocalOperand& filter, const LocalOperand* bias,
              CubeElem tc, CubeElem ta, CubeElem tb, CubeElem tbias, const AscendC::MmadParams& p) {
  static const char* I = "Mmad";
  CoreState& core = CurrentCore();
  if (p.m > 4095 || p.n > 4095 || p.k > 4095)
    Fail("%s: m %u, n %u, k %u: each must be in [0, 4095]", I, p.m, p.n, p.k);
  const bool zero = p.m == 0 || p.n == 0 || p.k == 0;
  if (ta != tb) Fail("%s: fm type %s and filter type %s differ", I, ElemName(ta), ElemName(tb));
  cube::CubeDtype gt;
  if (ta == CubeElem::F16) gt = cube::CubeDtype::kFloat16;
  else if (ta == CubeElem::BF16) gt = cube::CubeDtype::kBFloat16;
  else if (ta == CubeElem::F32) gt = cube::CubeDtype::kFloat32;
  else Fail("%s: %s x %s -> %s is not modelled (modelled: half, bfloat16_t, float -> float)", I, ElemName(ta),
            ElemName(tb), ElemName(tc));
  if (tc != CubeElem::F32) Fail("%s: dst type %s: %s operands accumulate into float", I, ElemName(tc), ElemName(ta));
  if (p.enSsparse || p.enWinogradA || p.enWinogradB || p.fmOffset != 0)
    Fail("%s: enSsparse / enWinograd / fmOffset are not modelled", I);
  if (p.cmatrixSource && !bias) Fail("%s: cmatrixSource = true needs the bias overload (a C2 bias tensor)", I);
  if (bias && Is2002()) Fail("%s: a bias-table Mmad is not available on 2002 (cmatrixSource must be false)", I);
  const int c0 = cube::CubeC0(gt);
  const int esz = ElemSize(ta);
  const uint64_t m1 = CeilDivU(p.m, 16), n1 = CeilDivU(p.n, 16), kf = CeilDivU(p.k, c0);
  const uint64_t a_kf = (gt == cube::CubeDtype::kFloat32 && p.kDirectionAlign) ? CeilDivU(p.k, 16) * 2 : kf;
  const bool gemv = p.m == 1;
  const uint64_t a_bytes = zero ? 0 : gemv ? uint64_t(p.k) * esz : ((m1 - 1) * a_kf + kf) * 512;
  CheckLocal(I, "dst", dst, PhysMask(PhysBuf::L0C), 1024, zero ? 0 : n1 * m1 * 1024);
  CheckLocal(I, "fm", fm, PhysMask(PhysBuf::L0A), 512, a_bytes);
  CheckLocal(I, "filter", filter, PhysMask(PhysBuf::L0B), 512, zero ? 0 : kf * n1 * 512);
  thread_local std::vector<float> bias_f;
  const float* bias_ptr = nullptr;
  if (bias) {
    if (tbias != CubeElem::F32 && tbias != CubeElem::F16)
      Fail("%s: bias type %s is not modelled (float or half)", I, ElemName(tbias));
    CheckLocal(I, "bias", *bias, PhysMask(PhysBuf::BT), 64, zero ? 0 : uint64_t(p.n) * ElemSize(tbias));
    if (tbias == CubeElem::F32) {
      bias_ptr = reinterpret_cast<const float*>(bias->ptr);
    } else {
      bias_f.resize(p.n);
      const uint16_t* hb = reinterpret_cast<const uint16_t*>(bias->ptr);
      for (int j = 0; j < p.n; ++j) bias_f[j] = HalfBitsToFloat(hb[j]);
      bias_ptr = bias_f.data();
    }
  }
  if (zero) return;
  cube::CubeGemmShape s;
  s.m = p.m;
  s.n = p.n;
  s.k = p.k;
  s.a_k_fractals = int(a_kf);
  s.gemv = gemv;
  s.hf32 = Regs().hf32;
  s.bias = bias_ptr;
  s.init = bias ? cube::CubeInit::kBias
                : (p.cmatrixInitVal && !p.isBias) ? cube::CubeInit::kZero : cube::CubeInit::kAccumulate;
  cube::CubeGemm(reinterpret_cast<float*>(dst.ptr), fm.ptr, filter.ptr, gt, s);
  core.counters.cube_macs += uint64_t(p.m) * p.n * p.k;
}

// =================================================================================================
// Fixpipe (L0C -> GM) and the epilogue extension.
namespace {

enum class OutKind : uint8_t { F32, F16, BF16, I32 };

inline uint16_t Bf16Rne(float f) { return FloatToBf16Bits(f); }

// Applies the epilogue to `cnt` (<= 16) accumulator values of one row segment and stores them.
struct SegCtx {
  OutKind out;
  bool relu;
  const float* scale;
  const float* shift;
  const uint8_t* residual;  // row pointer (already offset to the segment's first column), or null
  bool has_row = false;     // rowwise epilogue: y = y * row_scale + row_shift
  float row_scale = 1.f, row_shift = 0.f;
  bool stream = false;      // whole aligned 64 B rows bypass the cache (destination's L2 hint)
};

void StoreSegScalar(uint8_t* dst, const float* acc, int cnt, const SegCtx& c) {
  for (int i = 0; i < cnt; ++i) {
    float v = acc[i];
    if (c.out == OutKind::I32) {  // int32 NoQuant: bits pass through (relu on the integer)
      int32_t iv;
      std::memcpy(&iv, acc + i, 4);
      if (c.relu && iv < 0) iv = 0;
      std::memcpy(dst + i * 4, &iv, 4);
      continue;
    }
    if (c.scale) v *= c.scale[i];
    if (c.shift) v += c.shift[i];
    if (c.has_row) v = v * c.row_scale + c.row_shift;
    if (c.residual) {
      switch (c.out) {
        case OutKind::F32: { float r; std::memcpy(&r, c.residual + i * 4, 4); v += r; break; }
        case OutKind::F16: { uint16_t h; std::memcpy(&h, c.residual + i * 2, 2); v += HalfBitsToFloat(h); break; }
        case OutKind::BF16: { uint16_t h; std::memcpy(&h, c.residual + i * 2, 2); v += Bf16BitsToFloat(h); break; }
        default: break;
      }
    }
    if (c.relu && v < 0.f) v = 0.f;  // NaN passes through
    switch (c.out) {
      case OutKind::F32: std::memcpy(dst + i * 4, &v, 4); break;
      case OutKind::F16: { const uint16_t h = FloatToHalfBits(v); std::memcpy(dst + i * 2, &h, 2); break; }
      case OutKind::BF16: { const uint16_t h = Bf16Rne(v); std::memcpy(dst + i * 2, &h, 2); break; }
      default: break;
    }
  }
}

#if CUBE_OPS_X86
__attribute__((target("avx512f"), always_inline)) inline void StoreSegAvx512(uint8_t* dst, const float* acc, int cnt,
                                                                          const SegCtx& c) {
  const __mmask16 mk = cnt >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << cnt) - 1u);
  __m512 v = _mm512_maskz_loadu_ps(mk, acc);
  if (c.scale) v = _mm512_mul_ps(v, _mm512_maskz_loadu_ps(mk, c.scale));
  if (c.shift) v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(mk, c.shift));
  if (c.has_row) v = _mm512_fmadd_ps(v, _mm512_set1_ps(c.row_scale), _mm512_set1_ps(c.row_shift));
  if (c.residual) {
    __m512 r;
    if (c.out == OutKind::F32) {
      r = _mm512_maskz_loadu_ps(mk, c.residual);
    } else {
      alignas(32) uint16_t tmp[16] = {};
      std::memcpy(tmp, c.residual, size_t(cnt) * 2);
      const __m256i h = _mm256_load_si256(reinterpret_cast<const __m256i*>(tmp));
      r = c.out == OutKind::F16 ? _mm512_cvtph_ps(h)
                                : _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
    }
    v = _mm512_add_ps(v, r);
  }
  // max(v, 0) that keeps NaN: select 0 only where v < 0.
  if (c.relu) v = _mm512_mask_mov_ps(v, _mm512_cmp_ps_mask(v, _mm512_setzero_ps(), _CMP_LT_OQ), _mm512_setzero_ps());
  switch (c.out) {
    case OutKind::F32:
      if (c.stream && cnt == 16 && (reinterpret_cast<uintptr_t>(dst) & 63) == 0)
        _mm512_stream_ps(reinterpret_cast<float*>(dst), v);
      else _mm512_mask_storeu_ps(dst, mk, v);
      break;
    case OutKind::F16: {
      const __m256i h = _mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
      if (cnt == 16) _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst), h);
      else { alignas(32) uint16_t tmp[16]; _mm256_store_si256(reinterpret_cast<__m256i*>(tmp), h); std::memcpy(dst, tmp, size_t(cnt) * 2); }
      break;
    }
    case OutKind::BF16: {
      const __m512i x = _mm512_castps_si512(v);
      const __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(x, 16), _mm512_set1_epi32(1));
      __m512i rnd = _mm512_srli_epi32(_mm512_add_epi32(_mm512_add_epi32(x, _mm512_set1_epi32(0x7FFF)), lsb), 16);
      const __mmask16 nan = _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
      rnd = _mm512_mask_mov_epi32(rnd, nan, _mm512_or_si512(_mm512_srli_epi32(x, 16), _mm512_set1_epi32(0x40)));
      const __m256i h = _mm512_cvtepi32_epi16(rnd);
      if (cnt == 16) _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst), h);
      else { alignas(32) uint16_t tmp[16]; _mm256_store_si256(reinterpret_cast<__m256i*>(tmp), h); std::memcpy(dst, tmp, size_t(cnt) * 2); }
      break;
    }
    default:
      StoreSegScalar(dst, acc, cnt, c);
  }
}
#endif

#if CUBE_OPS_X86
// AVX2 + F16C: one full 16-column segment as two 8-lane halves (partial segments go scalar).
__attribute__((target("avx2,fma,f16c"), always_inline)) inline __m256 HalfRowAvx2(const uint8_t* p, OutKind k) {
  const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  return k == OutKind::F16 ? _mm256_cvtph_ps(h)
                           : _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
}
// float -> bfloat16 bits (round to nearest even; NaN stays a quiet NaN), 8 lanes in the low 16 bits.
__attribute__((target("avx2,fma"), always_inline)) inline __m256i Bf16RneAvx2(__m256 v) {
  const __m256i x = _mm256_castps_si256(v);
  const __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(x, 16), _mm256_set1_epi32(1));
  const __m256i rnd = _mm256_srli_epi32(_mm256_add_epi32(_mm256_add_epi32(x, _mm256_set1_epi32(0x7FFF)), lsb), 16);
  const __m256i qnan = _mm256_or_si256(_mm256_srli_epi32(x, 16), _mm256_set1_epi32(0x40));
  return _mm256_blendv_epi8(rnd, qnan, _mm256_castps_si256(_mm256_cmp_ps(v, v, _CMP_UNORD_Q)));
}
__attribute__((target("avx2,fma,f16c"), always_inline)) inline void StoreSegAvx2(uint8_t* dst, const float* acc, int cnt,
                                                                              const SegCtx& c) {
  if (cnt != 16 || c.out == OutKind::I32) return StoreSegScalar(dst, acc, cnt, c);
  __m256 v0 = _mm256_loadu_ps(acc), v1 = _mm256_loadu_ps(acc + 8);
  if (c.scale) { v0 = _mm256_mul_ps(v0, _mm256_loadu_ps(c.scale)); v1 = _mm256_mul_ps(v1, _mm256_loadu_ps(c.scale + 8)); }
  if (c.shift) { v0 = _mm256_add_ps(v0, _mm256_loadu_ps(c.shift)); v1 = _mm256_add_ps(v1, _mm256_loadu_ps(c.shift + 8)); }
  if (c.has_row) {
    const __m256 rs = _mm256_set1_ps(c.row_scale), rh = _mm256_set1_ps(c.row_shift);
    v0 = _mm256_fmadd_ps(v0, rs, rh);
    v1 = _mm256_fmadd_ps(v1, rs, rh);
  }
  if (c.residual) {
    if (c.out == OutKind::F32) {
      v0 = _mm256_add_ps(v0, _mm256_loadu_ps(reinterpret_cast<const float*>(c.residual)));
      v1 = _mm256_add_ps(v1, _mm256_loadu_ps(reinterpret_cast<const float*>(c.residual) + 8));
    } else {
      v0 = _mm256_add_ps(v0, HalfRowAvx2(c.residual, c.out));
      v1 = _mm256_add_ps(v1, HalfRowAvx2(c.residual + 16, c.out));
    }
  }
  // max(v, 0) that keeps NaN: zero only where v < 0.
  if (c.relu) {
    const __m256 zero = _mm256_setzero_ps();
    v0 = _mm256_blendv_ps(v0, zero, _mm256_cmp_ps(v0, zero, _CMP_LT_OQ));
    v1 = _mm256_blendv_ps(v1, zero, _mm256_cmp_ps(v1, zero, _CMP_LT_OQ));
  }
  switch (c.out) {
    case OutKind::F32: {
      float* o = reinterpret_cast<float*>(dst);
      if (c.stream && (reinterpret_cast<uintptr_t>(o) & 63) == 0) { _mm256_stream_ps(o, v0); _mm256_stream_ps(o + 8, v1); }
      else { _mm256_storeu_ps(o, v0); _mm256_storeu_ps(o + 8, v1); }
      break;
    }
    case OutKind::F16: {
      const __m256i h = _mm256_set_m128i(_mm256_cvtps_ph(v1, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC),
                                         _mm256_cvtps_ph(v0, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst), h);
      break;
    }
    default: {  // BF16: pack the two 8-lane halves (packus works per 128-bit lane: restore the order)
      const __m256i h = _mm256_permute4x64_epi64(_mm256_packus_epi32(Bf16RneAvx2(v0), Bf16RneAvx2(v1)), 0xD8);
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst), h);
      break;
    }
  }
}
#endif

// One 16-column block of `rows` accumulator rows (16 floats apart) -> rows `dst_pitch` bytes apart.
struct BlockJob {
  uint8_t* dst;
  uint64_t dst_pitch;
  const float* src;
  uint64_t rows;
  int cnt;
  const uint8_t* residual;  // first row, or null
  uint64_t res_pitch;
  const float* rscale = nullptr;  // rowwise epilogue: first row's scale / shift (either may be null)
  const float* rshift = nullptr;
};

// The epilogue context of row r of a block job: its residual row, its row-wise scale / shift.
inline void RowCtx(const BlockJob& b, uint64_t r, SegCtx& c) {
  c.residual = b.residual ? b.residual + r * b.res_pitch : nullptr;
  if (b.rscale || b.rshift) {
    c.has_row = true;
    c.row_scale = b.rscale ? b.rscale[r] : 1.f;
    c.row_shift = b.rshift ? b.rshift[r] : 0.f;
  }
}

void StoreBlockScalar(const BlockJob& b, SegCtx c) {
  for (uint64_t r = 0; r < b.rows; ++r) {
    RowCtx(b, r, c);
    StoreSegScalar(b.dst + r * b.dst_pitch, b.src + r * 16, b.cnt, c);
  }
}
#if CUBE_OPS_X86
__attribute__((target("avx512f"))) void StoreBlockAvx512(const BlockJob& b, SegCtx c) {
  for (uint64_t r = 0; r < b.rows; ++r) {
    RowCtx(b, r, c);
    StoreSegAvx512(b.dst + r * b.dst_pitch, b.src + r * 16, b.cnt, c);
  }
}
__attribute__((target("avx2,fma,f16c"))) void StoreBlockAvx2(const BlockJob& b, SegCtx c) {
  for (uint64_t r = 0; r < b.rows; ++r) {
    RowCtx(b, r, c);
    StoreSegAvx2(b.dst + r * b.dst_pitch, b.src + r * 16, b.cnt, c);
  }
}
#endif

#if CUBE_OPS_X86
// Float output of one band of <= 16 accumulator rows across all its column blocks, the epilogue
// fixed by template flags: per row straight-line vector code, column scale/shift loaded once per
// block, nothing passed by value (a by-value context cost a store-forwarding stall per block).
enum : int { kEpColScale = 1, kEpColShift = 2, kEpRow = 4, kEpRes = 8, kEpRelu = 16 };
struct F32Band {
  uint8_t* dst;          // row 0 of column block 0
  uint64_t dst_pitch;    // bytes between rows
  uint64_t dst_blk;      // bytes between column blocks
  const float* src;      // L0C: row 0 of column block 0 (rows 16 floats apart)
  uint64_t src_blk;      // floats between column blocks
  uint64_t rows, n1;
  uint32_t last_mask;    // valid lanes of the last column block
  const float* cscale;   // column-wise scale / shift at column 0, or null
  const float* cshift;
  const float* rscale;   // row-wise scale / shift at row 0, or null
  const float* rshift;
  const uint8_t* residual;  // row 0, column 0 (column blocks 64 B apart), or null
  uint64_t res_pitch;
  uint64_t res_ahead;    // rows of this band whose residual row kResAhead rows on is prefetched
  bool stream;
};
// Four rows at a time, column blocks inner: an ND output row (and its residual row) is written
// (read) in runs of n1 * 64 B a few rows at a time, and each L0C column block is read 4 rows
// (256 B) at a time. (Column blocks outer walked 64 B per row at the row pitch: for a residual in
// DRAM every line was a separate demand miss, half of a 1x1 conv's time; rows outer read L0C 64 B
// per block at a power-of-two pitch, which thrashes one L1 set.)
// Residual rows are prefetched one band (16 rows) ahead: the residual is usually a large activation
// written with streaming stores, so it comes from DRAM, and a band's compute is too short to wait
// for its lines on demand.
constexpr uint64_t kBandRows = 4;
constexpr uint64_t kResAhead = 16;
template <int F>
__attribute__((target("avx512f"))) void StoreF32Band(const F32Band& b) {
  const __mmask16 last = __mmask16(b.last_mask);
  for (uint64_t r0 = 0; r0 < b.rows; r0 += kBandRows) {
    const uint64_t r1 = std::min(b.rows, r0 + kBandRows);
    for (uint64_t j = 0; j < b.n1; ++j) {
      const __mmask16 mk = j + 1 == b.n1 ? last : __mmask16(0xFFFF);
      __m512 cs = _mm512_setzero_ps(), csh = _mm512_setzero_ps();
      if constexpr ((F & kEpColScale) != 0) cs = _mm512_maskz_loadu_ps(mk, b.cscale + j * 16);
      if constexpr ((F & kEpColShift) != 0) csh = _mm512_maskz_loadu_ps(mk, b.cshift + j * 16);
      const float* s = b.src + j * b.src_blk;
      uint8_t* d = b.dst + j * b.dst_blk;
      const bool stream = b.stream && mk == 0xFFFF;
      for (uint64_t r = r0; r < r1; ++r) {
        __m512 v = _mm512_maskz_loadu_ps(mk, s + r * 16);
        if constexpr ((F & kEpColScale) != 0) v = _mm512_mul_ps(v, cs);
        if constexpr ((F & kEpColShift) != 0) v = _mm512_add_ps(v, csh);
        if constexpr ((F & kEpRow) != 0)
          v = _mm512_fmadd_ps(v, _mm512_set1_ps(b.rscale ? b.rscale[r] : 1.f), _mm512_set1_ps(b.rshift ? b.rshift[r] : 0.f));
        if constexpr ((F & kEpRes) != 0) {
          const uint8_t* res = b.residual + r * b.res_pitch + j * 64;
          if (r < b.res_ahead) _mm_prefetch(reinterpret_cast<const char*>(res + kResAhead * b.res_pitch), _MM_HINT_T0);
          v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(mk, res));
        }
        // max(v, 0) that keeps NaN: select 0 only where v < 0.
        if constexpr ((F & kEpRelu) != 0)
          v = _mm512_mask_mov_ps(v, _mm512_cmp_ps_mask(v, _mm512_setzero_ps(), _CMP_LT_OQ), _mm512_setzero_ps());
        float* o = reinterpret_cast<float*>(d + r * b.dst_pitch);
        if (stream && (reinterpret_cast<uintptr_t>(o) & 63) == 0) _mm512_stream_ps(o, v);
        else _mm512_mask_storeu_ps(o, mk, v);
      }
    }
  }
}
// The same with AVX2: a 16-column block is two 8-lane halves.
template <int F>
__attribute__((target("avx2,fma"))) void StoreF32BandAvx2(const F32Band& b) {
  const __m256i lanes0 = _mm256_setr_epi32(1, 2, 4, 8, 16, 32, 64, 128);
  const __m256i lanes1 = _mm256_setr_epi32(256, 512, 1024, 2048, 4096, 8192, 16384, 32768);
  const __m256 zero = _mm256_setzero_ps();
  for (uint64_t r0 = 0; r0 < b.rows; r0 += kBandRows) {
    const uint64_t r1 = std::min(b.rows, r0 + kBandRows);
    for (uint64_t j = 0; j < b.n1; ++j) {
      const uint32_t bits = j + 1 == b.n1 ? b.last_mask : 0xFFFFu;
      const __m256i mk = _mm256_set1_epi32(int(bits));
      const __m256i m0 = _mm256_cmpeq_epi32(_mm256_and_si256(mk, lanes0), lanes0);
      const __m256i m1 = _mm256_cmpeq_epi32(_mm256_and_si256(mk, lanes1), lanes1);
      __m256 cs0 = zero, cs1 = zero, csh0 = zero, csh1 = zero;
      if constexpr ((F & kEpColScale) != 0) {
        cs0 = _mm256_maskload_ps(b.cscale + j * 16, m0);
        cs1 = _mm256_maskload_ps(b.cscale + j * 16 + 8, m1);
      }
      if constexpr ((F & kEpColShift) != 0) {
        csh0 = _mm256_maskload_ps(b.cshift + j * 16, m0);
        csh1 = _mm256_maskload_ps(b.cshift + j * 16 + 8, m1);
      }
      const float* s = b.src + j * b.src_blk;
      uint8_t* d = b.dst + j * b.dst_blk;
      const bool full = bits == 0xFFFFu;
      const bool stream = b.stream && full;
      for (uint64_t r = r0; r < r1; ++r) {
        __m256 v0 = _mm256_loadu_ps(s + r * 16), v1 = _mm256_loadu_ps(s + r * 16 + 8);
        if constexpr ((F & kEpColScale) != 0) { v0 = _mm256_mul_ps(v0, cs0); v1 = _mm256_mul_ps(v1, cs1); }
        if constexpr ((F & kEpColShift) != 0) { v0 = _mm256_add_ps(v0, csh0); v1 = _mm256_add_ps(v1, csh1); }
        if constexpr ((F & kEpRow) != 0) {
          const __m256 rs = _mm256_set1_ps(b.rscale ? b.rscale[r] : 1.f), rh = _mm256_set1_ps(b.rshift ? b.rshift[r] : 0.f);
          v0 = _mm256_fmadd_ps(v0, rs, rh);
          v1 = _mm256_fmadd_ps(v1, rs, rh);
        }
        if constexpr ((F & kEpRes) != 0) {
          const float* res = reinterpret_cast<const float*>(b.residual + r * b.res_pitch + j * 64);
          if (r < b.res_ahead)
            _mm_prefetch(reinterpret_cast<const char*>(res) + kResAhead * b.res_pitch, _MM_HINT_T0);
          v0 = _mm256_add_ps(v0, _mm256_maskload_ps(res, m0));
          v1 = _mm256_add_ps(v1, _mm256_maskload_ps(res + 8, m1));
        }
        // max(v, 0) that keeps NaN: zero only where v < 0.
        if constexpr ((F & kEpRelu) != 0) {
          v0 = _mm256_blendv_ps(v0, zero, _mm256_cmp_ps(v0, zero, _CMP_LT_OQ));
          v1 = _mm256_blendv_ps(v1, zero, _mm256_cmp_ps(v1, zero, _CMP_LT_OQ));
        }
        float* o = reinterpret_cast<float*>(d + r * b.dst_pitch);
        if (stream && (reinterpret_cast<uintptr_t>(o) & 63) == 0) {
          _mm256_stream_ps(o, v0);
          _mm256_stream_ps(o + 8, v1);
        } else if (full) {
          _mm256_storeu_ps(o, v0);
          _mm256_storeu_ps(o + 8, v1);
        } else {
          _mm256_maskstore_ps(o, m0, v0);
          _mm256_maskstore_ps(o + 8, m1, v1);
        }
      }
    }
  }
}
using F32BandFn = void (*)(const F32Band&);
template <int... Fs>
constexpr std::array<F32BandFn, sizeof...(Fs)> MakeF32BandTable(std::integer_sequence<int, Fs...>) {
  return {&StoreF32Band<Fs>...};
}
template <int... Fs>
constexpr std::array<F32BandFn, sizeof...(Fs)> MakeF32BandTableAvx2(std::integer_sequence<int, Fs...>) {
  return {&StoreF32BandAvx2<Fs>...};
}
const std::array<F32BandFn, 32> kF32Band = MakeF32BandTable(std::make_integer_sequence<int, 32>{});
const std::array<F32BandFn, 32> kF32BandAvx2 = MakeF32BandTableAvx2(std::make_integer_sequence<int, 32>{});
#endif

using StoreBlockFn = void (*)(const BlockJob&, SegCtx);
StoreBlockFn PickStoreBlock() {
#if CUBE_OPS_X86
  if (HasAvx512()) return &StoreBlockAvx512;
  if (HasAvx2() && __builtin_cpu_supports("f16c")) return &StoreBlockAvx2;
#endif
  return &StoreBlockScalar;
}

}  // namespace

void CubeFixpipe(const GlobalOperand& dst, const LocalOperand& src, CubeElem tdst, CubeElem tsrc, bool nz_out,
                 const AscendC::FixpipeParamsV220& p, const FixpipeEpilogueArgs* ep, const char* I) {
  CoreState& core = CurrentCore();
  if (Is2002()) Fail("%s: Fixpipe is not available on 2002; use DataCopy CO1 -> CO2 with DataCopyEnhancedParams", I);
  OutKind out;
  if (tsrc == CubeElem::F32) {
    if (p.quantPre == AscendC::NoQuant && tdst == CubeElem::F32) out = OutKind::F32;
    else if (p.quantPre == AscendC::F322F16 && tdst == CubeElem::F16) out = OutKind::F16;
    else if (p.quantPre == AscendC::F322BF16 && tdst == CubeElem::BF16) out = OutKind::BF16;
    else Fail("%s: quantPre %d with float src and %s dst: modelled pairs are NoQuant->float, F322F16->half, "
              "F322BF16->bfloat16_t", I, int(p.quantPre), ElemName(tdst));
  } else if (tsrc == CubeElem::I32) {
    if (p.quantPre == AscendC::NoQuant && tdst == CubeElem::I32) out = OutKind::I32;
    else Fail("%s: quantPre %d with int32 src and %s dst is not modelled (NoQuant -> int32 only)", I,
              int(p.quantPre), ElemName(tdst));
    if (ep) Fail("%s: the epilogue needs a float accumulator", I);
  } else {
    Fail("%s: src type %s: L0C holds float or int32", I, ElemName(tsrc));
  }
  if (p.isChannelSplit) Fail("%s: isChannelSplit is not modelled", I);
  if (p.nSize > 4095) Fail("%s: nSize %u exceeds 4095", I, p.nSize);
  if (nz_out && p.nSize % 16) Fail("%s: nSize %u is not a multiple of 16 (NZ output)", I, p.nSize);
  if (!nz_out && p.mSize > 8192) Fail("%s: mSize %u exceeds 8192 with NZ -> ND", I, p.mSize);
  const uint64_t nd = nz_out ? 1 : p.ndNum;
  if (!nz_out && nd > 1) {
    if (p.srcNdStride < 1 || p.srcNdStride > 512)
      Fail("%s: srcNdStride %u is outside [1, 512] (units of one 16x16 L0C fractal) with ndNum %u", I, p.srcNdStride,
           p.ndNum);
    if (p.dstNdStride == 0) Fail("%s: dstNdStride must not be 0 with ndNum %u", I, p.ndNum);
  }
  const bool zero = p.nSize == 0 || p.mSize == 0 || nd == 0;
  const uint64_t m = p.mSize, n = p.nSize, n1 = CeilDivU(n, 16);
  const uint64_t src_floats =
      zero ? 0 : (nd - 1) * uint64_t(p.srcNdStride) * 256 + (n1 - 1) * uint64_t(p.srcStride) * 16 + CeilDivU(m, 16) * 256;
  CheckLocal(I, "src", src, PhysMask(PhysBuf::L0C), 64, src_floats * 4);
  if (zero) return;
  const int dsz = ElemSize(tdst);
  const uint64_t blk_pitch = nz_out ? uint64_t(p.dstStride) * 32 / dsz : 0;  // NZ: elements between column blocks
  const uint64_t dst_elems = nz_out ? (n1 - 1) * blk_pitch + m * 16
                                    : (nd - 1) * p.dstNdStride + (m - 1) * uint64_t(p.dstStride) + n;
  CheckGlobal(I, "dst", dst, dst_elems * dsz);
  if (ep) {
    const uint64_t need_ss = ep->rowwise ? m : n;
    if (ep->scale && ep->scale_elems && ep->scale_elems < need_ss)
      Fail("%s: scale has %llu elements, the tile needs %llu", I, (unsigned long long)ep->scale_elems,
           (unsigned long long)need_ss);
    if (ep->shift && ep->shift_elems && ep->shift_elems < need_ss)
      Fail("%s: shift has %llu elements, the tile needs %llu", I, (unsigned long long)ep->shift_elems,
           (unsigned long long)need_ss);
    if (ep->residual) {
      const uint64_t need = ((nd - 1) * p.dstNdStride + (m - 1) * ep->residual_stride + n) * dsz;
      CheckGlobal(I, "residual", GlobalOperand{const_cast<uint8_t*>(static_cast<const uint8_t*>(ep->residual)),
                                               ep->residual_bytes}, need);
      core.counters.gm_to_local_bytes += nd * m * n * dsz;
    }
  }
  const float* l0c = reinterpret_cast<const float*>(src.ptr);
#if CUBE_OPS_X86
  if (out == OutKind::F32 && (HasAvx512() || HasAvx2())) {
    const bool rowwise = ep && ep->rowwise;
    const int flags = (ep && ep->scale && !rowwise ? kEpColScale : 0) | (ep && ep->shift && !rowwise ? kEpColShift : 0) |
                      (rowwise && (ep->scale || ep->shift) ? kEpRow : 0) | (ep && ep->residual ? kEpRes : 0) |
                      (p.reluEn || (ep && ep->relu) ? kEpRelu : 0);
    const F32BandFn fn = HasAvx512() ? kF32Band[flags] : kF32BandAvx2[flags];
    F32Band band{};
    band.dst_pitch = nz_out ? 64 : uint64_t(p.dstStride) * 4;
    band.dst_blk = nz_out ? blk_pitch * 4 : 64;
    band.src_blk = uint64_t(p.srcStride) * 16;
    band.n1 = n1;
    band.last_mask = (n % 16) ? (1u << (n % 16)) - 1u : 0xFFFFu;
    band.cscale = flags & kEpColScale ? ep->scale : nullptr;
    band.cshift = flags & kEpColShift ? ep->shift : nullptr;
    band.res_pitch = ep && ep->residual ? ep->residual_stride * 4 : 0;
    band.stream = dst.no_l2;  // streaming stores: the large output bypasses the cache (no read for ownership)
    for (uint64_t b = 0; b < nd; ++b) {
      for (uint64_t r0 = 0; r0 < m; r0 += 16) {
        band.rows = std::min<uint64_t>(16, m - r0);
        band.src = l0c + b * uint64_t(p.srcNdStride) * 256 + r0 * 16;
        band.dst = nz_out ? dst.ptr + r0 * 64 : dst.ptr + (b * p.dstNdStride + r0 * uint64_t(p.dstStride)) * 4;
        band.rscale = rowwise && ep->scale ? ep->scale + r0 : nullptr;
        band.rshift = rowwise && ep->shift ? ep->shift + r0 : nullptr;
        band.res_ahead = m - r0 > kResAhead ? std::min<uint64_t>(16, m - r0 - kResAhead) : 0;
        band.residual = ep && ep->residual
                            ? static_cast<const uint8_t*>(ep->residual) + b * p.dstNdStride * 4 + r0 * band.res_pitch
                            : nullptr;
        fn(band);
      }
    }
    core.counters.local_to_gm_bytes += nd * m * n * dsz;
    if (band.stream) _mm_sfence();  // streaming stores are weakly ordered: complete them here
    return;
  }
#endif
  static const StoreBlockFn store = PickStoreBlock();
  SegCtx ctx{out, p.reluEn || (ep && ep->relu), nullptr, nullptr, nullptr};
  ctx.stream = dst.no_l2;
  // Bands of 16 rows, all column blocks of a band before the next: the band's output rows stay
  // in cache while its 16-column pieces are written.
  for (uint64_t b = 0; b < nd; ++b) {
    const float* sb = l0c + b * uint64_t(p.srcNdStride) * 256;
    for (uint64_t r0 = 0; r0 < m; r0 += 16) {
      for (uint64_t j = 0; j < n1; ++j) {
        BlockJob job;
        job.cnt = int(std::min<uint64_t>(16, n - j * 16));
        job.src = sb + j * uint64_t(p.srcStride) * 16 + r0 * 16;
        job.rows = std::min<uint64_t>(16, m - r0);
        if (nz_out) {
          job.dst = dst.ptr + (j * blk_pitch + r0 * 16) * dsz;
          job.dst_pitch = 16 * dsz;
        } else {
          job.dst = dst.ptr + (b * p.dstNdStride + r0 * uint64_t(p.dstStride) + j * 16) * dsz;
          job.dst_pitch = uint64_t(p.dstStride) * dsz;
        }
        job.residual = nullptr;
        job.res_pitch = 0;
        if (ep && ep->rowwise) {
          job.rscale = ep->scale ? ep->scale + r0 : nullptr;
          job.rshift = ep->shift ? ep->shift + r0 : nullptr;
        }
        if (ep) {
          ctx.scale = ep->scale && !ep->rowwise ? ep->scale + j * 16 : nullptr;
          ctx.shift = ep->shift && !ep->rowwise ? ep->shift + j * 16 : nullptr;
          if (ep->residual) {
            job.res_pitch = ep->residual_stride * dsz;
            job.residual = static_cast<const uint8_t*>(ep->residual) + (b * p.dstNdStride + j * 16) * dsz +
                           r0 * job.res_pitch;
          }
        }
        store(job, ctx);
      }
    }
  }
  core.counters.local_to_gm_bytes += nd * m * n * dsz;
#if CUBE_OPS_X86
  if (ctx.stream) _mm_sfence();  // streaming stores are weakly ordered: complete them here
#endif
}

// =================================================================================================
// 2002: DataCopy CO1 (L0C) -> CO2 (UB), matrix block mode.
void CubeCopyCO1ToCO2(const LocalOperand& dst, const LocalOperand& src, CubeElem tdst, CubeElem tsrc,
                      const AscendC::DataCopyParams& p, const AscendC::DataCopyEnhancedParams& e) {
  static const char* I = "DataCopy(CO1->CO2, DataCopyEnhancedParams)";
  CurrentCore();
  if (!Is2002()) Fail("%s: this is the 2002 result path; on 2201 use Fixpipe", I);
  if (e.blockMode != AscendC::BlockMode::BLOCK_MODE_MATRIX)
    Fail("%s: blockMode %d is not modelled (BLOCK_MODE_MATRIX only)", I, int(e.blockMode));
  if (e.deqScale != AscendC::DeqScale::DEQ_NONE) Fail("%s: deqScale %d is not modelled", I, int(e.deqScale));
  OutKind out;
  if (tsrc == CubeElem::F32 && tdst == CubeElem::F32) out = OutKind::F32;
  else if (tsrc == CubeElem::F32 && tdst == CubeElem::F16) out = OutKind::F16;
  else if (tsrc == CubeElem::I32 && tdst == CubeElem::I32) out = OutKind::I32;
  else Fail("%s: %s -> %s is not modelled (float -> float/half, int32 -> int32)", I, ElemName(tsrc), ElemName(tdst));
  if (p.blockCount > 4095) Fail("%s: blockCount %u exceeds 4095", I, p.blockCount);
  const uint64_t cnt = p.blockCount, len = p.blockLen;
  const int dsz = ElemSize(tdst);
  const uint64_t src_floats = cnt && len ? ((cnt - 1) * (len + p.srcGap) + len) * 256 : 0;
  const uint64_t dst_bytes = cnt && len ? (cnt - 1) * (len * 256 * dsz + uint64_t(p.dstGap) * 32) + len * 256 * dsz : 0;
  CheckLocal(I, "src", src, PhysMask(PhysBuf::L0C), 64, src_floats * 4);
  CheckLocal(I, "dst", dst, PhysMask(PhysBuf::UB), 32, dst_bytes);
  if (!cnt || !len) return;
  static const StoreBlockFn store = PickStoreBlock();
  const SegCtx ctx{out, e.isRelu, nullptr, nullptr, nullptr};
  const float* s = reinterpret_cast<const float*>(src.ptr);
  for (uint64_t i = 0; i < cnt; ++i) {
    BlockJob job{};
    job.src = s + i * (len + p.srcGap) * 256;
    job.dst = dst.ptr + i * (len * 256 * dsz + uint64_t(p.dstGap) * 32);
    job.dst_pitch = 16 * dsz;
    job.rows = len * 16;  // NZ stays NZ: fractals are consecutive 16-element rows
    job.cnt = 16;
    store(job, ctx);
  }
}

}  // namespace ascendc_host
