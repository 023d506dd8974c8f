// See device_check.h.
#include "device_check.h"

#include "kernel_operator.h"

using namespace AscendC;

extern "C" __global__ __aicore__ void device_check_kernel(GM_ADDR flag, GM_ADDR tiling) {
  GET_TILING_DATA_WITH_STRUCT(npu_kernels::DeviceCheckTiling, t, tiling);
  GlobalTensor<uint8_t> f;
  f.SetGlobalBuffer(reinterpret_cast<__gm__ uint8_t*>(flag), 1);
  ascendc_assert(f.GetValue(0) == 0, "%s", t.message);
}
