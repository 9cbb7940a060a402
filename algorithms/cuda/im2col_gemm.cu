#include "algorithms/cuda/im2col_gemm.hpp"

#include <climits>
#include <string>

#include "algorithms/cuda/cublas.hpp"
#include "core/error.hpp"
#include "kernels/cuda/im2col/im2col.hpp"

namespace convlab {

namespace {

void run_with(const ConvProblem& p, Direction dir, const ConvBuffers& buf, void* workspace, const ExecContext& ctx,
              const cuda::GemmFn& gemm) {
  const ConvShape sh = to_shape(p);
  float* ws = static_cast<float*>(workspace);
  switch (dir) {
    case Direction::fwd: cuda::im2col_conv_fwd(sh, buf.src, buf.wei, buf.dst, ws, ctx.stream, gemm); break;
    case Direction::bwd_data: cuda::im2col_conv_bwd_data(sh, buf.dst, buf.wei, buf.src, ws, ctx.stream, gemm); break;
    case Direction::bwd_filter:
      cuda::im2col_conv_bwd_filter(sh, buf.src, buf.dst, buf.wei, ws, ctx.stream, gemm);
      break;
  }
}

}  // namespace

Support CudaIm2colGemm::supports(const ConvProblem& p, Direction) const {
  const int64_t cols = int64_t(p.c) * p.r * p.s * p.p() * p.q();
  if (cols > INT_MAX) return Support::no("column matrix of one image exceeds 2^31 elements");
  return Support::yes();
}

size_t CudaIm2colGemm::workspace_bytes(const ConvProblem& p, Direction) const {
  return size_t(cuda::im2col_workspace_floats(to_shape(p))) * sizeof(float);
}

void CudaIm2colGemm::run(const ConvProblem& p, Direction dir, const ConvBuffers& buf, void* workspace,
                         const ExecContext& ctx) const {
  run_with(p, dir, buf, workspace, ctx, cuda::default_gemm());
}

void CudaIm2colCublas::run(const ConvProblem& p, Direction dir, const ConvBuffers& buf, void* workspace,
                           const ExecContext& ctx) const {
  cublasHandle_t h = cublas::handle(ctx.stream);
  // Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T.
  const cuda::GemmFn gemm = [h](const cuda::SgemmArgs& g, void*) {
    const float one = 1.0f, beta = g.accumulate ? 1.0f : 0.0f;
    cublas::check(cublasSgemmStridedBatched(h, g.trans_b ? CUBLAS_OP_T : CUBLAS_OP_N,
                                            g.trans_a ? CUBLAS_OP_T : CUBLAS_OP_N, g.n, g.m, g.k, &one, g.b, g.ldb,
                                            g.stride_b, g.a, g.lda, g.stride_a, &beta, g.c, g.ldc, g.stride_c, g.batch),
                  "cublasSgemmStridedBatched");
  };
  run_with(p, dir, buf, workspace, ctx, gemm);
}

}  // namespace convlab
