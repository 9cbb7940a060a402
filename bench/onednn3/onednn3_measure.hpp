// One (problem, direction, oneDNN 3 algorithm kind) measured as `convlab
// layers` measures its candidates (autotune/find.cpp): checked against the
// fp64 reference (kernels/ref), then timed with core/timing's rule (1 warm-up,
// then 3 to 25 reps until the median moves less than 2 % or max_seconds of
// timed work), the median with its 95 % bootstrap interval (core/stats).
//
// The check runs the very primitive that is timed (the full batch: oneDNN may
// pick another implementation for one image) on inputs whose images after the
// first are zero, against the reference of the first image alone: the first
// image's output (fwd, bwd-data) or the weight gradient (bwd-filter, summed
// over the batch) must be within the K*eps summation bound of the reference
// (plus 16 eps * max magnitude for a Winograd implementation, as convlab
// declares for oneDNN 2.6's), and every other image's output must be within
// that bound of zero. The output is filled with NaN first, so an element left
// unwritten fails.
#pragma once
#include <string>

#include "bench/onednn3/onednn3_conv.hpp"

namespace convlab::onednn3 {

struct Row {
  std::string layer, problem, direction, algorithm, impl;
  std::string status;  // "ok", "unsupported" (oneDNN's reason in note), "inaccurate" (the check's numbers in note)
  std::string note;
  int threads = 0;
  double flops = 0;
  double time = 0, lo = 0, hi = 0, spread = 0;  // seconds; NaN unless ok
  int reps = 0;
  double err_ratio = 0;  // worst |y - ref| / bound of the check (<= 1 passes)
};

struct MeasureOptions {
  int threads = 1;
  double max_seconds = 0.3;  // timed work per candidate, as convlab layers' default
  uint64_t seed = 1;
};

// Fills everything but `layer`; never throws for a problem oneDNN rejects.
Row measure(Kind kind, const ConvProblem& p, Direction dir, const MeasureOptions& opt);

// Bytes measure() holds at once for p in dir: our and oneDNN's copies of the
// three tensors, the reference and its magnitudes.
size_t measure_bytes(const ConvProblem& p, Direction dir);

}  // namespace convlab::onednn3
