// find: cudnnFindConvolution*Algorithm for convlab. For one (problem,
// direction) every candidate on the context's device that supports the problem
// and fits the workspace limit is
//   1. checked: run on a batch slice (check_batch images, same weights) from
//      the same seeded inputs as the fp64 reference, twice; an output outside
//      the algorithm's declared tolerance -> inaccurate; a throw, a guard-zone
//      overrun or (for an algorithm that claims determinism) two runs that
//      differ bit-wise -> failed. Neither is ever selected.
//   2. timed at the full problem: warm-up, then repetitions until the median
//      is stable (core/timing.hpp), bounded by max_reps and max_seconds. Its
//      result carries the median, the spread and the 95 % bootstrap interval
//      of the median (AlgoPerf::lo/hi); rank() marks the entries whose
//      intervals overlap the pick's as ties (AlgoPerf::tie).
//
// Pruning (keeps whole-network tuning within minutes when slow algorithms are
// registered). A candidate stops being timed after prune_reps timed reps when
// even its FASTEST rep is more than slow_cutoff x the median of the best
// candidate so far; its note says so. One slow rep can never prune: a
// disturbance (another process taking the core, a page-fault storm) makes a
// rep slower, never faster, so the minimum of k reps is above the cutoff only
// if all k reps are. The bound: suppose the candidate would in fact be the
// fastest (its undisturbed time <= the best median). Then each of its k reps
// had to be inflated more than slow_cutoff-fold. If such an inflation hits a
// rep with probability q, independently of the other reps, the chance of a
// false prune is at most q^k: with k = 3 and even one rep in ten inflated
// threefold, 1e-3. (A disturbance that lasts through all k reps -- seconds of
// a competing job -- is not independent; it also inflates the rest of the
// run, which the machine-load check of `tune` and `layers` reports:
// core/machine_load.hpp.)
// The reference is never a candidate. The result is the full list, ranked by
// rank() (perf.hpp), non-runnable candidates included with their reason.
// A candidate that throws DeviceFault (core/error.hpp: a sticky CUDA error, the
// device can run nothing more) ends find: it rethrows one DeviceFault naming
// that candidate, the problem and how many candidates were not run. Any other
// Error marks only that candidate failed.
#pragma once
#include <cstdint>
#include <functional>
#include <limits>
#include <vector>

#include "algorithms/algorithm.hpp"
#include "algorithms/execute.hpp"
#include "autotune/perf.hpp"

namespace convlab {

struct FindOptions {
  size_t workspace_limit = size_t(-1);
  int check_batch = 1;          // images in the accuracy-check slice (1-2 keeps the fp64 reference cheap)
  uint64_t seed = 1;            // of the random inputs
  int warmup = 1;
  int min_reps = 3;
  int max_reps = 25;
  double max_seconds = 0.3;     // timed work per candidate before giving up on stability
  double stable_rel = 0.02;     // median moved less than this -> stable
  double slow_cutoff = 3;       // pruning factor (see above)
  double best_so_far = std::numeric_limits<double>::infinity();  // a best median already known (cached results)
  int prune_reps = 3;           // timed reps before a candidate may be pruned (raised to 3 if smaller; see above)
  // Progress display: once when find starts, then before each candidate (index, count, name).
  std::function<void()> on_start;
  std::function<void(int, int, const Algorithm&)> on_candidate;
};

// Candidates: every registered algorithm of `device` except the reference and,
// unless tf32 is set, except those with reduced-precision math
// (Algorithm::math() != "fp32": the cuDNN _tf32 variants).
std::vector<const Algorithm*> find_candidates(DeviceKind device, bool tf32 = false);

// The most memory find(p, dir, ctx, opt, candidates) holds at once, on the host
// and on ctx.device: the check slice's tensors and fp64 reference, plus for the
// candidate that needs most either its check (its buffers on the slice and two
// output copies) or its timing (its buffers at the full problem and the random
// inputs uploaded to them). find checks it against the available memory before
// allocating (an OutOfMemory naming the problem and both sizes); tune and
// layers check every pair's before any work.
MemoryNeed find_memory(const ConvProblem& p, Direction dir, const ExecContext& ctx, const FindOptions& opt,
                       const std::vector<const Algorithm*>& candidates);

std::vector<AlgoPerf> find(const ConvProblem& p, Direction dir, const ExecContext& ctx, const FindOptions& opt = {});
// The same over an explicit candidate list (tests plant algorithms that are
// not in the registry). Reference-family entries are skipped.
std::vector<AlgoPerf> find(const ConvProblem& p, Direction dir, const ExecContext& ctx, const FindOptions& opt,
                           const std::vector<const Algorithm*>& candidates);

}  // namespace convlab
