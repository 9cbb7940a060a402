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

void filter_grad_transform(int m, const float* mbuf, int kg, int cg, float* diff_wei_group, int threads) {
  assert(supported_tile(m) && kg > 0 && cg > 0);
  const int cblocks = ceil_div(cg, kNR);
  const Kernels& kn = best_kernels();
#pragma omp parallel for num_threads(threads) schedule(static)
  for (int k = 0; k < kg; ++k)
    for (int cb = 0; cb < cblocks; ++cb) kn.filter_grad_block(m, mbuf, kg, cg, k, cb * kNR, diff_wei_group);
}

}  // namespace convlab::winograd
