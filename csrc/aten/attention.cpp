// _native_multi_head_attention on npu: the fast path nn.MultiheadAttention (and so
// nn.TransformerEncoderLayer, torchvision's ViT) takes in inference. A composition of the npu ops
// (linear on the cube, softmax, masked_fill) with PyTorch's semantics: q scaled by 1/sqrt(head dim);
// masks of mask_type 0 ([T, T] attention mask), 1 ([B, T] key padding mask) or 2 (broadcastable to
// [B, H, T, T]) act as booleans, true / nonzero = masked out (as _masked_softmax; a fully masked row
// is NaN, as on the CPU), except on PyTorch's fused branch (self-attention, head dim % 8 == 0, no
// weights returned) where a float mask is added to the scores, as scaled_dot_product_attention
// does; weights averaged over heads when asked. Nested tensors keep the CPU fallback.
#include <ATen/core/Tensor.h>
#include <ATen/ops/empty_like.h>
#include <ATen/ops/gelu.h>
#include <ATen/ops/layer_norm.h>
#include <ATen/ops/relu.h>
#include <ATen/ops/linear.h>
#include <ATen/ops/masked_fill.h>
#include <ATen/ops/matmul.h>
#include <ATen/ops/softmax.h>
#include <torch/library.h>

#include <cmath>
#include <limits>
#include <optional>
#include <tuple>

#include "aten/op_common.h"
#include "core/cpu_fallback.h"

