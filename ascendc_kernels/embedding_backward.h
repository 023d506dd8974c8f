// embedding's dense backward on the vector cores: grad_weight[num_weights, D] = sum over positions k of
// grad_output[k, :] into row indices[k] (padding_idx skipped). Deterministic without atomics: each core
// owns a contiguous range of weight rows, zeroes them, then walks all indices in order (chunks in UB)
// and adds the grad rows that land in its range, in float (half / bfloat16 rows are widened and rounded
// once per add). Indices outside [0, num_weights) fail ascendc_assert.
#pragma once
#include <cstdint>

#include "tiling_common.h"

namespace npu_kernels {

struct EmbeddingBackwardTiling {
  uint64_t n = 0, dim = 0, num_weights = 0;
  int64_t padding_idx = -1;        // < 0: none
  uint64_t rows_per_core = 0;      // weight rows per core
  uint32_t chunk = 0;              // elements per UB chunk of a row (multiple of 64)
  uint32_t idx_chunk = 0;
  uint32_t idx64 = 0, elem_bytes = 4, block_dim = 1;
};

EmbeddingBackwardTiling embedding_backward_tiling(uint64_t n, uint64_t dim, uint64_t num_weights, int64_t padding_idx,
                                                  bool idx64, uint32_t elem_bytes, const SocInfo& soc);

}  // namespace npu_kernels

extern "C" void embedding_backward_kernel_float(uint8_t* grad, uint8_t* index, uint8_t* out, uint8_t* tiling);
extern "C" void embedding_backward_kernel_half(uint8_t* grad, uint8_t* index, uint8_t* out, uint8_t* tiling);
extern "C" void embedding_backward_kernel_bf16(uint8_t* grad, uint8_t* index, uint8_t* out, uint8_t* tiling);
