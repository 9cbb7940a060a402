// oneDNN's implementation names -> convlab's families (algorithms/cpu/onednn.hpp). Compiled
// with or without oneDNN: the names are plain text.
#include <string>
#include <string_view>

#include "algorithms/cpu/onednn.hpp"

namespace convlab {

std::string onednn_family(std::string_view impl) {
  auto has = [&](std::string_view s) { return impl.find(s) != std::string_view::npos; };
  if (has("wino")) return "winograd";
  if (has("brg")) return "direct";
  if (has("gemm")) return "gemm";
  if (impl.rfind("ref", 0) == 0) return "reference";
  if (has("jit")) return "direct";
  return "unknown";
}

}  // namespace convlab
