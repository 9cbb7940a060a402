// cuda.direct: direct convolution with shared-memory input / diff_dst tiles
// (kernels/cuda/direct). Any filter, stride, padding, dilation, groups, as long
// as the tile window fits in 48 KiB of shared memory (fwd, bwd-data).
//
// bwd-filter splits its reduction over the N*P*Q output positions into chunks of
// consecutive positions, so that a launch has about kCudaDirectFillBlocks blocks
// (a few waves on a 132-SM GPU) where a small layer's weight tiles alone would
// leave most SMs idle; each chunk is at least kCudaDirectMinChunk positions.
// The chunks' partial sums (chunks, K, Cg, R, S) go to the workspace (at most
// kCudaDirectPartialFloats) and are added in chunk order (sum_partials): the
// result depends on the shape only, bit for bit, never on the run or the device.
#pragma once
#include <cstdint>

#include "algorithms/algorithm.hpp"

namespace convlab {

inline constexpr int64_t kCudaDirectFillBlocks = 132 * 8;
inline constexpr int64_t kCudaDirectMinChunk = 256;
inline constexpr int64_t kCudaDirectPartialFloats = int64_t(16) << 20;

struct CudaDirectFilterPlan {
  int chunks = 1;              // >= 1; 1 = diff_wei written directly, no workspace
  int64_t chunk_len = 1;       // positions per chunk, a multiple of the kernel's step (the last chunk may be shorter)
  int64_t partial_floats = 0;  // workspace: chunks * K*Cg*R*S when chunks > 1
};
// chunks 0: the plan above; otherwise about that many chunks (tests; fewer where
// chunks of a whole step each would not all be needed).
CudaDirectFilterPlan plan_cuda_direct_bwd_filter(const ConvShape& sh, int chunks = 0);

class CudaDirect final : public NamedAlgorithm {
 public:
  CudaDirect();
  Support supports(const ConvProblem& p, Direction dir) const override;
  size_t workspace_bytes(const ConvProblem& p, Direction dir) const override;
  void run(const ConvProblem& p, Direction dir, const ConvBuffers& buf, void* workspace,
           const ExecContext& ctx) const override;
  NominalCost nominal_cost(const ConvProblem& p, Direction dir) const override { return nominal_direct(p, dir); }
  // bwd-filter with plan_cuda_direct_bwd_filter(sh, chunks): the workspace must
  // hold its partial_floats.
  void run_bwd_filter_chunked(const ConvProblem& p, const ConvBuffers& buf, float* ws, void* stream,
                              int chunks) const;
};

}  // namespace convlab
