#include "runtime/runtime.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <sstream>
#include <stdexcept>

#include "runtime/thread_pool.h"

namespace npu_rt {

namespace {

std::vector<std::string> SplitList(const std::string& s) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : s) {
    if (c == ',') { out.push_back(cur); cur.clear(); }
    else if (!std::isspace(static_cast<unsigned char>(c))) cur += c;
  }
  if (!cur.empty() || !out.empty()) out.push_back(cur);
  return out;
}

uint64_t ParseBytes(const std::string& text) {
  size_t pos = 0;
  double v = std::stod(text, &pos);
  std::string unit = text.substr(pos);
  for (auto& c : unit) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  double mult = 1;
  if (unit == "" || unit == "B") mult = 1;
  else if (unit == "K" || unit == "KB" || unit == "KIB") mult = 1024.0;
  else if (unit == "M" || unit == "MB" || unit == "MIB") mult = 1024.0 * 1024;
  else if (unit == "G" || unit == "GB" || unit == "GIB") mult = 1024.0 * 1024 * 1024;
  else throw std::invalid_argument("TORCH_OPS_NN_DEVICE_MEMORY: unknown unit '" + unit + "' in '" + text + "'");
  return static_cast<uint64_t>(v * mult);
}

struct DeviceState {
  DeviceInfo info;
  std::unique_ptr<DeviceMemoryPool> pool;
  std::array<std::unique_ptr<Stream>, kStreamPoolSize + 1> streams;
  std::mutex streams_mu;
  std::atomic<int64_t> next_pooled{0};
};

struct Registry {
  std::vector<std::unique_ptr<DeviceState>> devices;
  std::string config_error;  // set when the environment is invalid: every device call throws it
};

Registry& GetRegistry() {
  static Registry* reg = [] {
    auto* r = new Registry();  // leaked on purpose: tensors may be freed during interpreter teardown
    try {
      const char* count_env = std::getenv("TORCH_OPS_NN_DEVICE_COUNT");
      int physical = count_env && *count_env ? std::stoi(count_env) : 1;
      if (physical < 0 || physical > 64)
        throw std::invalid_argument("TORCH_OPS_NN_DEVICE_COUNT must be in [0, 64], got " + std::to_string(physical));
      std::vector<int> ids;
      const char* vis = std::getenv("ASCEND_RT_VISIBLE_DEVICES");
      if (vis) {
        for (const auto& t : SplitList(vis)) {
          if (t.empty()) continue;
          int id = std::stoi(t);
          if (id < 0 || id >= physical) break;  // like CANN/CUDA: an invalid id ends the list
          if (std::find(ids.begin(), ids.end(), id) != ids.end()) break;
          ids.push_back(id);
        }
      } else {
        for (int i = 0; i < physical; ++i) ids.push_back(i);
      }
      std::vector<std::string> socs = SplitList(std::getenv("TORCH_OPS_NN_SOC") ? std::getenv("TORCH_OPS_NN_SOC") : "");
      const char* mem_env = std::getenv("TORCH_OPS_NN_DEVICE_MEMORY");
      for (size_t i = 0; i < ids.size(); ++i) {
        auto d = std::make_unique<DeviceState>();
        std::string soc = socs.empty() ? "Ascend910B2" : socs[std::min<size_t>(ids[i], socs.size() - 1)];
        if (soc.empty()) soc = "Ascend910B2";
        d->info.index = static_cast<int>(i);
        d->info.physical_id = ids[i];
        d->info.soc = &FindSocProfile(soc);
        d->info.capacity_bytes = mem_env && *mem_env ? ParseBytes(mem_env) : d->info.soc->hbm_bytes;
        d->pool = std::make_unique<DeviceMemoryPool>(static_cast<int>(i), d->info.capacity_bytes);
        r->devices.push_back(std::move(d));
      }
    } catch (const std::exception& e) {
      r->devices.clear();
      r->config_error = std::string("invalid npu environment: ") + e.what();
    }
    return r;
  }();
  return *reg;
}

