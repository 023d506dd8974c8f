// Device memory of one simulated NPU: a capacity (the SoC's HBM, or an override), backed lazily by
// host memory, and a caching allocator over it. Freed blocks go back to size-class pools of the
// stream they were allocated on and are split and merged, so a model that allocates the same
// shapes every step touches no new pages (mmap'ed segments are faulted in once, then reused).
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <unordered_map>
#include <vector>

namespace npu_rt {

class Stream;
class Event;

struct StatCounter {  // current / peak / allocated (cumulative increments) / freed (cumulative decrements)
  int64_t current = 0, peak = 0, allocated = 0, freed = 0;
  void add(int64_t n) {
    current += n;
    if (n > 0) allocated += n; else freed -= n;
    if (current > peak) peak = current;
  }
  void reset_peak() { peak = current; }
  void reset_accumulated() { allocated = freed = 0; }
};

enum PoolKind { kAggregate = 0, kSmallPool = 1, kLargePool = 2, kNumPoolStats = 3 };

struct MemoryStats {
  StatCounter allocation[kNumPoolStats];      // count of live allocations
  StatCounter segment[kNumPoolStats];         // count of segments obtained from "device" memory
  StatCounter active[kNumPoolStats];
  StatCounter inactive_split[kNumPoolStats];
  StatCounter allocated_bytes[kNumPoolStats];
  StatCounter reserved_bytes[kNumPoolStats];
  StatCounter active_bytes[kNumPoolStats];
  StatCounter inactive_split_bytes[kNumPoolStats];
  StatCounter requested_bytes[kNumPoolStats];
  int64_t num_alloc_retries = 0;
  int64_t num_ooms = 0;
  int64_t num_device_alloc = 0;
  int64_t num_device_free = 0;
};

// torch.npu.memory_snapshot(): one segment (a mapping) with its blocks in address order.
struct BlockSnapshot {
  uint64_t address = 0, size = 0, requested = 0;
  enum State { kInactive, kActiveAllocated, kActivePendingFree } state = kInactive;
};
struct SegmentSnapshot {
  uint64_t address = 0, size = 0;
  bool small = false;
  int64_t stream = 0;  // the stream id the segment's blocks belong to
  std::vector<BlockSnapshot> blocks;
};
// torch.npu.memory._record_memory_history(): the allocator's events, oldest first.
struct TraceEntry {
  enum Action { kAlloc, kFreeRequested, kFreeCompleted, kSegmentAlloc, kSegmentFree, kOom } action;
  uint64_t address = 0, size = 0;
  int64_t stream = 0;
  int64_t time_us = 0;  // since the epoch
};

class DeviceMemoryPool {
 public:
  DeviceMemoryPool(int device, uint64_t capacity_bytes);
  ~DeviceMemoryPool();

  // Returns device memory of at least `bytes` usable on `stream` (nullptr for 0 bytes).
  // Throws OutOfMemoryError (requested/free/total) when the device cannot hold it, after
  // releasing cached segments; the pool stays usable.
  // `graph_pool` != 0: from that graph's private pool (segments of its own, whose freed blocks only
  // allocations of the same pool reuse, and which empty_cache keeps while the pool is retained).
  void* Allocate(size_t bytes, Stream* stream, uint64_t graph_pool = 0);
  // Like Allocate, but returns nullptr instead of releasing cached segments or throwing: the
  // caller must first make sure no stream still uses freed blocks (see runtime::Malloc).
  void* TryAllocateCached(size_t bytes, Stream* stream, uint64_t graph_pool = 0);
  // A graph (torch.npu.NPUGraph) holds its private pool from capture to reset. When the last holder
  // releases it, its segments join the general cache (blocks still live stay allocated).
  void RetainGraphPool(uint64_t id);
  void ReleaseGraphPool(uint64_t id);
  void Free(void* ptr);
  // The block is also used on `stream`: do not reuse it before that stream's work is done.
  void RecordStream(void* ptr, Stream* stream);
  // Releases every cached segment that holds no live allocation. Callers synchronize the
  // device's streams first: a freed block may still be read by a queued kernel.
  void EmptyCache();

