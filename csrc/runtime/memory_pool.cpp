#include "runtime/memory_pool.h"

#include <sys/mman.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <sstream>

#include "runtime/errors.h"
#include "runtime/stream.h"

namespace npu_rt {

namespace {
size_t RoundUp(size_t n, size_t m) { return (n + m - 1) / m * m; }

std::string FormatBytes(uint64_t b) {
  std::ostringstream s;
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(b);
  int u = 0;
  while (v >= 1024 && u < 4) v /= 1024, ++u;
  s.setf(std::ios::fixed);
  s.precision(u == 0 ? 0 : 2);
  s << v << " " << units[u];
  return s.str();
}

// Whether segments of 2 MiB and more are marked for transparent huge pages (TORCH_OPS_NN_HUGEPAGES=1; off
// by default). Huge pages save TLB misses in steady state (3-10% here: mm 2048, a 25 MB relu), but their
// first touch costs what the host makes it: on bare metal one 2 MiB clear; in a VM whose host takes back
// freed guest memory (free page reporting returns exactly such 2 MiB blocks) a huge page faults in from
// the host, up to 9 ms per 2 MiB on this project's machines: ResNet-50's first training step (1 GB of
// segments) took 5.6 s instead of 1.3, a 128 MB tensor's first fill 540 ms instead of 27. Which blocks
// are host-backed depends on what the machine freed seconds before, so a start-up probe cannot tell:
// the bounded base-page cost is the default, huge pages an opt-in for long runs on such hosts.
bool UseHugePages() {
  static const bool use = [] {
    const char* v = std::getenv("TORCH_OPS_NN_HUGEPAGES");
    return v && *v && std::atoi(v) != 0;
  }();
  return use;
}

void* MapSegment(size_t size) {
  void* p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) return nullptr;
#ifdef MADV_HUGEPAGE
  if (size >= (2u << 20) && UseHugePages()) madvise(p, size, MADV_HUGEPAGE);
#endif
  return p;
}
}  // namespace

DeviceMemoryPool::DeviceMemoryPool(int device, uint64_t capacity_bytes)
    : device_(device), capacity_(capacity_bytes), limit_(capacity_bytes) {}

void DeviceMemoryPool::SetFraction(double fraction) {
  std::lock_guard<std::mutex> g(mu_);
  fraction_ = fraction;
  limit_.store(static_cast<uint64_t>(static_cast<double>(capacity_) * fraction), std::memory_order_relaxed);
}

double DeviceMemoryPool::fraction() const {
  std::lock_guard<std::mutex> g(mu_);
  return fraction_;
}

DeviceMemoryPool::~DeviceMemoryPool() {
  // Process exit: the OS reclaims the mappings; nothing else to do (tensors may outlive us).
}

void DeviceMemoryPool::AddStats(const Block* b, int sign) {
  const int pool = b->small ? kSmallPool : kLargePool;
  for (int i : {static_cast<int>(kAggregate), pool}) {
    stats_.allocation[i].add(sign);
    stats_.active[i].add(sign);
    stats_.allocated_bytes[i].add(sign * static_cast<int64_t>(b->size));
    stats_.active_bytes[i].add(sign * static_cast<int64_t>(b->size));
    stats_.requested_bytes[i].add(sign * static_cast<int64_t>(b->requested));
  }
}

uint64_t DeviceMemoryPool::reserved() const {
  std::lock_guard<std::mutex> g(mu_);
  return stats_.reserved_bytes[kAggregate].current;
}

DeviceMemoryPool::Block* DeviceMemoryPool::FindFree(FreeSet& pool, size_t size, Stream* stream,
                                                    uint64_t graph_pool) {
  Block key{nullptr, size, 0, stream, false};
  key.graph_pool = graph_pool;
  auto it = pool.lower_bound(&key);
  if (it == pool.end() || (*it)->stream != stream || (*it)->graph_pool != graph_pool) return nullptr;
  Block* b = *it;
  // Do not carve a small request out of a huge cached block (fragmentation), as CUDA's allocator.
  if (!b->small && size < (1u << 20) * 4 && b->size > size * 4 + (64u << 20)) return nullptr;
  pool.erase(it);
  return b;
}

