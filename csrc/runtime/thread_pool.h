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
  void ParallelFor(int64_t n, FunctionRef<void(int64_t)> fn);

 private:
  void WorkerLoop();
  void RunShare();

  std::vector<std::thread> workers_;
  std::mutex job_mu_;  // one job at a time
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::atomic<uint64_t> generation_{0};
  const FunctionRef<void(int64_t)>* fn_ = nullptr;
  int64_t n_ = 0;
  std::atomic<int64_t> next_{0};
  std::atomic<int> active_{0};
  std::atomic<bool> job_open_{false};
  std::exception_ptr error_;
  std::mutex error_mu_;
};

// The process-wide pool: TORCH_OPS_NN_HOST_THREADS threads (default: the host's core count).
HostThreadPool& GlobalThreadPool();

}  // namespace npu_rt
