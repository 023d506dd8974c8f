// GM <-> UB moves of one contiguous run of `n` elements for the elementwise-family kernels
// (elementwise, cast, ReLU), on every SoC: whole 32-byte blocks go by DataCopy; a tail that is not
// a whole block goes by DataCopyPad on 2201, and on 2002 (310P: no DataCopyPad) by a few scalar
// GetValue/SetValue moves (fewer than 32 bytes, after the block part).
#pragma once
#include <cstdint>

#include "kernel_operator.h"

namespace npu_kernels {

template <typename T>
__aicore__ inline void EwCopyIn(const AscendC::LocalTensor<T>& dst, const AscendC::GlobalTensor<T>& src, uint32_t n,
                                bool has_pad) {
  using namespace AscendC;
  const uint32_t bytes = n * sizeof(T);
  if (bytes % 32 == 0) {
    DataCopy(dst, src, n);
    return;
  }
  if (has_pad) {
    DataCopyPad(dst, src, DataCopyExtParams{1, bytes, 0, 0, 0}, DataCopyPadExtParams<T>{false, 0, 0, T(0)});
    return;
  }
  const uint32_t body = bytes / 32 * 32 / sizeof(T);
  if (body != 0) DataCopy(dst, src, body);
  for (uint32_t i = body; i < n; ++i) dst.SetValue(i, src.GetValue(i));
  SetFlag<HardEvent::S_V>(0);  // the scalar writes land before the vector unit reads the tile
  WaitFlag<HardEvent::S_V>(0);
}

template <typename T>
__aicore__ inline void EwCopyOut(const AscendC::GlobalTensor<T>& dst, const AscendC::LocalTensor<T>& src, uint32_t n,
                                 bool has_pad) {
  using namespace AscendC;
  const uint32_t bytes = n * sizeof(T);
  if (bytes % 32 == 0) {
    DataCopy(dst, src, n);
    return;
  }
  if (has_pad) {
    DataCopyPad(dst, src, DataCopyExtParams{1, bytes, 0, 0, 0});
    return;
  }
  const uint32_t body = bytes / 32 * 32 / sizeof(T);
  if (body != 0) DataCopy(dst, src, body);
  SetFlag<HardEvent::V_S>(0);  // the vector results are in UB before the scalar unit reads them
  WaitFlag<HardEvent::V_S>(0);
  for (uint32_t i = body; i < n; ++i) dst.SetValue(i, src.GetValue(i));
}

}  // namespace npu_kernels
