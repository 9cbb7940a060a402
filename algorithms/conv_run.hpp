// One algorithm on one problem and direction, as `convlab conv` runs it: the
// inputs random (a fixed seed) or read from .npy files, every buffer the run
// holds counted against the available memory before any is allocated, the
// outputs pre-poisoned, the median of `reps` timed runs, the guard zones
// checked, and (when asked) the output compared with the fp64 reference under
// the algorithm's own tolerance. Nothing is printed: the result carries it.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include "algorithms/algorithm.hpp"
#include "algorithms/execute.hpp"
#include "core/timing.hpp"

namespace convlab {

struct ConvRunOptions {
  ConvProblem problem;
  Direction dir = Direction::fwd;
  const Algorithm* algo = nullptr;
  // .npy inputs in place of the random ones: src, wei, diff_dst (each must be an input of `dir`).
  std::optional<std::string> x, w, dy;
  int reps = 5;      // timed repetitions, after one warm-up
  int threads = 0;   // CPU threads (0 = all)
  uint64_t seed = 1;  // of the random inputs
  bool check = false;  // compare with the fp64 reference
};

struct ConvRun {
  explicit ConvRun(ConvData d) : data(std::move(d)) {}
  int threads = 0;  // resolved
  size_t workspace = 0;
  TimingStats time;
  std::string guard_failure;  // "" when every guard zone is intact
  bool checked = false;       // error and tolerance are set
  ErrorStats error;
  Tolerance tolerance;
  ConvData data;  // the inputs, and the output of `dir` (ConvData::output)
};

// Throws Error (one line) when the algorithm cannot run here or does not support the
// problem, for an input file that is not an input of the direction, has another shape
// or holds a non-finite value, and OutOfMemory before any allocation the run cannot have.
ConvRun run_conv(const ConvRunOptions& opt);

}  // namespace convlab
