// The whole `convlab layers` run around compare_layers (autotune/compare.hpp):
//   1. the checks before any work: a CUDA device for --device cuda, find's memory
//      on every case, the cache file (created when missing, its folder must exist);
//   2. the machine probe of every thread count (CPU): from this process, the
//      cache file or the default cache, else measured and stored there;
//   3. get's calibration from the cache's entries of this device at every thread
//      count the run uses (their results of this build's algorithm versions, each
//      predicted with that thread count's machine model);
//   4. the comparison itself, and each algorithm's thread scaling when the run
//      measures more than one thread count.
// Nothing is printed: the callbacks and the result carry what the CLI prints.
#pragma once
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "autotune/compare.hpp"
#include "autotune/get.hpp"
#include "autotune/probe.hpp"

namespace convlab {

// What the run knows before the first find: the probes and the calibration.
struct CompareSetup {
  std::vector<std::pair<int, ProbeOutcome>> probes;  // (resolved threads, what ensure_probe did), CPU
  Calibration calibration;
  // "get calibrated from N cached measurements (...)" or why not; "" without a cache file.
  std::string calibration_line;
};

struct CompareRunOptions {
  CompareOptions compare;  // its calibration is set by run_comparison when there is a cache file
  // With a cache file: the probe kept there and get calibrated from it. Without: get uncalibrated,
  // the probe kept in the default cache.
  bool use_cache = false;
  std::string cache_path;
  bool reprobe = false;    // measure the machine probe again even when the cache has one
  std::string network;     // the networks the cases come from, joined by '+' ("" = none)
  int network_batch = 0;   // their minibatch (the Comparison's batch when network is set)
  // Called once the probes and the calibration are ready, before any find.
  std::function<void(const CompareSetup&)> on_setup;
};

// One algorithm's speedup from the fewest threads measured to the most: the geometric
// mean over the (layer, direction) cases where both ran ok.
struct ThreadScalingRow {
  std::string algo;
  double speedup = 0;
  size_t cases = 0;
};

struct ThreadScaling {
  int from_threads = 0, to_threads = 0;
  std::vector<ThreadScalingRow> rows;  // by algorithm name
};

struct CompareRun {
  CompareSetup setup;
  Comparison comparison;  // its run id made here (make_run_id())
  bool has_scaling = false;  // more than one thread count was measured
  ThreadScaling scaling;
};

// Throws Error (one line) for bad input before any work, OutOfMemory when find
// would not fit (require_compare_memory), DeviceFault when the device is lost.
CompareRun run_comparison(const std::vector<LayerCase>& cases, const CompareRunOptions& opt);

ThreadScaling thread_scaling(const Comparison& c);

}  // namespace convlab
