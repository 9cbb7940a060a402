// sgemm_ukernel_4x16_portable: C(4 x 16) = alpha * A_panel * B_panel + beta * C
// in plain C++ for CPUs without AVX2 (compiled for baseline x86-64; the j loop
// auto-vectorises to SSE). Same contract as the other micro-kernels: a packed
// (kc, 4), b packed (kc, 16), rows < m and columns < n written; no prefetch
// hints (pf is ignored). Single-threaded.
#include "kernels/cpu/gemm/sgemm_ukernels.hpp"

namespace convlab::cpu {

void sgemm_ukernel_4x16_portable(int kc, const float* a, const float* b, float* c, int64_t ldc, float alpha,
                                 float beta, int m, int n, const SgemmPrefetch*) {
  constexpr int MR = 4, NR = 16;
  float acc[MR][NR] = {};
  for (int p = 0; p < kc; ++p) {
    for (int i = 0; i < MR; ++i) {
      const float ai = a[i];
      for (int j = 0; j < NR; ++j) acc[i][j] += ai * b[j];
    }
    a += MR;
    b += NR;
  }
  for (int i = 0; i < m; ++i) {
    float* ci = c + i * ldc;
    if (beta == 0.0f) {
      for (int j = 0; j < n; ++j) ci[j] = alpha * acc[i][j];
    } else {
      for (int j = 0; j < n; ++j) ci[j] = alpha * acc[i][j] + beta * ci[j];
    }
  }
}

}  // namespace convlab::cpu
