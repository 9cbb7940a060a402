// cuda.fft: FFT convolution with cuFFT's batched 2-D R2C / C2R over whole
// padded planes and the hand-written pad / crop / pointwise complex
// multiply-accumulate kernels (kernels/cuda/fft). Stride 1, dilation 1.
// Plans are cached per transform geometry for the process's life; cuFFT's work
// area lives in convlab's workspace (see algorithms/cuda/fft.cu).
#pragma once
#include "algorithms/algorithm.hpp"

namespace convlab {

class CudaFft final : public Algorithm {
 public:
  std::string_view name() const override { return "cuda.fft"; }
  DeviceKind device() const override { return DeviceKind::cuda; }
  std::string_view family() const override { return "fft"; }
  std::string_view description() const override {
    return "cuFFT R2C/C2R over padded planes (2^a3^b5^c7^d sizes) + hand-written pointwise complex "
           "multiply-accumulate across channels; cuFFT plans cached per geometry, their work area carved from the "
           "workspace";
  }
  Support supports(const ConvProblem& p, Direction dir) const override;
  size_t workspace_bytes(const ConvProblem& p, Direction dir) const override;
  void run(const ConvProblem& p, Direction dir, const ConvBuffers& buf, void* workspace,
           const ExecContext& ctx) const override;
  Tolerance tolerance(const ConvProblem& p, Direction dir) const override;
};

// cuda.fft_tiled: overlap-save over 16x16 tiles with a hand-written tile DFT
// kernel (no cuFFT) + the same pointwise multiply-accumulate. Stride 1,
// dilation 1, R, S <= 16.
class CudaFftTiled final : public Algorithm {
 public:
  std::string_view name() const override { return "cuda.fft_tiled"; }
  DeviceKind device() const override { return DeviceKind::cuda; }
  std::string_view family() const override { return "fft"; }
  std::string_view description() const override {
    return "overlap-save over 16x16 tiles: hand-written row/column tile DFT and inverse in shared memory + "
           "pointwise complex multiply-accumulate across channels";
  }
  Support supports(const ConvProblem& p, Direction dir) const override;
  size_t workspace_bytes(const ConvProblem& p, Direction dir) const override;
  void run(const ConvProblem& p, Direction dir, const ConvBuffers& buf, void* workspace,
           const ExecContext& ctx) const override;
  Tolerance tolerance(const ConvProblem& p, Direction dir) const override;
};

}  // namespace convlab
