#include "core/npu_allocator.h"

#include <c10/core/StorageImpl.h>
#include <c10/util/Exception.h>

#include <algorithm>

#include "core/npu_context.h"

namespace torch_ops_nn {

namespace {

void DeleteDeviceMemory(void* ptr) { npu_rt::Free(ptr); }

void FillStatArray(c10::CachingAllocator::StatArray& out, const npu_rt::StatCounter* in) {
  for (int i = 0; i < npu_rt::kNumPoolStats; ++i) {
    out[i].current = in[i].current;
    out[i].peak = in[i].peak;
    out[i].allocated = in[i].allocated;
    out[i].freed = in[i].freed;
  }
}

class NpuAllocator final : public c10::DeviceAllocator {
 public:
  c10::DataPtr allocate(size_t nbytes) override {
    const c10::DeviceIndex dev = CurrentDevice();
    void* ptr = nullptr;
    if (nbytes > 0) NPU_RT_CALL(ptr = npu_rt::Malloc(dev, nbytes, CurrentRuntimeStream(dev)));
    return {ptr, ptr, &DeleteDeviceMemory, c10::Device(kNpu, dev)};
  }
  c10::DeleterFnPtr raw_deleter() const override { return &DeleteDeviceMemory; }

  void copy_data(void* dest, const void* src, std::size_t count) const override {
    auto& stream = CurrentRuntimeStream();
    NPU_RT_CALL(npu_rt::MemcpyAsync(dest, src, count, stream); stream.Synchronize());
  }

  bool initialized() override { return true; }
  void emptyCache(c10::MempoolId_t) override {
    for (int d = 0; d < DeviceCount(); ++d) NPU_RT_CALL(npu_rt::EmptyCache(d));
  }
  void recordStream(const c10::DataPtr& ptr, c10::Stream stream) override {
    if (!ptr.get()) return;
    NPU_RT_CALL(npu_rt::MemoryPool(stream.device_index()).RecordStream(ptr.get(), &RuntimeStream(stream)));
  }
  c10::CachingDeviceAllocator::DeviceStats getDeviceStats(c10::DeviceIndex device) override {
    npu_rt::MemoryStats s;
    NPU_RT_CALL(s = npu_rt::MemoryPool(device).Stats());
    c10::CachingDeviceAllocator::DeviceStats out;
    FillStatArray(out.allocation, s.allocation);
    FillStatArray(out.segment, s.segment);
    FillStatArray(out.active, s.active);
    FillStatArray(out.inactive_split, s.inactive_split);
    FillStatArray(out.allocated_bytes, s.allocated_bytes);
    FillStatArray(out.reserved_bytes, s.reserved_bytes);
    FillStatArray(out.active_bytes, s.active_bytes);
    FillStatArray(out.inactive_split_bytes, s.inactive_split_bytes);
    FillStatArray(out.requested_bytes, s.requested_bytes);
    out.num_alloc_retries = s.num_alloc_retries;
    out.num_ooms = s.num_ooms;
    out.num_device_alloc = s.num_device_alloc;
    out.num_device_free = s.num_device_free;
    return out;
  }
  void resetAccumulatedStats(c10::DeviceIndex device) override {
    NPU_RT_CALL(npu_rt::MemoryPool(device).ResetAccumulatedStats());
  }
  void resetPeakStats(c10::DeviceIndex device) override { NPU_RT_CALL(npu_rt::MemoryPool(device).ResetPeakStats()); }
  std::pair<size_t, size_t> getMemoryInfo(c10::DeviceIndex device) override {
    std::pair<size_t, size_t> out;
    NPU_RT_CALL({
      auto& pool = npu_rt::MemoryPool(device);
      const uint64_t total = pool.capacity(), reserved = pool.reserved();
      out = {total > reserved ? total - reserved : 0, total};
    });
    return out;
  }
};

NpuAllocator g_allocator;

}  // namespace

c10::DeviceAllocator* GetNpuAllocator() { return &g_allocator; }

void ResizeStorageBytes(const c10::Storage& storage, size_t new_bytes) {
  TORCH_CHECK(storage.resizable(), "resize_: trying to resize storage that is not resizable");
  const size_t old_bytes = storage.nbytes();
  if (new_bytes == old_bytes) return;
  c10::DataPtr fresh;
  {
    const c10::DeviceIndex prev = CurrentDevice();
    const c10::DeviceIndex dev = storage.device().index();
    SetCurrentDevice(dev);
    try {
      fresh = g_allocator.allocate(new_bytes);
    } catch (...) {
      SetCurrentDevice(prev);
      throw;
    }
    SetCurrentDevice(prev);
    const size_t keep = std::min(old_bytes, new_bytes);
    if (keep > 0 && storage.data())
      NPU_RT_CALL(npu_rt::MemcpyAsync(fresh.get(), storage.data(), keep, CurrentRuntimeStream(dev)));
  }
  // The old block is freed when `fresh`'s predecessor is dropped; stream order keeps the copy safe.
  storage.unsafeGetStorageImpl()->set_data_ptr_noswap(std::move(fresh));
  storage.unsafeGetStorageImpl()->set_nbytes(new_bytes);
}

}  // namespace torch_ops_nn

REGISTER_ALLOCATOR(c10::DeviceType::PrivateUse1, &torch_ops_nn::g_allocator)
