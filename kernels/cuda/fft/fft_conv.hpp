// FFT convolution's hand-written kernels (kernels/cuda/fft/fft_conv.cu), one
// launch each: zero-padding planes into fh x fw transform planes, cropping
// them back, and the pointwise complex multiply-accumulate across channels.
// The 2-D transforms between them (cuFFT, or the tile DFT of fft_tiled.hpp) and
// the composition are cuda.fft / cuda.fft_tiled (algorithms/cuda/fft.cu).
// Planes are fh x fw real, spectra fh x (fw/2 + 1) complex (the R2C layout).
#pragma once

#include <cstdint>

#include "kernels/conv_shape.hpp"

// CUDA's complex float (vector_types.h; the .cu files get it from
// kernels/cuda/simt/simt.hpp): declared only, so that host C++ that includes
// this header (algorithms/cuda/fft.hpp, the registry) stays plain C++.
struct float2;

namespace convlab::cuda {

struct FftSize {
  int fh, fw;
  int64_t spectrum() const { return int64_t(fh) * (fw / 2 + 1); }  // complex values per plane
};

// out (planes, fh, fw) = in (planes, rows, cols) placed at (off_h, off_w), zeros elsewhere.
void fft_pad(const float* in, int planes, int rows, int cols, int off_h, int off_w, FftSize fs, float* out,
             void* stream);
// out (planes, rows, cols) = scale * in (planes, fh, fw) starting at (off_h, off_w).
void fft_crop(const float* in, int planes, int rows, int cols, int off_h, int off_w, FftSize fs, float scale,
              float* out, void* stream);

// The pointwise complex multiply-accumulate of direction `mode`, over spectra
// of `spec` complex values per plane (sh.n may count (image, tile) pairs):
//   fwd        out(n,k)  = sum_c a=X(n,c) conj(b=W(k,c))     (correlation)
//   bwd-data   out(n,c)  = sum_k a=DY(n,k) b=W(k,c)           (convolution)
//   bwd-filter out(k,c)  = sum_n a=X(n,c) conj(b=DY(n,k))     (correlation)
// out has out_planes planes.
void fft_cmac(const ConvShape& sh, Direction mode, int64_t spec, const float2* a, const float2* b, float2* out,
              int64_t out_planes, void* stream);

}  // namespace convlab::cuda
