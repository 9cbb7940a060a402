// cuda.winograd_f2x3: fused Winograd F(2x2, 3x3), input and output transforms
// in shared memory / registers inside one kernel per direction
// (kernels/cuda/winograd/winograd_f2x3); fwd and bwd-data transform the filters
// once per call into the workspace first.
// cuda.winograd_f4x3 / cuda.winograd_f6x3: non-fused F(m x m, 3 x 3), m = 4, 6:
// transform kernels (kernels/cuda/winograd/winograd_nonfused) around the
// hand-written SGEMM batched over the alpha^2 transformed-domain points x groups
// (36 or 64 points), as cpu.winograd_f* do on the CPU:
//   fwd        U = G g G^T, V = B^T d B, M[xi] = U[xi] V[xi], Y = A^T M A
//   bwd-data   the fwd pipeline on diff_dst with the rotated, channel-swapped
//              filter and padding 2 - pad
//   bwd-filter Y' = A dY A^T, V = B^T d B, M[xi] = Y'[xi] V[xi]^T, dW = G^T M G
// Both: 3x3 filters, stride 1, dilation 1, padding <= 2, groups; all directions.
// Points and matrices: kernels/winograd_math.hpp (the CPU's too).
#pragma once
#include "algorithms/algorithm.hpp"

namespace convlab {

class CudaWinogradF2x3 final : public NamedAlgorithm {
 public:
  CudaWinogradF2x3();
  Support supports(const ConvProblem& p, Direction dir) const override;
  size_t workspace_bytes(const ConvProblem& p, Direction dir) const override;
  void run(const ConvProblem& p, Direction dir, const ConvBuffers& buf, void* workspace,
           const ExecContext& ctx) const override;
  NominalCost nominal_cost(const ConvProblem& p, Direction dir) const override { return nominal_winograd(p, dir, 2); }
  Tolerance tolerance(const ConvProblem& p, Direction dir) const override;
};

class CudaWinograd final : public NamedAlgorithm {
 public:
  explicit CudaWinograd(int m);  // 4 or 6
  Support supports(const ConvProblem& p, Direction dir) const override;
  size_t workspace_bytes(const ConvProblem& p, Direction dir) const override;
  void run(const ConvProblem& p, Direction dir, const ConvBuffers& buf, void* workspace,
           const ExecContext& ctx) const override;
  NominalCost nominal_cost(const ConvProblem& p, Direction dir) const override { return nominal_winograd(p, dir, m_); }
  Tolerance tolerance(const ConvProblem& p, Direction dir) const override;

  int tile() const { return m_; }

 private:
  int m_;
};

}  // namespace convlab
