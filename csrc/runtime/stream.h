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
#include <vector>

namespace npu_rt {

class Stream;

// A captured sequence of tasks (torch.npu.NPUGraph). While a graph captures a stream, every task
// enqueued on that stream is appended here instead of being run; a replay runs them all, in capture
// order, as one task on the replaying stream. Tasks are the same callables a launch enqueues (kernel,
// tiling, core configuration, device pointers), so a replay repeats the captured work on the same
// device memory: the graph's private memory pool keeps that memory out of other allocations.
class Graph {
 public:
  // `pool`: where allocations made during capture come from (shared with other graphs through
  // pool=); `persistent_pool`: this graph's own pool for what must survive between replays.
  Graph(int device, uint64_t pool, uint64_t persistent_pool)
      : device_(device), pool_(pool), persistent_pool_(persistent_pool) {}
  ~Graph();
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;

  template <class F>
  void Append(const char* op, F&& fn, std::string detail) {
    using D = std::decay_t<F>;
    Node n;
    n.region = open_region_;
    n.op = op;
    n.obj = new D(std::forward<F>(fn));
    n.invoke = [](void* p) { (*static_cast<D*>(p))(); };
    n.destroy = [](void* p) { delete static_cast<D*>(p); };
    n.detail = std::move(detail);
    std::lock_guard<std::mutex> g(mu_);
    nodes_.push_back(std::move(n));
  }
  // A guarded region: the nodes captured between BeginRegion and EndRegion (a parameter's derived
  // copy: a conv weight in the cube's order, a packed Linear operand, folded BN parameters) run at a
  // replay only when `stale()` says the copy's sources changed. stale() is asked by Stale() on the
  // host thread that calls replay, so in order with the host's in-place updates of the sources.
  // `keep` (the copy) stays alive with the graph: replays that skip the region still read it.
  // A region begun inside another belongs to the outer one (BeginRegion returns -1 and EndRegion(-1) is a no-op).
  int BeginRegion();
  void EndRegion(int region, std::function<bool()> stale, std::shared_ptr<void> keep);
  // Host work each replay does when it is enqueued, in the order added; each hook returns the device
  // side (run first in the replay's task), e.g. the Philox words of the graph's random kernels.
  void AddReplayHook(std::function<std::function<void()>()> hook);
  std::vector<std::function<void()>> RunReplayHooks();
  // Run once when the capture ends successfully, in the order added (a guarded region learns whether
  // the captured work itself wrote its sources after it).
  void AddCaptureEndHook(std::function<void()> hook);
  void RunCaptureEndHooks();
  // Per-graph state a layer above keeps with the graph (the random-number state per generator).
  std::shared_ptr<void> Attachment(const void* key) const;
  void Attach(const void* key, std::shared_ptr<void> value);
  // Which regions the next replay runs (every region at the first replay, and with `all`: a replay
  // captured into another graph cannot ask at its own replays).
  std::vector<char> Stale(bool all = false);
  // Runs the nodes in order on the calling thread (the replaying stream's executor), those of guarded
  // regions only where `run_region` says so; a node's error is rethrown naming it.
  void Run(const std::vector<char>& run_region, const std::vector<std::function<void()>>& first = {}) const;
  // A forbidden operation happened during capture (a sync, an event, a random op): capture_end fails
  // with this reason. The first reason wins.
  void Invalidate(const std::string& why);
  std::string invalid_reason() const;
  size_t size() const;
  std::vector<std::string> Describe() const;  // "op detail" per node, for debug_dump
  int device() const { return device_; }
  uint64_t pool() const { return pool_; }
  // The pool an allocation during capture comes from: the persistent pool while a guarded region
  // stores the copy it keeps (SetPersistentAllocs). Memory freed during capture is reused by later
  // captured work, which is correct only because a replay reruns everything in order; a copy that
  // replays may skip must sit where no other captured work writes.
  uint64_t alloc_pool() const { return persistent_allocs_.load(std::memory_order_relaxed) ? persistent_pool_ : pool_; }
  void SetPersistentAllocs(bool on) { persistent_allocs_.store(on, std::memory_order_relaxed); }

 private:
  struct Node {
    int region = -1;
    const char* op = nullptr;
    void* obj = nullptr;
    void (*invoke)(void*) = nullptr;
    void (*destroy)(void*) = nullptr;
    std::string detail;
  };
  const int device_;
  const uint64_t pool_, persistent_pool_;
  std::atomic<bool> persistent_allocs_{false};
  mutable std::mutex mu_;
  std::vector<Node> nodes_;
  std::string invalid_;
  int open_region_ = -1;
  struct Region {
    std::function<bool()> stale;
    std::shared_ptr<void> keep;
    bool ran = false;
  };
  std::vector<Region> regions_;
  std::vector<std::function<std::function<void()>()>> replay_hooks_;
  std::vector<std::function<void()>> capture_end_hooks_;
  std::vector<std::pair<const void*, std::shared_ptr<void>>> attachments_;
};

class Stream {
 public:
  Stream(int device, int64_t id);
  ~Stream();
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;

  // Runs `fn` after every task enqueued before it. `op` must outlive the task (a string literal);
  // `detail` (shapes, dtypes...) is only formatted by callers when debug logging is on.
  // With ASCEND_LAUNCH_BLOCKING=1 this waits for the task and throws its error here.
  // While a graph captures this stream the task is appended to the graph instead (see Graph).
  template <class F>
  void Enqueue(const char* op, F&& fn, std::string detail = {}) {
    if (Graph* g = capture_.load(std::memory_order_acquire)) {
      g->Append(op, std::forward<F>(fn), std::move(detail));
      return;
    }
    std::unique_lock<std::mutex> producer = WaitForSlot();
    slots_[tail_.load(std::memory_order_relaxed) % kSlots].Emplace(op, std::forward<F>(fn), std::move(detail));
    Publish(producer);
  }
  // Waits for every enqueued task; re-raises (and clears) the first error raised since the last sync.
  // Throws (and invalidates the capture) while a graph captures the stream, as CUDA does.
  void Synchronize();
  // True when every enqueued task has finished.
  bool Query() const;
  // Waits for every enqueued task without consuming a pending error (allocator use).
  void WaitIdle();

  int device() const { return device_; }
  int64_t id() const { return id_; }

  // Graph capture: from BeginCapture to EndCapture every task enqueued on this stream (by any thread)
  // goes to `graph`. Throws if the stream is already capturing.
  void BeginCapture(std::shared_ptr<Graph> graph);
  std::shared_ptr<Graph> EndCapture();  // the captured graph (nullptr if not capturing)
  bool capturing() const { return capture_.load(std::memory_order_acquire) != nullptr; }
  Graph* capture_graph() const { return capture_.load(std::memory_order_acquire); }
  // The private pool of the capturing graph (0 when not capturing): allocations made for this stream
  // during capture come from it.
  uint64_t capture_pool() const;
  // Throws "<what> is not allowed while an npu graph captures stream N" and invalidates the capture
  // when the stream is capturing.
  void CheckNotCapturing(const char* what) const;

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
  std::atomic<Graph*> capture_{nullptr};
  std::shared_ptr<Graph> capture_owner_;  // set and cleared with capture_, by the capturing thread
};

// Enqueues one task on `stream` that runs every node of `graph` (torch.npu.NPUGraph.replay).
void ReplayGraph(std::shared_ptr<Graph> graph, Stream& stream);

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
