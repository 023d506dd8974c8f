// c10::DeviceAllocator over the runtime's caching DeviceMemoryPool.
#pragma once
#include <c10/core/CachingDeviceAllocator.h>
#include <c10/core/Storage.h>

namespace torch_ops_nn {

c10::DeviceAllocator* GetNpuAllocator();
// Grows or shrinks a storage in place (resize_, set_), copying the old bytes on the device.
void ResizeStorageBytes(const c10::Storage& storage, size_t new_bytes);

}  // namespace torch_ops_nn
