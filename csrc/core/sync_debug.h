// torch.npu.set_sync_debug_mode: report operations that make the host wait for the device (a copy to
// host memory, `.item()`, a blocking copy from host memory, and the ops that read a value back), as
// torch.cuda's sync debug mode does. Explicit waits (synchronize, event / stream waits) are not
// reported.
#pragma once

namespace torch_ops_nn {

enum class SyncDebugMode : int { kDefault = 0, kWarn = 1, kError = 2 };

SyncDebugMode GetSyncDebugMode();
void SetSyncDebugMode(int mode);  // 0, 1 or 2; anything else is a ValueError
// Called where the host is about to wait for the device: warns (kWarn) or raises (kError).
void CheckSyncDebug(const char* what);

}  // namespace torch_ops_nn
