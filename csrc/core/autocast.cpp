// torch.autocast("npu"): CUDA's autocast policy, op for op, from the op lists ATen publishes for
// backends to share (ATen/autocast_mode.h); the Ascend cube takes the same 16-bit inputs with 32-bit
// accumulation as CUDA's tensor cores, and a torch_npu user expects CUDA's dtypes.
//   lower_precision_fp  convolutions, matmuls, RNN cells, attention: cast to the autocast dtype
//   fp32                exp / log / pow family, norms, losses, upsampling: cast to float32
//   fp32_set_opt_dtype  softmax, log_softmax, sum, prod, cumsum, vector norms: dtype=float32 unless given
//   fp32_append_dtype   norm.Scalar / norm.ScalarOpt_dim: redispatched with dtype=float32
//   promote             mixed-dtype inputs run in the widest one (addcmul, index_put, scatter_add...)
// binary_cross_entropy refuses under autocast, as on CUDA (it is unsafe in 16 bits; the message
// points to binary_cross_entropy_with_logits). Every other op runs untouched.
#include <ATen/autocast_mode.h>
#include <c10/util/Exception.h>
#include <torch/library.h>

namespace {
using at::autocast::CastPolicy;

at::Tensor BinaryCrossEntropyBanned(const at::Tensor&, const at::Tensor&, const std::optional<at::Tensor>&, int64_t) {
  TORCH_CHECK(false,
              "torch.nn.functional.binary_cross_entropy and torch.nn.BCELoss are unsafe to autocast on npu (as on "
              "CUDA): the 16-bit input of a sigmoid loses the precision the log needs. Many models apply a sigmoid "
              "right before binary_cross_entropy; combine the two with "
              "torch.nn.functional.binary_cross_entropy_with_logits or torch.nn.BCEWithLogitsLoss, which are safe "
              "to autocast, or run this loss outside autocast on float32 inputs.");
}
}  // namespace

TORCH_LIBRARY_IMPL(_, AutocastPrivateUse1, m) { m.fallback(torch::CppFunction::makeFallthrough()); }

#define NPU_AUTOCAST_LOWER(...) KERNEL_PRIVATEUSEONE(__VA_ARGS__, lower_precision_fp)
#define NPU_AUTOCAST_FP32(...) KERNEL_PRIVATEUSEONE(__VA_ARGS__, fp32)
#define NPU_AUTOCAST_FP32_SET_OPT_DTYPE(...) KERNEL_PRIVATEUSEONE(__VA_ARGS__, fp32_set_opt_dtype)
#define NPU_AUTOCAST_PROMOTE(...) KERNEL_PRIVATEUSEONE(__VA_ARGS__, promote)

// (the shared lists name ATen's types unqualified and their ops through ADD_NS)
namespace npu_autocast {
using namespace at;  // NOLINT(build/namespaces)
#define ADD_NS(RAW_OP) at::RAW_OP
TORCH_LIBRARY_IMPL(aten, AutocastPrivateUse1, m) {
  AT_FORALL_LOWER_PRECISION_FP(NPU_AUTOCAST_LOWER)
  AT_FORALL_FP32(NPU_AUTOCAST_FP32)
  AT_FORALL_FP32_SET_OPT_DTYPE(NPU_AUTOCAST_FP32_SET_OPT_DTYPE)
  AT_FORALL_DIFFERENT_REDISPATCH_SIGNATURE(KERNEL_DIFFERENT_REDISPATCH_SIGNATURE_PRIVATEUSEONE)
  AT_FORALL_PROMOTE(NPU_AUTOCAST_PROMOTE)
  m.impl(TORCH_SELECTIVE_NAME("aten::binary_cross_entropy"), TORCH_FN(BinaryCrossEntropyBanned));
}
#undef ADD_NS
}  // namespace npu_autocast
