// cpu.reference: the fp64 oracle (kernels/ref) exposed as an algorithm, so the
// CLI and the tester can run it like any other. Never an autotune candidate.
#pragma once
#include "algorithms/algorithm.hpp"

namespace convlab {

class CpuReference final : public NamedAlgorithm {
 public:
  CpuReference()
      : NamedAlgorithm("cpu.reference", DeviceKind::cpu, "reference",
                       "naive loops with fp64 accumulation (the oracle every algorithm is checked against)") {}
  Support supports(const ConvProblem&, Direction) const override { return Support::yes(); }
  size_t workspace_bytes(const ConvProblem& p, Direction dir) const override;
  void run(const ConvProblem& p, Direction dir, const ConvBuffers& buf, void* workspace,
           const ExecContext& ctx) const override;
  bool is_oracle() const override { return true; }
  // Priced as naive loops (20% of the FMA peak), the three tensors moved once.
  CostPhases cost_phases(const ConvProblem& p, Direction dir) const override;
  NominalCost nominal_cost(const ConvProblem& p, Direction dir) const override;
  // Rounding the fp64 result to fp32 is the only error: half an ulp.
  Tolerance tolerance(const ConvProblem&, Direction) const override {
    return {double(FLT_EPSILON) / 2, 0, "fp64 accumulation, one final rounding"};
  }
};

}  // namespace convlab
