// The fused LSTM and GRU cells that ATen's nn.LSTM / nn.GRU / nn.LSTMCell / nn.GRUCell call for any
// non-CPU input (aten::lstm & co. compute the two gate matmuls with linear, then one fused cell per
// step). They have no CPU kernel, so without these the CPU fallback fails outright.
//
// Each cell is composed of the native elementwise kernels, by the documented equations:
//   LSTM: gates = input_gates + hidden_gates (+ input_bias + hidden_bias), chunks i, f, g, o;
//         i, f, o = sigmoid, g = tanh; cy = f * cx + i * g; hy = o * tanh(cy).
//   GRU:  chunks r, z, n of the input and hidden gates (each with its bias); r, z = sigmoid(ig + hg);
//         n = tanh(ig_n + r * hg_n); hy = n + z * (hx - n)   (= (1 - z) * n + z * hx).
// The workspace output holds the activated gates (LSTM: i, f, g, o; GRU: r, z, ig_n, hg_n, n), the
// shapes ATen's fused-cell backward expects. Registered for the npu and its autograd key: every op used
// is differentiable, so autograd gives the gradients (the fused cells' own backward ops are not needed).
#include <ATen/TensorOperators.h>
#include <ATen/core/Tensor.h>
#include <ATen/ops/cat.h>
#include <ATen/ops/sigmoid.h>
#include <ATen/ops/tanh.h>
#include <torch/library.h>

#include <optional>
#include <tuple>

#include "aten/op_common.h"

namespace torch_ops_nn {
namespace {

using at::Tensor;

void CheckCell(const char* op, const Tensor& ig, const Tensor& hg, const Tensor& state, int64_t gates,
               const std::optional<Tensor>& ib, const std::optional<Tensor>& hb) {
  CheckSameNpuDevice(op, {{"input_gates", &ig}, {"hidden_gates", &hg}, {"state", &state}});
  TORCH_CHECK(ig.dim() == 2 && ig.sizes() == hg.sizes(), op, ": input_gates ", ig.sizes(), " and hidden_gates ",
              hg.sizes(), " must be 2-D and of the same shape");
  TORCH_CHECK(state.dim() == 2 && state.size(0) == ig.size(0) && state.size(1) * gates == ig.size(1), op,
              ": the state ", state.sizes(), " must be [batch, hidden] with gates [batch, ", gates,
              " * hidden], got gates ", ig.sizes());
  for (const auto* b : {&ib, &hb})
    if (b->has_value() && (*b)->defined())
      TORCH_CHECK((*b)->numel() == ig.size(1), op, ": a bias of ", (*b)->numel(), " elements for gates of width ",
                  ig.size(1));
}

bool HasBias(const std::optional<Tensor>& b) { return b.has_value() && b->defined(); }

std::tuple<Tensor, Tensor, Tensor> fused_lstm_cell(const Tensor& input_gates, const Tensor& hidden_gates,
                                                   const Tensor& cx, const std::optional<Tensor>& input_bias,
                                                   const std::optional<Tensor>& hidden_bias) {
  CheckCell("_thnn_fused_lstm_cell", input_gates, hidden_gates, cx, 4, input_bias, hidden_bias);
  Tensor gates = input_gates + hidden_gates;
  if (HasBias(input_bias)) gates = gates + *input_bias;
  if (HasBias(hidden_bias)) gates = gates + *hidden_bias;
  const auto c = gates.chunk(4, 1);
  const Tensor i = at::sigmoid(c[0]), f = at::sigmoid(c[1]), g = at::tanh(c[2]), o = at::sigmoid(c[3]);
  const Tensor cy = f * cx + i * g;
  const Tensor hy = o * at::tanh(cy);
  return {hy, cy, at::cat({i, f, g, o}, 1).detach()};
}

std::tuple<Tensor, Tensor> fused_gru_cell(const Tensor& input_gates, const Tensor& hidden_gates, const Tensor& hx,
                                          const std::optional<Tensor>& input_bias,
                                          const std::optional<Tensor>& hidden_bias) {
  CheckCell("_thnn_fused_gru_cell", input_gates, hidden_gates, hx, 3, input_bias, hidden_bias);
  const Tensor ig = HasBias(input_bias) ? input_gates + *input_bias : input_gates;
  const Tensor hg = HasBias(hidden_bias) ? hidden_gates + *hidden_bias : hidden_gates;
  const auto a = ig.chunk(3, 1), b = hg.chunk(3, 1);
  const Tensor r = at::sigmoid(a[0] + b[0]), z = at::sigmoid(a[1] + b[1]);
  const Tensor n = at::tanh(a[2] + r * b[2]);
  const Tensor hy = n + z * (hx - n);
  return {hy, at::cat({r, z, a[2], b[2], n}, 1).detach()};
}

}  // namespace
}  // namespace torch_ops_nn

#define TORCH_OPS_NN_RNN_CELL_IMPLS(m)                                           \
  m.impl("_thnn_fused_lstm_cell", TORCH_FN(torch_ops_nn::fused_lstm_cell)); \
  m.impl("_thnn_fused_gru_cell", TORCH_FN(torch_ops_nn::fused_gru_cell))
TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) { TORCH_OPS_NN_RNN_CELL_IMPLS(m); }
TORCH_LIBRARY_IMPL(aten, AutogradPrivateUse1, m) { TORCH_OPS_NN_RNN_CELL_IMPLS(m); }
