#include "algorithms/cuda/direct.hpp"

#include <string>

#include "kernels/cuda/direct/direct.hpp"

namespace convlab {

CudaDirect::CudaDirect()
    : NamedAlgorithm("cuda.direct", DeviceKind::cuda, "direct",
                     "direct convolution: 8x16-pixel tiles x 8 channels per block, input window + filter slice in "
                     "shared memory (fwd; bwd-data gather per stride phase, over its taps only); one thread per "
                     "weight for bwd-filter") {}

Support CudaDirect::supports(const ConvProblem& p, Direction dir) const {
  const ConvShape sh = to_shape(p);
  const size_t need = dir == Direction::fwd        ? cuda::direct_fwd_smem_bytes(sh)
                      : dir == Direction::bwd_data ? cuda::direct_bwd_data_smem_bytes(sh)
                                                   : 0;
  if (need > cuda::kDirectSmemLimit)
    return Support::no("tile window needs " + std::to_string(need / 1024) +
                       " KiB of shared memory (> 48 KiB: filter/dilation too large)");
  return Support::yes();
}

void CudaDirect::run(const ConvProblem& p, Direction dir, const ConvBuffers& buf, void*,
                     const ExecContext& ctx) const {
  const ConvShape sh = to_shape(p);
  switch (dir) {
    case Direction::fwd: cuda::direct_conv_fwd(sh, buf.src, buf.wei, buf.dst, ctx.stream); break;
    case Direction::bwd_data: cuda::direct_conv_bwd_data(sh, buf.dst, buf.wei, buf.src, ctx.stream); break;
    case Direction::bwd_filter: cuda::direct_conv_bwd_filter(sh, buf.src, buf.dst, buf.wei, ctx.stream); break;
  }
}

}  // namespace convlab
