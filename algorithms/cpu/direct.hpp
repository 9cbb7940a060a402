// cpu.direct: direct convolution over a blocked channel layout (NCHW16c
// activations, OIhw16i16o weights on AVX-512; 8-wide on AVX2 and portable),
// register-blocked over output channels (one vector) and output pixels (up to
// 28 in registers). All three directions; layout conversions run inside run()
// in the workspace. See algorithms/cpu/direct.cpp for the loop structure.
#pragma once
#include "algorithms/algorithm.hpp"

namespace convlab {

class CpuDirect final : public NamedAlgorithm {
 public:
  CpuDirect()
      : NamedAlgorithm("cpu.direct", DeviceKind::cpu, "direct",
                       "blocked-layout (NCHW16c) register-blocked direct convolution, phase-split strided "
                       "backward-data, tile-owned deterministic backward-filter") {}
  Support supports(const ConvProblem& p, Direction dir) const override;
  size_t workspace_bytes(const ConvProblem& p, Direction dir) const override;
  void run(const ConvProblem& p, Direction dir, const ConvBuffers& buf, void* workspace,
           const ExecContext& ctx) const override;
  CostPhases cost_phases(const ConvProblem& p, Direction dir) const override;
  NominalCost nominal_cost(const ConvProblem& p, Direction dir) const override;
};

// Tests only: false runs backward-filter with few input channels on the channel-blocked path too
// (true: pixels in the lanes, direct_wgrad_pixels.hpp). Not thread-safe.
void set_direct_pixel_wgrad(bool on);

}  // namespace convlab
