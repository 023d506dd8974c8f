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

// out[b] (B x M x N, contiguous, preallocated) = epilogue(a[b] · b[b]) with a: [B, M, K],
// b: [B, K, N] (any strides; row-major and column-major matrices are read natively, other
// layouts are made contiguous first; batch stride 0 = broadcast). `op` names the ATen op in errors.
void CubeBatchedMatmul(const char* op, const at::Tensor& a, const at::Tensor& b, const at::Tensor& out,
                       const MatmulEpilogue& ep = {});

// y = scale * x, as `dtype` (float or x's dtype), contiguous, on the vector cores.
at::Tensor ScaleCast(const at::Tensor& x, double scale, c10::ScalarType dtype);

}  // namespace torch_ops_nn
