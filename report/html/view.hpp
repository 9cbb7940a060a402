// What report.html shows, read from the results files' JSON (train.json:
// report/report.hpp's report_json; layers.json: report/layers.hpp's
// comparison_json, read back by comparison_from_json into the Comparison it was
// written from) into plain structs the charts draw from.
//
// Why from the JSON and not from the run in memory: the JSON is the contract
// every reader of the results shares (notebooks, report.html), so the page
// shows exactly what the files hold and `convlab html DIR` can redraw any
// results folder later. Every key read is optional: a missing or null number
// is NaN, a missing interval is {NaN, NaN}, and each chart draws what is there
// and says what is not.
#pragma once
#include <cmath>
#include <string>
#include <vector>

namespace convlab {
struct Comparison;
namespace train {
struct TrainReport;
}
}

namespace convlab::train::html {

struct Interval {
  double lo = NAN, hi = NAN;
  bool ok() const { return std::isfinite(lo) && std::isfinite(hi); }
};

struct LayerView {
  std::string name, kind, problem;
  double fwd_ms = 0, bwd_data_ms = 0, bwd_filter_ms = 0;  // other layers: fwd_ms and backward in bwd_data_ms
  std::string algo[3];                                     // conv: per direction (fwd, bwd-data, bwd-filter)
  bool input_grad = true;
  // Optional: each direction's 95 % interval of its median (fwd, bwd-data or
  // the other layers' backward, bwd-filter), its bandwidth bound and how close it is.
  Interval dir_ci[3];
  double bound_ms = NAN, pct_of_bound = NAN;
  double total_ms() const { return fwd_ms + bwd_data_ms + bwd_filter_ms; }
};

struct PolicyView {
  std::string name, skipped;
  bool ran = false;
  double iter_ms = NAN;              // the median iteration
  std::vector<double> iters_ms;      // every timed iteration
  double speedup = NAN;              // baseline's median / this one's
  double loss_ms = 0, update_ms = 0; // the loss layer and the SGD update, medians
  double choose_s = NAN, workspace_bytes = NAN, loss_rel_diff = NAN, final_loss = NAN;
  std::vector<LayerView> layers;
  // Optional.
  Interval iter_ci, speedup_ci;
  int significant = -1;              // -1 unknown, 0 not significant, 1 significant
  std::string verdict;               // baseline | faster | slower | same | not significant ("": not in train.json)
  int loss_agrees = -1;              // within the expected fp32 drift at every iteration (-1: not in train.json)
  double x_limit = NAN;              // the median as a multiple of the napkin limit
};

struct LimitView {
  bool present = false;
  double seconds = NAN, conv_flops = NAN, fc_flops = NAN, other_bytes = NAN, peak_gflops = NAN, bandwidth_gbs = NAN;
  // The conv and fc passes' part of the limit, split by what binds each (NAN: not in this train.json).
  double compute_bound_seconds = NAN, memory_bound_seconds = NAN, memory_bound_passes = NAN, passes = NAN;
};

struct AlgoMs {
  std::string algo;
  double ms = NAN;
};

struct InContextView {
  std::string layer, dir;
  std::vector<AlgoMs> isolated, in_context;
  int agree = -1;                    // 0: the rankings differ beyond the noise
  int tie = -1;                      // 1: the order swapped inside the noise
  double cost_ratio = NAN;
};

// The in-context find's claim checked against the iterations (train.json "in_context_claim").
struct ContextClaimView {
  bool present = false;
  int pairs = 0, differ = 0, ties = 0;
  int checked = -1, consistent = -1;
  double claimed_ms = NAN, measured_ms = NAN;
  Interval measured_ci;
  std::string find_policy;
};

struct TrainView {
  std::string net, device, data, baseline;
  int batch = 0, iters = 0, warmup = 0, threads = 0;
  bool first_layer_grad = false;
  double loss_rtol = NAN, wall_seconds = NAN, peak_rss_kb = NAN;
  std::vector<PolicyView> policies;
  LimitView limit;
  std::vector<InContextView> in_context;
  ContextClaimView context_claim;
  double margin = NAN;               // the equivalence margin of a speedup (NaN: not in train.json)
  int load_disturbed = -1;           // the machine was busy with other work while measuring (-1: unknown)
  std::string load_why;
  std::string margin_pair;
  const PolicyView* base() const;  // the baseline policy (by name), else the first that ran; null if none ran
};

// One algorithm on one (layer, direction), at the most threads measured.
struct AlgoRow {
  std::string layer, dir, algo, family, status, note;
  double time_ms = NAN, gflops = NAN, peak_fraction = NAN, flops = NAN, bytes = NAN;
  bool find_choice = false, get_choice = false;
  bool ran() const { return status == "ok" || status == "inaccurate"; }
};

struct VendorPick {
  std::string layer, dir, status, source, algo, find_algo, get_algo;
  double time_ms = NAN, find_time_ms = NAN, get_time_ms = NAN;
};

struct LayersView {
  std::string device, fingerprint, network, isa;
  int batch = 0, threads = 0;
  double peak_gflops = NAN, bandwidth_gbs = NAN;
  std::vector<AlgoRow> rows;        // the most threads only
  std::vector<VendorPick> vendor;   // the most threads only
  // (layer, direction) pairs in first-seen order.
  std::vector<std::pair<std::string, std::string>> cases() const;
};

// Parse; a malformed document throws convlab::Error naming `what` (the file).
// train.json read into the TrainReport it was written from (report/report.hpp), then viewed.
TrainView read_train(const std::string& json_text, const std::string& what);
TrainView train_view(const TrainReport& r);
// layers.json read into the Comparison it was written from (report/layers.hpp), then viewed.
LayersView read_layers(const std::string& json_text, const std::string& what);
LayersView layers_view(const Comparison& c);
// The "run_id" of a results file (train.json, layers.json): "" when it has none (null, or written
// before run ids). Throws Error naming `what` when the text is not a JSON object.
std::string read_run_id(const std::string& json_text, const std::string& what);

}  // namespace convlab::train::html
