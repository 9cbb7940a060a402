#include "algorithms/cuda/implicit_gemm.hpp"

#include <climits>

#include "kernels/cuda/implicit_gemm/implicit_gemm.hpp"

namespace convlab {

CudaImplicitGemm::CudaImplicitGemm()
    : NamedAlgorithm("cuda.implicit_gemm", DeviceKind::cuda, "implicit_gemm",
                     "implicit GEMM with precomputed gather offsets (a row table in the workspace, no division in "
                     "the K loop): 64x64, 32x64, 16x128 or 4x128 block tiles chosen from M, 4x4 (4x1) per "
                     "thread, double-buffered shared memory; strided backward-data as one dense GEMM per stride "
                     "phase, the phases in one launch (wei^T gathered dense once, phases no tap reaches zero-filled in "
                     "one pass); "
                     "backward-filter splits K (partial sums in the workspace) when its tiles would not fill the "
                     "GPU; groups as grid z"){}

Support CudaImplicitGemm::supports(const ConvProblem& p, Direction) const {
  // Gather offsets are 32-bit and may point up to a padding margin outside a
  // tensor before the bounds test rejects them: every tensor, padded, stays
  // below 2^30 elements.
  const int64_t lim = int64_t(INT_MAX) / 2;
  const int64_t padded_src = int64_t(p.n) * p.c * p.padded_h64() * p.padded_w64();
  const int64_t padded_dst =
      int64_t(p.n) * p.k * (p.p64() + int64_t(p.r) * p.dil_h) * (p.q64() + int64_t(p.s) * p.dil_w);
  if (p.src_elems() > lim || padded_src > lim || padded_dst > lim || p.wei_elems() > lim)
    return Support::no("tensors (with their padding) over 2^30 elements (32-bit gather offsets)");
  return Support::yes();
}

size_t CudaImplicitGemm::workspace_bytes(const ConvProblem& p, Direction dir) const {
  return cuda::implicit_gemm_workspace_bytes(to_shape(p), dir);
}

void CudaImplicitGemm::run(const ConvProblem& p, Direction dir, const ConvBuffers& buf, void* workspace,
                           const ExecContext& ctx) const {
  const ConvShape sh = to_shape(p);
  switch (dir) {
    case Direction::fwd: cuda::implicit_gemm_conv_fwd(sh, buf.src, buf.wei, buf.dst, workspace, ctx.stream); break;
    case Direction::bwd_data:
      cuda::implicit_gemm_conv_bwd_data(sh, buf.dst, buf.wei, buf.src, workspace, ctx.stream);
      break;
    case Direction::bwd_filter:
      cuda::implicit_gemm_conv_bwd_filter(sh, buf.src, buf.dst, buf.wei, workspace, ctx.stream);
      break;
  }
}

}  // namespace convlab
