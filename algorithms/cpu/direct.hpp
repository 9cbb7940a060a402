// cpu.direct: direct convolution over a blocked channel layout (NCHW16c
// activations, OIhw16i16o weights on AVX-512; 8-wide on AVX2 and portable),
// register-blocked over output channels (one vector) and output pixels (up to
// 28 in registers). All three directions; layout conversions run inside run()
// in the workspace. See algorithms/cpu/direct.cpp for the loop structure.
#pragma once
#include "algorithms/algorithm.hpp"

namespace convlab {

// The phases of a direct convolution over blocked layouts (algorithms/cpu/direct_cost.cpp): the FMAs
// with the lanes wasted on fewer channels than a vector, and the layout copies. pixel_bwd_data: the
// kernel vectorises bwd-data over pixels when the channels fill under half a vector (cpu.direct's).
CostPhases direct_cost_phases(const ConvProblem& p, Direction dir, bool pixel_bwd_data);

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

}  // namespace convlab
