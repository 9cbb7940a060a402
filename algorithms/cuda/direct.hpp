// cuda.direct: direct convolution with shared-memory input / diff_dst tiles
// (kernels/cuda/direct). Any filter, stride, padding, dilation, groups, as long
// as the tile window fits in 48 KiB of shared memory.
#pragma once
#include "algorithms/algorithm.hpp"

namespace convlab {

class CudaDirect final : public Algorithm {
 public:
  std::string_view name() const override { return "cuda.direct"; }
  DeviceKind device() const override { return DeviceKind::cuda; }
  std::string_view family() const override { return "direct"; }
  std::string_view description() const override {
    return "direct convolution: 8x16-pixel tiles x 8 channels per block, input window + filter slice in shared "
           "memory (fwd, bwd-data gather); one thread per weight for bwd-filter";
  }
  Support supports(const ConvProblem& p, Direction dir) const override;
  void run(const ConvProblem& p, Direction dir, const ConvBuffers& buf, void* workspace,
           const ExecContext& ctx) const override;
};

}  // namespace convlab
