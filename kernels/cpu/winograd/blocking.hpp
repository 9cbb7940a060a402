// CPU Winograd blocking and workspace formulas (the transform math itself is
// shared with CUDA: kernels/winograd_math.hpp).
#pragma once

#include "kernels/winograd_math.hpp"

namespace convlab::cpu::winograd {

// The shared transform math (points, matrices, tile counts) under this family's name.
using namespace convlab::winograd_math;

// Register blocking of the batched GEMM: the MR x NR tile of the sgemm
// micro-kernel that runs it (kernels/cpu/gemm's table, one per ISA, picked at
// run time: 12 x 32 AVX-512, 6 x 16 AVX2, 4 x 16 portable). The packed layouts
// the transforms write follow it: MR rows broadcast from A, NR columns of B.
// NR is a multiple of the 16 transform lanes (kLanes).
struct GemmTile {
  int mr, nr;
};

// Workspace (floats) of the non-fused algorithm, per direction. Buffers:
//   forward / backward-data (k_out output channels, c_in input channels of one group):
//     U  alpha^2 x round_up(k_out, MR) x c_in          transformed filter of one group
//     V  alpha^2 x tc x c_in                           transformed input tiles of one chunk
//     M  alpha^2 x tc x round_up(k_out, MR)            products of one chunk
//   backward-filter (k = output channels, c = input channels of one group):
//     V  alpha^2 x tc x round_up(c, NR)                transformed input tiles
//     W  alpha^2 x tc x round_up(k, MR)                transformed diff_dst tiles
//     M  alpha^2 x round_up(k, MR) x round_up(c, NR)   accumulated products
// tc = tiles per chunk (a multiple of NR).
constexpr long long workspace_floats_fwd(int m, int k_out, int c_in, int tc, GemmTile t) {
  const long long a2 = (long long)(m + 2) * (m + 2);
  const long long kp = round_up(k_out, t.mr);
  return a2 * (kp * c_in + (long long)tc * c_in + (long long)tc * kp);
}
constexpr long long workspace_floats_bwd_filter(int m, int k, int c, int tc, GemmTile t) {
  const long long a2 = (long long)(m + 2) * (m + 2);
  const long long kp = round_up(k, t.mr), cp = round_up(c, t.nr);
  return a2 * ((long long)tc * cp + (long long)tc * kp + kp * cp);
}

}  // namespace convlab::cpu::winograd
