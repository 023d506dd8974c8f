// Errors the runtime raises. Layer 4 maps them onto PyTorch's exception types.
#pragma once
#include <cstdint>
#include <stdexcept>
#include <string>

namespace npu_rt {

// Device memory exhausted: what() says requested, free and total bytes.
struct OutOfMemoryError : std::runtime_error {
  OutOfMemoryError(const std::string& msg, uint64_t requested, uint64_t free, uint64_t total)
      : std::runtime_error(msg), requested(requested), free(free), total(total) {}
  uint64_t requested, free, total;
};

// An error raised by a task that ran asynchronously on a stream, re-raised at a synchronization
// point. `op` is the name the task was launched under.
struct AsyncTaskError : std::runtime_error {
  AsyncTaskError(std::string op, const std::string& msg) : std::runtime_error(msg), op(std::move(op)) {}
  std::string op;
};

}  // namespace npu_rt