DeviceMemoryPool::Block* DeviceMemoryPool::NewSegment(size_t size, Stream* stream, bool small,
                                                      uint64_t graph_pool) {
  if (stats_.reserved_bytes[kAggregate].current + static_cast<int64_t>(size) > static_cast<int64_t>(limit()))
    return nullptr;
  void* p = MapSegment(size);
  if (!p) return nullptr;
  ++stats_.num_device_alloc;
  segments_.emplace(static_cast<const char*>(p), size);
  const int pool = small ? kSmallPool : kLargePool;
  for (int i : {static_cast<int>(kAggregate), pool}) {
    stats_.segment[i].add(1);
    stats_.reserved_bytes[i].add(static_cast<int64_t>(size));
  }
  Trace(TraceEntry::kSegmentAlloc, p, size, stream);
  Block* b = new Block{static_cast<char*>(p), size, 0, stream, small};
  b->graph_pool = graph_pool;
  return b;
}

void DeviceMemoryPool::ReleaseCachedSegments() {
  for (FreeSet* pool : {&small_free_, &large_free_}) {
    for (auto it = pool->begin(); it != pool->end();) {
      Block* b = *it;
      // Part of a segment still in use, or of a graph's pool (its replays write there).
      if (b->prev || b->next || b->graph_pool) { ++it; continue; }
      it = pool->erase(it);
      segments_.erase(b->ptr);
      Trace(TraceEntry::kSegmentFree, b->ptr, b->size, b->stream);
      munmap(b->ptr, b->size);
      ++stats_.num_device_free;
      const int k = b->small ? kSmallPool : kLargePool;
      for (int i : {static_cast<int>(kAggregate), k}) {
        stats_.segment[i].add(-1);
        stats_.reserved_bytes[i].add(-static_cast<int64_t>(b->size));
      }
      delete b;
    }
  }
}

void DeviceMemoryPool::Split(Block* b, size_t size, FreeSet& pool) {
  const size_t rest = b->size - size;
  const bool worth = b->small ? rest >= kMinBlock : rest > kSmallLimit;
  if (!worth) return;
  Block* r = new Block{b->ptr + size, rest, 0, b->stream, b->small};
  r->graph_pool = b->graph_pool;
  r->prev = b;
  r->next = b->next;
  if (b->next) b->next->prev = r;
  b->next = r;
  b->size = size;
  pool.insert(r);
  const int k = b->small ? kSmallPool : kLargePool;
  for (int i : {static_cast<int>(kAggregate), k}) {
    stats_.inactive_split[i].add(1);
    stats_.inactive_split_bytes[i].add(static_cast<int64_t>(rest));
  }
}

void* DeviceMemoryPool::Allocate(size_t bytes, Stream* stream, uint64_t graph_pool) {
  if (bytes == 0) return nullptr;
  CheckNotInBadFork();  // the pool's lock may be held by a thread fork did not copy
  std::lock_guard<std::mutex> g(mu_);
  return AllocateLocked(bytes, stream, true, graph_pool);
}

void* DeviceMemoryPool::TryAllocateCached(size_t bytes, Stream* stream, uint64_t graph_pool) {
  if (bytes == 0) return nullptr;
  CheckNotInBadFork();
  std::lock_guard<std::mutex> g(mu_);
  return AllocateLocked(bytes, stream, false, graph_pool);
}

void DeviceMemoryPool::RetainGraphPool(uint64_t id) {
  std::lock_guard<std::mutex> g(mu_);
  ++graph_pool_refs_[id];
}

