// The host thread pool the simulated AI cores run on: persistent workers, a cheap fork/join
// ParallelFor in which the calling thread takes part.
#pragma once
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "runtime/function_ref.h"

namespace npu_rt {

class HostThreadPool {
 public:
  explicit HostThreadPool(int threads);
  ~HostThreadPool();
  int size() const { return static_cast<int>(workers_.size()) + 1; }

  // Runs fn(i) for every i in [0, n) on the workers and the calling thread, and returns when all
  // are done. Every iteration runs even when one throws (as every AI core of a launch runs on the NPU:
  // later kernels may read what the other blocks write); the first exception is rethrown here.
  // If another ParallelFor is already running (another stream), this one runs on the calling thread.
  // Iterations are split into one contiguous range per thread (the caller's first), which its thread
  // runs first and others take from only when done with their own: the same indices land on the same
  // thread launch after launch, so a block's data stays in that core's cache as a CPU kernel's static
  // split keeps it, and a thread that is late or preempted still has its range finished by the rest.
  void ParallelFor(int64_t n, FunctionRef<void(int64_t)> fn);

 private:
  struct alignas(64) Range {
    std::atomic<int64_t> next{0};
    int64_t end = 0;
  };
  void WorkerLoop(int self);
  void RunShare(int self);

  std::vector<std::thread> workers_;
  std::mutex job_mu_;  // one job at a time
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::atomic<uint64_t> generation_{0};
  const FunctionRef<void(int64_t)>* fn_ = nullptr;
  std::vector<Range> ranges_;  // one per thread: [0] the caller's, [i + 1] workers_[i]'s
  std::atomic<int> active_{0};
  std::atomic<bool> job_open_{false};
  std::exception_ptr error_;
  std::mutex error_mu_;
};

// The process-wide pool: TORCH_OPS_NN_HOST_THREADS threads (default: the host's core count).
HostThreadPool& GlobalThreadPool();

}  // namespace npu_rt
