// PrivateUse1HooksInterface and the npu Generator (seed + Philox offset, like CUDA's).
#include <ATen/core/GeneratorForPrivateuseone.h>
#include <ATen/detail/PrivateUse1HooksInterface.h>
#include <ATen/core/Tensor.h>
#include <ATen/ops/empty.h>
#include <c10/core/CPUAllocator.h>
#include <c10/core/GeneratorImpl.h>
#include <c10/core/TensorImpl.h>
#include <c10/util/Exception.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <random>
#include <vector>

#include "core/npu_allocator.h"
#include "core/npu_context.h"
#include "core/npu_generator.h"

namespace torch_ops_nn {

NpuGeneratorImpl::NpuGeneratorImpl(c10::DeviceIndex index)
    : c10::GeneratorImpl(c10::Device(kNpu, index), c10::DispatchKeySet(c10::DispatchKey::PrivateUse1)) {}

void NpuGeneratorImpl::set_current_seed(uint64_t seed) {
  seed_ = seed;
  offset_ = 0;
}
uint64_t NpuGeneratorImpl::seed() {
  const uint64_t s = (static_cast<uint64_t>(std::random_device{}()) << 32) ^ std::random_device{}();
  set_current_seed(s);
  return s;
}
void NpuGeneratorImpl::set_state(const c10::TensorImpl& new_state) {
  TORCH_CHECK(new_state.dtype() == caffe2::TypeMeta::Make<uint8_t>() && new_state.numel() == 16,
              "npu RNG state must be a torch.uint8 tensor of 16 bytes (seed, offset), got ", new_state.numel(),
              " elements of ", new_state.dtype());
  TORCH_CHECK(new_state.device().is_cpu(), "npu RNG state must be a CPU tensor");
  const auto* bytes = static_cast<const uint8_t*>(new_state.data());
  std::memcpy(&seed_, bytes, 8);
  std::memcpy(&offset_, bytes + 8, 8);
}
c10::intrusive_ptr<c10::TensorImpl> NpuGeneratorImpl::get_state() const {
  at::Tensor t = at::empty({16}, at::TensorOptions().dtype(at::kByte));
  std::memcpy(t.data_ptr(), &seed_, 8);
  std::memcpy(static_cast<uint8_t*>(t.data_ptr()) + 8, &offset_, 8);
  return t.getIntrusivePtr();
}
std::pair<uint64_t, uint64_t> NpuGeneratorImpl::philox_seed_offset(uint64_t increment) {
  // A captured random kernel would replay the same (seed, offset), i.e. the same numbers every replay.
  NPU_RT_CALL(CurrentRuntimeStream(device().index()).CheckNotCapturing("drawing random numbers (dropout, rand, normal_, ...)"));
  std::lock_guard<std::mutex> g(mutex_);
  const uint64_t off = offset_;
  offset_ += (increment + 3) / 4 * 4;
  return {seed_, off};
}
NpuGeneratorImpl* NpuGeneratorImpl::clone_impl() const {
  auto* g = new NpuGeneratorImpl(device().index());
  g->seed_ = seed_;
  g->offset_ = offset_;
  return g;
}

const at::Generator& DefaultNpuGenerator(c10::DeviceIndex index) {
  static std::once_flag once;
  static std::vector<at::Generator> gens;
  std::call_once(once, [] {
    for (int i = 0; i < DeviceCount(); ++i) {
      gens.push_back(at::make_generator<NpuGeneratorImpl>(static_cast<c10::DeviceIndex>(i)));
      gens.back().set_current_seed(c10::detail::getNonDeterministicRandom());
    }
  });
  if (index < 0) index = CurrentDevice();
  TORCH_CHECK_INDEX(index < static_cast<int>(gens.size()), "invalid npu device index ", index, " for a generator: ",
                    gens.size(), " device(s) visible");
  return gens[index];
}

namespace {

at::Generator NewGenerator(c10::DeviceIndex index) {
  if (index < 0) index = CurrentDevice();
  return at::make_generator<NpuGeneratorImpl>(index);
}

// Page-locked ("pinned") host memory, as torch.Tensor.pin_memory() and DataLoader(pin_memory=True) ask
// for: the simulated device's DMA reads any host memory, so pinning locks nothing; the allocator records
// its blocks so that is_pinned() answers as on a real device (and copies from them run asynchronously,
// as every host copy with non_blocking=True does here).
class PinnedAllocator final : public c10::Allocator {
 public:
  c10::DataPtr allocate(size_t n) override {
    void* p = nullptr;
    if (n != 0) {
      TORCH_CHECK(posix_memalign(&p, 64, n) == 0 && p, "pin_memory: out of host memory allocating ", n, " bytes");
      std::lock_guard<std::mutex> g(mu_);
      blocks_[reinterpret_cast<uintptr_t>(p)] = n;
    }
    return {p, p, &Free, c10::Device(c10::DeviceType::CPU)};
  }
  c10::DeleterFnPtr raw_deleter() const override { return &Free; }
  void copy_data(void* dst, const void* src, std::size_t count) const override { std::memcpy(dst, src, count); }
  bool Contains(const void* ptr) {
    const auto a = reinterpret_cast<uintptr_t>(ptr);
    std::lock_guard<std::mutex> g(mu_);
    auto it = blocks_.upper_bound(a);
    if (it == blocks_.begin()) return false;
    --it;
    return a < it->first + it->second;
  }
  static PinnedAllocator& Get() {
    static PinnedAllocator* a = new PinnedAllocator();  // outlives every pinned tensor
    return *a;
  }

