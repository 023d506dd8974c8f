#include "runtime/thread_pool.h"

#include <cstdlib>

#include "runtime/spin_wait.h"
#include "runtime/stream.h"

namespace npu_rt {

HostThreadPool::HostThreadPool(int threads) {
  if (threads < 1) threads = 1;
  if (threads > 1) NoteRuntimeThreadsStarted();
  ranges_ = std::vector<Range>(threads);
  for (int i = 1; i < threads; ++i) workers_.emplace_back([this, i] { WorkerLoop(i); });
}

HostThreadPool::~HostThreadPool() {
  {
    std::lock_guard<std::mutex> g(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  for (auto& t : workers_) t.join();
}

void HostThreadPool::RunShare(int self) {
  const int threads = static_cast<int>(ranges_.size());
  for (int k = 0; k < threads; ++k) {  // its own range, then the others' leftovers
    Range& r = ranges_[(self + k) % threads];
    for (;;) {
      const int64_t i = r.next.fetch_add(1, std::memory_order_relaxed);
      if (i >= r.end) break;
      try {
        (*fn_)(i);
      } catch (...) {
        std::lock_guard<std::mutex> g(error_mu_);
        if (!error_) error_ = std::current_exception();
      }
    }
  }
}

void HostThreadPool::WorkerLoop(int self) {
  uint64_t seen = 0;
  for (;;) {
    // Spin a little for the next job (launches come back to back), then sleep.
    SpinUntil([&] { return generation_.load(std::memory_order_acquire) != seen; }, SpinBudgetUs());
    if (generation_.load(std::memory_order_acquire) == seen) {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&] { return stop_ || generation_.load(std::memory_order_acquire) != seen; });
      if (stop_) return;
    }
    seen = generation_.load(std::memory_order_acquire);
    // Join the job only while it is open: ParallelFor closes it, then waits until active_ == 0,
    // so the job's state stays valid for every worker that got in.
    active_.fetch_add(1);
    if (job_open_.load() && generation_.load() == seen) RunShare(self);
    active_.fetch_sub(1);
  }
}

void HostThreadPool::ParallelFor(int64_t n, FunctionRef<void(int64_t)> fn) {
  if (n <= 0) return;
  std::unique_lock<std::mutex> job(job_mu_, std::try_to_lock);
  if (n == 1 || workers_.empty() || !job.owns_lock()) {
    std::exception_ptr first;
    for (int64_t i = 0; i < n; ++i) {
      try {
        fn(i);
      } catch (...) {
        if (!first) first = std::current_exception();
      }
    }
    if (first) std::rethrow_exception(first);
    return;
  }
  fn_ = &fn;
  error_ = nullptr;
  const int64_t threads = static_cast<int64_t>(ranges_.size());
  for (int64_t t = 0; t < threads; ++t) {
    ranges_[t].next.store(t * n / threads, std::memory_order_relaxed);
    ranges_[t].end = (t + 1) * n / threads;
  }
  job_open_.store(true);
  {
    std::lock_guard<std::mutex> g(mu_);
    generation_.fetch_add(1, std::memory_order_release);
  }
  cv_.notify_all();
  RunShare(0);
  job_open_.store(false);
  // Wait for workers that picked up this job to leave it.
  // (Yielding: a worker preempted inside its last block may need this thread's core to finish it.)
  while (!SpinUntil([&] { return active_.load() == 0; }, 1000)) {
  }
  fn_ = nullptr;
  if (error_) std::rethrow_exception(error_);
}

HostThreadPool& GlobalThreadPool() {
  // Leaked on purpose, as the device registry: a stream may still run a launch during interpreter
  // teardown, and a child forked after the workers started must not destroy (wait on) their condition
  // variable at exit.
  static HostThreadPool* pool = new HostThreadPool([] {
    const char* v = std::getenv("TORCH_OPS_NN_HOST_THREADS");
    int n = v && *v ? std::atoi(v) : static_cast<int>(std::thread::hardware_concurrency());
    return n < 1 ? 1 : n;
  }());
  return *pool;
}

}  // namespace npu_rt
