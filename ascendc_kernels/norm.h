// Normalization kernels: batch norm (statistics, finalize, apply; forward and backward), layer norm
// and group norm. Host side: tiling structs, pure tiling functions and the kernel entry points.
#pragma once
#include <cstdint>

#include "tiling_common.h"

namespace npu_kernels {

// ------------------------------------------------------------------ batch norm
// The input is seen as NCHW ([N, C, HW], channel planes) or NHWC ([N*HW, C], channels_last rows).
// Three kernels: reduce (per-channel partial sums, per work unit), finalize (one core: statistics,
// running stats, coefficients), apply (elementwise with per-channel coefficients).
enum BnLayout : uint32_t { kBnNchw = 0, kBnNhwc = 1 };
enum BnMode : uint32_t { kBnFwdTrain = 0, kBnFwdEval = 1, kBnBwdTrain = 2, kBnBwdEval = 3 };

// Finalize output slots (float [kBnSlots][C]).
enum BnSlot : uint32_t {
  kBnSaveMean = 0,   // forward: batch mean           backward: grad_weight
  kBnSaveInvstd = 1, // forward: 1/sqrt(var + eps)    backward: grad_bias
  kBnRunMean = 2,    // forward: updated running mean
  kBnRunVar = 3,     // forward: updated running var
  kBnCoefA = 4,      // forward: scale                backward: A (grad_in = A*go + B*x + C)
  kBnCoefB = 5,      // forward: shift                backward: B
  kBnCoefC = 6,      //                               backward: C
  kBnSlots = 7
};

struct BatchNormTiling {
  uint32_t layout, mode;
  uint64_t n, c, hw;         // input [N, C, HW]
  uint64_t count;            // N*HW values per channel
  // NCHW units: (channel, n-split, hw-split); NHWC units: row ranges.
  uint32_t sn, sh;           // NCHW splits of N and HW per channel
  uint64_t n_per, hw_per;    // NCHW: n and hw per split (hw_per block aligned)
  uint64_t rows_per;         // NHWC: rows per unit
  uint32_t rows_tile;        // NHWC: rows per tile (power of two)
  uint32_t rows_out;         // NHWC: partial rows each unit writes after folding
  uint64_t units;
  uint64_t units_per_core;
  // NCHW apply over planes that fit a tile: units of apply_cb planes of one image (0: the reduce units).
  uint32_t apply_cb;
  uint64_t apply_units, apply_units_per_core;
  uint32_t apply_block_dim;
  uint32_t partials;         // partial rows per channel the finalize kernel sums
  uint32_t tile;             // elements per UB tile
  uint32_t block_dim;
  // finalize
  uint32_t fin_chunk;        // channels per finalize step
  uint32_t has_weight, has_bias, has_running;
  float eps, momentum;
};

// Pure tiling: shape + dtype size + SoC -> tiling (reduce/apply share the unit split).
BatchNormTiling batch_norm_tiling(uint32_t layout, uint32_t mode, uint64_t n, uint64_t c, uint64_t hw,
                                  uint32_t elem_bytes, const SocInfo& soc);
// Largest channel count the NHWC kernels take (one row must fit a tile); larger ones use NCHW.
uint64_t batch_norm_nhwc_max_channels(uint32_t elem_bytes, const SocInfo& soc);

// ------------------------------------------------------------------ layer norm
// Rows of `d` contiguous elements normalized over d (the row fits in UB: d <= max_d), with weight/bias
// over d. Forward outputs mean and rstd per row (float). Backward: grad_input per row and per-core
// column partial sums of grad_weight / grad_bias, folded in core order by a second kernel.
struct LayerNormTiling {
  uint64_t rows, d;
  uint64_t rows_per_core;
  uint32_t dpad;           // d rounded up to 64 (FoldSum)
  uint32_t block_dim;
  uint32_t has_weight, has_bias;
  uint32_t need_gx, need_gw, need_gb;
  uint32_t fold_rows;      // partial rows to fold (backward)
  uint32_t fold_chunk;     // columns per fold step
  uint32_t ok;
  float eps;
  uint32_t batch;          // forward: rows per step (loaded, stored and scaled as one block); 1 = row by row
};
LayerNormTiling layer_norm_tiling(uint64_t rows, uint64_t d, bool backward, uint32_t elem_bytes, const SocInfo& soc);

// ------------------------------------------------------------------ group norm
// Rows are (n, group): cg channels of hw elements, laid out in UB as cg segments of hwp (hw padded).
struct GroupNormTiling {
  uint64_t n, c, hw, groups, cg;
  uint64_t rows_per_core;   // rows = n * groups
  uint32_t hwp;             // hw padded: to a block when hw <= 64, else to 64 (FoldSum)
  uint32_t kc;              // channels per UB step (a row of cg channels is processed in chunks of kc)
  uint32_t block_dim;
  uint32_t has_weight, has_bias;
  uint32_t need_gx;
  uint32_t ok;
  float eps;
};
GroupNormTiling group_norm_tiling(uint64_t n, uint64_t c, uint64_t hw, uint64_t groups, bool backward,
                                  uint32_t elem_bytes, const SocInfo& soc);

// Fold of partial rows: out_k[col] = sum over rows of partial[k][row][col] (row order), k = 0, 1.
struct FoldTiling {
  uint64_t rows, cols;
  uint32_t chunk;  // columns per step
};
FoldTiling fold_tiling(uint64_t rows, uint64_t cols, const SocInfo& soc);

}  // namespace npu_kernels

