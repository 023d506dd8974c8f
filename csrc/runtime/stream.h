// Streams and events of the simulated NPU. A stream is a FIFO of tasks run in order on its own
// executor thread, asynchronously from the thread that enqueued them (as a CANN/CUDA stream is
// from the host). An error thrown by a task is kept and re-raised by the next synchronization
// (Synchronize, an event wait on the host, a device-to-host copy) as AsyncTaskError naming the
// task's op; the stream stays usable.
#pragma once
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstddef>
#include <exception>
#include <functional>
#include <new>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>

namespace npu_rt {

class Stream {
 public:
  Stream(int device, int64_t id);
  ~Stream();
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;

  // Runs `fn` after every task enqueued before it. `op` must outlive the task (a string literal);
  // `detail` (shapes, dtypes...) is only formatted by callers when debug logging is on.
  // With ASCEND_LAUNCH_BLOCKING=1 this waits for the task and throws its error here.
  template <class F>
  void Enqueue(const char* op, F&& fn, std::string detail = {}) {
    std::unique_lock<std::mutex> producer = WaitForSlot();
    slots_[tail_.load(std::memory_order_relaxed) % kSlots].Emplace(op, std::forward<F>(fn), std::move(detail));
    Publish(producer);
  }
  // Waits for every enqueued task; re-raises (and clears) the first error raised since the last sync.
  void Synchronize();
  // True when every enqueued task has finished.
  bool Query() const;
  // Waits for every enqueued task without consuming a pending error (allocator use).
  void WaitIdle();

  int device() const { return device_; }
  int64_t id() const { return id_; }

 private:
  // One queued task: the callable lives in the slot itself when it fits (a kernel launch's captures:
  // tiling, core configuration, operand pointers), so enqueueing allocates nothing.
  struct Task {
    static constexpr size_t kInline = 384;  // the largest launch (a 240-byte tiling + core config + operands)
    const char* op = nullptr;
    void* obj = nullptr;
    void (*invoke)(void*) = nullptr;
    void (*destroy)(void*) = nullptr;
    std::string detail;
    alignas(std::max_align_t) unsigned char buf[kInline];

    template <class F>
    void Emplace(const char* name, F&& fn, std::string d) {
      using D = std::decay_t<F>;
      if constexpr (sizeof(D) <= kInline && alignof(D) <= alignof(std::max_align_t)) {
        obj = ::new (static_cast<void*>(buf)) D(std::forward<F>(fn));
        destroy = [](void* p) { static_cast<D*>(p)->~D(); };
      } else {
        obj = new D(std::forward<F>(fn));
        destroy = [](void* p) { delete static_cast<D*>(p); };
      }
      invoke = [](void* p) { (*static_cast<D*>(p))(); };
      op = name;
      detail = std::move(d);
    }
    void Reset() {
      if (obj) destroy(obj);
      obj = nullptr;
      detail.clear();
    }
  };

  std::unique_lock<std::mutex> WaitForSlot();
  void Publish(std::unique_lock<std::mutex>& producer);
  void WaitCompleted(uint64_t target);
  void Run();
  void RethrowPendingError();

  const int device_;
  const int64_t id_;
  // A bounded launch queue, like a device's: a host loop that never synchronizes waits once it is
  // kMaxInFlight tasks ahead, instead of queueing (and holding the inputs of) unbounded work. The ring
  // has kExecutorReserve more, so a task that enqueues onto its own stream never waits for itself.
  static constexpr uint64_t kMaxInFlight = 1024, kExecutorReserve = 64, kSlots = kMaxInFlight + kExecutorReserve;
  std::unique_ptr<Task[]> slots_;
  // The hand-off is lock-free: producers (serialized by producer_mu_, uncontended with one host
  // thread) fill slot tail_ % kSlots and publish it by advancing tail_; the executor alone runs
  // tasks and advances completed_ once a task has run and its slot is reset. mu_ guards only sleeping
  // and waking (and the pending error).
  std::mutex producer_mu_;
  alignas(64) std::atomic<uint64_t> tail_{0};       // tasks enqueued
  alignas(64) std::atomic<uint64_t> completed_{0};  // tasks run
  alignas(64) std::atomic<bool> sleeping_{false};   // the executor sleeps on work_cv_
  std::atomic<int> idle_waiters_{0};                // threads asleep on idle_cv_
  std::atomic<bool> has_error_{false};
  mutable std::mutex mu_;
  std::condition_variable work_cv_, idle_cv_;
  bool stop_ = false;
  std::exception_ptr error_;
  std::string error_op_;
  std::thread worker_;
};

// Events are shared: a task waiting on or completing an event keeps it alive (create with
// std::make_shared).
class Event : public std::enable_shared_from_this<Event> {
 public:
  explicit Event(bool enable_timing = true) : enable_timing_(enable_timing) {}
  // Captures the work enqueued on `stream` so far; the event completes when it is done.
  void Record(Stream& stream);
  // Makes `stream` wait (on the device side, without blocking the host) for the last Record.
  void Block(Stream& stream);
  bool Query() const;
  void Synchronize() const;
  // Milliseconds between this event's completion and `end`'s; both must have completed.
  double ElapsedMs(const Event& end) const;
  bool recorded() const { return recorded_gen_.load() > 0; }
  int device() const { return device_; }

 private:
  void Complete(uint64_t gen);
  const bool enable_timing_;
  int device_ = -1;
  std::atomic<uint64_t> recorded_gen_{0};
  uint64_t completed_gen_ = 0;
  std::chrono::steady_clock::time_point time_;
  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
};

bool LaunchBlocking();  // ASCEND_LAUNCH_BLOCKING=1

// fork() copies only the calling thread: in a child forked after the runtime started its stream and
// pool threads, a launch or a sync would wait forever for threads that do not exist (and a lock one of
// them held stays locked). As CUDA does, the child then gets a clear error on any device use instead.
void NoteRuntimeThreadsStarted();
bool InBadFork();
void CheckNotInBadFork();  // throws std::runtime_error in such a child

}  // namespace npu_rt
