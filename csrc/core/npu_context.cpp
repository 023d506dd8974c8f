#include "core/npu_context.h"

#include <c10/util/Exception.h>

#include <array>
#include <atomic>
#include <stdexcept>

#include "core/sync_debug.h"
#include "runtime/errors.h"

namespace torch_ops_nn {

namespace {
thread_local c10::DeviceIndex t_device = 0;
constexpr int kMaxDevices = 64;
thread_local std::array<int64_t, kMaxDevices> t_stream_ids{};  // 0 = default stream

c10::DeviceIndex Resolve(c10::DeviceIndex index) { return index < 0 ? t_device : index; }
}  // namespace

void RethrowAsTorchError() {
  try {
    throw;
  } catch (const c10::Error&) {
    throw;
  } catch (const npu_rt::OutOfMemoryError& e) {
    TORCH_CHECK_WITH(OutOfMemoryError, false, e.what());
  } catch (const npu_rt::AsyncTaskError& e) {
    TORCH_CHECK(false, "npu error raised asynchronously by ", e.what(),
                "\n(kernels run asynchronously: the failing op may be earlier than this line; "
                "set ASCEND_LAUNCH_BLOCKING=1 to report it where it is called)");
  } catch (const std::invalid_argument& e) {
    TORCH_CHECK_VALUE(false, e.what());
  } catch (const std::exception& e) {
    TORCH_CHECK(false, e.what());
  }
}

c10::DeviceIndex DeviceCount() noexcept {
  try {
    return static_cast<c10::DeviceIndex>(npu_rt::DeviceCount());
  } catch (...) {
    return 0;
  }
}

c10::DeviceIndex CurrentDevice() { return t_device; }

void SetCurrentDevice(c10::DeviceIndex index) {
  NPU_RT_CALL(npu_rt::GetDeviceInfo(index));
  t_device = index;
}

c10::Stream CurrentStream(c10::DeviceIndex index) {
  index = Resolve(index);
  return c10::Stream(c10::Stream::UNSAFE, c10::Device(kNpu, index), t_stream_ids[index]);
}

c10::Stream DefaultStream(c10::DeviceIndex index) {
  return c10::Stream(c10::Stream::UNSAFE, c10::Device(kNpu, Resolve(index)), 0);
}

void SetCurrentStream(const c10::Stream& stream) {
  TORCH_CHECK(stream.device_type() == kNpu, "set_stream: expected an npu stream, got ", stream);
  t_stream_ids[stream.device_index()] = stream.id();
}

npu_rt::Stream& RuntimeStream(const c10::Stream& stream) {
  npu_rt::Stream* s = nullptr;
  NPU_RT_CALL(s = &npu_rt::GetStream(stream.device_index(), stream.id()));
  return *s;
}

namespace {
std::atomic<int> g_sync_debug_mode{0};
}  // namespace

SyncDebugMode GetSyncDebugMode() { return static_cast<SyncDebugMode>(g_sync_debug_mode.load(std::memory_order_relaxed)); }

void SetSyncDebugMode(int mode) {
  TORCH_CHECK_VALUE(mode >= 0 && mode <= 2, "set_sync_debug_mode: expected 0 (default), 1 (warn) or 2 (error), got ",
                    mode);
  g_sync_debug_mode.store(mode, std::memory_order_relaxed);
}

void CheckSyncDebug(const char* what) {
  switch (GetSyncDebugMode()) {
    case SyncDebugMode::kDefault: return;
    case SyncDebugMode::kWarn:
      TORCH_WARN("called a synchronizing npu operation: ", what, " (torch.npu.set_sync_debug_mode)");
      return;
    case SyncDebugMode::kError:
      TORCH_CHECK(false, "called a synchronizing npu operation: ", what,
                  " (torch.npu.set_sync_debug_mode(\"error\"); \"default\" allows it)");
  }
}

}  // namespace torch_ops_nn
