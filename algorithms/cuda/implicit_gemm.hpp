// cuda.implicit_gemm: the three convolution GEMMs with the column matrix never
// materialised: block tiles chosen from M whose loaders gather through a table
// of precomputed row offsets (kernels/cuda/implicit_gemm); strided backward-data
// as one dense GEMM per stride phase; backward-filter splits a long reduction.
// Workspace: the row table (16 bytes per reduction row), then backward-filter's
// partial sums (one diff_wei per split) where it splits.
//
// cuda.implicit_gemm_tf32: the same kernels with each shared-memory slab
// element rounded to TF32 and the tile multiplied on the tensor cores
// (mma.sync m16n8k8, fp32 accumulators). math() "tf32": chosen only when asked.
#pragma once
#include "algorithms/algorithm.hpp"

namespace convlab {

class CudaImplicitGemm final : public NamedAlgorithm {
 public:
  explicit CudaImplicitGemm(bool tf32 = false);
  std::string_view math() const override { return tf32_ ? "tf32" : "fp32"; }
  Tolerance tolerance(const ConvProblem& p, Direction dir) const override;
  Support supports(const ConvProblem& p, Direction dir) const override;
  size_t workspace_bytes(const ConvProblem& p, Direction dir) const override;
  void run(const ConvProblem& p, Direction dir, const ConvBuffers& buf, void* workspace,
           const ExecContext& ctx) const override;
  NominalCost nominal_cost(const ConvProblem& p, Direction) const override;

 private:
  bool tf32_;
};

}  // namespace convlab
