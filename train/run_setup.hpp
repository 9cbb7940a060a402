// Internal to train/: what run_training and the checks before it (train/trainer.hpp:
// default_policies, check_expectations, why_no_policy_can_run, why_nets_do_not_fit)
// share about a TrainConfig before any training.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include "autotune/policy.hpp"
#include "net/net.hpp"
#include "train/trainer.hpp"

namespace convlab::train {

// The options of cfg's nets (a rank's batch and sample offset are set by the caller).
NetOptions net_options(const TrainConfig& cfg);
// Policy::parse of each name (bad text: Error).
std::vector<Policy> parse_policies(const std::vector<std::string>& names);
// Whether each policy can run on `device` (policy_unavailable_reason is empty).
std::vector<bool> runnable_policies(const std::vector<Policy>& policies, DeviceKind device);
// The host bytes a run holds besides its nets: every round's batch (images and labels, the
// global batch: each rank draws it whole before taking its slice) and an .npy source's arrays.
size_t data_bytes(const TrainConfig& cfg, const Shape4& input);
// The one net every run builds first (the memory plan measures it), its allocation failures
// naming the net: "alexnet at batch 1500: conv1's output: cannot allocate ...".
Net build_probe(const TrainConfig& cfg, const NetOptions& no);

}  // namespace convlab::train