  bool Owns(const void* ptr) const;
  MemoryStats Stats() const;
  void ResetPeakStats();
  void ResetAccumulatedStats();
  uint64_t capacity() const { return capacity_; }
  // torch.npu.set_per_process_memory_fraction: reserved memory may not exceed fraction * capacity.
  void SetFraction(double fraction);
  double fraction() const;
  uint64_t limit() const { return limit_.load(std::memory_order_relaxed); }
  uint64_t reserved() const;
  int device() const { return device_; }
  std::vector<SegmentSnapshot> Snapshot() const;
  // Record the allocator's events, keeping the last `max_entries`; record = false stops recording
  // and keeps the events (max_entries 0 with it: drops them).
  void SetHistory(bool record, size_t max_entries);
  std::vector<TraceEntry> History() const;

  static constexpr size_t kMinBlock = 512;            // allocation granularity (and alignment)
  static constexpr size_t kSmallLimit = 1 << 20;      // <= 1 MiB: small pool
  static constexpr size_t kSmallSegment = 2 << 20;    // small pool segment size
  static constexpr size_t kLargeRound = 2 << 20;      // large segments are multiples of 2 MiB

 private:
  struct Block {
    char* ptr;
    size_t size;
    size_t requested = 0;
    Stream* stream;
    bool small;
    bool allocated = false;
    Block* prev = nullptr;  // neighbours inside one segment
    Block* next = nullptr;
    std::vector<Stream*> used_on;  // other streams (RecordStream)
    uint64_t graph_pool = 0;       // 0: the general cache
  };
  struct BlockLess {
    bool operator()(const Block* a, const Block* b) const {
      if (a->graph_pool != b->graph_pool) return a->graph_pool < b->graph_pool;
      if (a->stream != b->stream) return a->stream < b->stream;
      if (a->size != b->size) return a->size < b->size;
      return a->ptr < b->ptr;
    }
  };
  using FreeSet = std::set<Block*, BlockLess>;

  void* AllocateLocked(size_t bytes, Stream* stream, bool may_release, uint64_t graph_pool);
  Block* FindFree(FreeSet& pool, size_t size, Stream* stream, uint64_t graph_pool);
  Block* NewSegment(size_t size, Stream* stream, bool small, uint64_t graph_pool);  // nullptr if over capacity
  void ReleaseCachedSegments();
  void FreeBlock(Block* b);
  void ProcessPendingFrees();
  void Split(Block* b, size_t size, FreeSet& pool);
  void AddStats(const Block* b, int sign);
  // Allocation-path hook: one inline flag test unless torch.npu.memory._record_memory_history is on.
  void Trace(TraceEntry::Action action, const void* ptr, uint64_t size, const Stream* stream) {
    if (recording_) RecordTrace(action, ptr, size, stream);
  }
  void RecordTrace(TraceEntry::Action action, const void* ptr, uint64_t size, const Stream* stream);

  const int device_;
  const uint64_t capacity_;
  std::atomic<uint64_t> limit_;  // capacity_ * the process's memory fraction
  double fraction_ = 1.0;
  mutable std::mutex mu_;
  FreeSet small_free_, large_free_;
  std::unordered_map<void*, Block*> live_;
  std::map<const char*, size_t> segments_;  // base -> size, for Owns()
  std::vector<std::pair<Block*, std::vector<std::shared_ptr<Event>>>> pending_;  // freed while other streams use them
  MemoryStats stats_;
  std::map<uint64_t, int> graph_pool_refs_;
  bool recording_ = false;
  size_t history_max_ = 0;  // a ring of the last history_max_ events
  size_t history_next_ = 0;
  std::vector<TraceEntry> history_;
};

}  // namespace npu_rt
