// cuda.winograd_f2x3 (fused: transforms in shared memory / registers inside one
// kernel per direction) and cuda.winograd_f4x3 (non-fused: transform kernels +
// the hand-written batched SGEMM over the 36 transformed-domain points).
// 3x3 filters, stride 1, dilation 1, padding <= 2, groups; all directions.
#pragma once
#include "algorithms/algorithm.hpp"

namespace convlab {

class CudaWinogradF2x3 final : public Algorithm {
 public:
  std::string_view name() const override { return "cuda.winograd_f2x3"; }
  DeviceKind device() const override { return DeviceKind::cuda; }
  std::string_view family() const override { return "winograd"; }
  std::string_view description() const override {
    return "fused Winograd F(2x2,3x3): 32 tiles x 16 channels per block, input/filter transforms in shared "
           "memory, output transform in registers; bwd-data via the rotated filter, bwd-filter via F(3x3,2x2)";
  }
  Support supports(const ConvProblem& p, Direction dir) const override;
  void run(const ConvProblem& p, Direction dir, const ConvBuffers& buf, void* workspace,
           const ExecContext& ctx) const override;
  Tolerance tolerance(const ConvProblem& p, Direction dir) const override;
};

class CudaWinogradF4x3 final : public Algorithm {
 public:
  std::string_view name() const override { return "cuda.winograd_f4x3"; }
  DeviceKind device() const override { return DeviceKind::cuda; }
  std::string_view family() const override { return "winograd"; }
  std::string_view description() const override {
    return "non-fused Winograd F(4x4,3x3): filter/input/output transform kernels around the hand-written SGEMM "
           "batched over 36 points x groups; bwd-filter via A dY A^T and G^T M G";
  }
  Support supports(const ConvProblem& p, Direction dir) const override;
  size_t workspace_bytes(const ConvProblem& p, Direction dir) const override;
  void run(const ConvProblem& p, Direction dir, const ConvBuffers& buf, void* workspace,
           const ExecContext& ctx) const override;
  Tolerance tolerance(const ConvProblem& p, Direction dir) const override;
};

}  // namespace convlab
