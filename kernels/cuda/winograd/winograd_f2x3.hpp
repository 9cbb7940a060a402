// Fused Winograd F(2x2, 3x3) kernels (kernels/cuda/winograd/winograd_f2x3.cu):
// transforms in shared memory / registers inside one kernel; no workspace.
// 3x3 filters, stride 1, dilation 1. The matrices are kernels/winograd_math.hpp's
// F(2) (points 0, 1, -1).
//   fused       Y = A^T [ (G g G^T) . (B^T d B) ] A  per 2x2 output tile of the
//               convolution `geo` describes: the forward convolution, or (as
//               cuda.winograd_f2x3 runs bwd-data) the one on diff_dst with the
//               filter rotated 180 degrees, its channel roles swapped, padding 2 - pad
//   bwd-filter  dW = G^T [ sum over tiles (A dY A^T) . (B^T d B) ] G
#pragma once

#include "kernels/conv_shape.hpp"

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

// One 256-thread block per (32 tiles, 16 output channels of a group, image),
// the grid chunked over the device's y / z limits.
void winograd_f2x3_fused(const WinogradFusedGeom& geo, const float* in, const float* wei, float* out, void* stream);
// diff_wei (K, C/groups, 3, 3) from src and diff_dst of `sh`.
void winograd_f2x3_bwd_filter(const ConvShape& sh, const float* src, const float* diff_dst, float* diff_wei,
                              void* stream);

}  // namespace convlab::cuda
