// cuda.fft_cufft and cuda.fft_tiled: FFT convolution, stride 1, dilation 1, any
// padding, groups, all three directions.
//   fwd        Y(n,k)  = sum_c X(n,c) conj(W(k,c))     (correlation)
//   bwd-data   DX(n,c) = sum_k DY(n,k) W(k,c)           (convolution, cropped at pad)
//   bwd-filter DW(k,c) = sum_n X(n,c) conj(DY(n,k))     (correlation, first R x S)
// cuda.fft_cufft: whole padded planes (2^a 3^b 5^c 7^d sizes), 2-D transforms by
// cuFFT's batched R2C / C2R (fft_cufft.cu: plans cached per geometry for the
// process's life, their work area carved from the workspace), the padding,
// cropping and the pointwise multiply-accumulate across channels (a
// register-tiled complex GEMM per frequency) by the hand-written kernels
// (kernels/cuda/fft/fft_conv). The composition takes the transforms as
// callbacks (CudaFftTransforms), so the emulated tests run it with a host DFT.
// cuda.fft_tiled: overlap-save over 16x16 tiles with the hand-written tile DFT
// (kernels/cuda/fft/fft_tiled, no cuFFT) + the same multiply-accumulate;
// R, S <= 16. bwd-data runs the forward pipeline on diff_dst with the rotated,
// channel-swapped filter and padding R-1-pad, S-1-pad.
#pragma once
#include <cstdint>
#include <functional>

#include "algorithms/algorithm.hpp"
#include "kernels/cuda/fft/fft_conv.hpp"

namespace convlab {

// Declared error of both (their tolerance): per element
//   |y - ref| <= K * eps * sum|terms_i| + kCudaFftGlobalEps * eps * max_j sum|terms_j|
// The FFT spreads rounding across the whole plane, so the error scales with the
// largest output magnitude, not the element's own (a global term).
inline constexpr double kCudaFftGlobalEps = 64.0;
// That tolerance, its basis naming where the constant was measured.
Tolerance cuda_fft_tolerance(const ConvProblem& p, Direction dir, const char* measured);

// cuda.fft_cufft's whole-plane composition.
struct CudaFftTransforms {
  // `planes` real fh x fw planes -> spectra; and back (unnormalised inverse).
  std::function<void(const float* in, float2* out, int planes)> r2c;
  std::function<void(const float2* in, float* out, int planes)> c2r;
};
// Smallest 2^a 3^b 5^c 7^d >= n.
int fft_good_size(int n);
// The transform plane: the padded image rounded up to good sizes.
cuda::FftSize cuda_fft_size(const ConvShape& sh);
// How many planes each transform of a direction batches: {a, b, out}.
void cuda_fft_plane_counts(const ConvShape& sh, Direction dir, int counts[3]);
// Workspace floats of the planes and spectra (cuFFT's work area comes after);
// every complex array in it starts 16-byte aligned.
int64_t cuda_fft_workspace_floats(const ConvShape& sh, Direction dir);
// The output of `dir` (dst, src or wei) from the two others; ws 16-byte aligned.
void cuda_fft_conv(const ConvShape& sh, Direction dir, const ConvBuffers& buf, float* ws, void* stream,
                   const CudaFftTransforms& fft);

class CudaFft final : public NamedAlgorithm {
 public:
  CudaFft();
  // No device: the usual reason; else cuFFT's, where it cannot be opened.
  std::string unavailable_reason() const override;
  Support supports(const ConvProblem& p, Direction dir) const override;
  size_t workspace_bytes(const ConvProblem& p, Direction dir) const override;
  void run(const ConvProblem& p, Direction dir, const ConvBuffers& buf, void* workspace,
           const ExecContext& ctx) const override;
  NominalCost nominal_cost(const ConvProblem& p, Direction dir) const override { return nominal_fft(p, dir); }
  Tolerance tolerance(const ConvProblem& p, Direction dir) const override;
};

class CudaFftTiled final : public NamedAlgorithm {
 public:
  CudaFftTiled();
  Support supports(const ConvProblem& p, Direction dir) const override;
  size_t workspace_bytes(const ConvProblem& p, Direction dir) const override;
  void run(const ConvProblem& p, Direction dir, const ConvBuffers& buf, void* workspace,
           const ExecContext& ctx) const override;
  NominalCost nominal_cost(const ConvProblem& p, Direction dir) const override { return nominal_fft(p, dir); }
  Tolerance tolerance(const ConvProblem& p, Direction dir) const override;
};

}  // namespace convlab
