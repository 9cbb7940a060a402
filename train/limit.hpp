// The napkin limit of one training step on this machine: what the step would
// take if every pass ran at the machine's measured limits, nothing overlapping.
// Each pass is bound by its arithmetic at the measured FMA peak or by its
// compulsory bytes at the measured memory bandwidth, whichever is slower:
//
//   seconds = sum over passes of max(flops / peak, bytes / bandwidth)
//           + other_bytes / bandwidth
//
//   passes       every convolution and fully connected layer, per direction:
//                forward, backward-filter and backward-data -- the first
//                layer's backward-data only when its input gradient is
//                computed (it is skipped by default). flops = the direct
//                algorithm's 2 N K (C/g) R S P Q (fc: 2 N in out); bytes = the
//                three tensors the direction reads and writes once (fwd: src,
//                wei, dst; bwd-data: diff_dst, wei, diff_src; bwd-filter: src,
//                diff_dst, diff_wei), 4 bytes an element. At small batch a
//                fully connected layer is bound by its weights, not its FLOPs.
//   other_bytes  every other layer's Layer::bytes_moved forward and backward,
//                the fused conv epilogues (bias + ReLU: 8 bytes per output
//                element forward, 12 backward with the ReLU, 4 without), the
//                loss (logits in, gradient out: 8 bytes per logit) and the SGD
//                update (20 bytes per parameter)
//
// It is a bound for the direct algorithms, not for the step: Winograd and FFT
// do fewer multiplications than the passes count, so a step can go below it.
// Every policy is reported as a multiple of it (x_limit = iteration / seconds).
#pragma once
#include <vector>

#include "net/net.hpp"

namespace convlab::train {

// One direction of a conv or fc layer: its direct-algorithm FLOPs and compulsory bytes.
struct Pass {
  double flops = 0, bytes = 0;
};

struct StepWork {
  double conv_flops = 0, fc_flops = 0, other_bytes = 0;
  std::vector<Pass> passes;  // every conv and fc direction of the step
};

// What one training step of `net` computes and moves (see above).
StepWork step_work(const Net& net);

// The passes of a conv or fc layer's step (none for the others); `input_grad` =
// whether its backward computes dx.
std::vector<Pass> layer_passes(const Layer& layer, bool input_grad);
// The bytes of one layer's forward and backward outside its passes, as the
// limit counts them (a conv layer: its epilogue only; fc: 0).
double layer_bytes(const Layer& layer, bool input_grad);
// The direct-algorithm FLOPs of a conv or fc layer's step (0 for the others).
double layer_flops(const Layer& layer, bool input_grad);

struct StepLimit {
  double seconds = 0;
  double conv_flops = 0, fc_flops = 0, other_bytes = 0;
  double peak_gflops = 0, bandwidth_gbs = 0;
  int threads = 0;
  // The passes' part of `seconds`, split by what binds them, and how many are bound by bytes.
  double compute_bound_seconds = 0, memory_bound_seconds = 0;
  int memory_bound_passes = 0, passes = 0;
  // Seconds at the limit of one layer's step (its passes, each the slower of
  // arithmetic and bytes, plus its other bytes at the bandwidth).
  double layer_seconds(const Layer& layer, bool input_grad) const;
  // One pass at the limit: max(flops / peak, bytes / bandwidth).
  double pass_seconds(const Pass& p) const;
};

StepLimit step_limit(const StepWork& work, double peak_gflops, double bandwidth_gbs, int threads);

// Measures the peak (core/peak.hpp measure_fma_peak, 0.2 s per try) and the
// bandwidth (measure_stream_bandwidth) on `threads` threads: about 1.5 s.
StepLimit measure_step_limit(const Net& net, int threads);

}  // namespace convlab::train
