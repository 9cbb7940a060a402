// The registry: one ordered list of every algorithm (algorithms/registry.cpp),
// no static self-registration. Order matters where ties are broken by position
// (oneDNN-style: first acceptable wins in `default` policies); the reference
// comes last.
#pragma once
#include <string_view>
#include <vector>

#include "algorithms/algorithm.hpp"

namespace convlab {

const std::vector<const Algorithm*>& registry();
// nullptr when no algorithm has that name.
const Algorithm* find_algorithm(std::string_view name);
// Throws Error naming the known algorithms when `name` is unknown.
const Algorithm& get_algorithm(std::string_view name);

}  // namespace convlab
