// Small-M matrix products on the vector cores: C[b] = epilogue(A[b] · B[b]) for one or two rows of A
// (a batch-1 Linear, a decoder step, an RNN's input projection at batch 1), float32 / float16 /
// bfloat16 (16-bit operands accumulate in float, as the cube does).
//
// Why not the cube: the cube works on 16-row fractals, so a 1-row product pays the same per-element
// data movement (GM -> L1 in Nz order, L1 -> L0B, Mmad over the whole B) as a 16-row one, and B is
// read exactly once either way. Here B streams GM -> UB in plain row-major tiles and every row of it
// is used at once by the M rows of A: the vector core keeps the M x nw float accumulator in UB and
// adds A[m][k] * B[k][n0 : n0 + nw] with one Axpy per (k, m), so the work is one pass over B.
//
// B must be row-major K x N (pitch ldb): the operand itself, or the row-major copy the host caches of
// a transposed weight (a Linear's w.t()). A is row-major M x K (pitch lda). A work item is one batch
// matrix's column chunk [n0, n0 + nw) over one range of K (split K, so a narrow, deep B still feeds
// every core, and each core streams whole rows of B: contiguous GM reads); cores take contiguous
// ranges of items.
#pragma once
#include <cstdint>

#include "tiling_common.h"

namespace npu_kernels {

// When the GEMV is the better fit (measured on the simulated 910B2 with benchmarks/bench_mm.py --gemv
// against TORCH_OPS_NN_GEMV=0): at most two float32 rows or one 16-bit row of A (beyond that the
// cube's 16-row fractals do the extra rows nearly for free, while each row here costs an Axpy per
// row of B), and a B of at least 1.5 MB (smaller ones are latency bound, where the cube's single
// launch wins).
constexpr uint32_t kGemvMaxM = 2;
constexpr uint64_t kGemvMinBytes = 1536 * 1024;
constexpr bool GemvFits(uint64_t m, uint64_t k, uint64_t n, uint32_t elem_bytes) {
  return m >= 1 && m <= (elem_bytes == 4 ? kGemvMaxM : 1) && k * n * elem_bytes >= kGemvMinBytes;
}

struct GemvTiling {
  uint32_t batch, m, n, k;
  uint32_t elem_bytes;                 // 4 (float) or 2 (half / bfloat16)
  uint64_t lda, ldb, ldc;              // A: M x K rows, B: K x N rows, C: M x N rows (elements)
  uint64_t a_batch, b_batch, c_batch;  // elements between batch matrices (0 = broadcast)
  // Epilogue, as the cube's: y = acc*scale + shift + residual[b][m][n], then ReLU; scale / shift are
  // float vectors over n (or over m with rowwise).
  uint32_t has_scale, has_shift, has_residual, relu, rowwise;
  uint64_t ldr, r_batch;
  uint32_t nw;                         // columns per work item
  uint32_t pitch;                      // UB row pitch (elements): nw rounded up to 32 B of the dtype
  uint32_t kc;                         // B rows per UB tile
  uint32_t chunks_n;                   // ceil(n / nw)
  // Split K: `splits` items share a column chunk, each over k_split rows of B, and leave float
  // partial sums in the workspace [splits][batch][m][n]; the reduce phase (phase 1, one item per
  // column chunk) adds them and applies the epilogue. splits == 1: no workspace, no second phase.
  uint32_t splits, k_split;
  uint32_t phase;                      // 0: multiply, 1: reduce (set by the caller per launch)
  uint64_t items, items_per_core;      // phase 0: batch * chunks_n * splits
  uint32_t block_dim;
  uint32_t red_nw, red_chunks_n;       // phase 1 column pieces (narrower than nw: more cores reduce)
  uint64_t red_items, red_items_per_core;  // phase 1: batch * red_chunks_n
  uint32_t red_block_dim;
  uint32_t ok;                         // 0: the shape does not fit (GemvFits)
};

GemvTiling gemv_tiling(uint32_t batch, uint32_t m, uint32_t n, uint32_t k, uint32_t elem_bytes, const SocInfo& soc);

}  // namespace npu_kernels

// a, b, c in GM; scale / shift: float GM vectors or null; residual: output-dtype GM tensor or null;
// ws: float workspace of splits * batch * m * n (null when splits == 1); tiling = GemvTiling.
extern "C" void gemv_kernel_float(uint8_t* a, uint8_t* b, uint8_t* c, uint8_t* scale, uint8_t* shift,
                                  uint8_t* residual, uint8_t* ws, uint8_t* tiling);
extern "C" void gemv_kernel_half(uint8_t* a, uint8_t* b, uint8_t* c, uint8_t* scale, uint8_t* shift,
                                 uint8_t* residual, uint8_t* ws, uint8_t* tiling);
extern "C" void gemv_kernel_bf16(uint8_t* a, uint8_t* b, uint8_t* c, uint8_t* scale, uint8_t* shift,
                                 uint8_t* residual, uint8_t* ws, uint8_t* tiling);
