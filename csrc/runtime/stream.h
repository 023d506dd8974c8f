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
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

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
  void Enqueue(const char* op, std::function<void()> fn, std::string detail = {});
  // Waits for every enqueued task; re-raises (and clears) the first error raised since the last sync.
  void Synchronize();
  // True when every enqueued task has finished.
  bool Query() const;
  // Waits for every enqueued task without consuming a pending error (allocator use).
  void WaitIdle();

  int device() const { return device_; }
  int64_t id() const { return id_; }

 private:
  struct Task {
    const char* op;
    std::function<void()> fn;
    std::string detail;
  };
  void Run();
  void WaitIdle(std::unique_lock<std::mutex>& lock);
  void RethrowPendingError(std::unique_lock<std::mutex>& lock);

  const int device_;
  const int64_t id_;
  static constexpr uint64_t kMaxInFlight = 1024;  // queued + running tasks before Enqueue waits
  mutable std::mutex mu_;
  std::condition_variable work_cv_, idle_cv_;
  std::deque<Task> queue_;
  std::atomic<uint64_t> enqueued_{0}, completed_{0};
  std::atomic<bool> sleeping_{false};
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

}  // namespace npu_rt
