// Non-fused Winograd F(4x4, 3x3) (kernels/cuda/winograd/winograd_f4x3.cu):
// separate transform kernels around the hand-written batched SGEMM
// (kernels/cuda/gemm) over the 36 transformed-domain points x groups.
// 3x3 filters, stride 1, dilation 1, padding <= 2, groups.
//   fwd        U = G g G^T, V = B^T d B, M[xi] = U[xi] V[xi], Y = A^T M A
//   bwd-data   the fwd pipeline on diff_dst with the rotated, channel-swapped filter
//   bwd-filter Y' = A dY A^T, V = B^T d B, M[xi] = Y'[xi] V[xi]^T, dW = G^T M G
#pragma once

#include <cstdint>

#include "kernels/conv_shape.hpp"

namespace convlab::cuda {

// The emulated kernel tests' bound, per output element (for the emulator's
// rounding only; on a GPU cuda.winograd_f4x3 declares the transform form with a
// constant measured there, algorithms/cuda/winograd.cu):
//   |y - ref| <= (K + kWinogradF4x3ExtraEps) * eps * sum|terms|
// F(4,3)'s points +-2 and the 1/6, 1/24 filter coefficients amplify rounding
// far more than F(2,3). Measured under the SIMT emulator
// (tests/kernels/cuda/winograd_test.cpp), max |err| / sum|terms| over the edge
// sweep: 2.2e-6 fwd (18.4 eps), 1.9e-6 bwd-data (16 eps), 1.4e-6 bwd-filter
// (11.5 eps). 64 eps is ~3.5x the worst measured.
constexpr double kWinogradF4x3ExtraEps = 64.0;

const char* winograd_f4x3_unsupported(const ConvShape& sh);
// Workspace floats for one direction: transformed filter, input and product.
int64_t winograd_f4x3_workspace_floats(const ConvShape& sh, Direction direction);

void winograd_f4x3_fwd(const ConvShape& sh, const float* src, const float* wei, float* dst, float* ws, void* stream);
void winograd_f4x3_bwd_data(const ConvShape& sh, const float* diff_dst, const float* wei, float* diff_src, float* ws,
                            void* stream);
void winograd_f4x3_bwd_filter(const ConvShape& sh, const float* src, const float* diff_dst, float* diff_wei,
                              float* ws, void* stream);

}  // namespace convlab::cuda
