// cpu.winograd_f2x3 / cpu.winograd_f4x3 / cpu.winograd_f6x3: non-fused Winograd
// F(m x m, 3 x 3) on the CPU, all three directions (kernels/cpu/winograd).
//   fwd        tiles of dst; input transform -> one GEMM per transformed element
//              (alpha^2 of them, over input channels) -> output transform.
//   bwd-data   the same with diff_dst as input and the rotated, transposed filter
//              (pad' = 2 - pad, may be negative: the transform crops).
//   bwd-filter Winograd for the filter: dW = GT [ (A dy AT) .* (BT x B) ] G, the
//              alpha^2 GEMMs reduce over N x tiles.
// The batch x tiles axis is processed in chunks (tc tiles) so the transformed
// buffers stay a bounded, reported workspace.
#pragma once
#include "algorithms/algorithm.hpp"

namespace convlab {

class CpuWinograd final : public NamedAlgorithm {
 public:
  explicit CpuWinograd(int m);
  Support supports(const ConvProblem& p, Direction dir) const override;
  size_t workspace_bytes(const ConvProblem& p, Direction dir) const override;
  void run(const ConvProblem& p, Direction dir, const ConvBuffers& buf, void* workspace,
           const ExecContext& ctx) const override;
  CostPhases cost_phases(const ConvProblem& p, Direction dir) const override;
  NominalCost nominal_cost(const ConvProblem& p, Direction dir) const override;
  bool probe_1x1() const override { return false; }
  Tolerance tolerance(const ConvProblem& p, Direction dir) const override;

  int tile() const { return m_; }

 private:
  int m_;
};

}  // namespace convlab
