// ascendc_assert (kernel_debug.h).
#include <cstdarg>
#include <cstdio>

#include "ascendc_core_state.h"
#include "kernel_debug.h"

namespace ascendc_host {

void AssertFail(const char* expr, const char* fmt, ...) {
  char msg[768] = "";
  if (fmt) {
    va_list ap;
    va_start(ap, fmt);
    std::vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
  }
  // Trailing newlines (printf style messages) are dropped: the text ends up in an exception.
  for (int n = 0; msg[n]; ++n)
    if (msg[n] == '\n' && msg[n + 1] == '\0') msg[n] = '\0';
  if (msg[0]) Fail("Assertion `%s' failed: %s", expr, msg);
  Fail("Assertion `%s' failed", expr);
}

}  // namespace ascendc_host
