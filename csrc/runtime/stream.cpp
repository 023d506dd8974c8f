#include "runtime/stream.h"

#include <cstdlib>
#include <cstring>

#include "runtime/errors.h"
#include "runtime/log.h"
#include "runtime/spin_wait.h"

namespace npu_rt {

bool LaunchBlocking() {
  static const bool on = [] {
    const char* v = std::getenv("ASCEND_LAUNCH_BLOCKING");
    return v && std::strcmp(v, "0") != 0 && *v;
  }();
  return on;
}

Stream::Stream(int device, int64_t id) : device_(device), id_(id) {
  worker_ = std::thread([this] { Run(); });
}

Stream::~Stream() {
  {
    std::lock_guard<std::mutex> g(mu_);
    stop_ = true;
  }
  work_cv_.notify_all();
  if (worker_.joinable()) worker_.join();
}

void Stream::Enqueue(const char* op, std::function<void()> fn, std::string detail) {
  {
    std::unique_lock<std::mutex> g(mu_);
    // A bounded launch queue, like a device's: a host loop that never synchronizes waits here once
    // it is kMaxInFlight tasks ahead, instead of queueing (and holding the inputs of) unbounded work.
    auto has_room = [&] {
      return enqueued_.load(std::memory_order_relaxed) - completed_.load(std::memory_order_acquire) < kMaxInFlight;
    };
    if (!has_room() && std::this_thread::get_id() != worker_.get_id()) idle_cv_.wait(g, has_room);
    queue_.push_back(Task{op, std::move(fn), std::move(detail)});
    enqueued_.fetch_add(1, std::memory_order_relaxed);
  }
  // The executor spins a little before sleeping; only wake it when it really sleeps.
  if (sleeping_.load(std::memory_order_acquire)) work_cv_.notify_one();
  log::FlushDeferred();
  if (LaunchBlocking()) Synchronize();
}

void Stream::Run() {
  for (;;) {
    Task task;
    {
      std::unique_lock<std::mutex> lock(mu_);
      if (queue_.empty()) {
        // Spin briefly (ops usually arrive back to back), then sleep.
        lock.unlock();
        SpinUntil([&] { return enqueued_.load(std::memory_order_acquire) != completed_.load(std::memory_order_relaxed); },
                  SpinBudgetUs());
        lock.lock();
        if (queue_.empty()) {
          sleeping_.store(true, std::memory_order_release);
          work_cv_.wait(lock, [&] { return stop_ || !queue_.empty(); });
          sleeping_.store(false, std::memory_order_release);
        }
      }
      if (queue_.empty() && stop_) return;
      task = std::move(queue_.front());
      queue_.pop_front();
    }
    const bool timed = log::Enabled(log::kDebug);
    auto t0 = timed ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
    std::exception_ptr err;
    try {
      task.fn();
    } catch (...) {
      err = std::current_exception();
    }
    if (timed) {
      double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
      log::Defer(log::kDebug, "npu:" + std::to_string(device_) + " stream " + std::to_string(id_) + " ran " +
                                  task.op + (task.detail.empty() ? "" : " " + task.detail) + " in " +
                                  std::to_string(us) + " us" + (err ? " (failed)" : ""));
    }
    task.fn = nullptr;  // release captured state before signalling completion
    {
      std::lock_guard<std::mutex> g(mu_);
      if (err && !error_) {
        error_ = err;
        error_op_ = task.op;
      }
      completed_.fetch_add(1, std::memory_order_release);
    }
    idle_cv_.notify_all();
  }
}

void Stream::WaitIdle(std::unique_lock<std::mutex>& lock) {
  const uint64_t target = enqueued_.load(std::memory_order_relaxed);
  if (completed_.load(std::memory_order_acquire) >= target) return;
  // Short spin first: most syncs follow small ops.
  lock.unlock();
  SpinUntil([&] { return completed_.load(std::memory_order_acquire) >= target; }, SpinBudgetUs());
  lock.lock();
  idle_cv_.wait(lock, [&] { return completed_.load(std::memory_order_acquire) >= target; });
}

void Stream::RethrowPendingError(std::unique_lock<std::mutex>& lock) {
  if (!error_) return;
  std::exception_ptr err = error_;
  std::string op = error_op_;
  error_ = nullptr;
  error_op_.clear();
  lock.unlock();
  try {
    std::rethrow_exception(err);
  } catch (const OutOfMemoryError&) {
    throw;
  } catch (const std::exception& e) {
    throw AsyncTaskError(op, op + ": " + e.what());
  } catch (...) {
    throw AsyncTaskError(op, op + ": unknown error in an asynchronous task");
  }
}

void Stream::Synchronize() {
  std::unique_lock<std::mutex> lock(mu_);
  WaitIdle(lock);
  RethrowPendingError(lock);
  if (lock.owns_lock()) lock.unlock();
  log::FlushDeferred();
}

void Stream::WaitIdle() {
  std::unique_lock<std::mutex> lock(mu_);
  WaitIdle(lock);
}

bool Stream::Query() const {
  return completed_.load(std::memory_order_acquire) >= enqueued_.load(std::memory_order_acquire);
}

// ---------------------------------------------------------------------------------------------

void Event::Record(Stream& stream) {
  const uint64_t gen = recorded_gen_.fetch_add(1) + 1;
  device_ = stream.device();
  auto self = shared_from_this();
  stream.Enqueue("event_record", [self, gen] { self->Complete(gen); });
}

void Event::Complete(uint64_t gen) {
  {
    std::lock_guard<std::mutex> g(mu_);
    if (gen > completed_gen_) {
      completed_gen_ = gen;
      if (enable_timing_) time_ = std::chrono::steady_clock::now();
    }
  }
  cv_.notify_all();
}

void Event::Block(Stream& stream) {
  const uint64_t gen = recorded_gen_.load();
  if (gen == 0) return;  // never recorded: nothing to wait for (as in CUDA)
  auto self = shared_from_this();
  stream.Enqueue("event_wait", [self, gen] {
    std::unique_lock<std::mutex> lock(self->mu_);
    self->cv_.wait(lock, [&] { return self->completed_gen_ >= gen; });
  });
}

bool Event::Query() const {
  std::lock_guard<std::mutex> g(mu_);
  return completed_gen_ >= recorded_gen_.load();
}

void Event::Synchronize() const {
  const uint64_t gen = recorded_gen_.load();
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [&] { return completed_gen_ >= gen; });
}

double Event::ElapsedMs(const Event& end) const {
  if (!enable_timing_ || !end.enable_timing_)
    throw std::invalid_argument("elapsed_time: both events must be created with enable_timing=True");
  if (!recorded() || !end.recorded())
    throw std::invalid_argument("elapsed_time: both events must be recorded before measuring elapsed time");
  if (!Query() || !end.Query())
    throw std::invalid_argument("elapsed_time: both events must have completed (synchronize the end event first)");
  std::scoped_lock lock(mu_, end.mu_);
  return std::chrono::duration<double, std::milli>(end.time_ - time_).count();
}

}  // namespace npu_rt
