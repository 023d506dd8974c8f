// DeviceGuardImpl for PrivateUse1: device and stream switching, events. This is what makes
// torch.Stream, torch.Event, torch.accelerator and device context managers work for npu.
#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <c10/util/Exception.h>

#include <memory>

#include "core/npu_allocator.h"
#include "core/npu_context.h"

namespace torch_ops_nn {
namespace {

using EventHandle = std::shared_ptr<npu_rt::Event>;
EventHandle& AsEvent(void* e) { return *static_cast<EventHandle*>(e); }

struct NpuGuardImpl final : public c10::impl::DeviceGuardImplInterface {
  c10::DeviceType type() const override { return kNpu; }

  c10::Device exchangeDevice(c10::Device d) const override {
    TORCH_INTERNAL_ASSERT(d.type() == kNpu);
    const c10::Device old = getDevice();
    if (old.index() != d.index()) SetCurrentDevice(d.index());
    return old;
  }
  c10::Device getDevice() const override { return c10::Device(kNpu, CurrentDevice()); }
  void setDevice(c10::Device d) const override {
    TORCH_INTERNAL_ASSERT(d.type() == kNpu);
    SetCurrentDevice(d.index());
  }
  void uncheckedSetDevice(c10::Device d) const noexcept override {
    try {
      SetCurrentDevice(d.index());
    } catch (...) {
    }
  }

  c10::Stream getStream(c10::Device d) const override { return CurrentStream(d.index()); }
  c10::Stream getDefaultStream(c10::Device d) const override { return DefaultStream(d.index()); }
  c10::Stream getStreamFromGlobalPool(c10::Device d, bool = false) const override {
    if (!d.has_index()) d = c10::Device(kNpu, CurrentDevice());
    int64_t id = 0;
    NPU_RT_CALL(id = npu_rt::NextPooledStreamId(d.index()));
    return c10::Stream(c10::Stream::UNSAFE, d, id);
  }
  c10::Stream getNewStream(c10::Device d, int = 0) const override { return getStreamFromGlobalPool(d); }
  c10::Stream exchangeStream(c10::Stream s) const override {
    const c10::Stream old = CurrentStream(s.device_index());
    SetCurrentStream(s);
    return old;
  }

  void destroyEvent(void* event, const c10::DeviceIndex) const noexcept override {
    delete static_cast<EventHandle*>(event);
  }
  void record(void** event, const c10::Stream& stream, const c10::DeviceIndex device_index,
              const c10::EventFlag flag) const override {
    TORCH_CHECK(device_index == -1 || device_index == stream.device_index(), "event device index ", device_index,
                " does not match the recording stream's device ", stream.device_index());
    if (!*event) *event = new EventHandle(std::make_shared<npu_rt::Event>(flag == c10::EventFlag::BACKEND_DEFAULT));
    NPU_RT_CALL(AsEvent(*event)->Record(RuntimeStream(stream)));
  }
  void block(void* event, const c10::Stream& stream) const override {
    if (!event) return;
    NPU_RT_CALL(AsEvent(event)->Block(RuntimeStream(stream)));
  }
  bool queryEvent(void* event) const override { return !event || AsEvent(event)->Query(); }
  void synchronizeEvent(void* event) const override {
    if (event) AsEvent(event)->Synchronize();
  }
  double elapsedTime(void* start, void* end, const c10::DeviceIndex) const override {
    TORCH_CHECK(start && end, "elapsed_time: both events must be recorded before measuring elapsed time");
    double ms = 0;
    NPU_RT_CALL(ms = AsEvent(start)->ElapsedMs(*AsEvent(end)));
    return ms;
  }

  c10::DeviceIndex deviceCount() const noexcept override { return DeviceCount(); }
  bool queryStream(const c10::Stream& s) const override { return RuntimeStream(s).Query(); }
  void synchronizeStream(const c10::Stream& s) const override { NPU_RT_CALL(RuntimeStream(s).Synchronize()); }
  void synchronizeDevice(const c10::DeviceIndex index) const override {
    NPU_RT_CALL(npu_rt::DeviceSynchronize(index < 0 ? CurrentDevice() : index));
  }
  void recordDataPtrOnStream(const c10::DataPtr& data_ptr, const c10::Stream& stream) const override {
    GetNpuAllocator()->recordStream(data_ptr, stream);
  }
};

}  // namespace
}  // namespace torch_ops_nn

C10_REGISTER_GUARD_IMPL(PrivateUse1, torch_ops_nn::NpuGuardImpl);
