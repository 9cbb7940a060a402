// The per-layer comparison run behind `convlab layers` and `convlab report`:
// for each (layer, direction, thread count) every candidate algorithm is
// checked against the fp64 reference and timed (find), ranked by the cost
// model without running (get), and reported with effective GFLOP/s and the
// fraction of the machine's measured FMA peak. One schema for JSON/CSV, read
// by the notebooks.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "autotune/get.hpp"
#include "core/peak.hpp"

namespace convlab {

struct LayerCase {
  std::string label;  // layer id ("alexnet.conv2") or the problem's key
  ConvProblem problem;
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
  double gflops() const;
  bool ran() const { return status == "ok" || status == "inaccurate"; }
};

struct Comparison {
  DeviceKind device = DeviceKind::cpu;
  std::string fingerprint, network;
  int batch = 0;
  std::vector<PeakResult> peaks;  // one per thread count (CPU)
  double bandwidth_gbs = 0;
  std::vector<ComparisonRow> rows;
};

struct CompareOptions {
  DeviceKind device = DeviceKind::cpu;
  std::vector<int> threads = {0};
  std::vector<Direction> dirs = {Direction::fwd, Direction::bwd_data, Direction::bwd_filter};
  double max_seconds = 0.3;            // timed work per candidate
  const Calibration* calibration = nullptr;
  // Called after each (layer, direction, threads) with its rows.
  std::function<void(const LayerCase&, Direction, int threads, const std::vector<ComparisonRow>&)> on_case;
};

Comparison compare_layers(const std::vector<LayerCase>& cases, const CompareOptions& opt);

std::string comparison_json(const Comparison& c);
std::string comparison_csv(const Comparison& c);
// rows = (layer, direction), columns = algorithms, cells = median ms, fastest
// in bold, find's pick marked F and get's G; the most threads measured.
std::string comparison_markdown(const Comparison& c);

}  // namespace convlab
