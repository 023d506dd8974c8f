// Negative log likelihood loss kernels (nll_loss and nll_loss2d, forward and backward).
#pragma once
#include <cstdint>

#include "tiling_common.h"

namespace npu_kernels {

enum NllLayout : uint32_t { kNllRows = 0, kNllPlanes = 1 };  // [N, C] / [N, C, HW]
enum NllReduction : uint32_t { kNllNone = 0, kNllMean = 1, kNllSum = 2 };

// Lanes are the samples ([N, C]: one per row; [N, C, HW]: one per pixel, tiles never cross an image).
struct NllTiling {
  uint32_t layout, reduction;
  uint64_t n, c, hw;            // [N, C] is n = N, hw = 1
  uint32_t tile;                // lanes per tile (multiple of 64)
  uint32_t chunk;               // classes per UB block
  uint64_t lanes_per_core;      // of the flattened n*hw lanes (a multiple of tile, or of hw pieces)
  uint32_t block_dim;
  uint32_t has_weight;
  uint32_t has_ignore;          // ignore_index fits int32 (else no target can equal it)
  int32_t ignore_index;
  uint32_t pick;                // forward, [N, C] with C >= kNllPickMinClasses: x[lane, target] is read by
                                // the scalar unit (GlobalTensor::GetValue), not as [lanes x classes] blocks
};

// From this many classes on, reading each lane's one input element beats moving its whole row into UB.
constexpr uint64_t kNllPickMinClasses = 32;

NllTiling nll_tiling(uint32_t layout, uint32_t reduction, uint64_t n, uint64_t c, uint64_t hw, uint32_t elem_bytes,
                     const SocInfo& soc, bool forward);

}  // namespace npu_kernels

#define NPU_NLL_DECL(T)                                                                                          \
  extern "C" void nll_fwd_kernel_##T(uint8_t* x, uint8_t* target, uint8_t* weight, uint8_t* out, uint8_t* partial, \
                                     uint8_t* tiling);                                                           \
  extern "C" void nll_reduce_kernel_##T(uint8_t* partial, uint8_t* out, uint8_t* total_weight, uint8_t* tiling);  \
  extern "C" void nll_bwd_kernel_##T(uint8_t* go, uint8_t* target, uint8_t* weight, uint8_t* total_weight,        \
                                     uint8_t* gx, uint8_t* tiling);
NPU_NLL_DECL(float)
NPU_NLL_DECL(half)
NPU_NLL_DECL(bf16)
#undef NPU_NLL_DECL