void DeviceMemoryPool::ReleaseGraphPool(uint64_t id) {
  std::lock_guard<std::mutex> g(mu_);
  auto it = graph_pool_refs_.find(id);
  if (it == graph_pool_refs_.end() || --it->second > 0) return;
  graph_pool_refs_.erase(it);
  // The pool's blocks join the general cache: free ones are re-keyed (the free sets order by pool).
  for (FreeSet* set : {&small_free_, &large_free_}) {
    std::vector<Block*> moved;
    for (auto jt = set->begin(); jt != set->end();) {
      if ((*jt)->graph_pool == id) {
        moved.push_back(*jt);
        jt = set->erase(jt);
      } else {
        ++jt;
      }
    }
    for (Block* b : moved) {
      b->graph_pool = 0;
      set->insert(b);
    }
  }
  for (auto& [ptr, b] : live_)
    if (b->graph_pool == id) b->graph_pool = 0;
  for (auto& [b, events] : pending_)
    if (b->graph_pool == id) b->graph_pool = 0;
}

void* DeviceMemoryPool::AllocateLocked(size_t bytes, Stream* stream, bool may_release, uint64_t graph_pool) {
  ProcessPendingFrees();
  const size_t size = std::max(RoundUp(bytes, kMinBlock), kMinBlock);
  const bool small = size <= kSmallLimit;
  FreeSet& pool = small ? small_free_ : large_free_;
  Block* b = FindFree(pool, size, stream, graph_pool);
  if (b) {
    if (b->prev || b->next) {  // was an inactive split piece
      const int k = b->small ? kSmallPool : kLargePool;
      for (int i : {static_cast<int>(kAggregate), k}) {
        stats_.inactive_split[i].add(-1);
        stats_.inactive_split_bytes[i].add(-static_cast<int64_t>(b->size));
      }
    }
  } else {
    const size_t seg = small ? kSmallSegment : RoundUp(size, kLargeRound);
    b = NewSegment(seg, stream, small, graph_pool);
    if (!b && !may_release) return nullptr;
    if (!b) {
      ++stats_.num_alloc_retries;
      ReleaseCachedSegments();
      b = NewSegment(seg, stream, small, graph_pool);
    }
    if (!b) {
      ++stats_.num_ooms;
      Trace(TraceEntry::kOom, nullptr, bytes, stream);
      const uint64_t reserved = stats_.reserved_bytes[kAggregate].current;
      const uint64_t allocated = stats_.allocated_bytes[kAggregate].current;
      const uint64_t limit = this->limit();
      const uint64_t free = limit > reserved ? limit - reserved : 0;
      std::ostringstream msg;
      msg << "npu out of memory: tried to allocate " << FormatBytes(bytes) << " (" << bytes
          << " bytes) on npu:" << device_ << "; free " << FormatBytes(free) << " (" << free << " bytes) of total "
          << FormatBytes(capacity_) << " (" << capacity_ << " bytes); " << FormatBytes(allocated)
          << " allocated by tensors, " << FormatBytes(reserved) << " reserved by the caching allocator.";
      if (limit < capacity_)
        msg << " This process may use " << FormatBytes(limit) << " (set_per_process_memory_fraction(" << fraction_
            << ")).";
      if (reserved + seg <= limit)
        msg << " The host could not back the allocation with memory.";
      throw OutOfMemoryError(msg.str(), bytes, free, capacity_);
    }
  }
  Split(b, size, pool);
  b->allocated = true;
  b->requested = bytes;
  b->used_on.clear();
  live_.emplace(b->ptr, b);
  AddStats(b, +1);
  Trace(TraceEntry::kAlloc, b->ptr, b->size, stream);
  return b->ptr;
}

