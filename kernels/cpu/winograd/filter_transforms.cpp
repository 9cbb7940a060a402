// Filter-side Winograd transforms, in fp64 with one final rounding (they run
// once per call on K*C/groups small matrices, so precision is free here):
//   filter_transform:      U = G g GT, written in the GEMM-A packed layout
//                          (alpha^2, ceil(k_out/MR), c_in, MR) of the micro-kernel's
//                          MR, padded rows zero; the arithmetic is the ISA kernel's
//                          filter_transform_block (one k-block of MR channels at a time).
//   filter_grad_transform: diff_wei = GT M G from the accumulated products M
//                          (alpha^2, round_up(kg, MR), round_up(cg, NR)).
// Threads: OpenMP static over (k-block, 8-channel chunk) pairs / output rows; deterministic.
// Also the link from a transform table to its GEMM micro-kernel (gemm_tile).
#include <omp.h>

#include <algorithm>
#include <cassert>

#include "kernels/cpu/gemm/sgemm.hpp"
#include "kernels/cpu/winograd/winograd_kernels.hpp"

namespace convlab::cpu::winograd {

GemmTile gemm_tile(const Kernels& kn) {
  const cpu::SgemmUkernel& uk = cpu::sgemm_ukernel(kn.gemm_isa);
  return {uk.mr, uk.nr};
}

void filter_transform(int m, const float* wei_group, int kg, int cg, bool bwd_data, GemmTile tile, float* u,
                      int threads, int64_t u_pitch, bool stream) {
  assert(supported_tile(m) && kg > 0 && cg > 0 && filter_transform_supports_mr(tile.mr));
  const int kb_count = ceil_div(bwd_data ? cg : kg, tile.mr);
  const int64_t packed = int64_t(kb_count) * tile.mr * (bwd_data ? kg : cg);
  assert(u_pitch == 0 || u_pitch >= packed);
  const int64_t e_stride = u_pitch > 0 ? u_pitch : packed;
  const Kernels& kn = best_kernels();
  const int c_in = bwd_data ? kg : cg;
  const int chunks = ceil_div(c_in, 8);  // runs of 8 input channels (whole streamed runs: 8 is a multiple of each)
#pragma omp parallel num_threads(threads)
  {
    // Static contiguous split of the (k-block, 8-channel chunk) pairs: a thread's whole k-blocks in one call
    // (each call transforms up to Q blocks together), the blocks it shares with a neighbour by channels.
    // (By k-blocks alone, DenseNet-121's 3x3 layers -- 32 output channels, 3 blocks of 12 -- gave one
    // thread twice the other's work.)
    const int nt = omp_get_num_threads(), id = omp_get_thread_num();
    const int64_t units = int64_t(kb_count) * chunks;
    const int64_t u1 = units * (id + 1) / nt;
    for (int64_t x = units * id / nt; x < u1;) {
      const int kb = int(x / chunks);
      const int64_t lo = x - int64_t(kb) * chunks;
      if (lo == 0 && x + chunks <= u1) {
        const int kbe = int(u1 / chunks);  // the k-blocks wholly in [x, u1)
        kn.filter_transform_block(m, wei_group, kg, cg, bwd_data, tile.mr, u, e_stride, kb, kbe, 0, c_in, stream);
        x = int64_t(kbe) * chunks;
      } else {
        const int64_t hi = std::min<int64_t>(u1 - int64_t(kb) * chunks, chunks);
        kn.filter_transform_block(m, wei_group, kg, cg, bwd_data, tile.mr, u, e_stride, kb, kb + 1, int(lo * 8),
                                  int(std::min<int64_t>(hi * 8, c_in)), stream);
        x = int64_t(kb) * chunks + hi;
      }
    }
  }
}

void filter_grad_transform(int m, const float* mbuf, int kg, int cg, GemmTile tile, float* diff_wei_group,
                           int threads) {
  assert(supported_tile(m) && kg > 0 && cg > 0 && tile.nr % kLanes == 0);
  const int kp = int(round_up(kg, tile.mr)), cp = int(round_up(cg, tile.nr));
  const int cblocks = ceil_div(cg, kLanes);
  const Kernels& kn = best_kernels();
#pragma omp parallel for num_threads(threads) schedule(static)
  for (int k = 0; k < kg; ++k)
    for (int cb = 0; cb < cblocks; ++cb) kn.filter_grad_block(m, mbuf, cg, kp, cp, k, cb * kLanes, diff_wei_group);
}

}  // namespace convlab::cpu::winograd
