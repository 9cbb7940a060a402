// The registry: one ordered list of every algorithm (algorithms/registry.cpp),
// no static self-registration. Order matters where ties are broken by position
// (oneDNN-style: first acceptable wins in `default` policies); the reference
// comes last among the built-ins, and the algorithms registered at run time
// (register_algorithm: a researcher's own, usually from a plugin,
// algorithms/plugin.hpp) follow it in the order they were registered.
#pragma once
#include <string_view>
#include <vector>

#include "algorithms/algorithm.hpp"

namespace convlab {

const std::vector<const Algorithm*>& registry();
// Adds `a` to the end of registry(); `a` must live as long as the process
// (a static object). Register before anything reads the registry: a
// reference to registry() taken earlier does not see it. The name must be
// "user.<name>" of lowercase letters, digits, '_' and '.' ("cpu.", "cuda." and
// "cudnn." are the built-ins'), and not already registered; otherwise throws
// Error with one line saying why.
void register_algorithm(const Algorithm& a);
// True for an algorithm added by register_algorithm().
bool registered_at_run_time(const Algorithm& a);
// The name an algorithm goes by now, for a name an older convlab gave it
// (cpu.onednn_direct -> onednn.direct, cuda.fft -> cuda.fft_cufft); any other
// name as it is. find_algorithm reads names through it, and the autotune cache
// its entries, so old caches, policies and --algo arguments keep working.
std::string_view canonical_algorithm_name(std::string_view name);
// nullptr when no algorithm has that name (or had it: canonical_algorithm_name).
const Algorithm* find_algorithm(std::string_view name);
// Throws Error naming the known algorithms when `name` is unknown.
const Algorithm& get_algorithm(std::string_view name);

}  // namespace convlab
