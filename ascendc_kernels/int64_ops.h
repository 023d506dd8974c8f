// Exact int64 add / sub / mul / compares / max / min in one vector kernel. The 2201 vector unit has no
// int64 arithmetic: each tile of int64 values is loaded as its 32-bit words, split into low and high
// word tiles with Gather, computed with int32 instructions (an explicit carry / borrow from an unsigned
// compare, the low words' full product from 16-bit limbs, a lexicographic signed-high / unsigned-low
// compare), and joined back with Gather -- one pass over GM instead of a kernel launch per word
// operation.
#pragma once
#include <cstdint>

#include "tiling_common.h"

namespace npu_kernels {

enum class I64Op : uint32_t { kAdd, kSub, kMul, kEq, kNe, kLt, kLe, kGt, kGe, kMax, kMin };

constexpr bool I64OpIsCompare(I64Op op) { return op >= I64Op::kEq && op <= I64Op::kGe; }

struct Int64Tiling {
  uint64_t total;            // elements
  uint64_t per_core;
  uint32_t tile;             // elements per tile (multiple of 256)
  uint32_t block_dim;
  uint32_t op;               // I64Op
  uint32_t a_scalar, b_scalar;  // operand given as the words below instead of a tensor
  int32_t a_lo, a_hi, b_lo, b_hi;
};

Int64Tiling int64_tiling(uint64_t total, I64Op op, const SocInfo& soc);

}  // namespace npu_kernels

// a, b: int64 [total] (ignored when a_scalar / b_scalar); y: int64 [total], or bool for compares.
extern "C" void int64_binary_kernel(uint8_t* a, uint8_t* b, uint8_t* y, uint8_t* tiling);
