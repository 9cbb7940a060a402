// Algorithm-selection policies: how a caller (the trainer, `convlab layers`,
// a user of the library) picks one algorithm per (layer, direction).
//
//   default          the first algorithm in registry order that is available on
//                    the device and supports the problem (oneDNN's ordered list)
//   fixed:<name>     that algorithm where it supports the problem, else default
//   get              the top of the cost model's ranking (nothing runs)
//   find             the fastest measured by exhaustive find (times candidates)
//   cache[:<path>]   the persistent autotune cache; find on a miss, then stored
//
// The reference is never chosen.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>

#include "algorithms/algorithm.hpp"

namespace convlab {

struct Policy {
  enum class Kind { default_, fixed, get, find, cache };
  Kind kind = Kind::default_;
  std::string fixed_algo;  // Kind::fixed
  std::string cache_path;  // Kind::cache ("" = the default cache file)
  std::string name() const;               // "default", "fixed:cpu.direct", "get", ...
  static Policy parse(std::string_view);  // throws Error with one line
};

struct Choice {
  const Algorithm* algo = nullptr;
  std::string why;              // "fastest of 7 measured", "fixed", "first supporting in registry order", ...
  double tuning_seconds = 0;    // wall time spent choosing (find / cache miss)
};

// Throws Error when no algorithm on ctx.device supports the problem.
Choice choose_algorithm(const Policy& policy, const ConvProblem& p, Direction dir, const ExecContext& ctx,
                        size_t workspace_limit = size_t(-1));

}  // namespace convlab
