// How the trainer lays out a comparison before it runs one: the order of the
// policies in every round, and whether one network per policy fits in memory.
//
// Rounds. Every policy trains its own copy of the network (same initial
// weights, same batches); round r runs one iteration of each, batch r for all.
// The order inside a round follows a Williams Latin square: row 0 is
//   0, 1, P-1, 2, P-2, 3, ...
// row i adds i (mod P) to every entry, and for odd P the rows P..2P-1 are rows
// 0..P-1 reversed. Round r uses row r mod R (R = P for even P, 2P for odd P).
// Over every R consecutive rounds each policy runs in each position equally
// often and directly after each other policy equally often, so neither "runs
// first in a round" nor "runs after the policy that left OpenBLAS's threads
// spinning" favours one policy. Warm-up rounds and timed rounds each
// start at row 0.
//
// Memory. One net per policy multiplies what a run holds by the number of
// policies; plan_memory estimates each net's bytes (activations, gradients,
// parameters with their gradient and momentum, the layers' saved state, and
// the convolution workspace: exact for default / fixed:, for the measuring
// policies the largest any candidate they may pick needs), adds the batches
// the trainer holds and, when a policy measures, the most find holds at once
// on any layer (autotune/find.hpp find_memory), and the run is refused before
// any long work when the sum exceeds 80 % of what the device has available
// (core/device.hpp available_memory_bytes, kMemoryMargin) -- read before the
// first net was allocated: MemAvailable and a cgroup still count a net that was
// allocated but never touched as free, so adding it back would count it twice.
#pragma once
#include <string>
#include <vector>

#include "autotune/policy.hpp"
#include "net/net.hpp"

namespace convlab::train {

// The policy indices 0..P-1 in the order round `round` runs them (see above).
std::vector<int> round_order(int policies, int round);

// What a run may use, read before its first net is allocated (see above).
struct AvailableMemory {
  size_t host = 0, device = 0;  // 0: nothing could be read
  std::string host_source, device_source;
};
AvailableMemory read_available_memory(DeviceKind device);

struct MemoryPlan {
  std::vector<size_t> per_net;      // bytes per policy's net (0: the policy cannot run here)
  size_t data = 0;                  // host: the batches the trainer holds (and an .npy source's arrays)
  size_t find_host = 0, find_device = 0;  // the most find holds at once on any layer (0: no policy measures)
  size_t host_total = 0;            // every net's host bytes + data + find_host
  size_t device_total = 0;          // every net's device bytes, + find_device on CUDA (on the CPU: the nets alone)
  size_t host_available = 0, device_available = 0;
  std::string host_source, device_source;  // where the available figures came from
  bool on_gpu = false;
  // "" when the nets fit; else one line saying what is needed, what is available and what to do.
  std::string refusal;
};

// The workspace bytes `policy` may need on `net`: exact for default and fixed:
// (their choice is instant), else the largest any find candidate within the
// policy's workspace limit needs, over every conv layer and direction.
size_t workspace_bound(const Net& net, const Policy& policy);

// `probe` is one built net of the run (its buffers are measured, its workspace
// replaced by each policy's bound); `policies` the run's policies, runnable[i]
// false for those skipped before any net is built; `available` read before the
// probe was built; `data_bytes` what the run holds besides its nets on the host.
MemoryPlan plan_memory(const Net& probe, const std::vector<Policy>& policies, const std::vector<bool>& runnable,
                       const AvailableMemory& available, size_t data_bytes = 0);

}  // namespace convlab::train
