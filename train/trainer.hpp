// The speedup experiment behind `convlab train` and `convlab report`: the same
// network, the same initial weights and the same batches, trained under each
// algorithm-selection policy; per-iteration and per-layer times, losses, the
// choices each policy made and what choosing cost.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "train/data.hpp"
#include "train/net.hpp"
#include "train/report.hpp"

namespace convlab::train {

struct TrainConfig {
  std::string net = "alexnet";
  int batch = 8;
  int iters = 3;    // timed iterations
  int warmup = 1;   // untimed iterations before them (they still train)
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
  // Relative agreement asked of each policy's final loss against the first
  // policy that ran (see trainer.cpp for why 1e-3).
  double loss_rtol = 1e-3;
};

// default, get, find, and fixed:<first algorithm of each family on `device`>
// plus the named baselines when registered: on the CPU cpu.im2col_openblas and
// cpu.onednn_auto, on CUDA cuda.im2col_cublas and cuDNN's usual forward default
// cudnn.implicit_precomp_gemm (directions it lacks fall back to default).
std::vector<std::string> default_policies(DeviceKind device = DeviceKind::cpu);

struct LayerResult {
  std::string name, kind;
  std::string problem;                 // conv layers: benchdnn form
  LayerTime median;                    // per component, median over timed iterations
  std::string algo[3], why[3];         // conv layers, per direction (indexed by direction_index())
  double tuning_seconds[3] = {0, 0, 0};
  bool input_grad = true;              // false for the first layer when skipped
};

struct PolicyResult {
  std::string policy;
  bool ran = false;
  std::string skipped;                 // why not, when !ran
  double choose_seconds = 0;           // wall time of all choices (find: the tuning cost)
  size_t workspace_bytes = 0;
  std::vector<double> iter_seconds;    // timed iterations
  double iter_median = 0;
  double loss_median_update = 0, loss_median_loss = 0;  // SGD update and loss layer, medians
  std::vector<double> losses;          // every iteration, warm-up included
  std::vector<LayerResult> layers;
  double first_layer_dx_seconds = 0;   // what the skipped dL/dimage would have cost
};

struct TrainReport {
  TrainConfig config;
  std::string device, data;
  int64_t params = 0;
  std::vector<PolicyResult> policies;
  long peak_rss_kb = 0;
  double wall_seconds = 0;
  // The reference policy for speedups and attribution: `default` when it ran, else the first that ran.
  int baseline() const;
};

// Checks cfg's policies (default_policies() when empty) before any work: bad
// policy text throws Error; returns "" when at least one policy can run on
// cfg.device, else one line naming each policy and why it cannot
// (policy_unavailable_reason). run_training throws that line as an Error.
std::string why_no_policy_can_run(const TrainConfig& cfg);

// Policies that cannot run (policy_unavailable_reason, or no algorithm within
// their constraints for some layer) are skipped and recorded with the reason.
TrainReport run_training(const TrainConfig& cfg, const std::function<void(const std::string&)>& log = {});

// Iterations after which find's choosing cost is repaid by its faster iterations
// against `other` (find's cost minus other's, divided by the time saved per
// iteration); negative when find is not faster.
double break_even_iterations(const PolicyResult& find, const PolicyResult& other);

}  // namespace convlab::train
