// Fused Winograd F(2x2, 3x3) (kernels/cuda/winograd/winograd_f2x3.cu): 3x3
// filters, stride 1, dilation 1, any padding <= 2, groups. Transforms happen in
// shared memory / registers inside one kernel per direction; no workspace.
//   fwd        Y = A^T [ (G g G^T) . (B^T d B) ] A  per 2x2 output tile
//   bwd-data   the same kernel on diff_dst with the filter rotated 180 degrees
//              and its channel roles swapped, padding 2 - pad
//   bwd-filter dW = G^T [ sum over tiles (A dY A^T) . (B^T d B) ] G
#pragma once

#include "kernels/conv_shape.hpp"

namespace convlab::cuda {

// The emulated kernel tests' bound (tests/kernels/cuda/winograd_test.cpp): per
// output element
//   |y - ref| <= (K + kWinogradF2x3ExtraEps) * eps * sum|terms|
// It holds for the emulator's rounding (plain fp32, no FMA contraction) only: on
// an H100 an output of exact value 0 came out as 1e-16 of transform noise, so
// cuda.winograd_f2x3 declares the transform form, c * eps * max sum|terms|, with
// c measured on the GPU (algorithms/cuda/winograd.cu).
// K*eps covers the summation, the extra term the transforms' rounding. Measured
// under the SIMT emulator (tests/kernels/cuda/winograd_test.cpp), max
// |err| / sum|terms|: edge sweep 2.5e-7 fwd, 3.0e-7 bwd-data, 3.2e-7 bwd-filter
// (= 2.7 eps, at K=9..); AlexNet conv3-5 (both variants, batch 1) <= 1.1e-7 fwd,
// 9.3e-8 bwd-data, 2.2e-7 bwd-filter. 8 eps is 3x the worst measured excess.
constexpr double kWinogradF2x3ExtraEps = 8.0;

// Empty when the kernels handle `sh`, else why not.
const char* winograd_f2x3_unsupported(const ConvShape& sh);

void winograd_f2x3_fwd(const ConvShape& sh, const float* src, const float* wei, float* dst, void* stream);
void winograd_f2x3_bwd_data(const ConvShape& sh, const float* diff_dst, const float* wei, float* diff_src,
                            void* stream);
void winograd_f2x3_bwd_filter(const ConvShape& sh, const float* src, const float* diff_dst, float* diff_wei,
                              void* stream);

}  // namespace convlab::cuda