namespace torch_ops_nn {
namespace {

constexpr const char* kOp = "_native_multi_head_attention";

std::tuple<at::Tensor, at::Tensor> Fallback(const at::Tensor& query, const at::Tensor& key, const at::Tensor& value,
                                            int64_t embed_dim, int64_t num_head, const at::Tensor& qkv_weight,
                                            const at::Tensor& qkv_bias, const at::Tensor& proj_weight,
                                            const at::Tensor& proj_bias, const std::optional<at::Tensor>& mask,
                                            bool need_weights, bool average_attn_weights,
                                            std::optional<int64_t> mask_type) {
  c10::IValue m = mask.has_value() ? c10::IValue(*mask) : c10::IValue();
  c10::IValue mt = mask_type.has_value() ? c10::IValue(*mask_type) : c10::IValue();
  auto out = CallCpuFallback("aten::_native_multi_head_attention", "",
                             {query, key, value, embed_dim, num_head, qkv_weight, qkv_bias, proj_weight, proj_bias, m,
                              need_weights, average_attn_weights, mt});
  return {out[0].toTensor(), out[1].toTensor()};
}

// [B, T, D] -> [B, H, T, D / H]
at::Tensor SplitHeads(const at::Tensor& x, int64_t heads) {
  return x.view({x.size(0), x.size(1), heads, x.size(2) / heads}).transpose(1, 2);
}

std::tuple<at::Tensor, at::Tensor> native_multi_head_attention(
    const at::Tensor& query, const at::Tensor& key, const at::Tensor& value, int64_t embed_dim, int64_t num_head,
    const at::Tensor& qkv_weight, const at::Tensor& qkv_bias, const at::Tensor& proj_weight,
    const at::Tensor& proj_bias, const std::optional<at::Tensor>& mask, bool need_weights, bool average_attn_weights,
    std::optional<int64_t> mask_type) {
  const int64_t D = embed_dim;
  if (query.is_nested() || key.is_nested() || value.is_nested())
    return Fallback(query, key, value, embed_dim, num_head, qkv_weight, qkv_bias, proj_weight, proj_bias, mask,
                    need_weights, average_attn_weights, mask_type);
  TORCH_CHECK(query.dim() == 3, kOp, ": expected 3-D `query`, got ", query.dim(), "-D tensor");
  TORCH_CHECK(query.size(2) == D, kOp, ": passed-in embed_dim ", D, " didn't match last dim of query ",
              query.size(2));
  TORCH_CHECK(key.dim() == 3 && value.dim() == 3, kOp, ": expected 3-D `key` and `value`, got ", key.dim(), "-D and ",
              value.dim(), "-D tensors");
  TORCH_CHECK(query.sizes() == key.sizes() && key.sizes() == value.sizes(), kOp,
              ": expected `query`/`key`/`value` shapes to match, got ", query.sizes(), ", ", key.sizes(), ", ",
              value.sizes());
  TORCH_CHECK(qkv_weight.dim() == 2 && qkv_weight.size(0) == 3 * D && qkv_weight.size(1) == D, kOp,
              ": expected `qkv_weight` of shape [", 3 * D, ", ", D, "], got ", qkv_weight.sizes());
  TORCH_CHECK(qkv_bias.dim() == 1 && qkv_bias.size(0) == 3 * D, kOp, ": expected `qkv_bias` of shape [", 3 * D,
              "], got ", qkv_bias.sizes());
  TORCH_CHECK(num_head > 0 && D % num_head == 0, kOp, ": `embed_dim` (", D, ") must divide evenly by `num_heads` (",
              num_head, ")");
  CheckSameNpuDevice(kOp, {{"query", &query}, {"key", &key}, {"value", &value}, {"qkv_weight", &qkv_weight},
                           {"qkv_bias", &qkv_bias}, {"proj_weight", &proj_weight}, {"proj_bias", &proj_bias}});
  if (query.numel() == 0) return {at::empty_like(query), at::Tensor()};
  const int64_t B = query.size(0), T = query.size(1), H = num_head, dh = D / H;

  at::Tensor q, k, v;
  const bool self_attention = query.is_same(key) && key.is_same(value);
  if (self_attention) {
    auto qkv = at::linear(query, qkv_weight, qkv_bias).chunk(3, -1);  // one [B, T, 3D] GEMM
    q = qkv[0], k = qkv[1], v = qkv[2];
  } else {
    auto w = qkv_weight.chunk(3, 0);
    auto b = qkv_bias.chunk(3, 0);
    q = at::linear(query, w[0], b[0]);
    k = at::linear(key, w[1], b[1]);
    v = at::linear(value, w[2], b[2]);
  }
  q = SplitHeads(q, H).div(std::sqrt(double(dh)));
  k = SplitHeads(k, H);
  v = SplitHeads(v, H);
  at::Tensor scores = at::matmul(q, k.transpose(-2, -1));  // [B, H, T, T]
  at::Tensor weights;
  if (mask.has_value() && mask->defined()) {
    at::Tensor m = *mask;
    const int64_t type = mask_type.value_or(2);
    if (type == 0) {
      TORCH_CHECK(m.dim() == 2 && m.size(0) == T && m.size(1) == T, kOp, ": a mask of type 0 must be [", T, ", ", T,
                  "], got ", m.sizes());
      m = m.view({1, 1, T, T});
    } else if (type == 1) {
      TORCH_CHECK(m.dim() == 2 && m.size(0) == B && m.size(1) == T, kOp, ": a mask of type 1 must be [", B, ", ", T,
                  "], got ", m.sizes());
      m = m.view({B, 1, 1, T});
    }
    if (self_attention && dh % 8 == 0 && !need_weights && m.scalar_type() != c10::kBool) {
      // PyTorch's fused branch: scaled_dot_product_attention with the float mask added to the scores.
      weights = at::softmax(scores.add(m), -1);
    } else {
      // _masked_softmax: the mask as bool (a float mask: nonzero = masked out); a fully masked row
      // is NaN, as on the CPU.
      if (m.scalar_type() != c10::kBool) m = m.ne(0);
      weights = at::softmax(scores.masked_fill(m.expand_as(scores), -std::numeric_limits<double>::infinity()), -1);
    }
  } else {
    weights = at::softmax(scores, -1);
  }
  at::Tensor ctx = at::matmul(weights, v).transpose(1, 2).reshape({B, T, D});
  at::Tensor out = at::linear(ctx, proj_weight, proj_bias);
  if (!need_weights) return {out, at::Tensor()};
  if (average_attn_weights) weights = weights.sum(1).div(double(H));
  return {out, weights};
}

// nn.TransformerEncoderLayer's inference fast path: attention (above), residual, layer norms and the
// feed-forward block (linear, ReLU or GELU, linear), post- or pre-norm, as PyTorch composes it.
at::Tensor transformer_encoder_layer_fwd(
    const at::Tensor& src, int64_t embed_dim, int64_t num_heads, const at::Tensor& qkv_weight,
    const at::Tensor& qkv_bias, const at::Tensor& proj_weight, const at::Tensor& proj_bias, bool use_gelu,
    bool norm_first, double eps, const at::Tensor& norm_weight_1, const at::Tensor& norm_bias_1,
    const at::Tensor& norm_weight_2, const at::Tensor& norm_bias_2, const at::Tensor& ffn_weight_1,
    const at::Tensor& ffn_bias_1, const at::Tensor& ffn_weight_2, const at::Tensor& ffn_bias_2,
    const std::optional<at::Tensor>& mask, std::optional<int64_t> mask_type) {
  if (src.is_nested()) {
    c10::IValue m = mask.has_value() ? c10::IValue(*mask) : c10::IValue();
    c10::IValue mt = mask_type.has_value() ? c10::IValue(*mask_type) : c10::IValue();
    return CallCpuFallback("aten::_transformer_encoder_layer_fwd", "",
                           {src, embed_dim, num_heads, qkv_weight, qkv_bias, proj_weight, proj_bias, use_gelu,
                            norm_first, eps, norm_weight_1, norm_bias_1, norm_weight_2, norm_bias_2, ffn_weight_1,
                            ffn_bias_1, ffn_weight_2, ffn_bias_2, m, mt})[0]
        .toTensor();
  }
  if (src.numel() == 0) return src.clone();
  auto norm = [&](const at::Tensor& x, const at::Tensor& w, const at::Tensor& b) {
    return at::layer_norm(x, {embed_dim}, w, b, eps, true);
  };
  at::Tensor x = norm_first ? norm(src, norm_weight_1, norm_bias_1) : src;
  x = std::get<0>(native_multi_head_attention(x, x, x, embed_dim, num_heads, qkv_weight, qkv_bias, proj_weight,
                                              proj_bias, mask, false, true, mask_type));
  x = x.add(src);
  if (!norm_first) x = norm(x, norm_weight_1, norm_bias_1);
  const at::Tensor residual = x;
  if (norm_first) x = norm(x, norm_weight_2, norm_bias_2);
  x = at::linear(x, ffn_weight_1, ffn_bias_1);
  x = use_gelu ? at::gelu(x) : at::relu(x);
  x = at::linear(x, ffn_weight_2, ffn_bias_2).add(residual);
  if (!norm_first) x = norm(x, norm_weight_2, norm_bias_2);
  return x;
}

}  // namespace

NPU_ATEN_LIBRARY_IMPL(m) {
  m.impl("_native_multi_head_attention", TORCH_FN(native_multi_head_attention));
  m.impl("_transformer_encoder_layer_fwd", TORCH_FN(transformer_encoder_layer_fwd));
}

}  // namespace torch_ops_nn