void DeviceMemoryPool::FreeBlock(Block* b) {
  b->allocated = false;
  Trace(TraceEntry::kFreeCompleted, b->ptr, b->size, b->stream);
  FreeSet& pool = b->small ? small_free_ : large_free_;
  const int k = b->small ? kSmallPool : kLargePool;
  // Merge with free neighbours of the same segment.
  for (Block* nb : {b->prev, b->next}) {
    if (!nb || nb->allocated || pool.count(nb) == 0) continue;
    pool.erase(nb);
    for (int i : {static_cast<int>(kAggregate), k}) {
      stats_.inactive_split[i].add(-1);
      stats_.inactive_split_bytes[i].add(-static_cast<int64_t>(nb->size));
    }
    if (nb == b->prev) {
      nb->size += b->size;
      nb->next = b->next;
      if (b->next) b->next->prev = nb;
      delete b;
      b = nb;
    } else {
      b->size += nb->size;
      b->next = nb->next;
      if (nb->next) nb->next->prev = b;
      delete nb;
    }
  }
  if (b->prev || b->next) {
    for (int i : {static_cast<int>(kAggregate), k}) {
      stats_.inactive_split[i].add(1);
      stats_.inactive_split_bytes[i].add(static_cast<int64_t>(b->size));
    }
  }
  pool.insert(b);
}

void DeviceMemoryPool::Free(void* ptr) {
  if (!ptr || InBadFork()) return;  // a forked child's copies of the parent's tensors: nothing to reuse
  std::lock_guard<std::mutex> g(mu_);
  auto it = live_.find(ptr);
  if (it == live_.end()) return;  // not ours (defensive: double free is ignored)
  Block* b = it->second;
  live_.erase(it);
  AddStats(b, -1);
  Trace(TraceEntry::kFreeRequested, b->ptr, b->size, b->stream);
  if (!b->used_on.empty()) {
    std::vector<std::shared_ptr<Event>> events;
    for (Stream* s : b->used_on) {
      if (s->capturing()) continue;  // its use is captured work: replays are the graph owner's to order
      auto e = std::make_shared<Event>(false);
      e->Record(*s);
      events.push_back(std::move(e));
    }
    b->used_on.clear();
    pending_.emplace_back(b, std::move(events));
    return;
  }
  FreeBlock(b);
}

void DeviceMemoryPool::ProcessPendingFrees() {
  for (auto it = pending_.begin(); it != pending_.end();) {
    bool done = std::all_of(it->second.begin(), it->second.end(), [](auto& e) { return e->Query(); });
    if (done) {
      FreeBlock(it->first);
      it = pending_.erase(it);
    } else {
      ++it;
    }
  }
}

void DeviceMemoryPool::RecordStream(void* ptr, Stream* stream) {
  std::lock_guard<std::mutex> g(mu_);
  auto it = live_.find(ptr);
  if (it == live_.end() || it->second->stream == stream) return;
  auto& v = it->second->used_on;
  if (std::find(v.begin(), v.end(), stream) == v.end()) v.push_back(stream);
}

void DeviceMemoryPool::EmptyCache() {
  std::lock_guard<std::mutex> g(mu_);
  ProcessPendingFrees();
  ReleaseCachedSegments();
}

bool DeviceMemoryPool::Owns(const void* ptr) const {
  std::lock_guard<std::mutex> g(mu_);
  auto it = segments_.upper_bound(static_cast<const char*>(ptr));
  if (it == segments_.begin()) return false;
  --it;
  return static_cast<const char*>(ptr) < it->first + it->second;
}

MemoryStats DeviceMemoryPool::Stats() const {
  std::lock_guard<std::mutex> g(mu_);
  return stats_;
}

void DeviceMemoryPool::ResetPeakStats() {
  std::lock_guard<std::mutex> g(mu_);
  for (StatCounter* arr : {stats_.allocation, stats_.segment, stats_.active, stats_.inactive_split,
                           stats_.allocated_bytes, stats_.reserved_bytes, stats_.active_bytes,
                           stats_.inactive_split_bytes, stats_.requested_bytes})
    for (int i = 0; i < kNumPoolStats; ++i) arr[i].reset_peak();
}

