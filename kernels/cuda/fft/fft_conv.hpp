// FFT convolution's hand-written kernels (kernels/cuda/fft/fft_conv.cu), one
// launch each: zero-padding planes into fh x fw transform planes, cropping
// them back, and the pointwise complex multiply-accumulate across channels (a
// batched complex GEMM, one matrix product per frequency).
// The 2-D transforms between them (cuFFT, or the tile DFT of fft_tiled.hpp) and
// the composition are cuda.fft_cufft / cuda.fft_tiled (algorithms/cuda/fft.cu).
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

// The pointwise stage as one batched complex GEMM over frequencies: for every
// group g < groups and frequency f < spec,
//   out(m, n) = sum_k op_a(A(m, k)) op_b(B(k, n))     (op: conj where asked)
// over spectra stored plane-major (spec complex values per plane), the planes
// of each matrix addressed by strides (in planes):
//   A(m, k) = a[(g * a_g + m * a_m + k * a_k) * spec + f], B(k, n) and out(m, n) likewise.
// The sum runs over k in order 0, 1, ..., k - 1 (deterministic).
struct FftCgemm {
  int m, n, k, groups;
  int64_t spec;
  int64_t a_m, a_k, a_g;
  int64_t b_k, b_n, b_g;
  int64_t o_m, o_n, o_g;
  bool conj_a, conj_b;
};
void fft_cgemm(const FftCgemm& g, const float2* a, const float2* b, float2* out, void* stream);

// The pointwise complex multiply-accumulate of direction `mode` as that GEMM,
// over spectra of `spec` complex values per plane (sh.n may count (image, tile) pairs):
//   fwd        out(n,k)  = sum_c a=X(n,c) conj(b=W(k,c))     (correlation)
//   bwd-data   out(n,c)  = sum_k a=DY(n,k) b=W(k,c)           (convolution)
//   bwd-filter out(k,c)  = sum_n a=X(n,c) conj(b=DY(n,k))     (correlation)
// out's planes are ordered as the output tensor's: (n, k), (n, c), (k, c / groups).
FftCgemm fft_cmac_gemm(const ConvShape& sh, Direction mode, int64_t spec);
void fft_cmac(const ConvShape& sh, Direction mode, int64_t spec, const float2* a, const float2* b, float2* out,
              void* stream);

}  // namespace convlab::cuda
