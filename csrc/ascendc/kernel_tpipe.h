// TPipe, TQue / TQueBind and TBuf (shared/ascendc.md §2.5-2.7).
// TPipe carves buffers sequentially from the pool of each physical buffer; a queue owns up to 8 equal
// buffers and tracks each one's state (free / allocated / enqueued / dequeued) so that the misuse rules
// of §8 fire. The hot path (AllocTensor/EnQue/DeQue/FreeTensor) is a few integer operations.
#pragma once
#include <cstdint>

#include "kernel_tensor.h"

namespace ascendc_host {

enum class BufState : uint8_t { FREE = 0, ALLOCATED, ENQUEUED, DEQUEUED };

// The non-template core of every TQueBind.
struct QueueState {
  uint8_t* buf[kMaxQueBuffersPerPos] = {};
  uint32_t len = 0;  // bytes per buffer (multiple of 32)
  uint8_t num = 0;   // buffers
  uint8_t cap = 0;   // EnQue capacity (depth; depth 0 = num)
  uint8_t count = 0; // tensors in the queue
  uint8_t head = 0;  // FIFO head in fifo[]
  uint8_t next = 0;  // round-robin allocation cursor
  AscendC::TPosition pos = AscendC::TPosition::VECIN;
  BufState state[kMaxQueBuffersPerPos] = {};
  uint8_t fifo[kMaxQueBuffersPerPos] = {};

  [[noreturn]] void FailNoIdle() const;
  [[noreturn]] void FailFull() const;
  [[noreturn]] void FailEmpty() const;
  [[noreturn]] void FailForeign(const char* what, const void* p) const;

  int Find(const void* p) const {
    for (int i = 0; i < num; ++i)
      if (buf[i] == p) return i;
    return -1;
  }
  uint8_t* Alloc() {
    for (int k = 0; k < num; ++k) {
      int i = next + k;
      if (i >= num) i -= num;
      if (state[i] == BufState::FREE) {
        state[i] = BufState::ALLOCATED;
        next = uint8_t(i + 1 == num ? 0 : i + 1);
        return buf[i];
      }
    }
    FailNoIdle();
  }
  void EnQue(const void* p) {
    int i = Find(p);
    if (i < 0 || state[i] != BufState::ALLOCATED) FailForeign("EnQue", p);
    if (count >= cap) FailFull();
    int slot = head + count;
    if (slot >= kMaxQueBuffersPerPos) slot -= kMaxQueBuffersPerPos;
    fifo[slot] = uint8_t(i);
    ++count;
    state[i] = BufState::ENQUEUED;
  }
  uint8_t* DeQue() {
    if (count == 0) FailEmpty();
    int i = fifo[head];
    head = uint8_t(head + 1 == kMaxQueBuffersPerPos ? 0 : head + 1);
    --count;
    state[i] = BufState::DEQUEUED;
    return buf[i];
  }
  void Free(const void* p) {
    int i = Find(p);
    if (i < 0 || (state[i] != BufState::ALLOCATED && state[i] != BufState::DEQUEUED)) FailForeign("FreeTensor", p);
    state[i] = BufState::FREE;
  }
  bool HasIdle() const {
    for (int i = 0; i < num; ++i)
      if (state[i] == BufState::FREE) return true;
    return false;
  }
};

struct TBufState {
  uint8_t* base = nullptr;
  uint32_t len = 0;  // bytes
  AscendC::TPosition pos = AscendC::TPosition::VECCALC;
  [[noreturn]] void FailGet(const char* what, uint64_t offset, uint64_t bytes) const;
};

struct PipeState {
  uint32_t cursor[kNumPhysBuf] = {};
  uint32_t buffers = 0;
  uint8_t que_bufs_per_pos[kNumPositions] = {};
};

void PipeConstruct(void* pipe);
void PipeDestruct(void* pipe);
void PipeInitQueue(PipeState& ps, QueueState& q, AscendC::TPosition pos, int32_t depth, uint32_t num, uint32_t len);
void PipeInitBuf(PipeState& ps, TBufState& b, AscendC::TPosition pos, uint32_t len);
void PipeReset(PipeState& ps);
int8_t PipeAllocEventID(AscendC::HardEvent e, bool take);
void PipeReleaseEventID(AscendC::HardEvent e, int8_t id);

constexpr AscendC::TPosition QueueBufferPosition(AscendC::TPosition src, AscendC::TPosition dst) {
  return src == AscendC::TPosition::GM ? dst : src;
}

}  // namespace ascendc_host

namespace AscendC {

template <TPosition src, TPosition dst, int32_t depth, auto mask = 0>
class TQueBind : public ascendc_host::QueueState {
 public:
  static constexpr TPosition kBufferPosition = ascendc_host::QueueBufferPosition(src, dst);
  static constexpr int32_t kDepth = depth;

