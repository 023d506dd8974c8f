// Synchronization (shared/ascendc.md §6). The model runs each core's instructions in program order, so
// these are bookkeeping: SetFlag/WaitFlag pairs are tracked per (src pipe, dst pipe, id) so that a double
// SetFlag, a WaitFlag with no SetFlag (the NPU would hang) and a flag left set at kernel end are errors.
#pragma once
#include <cstdint>

#include "kernel_tensor.h"

namespace ascendc_host {
struct PipePair {
  pipe_t src, dst;
};
PipePair HardEventPipes(AscendC::HardEvent e);
void FlagSet(pipe_t src, pipe_t dst, int32_t id, const char* instr);
void FlagWait(pipe_t src, pipe_t dst, int32_t id, const char* instr);
void CheckBarrierPipe(pipe_t p);
}  // namespace ascendc_host

namespace AscendC {

template <HardEvent e>
inline void SetFlag(int32_t eventID) {
  auto pp = ascendc_host::HardEventPipes(e);
  ascendc_host::FlagSet(pp.src, pp.dst, eventID, "SetFlag");
}
template <HardEvent e>
inline void WaitFlag(int32_t eventID) {
  auto pp = ascendc_host::HardEventPipes(e);
  ascendc_host::FlagWait(pp.src, pp.dst, eventID, "WaitFlag");
}

template <pipe_t src, pipe_t dst>
class TQueSync {
 public:
  void SetFlag(TEventID id) { ascendc_host::FlagSet(src, dst, id, "TQueSync::SetFlag"); }
  void WaitFlag(TEventID id) { ascendc_host::FlagWait(src, dst, id, "TQueSync::WaitFlag"); }
};

template <pipe_t pipe>
inline void PipeBarrier() {
  static_assert(pipe != PIPE_S, "PipeBarrier is not valid for PIPE_S");
}

enum class CacheLine : uint8_t { SINGLE_CACHE_LINE = 0, ENTIRE_DATA_CACHE };
enum class DcciDst : uint8_t { CACHELINE_ALL = 0, CACHELINE_UB, CACHELINE_OUT, CACHELINE_ATOMIC };

template <typename T, CacheLine entireType = CacheLine::SINGLE_CACHE_LINE, DcciDst dst = DcciDst::CACHELINE_OUT>
inline void DataCacheCleanAndInvalid(const GlobalTensor<T>&) {}
template <typename T, CacheLine entireType = CacheLine::SINGLE_CACHE_LINE, DcciDst dst = DcciDst::CACHELINE_OUT>
inline void DataCacheCleanAndInvalid(const LocalTensor<T>&) {}

}  // namespace AscendC
