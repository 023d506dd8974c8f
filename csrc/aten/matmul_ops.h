// Layer 5 matmul helpers shared with the convolution ops (conv.cpp): the batched cube GEMM with
// an epilogue, on npu tensors.
#pragma once
#include <ATen/core/Tensor.h>

namespace torch_ops_nn {

// Epilogue applied on the accumulator tile before it leaves the cube:
//   y = acc * scale[col] + shift[col] + residual[b][row][col]; relu (rowwise: scale[row], shift[row]).
// scale / shift: float npu vectors of the output's column count (or undefined); residual: same
// dtype as the output, [B, M, N] with the given strides (or undefined).
struct MatmulEpilogue {
  at::Tensor scale, shift, residual;
  bool relu = false;
  bool rowwise = false;  // scale / shift have M elements, indexed by row
  // Float HF32 mode: -1 follows torch.get_float32_matmul_precision() ("highest" = off), as matmul
  // ops do; 0 / 1 forced (convolutions pass ConvAllowHf32()).
  int8_t hf32 = -1;
  // Optional: b (stored transposed, one matrix for all batches) already in the kernel's L1 panel
  // order, [ceil(K/C0)][N16][C0] zero padded (C0 = 32 B / element) -- a 1x1 convolution's cached
  // fractal weights. Used when b is read transposed; b itself still gives the shapes.
  at::Tensor b_nz;
  // Optional: b (stored transposed, one matrix for all batches) copied row-major K x N -- a Linear's
  // cached weight for the small-M vector GEMV (gemv.h), which streams B by rows.
  at::Tensor b_kn;
};

// torch.npu.conv.allow_hf32: float convolutions (forward and backward, the fused conv too) may run
// the cube in HF32 mode. On by default, as in torch_npu (and as torch.backends.cudnn.allow_tf32 on
// CUDA); matmul ops follow torch.set_float32_matmul_precision (torch.npu.matmul.allow_hf32, off).
bool ConvAllowHf32();
void SetConvAllowHf32(bool on);

// HF32 is a permission, not a duty. On this host model every float element LoadData puts in L0A /
// L0B under HF32 mode is split into two bfloat16 halves for the AMX tiles, and an AMX tile always
// computes 16 rows: that pays only when each split element meets enough of the other operand.
// Below these extents the kernels keep HF32 mode off and run the full-float FMA micro-kernels,
// faster there (measured 2-core ratios below) and exact to float:
//   - a GEMM (matmul ops, 1x1 convolutions): M and N both above 16. 8x2048x1000: 0.57 ms float,
//     0.77 ms HF32; 16x1024x4096: 1.27 / 1.39 ms; from 32 rows HF32 is as fast or faster.
//   - the convolution kernel (forward, grad_input): at least 16 output pixels per image (its pixel
//     tiles never span images). ResNet-18 b4 64x64's 2x2 layer, 512 channels: 0.78 / 1.36 ms.
//   - grad_weight: more than 64 pixels summed (the K of its GEMM). 16 pixels: 1.63 / 2.28 ms.
constexpr int64_t kHf32MinGemmRows = 17;
constexpr int64_t kHf32MinConvPixels = 16;
constexpr int64_t kHf32MinGradWeightPixels = 65;

// out[b] (B x M x N, contiguous, preallocated) = epilogue(a[b] · b[b]) with a: [B, M, K],
// b: [B, K, N] (any strides; row-major and column-major matrices are read natively, other
// layouts are made contiguous first; batch stride 0 = broadcast). `op` names the ATen op in errors.
void CubeBatchedMatmul(const char* op, const at::Tensor& a, const at::Tensor& b, const at::Tensor& out,
                       const MatmulEpilogue& ep = {});

// y = scale * x, as `dtype` (float or x's dtype), contiguous, on the vector cores.
at::Tensor ScaleCast(const at::Tensor& x, double scale, c10::ScalarType dtype);

}  // namespace torch_ops_nn
