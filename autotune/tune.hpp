// The autotuning run behind `convlab tune` (the sibling of autotune/compare,
// which is `convlab layers`): for every (problem, direction)
//   1. find's ranked list, from the cache when an entry covers the candidates
//      and the workspace limit, else measured and stored (cache_or_find();
//      a shape repeated in the list is tuned once);
//   2. get's ranking three ways: uncalibrated, calibrated in-sample (from this
//      run's find results, or with a cache from all of its entries of this
//      device: their results of this build's algorithm versions) and
//      calibrated leaving the problem's own
//      measurements out (only when find ran);
//   3. the vendor's own pick (autotune/vendor.hpp), and how often it agrees
//      with find's;
//   4. how get's choice fares against find's (compare_get_find), per pair and
//      summarised.
// Before all of it, on the CPU, the machine probe get's model uses
// (autotune/probe.hpp): this process's, else the cache file's, else measured
// and stored there (without a cache file: measured and kept in the process).
// Around step 1 the machine's load is measured (core/machine_load.hpp): the
// result says whether other processes disturbed find's timings.
// Nothing is printed: the CLI prints the result (tools/cmd_tune.cpp).
#pragma once
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "autotune/find.hpp"
#include "autotune/get.hpp"
#include "autotune/probe.hpp"
#include "autotune/vendor.hpp"
#include "core/machine_load.hpp"
#include "core/problem_list.hpp"

namespace convlab {

struct TuneOptions {
  bool find = true;  // false: get only (nothing runs but the vendor's heuristics)
  std::vector<Direction> dirs = {std::begin(kAllDirections), std::end(kAllDirections)};
  bool dirs_given = false;   // false: an item from a oneDNN verbose line keeps its own direction (item_directions)
  ExecContext ctx;
  Constraints constraints;   // of every choice; its workspace limit is also find's
  FindOptions find_options;  // its workspace_limit and progress callbacks are set by tune()
  // "" = no cache file at all: find always runs, nothing is kept, get calibrates from this run and the
  // machine probe is measured in the process. (`convlab tune` passes the default cache unless --no-cache.)
  std::string cache_path;
  bool retune = false;       // ignore cache hits (find runs and replaces the entries)
  bool probe = true;         // ensure the machine probe first (CPU)
  bool reprobe = false;      // measure it even when the cache has one
  // Progress: before find runs for pair `index` of `count` ("alexnet.conv2 fwd"), and before each of its
  // candidates ("alexnet.conv2 fwd cpu.direct"); then once when every pair has its find results.
  std::function<void(int index, int count, const std::string& what)> on_step;
  std::function<void()> on_find_done;
};

struct TunePair {
  std::string label;  // ProblemItem::label
  ConvProblem problem;
  Direction dir = Direction::fwd;
  std::vector<AlgoPerf> found;  // find's ranked list; empty when find did not run
  bool from_cache = false;      // from the cache, or from an earlier pair of the same shape
  int reused = 0;               // results taken from the cache (all of them when from_cache; some when find
                                // re-timed only the algorithms whose code or libraries changed)
  double tune_seconds = 0;      // find's wall time (0 when from_cache)
  std::vector<AlgoPerf> got_uncalibrated, got_in_sample, got_leave_one_out;  // the last only when find ran
  VendorReport vendor;
  // The choices under the constraints ("" where none; find's only when it ran), and find's
  // measured time of each (NaN where it has none): what vendor_text / vendor_json compare with.
  std::string find_algo, get_algo;
  // The ok entries find cannot tell apart from its choice (ties_of(); `found`'s tie flags are marked
  // against that choice).
  std::vector<std::string> find_ties;
  double find_time = std::numeric_limits<double>::quiet_NaN();
  double get_time = std::numeric_limits<double>::quiet_NaN();
  int get_index = -1;  // get's choice in got_in_sample
  const AlgoPerf* get_choice() const { return get_index < 0 ? nullptr : &got_in_sample[size_t(get_index)]; }
  // get vs find, when find ran and has an acceptable candidate.
  bool compared = false;
  Agreement uncalibrated, in_sample, leave_one_out;
};

struct TuneResult {
  std::string fingerprint;  // the device's, as the cache keys it
  size_t candidates = 0;    // find_candidates() on the device
  std::string cache_path;   // TuneOptions::cache_path
  ProbeOutcome probe;       // what ensure_probe did (Source::none on a GPU or with probe off)
  int cache_hits = 0, tuned = 0;
  int partly = 0;           // of `tuned`: pairs where find re-timed only some candidates (the rest from the cache)
  double find_seconds = 0;  // wall time of step 1
  bool load_measured = false;  // find ran: `load` judges the machine around step 1
  LoadCheck load;
  int calibration_samples = 0;
  std::vector<TunePair> pairs;  // problem order, then direction order
  int compared = 0;             // pairs with compared set
  AgreementSummary uncalibrated, in_sample, leave_one_out;  // over the compared pairs
  std::vector<VendorTally> vendor;                          // per vendor source, over pairs where find chose
  int no_choice = 0;  // pairs without an acceptable candidate (find's, or get's in get mode)
};

// Throws Error (one line) for a cache file that cannot be read or written and
// for a problem find cannot run; DeviceFault when the device is lost.
TuneResult tune(const std::vector<ProblemItem>& problems, const TuneOptions& opt);

}  // namespace convlab
