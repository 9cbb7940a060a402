// cuda.implicit_gemm: the three convolution GEMMs with the column matrix never
// materialised: 64x64 block tiles whose loaders compute tensor addresses (and
// padding zeros) on the fly (kernels/cuda/implicit_gemm). No workspace.
#pragma once
#include "algorithms/algorithm.hpp"

namespace convlab {

class CudaImplicitGemm final : public NamedAlgorithm {
 public:
  CudaImplicitGemm();
  Support supports(const ConvProblem& p, Direction dir) const override;
  void run(const ConvProblem& p, Direction dir, const ConvBuffers& buf, void* workspace,
           const ExecContext& ctx) const override;
};

}  // namespace convlab
