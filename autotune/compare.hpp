// The per-layer comparison run behind `convlab layers` and `convlab report`:
// for each (layer, direction, thread count) every candidate algorithm is
// checked against the fp64 reference and timed (find), ranked by the cost
// model without running (get), and reported with effective GFLOP/s and the
// fraction of the machine's measured FMA peak; beside them the vendor library's
// own pick (autotune/vendor.hpp: oneDNN auto on the CPU, cuDNN Find and
// Get_v7 on a GPU). One schema for JSON/CSV, read by the notebooks.
//
// The results are written by the report layer (report/layers.hpp: layers.json,
// layers.csv and the Markdown table).
#pragma once
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "autotune/get.hpp"
#include "autotune/probe.hpp"
#include "autotune/vendor.hpp"
#include "core/machine_load.hpp"
#include "core/peak.hpp"

namespace convlab {

struct LayerCase {
  std::string label;  // layer id ("alexnet.conv2") or the problem's key
  ConvProblem problem;
  std::vector<Direction> dirs;  // empty: CompareOptions::dirs
};

struct ComparisonRow {
  std::string layer, problem, dir, algo, family, status, note;
  int threads = 0;
  double flops = 0, bytes = 0;
  double time = 0;  // seconds (NaN when not run)
  double spread = 0, max_rel_error = 0, peak_fraction = 0;
  size_t workspace = 0;
  int find_rank = 0, get_rank = 0;  // 1-based among the ranked lists; 0 = not ranked ok
  bool find_choice = false, get_choice = false;
  double lo = NAN, hi = NAN;  // the median's 95 % interval, seconds
  bool tie = false;           // find cannot tell it apart from its choice (the choice too, when it has ties)
  double gflops() const;
  bool ran() const { return status == "ok" || status == "inaccurate"; }
};

// The vendor's pick for one (layer, direction, threads); `choice` is empty
// (source "") when the vendor gave none, and `status` says why.
struct VendorRow {
  std::string layer, problem, dir, status;
  int threads = 0;
  VendorChoice choice;
  std::string find_algo, get_algo;  // convlab's picks ("" when none)
  double find_time = NAN, get_time = NAN;  // find's measured times of them
};

// The fastest hand-written algorithm of one (layer, direction, threads) against the fastest vendor
// peer (CPU: oneDNN), both from find, timed again interleaved: `rounds` rounds of one run each,
// the order alternating (AB, BA, ...), so a slow spell of a shared machine (seconds long, 2x on
// these 2-core guests) falls on both. speed = median(peer) / median(own) with its paired 95 %
// bootstrap interval (stats::median_ratio_ci): >= 1 means the hand-written one is at least as fast.
// note says why a pair has no duel (one side missing, memory); times in milliseconds.
struct DuelRow {
  std::string layer, problem, dir, own, peer, note;
  int threads = 0, rounds = 0;
  double own_ms = NAN, peer_ms = NAN, speed = NAN, lo = NAN, hi = NAN;
};

// Where the threads of one (layer, direction, threads) case sat (core/thread_distance.hpp): the
// round trip of a cache line between the team's farthest pair, just before find, after find
// (before the duel) and after the duel (NaN: not measured -- one thread, or no duel). Rows measured
// at placements kFarRatio apart compare times of two different machines.
struct PlacementRow {
  std::string layer, problem, dir;
  int threads = 0;
  double find_before_ns = NAN, find_after_ns = NAN, duel_after_ns = NAN;
  bool measured() const { return std::isfinite(find_before_ns); }
  double nearest() const { return extreme(false); }  // the smallest of the measured ones
  double farthest() const { return extreme(true); }  // the largest

 private:
  double extreme(bool largest) const;
};

// The run's placements in a few lines for the report's end ("" when none was measured): the range
// of round trips, how many cases ran at more than kFarRatio the run's nearest, and how many moved
// within their own measurement.
std::string placement_text(const std::vector<PlacementRow>& rows);

struct Comparison {
  DeviceKind device = DeviceKind::cpu;
  std::string fingerprint, network;
  std::string run_id;  // the command run that writes it (make_run_id(); "" = none): "run_id" in the JSON
  int batch = 0;
  std::vector<PeakResult> peaks;  // one per thread count (CPU)
  double bandwidth_gbs = 0;
  std::vector<std::pair<int, ProbeOutcome>> probes;  // (threads, what ensure_probe did), CPU
  std::vector<ComparisonRow> rows;
  std::vector<VendorRow> vendor;
  std::vector<DuelRow> duels;  // CPU, CompareOptions::duel
  std::vector<PlacementRow> placements;  // CPU with two or more threads, one per case
  LoadCheck load;  // the machine around the measurements (every case's find)
};

struct CompareOptions {
  DeviceKind device = DeviceKind::cpu;
  std::vector<int> threads = {0};
  std::vector<Direction> dirs = {Direction::fwd, Direction::bwd_data, Direction::bwd_filter};
  double max_seconds = 0.3;            // timed work per candidate
  // CPU: after find, the fastest hand-written algorithm and the fastest vendor peer timed again
  // interleaved (DuelRow), about duel_seconds of rounds per pair (9 to 41 rounds).
  bool duel = true;
  double duel_seconds = 0.5;
  // Also run the reduced-precision (TF32 tensor-core) algorithms, cuda.*_tf32 and cudnn.*_tf32, in
  // the same table; find's pick may then be one of them.
  bool tf32 = false;
  const Calibration* calibration = nullptr;
  // The machine probe of each thread count (CPU) is ensured first: this process's, else the one in
  // probe_cache ("" = the default cache file), else measured and stored there.
  bool probe = true;
  std::string probe_cache;
  bool reprobe = false;
  // Called after each (layer, direction, threads) with its rows and where its threads sat during
  // find (the placement's duel_after_ns is not known yet).
  std::function<void(const LayerCase&, Direction, const PlacementRow&, const std::vector<ComparisonRow>&)> on_case;
  // Called right after on_case with that case's vendor rows.
  std::function<void(const std::vector<VendorRow>&)> on_vendor;
  // Called after on_vendor with that case's duel (CPU, when duel is on).
  std::function<void(const DuelRow&)> on_duel;
};

// Throws OutOfMemory (one line naming the case and the sizes) when find on some
// case would not fit in the available memory (find_memory). compare_layers
// calls it first; `convlab layers` before its machine probe.
void require_compare_memory(const std::vector<LayerCase>& cases, const CompareOptions& opt);

Comparison compare_layers(const std::vector<LayerCase>& cases, const CompareOptions& opt);

}  // namespace convlab
