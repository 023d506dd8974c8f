// The cube unit's arithmetic: C(float) (+)= A·B over the *physical* layouts the host model keeps
// in L0A, L0B and L0C. Pure functions over raw pointers; no model state. kernel_cube.h (Mmad)
// calls these after its checks.
//
// Physical layouts (kernel code never reads L0A/L0B/L0C, so the model picks the order that makes
// the micro-kernel fastest; element offsets into these buffers keep their documented meaning at
// fractal granularity because every 512 B fractal stays in its documented slot):
//
//   L0A (A, M×K): documented Zz, unchanged. Fractal (mi, ki) is slot mi*kFractals + ki; inside it
//       the 16×C0 block is row-major, element (m0, k0) at m0*C0 + k0. The micro-kernel
//       broadcasts A[m][k] straight from there (a row is a fixed offset m0*C0 from a pointer
//       that walks k), so float operands are used in place.
//   L0B (B, K×N): documented Zn *fractal grid* (slot ki*nFractals + ni) but each C0×16 fractal
//       is stored k-major: element (k0, n0) at k0*16 + n0 (the documented order is n0*C0 + k0,
//       i.e. the transpose). One k step of a 16-wide N block is then a single 64 B vector load.
//   L0C (C, M×N, float): documented Nz, unchanged: element (r, c) at
//       (c/16)*(M1*256) + r*16 + c%16, M1 = ceil(m/16). A 16-column block is M1*16 contiguous
//       rows of 16 floats — exactly the accumulator rows of the micro-kernel.
//
// half / bfloat16 operands are converted to float once per call into a thread-local scratch in
// the same layouts (C0 = 16) and accumulate in float. The sum over k runs in order k = 0..K-1
// for every output element regardless of blocking, so results do not depend on tile sizes.
#pragma once
#include <cstddef>
#include <cstdint>

