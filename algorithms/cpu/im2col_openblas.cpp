// cpu.im2col_openblas: the im2col/col2im composition of algorithms/cpu/im2col_gemm.cpp with OpenBLAS's
// cblas_sgemm as its GEMM (the classic Caffe path), the CPU mirror of algorithms/cuda/im2col_cublas.cu.
// OpenBLAS owns its buffers (no workspace) and runs its own threads, set per call.
#include <cblas.h>

#include "algorithms/cpu/im2col_gemm.hpp"
#include "core/error.hpp"

namespace convlab {

void CpuIm2colOpenblas::gemm(const Im2colGemmCall& g, float alpha, const float* a, const float* b, float beta,
                             float* c, int threads, void* workspace) const {
  (void)workspace;
  if (g.a_grid.on() || g.b_grid.on() || g.c_grid.on())
    fail("cpu.im2col_openblas: cblas_sgemm reads no grid (gemm_reads_grid() is false)");
  openblas_set_num_threads(threads);
  cblas_sgemm(CblasRowMajor, g.trans_a ? CblasTrans : CblasNoTrans, g.trans_b ? CblasTrans : CblasNoTrans, g.m, g.n,
              g.k, alpha, a, int(g.lda), b, int(g.ldb), beta, c, int(g.ldc));
}

}  // namespace convlab