  template <typename T>
  LocalTensor<T> AllocTensor() {
    return LocalTensor<T>(reinterpret_cast<T*>(Alloc()), uint32_t(len / sizeof(T)), pos);
  }
  template <typename T>
  void AllocTensor(LocalTensor<T>& t) { t = AllocTensor<T>(); }
  template <typename T>
  bool EnQue(const LocalTensor<T>& t) { QueueState::EnQue(t.HostPtr()); return true; }
  template <TPosition srcUser, TPosition dstUser, typename T>
  bool EnQue(const LocalTensor<T>& t) { QueueState::EnQue(t.HostPtr()); return true; }
  template <typename T>
  LocalTensor<T> DeQue() {
    return LocalTensor<T>(reinterpret_cast<T*>(QueueState::DeQue()), uint32_t(len / sizeof(T)), pos);
  }
  template <typename T>
  void DeQue(LocalTensor<T>& t) { t = DeQue<T>(); }
  template <TPosition srcUser, TPosition dstUser, typename T>
  LocalTensor<T> DeQue() { return DeQue<T>(); }
  template <typename T>
  void FreeTensor(LocalTensor<T>& t) { Free(t.HostPtr()); }
  template <typename T>
  void FreeTensor(const LocalTensor<T>& t) { Free(t.HostPtr()); }
  bool VacantInQue() const { return count < cap; }
  bool HasTensorInQue() const { return count > 0; }
  bool HasIdleBuffer() const { return HasIdle(); }
  int32_t GetTensorCountInQue() const { return count; }
  void FreeAllEvent() {}
};

template <TPosition pos, int32_t depth = 1, auto mask = 0>
class TQue : public TQueBind<pos, pos, depth, mask> {};

template <TPosition Pos = TPosition::LCM>
class TBuf : public ascendc_host::TBufState {
 public:
  static constexpr TPosition kBufferPosition = Pos;
  template <typename T>
  LocalTensor<T> Get() const {
    if (base == nullptr) FailGet("TBuf::Get (InitBuffer not called)", 0, 0);
    return LocalTensor<T>(reinterpret_cast<T*>(base), uint32_t(len / sizeof(T)), pos);
  }
  template <typename T>
  LocalTensor<T> Get(uint32_t lenElems) const {
    if (base == nullptr || uint64_t(lenElems) * sizeof(T) > len) FailGet("TBuf::Get(len)", 0, uint64_t(lenElems) * sizeof(T));
    return LocalTensor<T>(reinterpret_cast<T*>(base), lenElems, pos);
  }
  template <typename T>
  LocalTensor<T> GetWithOffset(uint32_t sizeElems, uint32_t bufOffset) const {
    if (base == nullptr || bufOffset % 32 != 0 || uint64_t(bufOffset) + uint64_t(sizeElems) * sizeof(T) > len)
      FailGet("TBuf::GetWithOffset", bufOffset, uint64_t(sizeElems) * sizeof(T));
    return LocalTensor<T>(reinterpret_cast<T*>(base + bufOffset), sizeElems, pos);
  }
};

class TPipe {
 public:
  TPipe() { ascendc_host::PipeConstruct(this); }
  ~TPipe() { ascendc_host::PipeDestruct(this); }
  TPipe(const TPipe&) = delete;
  TPipe& operator=(const TPipe&) = delete;

  void Init() {}
  template <class Q>
  bool InitBuffer(Q& que, uint8_t num, uint32_t len) {
    ascendc_host::PipeInitQueue(state_, que, Q::kBufferPosition, Q::kDepth, num, len);
    return true;
  }
  template <TPosition p>
  bool InitBuffer(TBuf<p>& buf, uint32_t len) {
    ascendc_host::PipeInitBuf(state_, buf, p, len);
    return true;
  }
  void Reset() { ascendc_host::PipeReset(state_); }
  void Destroy() { ascendc_host::PipeDestruct(this); }
  template <HardEvent e>
  TEventID AllocEventID() { return ascendc_host::PipeAllocEventID(e, true); }
  template <HardEvent e>
  void ReleaseEventID(TEventID id) { ascendc_host::PipeReleaseEventID(e, id); }
  template <HardEvent e>
  TEventID FetchEventID() { return ascendc_host::PipeAllocEventID(e, false); }
  TEventID FetchEventID(HardEvent e) { return ascendc_host::PipeAllocEventID(e, false); }

 private:
  ascendc_host::PipeState state_;
};

inline TPipe* GetTPipePtr() { return static_cast<TPipe*>(ascendc_host::CurrentCore().live_pipe); }

}  // namespace AscendC