DeviceState& State(int device) {
  Registry& r = GetRegistry();
  if (!r.config_error.empty()) throw std::invalid_argument(r.config_error);
  if (device < 0 || device >= static_cast<int>(r.devices.size())) {
    std::ostringstream s;
    s << "invalid npu device index " << device << ": " << r.devices.size() << " device(s) visible";
    if (r.devices.empty()) s << " (TORCH_OPS_NN_DEVICE_COUNT / ASCEND_RT_VISIBLE_DEVICES)";
    else s << ", valid indices are 0.." << r.devices.size() - 1;
    throw std::invalid_argument(s.str());
  }
  return *r.devices[device];
}

}  // namespace

std::string ConfigError() { return GetRegistry().config_error; }

int DeviceCount() { return static_cast<int>(GetRegistry().devices.size()); }
const DeviceInfo& GetDeviceInfo(int device) { return State(device).info; }
DeviceMemoryPool& MemoryPool(int device) { return *State(device).pool; }

int DeviceOfPointer(const void* ptr) {
  for (auto& d : GetRegistry().devices)
    if (d->pool->Owns(ptr)) return d->info.index;
  return -1;
}

Stream& GetStream(int device, int64_t id) {
  DeviceState& d = State(device);
  if (id < 0 || id > kStreamPoolSize)
    throw std::invalid_argument("invalid npu stream id " + std::to_string(id) + " (valid: 0.." +
                                std::to_string(kStreamPoolSize) + ")");
  auto& slot = d.streams[id];
  if (Stream* s = slot.get()) return *s;
  std::lock_guard<std::mutex> g(d.streams_mu);
  if (!slot) slot = std::make_unique<Stream>(device, id);
  return *slot;
}

int64_t NextPooledStreamId(int device) {
  DeviceState& d = State(device);
  return 1 + (d.next_pooled.fetch_add(1) % kStreamPoolSize);
}

void DeviceSynchronize(int device) {
  DeviceState& d = State(device);
  for (auto& s : d.streams)
    if (s) s->Synchronize();
}

namespace {
void WaitAllStreams(DeviceState& d) {
  for (auto& s : d.streams)
    if (s) s->WaitIdle();
}
}  // namespace

void* Malloc(int device, size_t bytes, Stream& stream) {
  DeviceState& d = State(device);
  const uint64_t graph_pool = stream.capture_pool();  // a capturing stream allocates from its graph's pool
  if (void* p = d.pool->TryAllocateCached(bytes, &stream, graph_pool)) return p;
  if (bytes == 0) return nullptr;
  // Releasing cached segments unmaps them: queued kernels may still read freed blocks there.
  WaitAllStreams(d);
  return d.pool->Allocate(bytes, &stream, graph_pool);
}

uint64_t NewGraphPoolId() {
  static std::atomic<uint64_t> next{1};
  return next.fetch_add(1);
}

CapturedGraph::~CapturedGraph() {
  try {
    Reset();
  } catch (...) {
  }
}

void CapturedGraph::CaptureBegin(Stream& stream, uint64_t pool) {
  if (capturing_) throw std::runtime_error("NPUGraph.capture_begin: this graph is already capturing");
  if (graph_)
    throw std::runtime_error("NPUGraph.capture_begin: this graph already holds a capture; call reset() first");
  if (stream.capturing())
    throw std::runtime_error("NPUGraph.capture_begin: stream " + std::to_string(stream.id()) + " of npu:" +
                             std::to_string(stream.device()) + " is already capturing another graph");
  pool_ = pool ? pool : NewGraphPoolId();
  persistent_pool_ = NewGraphPoolId();
  device_ = stream.device();
  MemoryPool(device_).RetainGraphPool(pool_);
  MemoryPool(device_).RetainGraphPool(persistent_pool_);
  stream.BeginCapture(std::make_shared<Graph>(device_, pool_, persistent_pool_));
  capturing_ = &stream;
}

