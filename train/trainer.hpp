// The speedup experiment behind `convlab train` and `convlab report`: the same
// network, the same initial weights and the same batches, trained under each
// algorithm-selection policy; per-iteration and per-layer times, losses, the
// choices each policy made and what choosing cost.
//
// How it is measured: one net per policy is built and chosen up
// front (train/plan.hpp checks that they fit in memory first); then every round
// runs one iteration of each policy, in the round's order (a Williams Latin
// square, train/plan.hpp), warm-up rounds first. Every time is reported as a
// median over the timed rounds with a 95 % bootstrap interval (core/stats.hpp);
// a speedup is the ratio of medians against the baseline, its interval from
// resampling whole rounds (both policies' iterations of a round together), and
// it is significant when that interval excludes 1.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "core/machine_load.hpp"
#include "core/stats.hpp"
#include "net/data.hpp"
#include "net/net.hpp"
#include "train/context_find.hpp"
#include "train/expect.hpp"
#include "train/limit.hpp"
#include "train/plan.hpp"
#include "train/rank_group.hpp"

namespace convlab::train {

struct TrainConfig {
  std::string net = "alexnet";
  int batch = 8;
  int iters = 3;    // timed rounds (one iteration of every policy each)
  int warmup = 1;   // untimed rounds before them (they still train)
  int threads = 0;  // 0 = all (CPU)
  DeviceKind device = DeviceKind::cpu;  // where every layer runs; the policies choose among its algorithms
  int classes = 1000;
  std::vector<std::string> policies;  // empty = default_policies()
  bool first_layer_grad = false;
  std::string data = "pattern";       // pattern | random | npy
  std::string images_npy, labels_npy; // data == "npy"
  uint64_t seed = 1;
  float noise = 1.0f;
  SgdOptions sgd;
  // The loss agreement is derived per run (TrainReport::drift); this is the
  // per-step growth assumed only where the run cannot measure it (data-parallel).
  double assumed_drift_growth = 10;
  ContextFindOptions context;  // the find-context policy's budget (train/context_find.hpp)
  std::vector<Expectation> expect;  // the user's own (--expect), checked at the end (train/expect.hpp)
};

// default, get, find, find-context, and fixed:<first algorithm of each family on `device`>
// plus the named baselines when registered: on the CPU cpu.im2col_openblas and
// onednn.auto, on CUDA cuda.im2col_cublas and cuDNN's usual forward default
// cudnn.implicit_precomp_gemm (directions it lacks fall back to default).
std::vector<std::string> default_policies(DeviceKind device = DeviceKind::cpu);

struct LayerResult {
  std::string name, kind;
  std::string problem;                 // conv layers: benchdnn form
  LayerTime median;                    // per component, median over timed rounds
  bool epilogue_timed = false;         // conv layers: median's epilogue_fwd / epilogue_bwd were measured
                                       // (train.json's epilogue_s; files written before it lack them)
  stats::Interval ci[3] = {{0, 0}, {0, 0}, {0, 0}};  // per component (direction_index), 95 % of the median, seconds
  std::vector<LayerTime> samples;      // per timed round
  std::string algo[3], why[3];         // conv layers, per direction (indexed by direction_index())
  double tuning_seconds[3] = {0, 0, 0};
  bool input_grad = true;              // false for the first layer when skipped
  double bound_seconds = 0;            // the layer's step at the machine's limit (train/limit.hpp; 0: not measured)
  // Data-parallel runs: the all-reduce time of the bucket(s) holding this layer's
  // gradients (a bucket's time shared among its layers by bytes), and the part of
  // it after the backward ended (exposed); medians over the timed rounds.
  double comm_seconds = 0, comm_exposed_seconds = 0;
};

struct PolicyResult {
  std::string policy;
  bool ran = false;
  std::string skipped;                 // why not, when !ran
  // It trained until its loss went non-finite and stopped there (ran is false,
  // skipped says at which iteration and the first layer whose output was not
  // finite); losses holds the iterations up to and including that one.
  bool stopped = false;
  double choose_seconds = 0;           // wall time of all choices (find: the tuning cost)
  size_t workspace_bytes = 0;
  std::vector<double> iter_seconds;    // per timed round
  double iter_median = 0;
  stats::Interval iter_ci{0, 0};       // 95 % of the median
  // Against the baseline (TrainReport::baseline()): baseline median / this median,
  // its interval over paired rounds, and whether that interval excludes 1.
  double speedup = 1;
  stats::Interval speedup_ci{1, 1};
  bool significant = false;            // verdict is faster or slower
  // "baseline"; "faster" / "slower": the interval lies beyond the equivalence margin
  // (TrainReport::margin); "same": inside it; "not significant": neither.
  std::string verdict = "not significant";
  double loss_median_update = 0, loss_median_loss = 0;  // SGD update and loss layer, medians
  std::vector<double> update_seconds, loss_seconds;     // per timed round
  size_t memory_bytes = 0;             // this net's estimate (train/plan.hpp)
  bool has_context = false;            // find-context: what the in-context find measured
  ContextFindResult context;
  std::vector<double> losses;          // every iteration, warm-up included (data-parallel: the global batch's)
  // Data-parallel runs (TrainReport::ranks > 1), medians over the timed rounds: all-reduce
  // time per step (every bucket), the step's wait for it after the backward (exposed), and
  // the compute of the step (iteration minus exposed communication).
  // skew: the wait for the slowest rank before the first bucket (load imbalance).
  // after_backward: the part of the buckets' all-reduces after the backward ended (not hidden).
  double comm_median = 0, comm_exposed_median = 0, skew_median = 0, comm_after_backward_median = 0;
  std::vector<double> comm_seconds, comm_exposed_seconds, skew_seconds, comm_after_backward_seconds;  // per timed round
  std::vector<LayerResult> layers;
  double first_layer_dx_seconds = 0;   // what the skipped dL/dimage would have cost
  // The loss against the baseline's, iteration by iteration (TrainReport::drift):
  // |loss - baseline's| / |baseline's| and whether it stayed inside the expected
  // fp32 drift at every iteration; the first iteration it left it (-1: none).
  std::vector<double> loss_rel_diffs;
  bool loss_agrees = true;
  int loss_exceeds_at = -1;
};

// The expected fp32 drift of the loss between two correct policies. Iteration 0
// runs the forward on identical weights, so two correct algorithms differ there
// by their summation orders only: at most bound0 = K x FLT_EPSILON relative,
// K the longest reduction of any convolution (C/g R S). Training amplifies any
// difference step by step, so by iteration t the bound is bound0 x growth^t,
// growth = the fastest average per-step growth of a control: the baseline's
// net, every weight moved by 2^-22 relative (a few ulps), trained again on the
// same batches -- how this network, batch and learning rate amplify a rounding
// difference, measured in this run.
struct DriftBound {
  double bound0 = 0;             // K x FLT_EPSILON
  int reduction = 0;             // K
  double growth = 1;             // per step
  bool measured = false;         // growth from the control (else TrainConfig::assumed_drift_growth)
  std::vector<double> control;   // the control's relative loss difference per iteration
  double at(int iteration) const;  // bound0 x growth^iteration
};

struct TrainReport {
  TrainConfig config;
  std::string run_id;  // the command run that writes it (make_run_id(); "" = none): "run_id" in the JSON
  std::string device, data;
  int64_t params = 0;
  std::vector<PolicyResult> policies;
  long peak_rss_kb = 0;
  double wall_seconds = 0;
  // The order the policies ran in, one list of indices into `policies` per
  // round, as executed (recorded by the loop itself, not recomputed).
  std::vector<std::vector<int>> warmup_order, order;
  MemoryPlan memory;
  // The step's napkin limit on this machine (train/limit.hpp), measured before
  // the nets are built; limit_skipped says why not (limit.seconds == 0 then).
  StepLimit limit;
  std::string limit_skipped;
  // Data-parallel (train/rank_group.hpp): ranks the global batch `config.batch` was split over
  // (1: no communication), the transport, the buckets, the gradient bytes per step, the
  // threads each rank used, and the measured exchange bandwidth between ranks 0 and 1.
  int ranks = 1;
  std::string transport, buckets, overlap_why;
  double grad_bytes = 0;
  int rank_threads = 0;
  double exchange_bytes_per_s = 0;
  // The reference policy for speedups and attribution: `baseline_policy` when it names one that ran
  // (a results file written by another driver, e.g. the PyTorch bridge's "pytorch"), else `default`
  // when it ran, else the first that ran.
  std::string baseline_policy;
  int baseline() const;
  // The equivalence margin of a speedup: how far from 1.0 two policies that run
  // the same code (every layer and direction the same algorithm as the
  // baseline's) land in this run: the largest of its speedup and its
  // interval's ends, each read both ways (x or 1/x) as a distance from 1.
  // 0 with margin_pair empty when no such pair ran.
  double margin = 0;
  std::string margin_pair;  // the policy that ran the baseline's code
  DriftBound drift;         // what a policy's loss may differ from the baseline's
  // How busy the machine was from before the choosing to after the timed rounds
  // (core/machine_load.hpp): whether other work competed with the measurement.
  LoadCheck load;
  std::vector<ExpectationResult> expectations;  // config.expect, checked against the iterations
  // Whether every expectation was met (true when there are none).
  bool expectations_met() const;
};

// Every policy's loss against the baseline's, iteration by iteration, judged by
// rep.drift (PolicyResult::loss_rel_diffs, loss_agrees, loss_exceeds_at).
void judge_losses(TrainReport& rep);

// Puts every expectation's policy names in canonical form and throws Error when one
// names a policy that is not in cfg's list (default_policies() when empty).
void check_expectations(TrainConfig& cfg);

// The speedup verdict of `ci` (baseline / policy, its interval) against an equivalence margin `m`.
std::string speedup_verdict(const stats::Interval& ci, double m);

// Checks cfg's policies (default_policies() when empty) before any work: bad
// policy text throws Error; returns "" when at least one policy can run on
// cfg.device, else one line naming each policy and why it cannot
// (policy_unavailable_reason). run_training throws that line as an Error.
std::string why_no_policy_can_run(const TrainConfig& cfg);

// Builds a probe net and plans the run's memory (train/plan.hpp): "" when one
// net per runnable policy fits, else the one-line refusal. run_training throws
// it as an Error before building the other nets.
std::string why_nets_do_not_fit(const TrainConfig& cfg);

// Policies that cannot run (policy_unavailable_reason, or no algorithm within
// their constraints for some layer) are skipped and recorded with the reason. A
// policy whose loss goes non-finite stops there (PolicyResult::stopped); the
// others train on.
//
// Data-parallel when `group` has 2+ ranks (dist/comm_group.hpp says how): rank 0
// chooses and the others run its choices, every rank trains its slice of each
// global batch, the losses are the global batch's and the iteration times the
// slowest rank's. A 1-rank group only sets the threads (its default_threads()).
TrainReport run_training(const TrainConfig& cfg, const std::function<void(const std::string&)>& log = {},
                         RankGroup* group = nullptr);

// "" when no policy stopped on a non-finite loss, else one line naming the first
// (policy, iteration, where the forward went non-finite) and how many stopped:
// the CLI prints it and exits 1.
std::string stopped_line(const TrainReport& rep);

// Iterations after which find's choosing cost is repaid by its faster iterations
// against `other` (find's cost minus other's, divided by the time saved per
// iteration); negative when find is not faster.
double break_even_iterations(const PolicyResult& find, const PolicyResult& other);

}  // namespace convlab::train
