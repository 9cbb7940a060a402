// cuda.im2col_cublas: cuda.im2col_gemm's composition with cuBLAS as the GEMM
// (built by nvcc only: the emulated tests drive the hand-written strategy).
#include "algorithms/cuda/cublas.hpp"
#include "algorithms/cuda/im2col_gemm.hpp"

namespace convlab {

CudaIm2colCublas::CudaIm2colCublas()
    : CudaIm2colGemm("cuda.im2col_cublas",
                     "im2col/col2im kernels + cuBLAS cublasSgemmStridedBatched; images in chunks of <= 64 MiB of "
                     "columns, one batched GEMM per group and chunk") {}

std::string CudaIm2colCublas::unavailable_reason() const {
  if (std::string why = Algorithm::unavailable_reason(); !why.empty()) return why;
  return cuda::cublas::unavailable_reason();
}

void CudaIm2colCublas::run(const ConvProblem& p, Direction dir, const ConvBuffers& buf, void* workspace,
                           const ExecContext& ctx) const {
  (void)cuda::cublas::handle(ctx.stream);
  CudaIm2colGemm::run(p, dir, buf, workspace, ctx);
}

// Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T. A two-level
// batch runs as strided-batched calls over the larger level, one per entry of
// the smaller.
void CudaIm2colCublas::gemm(const cuda::SgemmArgs& g, void* stream) const {
  cublasHandle_t h = cuda::cublas::handle(stream);
  const float one = 1.0f, beta = g.accumulate ? 1.0f : 0.0f;
  const bool inner = g.batch2 >= g.batch;  // batched over the second level
  const int calls = inner ? g.batch : g.batch2, batch = inner ? g.batch2 : g.batch;
  for (int j = 0; j < calls; ++j) {
    const int64_t ja = j * (inner ? g.stride_a : g.stride2_a), jb = j * (inner ? g.stride_b : g.stride2_b),
                  jc = j * (inner ? g.stride_c : g.stride2_c);
    cuda::cublas::check(cuda::cublas::api().cublasSgemmStridedBatched(
                            h, g.trans_b ? CUBLAS_OP_T : CUBLAS_OP_N, g.trans_a ? CUBLAS_OP_T : CUBLAS_OP_N, g.n,
                            g.m, g.k, &one, g.b + jb, g.ldb, inner ? g.stride2_b : g.stride_b, g.a + ja, g.lda,
                            inner ? g.stride2_a : g.stride_a, &beta, g.c + jc, g.ldc, inner ? g.stride2_c : g.stride_c,
                            batch),
                        "cublasSgemmStridedBatched");
  }
}

}  // namespace convlab
