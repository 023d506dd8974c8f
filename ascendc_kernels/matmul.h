// Matmul family on the cube: C[b] = epilogue(A[b] · B[b]) for float32 / float16 / bfloat16 (16-bit
// operands accumulate in float, as the cube does). Host side: the tiling function and the kernel
// entry points, callable from layer 5.
//
// Data path per output tile (base_m x base_n, one L0C accumulator resident over the whole K loop):
//   GM --DataCopy(Nd2Nz)--> L1 (k_l1-deep panels of A and B)
//      --LoadData 2D / LoadDataWithTranspose--> L0A / L0B (base_k-deep micro-panels)
//      --Mmad--> L0C --Fixpipe (or ext::FixpipeWithEpilogue: column scale/shift, residual, ReLU)--> GM
// A and B may each be stored row-major or transposed (the column-major `.t()` views autograd
// produces); the transposed layouts are read natively in the GM -> L1 -> L0 stages, never copied.
#pragma once
#include <cstdint>

#include "tiling_common.h"

namespace npu_kernels {

struct MatmulTiling {
  uint32_t m, n, k, batch;
  uint32_t elem_bytes;      // 4 (float) or 2 (half / bfloat16)
  // Stored layouts. A: row-major M x K (pitch lda) or, with a_trans, A^T stored row-major K x M.
  // B: row-major K x N (pitch ldb) or, with b_trans, B^T stored row-major N x K. C: M x N, pitch ldc.
  uint64_t lda, ldb, ldc;
  uint64_t a_batch, b_batch, c_batch;  // elements between batch matrices (0 = broadcast)
  uint32_t a_trans, b_trans;
  // Epilogue (ext::FixpipeWithEpilogue): y = acc*scale[n] + shift[n] + residual[b][m][n]; relu.
  uint32_t has_scale, has_shift, has_residual, relu;
  uint32_t rowwise;        // scale / shift per row (m) instead of per column (n)
  uint64_t ldr, r_batch;   // residual pitch and batch step (elements of the output dtype)
  // Blocking.
  uint32_t base_m, base_n, base_k, k_l1;
  uint32_t sub_n;          // columns per L0B load / Mmad (base_n split so base_k stays deep)
  uint32_t a2_bufs;        // L0A buffers (2 = double buffered)
  uint32_t tiles_m, tiles_n;
  // K fits one L1 panel: a core keeps the A / B panel in L1 while consecutive tiles share it, and
  // the tile order (m fastest: B panels stay, n fastest: A panels stay) minimizes GM -> L1 traffic.
  // Deeper K: m fastest when B's panel is the bigger one (consecutive tiles read the same B panel).
  uint32_t resident, m_fastest;
  uint32_t l0b_resident;   // K in one k-step and B's tile in one L0B load: L0B kept across tiles too
  uint64_t total_tiles, tiles_per_core;
  uint32_t block_dim;
  uint32_t hf32;           // float: run the cube in HF32 mode (set by the caller, not the tiling)
  uint32_t out_no_l2;      // output >= kNoL2OutputBytes: written with the L2 cache hint off
  // B^T (b_trans, one matrix for every batch) pre-packed in GM in the L1 order of its panels, the Zn
  // fractal grid [ceil(K/C0)][b_n16][C0] with zero padding (set by the caller, not the tiling; the
  // packed copy of a 1x1 convolution's weights is cached): each GM -> L1 panel load is then
  // ceil(kt/C0) contiguous runs of nt16 * 32 B instead of an ND -> NZ scatter of every row.
  uint32_t b_nz, b_n16;
};

// Pure: shapes + layouts + SoC -> tiling (blocking that fits L1 / L0A / L0B / L0C, cores to use).
MatmulTiling matmul_tiling(uint32_t batch, uint32_t m, uint32_t n, uint32_t k, uint32_t elem_bytes, bool a_trans,
                           bool b_trans, const SocInfo& soc);

// y[i] = scale * x[i], converting the dtype (vector cores). Used for addmm's beta * self.
struct ScaleCastTiling {
  uint64_t total;
  uint64_t per_core;
  uint32_t tile;
  uint32_t block_dim;
  float scale;
};
ScaleCastTiling scale_cast_tiling(uint64_t total, const SocInfo& soc, float scale);

}  // namespace npu_kernels

// Kernel entry points (Ascend C). a, b, c in GM; scale/shift: float GM vectors or null; residual:
// output-dtype GM tensor or null; tiling = MatmulTiling.
extern "C" void matmul_kernel_float(uint8_t* a, uint8_t* b, uint8_t* c, uint8_t* scale, uint8_t* shift,
                                    uint8_t* residual, uint8_t* tiling);
extern "C" void matmul_kernel_half(uint8_t* a, uint8_t* b, uint8_t* c, uint8_t* scale, uint8_t* shift,
                                   uint8_t* residual, uint8_t* tiling);
extern "C" void matmul_kernel_bf16(uint8_t* a, uint8_t* b, uint8_t* c, uint8_t* scale, uint8_t* shift,
                                   uint8_t* residual, uint8_t* tiling);
// x (dtype) -> y (float, `_to_float`) or y (same dtype, `_same`); tiling = ScaleCastTiling.
extern "C" void scale_cast_kernel_float_to_float(uint8_t* x, uint8_t* y, uint8_t* tiling);
extern "C" void scale_cast_kernel_half_to_float(uint8_t* x, uint8_t* y, uint8_t* tiling);
extern "C" void scale_cast_kernel_bf16_to_float(uint8_t* x, uint8_t* y, uint8_t* tiling);
extern "C" void scale_cast_kernel_half_same(uint8_t* x, uint8_t* y, uint8_t* tiling);
extern "C" void scale_cast_kernel_bf16_same(uint8_t* x, uint8_t* y, uint8_t* tiling);