 private:
  static void Free(void* p) {
    if (!p) return;
    {
      PinnedAllocator& a = Get();
      std::lock_guard<std::mutex> g(a.mu_);
      a.blocks_.erase(reinterpret_cast<uintptr_t>(p));
    }
    std::free(p);
  }
  std::mutex mu_;
  std::map<uintptr_t, size_t> blocks_;  // start -> bytes
};

struct NpuHooks final : public at::PrivateUse1HooksInterface {
  bool isBuilt() const override { return true; }
  bool isAvailable() const override { return DeviceCount() > 0; }
  const at::Generator& getDefaultGenerator(c10::DeviceIndex index) const override {
    return DefaultNpuGenerator(index);
  }
  at::Generator getNewGenerator(c10::DeviceIndex index) const override { return NewGenerator(index); }
  at::Device getDeviceFromPtr(void* data) const override {
    int dev = npu_rt::DeviceOfPointer(data);
    TORCH_CHECK(dev >= 0, "pointer ", data, " is not npu device memory");
    return at::Device(kNpu, static_cast<c10::DeviceIndex>(dev));
  }
  bool isPinnedPtr(const void* p) const override { return PinnedAllocator::Get().Contains(p); }
  at::Allocator* getPinnedMemoryAllocator() const override { return &PinnedAllocator::Get(); }
  bool hasPrimaryContext(c10::DeviceIndex) const override { return true; }
  c10::DeviceIndex deviceCount() const override { return DeviceCount(); }
  void setCurrentDevice(c10::DeviceIndex d) const override { SetCurrentDevice(d); }
  c10::DeviceIndex getCurrentDevice() const override { return CurrentDevice(); }
  c10::DeviceIndex exchangeDevice(c10::DeviceIndex d) const override {
    const auto old = CurrentDevice();
    SetCurrentDevice(d);
    return old;
  }
  c10::DeviceIndex maybeExchangeDevice(c10::DeviceIndex d) const override { return exchangeDevice(d); }
  void resizePrivateUse1Bytes(const c10::Storage& storage, size_t newsize) const override {
    ResizeStorageBytes(storage, newsize);
  }
};

}  // namespace

void RegisterNpuHooks() {
  static bool done = [] {
    at::RegisterPrivateUse1HooksInterface(new NpuHooks());
    return true;
  }();
  (void)done;
}


}  // namespace torch_ops_nn
