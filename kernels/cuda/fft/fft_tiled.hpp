// Tiled FFT convolution (kernels/cuda/fft/fft_tiled.cu): overlap-save over
// 16x16 tiles whose 2-D DFTs are a hand-written kernel (no cuFFT), plus the
// pointwise complex multiply-accumulate of fft_conv. Stride 1, dilation 1,
// R, S <= 16, any padding (bwd-data runs the forward pipeline on diff_dst
// with the rotated, channel-swapped filter and padding R-1-pad, S-1-pad).
//   fwd        per output tile (m x m, m = 16 - R + 1): Y = sum_c X_tile conj(W)
//   bwd-data   the same on diff_dst
//   bwd-filter DW = sum over (image, tile) X_tile conj(DY_tile), first R x S
#pragma once

#include <cstdint>

#include "kernels/conv_shape.hpp"

namespace convlab::cuda {

constexpr int kFftTile = 16;

const char* fft_tiled_unsupported(const ConvShape& sh);
int64_t fft_tiled_workspace_floats(const ConvShape& sh, Direction direction);
void fft_tiled_conv(const ConvShape& sh, Direction direction, const float* src, const float* wei, const float* dst_in,
                    float* out, float* ws, void* stream);

}  // namespace convlab::cuda
