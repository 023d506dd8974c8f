#pragma once
#include <string>
#include <vector>

namespace torch_ops_nn {
// Names of the ops that fell back to the CPU in this process, in first-use order.
std::vector<std::string> FallbackOps();
}  // namespace torch_ops_nn
