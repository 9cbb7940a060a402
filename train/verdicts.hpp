// Internal to train/: the verdicts run_training adds once the rounds are done
// (the public ones, judge_losses, speedup_verdict, stopped_line and
// break_even_iterations, are declared in train/trainer.hpp).
#pragma once
#include <vector>

#include "net/data.hpp"
#include "net/net.hpp"
#include "train/trainer.hpp"

namespace convlab::train {

// Every policy's speedup over the baseline with its interval over paired rounds,
// the equivalence margin (TrainReport::margin) and each verdict.
void add_speedups(TrainReport& rep);

// The drift bound (TrainReport::drift) and every policy's loss against it
// (judge_losses). base_net: the baseline's net, retrained as the control that
// measures the growth (null: the assumed growth); `any`: a net of the run.
void add_drift(TrainReport& rep, Net* base_net, const std::vector<Batch>& batches, const TrainConfig& cfg,
               const Net& any);

}  // namespace convlab::train
