#include "runtime/log.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <utility>
#include <vector>

namespace npu_rt::log {
namespace {
int LevelFromEnv() {
  const char* v = std::getenv("ASCEND_GLOBAL_LOG_LEVEL");
  if (!v || !*v) return kError;
  int l = std::atoi(v);
  return l < kDebug ? kDebug : (l > kError ? kError : l);
}
std::atomic<int> g_level{LevelFromEnv()};
std::atomic<Sink> g_sink{nullptr};
std::mutex g_mu;
std::vector<std::pair<int, std::string>> g_deferred;
std::atomic<bool> g_has_deferred{false};
}  // namespace

int CurrentLevel() { return g_level.load(std::memory_order_relaxed); }
void SetLevel(int level) { g_level.store(level); }
void SetSink(Sink sink) { g_sink.store(sink); }

void Emit(int level, const std::string& msg) {
  if (!Enabled(level)) return;
  if (Sink s = g_sink.load()) s(level, msg);
  else std::fprintf(stderr, "[torch_ops_nn] %s\n", msg.c_str());
}

void Defer(int level, std::string msg) {
  if (!Enabled(level)) return;
  std::lock_guard<std::mutex> g(g_mu);
  g_deferred.emplace_back(level, std::move(msg));
  g_has_deferred.store(true, std::memory_order_release);
}

void FlushDeferred() {
  if (!g_has_deferred.load(std::memory_order_acquire)) return;
  std::vector<std::pair<int, std::string>> records;
  {
    std::lock_guard<std::mutex> g(g_mu);
    records.swap(g_deferred);
    g_has_deferred.store(false, std::memory_order_release);
  }
  for (auto& [level, msg] : records) Emit(level, msg);
}

}  // namespace npu_rt::log
