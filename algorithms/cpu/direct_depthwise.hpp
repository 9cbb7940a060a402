// cpu.direct_depthwise: the direct family's depthwise path (groups == C == K):
// channels in vector lanes (bands of rows converted to a channel-blocked
// layout in per-thread buffers, nChw8c / nChw16c), the R x S window's weights
// one vector per tap, all three directions; small stride-1 images with pixels in the lanes of
// the plain layout instead (no conversion). See
// algorithms/cpu/direct_depthwise.cpp for the loop structure.
#pragma once
#include "algorithms/algorithm.hpp"

namespace convlab {

class CpuDirectDepthwise final : public NamedAlgorithm {
 public:
  CpuDirectDepthwise()
      : NamedAlgorithm("cpu.direct_depthwise", DeviceKind::cpu, "direct",
                       "depthwise direct convolution, channels in vector lanes, row bands blocked and "
                       "unblocked in cache, deterministic backward-filter") {}
  Support supports(const ConvProblem& p, Direction dir) const override;
  size_t workspace_bytes(const ConvProblem& p, Direction dir) const override;
  void run(const ConvProblem& p, Direction dir, const ConvBuffers& buf, void* workspace,
           const ExecContext& ctx) const override;
  CostPhases cost_phases(const ConvProblem& p, Direction dir) const override;
  NominalCost nominal_cost(const ConvProblem& p, Direction dir) const override;
};

// Tests only: false sends every problem down the channel-blocked path (true: the plane path
// where it applies). Not thread-safe.
void set_depthwise_plane_path(bool on);

}  // namespace convlab
