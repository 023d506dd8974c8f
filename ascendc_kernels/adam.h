// Fused optimizer steps for one float32 parameter on the vector cores.
//
// Adam / AdamW (PyTorch's _fused_adam_ / _fused_adamw_),
// one pass: each tile of p, g, m, v (and vmax with amsgrad) crosses GM -> UB once and p, m, v (and the
// unscaled g, vmax) cross back once. With t the step (read from the device tensor on the scalar unit):
//   g /= grad_scale (written back, as the fused kernels do);  g = -g under maximize
//   AdamW: p *= 1 - lr * wd;   Adam: g += wd * p
//   m = beta1 m + (1 - beta1) g,   v = beta2 v + (1 - beta2) g^2   (amsgrad: vmax = max(vmax, v))
//   p -= lr / (1 - beta1^t) * m / (sqrt(v or vmax) / sqrt(1 - beta2^t) + eps)
// beta^t by binary exponentiation in double on the scalar unit (t is a whole step count).
#pragma once
#include <cstdint>

#include "tiling_common.h"

namespace npu_kernels {

struct AdamTiling {
  uint64_t n = 0, per_core = 0;  // elements; elements per core (a multiple of 64)
  uint32_t tile = 0;             // elements per UB tile (a multiple of 64)
  uint32_t block_dim = 1;
  float lr = 0, beta1 = 0, beta2 = 0, weight_decay = 0, eps = 0;
  uint32_t adamw = 0, amsgrad = 0, maximize = 0, has_scale = 0;
};

AdamTiling adam_tiling(uint64_t n, bool amsgrad, const SocInfo& soc);

// SGD (PyTorch's _fused_sgd_), one pass over p, g (and the momentum buffer b):
//   g /= grad_scale (written back);  g = -g under maximize;  g += wd * p
//   momentum: b = g on the first step, else b = momentum * b + (1 - dampening) * g;
//             g = g + momentum * b (nesterov) or b
//   p -= lr * g
struct SgdTiling {
  uint64_t n = 0, per_core = 0;
  uint32_t tile = 0, block_dim = 1;
  float lr = 0, weight_decay = 0, momentum = 0, dampening = 0;
  uint32_t nesterov = 0, maximize = 0, first_step = 0, has_scale = 0, has_lr_tensor = 0;
};

SgdTiling sgd_tiling(uint64_t n, const SocInfo& soc);

}  // namespace npu_kernels

// p, g, m, v, vmax (null without amsgrad): float32 [n]; step: float32 [1]; scale: float32 [1] or null.
// p, g, buf (null without momentum): float32 [n]; lr: float32 [1] (has_lr_tensor) or null; scale as Adam's.
extern "C" void sgd_kernel(uint8_t* p, uint8_t* g, uint8_t* buf, uint8_t* lr, uint8_t* scale, uint8_t* tiling);
extern "C" void adam_kernel(uint8_t* p, uint8_t* g, uint8_t* m, uint8_t* v, uint8_t* vmax, uint8_t* step,
                            uint8_t* scale, uint8_t* tiling);
