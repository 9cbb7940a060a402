// Filter-side Winograd transforms, in fp64 with one final rounding (they run
// once per call on K*C/groups small matrices, so precision is free here):
//   filter_transform:      U = G g GT, written in the GEMM-A packed layout
//                          (alpha^2, ceil(k_out/MR), c_in, MR), padded rows zero;
//                          the arithmetic is the ISA kernel's filter_transform_block.
//   filter_grad_transform: diff_wei = GT M G from the accumulated products M
//                          (alpha^2, round_up(kg, MR), round_up(cg, NR)).
// Threads: OpenMP static over output rows; deterministic.
#include <omp.h>

#include <cassert>

#include "kernels/cpu/winograd/winograd_kernels.hpp"

namespace convlab::winograd {

void filter_transform(int m, const float* wei_group, int kg, int cg, bool bwd_data, float* u, int threads) {
  assert(supported_tile(m) && kg > 0 && cg > 0);
  const int kb_count = ceil_div(bwd_data ? cg : kg, kMR);
  const Kernels& kn = best_kernels();
#pragma omp parallel num_threads(threads)
  {
    // Static contiguous split of the k-blocks.
    const int nt = omp_get_num_threads(), id = omp_get_thread_num();
    const int kb0 = int(int64_t(kb_count) * id / nt), kb1 = int(int64_t(kb_count) * (id + 1) / nt);
    kn.filter_transform_block(m, wei_group, kg, cg, bwd_data, u, kb0, kb1);
  }
}

namespace {

// GT M G for output channel k and the NR input channels [c0, c0 + NR): the
// alpha^2 rows of M are read contiguously (one row of NR per element), fp64
// over the NR lanes.
template <int Mt>
void filter_grad_block(const float* mbuf, int kg, int cg, int k, int c0, float* diff_wei_group) {
  constexpr int A = Mt + 2;
  constexpr Matrices W = make_matrices(Mt);
  const int64_t kp = round_up(kg, kMR), cp = round_up(cg, kNR);
  const int64_t e_stride = kp * cp;
  const float* src = mbuf + int64_t(k) * cp + c0;
  double t[3][A][kNR];  // GT M
  for (int r = 0; r < 3; ++r)
    for (int b = 0; b < A; ++b)
      for (int l = 0; l < kNR; ++l) t[r][b][l] = 0;
  for (int a = 0; a < A; ++a)
    for (int b = 0; b < A; ++b) {
      const float* row = src + (a * A + b) * e_stride;
      for (int r = 0; r < 3; ++r) {
        const double g = W.G[a][r];
        if (g == 0) continue;
        for (int l = 0; l < kNR; ++l) t[r][b][l] += g * double(row[l]);
      }
    }
  const int lanes = cg - c0 < kNR ? cg - c0 : kNR;
  for (int r = 0; r < 3; ++r)
    for (int s = 0; s < 3; ++s) {
      double acc[kNR] = {};
      for (int b = 0; b < A; ++b) {
        const double g = W.G[b][s];
        if (g == 0) continue;
        for (int l = 0; l < kNR; ++l) acc[l] += t[r][b][l] * g;
      }
      for (int l = 0; l < lanes; ++l) diff_wei_group[((int64_t(k) * cg + c0 + l) * 3 + r) * 3 + s] = float(acc[l]);
    }
}

}  // namespace

void filter_grad_transform(int m, const float* mbuf, int kg, int cg, float* diff_wei_group, int threads) {
  assert(supported_tile(m) && kg > 0 && cg > 0);
  const int cblocks = ceil_div(cg, kNR);
#pragma omp parallel for num_threads(threads) schedule(static)
  for (int k = 0; k < kg; ++k)
    for (int cb = 0; cb < cblocks; ++cb) {
      if (m == 2) filter_grad_block<2>(mbuf, kg, cg, k, cb * kNR, diff_wei_group);
      else if (m == 4) filter_grad_block<4>(mbuf, kg, cg, k, cb * kNR, diff_wei_group);
      else filter_grad_block<6>(mbuf, kg, cg, k, cb * kNR, diff_wei_group);
    }
}

}  // namespace convlab::winograd
