// Random ops on npu: uniform_, normal_, bernoulli_(float p), native_dropout and native_dropout_backward.
// Seeds and Philox offsets come from the npu Generator; the Ascend C kernels in ascendc_kernels/random*
// turn (seed, offset, element index) into numbers, so results never depend on the core split.
#include <ATen/core/DistributionsHelper.h>
#include <ATen/core/Tensor.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include <cmath>
#include <functional>
#include <memory>
#include <optional>
#include <tuple>

#include "aten/graph_guard.h"
#include "aten/kernel_launch.h"
#include "aten/op_common.h"
#include "core/npu_generator.h"
#include "random.h"

namespace torch_ops_nn {
namespace {

using at::Tensor;

TORCH_OPS_NN_REGISTER_KERNEL(random_kernel);
TORCH_OPS_NN_REGISTER_KERNEL(dropout_bwd_kernel);

// Random numbers inside an npu graph: a captured launch must draw new numbers at every replay. Its
// kernel reads (seed, base offset) from four device words per generator and graph, and adds its own
// offset within the graph (the numbers the graph's earlier random launches draw). Each replay takes
// the graph's total from the generator when it is enqueued -- as the same launches would eagerly --
// and writes the words first thing in its task.
struct GraphRng {
  at::Generator gen;
  at::Tensor words;       // 4 x 32 bits, in the graph's persistent pool (kernels read them at every replay)
  uint64_t consumed = 0;  // numbers drawn per replay so far
};

struct Draw {
  uint64_t seed, offset;
  void* philox;  // the graph's words, or nullptr (eager: seed and offset are the tiling's)
};

Draw DrawNumbers(const std::optional<at::Generator>& generator, c10::DeviceIndex dev, uint64_t numel) {
  const at::Generator g = generator.has_value() && generator->defined() ? *generator : DefaultNpuGenerator(dev);
  auto* gen = at::check_generator<NpuGeneratorImpl>(g);
  npu_rt::Graph* graph = CapturingGraph();
  if (!graph) {
    auto [seed, offset] = gen->philox_seed_offset(numel);
    return {seed, offset, nullptr};
  }
  auto st = std::static_pointer_cast<GraphRng>(graph->Attachment(gen));
  if (!st) {
    st = std::make_shared<GraphRng>();
    st->gen = g;
    {
      PersistentAllocs persistent(graph);
      st->words = NpuEmpty({4}, c10::kInt, dev);
    }
    graph->Attach(gen, st);
    graph->AddReplayHook([st]() -> std::function<void()> {
      auto [seed, base] = at::check_generator<NpuGeneratorImpl>(st->gen)->philox_seed_offset(st->consumed);
      uint32_t* w = static_cast<uint32_t*>(st->words.data_ptr());
      return [w, seed = seed, base = base] {
        w[0] = static_cast<uint32_t>(seed);
        w[1] = static_cast<uint32_t>(seed >> 32);
        w[2] = static_cast<uint32_t>(base);
        w[3] = static_cast<uint32_t>(base >> 32);
      };
    });
  }
  const uint64_t offset = st->consumed;
  st->consumed += (numel + 3) / 4 * 4;  // the generator's own rounding
  return {0, offset, st->words.data_ptr()};
}

// Fills `self` (any strides) with kind's numbers: a contiguous result, copied in when self is not.
void LaunchRandom(const char* op, Tensor& self, uint32_t kind, float a, float b,
                  const std::optional<at::Generator>& generator, const Tensor& x = Tensor(),
                  const Tensor& mask = Tensor()) {
  const c10::DeviceIndex dev = self.device().index();
  c10::DeviceGuard guard(self.device());
  const uint64_t numel = static_cast<uint64_t>(self.numel());
  if (numel == 0) return;
  const Draw d = DrawNumbers(generator, dev, numel);
  auto t = npu_kernels::random_tiling(kind, numel, d.seed, d.offset, SocInfoFor(dev));
  t.a = a;
  t.b = b;
  Tensor out = self.is_contiguous() ? self : NpuEmpty(self.sizes(), self.scalar_type(), dev);
  auto k = PickFloatKernel(op, self.scalar_type(), &random_kernel_float, &random_kernel_half, &random_kernel_bf16);
  KernelLaunch launch{"random_kernel", ascendc_host::CoreType::AIV, t.block_dim, dev};
  if (LogDebugEnabled()) launch.detail = std::string(op) + " " + DescribeForLog({{"self", &self}});
  LaunchKernel(std::move(launch), k, t, x.defined() ? x.data_ptr() : nullptr, out.data_ptr(),
               mask.defined() ? mask.data_ptr() : nullptr, d.philox);
  if (!out.is_same(self)) self.copy_(out);
}

Tensor& uniform_(Tensor& self, double from, double to, std::optional<at::Generator> generator) {
  const char* op = "uniform_";
  CheckSameNpuDevice(op, {{"self", &self}});
  CheckFloatDtype(op, "self", self);
  TORCH_CHECK(from <= to, op, ": expects from <= to, but got from=", from, " and to=", to);
  TORCH_CHECK(std::isfinite(from) && std::isfinite(to), op, ": from and to must be finite, got from=", from,
              " and to=", to);
  LaunchRandom(op, self, npu_kernels::kRandUniform, static_cast<float>(from), static_cast<float>(to), generator);
  return self;
}

Tensor& normal_(Tensor& self, double mean, double std, std::optional<at::Generator> generator) {
  const char* op = "normal_";
  CheckSameNpuDevice(op, {{"self", &self}});
  TORCH_CHECK(std >= 0.0, op, ": expects std >= 0.0, but got std=", std);
  if (self.scalar_type() == c10::kComplexFloat) {
    // complex64 (torch.randn(..., dtype=torch.complex64)): each part normal with half the variance, as
    // PyTorch defines it (std / sqrt(2) on the float pairs).
    Tensor pairs = ComplexMemoryPairs(self);
    normal_(pairs, mean, std / std::sqrt(2.0), generator);
    return self;
  }
  CheckFloatDtype(op, "self", self);
  LaunchRandom(op, self, npu_kernels::kRandNormal, static_cast<float>(mean), static_cast<float>(std), generator);
  return self;
}

Tensor& bernoulli_float(Tensor& self, double p, std::optional<at::Generator> generator) {
  const char* op = "bernoulli_";
  CheckSameNpuDevice(op, {{"self", &self}});
  CheckFloatDtype(op, "self", self);
  TORCH_CHECK(p >= 0.0 && p <= 1.0, op, ": expects p to be in [0, 1], but got p=", p);
  LaunchRandom(op, self, npu_kernels::kRandBernoulli, static_cast<float>(p), 0.0f, generator);
  return self;
}

std::tuple<Tensor, Tensor> native_dropout(const Tensor& input, double p, std::optional<bool> train) {
  const char* op = "native_dropout";
  const c10::DeviceIndex dev = CheckSameNpuDevice(op, {{"input", &input}});
  CheckFloatDtype(op, "input", input);
  TORCH_CHECK(p >= 0.0 && p <= 1.0, op, ": dropout probability has to be between 0 and 1, but got ", p);
  c10::DeviceGuard guard(input.device());
  if (train.has_value() && !*train) {
    Tensor mask = NpuEmpty(input.sizes(), c10::kBool, dev);
    mask.fill_(true);
    return {input.clone(), mask};
  }
  Tensor x = input.contiguous();
  Tensor y = NpuEmpty(input.sizes(), input.scalar_type(), dev);
  Tensor mask = NpuEmpty(input.sizes(), c10::kBool, dev);
  const double keep = 1.0 - p;
  const float scale = keep > 0.0 ? static_cast<float>(1.0 / keep) : 0.0f;
  LaunchRandom(op, y, npu_kernels::kRandDropout, static_cast<float>(keep), scale, std::nullopt, x, mask);
  return {y, mask};
}

Tensor native_dropout_backward(const Tensor& grad_output, const Tensor& mask, double scale) {
  const char* op = "native_dropout_backward";
  const c10::DeviceIndex dev = CheckSameNpuDevice(op, {{"grad_output", &grad_output}, {"mask", &mask}});
  CheckFloatDtype(op, "grad_output", grad_output);
  TORCH_CHECK(mask.scalar_type() == c10::kBool || mask.scalar_type() == c10::kByte, op,
              ": mask must be bool or uint8, got ", mask.scalar_type());
  TORCH_CHECK(grad_output.sizes() == mask.sizes(), op, ": grad_output shape ", grad_output.sizes(),
              " does not match mask shape ", mask.sizes());
  c10::DeviceGuard guard(grad_output.device());
  Tensor g = grad_output.contiguous(), m = mask.contiguous();
  Tensor gx = NpuEmpty(grad_output.sizes(), grad_output.scalar_type(), dev);
  const uint64_t numel = static_cast<uint64_t>(g.numel());
  if (numel == 0) return gx;
  auto t = npu_kernels::random_tiling(npu_kernels::kRandDropout, numel, 0, 0, SocInfoFor(dev));
  t.b = static_cast<float>(scale);
  auto k = PickFloatKernel(op, g.scalar_type(), &dropout_bwd_kernel_float, &dropout_bwd_kernel_half,
                           &dropout_bwd_kernel_bf16);
  LaunchKernel(KernelLaunch{"dropout_bwd_kernel", ascendc_host::CoreType::AIV, t.block_dim, dev}, k, t, g.data_ptr(),
               m.data_ptr(), gx.data_ptr());
  return gx;
}

}  // namespace
}  // namespace torch_ops_nn

NPU_ATEN_LIBRARY_IMPL(m) {
  m.impl("uniform_", TORCH_FN(torch_ops_nn::uniform_));
  m.impl("normal_", TORCH_FN(torch_ops_nn::normal_));
  m.impl("bernoulli_.float", TORCH_FN(torch_ops_nn::bernoulli_float));
  m.impl("native_dropout", TORCH_FN(torch_ops_nn::native_dropout));
  m.impl("native_dropout_backward", TORCH_FN(torch_ops_nn::native_dropout_backward));
}
