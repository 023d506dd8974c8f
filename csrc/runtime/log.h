// Runtime logging, levelled as CANN's ASCEND_GLOBAL_LOG_LEVEL (0 debug, 1 info, 2 warning,
// 3 error; default 3). Records go to a sink set by the Python layer (Python's logging). Executor
// threads never call the sink (it takes the GIL, which a host thread blocked in a sync may hold):
// they defer their records, and the next enqueue or sync on a host thread flushes them.
#pragma once
#include <string>

namespace npu_rt::log {

enum Level { kDebug = 0, kInfo = 1, kWarning = 2, kError = 3 };

int CurrentLevel();
void SetLevel(int level);
inline bool Enabled(int level) { return level >= CurrentLevel(); }

using Sink = void (*)(int level, const std::string& msg);
void SetSink(Sink sink);
void Emit(int level, const std::string& msg);   // from a host (caller) thread
void Defer(int level, std::string msg);         // from any thread
void FlushDeferred();                           // from a host (caller) thread

}  // namespace npu_rt::log
