// cuda.direct: direct convolution with shared-memory input / diff_dst tiles
// (kernels/cuda/direct). Any filter, stride, padding, dilation, groups, as long
// as the tile window fits in 48 KiB of shared memory.
#pragma once
#include "algorithms/algorithm.hpp"

namespace convlab {

class CudaDirect final : public NamedAlgorithm {
 public:
  CudaDirect();
  Support supports(const ConvProblem& p, Direction dir) const override;
  void run(const ConvProblem& p, Direction dir, const ConvBuffers& buf, void* workspace,
           const ExecContext& ctx) const override;
};

}  // namespace convlab
