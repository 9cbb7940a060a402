// FFT convolution, stride 1, dilation 1, any padding, groups
// (kernels/cuda/fft/fft_conv.cu). The 2-D transforms are a callback (cuFFT in
// algorithms/cuda/fft.cu, a host DFT in the emulated tests); the padding,
// cropping and the pointwise complex multiply-accumulate across channels are
// hand-written kernels.
//   fwd        Y(n,k)  = sum_c X(n,c) conj(W(k,c))     (correlation)
//   bwd-data   DX(n,c) = sum_k DY(n,k) W(k,c)           (convolution, cropped at pad)
//   bwd-filter DW(k,c) = sum_n X(n,c) conj(DY(n,k))     (correlation, first R x S)
// Planes are fh x fw real, spectra fh x (fw/2 + 1) complex (the R2C layout).
#pragma once

#include <cstdint>
#include <functional>

#include "kernels/conv_shape.hpp"
#include "kernels/cuda/simt/simt.hpp"

namespace convlab::cuda {

// Declared error of cuda.fft (its tolerance): per element
//   |y - ref| <= K * eps * sum|terms_i| + kFftGlobalEps * eps * max_j sum|terms_j|
// The FFT spreads rounding across the whole plane, so the error scales with the
// largest output magnitude, not the element's own (a global term).
constexpr double kFftGlobalEps = 64.0;

struct FftFns {
  // `planes` real fh x fw planes -> spectra; and back (unnormalised inverse).
  std::function<void(const float* in, float2* out, int planes)> r2c;
  std::function<void(const float2* in, float* out, int planes)> c2r;
};

struct FftSize {
  int fh, fw;
  int64_t spectrum() const { return int64_t(fh) * (fw / 2 + 1); }  // complex values per plane
};

// Smallest 2^a 3^b 5^c 7^d >= the padded image in each dimension.
FftSize fft_size(const ConvShape& sh);
int fft_good_size(int n);
// Workspace floats of one direction; ws must
// be 16-byte aligned, and every complex array inside it is (padding included).
int64_t fft_workspace_floats(const ConvShape& sh, Direction direction);
// How many planes each transform of a direction batches: {a, b, out}.
void fft_plane_counts(const ConvShape& sh, Direction direction, int counts[3]);

void fft_conv(const ConvShape& sh, Direction direction, const float* src, const float* wei, const float* dst_in,
              float* out, float* ws, void* stream, const FftFns& fft);

// The pointwise complex multiply-accumulate alone, for direction `mode`, over spectra of `spec` complex values per plane (sh.n may
// count (image, tile) pairs, see fft_tiled.hpp).
void fft_cmac(const ConvShape& sh, Direction mode, int64_t spec, const float2* a, const float2* b, float2* out,
              int64_t out_planes, void* stream);

// The hand-written kernels, exposed for tests.
// out (planes, fh, fw) = in (planes, rows, cols) placed at (off_h, off_w), zeros elsewhere.
void fft_pad(const float* in, int planes, int rows, int cols, int off_h, int off_w, FftSize fs, float* out,
             void* stream);
// out (planes, rows, cols) = scale * in (planes, fh, fw) starting at (off_h, off_w).
void fft_crop(const float* in, int planes, int rows, int cols, int off_h, int off_w, FftSize fs, float scale,
              float* out, void* stream);

}  // namespace convlab::cuda
