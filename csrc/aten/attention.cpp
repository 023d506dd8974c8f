// _native_multi_head_attention on npu: the fast path nn.MultiheadAttention (and so
// nn.TransformerEncoderLayer, torchvision's ViT) takes in inference. A composition of the npu ops
// (linear on the cube, softmax, masked_fill) with PyTorch's semantics: q scaled by 1/sqrt(head dim);
// masks of mask_type 0 ([T, T] attention mask), 1 ([B, T] key padding mask) or 2 (broadcastable to
// [B, H, T, T]) act as booleans, true / nonzero = masked out (as _masked_softmax; a fully masked row
// is NaN, as on the CPU), except on PyTorch's fused branch (self-attention, head dim % 8 == 0, no
// weights returned) where a float mask is added to the scores, as scaled_dot_product_attention
// does; weights averaged over heads when asked. Nested tensors keep the CPU fallback.
#include <ATen/ATen.h>
#include <ATen/NestedTensorImpl.h>
#include <ATen/core/Tensor.h>
#include <ATen/native/nested/NestedTensorUtils.h>
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
#include <vector>
#include <algorithm>

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

// ---- nn.TransformerEncoder's nested-tensor fast path ----------------------------------------------
// In eval mode with a src_key_padding_mask, nn.TransformerEncoder packs the unpadded rows of each
// sequence into one nested tensor (_nested_tensor_from_mask), runs every layer on it
// (_transformer_encoder_layer_fwd) and pads the result back (to_padded_tensor). ATen's nested kernels
// exist for CPU and CUDA only; on npu a nested tensor is its contiguous buffer of [len_b, E] pieces,
// and a layer runs on the padded batch with the pieces' lengths as its key padding mask, which gives
// every real row the same result (padded keys get no attention weight; padded rows are dropped).

constexpr const char* kNested = "nested transformer encoder";

// The lengths of a left-aligned [B, S] mask (true = a real token), read back to the host.
at::Tensor MaskLengths(const char* op, const at::Tensor& t, const at::Tensor& mask) {
  TORCH_CHECK(t.dim() == 3, op, ": expected a 3-D [B, S, E] tensor, got ", t.dim(), "-D of shape ", t.sizes());
  TORCH_CHECK(mask.dim() == 2 && mask.size(0) == t.size(0) && mask.size(1) == t.size(1), op, ": mask of shape ",
              mask.sizes(), " does not match the tensor's [B, S] = [", t.size(0), ", ", t.size(1), "]");
  TORCH_CHECK(mask.scalar_type() == c10::kBool, op, ": mask must be bool, got ", mask.scalar_type());
  return mask.sum(1).to(c10::kCPU, c10::kLong);
}

bool MaskIsLeftAligned(const at::Tensor& mask, const at::Tensor& lengths) {
  const at::Tensor pos = at::arange(mask.size(1), mask.options().dtype(c10::kLong));
  return at::equal(pos.unsqueeze(0).lt(lengths.to(mask.device()).unsqueeze(1)), mask);
}

bool nested_tensor_from_mask_left_aligned(const at::Tensor& t, const at::Tensor& mask) {
  return MaskIsLeftAligned(mask, MaskLengths("_nested_tensor_from_mask_left_aligned", t, mask));
}

// Rows [b, :len_b] of `t` as a nested tensor of B pieces [len_b, E] (one contiguous buffer).
at::Tensor NestedFromPadded(const at::Tensor& t, const at::Tensor& lengths) {
  const int64_t B = t.size(0), E = t.size(2);
  at::Tensor sizes = at::empty({B, 2}, at::TensorOptions().dtype(c10::kLong));
  std::vector<at::Tensor> pieces;
  for (int64_t b = 0; b < B; ++b) {
    const int64_t len = lengths[b].item<int64_t>();
    sizes[b][0] = len;
    sizes[b][1] = E;
    pieces.push_back(t.select(0, b).narrow(0, 0, len));
  }
  return at::native::wrap_buffer(at::cat(pieces).reshape({-1}), sizes);
}

at::Tensor nested_tensor_from_mask(const at::Tensor& t, const at::Tensor& mask, bool mask_check) {
  const char* op = "_nested_tensor_from_mask";
  const at::Tensor lengths = MaskLengths(op, t, mask);
  TORCH_CHECK(!mask_check || MaskIsLeftAligned(mask, lengths), op,
              ": the mask must be left-aligned (each row's true entries first)");
  return NestedFromPadded(t, lengths);
}

