// The simulated NPU runtime: devices, memory, streams, events, copies and kernel launch. Shaped
// like CANN's ACL runtime (aclrtMalloc / aclrtMemcpy / streams / events / launch) so that a CANN
// build could put libascendcl under layer 4 in its place. No torch headers here.
//
// Environment: TORCH_OPS_NN_DEVICE_COUNT (default 1), ASCEND_RT_VISIBLE_DEVICES (a comma list of
// physical ids among them), TORCH_OPS_NN_SOC (a profile name, or a comma list per device; default
// Ascend910B2), TORCH_OPS_NN_DEVICE_MEMORY (capacity per device, e.g. "2GB", default the SoC's HBM).
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "runtime/memory_pool.h"
#include "runtime/soc_profile.h"
#include "runtime/stream.h"
#include "runtime/thread_pool.h"

namespace npu_rt {

struct DeviceInfo {
  int index;         // logical index, what torch sees
  int physical_id;   // id before ASCEND_RT_VISIBLE_DEVICES remapping
  const SocProfile* soc;
  uint64_t capacity_bytes;
};

// Non-empty when the environment variables above are invalid (then DeviceCount() is 0).
std::string ConfigError();
int DeviceCount();
// Throws std::invalid_argument for an index outside [0, DeviceCount()).
const DeviceInfo& GetDeviceInfo(int device);
DeviceMemoryPool& MemoryPool(int device);
// The pool that owns `ptr`, or -1.
int DeviceOfPointer(const void* ptr);

// Streams: id 0 is the device's default stream; ids 1..kStreamPoolSize are pooled streams created
// on first use (each has its own executor thread).
constexpr int64_t kStreamPoolSize = 8;
Stream& GetStream(int device, int64_t id);
// The next pooled stream, round robin.
int64_t NextPooledStreamId(int device);
// Waits for every stream of the device, re-raising the first asynchronous error.
void DeviceSynchronize(int device);

// Memory. Allocations for a capturing stream come from its graph's private pool.
void* Malloc(int device, size_t bytes, Stream& stream);
void Free(void* ptr);
// Waits for the device's streams, then releases cached memory no tensor uses.
void EmptyCache(int device);
// Copies run on `stream` in order with its other work. Host memory must stay valid until the copy
// has run (callers keep it alive in the task or synchronize).
void MemcpyAsync(void* dst, const void* src, size_t bytes, Stream& stream);
// Parallel memcpy on the calling thread (used by copy tasks).
void ParallelMemcpy(void* dst, const void* src, size_t bytes);

// torch.npu.NPUGraph's runtime side: a capture of one stream (Graph), the private memory pool its
// allocations came from, and the replays still in flight (reset waits for them before the pool's
// memory may serve other allocations).
uint64_t NewGraphPoolId();  // torch.npu.graph_pool_handle(): a pool several graphs may share
class CapturedGraph {
 public:
  CapturedGraph() = default;
  ~CapturedGraph();
  CapturedGraph(const CapturedGraph&) = delete;
  CapturedGraph& operator=(const CapturedGraph&) = delete;
  // pool 0: a private pool of its own; else a pool id from NewGraphPoolId or another graph's pool().
  void CaptureBegin(Stream& stream, uint64_t pool);
  // Throws if a forbidden operation invalidated the capture (the graph is then reset).
  void CaptureEnd();
  void Replay(Stream& stream);
  void Reset();
  bool capturing() const { return capturing_ != nullptr; }
  bool captured() const { return graph_ != nullptr; }
  uint64_t pool() const { return pool_; }
  size_t num_nodes() const;
  std::vector<std::string> Describe() const;

 private:
  int device_ = 0;
  uint64_t pool_ = 0, persistent_pool_ = 0;
  Stream* capturing_ = nullptr;
  std::shared_ptr<Graph> graph_;
  std::vector<std::pair<Stream*, std::shared_ptr<Event>>> replays_;  // the last replay on each stream
};

// Kernel launch: runs `block(i)` for i in [0, block_dim) over the host thread pool, as one task on
// `stream`. `op` names the kernel for errors and logs.
// The task holds `block` by value (in its queue slot when small enough: no allocation per launch).
void CheckLaunchBlockDim(const char* op, int64_t block_dim);
template <class Block>
void LaunchKernel(Stream& stream, const char* op, int64_t block_dim, Block&& block, std::string detail = {}) {
  CheckLaunchBlockDim(op, block_dim);
  stream.Enqueue(
      op,
      [block_dim, block = std::forward<Block>(block)] {
        GlobalThreadPool().ParallelFor(block_dim, FunctionRef<void(int64_t)>(block));
      },
      std::move(detail));
}

}  // namespace npu_rt
