#include "runtime/stream.h"

#include <pthread.h>

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

namespace {
std::atomic<bool> g_threads_started{false}, g_bad_fork{false};
const bool g_atfork_registered = [] {
  pthread_atfork(nullptr, nullptr, [] { g_bad_fork.store(g_threads_started.load()); });
  return true;
}();
}  // namespace

void NoteRuntimeThreadsStarted() { g_threads_started.store(true); }
bool InBadFork() { return g_bad_fork.load(std::memory_order_relaxed); }
void CheckNotInBadFork() {
  if (InBadFork())
    throw std::runtime_error(
        "npu: cannot use the npu in a forked subprocess: the parent had started the runtime's stream and pool "
        "threads, which fork() does not copy. Use the 'spawn' start method "
        "(multiprocessing.set_start_method('spawn'), or DataLoader(multiprocessing_context='spawn')), as with CUDA.");
}

Stream::Stream(int device, int64_t id) : device_(device), id_(id), slots_(new Task[kSlots]) {
  NoteRuntimeThreadsStarted();
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

std::unique_lock<std::mutex> Stream::WaitForSlot() {
  CheckNotInBadFork();
  for (;;) {
    std::unique_lock<std::mutex> producer(producer_mu_);
    const uint64_t tail = tail_.load(std::memory_order_relaxed);
    const uint64_t in_flight = tail - completed_.load(std::memory_order_acquire);
    if (in_flight < kMaxInFlight) return producer;
    if (std::this_thread::get_id() == worker_.get_id()) {
      // The executor cannot wait for itself: it may use the reserve.
      if (in_flight < kSlots) return producer;
      throw std::runtime_error("npu stream " + std::to_string(id_) + ": a task enqueued more than " +
                               std::to_string(kSlots - kMaxInFlight) + " tasks onto its own stream");
    }
    producer.unlock();
    WaitCompleted(tail + 1 - kMaxInFlight);
  }
}

void Stream::Publish(std::unique_lock<std::mutex>& producer) {
  // seq_cst store / load pairs with the executor's seq_cst store of sleeping_ and load of tail_: either it
  // sees this task before it sleeps, or this thread sees it asleep and wakes it (under mu_, so the
  // wake-up cannot fall between its check and its wait).
  tail_.fetch_add(1, std::memory_order_seq_cst);
  producer.unlock();
  if (sleeping_.load(std::memory_order_seq_cst)) {
    { std::lock_guard<std::mutex> g(mu_); }
    work_cv_.notify_one();
  }
  log::FlushDeferred();
  if (LaunchBlocking()) Synchronize();
}

void Stream::Run() {
  uint64_t head = 0;
  for (;;) {
    if (tail_.load(std::memory_order_acquire) == head) {
      // Spin briefly (ops usually arrive back to back), then sleep.
      SpinUntil([&] { return tail_.load(std::memory_order_acquire) != head; }, SpinBudgetUs());
      if (tail_.load(std::memory_order_acquire) == head) {
        std::unique_lock<std::mutex> lock(mu_);
        sleeping_.store(true, std::memory_order_seq_cst);
        work_cv_.wait(lock, [&] { return stop_ || tail_.load(std::memory_order_seq_cst) != head; });
        sleeping_.store(false, std::memory_order_relaxed);
        if (tail_.load(std::memory_order_acquire) == head) return;  // stopped, and every task has run
      }
    }
    Task& task = slots_[head % kSlots];
    const bool timed = log::Enabled(log::kDebug);
    auto t0 = timed ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
    std::exception_ptr err;
    try {
      task.invoke(task.obj);
    } catch (...) {
      err = std::current_exception();
    }
    if (timed) {
      double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
      log::Defer(log::kDebug, "npu:" + std::to_string(device_) + " stream " + std::to_string(id_) + " ran " +
                                  task.op + (task.detail.empty() ? "" : " " + task.detail) + " in " +
                                  std::to_string(us) + " us" + (err ? " (failed)" : ""));
    }
    const char* op = task.op;
    task.Reset();  // release captured state before signalling completion (and free the slot)
    if (err) {
      std::lock_guard<std::mutex> g(mu_);
      if (!error_) {
        error_ = err;
        error_op_ = op;
        has_error_.store(true, std::memory_order_release);
      }
    }
    // seq_cst store / load pairs with a waiter's seq_cst increment of idle_waiters_ and load of
    // completed_ (as Publish with the executor's sleep).
    completed_.store(++head, std::memory_order_seq_cst);
    if (idle_waiters_.load(std::memory_order_seq_cst) > 0) {
      { std::lock_guard<std::mutex> g(mu_); }
      idle_cv_.notify_all();
    }
  }
}

void Stream::WaitCompleted(uint64_t target) {
  CheckNotInBadFork();
  if (completed_.load(std::memory_order_acquire) >= target) return;
  // Short spin first: most syncs follow small ops.
  if (SpinUntil([&] { return completed_.load(std::memory_order_acquire) >= target; }, SpinBudgetUs())) return;
  idle_waiters_.fetch_add(1, std::memory_order_seq_cst);
  {
    std::unique_lock<std::mutex> lock(mu_);
    idle_cv_.wait(lock, [&] { return completed_.load(std::memory_order_seq_cst) >= target; });
  }
  idle_waiters_.fetch_sub(1, std::memory_order_relaxed);
}

void Stream::RethrowPendingError() {
  if (!has_error_.load(std::memory_order_acquire)) return;
  std::unique_lock<std::mutex> lock(mu_);
  if (!error_) return;
  std::exception_ptr err = error_;
  std::string op = error_op_;
  error_ = nullptr;
  error_op_.clear();
  has_error_.store(false, std::memory_order_relaxed);
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
  CheckNotCapturing("synchronizing with the device (a sync, a copy to host memory, .item(), an op that reads a value back)");
  WaitCompleted(tail_.load(std::memory_order_acquire));
  RethrowPendingError();
  log::FlushDeferred();
}

void Stream::WaitIdle() { WaitCompleted(tail_.load(std::memory_order_acquire)); }

bool Stream::Query() const {
  return completed_.load(std::memory_order_acquire) >= tail_.load(std::memory_order_acquire);
}

// ---- graph capture ----------------------------------------------------------------------------

Graph::~Graph() {
  for (Node& n : nodes_)
    if (n.obj) n.destroy(n.obj);
}

int Graph::BeginRegion() {
  std::lock_guard<std::mutex> g(mu_);
  if (open_region_ >= 0) return -1;
  open_region_ = static_cast<int>(regions_.size());
  regions_.emplace_back();
  return open_region_;
}

void Graph::EndRegion(int region, std::function<bool()> stale, std::shared_ptr<void> keep) {
  if (region < 0) return;
  std::lock_guard<std::mutex> g(mu_);
  regions_[region].stale = std::move(stale);
  regions_[region].keep = std::move(keep);
  open_region_ = -1;
}

std::vector<char> Graph::Stale(bool all) {
  std::lock_guard<std::mutex> g(mu_);
  std::vector<char> run(regions_.size());
  for (size_t i = 0; i < regions_.size(); ++i) {
    Region& r = regions_[i];
    run[i] = all || !r.ran || !r.stale || r.stale();
    if (!all) r.ran = true;  // a replay captured into another graph has not run anything yet
  }
  return run;
}

void Graph::AddReplayHook(std::function<std::function<void()>()> hook) {
  std::lock_guard<std::mutex> g(mu_);
  replay_hooks_.push_back(std::move(hook));
}

std::vector<std::function<void()>> Graph::RunReplayHooks() {
  std::lock_guard<std::mutex> g(mu_);
  std::vector<std::function<void()>> out;
  for (auto& h : replay_hooks_) out.push_back(h());
  return out;
}

void Graph::AddCaptureEndHook(std::function<void()> hook) {
  std::lock_guard<std::mutex> g(mu_);
  capture_end_hooks_.push_back(std::move(hook));
}

void Graph::RunCaptureEndHooks() {
  std::vector<std::function<void()>> hooks;
  {
    std::lock_guard<std::mutex> g(mu_);
    hooks.swap(capture_end_hooks_);
  }
  for (auto& h : hooks) h();
}

std::shared_ptr<void> Graph::Attachment(const void* key) const {
  std::lock_guard<std::mutex> g(mu_);
  for (const auto& [k, v] : attachments_)
    if (k == key) return v;
  return nullptr;
}

void Graph::Attach(const void* key, std::shared_ptr<void> value) {
  std::lock_guard<std::mutex> g(mu_);
  attachments_.emplace_back(key, std::move(value));
}

void Graph::Run(const std::vector<char>& run_region, const std::vector<std::function<void()>>& first) const {
  for (const auto& f : first) f();
  // nodes_ no longer changes once capture has ended (a replay needs an ended capture).
  for (size_t i = 0; i < nodes_.size(); ++i) {
    const Node& n = nodes_[i];
    if (n.region >= 0 && !run_region[n.region]) continue;
    try {
      n.invoke(n.obj);
    } catch (const OutOfMemoryError&) {
      throw;
    } catch (const std::exception& e) {
      throw std::runtime_error("npu graph replay, node " + std::to_string(i) + " (" + n.op + "): " + e.what());
    }
  }
}

void Graph::Invalidate(const std::string& why) {
  std::lock_guard<std::mutex> g(mu_);
  if (invalid_.empty()) invalid_ = why;
}

std::string Graph::invalid_reason() const {
  std::lock_guard<std::mutex> g(mu_);
  return invalid_;
}

size_t Graph::size() const {
  std::lock_guard<std::mutex> g(mu_);
  return nodes_.size();
}

std::vector<std::string> Graph::Describe() const {
  std::lock_guard<std::mutex> g(mu_);
  std::vector<std::string> out;
  out.reserve(nodes_.size());
  for (const Node& n : nodes_)
    out.push_back((n.region >= 0 ? "[copy " + std::to_string(n.region) + "] " : std::string()) + n.op +
                  (n.detail.empty() ? "" : " " + n.detail));
  return out;
}

void Stream::BeginCapture(std::shared_ptr<Graph> graph) {
  CheckNotInBadFork();
  if (capturing())
    throw std::runtime_error("npu graph capture: stream " + std::to_string(id_) + " of npu:" +
                             std::to_string(device_) + " is already capturing a graph");
  capture_owner_ = std::move(graph);
  capture_.store(capture_owner_.get(), std::memory_order_release);
}

std::shared_ptr<Graph> Stream::EndCapture() {
  capture_.store(nullptr, std::memory_order_release);
  return std::move(capture_owner_);
}

uint64_t Stream::capture_pool() const {
  const Graph* g = capture_.load(std::memory_order_acquire);
  return g ? g->alloc_pool() : 0;
}

void Stream::CheckNotCapturing(const char* what) const {
  Graph* g = capture_.load(std::memory_order_acquire);
  if (!g) return;
  const std::string msg = std::string(what) + " is not allowed while an npu graph captures stream " +
                          std::to_string(id_) + " of npu:" + std::to_string(device_) +
                          " (a captured graph only replays device work); the capture is invalidated";
  g->Invalidate(msg);
  throw std::runtime_error("npu graph capture: " + msg);
}

void ReplayGraph(std::shared_ptr<Graph> graph, Stream& stream) {
  std::vector<char> run = graph->Stale(/*all=*/stream.capturing());
  std::vector<std::function<void()>> first = graph->RunReplayHooks();
  stream.Enqueue("graph_replay", [graph = std::move(graph), run = std::move(run), first = std::move(first)] {
    graph->Run(run, first);
  });
}

// ---------------------------------------------------------------------------------------------

void Event::Record(Stream& stream) {
  stream.CheckNotCapturing("recording an event");
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
  stream.CheckNotCapturing("waiting for an event (wait_stream / wait_event)");
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
