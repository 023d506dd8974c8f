// Kernel-side building blocks shared by the cube kernels (matmul.cpp, conv.cpp): moving a GM
// matrix tile into L1 in the order the L0 loads need, and L1 -> L0A / L0B micro-panel loads, for
// both stored orientations. Ascend C only (kernel_operator.h); no host code.
//
// Conventions: C0 = 32 B / sizeof(T) (8 float, 16 half/bf16). The L0A row pitch of one 16-row
// M block is KF = ceil(kb/16) * (16/C0) fractals (float operands use Mmad's kDirectionAlign so a
// transposed A, which pads K to 16, and a plain one share one layout).
#pragma once
#include "kernel_operator.h"

namespace npu_kernels::cube {

using namespace AscendC;

template <typename T>
constexpr uint32_t C0Of() { return 32 / sizeof(T); }
template <typename T>
constexpr uint32_t FracElems() { return 512 / sizeof(T); }
constexpr uint32_t Align16(uint32_t v) { return (v + 15) / 16 * 16; }
constexpr uint32_t Ceil(uint32_t a, uint32_t b) { return (a + b - 1) / b; }

// L0A pitch (fractals per 16-row block) for a k-step of kb elements.
template <typename T>
__aicore__ inline uint32_t L0AKFractals(uint32_t kb) { return Ceil(kb, 16) * (16 / C0Of<T>()); }

// GM rows x cols (row pitch ld elements) -> L1 Nz: column blocks of C0, each dstC0Stride rows of
// 32 B apart. Nd2Nz's source pitch is 16 bits; wider pitches go row by row.
template <typename T>
__aicore__ inline void GmToNz(const LocalTensor<T>& dst, const GlobalTensor<T>& src, uint32_t rows, uint32_t cols,
                              uint64_t ld, uint32_t dstC0Stride) {
  if (rows == 0 || cols == 0) return;
  if (ld <= 65535) {
    DataCopy(dst, src, Nd2NzParams(1, uint16_t(rows), uint16_t(cols), 0, uint16_t(ld), uint16_t(dstC0Stride), 1, 0));
    return;
  }
  for (uint32_t r = 0; r < rows; ++r)
    DataCopy(dst[r * C0Of<T>()], src[r * ld],
             Nd2NzParams(1, 1, uint16_t(cols), 0, uint16_t(cols), uint16_t(dstC0Stride), 1, 0));
}

// ---- A (M x K) ------------------------------------------------------------------------------
// Row-major A tile (mt x kt, pitch ld) -> L1 Nz [kt/C0][mt16][C0].
// Transposed (A^T stored kt x mt): b16 -> L1 Nz of A^T [mt16/16][kt16][16]; b32 -> per 16-row
// group of A^T an Nz block [mt16/8][16][8] (so each 16x16 square is two consecutive fractals).
template <typename T>
__aicore__ inline void LoadAToL1(const LocalTensor<T>& a1, const GlobalTensor<T>& a, bool trans, uint32_t mt,
                                 uint32_t kt, uint64_t ld) {
  const uint32_t mt16 = Align16(mt), kt16 = Align16(kt);
  if (!trans) {
    GmToNz(a1, a, mt, kt, ld, mt16);
  } else if constexpr (sizeof(T) == 2) {
    GmToNz(a1, a, kt, mt, ld, kt16);
  } else {
    for (uint32_t g = 0; g * 16 < kt; ++g)
      GmToNz(a1[g * 16 * mt16], a[uint64_t(g) * 16 * ld], kt - g * 16 < 16 ? kt - g * 16 : 16, mt, ld, 16);
  }
}

// L1 (as LoadAToL1 left it, k extent kt) -> L0A Zz for k in [kk, kk + kb).
template <typename T>
__aicore__ inline void LoadAToL0(const LocalTensor<T>& a2, const LocalTensor<T>& a1, bool trans, uint32_t mt,
                                 uint32_t kt, uint32_t kk, uint32_t kb) {
  constexpr uint32_t c0 = C0Of<T>(), frac = FracElems<T>();
  const uint32_t m1 = Align16(mt) / 16, kf = L0AKFractals<T>(kb), kbf = Ceil(kb, c0);
  if (!trans) {
    for (uint32_t mi = 0; mi < m1; ++mi)
      LoadData(a2[mi * kf * frac], a1[(kk / c0) * m1 * 16 * c0 + mi * 16 * c0],
               LoadData2DParams(0, uint8_t(kbf), uint16_t(m1), 0, 0, false, 0));
  } else if constexpr (sizeof(T) == 2) {
    const uint32_t kt1 = Align16(kt) / 16;
    for (uint32_t mi = 0; mi < m1; ++mi)
      LoadData(a2[mi * kf * frac], a1, LoadData2DParams(uint16_t(mi * kt1 + kk / 16), uint8_t(kbf), 1, 0, 0, true, 0));
  } else {
    const uint32_t groups = Ceil(kb, 16);
    for (uint32_t g = 0; g < groups; ++g)
      LoadDataWithTranspose(a2[2 * g * frac], a1,
                            LoadData2dTransposeParams(uint16_t((kk / 16 + g) * m1), uint8_t(m1), 1,
                                                      uint16_t(kf - 1), 0, 0));
  }
}

// ---- B (K x N) ------------------------------------------------------------------------------
// Transposed (B^T stored nt x kt): L1 Nz [kt/C0][nt16][C0] = the Zn fractal grid.
// Row-major B (kt x nt): b16 -> L1 Nz [nt16/16][kt16][16]; b32 -> per 16-row group [nt16/8][16][8].
template <typename T>
__aicore__ inline void LoadBToL1(const LocalTensor<T>& b1, const GlobalTensor<T>& b, bool trans, uint32_t nt,
                                 uint32_t kt, uint64_t ld) {
  const uint32_t nt16 = Align16(nt), kt16 = Align16(kt);
  if (trans) {
    GmToNz(b1, b, nt, kt, ld, nt16);
  } else if constexpr (sizeof(T) == 2) {
    GmToNz(b1, b, kt, nt, ld, kt16);
  } else {
    for (uint32_t g = 0; g * 16 < kt; ++g)
      GmToNz(b1[g * 16 * nt16], b[uint64_t(g) * 16 * ld], kt - g * 16 < 16 ? kt - g * 16 : 16, nt, ld, 16);
  }
}

// L1 (as LoadBToL1 left it) -> L0B Zn for k in [kk, kk + kb): fractal (ki, ni) at ki*N1 + ni.
// A column sub-range: 16-column blocks [nb0, nb0 + ceil(ns/16)) of the L1 panel (ns = 0: all nt
// columns), written to L0B as its own Zn grid (N1 = ceil(ns/16)).
template <typename T>
__aicore__ inline void LoadBToL0(const LocalTensor<T>& b2, const LocalTensor<T>& b1, bool trans, uint32_t nt,
                                 uint32_t kt, uint32_t kk, uint32_t kb, uint32_t nb0 = 0, uint32_t ns = 0) {
  constexpr uint32_t c0 = C0Of<T>(), frac = FracElems<T>();
  const uint32_t n1 = Align16(nt) / 16, kbf = Ceil(kb, c0);
  const uint32_t n1s = ns ? Align16(ns) / 16 : n1 - nb0;
  if (trans) {
    for (uint32_t ki = 0; ki < kbf; ++ki)
      LoadData(b2[ki * n1s * frac], b1[((kk / c0 + ki) * n1 + nb0) * frac],
               LoadData2DParams(0, uint8_t(n1s), 1, 0, 0, false, 0));
  } else if constexpr (sizeof(T) == 2) {
    const uint32_t kt1 = Align16(kt) / 16;
    for (uint32_t ki = 0; ki < kbf; ++ki)
      LoadData(b2[ki * n1s * frac], b1,
               LoadData2DParams(uint16_t(nb0 * kt1 + kk / 16 + ki), uint8_t(n1s), uint16_t(kt1), 0, 0, true, 0));
  } else {
    const uint32_t groups = Ceil(kb, 16);
    for (uint32_t g = 0; g < groups; ++g)
      LoadDataWithTranspose(b2[2 * g * n1s * frac], b1,
                            LoadData2dTransposeParams(uint16_t((kk / 16 + g) * n1 + nb0), uint8_t(n1s), 1, 0,
                                                      uint16_t(n1s - 1), 0));
  }
}

// Mmad over one k-step (kAlign16: the float L0A pitch is ceil(kb/16)*2 fractals, as LoadAToL0
// lays it out; false for an L0A written by Load3D, pitch ceil(kb/8)). m = 1 would select Mmad's GEMV form (L0A read as a plain vector), so a
// single row is computed as two (the second row is fractal padding and never leaves L0C).
template <typename T>
__aicore__ inline void MmadStep(const LocalTensor<float>& c, const LocalTensor<T>& a2, const LocalTensor<T>& b2,
                                uint32_t mt, uint32_t nt, uint32_t kb, bool init, bool kAlign16 = true) {
  MmadParams p(uint16_t(mt < 2 ? 2 : mt), uint16_t(nt), uint16_t(kb), 0, false, init);
  if constexpr (sizeof(T) == 4) p.kDirectionAlign = kAlign16;
  Mmad(c, a2, b2, p);
}

template <typename T>
constexpr QuantMode_t QuantFor() {
  if constexpr (std::is_same_v<T, half>) return F322F16;
  else if constexpr (std::is_same_v<T, bfloat16_t>) return F322BF16;
  else return NoQuant;
}

}  // namespace npu_kernels::cube