namespace ascendc_host::cube {

enum class CubeDtype : uint8_t { kFloat32, kFloat16, kBFloat16 };

// Elements per 32 B along K in a fractal: 8 for float, 16 for half/bfloat16.
constexpr int CubeC0(CubeDtype t) { return t == CubeDtype::kFloat32 ? 8 : 16; }

enum class CubeInit : uint8_t {
  kAccumulate,  // C += A·B
  kZero,        // C  = A·B
  kBias,        // C  = bias[col] + A·B  (every row starts from the same 1×N bias row)
};

struct CubeGemmShape {
  int m = 0, n = 0, k = 0;  // element counts, 0..4095; any 0 → no-op
  // Fractals per M block in L0A (the Zz row pitch, in fractals). Normally ceil(k/C0); float with
  // Mmad's kDirectionAlign uses ceil(k/16)*2. 0 means ceil(k/C0).
  int a_k_fractals = 0;
  CubeInit init = CubeInit::kZero;
  const float* bias = nullptr;  // kBias only: n floats
  // Mmad's m == 1 form: L0A is read as a plain vector of k elements in documented order.
  bool gemv = false;
  // HF32 mode (SetHF32Mode) was on when the operands were loaded: float may use bf16x3 (kAmx).
  bool hf32 = false;
};

// a, b point at the start of the L0A / L0B operands in their physical layouts (element type by
// `type`: float, or uint16_t bit patterns of half / bfloat16); c at the L0C tile (float, Nz).
void CubeGemm(float* c, const void* a, const void* b, CubeDtype type, const CubeGemmShape& s);

// Which micro-kernel family CubeGemm uses ("amx", "avx512", "avx2", "scalar"); chosen once at run
// time: "amx" when the CPU has AMX-BF16 + AVX512-BF16 and the OS grants the tile state, unless
// TORCH_OPS_NN_NO_AMX=1; TORCH_OPS_NN_CUBE_ISA=<family> forces one (if the CPU has it).
const char* CubeGemmIsa();
// Called when a block starts on this thread: forgets what earlier blocks' L0 data held (see
// t_amx_inf in cube_gemm.cpp).
void CubeBlockBegin();
// Testing/benchmarking only: force a family (returns false if the CPU lacks it). nullptr resets.
// The family fixes the physical L0A/L0B layout (below), so only switch between kernel launches
// (data LoadData wrote under one family is not readable by Mmad under another).
bool CubeGemmForceIsa(const char* isa);

// ---- Physical L0A / L0B layouts -----------------------------------------------------------------
// kFma (families avx512/avx2/scalar, and half operands under "amx"): the layouts described at the
// top of this file.
// kAmx (family "amx", float and bfloat16 operands): every 512 B fractal still owns exactly its
// documented 512 B slot *group*, so fractal-granularity offsets keep their meaning, but the bytes
// are arranged for Intel AMX tiles (TDPBF16PS):
//   L0A: aligned groups of G fractals (float: G = 4, 2 KB; bfloat16: G = 2, 1 KB) — the documented
//     fractal at address X is fractal f = (X / 512) % G of the group at X & ~(G*512-1). A group
//     holds one 16-row x 32-k AMX A tile (64 B rows): float as two bf16 tiles, hi at +0 and lo at
//     +1 KB (x = hi + lo + r, hi = RNE_bf16(x), lo = RNE_bf16(x - hi), |r| <= 2^-17 |x|), fractal f
//     supplying k columns [f*C0, f*C0 + C0) of every row; bfloat16: row r = fractal 0 row r then
//     fractal 1 row r.
//   L0B: each fractal (C0 k x 16 n) in the AMX B-tile "VNNI" order: pair row p holds, for n = 0..15,
//     the elements (2p, n), (2p+1, n); float as hi rows (256 B) then lo rows (256 B).
// Mmad multiplies float (HF32 mode) as hi*hi + hi*lo + lo*hi in float (bf16x3, ~1e-6 relative to a float GEMM;
// the lo*lo term and r are dropped); bfloat16 exactly. Inputs below ~1e-36 in magnitude lose their
// lo part (AMX flushes bf16 denormals). After infinite hi parts were written in a block, that block's
// float Mmads compute hi + lo in float (the FMA kernels), so inf * w gives +-inf, not NaN.
// float uses kAmx only in HF32 mode (SetHF32Mode(ENABLE)): without it float Mmad keeps full float
// precision (the FMA kernels), as the cube does; bfloat16 (exact either way) always uses kAmx.
enum class L0Layout : uint8_t { kFma, kAmx };
L0Layout CubeL0Layout(CubeDtype t, bool hf32);
// LoadData's writers: put `rows` rows [r0, r0+rows) of one documented L0A fractal (Zz: 16 rows x C0,
// row-major, 32 B per row; `src` points at row r0) into the fractal at documented address `dst`.
void CubePutL0A(uint8_t* dst, const void* src, int r0, int rows, CubeDtype t, L0Layout lay);
// One L0B fractal from its k-major form (C0 rows along K x 16 along N, 64 B / 32 B rows).
void CubePutL0B(uint8_t* dst, const void* kmajor, CubeDtype t, L0Layout lay);
// Float under kAmx: the L0B fractal from its documented transpose (16 rows along N x 8 floats along
// K, row-major; element (k0, n0) = rows[n0 * 8 + k0]) in one pass. Only call when
// CubeL0Layout(kFloat32, hf32) is kAmx (per fractal, so the caller checks once).
void CubePutL0BRowsF32(uint8_t* dst, const void* rows);
// Float under kAmx: the four fractals of the 2 KB-aligned L0A group at `group` at once, fractal f's
// row r (8 floats, 32 B) read from rows[16 f + r]; the same bytes four CubePutL0A calls write. Only
// call when CubeL0Layout(kFloat32, hf32) is kAmx.
void CubePutL0AGroupF32(uint8_t* group, const uint8_t* const* rows);
// Inverses, for tests and debugging (float under kAmx reads back hi + lo, exact for values with at
// most 16 significant bits): the documented Zz fractal at `src` (16 rows x C0), and the k-major form
// of the L0B fractal at `src`.
void CubeGetL0A(void* doc, const uint8_t* src, CubeDtype t, L0Layout lay);
void CubeGetL0B(void* kmajor, const uint8_t* src, CubeDtype t, L0Layout lay);

// ---- L0B physical-order helpers (used by LoadData and tests) ----
// Offset inside one L0B fractal (C0 rows along K × 16 columns along N) of element (k0, n0).
constexpr int L0BPhysOffset(int k0, int n0) { return k0 * 16 + n0; }
// Documented Zn offset of the same element: column n0 holds C0 consecutive K values.
constexpr int L0BDocOffset(int k0, int n0, int c0) { return n0 * c0 + k0; }

}  // namespace ascendc_host::cube