// Batch norm entry points (GM args, then tiling). Unused pointers may be null.
#define NPU_BN_DECL(T)                                                                                        \
  extern "C" void bn_reduce_kernel_##T(uint8_t* x, uint8_t* go, uint8_t* shift, uint8_t* partial,             \
                                       uint8_t* kshift, uint8_t* tiling);                                     \
  extern "C" void bn_apply_kernel_##T(uint8_t* x, uint8_t* go, uint8_t* coef, uint8_t* y, uint8_t* tiling);
NPU_BN_DECL(float)
NPU_BN_DECL(half)
NPU_BN_DECL(bf16)
#undef NPU_BN_DECL
extern "C" void bn_finalize_kernel(uint8_t* partial, uint8_t* kshift, uint8_t* weight, uint8_t* bias,
                                   uint8_t* mean_in, uint8_t* var_in, uint8_t* out, uint8_t* tiling);

// Layer norm / group norm entry points (weight, bias: float; mean, rstd: float per row).
#define NPU_ROWNORM_DECL(T)                                                                                   \
  extern "C" void layer_norm_fwd_kernel_##T(uint8_t* x, uint8_t* weight, uint8_t* bias, uint8_t* y,           \
                                            uint8_t* mean, uint8_t* rstd, uint8_t* tiling);                   \
  extern "C" void layer_norm_bwd_kernel_##T(uint8_t* go, uint8_t* x, uint8_t* mean, uint8_t* rstd,            \
                                            uint8_t* weight, uint8_t* gx, uint8_t* partial, uint8_t* tiling); \
  extern "C" void group_norm_fwd_kernel_##T(uint8_t* x, uint8_t* weight, uint8_t* bias, uint8_t* y,           \
                                            uint8_t* mean, uint8_t* rstd, uint8_t* tiling);                   \
  extern "C" void group_norm_bwd_kernel_##T(uint8_t* go, uint8_t* x, uint8_t* mean, uint8_t* rstd,            \
                                            uint8_t* weight, uint8_t* gx, uint8_t* partial, uint8_t* tiling);
NPU_ROWNORM_DECL(float)
NPU_ROWNORM_DECL(half)
NPU_ROWNORM_DECL(bf16)
#undef NPU_ROWNORM_DECL
// Sums `rows` partial rows of `cols` floats (twice: two blocks) in row order: out0, out1.
extern "C" void partial_rows_fold_kernel(uint8_t* partial, uint8_t* out0, uint8_t* out1, uint8_t* tiling);
