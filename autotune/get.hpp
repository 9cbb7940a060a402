// get: the heuristic (nothing runs), NNPACK's readable `auto` in spirit.
//
// Every candidate's time is predicted as
//
//     t = factor(algo, dir) * ( main_flops / (peak * eff_main)
//                             + transform_flops / (peak * eff_transform)
//                             + traffic_bytes / bandwidth )
//
// with, per family (F = the direct convolution's flops, B = the three tensors
// once, W = the algorithm's own workspace_bytes()):
//
//   gemm, implicit_gemm, direct, unknown   main = F;  traffic = B + 2 W  (workspace written, then read)
//                          direct only: eff_main x min(1, channels produced / SIMD lanes)
//                          (K for fwd / bwd-filter, C/g for bwd-data: AlexNet conv1's C = 3)
//   winograd F(m x r)      tiles T = N * ceil(P/m) * ceil(Q/m), a = m + r - 1
//                          main = 2 a^2 T C K / g   (the a^2 batched GEMMs)
//                          transforms = T C * 4 a^3  +  T K * 2 (a^2 m + a m^2)  +  K C/g * 2 (a r^2 + a^2 r)
//   fft (whole image)      L = pow2(H + 2 pad) x pow2(W + 2 pad), bins = Lh (Lw/2 + 1)
//                          main = 8 bins N K C/g (complex multiply-adds)
//                          transforms = (N C + K C/g + N K) * 2.5 Lh Lw log2(Lh Lw)
//   fft tiled (t x t, name has "fft<t>" / "tile<t>")  the same per tile, tiles of t - R + 1 outputs
//
// eff_* are fixed fractions of peak per family (kFamily in get.cpp); peak and
// bandwidth are nominal for the device (MachineModel). The model only has to
// rank; its absolute error is absorbed by factor(), which Calibration fits
// from find results (the geometric mean of measured / predicted per
// algorithm and direction, falling back to per algorithm, then per family, then 1).
#pragma once
#include <map>
#include <string>
#include <vector>

#include "algorithms/algorithm.hpp"
#include "autotune/perf.hpp"

namespace convlab {

struct MachineModel {
  double peak_flops = 0;  // fp32 FLOP/s
  double bandwidth = 0;   // bytes/s
  double simd_lanes = 16; // fp32 lanes a direct kernel vectorizes its output channels over
  static MachineModel for_context(const ExecContext& ctx);
};

struct CostEstimate {
  double main_flops = 0, transform_flops = 0, traffic_bytes = 0;
  double seconds = 0;   // uncalibrated prediction
  std::string formula;  // one line: how the numbers were obtained
};
CostEstimate model_cost(const Algorithm& a, const ConvProblem& p, Direction dir, const MachineModel& m);
// The same with the workspace given (calibration passes the one find measured
// with, so fitting a cache never asks an algorithm, e.g. oneDNN, to plan).
CostEstimate model_cost(const Algorithm& a, const ConvProblem& p, Direction dir, const MachineModel& m,
                        size_t workspace_bytes);

// One find result, the unit calibration learns from (the cache holds these).
struct Measured {
  ConvProblem problem;
  Direction dir = Direction::fwd;
  std::vector<AlgoPerf> results;
};

class CalibrationData;

class Calibration {
 public:
  // Fits factors from the ok entries of `data` whose algorithm is registered.
  // Entries whose problem key equals exclude_key are skipped (leave-one-out).
  // Algorithms are looked up by name in `algos` when given, else in the registry.
  static Calibration fit(const std::vector<Measured>& data, const MachineModel& m, const std::string& exclude_key = "",
                         const std::vector<const Algorithm*>* algos = nullptr);
  double factor(const Algorithm& a, Direction dir) const;
  int samples() const { return samples_; }

 private:
  friend class CalibrationData;
  std::map<std::string, double> factor_;  // "algo|dir", "algo", "family|dir" -> geometric mean
  int samples_ = 0;
};

// The calibration data reduced once (one pass over the measurements, each
// predicted from its recorded workspace, nothing planned or run): per factor
// key the sum of log(measured / predicted) and the count, in total and per
// problem key. Fitting in-sample or leaving one problem out then costs
// O(factor keys), not another pass over a cache of tens of thousands of entries.
class CalibrationData {
 public:
  CalibrationData() = default;
  CalibrationData(const std::vector<Measured>& data, const MachineModel& m,
                  const std::vector<const Algorithm*>* algos = nullptr) {
    add(data, m, algos);
  }
  // Adds measurements taken on the machine `m` describes (e.g. one thread count's).
  void add(const std::vector<Measured>& data, const MachineModel& m, const std::vector<const Algorithm*>* algos = nullptr);
  Calibration fit(const std::string& exclude_key = "") const;
  int samples() const { return samples_; }

 private:
  using Sums = std::map<std::string, std::pair<double, int>>;  // factor key -> (sum of log ratios, count)
  Sums total_;
  std::map<std::string, std::pair<Sums, int>> by_problem_;  // problem key -> (its sums, its samples)
  int samples_ = 0;
};

// The ranked prediction: candidates that are unavailable / unsupported / over
// the limit are listed with their status like find does; ok entries carry the
// predicted time (spread 0, reps 0, errors NaN) and the formula in note.
std::vector<AlgoPerf> get(const ConvProblem& p, Direction dir, const ExecContext& ctx, size_t workspace_limit = size_t(-1),
                          const Calibration* cal = nullptr);
std::vector<AlgoPerf> get(const ConvProblem& p, Direction dir, const ExecContext& ctx, size_t workspace_limit,
                          const Calibration* cal, const std::vector<const Algorithm*>& candidates);

// How get's choice fares against find's on one (layer, direction).
struct Agreement {
  std::string layer;  // label
  Direction dir = Direction::fwd;
  std::string get_algo, find_algo;
  double get_time = 0;   // the measured time of get's choice (find's list); inf if find rejected it
  double find_time = 0;  // the measured time of find's choice
  bool same() const { return get_algo == find_algo; }
  double slowdown() const { return get_time / find_time; }  // >= 1 up to noise
};
// Both lists ranked; the same constraints applied to each. Throws Error when
// find has no acceptable candidate.
Agreement compare_get_find(const std::string& layer, Direction dir, const std::vector<AlgoPerf>& got,
                           const std::vector<AlgoPerf>& found, const Constraints& c);

struct AgreementSummary {
  int pairs = 0, same = 0, within_10pct = 0;
  double geomean_slowdown = 1;  // over pairs with a finite slowdown
  double total_get = 0, total_find = 0;  // sums of the chosen algorithms' times
  int get_rejected = 0;                  // get picked something find rejected
};
AgreementSummary summarize(const std::vector<Agreement>& rows);

}  // namespace convlab
