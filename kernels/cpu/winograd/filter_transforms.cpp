// Filter-side Winograd transforms, in fp64 with one final rounding (they run
// once per call on K*C/groups small matrices, so precision is free here):
//   filter_transform:      U = G g GT, written in the GEMM-A packed layout
//                          (alpha^2, ceil(k_out/MR), c_in, MR), padded rows zero.
//   filter_grad_transform: diff_wei = GT M G from the accumulated products M
//                          (alpha^2, round_up(kg, MR), round_up(cg, NR)).
// Threads: OpenMP static over output rows; deterministic.
#include <omp.h>

#include <cassert>

#include "kernels/cpu/winograd/winograd_kernels.hpp"

namespace convlab::winograd {

void filter_transform(int m, const float* wei_group, int kg, int cg, bool bwd_data, float* u, int threads) {
  assert(supported_tile(m) && kg > 0 && cg > 0);
  const Matrices& W = matrices(m);
  const int A = W.alpha;
  const int k_out = bwd_data ? cg : kg;
  const int c_in = bwd_data ? kg : cg;
  const int kb_count = ceil_div(k_out, kMR);
  const int64_t e_stride = int64_t(kb_count) * c_in * kMR;  // (alpha^2, KB, c_in, MR)
#pragma omp parallel for num_threads(threads) schedule(static)
  for (int ko = 0; ko < kb_count * kMR; ++ko) {
    const int kb = ko / kMR, i = ko % kMR;
    for (int c = 0; c < c_in; ++c) {
      float* dst = u + (int64_t(kb) * c_in + c) * kMR + i;
      if (ko >= k_out) {
        for (int e = 0; e < A * A; ++e) dst[e * e_stride] = 0.f;
        continue;
      }
      double g[3][3];
      for (int r = 0; r < 3; ++r)
        for (int s = 0; s < 3; ++s)
          g[r][s] = bwd_data ? wei_group[(int64_t(c) * cg + ko) * 9 + (2 - r) * 3 + (2 - s)]  // (Kg, Cg, 3, 3)
                             : wei_group[(int64_t(ko) * cg + c) * 9 + r * 3 + s];
      double t[kMaxAlpha][3];  // G g
      for (int a = 0; a < A; ++a)
        for (int s = 0; s < 3; ++s) t[a][s] = W.G[a][0] * g[0][s] + W.G[a][1] * g[1][s] + W.G[a][2] * g[2][s];
      for (int a = 0; a < A; ++a)
        for (int b = 0; b < A; ++b)
          dst[(a * A + b) * e_stride] = float(t[a][0] * W.G[b][0] + t[a][1] * W.G[b][1] + t[a][2] * W.G[b][2]);
    }
  }
}

void filter_grad_transform(int m, const float* mbuf, int kg, int cg, float* diff_wei_group, int threads) {
  assert(supported_tile(m) && kg > 0 && cg > 0);
  const Matrices& W = matrices(m);
  const int A = W.alpha;
  const int64_t kp = round_up(kg, kMR), cp = round_up(cg, kNR);
  const int64_t e_stride = kp * cp;
#pragma omp parallel for num_threads(threads) schedule(static)
  for (int k = 0; k < kg; ++k) {
    for (int c = 0; c < cg; ++c) {
      const float* src = mbuf + int64_t(k) * cp + c;
      double t[3][kMaxAlpha];  // GT M
      for (int r = 0; r < 3; ++r)
        for (int b = 0; b < A; ++b) {
          double acc = 0;
          for (int a = 0; a < A; ++a) acc += W.G[a][r] * double(src[(a * A + b) * e_stride]);
          t[r][b] = acc;
        }
      float* dst = diff_wei_group + (int64_t(k) * cg + c) * 9;  // (Kg, Cg, 3, 3)
      for (int r = 0; r < 3; ++r)
        for (int s = 0; s < 3; ++s) {
          double acc = 0;
          for (int b = 0; b < A; ++b) acc += t[r][b] * W.G[b][s];
          dst[r * 3 + s] = float(acc);
        }
    }
  }
}

}  // namespace convlab::winograd
