// The napkin limit of one training step on this machine (issue 19 item 5): what
// the step would take if every convolution and fully connected layer ran its
// direct-algorithm FLOPs at the measured FMA peak and every other pass moved its
// bytes at the measured memory bandwidth, nothing overlapping:
//
//   seconds = (conv_flops + fc_flops) / peak + other_bytes / bandwidth
//
//   conv_flops   2 N K (C/g) R S P Q per direction: forward, backward-filter
//                and backward-data -- the first layer's backward-data only when
//                its input gradient is computed (it is skipped by default)
//   fc_flops     2 N in out per direction, the same three (and the same rule)
//   other_bytes  every other layer's Layer::bytes_moved forward and backward,
//                the fused conv epilogues (bias + ReLU: 8 bytes per output
//                element forward, 12 backward with the ReLU, 4 without), the
//                loss (logits in, gradient out: 8 bytes per logit) and the SGD
//                update (20 bytes per parameter)
//
// It is a bound for the direct algorithms, not for the step: Winograd and FFT
// do fewer multiplications than conv_flops counts, so a step can go below it.
// Every policy is reported as a multiple of it (x_limit = iteration / seconds).
#pragma once
#include "train/net.hpp"

namespace convlab::train {

struct StepWork {
  double conv_flops = 0, fc_flops = 0, other_bytes = 0;
};

// What one training step of `net` computes and moves (see above).
StepWork step_work(const Net& net);

// The compulsory bytes of one layer's forward and backward together, as the
// limit counts them (a conv layer: its epilogue only; fc: 0 -- their bound is
// arithmetic); `input_grad` = whether its backward computes dx.
double layer_bytes(const Layer& layer, bool input_grad);
// The direct-algorithm FLOPs of a conv or fc layer's step (0 for the others).
double layer_flops(const Layer& layer, bool input_grad);

struct StepLimit {
  double seconds = 0;
  double conv_flops = 0, fc_flops = 0, other_bytes = 0;
  double peak_gflops = 0, bandwidth_gbs = 0;
  int threads = 0;
  // Seconds at the limit of one layer's step (its FLOPs at the peak plus its bytes at the bandwidth).
  double layer_seconds(const Layer& layer, bool input_grad) const;
};

StepLimit step_limit(const StepWork& work, double peak_gflops, double bandwidth_gbs, int threads);

// Measures the peak (core/peak.hpp measure_fma_peak, 0.2 s per try) and the
// bandwidth (measure_stream_bandwidth) on `threads` threads: about 1.5 s.
StepLimit measure_step_limit(const Net& net, int threads);

}  // namespace convlab::train
