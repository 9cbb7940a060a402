// Fused Winograd F(2x2, 3x3) kernels (kernels/cuda/winograd/winograd_f2x3.cu):
// input and output transforms in shared memory / registers inside one kernel,
// the filters transformed once per call by a kernel of their own into a
// workspace the fused kernel reads. 3x3 filters, stride 1, dilation 1. The
// matrices are kernels/winograd_math.hpp's F(2) (points 0, 1, -1).
//   filter      U = G g G^T, per (output, input channel), in the fused kernel's
//               block order (below)
//   fused       Y = A^T [ U . (B^T d B) ] A  per 2x2 output tile of the
//               convolution `geo` describes: the forward convolution, or (as
//               cuda.winograd_f2x3 runs bwd-data) the one on diff_dst with the
//               filter rotated 180 degrees, its channel roles swapped, padding 2 - pad
//   bwd-filter  dW = G^T [ sum over tiles (A dY A^T) . (B^T d B) ] G
#pragma once

#include <cstdint>

#include "kernels/conv_shape.hpp"
#include "kernels/cuda/simt/simt.hpp"

namespace convlab::cuda {

// The emulated tests' bound (tests/algorithms/cuda/winograd_test.cpp): per
// output element
//   |y - ref| <= (K + kWinogradF2x3ExtraEps) * eps * sum|terms|
// It holds for the emulator's rounding (plain fp32, no FMA contraction) only: on
// an H100 an output of exact value 0 came out as 1e-16 of transform noise, so
// cuda.winograd_f2x3 declares the transform form, c * eps * max sum|terms|, with
// c measured on the GPU (algorithms/cuda/winograd.cu).
// K*eps covers the summation, the extra term the transforms' rounding. Measured
// under the SIMT emulator, max |err| / sum|terms|: edge sweep 2.5e-7 fwd, 3.0e-7
// bwd-data, 3.2e-7 bwd-filter (= 2.7 eps, at K=9..); AlexNet conv3-5 (both
// variants, batch 1) <= 1.1e-7 fwd, 9.3e-8 bwd-data, 2.2e-7 bwd-filter. 8 eps is
// 3x the worst measured excess.
constexpr double kWinogradF2x3ExtraEps = 8.0;

// The convolution the fused kernel computes: in (n, cin, ih, iw) -> out (n, cout, oh, ow).
struct WinogradFusedGeom {
  int n, cin, ih, iw, cout, oh, ow, pad_h, pad_w, groups;
  bool rotate;  // filter read as w'(o, i, r, s) = w(i, o, 2 - r, 2 - s), wei (cin, cout / groups, 3, 3)
};

// The transformed filters U, floats: (groups, ceil(cout_g / 16), ceil(cin_g / 8),
// 16 points, 8 input channels, 16 output channels), zeros past the channel
// edges, so that each (16 output channels, 8 input channels) chunk a block of
// the fused kernel stages is 2048 contiguous floats (8 KiB, 16-byte aligned
// when u is).
int64_t winograd_f2x3_filter_floats(const WinogradFusedGeom& geo);
// U from the filter `wei` as geo reads it (rotated or not); one thread per slot.
void winograd_f2x3_filter_transform(const WinogradFusedGeom& geo, const float* wei, float* u, void* stream);
// One 256-thread block per (32 tiles, 16 output channels of a group, image),
// the grid chunked over the device's y / z limits. u: winograd_f2x3_filter_transform's
// output for the same geo, 16-byte aligned.
void winograd_f2x3_fused(const WinogradFusedGeom& geo, const float* in, const float* u, float* out, void* stream);
// diff_wei (K, C/groups, 3, 3) from src and diff_dst of `sh`.
void winograd_f2x3_bwd_filter(const ConvShape& sh, const float* src, const float* diff_dst, float* diff_wei,
                              void* stream);

// The bwd-filter kernel's shared-memory word, within one of its 16 transformed-
// domain planes, of (row, t): row = the block's channel 0..15, t = the chunk's
// tile 0..15. Rows go in pairs of 2 x 16 words followed by one pad word, so
// that both access patterns a warp makes are free of bank conflicts
// (bank = word mod 32):
//   stores, lane l = (row = 2w + l / 16, t = l % 16): banks w + t and w + 16 + t,
//     all 32 distinct;
//   loads, lane l = (row = l % 16, t fixed): banks t + row / 2 (even rows,
//     0..7 above t) and t + 16 + row / 2 (odd rows), 16 distinct words in 16
//     distinct banks (the other operand's two rows are a broadcast).
// Plain rows of 16 words (row * 16 + t) put the loads' 16 rows in 2 banks: 8-way.
__host__ __device__ constexpr int winograd_f2x3_bwd_filter_word(int row, int t) { return row * 16 + row / 2 + t; }
inline constexpr int kWinogradF2x3BwdFilterPlaneWords = 16 * 16 + 8;  // 16 rows of 16 + one pad word per pair

}  // namespace convlab::cuda