void CapturedGraph::CaptureEnd() {
  if (!capturing_) throw std::runtime_error("NPUGraph.capture_end: the graph is not capturing (call capture_begin first)");
  std::shared_ptr<Graph> g = capturing_->EndCapture();
  capturing_ = nullptr;
  const std::string why = g ? g->invalid_reason() : "the stream's capture was ended elsewhere";
  if (!why.empty()) {
    g.reset();
    Reset();
    throw std::runtime_error("NPUGraph.capture_end: the capture was invalidated: " + why);
  }
  g->RunCaptureEndHooks();
  graph_ = std::move(g);
}

void CapturedGraph::Replay(Stream& stream) {
  if (capturing_) throw std::runtime_error("NPUGraph.replay: the graph is still capturing (call capture_end first)");
  if (!graph_) throw std::runtime_error("NPUGraph.replay: the graph holds no capture (capture it first)");
  if (stream.device() != device_)
    throw std::runtime_error("NPUGraph.replay: the graph was captured on npu:" + std::to_string(device_) +
                             " but the current stream is on npu:" + std::to_string(stream.device()));
  ReplayGraph(graph_, stream);
  if (!stream.capturing()) {  // inside another capture the replay is that graph's node
    auto done = std::make_shared<Event>(false);
    done->Record(stream);
    for (auto& e : replays_)
      if (e.first == &stream) { e.second = std::move(done); return; }
    replays_.emplace_back(&stream, std::move(done));
  }
}

void CapturedGraph::Reset() {
  if (capturing_) {
    capturing_->EndCapture();
    capturing_ = nullptr;
  }
  // Its pool may only join the general cache once no replay still writes there.
  for (auto& e : replays_) e.second->Synchronize();
  replays_.clear();
  graph_.reset();
  if (pool_) MemoryPool(device_).ReleaseGraphPool(pool_);
  if (persistent_pool_) MemoryPool(device_).ReleaseGraphPool(persistent_pool_);
  pool_ = persistent_pool_ = 0;
}

size_t CapturedGraph::num_nodes() const { return graph_ ? graph_->size() : 0; }
std::vector<std::string> CapturedGraph::Describe() const { return graph_ ? graph_->Describe() : std::vector<std::string>{}; }

void EmptyCache(int device) {
  DeviceState& d = State(device);
  WaitAllStreams(d);
  d.pool->EmptyCache();
}

void Free(void* ptr) {
  if (!ptr) return;
  for (auto& d : GetRegistry().devices)
    if (d->pool->Owns(ptr)) { d->pool->Free(ptr); return; }
}

void ParallelMemcpy(void* dst, const void* src, size_t bytes) {
  constexpr size_t kChunk = 4u << 20;
  if (bytes < 2 * kChunk) { std::memcpy(dst, src, bytes); return; }
  const int64_t pieces = static_cast<int64_t>((bytes + kChunk - 1) / kChunk);
  GlobalThreadPool().ParallelFor(pieces, [&](int64_t p) {
    const size_t b = static_cast<size_t>(p) * kChunk, n = std::min(kChunk, bytes - b);
    std::memcpy(static_cast<char*>(dst) + b, static_cast<const char*>(src) + b, n);
  });
}

void MemcpyAsync(void* dst, const void* src, size_t bytes, Stream& stream) {
  if (bytes == 0) return;
  stream.Enqueue("memcpy", [dst, src, bytes] { ParallelMemcpy(dst, src, bytes); });
}

void CheckLaunchBlockDim(const char* op, int64_t block_dim) {
  if (block_dim < 1 || block_dim > 65535)
    throw std::invalid_argument(std::string(op) + ": blockDim " + std::to_string(block_dim) +
                                " is outside [1, 65535]");
}

}  // namespace npu_rt