// A nested tensor of 2-D pieces [len_b, E] padded to [B, max len, E] (or `output_size`) with `padding`.
at::Tensor PaddedFromNested(const char* op, const at::Tensor& nt, double padding,
                            at::OptionalIntArrayRef output_size, at::Tensor* lengths_out = nullptr) {
  const at::native::NestedTensorImpl* impl = at::native::get_nested_tensor_impl(nt);
  const at::Tensor sizes = impl->get_nested_sizes(), offsets = impl->get_storage_offsets();
  TORCH_CHECK(sizes.dim() == 2 && sizes.size(1) == 2, op, ": npu nested tensors of 2-D pieces only, got pieces of ",
              sizes.dim() == 2 ? sizes.size(1) : 0, " dims");
  TORCH_CHECK(at::native::nested_tensor_impl_is_contiguous(impl), op, ": the nested tensor must be contiguous");
  const int64_t B = sizes.size(0);
  int64_t rows = 0, cols = 0;
  for (int64_t b = 0; b < B; ++b) {
    rows = std::max(rows, sizes[b][0].item<int64_t>());
    cols = std::max(cols, sizes[b][1].item<int64_t>());
  }
  std::vector<int64_t> shape{B, rows, cols};
  if (output_size.has_value()) {
    TORCH_CHECK(output_size->size() == 3 && (*output_size)[0] == B && (*output_size)[1] >= rows &&
                    (*output_size)[2] >= cols,
                op, ": output_size ", *output_size, " cannot hold the pieces (at least [", B, ", ", rows, ", ", cols,
                "])");
    shape.assign(output_size->begin(), output_size->end());
  }
  const at::Tensor buffer = impl->get_unsafe_storage_as_tensor();
  at::Tensor out = at::full(shape, padding, buffer.options());
  if (lengths_out) *lengths_out = at::empty({B}, at::TensorOptions().dtype(c10::kLong));
  for (int64_t b = 0; b < B; ++b) {
    const int64_t r = sizes[b][0].item<int64_t>(), c = sizes[b][1].item<int64_t>();
    if (lengths_out) (*lengths_out)[b] = r;
    if (r * c == 0) continue;
    out.select(0, b).narrow(0, 0, r).narrow(1, 0, c).copy_(buffer.narrow(0, offsets[b].item<int64_t>(), r * c).view({r, c}));
  }
  return out;
}

at::Tensor nested_to_padded_tensor(const at::Tensor& nt, double padding, at::OptionalIntArrayRef output_size) {
  return PaddedFromNested("to_padded_tensor", nt, padding, output_size);
}

at::Tensor nested_transformer_encoder_layer_fwd(
    const at::Tensor& src, int64_t embed_dim, int64_t num_heads, const at::Tensor& qkv_weight,
    const at::Tensor& qkv_bias, const at::Tensor& proj_weight, const at::Tensor& proj_bias, bool use_gelu,
    bool norm_first, double eps, const at::Tensor& norm_weight_1, const at::Tensor& norm_bias_1,
    const at::Tensor& norm_weight_2, const at::Tensor& norm_bias_2, const at::Tensor& ffn_weight_1,
    const at::Tensor& ffn_bias_1, const at::Tensor& ffn_weight_2, const at::Tensor& ffn_bias_2,
    const std::optional<at::Tensor>& mask, std::optional<int64_t> mask_type) {
  TORCH_CHECK(!mask.has_value() || !mask->defined(), kNested,
              ": a nested src carries its own padding; an extra mask is not supported");
  at::Tensor lengths;
  const at::Tensor padded = PaddedFromNested(kNested, src, 0.0, std::nullopt, &lengths);
  const at::Tensor pos = at::arange(padded.size(1), padded.options().dtype(c10::kLong));
  const at::Tensor key_padding = pos.unsqueeze(0).ge(lengths.to(padded.device()).unsqueeze(1));  // true = padding
  const at::Tensor out = transformer_encoder_layer_fwd(
      padded, embed_dim, num_heads, qkv_weight, qkv_bias, proj_weight, proj_bias, use_gelu, norm_first, eps,
      norm_weight_1, norm_bias_1, norm_weight_2, norm_bias_2, ffn_weight_1, ffn_bias_1, ffn_weight_2, ffn_bias_2,
      key_padding, /*mask_type=*/1);
  return NestedFromPadded(out, lengths);
}

}  // namespace

NPU_ATEN_LIBRARY_IMPL(m) {
  m.impl("_native_multi_head_attention", TORCH_FN(native_multi_head_attention));
  m.impl("_transformer_encoder_layer_fwd", TORCH_FN(transformer_encoder_layer_fwd));
  m.impl("_nested_tensor_from_mask", TORCH_FN(nested_tensor_from_mask));
  m.impl("_nested_tensor_from_mask_left_aligned", TORCH_FN(nested_tensor_from_mask_left_aligned));
}

TORCH_LIBRARY_IMPL(aten, NestedTensorPrivateUse1, m) {
  m.impl("_transformer_encoder_layer_fwd", TORCH_FN(nested_transformer_encoder_layer_fwd));
  m.impl("to_padded_tensor", TORCH_FN(nested_to_padded_tensor));
}

}  // namespace torch_ops_nn
