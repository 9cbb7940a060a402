#include "algorithms/cuda/implicit_gemm.hpp"

#include <climits>

#include "kernels/cuda/implicit_gemm/implicit_gemm.hpp"

namespace convlab {

CudaImplicitGemm::CudaImplicitGemm()
    : NamedAlgorithm("cuda.implicit_gemm", DeviceKind::cuda, "implicit_gemm",
                     "implicit GEMM: 64x64x16 block tiles, 4x4 per thread, gathering loaders (no column matrix), "
                     "groups as grid z") {}

Support CudaImplicitGemm::supports(const ConvProblem& p, Direction) const {
  // GEMM indices are 32-bit: N*P*Q, N*H*W and the tensors must stay below 2^31.
  if (p.src_elems() > INT_MAX || p.dst_elems() > INT_MAX)
    return Support::no("tensors over 2^31 elements (32-bit GEMM indices)");
  return Support::yes();
}

void CudaImplicitGemm::run(const ConvProblem& p, Direction dir, const ConvBuffers& buf, void*,
                           const ExecContext& ctx) const {
  const ConvShape sh = to_shape(p);
  switch (dir) {
    case Direction::fwd: cuda::implicit_gemm_conv_fwd(sh, buf.src, buf.wei, buf.dst, ctx.stream); break;
    case Direction::bwd_data: cuda::implicit_gemm_conv_bwd_data(sh, buf.dst, buf.wei, buf.src, ctx.stream); break;
    case Direction::bwd_filter:
      cuda::implicit_gemm_conv_bwd_filter(sh, buf.src, buf.dst, buf.wei, ctx.stream);
      break;
  }
}

}  // namespace convlab
