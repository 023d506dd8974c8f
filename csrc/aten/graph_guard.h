// Parameter-derived copies under npu graph capture. Eagerly, a conv weight in the cube's order, a
// packed Linear operand or folded BN parameters are cached against their sources' TensorStamps. A
// graph cannot consult those caches at replay, and baking a copy in would miss a later in-place
// update of the weights; redoing the copy at every replay costs what the cache saves. So while a
// graph captures, the copy's kernels are captured into a guarded region (npu_rt::Graph::BeginRegion)
// that a replay runs only when a source's stamp changed since the region last ran -- checked when
// replay() is called on the host, in order with the host's in-place updates -- and the graph keeps
// the copy alive.
//
// Sources the captured work itself writes: a write captured after the region bumps the source's
// version during capture, so at capture end such a region is made to run at every replay (a replay
// rewrites the source, and the next replay must copy it again). A write captured *before* the region
// cannot be told from a write the user made before capture_begin; a tensor that the graph writes and
// then reads as a conv / Linear weight or BN parameter (an EMA model updated and used in one graph) must
// therefore require grad or be read by a region-free op -- README "NPU graphs" says so.
#pragma once
#include <ATen/core/Tensor.h>

#include <ATen/ops/empty_strided.h>

#include <initializer_list>
#include <map>
#include <memory>
#include <type_traits>
#include <vector>

#include "core/npu_context.h"

namespace torch_ops_nn {

// The graph capturing the current stream, or nullptr.
inline npu_rt::Graph* CapturingGraph() { return CurrentRuntimeStream().capture_graph(); }

// Allocations for the capturing stream come from the graph's persistent pool while this lives.
class PersistentAllocs {
 public:
  explicit PersistentAllocs(npu_rt::Graph* graph) : graph_(graph) { graph_->SetPersistentAllocs(true); }
  ~PersistentAllocs() { graph_->SetPersistentAllocs(false); }
  PersistentAllocs(const PersistentAllocs&) = delete;
  PersistentAllocs& operator=(const PersistentAllocs&) = delete;

 private:
  npu_rt::Graph* graph_;
};

// The region's result moved to the graph's persistent pool (a device copy, captured in the region):
// make()'s own allocations came from the capture pool, where later captured work reuses memory
// (see npu_rt::Graph::alloc_pool). A result that is one of the sources (nothing needed copying)
// stays as it is.
inline at::Tensor Persist(npu_rt::Graph* graph, const at::Tensor& t, std::initializer_list<const at::Tensor*> sources) {
  if (!t.defined()) return t;
  for (const at::Tensor* s : sources)
    if (s && s->defined() && t.is_alias_of(*s)) return t;
  TORCH_INTERNAL_ASSERT(t.is_non_overlapping_and_dense(), "graph_guard: a derived copy must be dense");
  at::Tensor p;
  {
    PersistentAllocs persistent(graph);
    p = at::empty_strided(t.sizes(), t.strides(), t.options());
  }
  p.copy_(t);
  return p;
}
inline std::pair<at::Tensor, at::Tensor> Persist(npu_rt::Graph* graph, const std::pair<at::Tensor, at::Tensor>& t,
                                                 std::initializer_list<const at::Tensor*> sources) {
  return {Persist(graph, t.first, sources), Persist(graph, t.second, sources)};
}

// Runs make() (which launches the copy's kernels) inside a guarded region of `graph` whose sources
// are the defined tensors among `sources`; returns make()'s result in the graph's persistent pool,
// which the graph keeps alive. `kind` names the copy (a tag per call site and its parameters, such as
// groups): a later use in the same graph of the same kind of copy of the same, unwritten sources gets
// the first one's copy (a weight used at every step of an unrolled loop is copied once, not per use).
template <class Make>
auto GuardedCopy(npu_rt::Graph* graph, std::vector<int64_t> kind, std::initializer_list<const at::Tensor*> sources,
                 Make&& make) -> std::decay_t<decltype(make())> {
  using R = std::decay_t<decltype(make())>;
  struct Memo {
    std::map<std::vector<int64_t>, std::pair<std::vector<uint32_t>, std::shared_ptr<void>>> copies;
  };
  static const char kMemoKey = 0;
  std::vector<uint32_t> versions;
  for (const at::Tensor* t : sources) {
    kind.push_back(t && t->defined());
    if (!t || !t->defined()) continue;
    kind.push_back(reinterpret_cast<intptr_t>(t->storage().unsafeGetStorageImpl()));
    kind.push_back(t->storage_offset());
    kind.push_back(static_cast<int64_t>(t->scalar_type()));
    kind.push_back(t->dim());
    for (int64_t d = 0; d < t->dim(); ++d) {
      kind.push_back(t->size(d));
      kind.push_back(t->stride(d));
    }
    versions.push_back(t->_version());
  }
  auto memo = std::static_pointer_cast<Memo>(graph->Attachment(&kMemoKey));
  if (!memo) {
    memo = std::make_shared<Memo>();
    graph->Attach(&kMemoKey, memo);
  }
  if (auto it = memo->copies.find(kind); it != memo->copies.end() && it->second.first == versions)
    return *std::static_pointer_cast<R>(it->second.second);
  // A source is watched through its version counter (shared by a tensor and its views: a kernel's
  // argument may be a view made for the call, like Linear's weight.t()) and its storage: the graph
  // reads that memory, so only in-place writes to it matter.
  struct Source {
    c10::VariableVersion counter;
    uint32_t version;
    c10::weak_intrusive_ptr<c10::StorageImpl> storage;
  };
  std::vector<Source> srcs;
  for (const at::Tensor* t : sources)
    if (t && t->defined())
      srcs.push_back({t->unsafeGetTensorImpl()->version_counter(), t->_version(), t->storage().getWeakStorageImpl()});
  const int region = graph->BeginRegion();
  std::shared_ptr<R> result;
  try {
    result = std::make_shared<R>(Persist(graph, make(), sources));
  } catch (...) {
    graph->EndRegion(region, nullptr, nullptr);
    throw;
  }
  memo->copies[kind] = {versions, result};
  auto always = std::make_shared<bool>(false);
  graph->AddCaptureEndHook([always, srcs]() {
    for (const Source& s : srcs)
      if (s.counter.current_version() != s.version) *always = true;  // written by the captured work
  });
  graph->EndRegion(region, [srcs = std::move(srcs), always]() mutable {
    if (*always) return true;
    bool stale = false;
    for (Source& s : srcs) {
      // A freed source: redo the copy (the graph then reads freed memory, as a CUDA graph would).
      if (s.storage.expired()) return true;
      const uint32_t v = s.counter.current_version();
      if (v != s.version) {
        s.version = v;
        stale = true;
      }
    }
    return stale;
  }, result);
  return *result;
}

}  // namespace torch_ops_nn
