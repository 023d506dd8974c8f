// Random number kernels: a counter-based Philox-4x32-10 generator in Ascend C vector instructions, and
// the distributions built on it (uniform, normal by Box-Muller, Bernoulli) plus dropout.
//
// Element e of a launch takes 32 random bits from Philox(key = seed, counter = (g_lo, g_hi, off_lo, off_hi))
// where, with G = kPhiloxLanes: chunk = e / (4G), j = e % (4G), word = j / G, g = chunk * G + j % G.
// The numbers of an element depend only on (seed, offset, e): not on how chunks are split over cores or
// on the host threads. `philox` (may be null): four words (seed lo, hi, base offset lo, hi) in device
// memory that replace the tiling's seed and add to its offset -- a launch captured into an npu graph,
// whose replays each draw fresh numbers.
#pragma once
#include <cstdint>

#include "tiling_common.h"

namespace npu_kernels {

constexpr uint32_t kPhiloxLanes = 2048;                 // G
constexpr uint32_t kPhiloxChunk = 4 * kPhiloxLanes;     // elements per chunk

enum RandomKind : uint32_t { kRandUniform = 0, kRandNormal = 1, kRandBernoulli = 2, kRandDropout = 3 };

struct RandomTiling {
  uint32_t kind;
  uint64_t total;            // elements
  uint64_t chunks;
  uint64_t chunks_per_core;
  uint32_t block_dim;
  uint32_t seed_lo, seed_hi, off_lo, off_hi;
  float a, b;                // uniform [a, b); normal mean a, std b; bernoulli p = a; dropout keep prob a, scale b
};

RandomTiling random_tiling(uint32_t kind, uint64_t total, uint64_t seed, uint64_t offset, const SocInfo& soc);

}  // namespace npu_kernels

#define NPU_RANDOM_DECL(T)                                                                                       \
  extern "C" void random_kernel_##T(uint8_t* x, uint8_t* y, uint8_t* mask, uint8_t* philox, uint8_t* tiling);     \
  extern "C" void dropout_bwd_kernel_##T(uint8_t* go, uint8_t* mask, uint8_t* gx, uint8_t* tiling);
NPU_RANDOM_DECL(float)
NPU_RANDOM_DECL(half)
NPU_RANDOM_DECL(bf16)
#undef NPU_RANDOM_DECL
