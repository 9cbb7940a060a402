// THE list. Add an algorithm by including its header and adding one line below;
// every test sweep, benchmark, CLI listing and autotune run picks it up.
#include "algorithms/registry.hpp"

#include "algorithms/cpu/reference.hpp"
#include "algorithms/cpu/winograd.hpp"
#include "core/error.hpp"

namespace convlab {

const std::vector<const Algorithm*>& registry() {
  static const CpuReference cpu_reference;
  static const CpuWinograd cpu_winograd_f2x3(2), cpu_winograd_f4x3(4), cpu_winograd_f6x3(6);
  static const std::vector<const Algorithm*> list = {
      // ---- CPU -------------------------------------------------------------
      &cpu_winograd_f2x3,
      &cpu_winograd_f4x3,
      &cpu_winograd_f6x3,
      &cpu_reference,
  };
  return list;
}

const Algorithm* find_algorithm(std::string_view name) {
  for (const Algorithm* a : registry())
    if (a->name() == name) return a;
  return nullptr;
}

const Algorithm& get_algorithm(std::string_view name) {
  if (const Algorithm* a = find_algorithm(name)) return *a;
  std::string known;
  for (const Algorithm* a : registry()) known += std::string(known.empty() ? "" : ", ") + std::string(a->name());
  fail("unknown algorithm '" + std::string(name) + "' (known: " + known + ")");
}

}  // namespace convlab
