// Vector-instruction sequences shared by kernels (the same sequence gives the same bits): the exact int32
// ordering key of the elementwise and int64 kernels. (Activations are Ascend C's advanced APIs,
// kernel_math.h, called directly.) L: element count.
#pragma once
#include <cstdint>

#include "kernel_operator.h"

namespace npu_kernels {
namespace vec_math {

using namespace AscendC;

// Exact int32 ordering: key = float(a - b) has the sign of a - b (a - b itself may overflow int32).
// a = hi * 65536 + lo with hi = a >> 16 (arithmetic) and lo in [0, 65535]; the limb differences fit
// in int32 and convert to float exactly, and rounding a non-zero integer never changes its sign.
__aicore__ inline void IntOrderKey(const LocalTensor<float>& key, const LocalTensor<int32_t>& a, const LocalTensor<int32_t>& b,
                 const LocalTensor<int32_t>& K, const LocalTensor<int32_t>& t1, const LocalTensor<int32_t>& t2,
                 const LocalTensor<int32_t>& t3, uint32_t L) {
  ShiftRight(K, a, 16, L);
  ShiftLeft(t1, K, 16, L);
  Sub(t1, a, t1, L);           // lo(a)
  ShiftRight(t2, b, 16, L);
  ShiftLeft(t3, t2, 16, L);
  Sub(t3, b, t3, L);           // lo(b)
  Sub(K, K, t2, L);            // hi(a) - hi(b)
  Sub(t1, t1, t3, L);          // lo(a) - lo(b)
  const LocalTensor<float> kf = K.ReinterpretCast<float>(), t1f = t1.ReinterpretCast<float>();
  Cast(kf, K, RoundMode::CAST_NONE, L);
  Cast(t1f, t1, RoundMode::CAST_NONE, L);
  Muls(kf, kf, 65536.0f, L);
  Add(key, kf, t1f, L);
}

}  // namespace vec_math
}  // namespace npu_kernels
