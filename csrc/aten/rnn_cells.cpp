// The fused LSTM and GRU cells that ATen's nn.LSTM / nn.GRU / nn.LSTMCell / nn.GRUCell call for any
// non-CPU input (aten::lstm & co. compute the two gate matmuls with linear, then one fused cell per
// step). They have no CPU kernel, so without these the CPU fallback fails outright.
//
// The LSTM cell of float32 tensors runs as one Ascend C kernel (lstm_cell.h) when no gradient is
// needed; otherwise, and for the GRU cell and 16-bit dtypes, each cell is composed of the native
// elementwise kernels, by the documented equations:
//   LSTM: gates = input_gates + hidden_gates (+ input_bias + hidden_bias), chunks i, f, g, o;
//         i, f, o = sigmoid, g = tanh; cy = f * cx + i * g; hy = o * tanh(cy).
//   GRU:  chunks r, z, n of the input and hidden gates (each with its bias); r, z = sigmoid(ig + hg);
//         n = tanh(ig_n + r * hg_n); hy = n + z * (hx - n)   (= (1 - z) * n + z * hx).
// The workspace output holds the activated gates (LSTM: i, f, g, o; GRU: r, z, ig_n, hg_n, n), the
// shapes ATen's fused-cell backward expects. Registered for the npu and its autograd key: every op of
// the composition is differentiable, so autograd gives the gradients (the fused cells' own backward
// ops are not needed).
#include <ATen/TensorOperators.h>
#include <c10/core/GradMode.h>
#include <ATen/core/Tensor.h>
#include <ATen/ops/cat.h>
#include <ATen/ops/sigmoid.h>
#include <ATen/ops/tanh.h>
#include <torch/library.h>

#include <optional>
#include <tuple>

#include "aten/kernel_launch.h"
#include "aten/op_common.h"
#include "lstm_cell.h"

namespace torch_ops_nn {

TORCH_OPS_NN_REGISTER_KERNEL(lstm_cell_kernel);

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

bool AnyRequiresGrad(std::initializer_list<const Tensor*> ts) {
  for (const Tensor* t : ts)
    if (t->defined() && t->requires_grad()) return true;
  return false;
}

// The kernel path (float32); nullopt when it does not apply.
std::optional<std::tuple<Tensor, Tensor, Tensor>> LstmCellKernel(const Tensor& ig, const Tensor& hg, const Tensor& cx,
                                                                  const std::optional<Tensor>& ib,
                                                                  const std::optional<Tensor>& hb) {
  for (const Tensor* t : {&ig, &hg, &cx})
    if (t->scalar_type() != c10::kFloat) return std::nullopt;
  for (const auto* b : {&ib, &hb})
    if (HasBias(*b) && (*b)->scalar_type() != c10::kFloat) return std::nullopt;
  const c10::DeviceIndex dev = ig.device().index();
  const int64_t batch = ig.size(0), hidden = cx.size(1);
  if (batch >= (int64_t(1) << 31) || hidden >= (int64_t(1) << 24)) return std::nullopt;
  const auto t = npu_kernels::lstm_cell_tiling(uint32_t(batch), uint32_t(hidden), HasBias(ib) || HasBias(hb),
                                               SocInfoFor(dev));
  if (!t.ok) return std::nullopt;
  Tensor bias;
  if (HasBias(ib) && HasBias(hb)) bias = Contiguous(*ib + *hb);
  else if (HasBias(ib) || HasBias(hb)) bias = Contiguous(HasBias(ib) ? *ib : *hb);
  const Tensor a = Contiguous(ig), b = Contiguous(hg), c = Contiguous(cx);
  Tensor hy = NpuEmpty({batch, hidden}, c10::kFloat, dev), cy = NpuEmpty({batch, hidden}, c10::kFloat, dev);
  Tensor ws = NpuEmpty({batch, 4 * hidden}, c10::kFloat, dev);
  KernelLaunch launch{"lstm_cell_kernel", ascendc_host::CoreType::AIV, t.block_dim, dev};
  if (LogDebugEnabled()) launch.detail = "batch=" + std::to_string(batch) + " hidden=" + std::to_string(hidden);
  LaunchKernel(std::move(launch), &lstm_cell_kernel, t, a.data_ptr(), b.data_ptr(),
               bias.defined() ? bias.data_ptr() : nullptr, c.data_ptr(), hy.data_ptr(), cy.data_ptr(), ws.data_ptr());
  return std::make_tuple(hy, cy, ws);
}

std::tuple<Tensor, Tensor, Tensor> fused_lstm_cell(const Tensor& input_gates, const Tensor& hidden_gates,
                                                   const Tensor& cx, const std::optional<Tensor>& input_bias,
                                                   const std::optional<Tensor>& hidden_bias) {
  CheckCell("_thnn_fused_lstm_cell", input_gates, hidden_gates, cx, 4, input_bias, hidden_bias);
  const Tensor none;
  const bool grad = at::GradMode::is_enabled() &&
                    AnyRequiresGrad({&input_gates, &hidden_gates, &cx, input_bias ? &*input_bias : &none,
                                     hidden_bias ? &*hidden_bias : &none});
  if (!grad)
    if (auto r = LstmCellKernel(input_gates, hidden_gates, cx, input_bias, hidden_bias)) return *r;
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
NPU_ATEN_LIBRARY_IMPL(m) { TORCH_OPS_NN_RNN_CELL_IMPLS(m); }
NPU_ATEN_AUTOGRAD_LIBRARY_IMPL(m) { TORCH_OPS_NN_RNN_CELL_IMPLS(m); }