void DeviceMemoryPool::ResetAccumulatedStats() {
  std::lock_guard<std::mutex> g(mu_);
  for (StatCounter* arr : {stats_.allocation, stats_.segment, stats_.active, stats_.inactive_split,
                           stats_.allocated_bytes, stats_.reserved_bytes, stats_.active_bytes,
                           stats_.inactive_split_bytes, stats_.requested_bytes})
    for (int i = 0; i < kNumPoolStats; ++i) arr[i].reset_accumulated();
  stats_.num_alloc_retries = stats_.num_ooms = stats_.num_device_alloc = stats_.num_device_free = 0;
}

void DeviceMemoryPool::RecordTrace(TraceEntry::Action action, const void* ptr, uint64_t size,
                                   const Stream* stream) {
  TraceEntry e{action, reinterpret_cast<uint64_t>(ptr), size, stream ? stream->id() : 0,
               std::chrono::duration_cast<std::chrono::microseconds>(
                   std::chrono::system_clock::now().time_since_epoch()).count()};
  if (history_.size() < history_max_) {
    history_.push_back(e);
  } else {
    history_[history_next_] = e;
    history_next_ = (history_next_ + 1) % history_max_;
  }
}

void DeviceMemoryPool::SetHistory(bool record, size_t max_entries) {
  std::lock_guard<std::mutex> g(mu_);
  recording_ = record && max_entries > 0;
  if (!record && max_entries != 0) return;  // pause: keep the events
  if (max_entries == history_max_) return;
  std::vector<TraceEntry> kept;
  if (max_entries != 0) {  // keep the newest events that fit
    for (size_t i = 0; i < history_.size(); ++i) kept.push_back(history_[(history_next_ + i) % history_.size()]);
    if (kept.size() > max_entries) kept.erase(kept.begin(), kept.end() - static_cast<ptrdiff_t>(max_entries));
  }
  history_ = std::move(kept);
  history_next_ = 0;
  history_max_ = max_entries;
}

std::vector<TraceEntry> DeviceMemoryPool::History() const {
  std::lock_guard<std::mutex> g(mu_);
  std::vector<TraceEntry> out;
  out.reserve(history_.size());
  for (size_t i = 0; i < history_.size(); ++i) out.push_back(history_[(history_next_ + i) % history_.size()]);
  return out;
}

std::vector<SegmentSnapshot> DeviceMemoryPool::Snapshot() const {
  std::lock_guard<std::mutex> g(mu_);
  // Every block is live, free (in a pool) or pending (freed, still in use by another stream).
  std::unordered_map<const char*, std::pair<const Block*, BlockSnapshot::State>> at;
  for (const auto& [p, b] : live_) at.emplace(b->ptr, std::make_pair(b, BlockSnapshot::kActiveAllocated));
  for (const FreeSet* pool : {&small_free_, &large_free_})
    for (const Block* b : *pool) at.emplace(b->ptr, std::make_pair(b, BlockSnapshot::kInactive));
  for (const auto& pe : pending_) at.emplace(pe.first->ptr, std::make_pair(pe.first, BlockSnapshot::kActivePendingFree));
  std::vector<SegmentSnapshot> out;
  for (const auto& [base, size] : segments_) {
    SegmentSnapshot seg;
    seg.address = reinterpret_cast<uint64_t>(base);
    seg.size = size;
    auto it = at.find(base);
    for (const Block* b = it == at.end() ? nullptr : it->second.first; b; b = b->next) {
      auto bt = at.find(b->ptr);
      BlockSnapshot bs;
      bs.address = reinterpret_cast<uint64_t>(b->ptr);
      bs.size = b->size;
      bs.requested = b->allocated || (bt != at.end() && bt->second.second == BlockSnapshot::kActivePendingFree)
                         ? b->requested : 0;
      bs.state = bt == at.end() ? BlockSnapshot::kInactive : bt->second.second;
      seg.small = b->small;
      seg.stream = b->stream ? b->stream->id() : 0;
      seg.blocks.push_back(bs);
    }
    out.push_back(std::move(seg));
  }
  return out;
}

}  // namespace npu_rt
