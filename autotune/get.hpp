// get: the heuristic (nothing runs), NNPACK's readable `auto` in spirit.
//
// The model knows no algorithm: each states its own cost next to its plan
// (Algorithm::cost_phases / nominal_cost, algorithms/cost.hpp) and get
// multiplies the rates it has by it.
//
// With a machine probe (autotune/probe.hpp: measured once per device and
// build, stored in the cache file) a CPU algorithm's time is the sum of its
// phases, each its work over the probed rate of its kind of kernel (the sgemm
// micro-kernel, the FMA peak, the complex GEMM, im2col / col2im, the Winograd
// and FFT transforms, copies in cache or memory), then scaled to its measured
// time on the probe problem of the same class (3x3, 1x1 or depthwise; a class the
// algorithm was not timed on: the 3x3 one):
//
//     t = s(algo, dir, class) * sum over phases of count * work / probed rate
//     s = measured time on the probe problem / the same sum for the probe problem
//
// The sums are printed as compute (FMA, GEMMs), transforms (im2col, Winograd,
// FFT) and copies. An algorithm that hands the problem to another's plan
// (Algorithm::priced_as: oneDNN's algorithms name the one whose plan is the
// implementation oneDNN picks) is priced, and scaled, as that one. An
// algorithm the probe did not time is scaled by the geometric mean of the
// measured ones' scales; one that is not registered is not scaled.
//
// Without a probe (a GPU, or get before any probe ran) the nominal model:
//
//     t = factor(algo, dir) * ( main_flops / (peak * eff_main)
//                             + transform_flops / (peak * eff_transform)
//                             + traffic_bytes / bandwidth )
//
// with main_flops, transform_flops and the eff fractions the algorithm's
// statement (algorithms/cost.hpp: per family, e.g. Winograd's batched GEMMs and
// transforms), traffic = the three tensors once + twice the workspace, and
// eff_main x min(1, channels / SIMD lanes) for a kernel that vectorises over
// the channels it produces; peak and bandwidth are nominal for the device
// (MachineModel).
//
// An algorithm that states no cost (the Algorithm defaults) is not priced: get
// lists it as unsupported with "the cost model cannot price it: <reason>" and
// never picks it; find measures it as any other.
//
// Either way the model only has to rank; factor() on top, which Calibration
// fits from find results (the geometric mean of measured / predicted per
// algorithm and direction, falling back to per algorithm, then per family,
// then 1), absorbs what it still gets wrong.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "algorithms/algorithm.hpp"
#include "autotune/perf.hpp"
#include "autotune/probe.hpp"

namespace convlab {

struct MachineModel {
  double peak_flops = 0;  // fp32 FLOP/s
  double bandwidth = 0;   // bytes/s
  double simd_lanes = 16; // fp32 lanes a direct kernel vectorizes its output channels over
  int threads = 1;
  // The machine probe for this context (CPU), when one is registered (autotune/probe.hpp):
  // then peak and bandwidth are the probed ones and the model is the probed one above.
  std::shared_ptr<const MachineProbe> probe;
  // The nominal model, with the context's registered probe when there is one.
  static MachineModel for_context(const ExecContext& ctx);
};

struct CostEstimate {
  double main_flops = 0, transform_flops = 0, traffic_bytes = 0;
  double seconds = 0;   // uncalibrated prediction
  std::string formula;  // one line: how the numbers were obtained
  std::string unpriced; // non-empty: the algorithm states no cost (the reason); seconds then 0
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
