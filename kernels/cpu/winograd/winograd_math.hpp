// CPU Winograd blocking and workspace formulas (the transform math itself is
// shared with CUDA: kernels/winograd_math.hpp).
#pragma once

#include "kernels/winograd_math.hpp"

namespace convlab::winograd {

// Register blocking of the batched GEMM (shared by every ISA so the packed
// layouts are ISA-independent): MR rows broadcast from A, NR columns of B.
inline constexpr int kMR = 12;
inline constexpr int kNR = 32;

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
constexpr long long workspace_floats_fwd(int m, int k_out, int c_in, int tc) {
  const long long a2 = (long long)(m + 2) * (m + 2);
  const long long kp = round_up(k_out, kMR);
  return a2 * (kp * c_in + (long long)tc * c_in + (long long)tc * kp);
}
constexpr long long workspace_floats_bwd_filter(int m, int k, int c, int tc) {
  const long long a2 = (long long)(m + 2) * (m + 2);
  const long long kp = round_up(k, kMR), cp = round_up(c, kNR);
  return a2 * ((long long)tc * cp + (long long)tc * kp + kp * cp);
}

}  // namespace convlab::winograd
