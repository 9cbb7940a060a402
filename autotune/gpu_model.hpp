// The GPU cost model: a hand-written CUDA kernel's time on a GPU that is not
// here, from what the SIMT emulator's counting build counts for each launch
// (`simt_counts`, kernels/cuda/simt/counters.hpp) and the card's published
// limits. Every time it gives is *modelled*, never measured.
//
// Per launch, four floors (seconds):
//   fma    warp FMA instructions / (SMs x 4 per clock)                 fp32 pipes
//   sched  (memory + FMA + MMA warp instructions) / (SMs x 4 per clock) issue
//   smem   shared-memory wavefronts / (SMs x 1 per clock)              banks
//   l2     global sectors x 32 B / L2 bandwidth                        L1 <-> L2
// each divided by an efficiency fitted on one card's measured rows (the same
// four for every kernel), and a fifth, not fitted, for the tensor cores:
//   tensor m16n8k8 TF32 MMAs x 1024 multiply-adds / (SMs x 1024 per clock)
// A launch costs kLaunchSeconds + the largest of them; an algorithm, the sum of
// its launches. scripts/gpu_model.py fits the efficiencies and reports the fit
// with each algorithm left out (docs/results/*-h100/model-h100.md).
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace convlab {

struct GpuCard {
  std::string_view name;   // "h100"
  std::string_view label;  // "NVIDIA H100 SXM (132 SMs, 1.98 GHz, L2 5.5 TB/s)"
  int sms = 0;
  double clock_hz = 0, l2_bytes_per_s = 0;
  double eff_fma = 1, eff_sched = 1, eff_smem = 1, eff_l2 = 1;
  std::string_view fitted_on;  // where the efficiencies come from
};

// The cards the model knows; throws Error naming them for any other name.
const GpuCard& gpu_card(std::string_view name);
std::string gpu_card_names();  // "h100, h200"

// One launch's counts, as simt_counts --csv prints them.
struct LaunchCounts {
  std::string kernel;
  double fma = 0, warp = 0, mma = 0, smem_wavefronts = 0, sectors = 0;
};

// simt_counts' CSV (a header line, then one row per launch); throws Error with
// one line on anything else.
std::vector<LaunchCounts> parse_launch_counts(const std::string& csv);

constexpr double kLaunchSeconds = 3e-6;

struct ModelledTime {
  double seconds = 0;
  std::string bound;  // the floor that sets the longest launch: fma, sched, smem, l2 or tensor
  std::string kernel; // that launch's kernel
};

ModelledTime modelled_time(const std::vector<LaunchCounts>& launches, const GpuCard& card);

}  // namespace convlab
