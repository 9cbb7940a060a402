// One candidate's result in a ranked list (cudnnConvolutionFwdAlgoPerf_t's
// fields: algo, status, time, memory, determinism, plus what convlab adds: the
// spread of the timing and the measured error against the fp64 reference).
// find() fills it from measurements, get() from the cost model (time then is a
// prediction and the error fields stay NaN), the cache stores whole lists.
#pragma once
#include <cmath>
#include <cstddef>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "algorithms/algorithm.hpp"

namespace convlab {

enum class PerfStatus {
  ok,              // ran, checked against the reference, timed
  inaccurate,      // ran, but exceeded its declared tolerance (never selected)
  failed,          // threw, overran a buffer, or was nondeterministic though it claims not to be
  over_workspace,  // needs more workspace than the limit (not run)
  unsupported,     // supports() said no (not run)
  unavailable,     // cannot run on this machine / build (not run)
};
std::string_view to_string(PerfStatus s);
// Returns false for an unknown word.
bool parse_perf_status(std::string_view text, PerfStatus& out);

struct AlgoPerf {
  std::string algo;                  // dotted registry name
  PerfStatus status = PerfStatus::ok;
  double time = std::numeric_limits<double>::quiet_NaN();  // seconds: median (find) or predicted (get)
  double spread = 0;                 // (p75 - p25) / median of the timed reps; 0 for predictions
  int reps = 0;                      // timed repetitions behind `time`
  size_t workspace = 0;              // bytes
  double max_rel_error = std::numeric_limits<double>::quiet_NaN();  // on the check slice
  double err_ratio = std::numeric_limits<double>::quiet_NaN();      // worst error / declared bound; <= 1 passes
  bool deterministic = true;
  std::string note;                  // why not ok; or how it was measured
  // The 95 % bootstrap interval of the median (core/stats.hpp median_ci over
  // the timed reps); NaN for predictions and for lines cached before it was kept.
  double lo = std::numeric_limits<double>::quiet_NaN(), hi = std::numeric_limits<double>::quiet_NaN();
  // Not told apart from the pick (mark_ties): set on the pick and on every ok
  // entry indistinguishable() from it, when there is at least one such entry.
  bool tie = false;
  // What produced the entry (autotune/build_identity.hpp algorithm_version):
  // the algorithm's own code version and the versions of the libraries it
  // calls. A cached entry whose versions are not this build's is re-measured.
  std::string code, libs;
};

// What a caller accepts beyond "ok": a global workspace limit, accuracy
// budget (max relative error a layer may accept) and determinism requirement.
struct Constraints {
  size_t workspace_limit = size_t(-1);
  double max_error = std::numeric_limits<double>::infinity();
  bool deterministic = false;
  // Also accept algorithms with reduced-precision math (Algorithm::math() other
  // than "fp32", e.g. the cuDNN _tf32 variants). Off: such entries are skipped
  // even when a (cached) list holds them.
  bool tf32 = false;
  // convlab's own convolutions only: entries whose algorithm is a vendor
  // library's convolution (Algorithm::vendor_peer(): oneDNN's, cuDNN's) are
  // skipped. Algorithms of convlab's own around a vendor GEMM or FFT
  // (cuda.im2col_cublas, cpu.fft_fftw) stay.
  bool own = false;
};

// Sorts in place into the order a tuner reports: status ok first, by time,
// with near-ties broken by the fixed rule (see near_tie); then everything else
// by status, then name; then marks the ties of the first entry (mark_ties).
// The result is a pure function of the entries' fields.
void rank(std::vector<AlgoPerf>& list);

// Two ok entries are within each other's noise when their times differ by at
// most max(1 %, spread_a, spread_b), the spread capped at 10 %. Within a
// noise cluster (anchored at its fastest entry) the order is: deterministic
// first, then smaller workspace, then name -- so the choice does not flip
// between runs on a noisy machine.
bool near_tie(const AlgoPerf& a, const AlgoPerf& b);

// Whether a measurement cannot tell two ok entries apart: their median
// intervals overlap (both have one), or they are a near_tie (the noise rule
// rank() orders by, which also covers entries without intervals).
bool indistinguishable(const AlgoPerf& a, const AlgoPerf& b);

// Sets `tie` on the entry named `pick` and on every ok entry
// indistinguishable() from it, when there is at least one; clears it on all
// others (and on all when `pick` is empty or not an ok entry). rank() marks
// against its first entry; a caller that picks under constraints (select())
// marks again against its own pick.
void mark_ties(std::vector<AlgoPerf>& list, std::string_view pick);
// The names of the ok entries indistinguishable() from the entry `pick`, in list order (pick left out).
std::vector<std::string> ties_of(const std::vector<AlgoPerf>& list, std::string_view pick);

// The first entry of a ranked list that is ok and meets the constraints; the
// accuracy budget applies only to measured entries (a NaN error passes). An
// entry's math is looked up in the registry by name (an unregistered name
// counts as fp32).
// nullptr when none does.
const AlgoPerf* select(const std::vector<AlgoPerf>& ranked, const Constraints& c);

// The screening find and get share: fills r's name, determinism and, when the
// candidate cannot run (unavailable here, unsupported, over the workspace
// limit), its status and reason. True when it can run.
bool screen_candidate(const Algorithm& a, const ConvProblem& p, Direction dir, size_t workspace_limit, AlgoPerf& r);

}  // namespace convlab
