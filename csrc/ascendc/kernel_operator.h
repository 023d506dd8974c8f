// The umbrella header Ascend C kernels include (CANN's name), for the host model of torch_ops_nn.
//
//   #include "kernel_operator.h"
//   using namespace AscendC;
//   extern "C" __global__ __aicore__ void add_custom(GM_ADDR x, GM_ADDR y, GM_ADDR z, GM_ADDR tiling) {
//     GET_TILING_DATA_WITH_STRUCT(AddTiling, t, tiling);   // our kernels use the WITH_STRUCT form
//     ...
//   }
//
// The kernel body runs inside ascendc_host::RunBlock (host_launch.h) on a host thread; all API state is
// that thread's current core (ascendc_core_state.h). Address-space qualifiers are empty, as in CANN's
// CPU debug build. Layout: ascendc_types.h (half, bfloat16_t, enums, params), kernel_tensor.h,
// kernel_tpipe.h, kernel_data_copy.h, kernel_vec.h, kernel_math.h (the advanced Tanh / Erf / Erfc),
// kernel_sync.h, and kernel_cube.h (cube instructions).
#pragma once
#include <cstdint>
#include <cstring>

#include "ascendc_core_state.h"
#include "ascendc_types.h"
#include "host_launch.h"
#include "kernel_data_copy.h"
#include "kernel_debug.h"
#include "kernel_sync.h"
#include "kernel_tensor.h"
#include "kernel_tpipe.h"
#include "kernel_vec.h"
#include "kernel_math.h"

#define __global__
#define __aicore__
#define __vector__
#define __cube__
#define __mix__(c, v)
#define __gm__
#define __ubuf__
#define __cbuf__
#define __ca__
#define __cb__
#define __cc__
#define __fbuf__
#ifndef GM_ADDR
#define GM_ADDR __gm__ uint8_t*
#endif
#ifndef __NPU_ARCH__
#define __NPU_ARCH__ 2201  // compile-time default; the simulated SoC's arch is CoreConfig::npu_arch
#endif

// Kernel types (§1). The host model runs whatever RunBlock's CoreType says, so these are no-ops.
enum KernelType : uint8_t {
  KERNEL_TYPE_AIV_ONLY = 0, KERNEL_TYPE_AIC_ONLY, KERNEL_TYPE_MIX_AIV_1_0, KERNEL_TYPE_MIX_AIC_1_0,
  KERNEL_TYPE_MIX_AIC_1_1, KERNEL_TYPE_MIX_AIC_1_2, KERNEL_TYPE_AICORE, KERNEL_TYPE_VECTORCORE,
  KERNEL_TYPE_MIX_AICORE, KERNEL_TYPE_MIX_VECTOR_CORE
};
#define KERNEL_TASK_TYPE_DEFAULT(value) ((void)(value))
#define KERNEL_TASK_TYPE(key, value) ((void)(key), (void)(value))

// Tiling (§1): the tiling argument points at the raw bytes of a trivially copyable struct.
// Our kernels use GET_TILING_DATA_WITH_STRUCT(Struct, var, tiling). GET_TILING_DATA(var, tiling) works
// after REGISTER_TILING_DEFAULT(Struct) in the same translation unit.
#define GET_TILING_DATA_WITH_STRUCT(Struct, var, tiling) \
  Struct var;                                           \
  std::memcpy(&var, (tiling), sizeof(Struct))
#define REGISTER_TILING_DEFAULT(Struct) using AscendcRegisteredTilingData_ = Struct
#define GET_TILING_DATA(var, tiling) GET_TILING_DATA_WITH_STRUCT(AscendcRegisteredTilingData_, var, tiling)
#define TILING_KEY_IS(k) (false)

// `if ASCEND_IS_AIV { ... }`. A MIX core runs both branches in program order.
#define ASCEND_IS_AIV (::ascendc_host::CurrentCore().type != ::ascendc_host::CoreType::AIC)
#define ASCEND_IS_AIC (::ascendc_host::CurrentCore().type != ::ascendc_host::CoreType::AIV)
#define ASCEND_IS_NOT_AIV (!ASCEND_IS_AIV)
#define ASCEND_IS_NOT_AIC (!ASCEND_IS_AIC)

namespace AscendC {

inline int64_t GetBlockIdx() { return ascendc_host::CurrentCore().block_idx; }
inline int64_t GetBlockNum() { return ascendc_host::CurrentCore().block_num; }
// The host model runs one AIV per block (no 1:2 sub-blocks), so sub block 0 and task ratio 1.
inline int64_t GetSubBlockIdx() { return 0; }
inline int64_t GetTaskRatio() { return 1; }
inline int64_t GetSubBlockNum() { return 1; }

template <typename T>
constexpr T CeilDiv(T a, T b) { return (a + b - 1) / b; }

}  // namespace AscendC

#include "kernel_cube.h"
