// cuda.implicit_gemm: the three convolution GEMMs with the column matrix never
// materialised: 64x64 block tiles whose loaders compute tensor addresses (and
// padding zeros) on the fly (kernels/cuda/implicit_gemm). No workspace.
#pragma once
#include "algorithms/algorithm.hpp"

namespace convlab {

class CudaImplicitGemm final : public Algorithm {
 public:
  std::string_view name() const override { return "cuda.implicit_gemm"; }
  DeviceKind device() const override { return DeviceKind::cuda; }
  std::string_view family() const override { return "implicit_gemm"; }
  std::string_view description() const override {
    return "implicit GEMM: 64x64x16 block tiles, 4x4 per thread, gathering loaders (no column matrix), groups "
           "as grid z";
  }
  Support supports(const ConvProblem& p, Direction dir) const override;
  void run(const ConvProblem& p, Direction dir, const ConvBuffers& buf, void* workspace,
           const ExecContext& ctx) const override;
};

}  // namespace convlab
