// arange on the vector cores: y[i] = start + i * step. Each core fills a contiguous range in tiles:
// an int32 index vector (Iota), then for float outputs Cast -> float, Muls step, Adds start (float
// arithmetic, as CUDA's arange for float: results can differ from the CPU's double-based ones in the
// last bit for fractional steps) and a rounding Cast to half / bfloat16; for int32 / int64 outputs
// int32 Muls / Adds (the host uses this only when every value fits int32) and a Cast to int64.
#pragma once
#include <cstdint>

#include "tiling_common.h"

namespace npu_kernels {

struct ArangeTiling {
  uint64_t total = 0, per_core = 0;
  uint32_t tile = 0, block_dim = 1;
  uint32_t dtype = 0;  // EwDType of the output
  float start_f = 0.f, step_f = 1.f;
  int32_t start_i = 0, step_i = 1;
};

ArangeTiling arange_tiling(uint64_t total, uint32_t dtype, uint32_t elem_bytes, const SocInfo& soc);

}  // namespace npu_kernels

extern "C" void arange_kernel(uint8_t* y, uint8_t* tiling);
