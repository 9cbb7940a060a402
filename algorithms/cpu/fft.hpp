// FFT convolution on the CPU (the fbfft formulation, Vasilache et al. 2015):
// transform the activations and the filters, a complex GEMM across channels
// for every frequency, one inverse transform per output plane.
//
//   cpu.fft        whole image: one Lh x Lw transform per plane, L smooth
//                  (2^a 3^b 5^c) >= max(H + pad, P, R); padding is an offset.
//   cpu.fft_tiled  overlap-save: T x T tiles (T chosen per problem from a cost
//                  model, typically 16 or 32), step T - R + 1; for large
//                  images and large filters (the filter spectra shrink to T x T).
//   cpu.fft_fftw   cpu.fft's composition with FFTW (fftw3f, FFTW_MEASURE plans)
//                  doing the transforms, so the hand FFT's share is visible.
//
// The three share FftConvolution (geometry + engine are the strategies).
// Directions: fwd y = x (*) w (correlation: Y = sum_c X . conj(W));
// bwd-data dx = full convolution of dy with w (DX = sum_k DY . W);
// bwd-filter dw = correlation of x with dy (DW = sum_{n,tiles} conj(DY) . X).
// Stride 1 and dilation 1 only. Groups: one GEMM per (frequency, group).
#pragma once
#include <cstddef>

#include "algorithms/algorithm.hpp"

namespace convlab {

// The transform strategy: batched (16-lane) r2c / c2r 2-D transforms in the
// layouts of kernels/cpu/fft/fft.hpp.
class FftEngine {
 public:
  virtual ~FftEngine() = default;
  virtual size_t scratch_floats(int lh, int lw) const = 0;
  // True when forward() never reads frame rows outside [rb, re) (so the
  // caller need not zero them).
  virtual bool prunes_rows() const = 0;
  // A plan for lh x lw, cached for the process; call outside parallel regions.
  virtual const void* prepare(int lh, int lw) const = 0;
  // Frame rows outside [rb, re) are zero (an engine may skip them).
  virtual void forward(const void* plan, const float* frame, int rb, int re, float* out, std::ptrdiff_t fstride,
                       float* scratch) const = 0;
  // Only frame rows [rb, re) are needed (an engine may write more).
  virtual void inverse(const void* plan, const float* in, std::ptrdiff_t fstride, int rb, int re, float* frame,
                       float* scratch) const = 0;
};
const FftEngine& hand_fft_engine();
const FftEngine& fftw_engine();

// One spatial axis of the transform geometry. Tile t covers outputs
// [t*step, t*step + step); the activation patch of tile t starts at
// t*step - pad (x) or t*step + bd_shift (dy in bwd-data); bwd-data outputs are
// read at transform index j + bd_zoff.
struct FftAxis {
  int t = 0, step = 0, tiles = 0, bd_shift = 0, bd_zoff = 0;
};
struct FftGeometry {
  FftAxis h, w;
};

class FftConvolution : public NamedAlgorithm {
 public:
  Support supports(const ConvProblem& p, Direction dir) const override;
  size_t workspace_bytes(const ConvProblem& p, Direction dir) const override;
  void run(const ConvProblem& p, Direction dir, const ConvBuffers& buf, void* workspace,
           const ExecContext& ctx) const override;
  Tolerance tolerance(const ConvProblem& p, Direction dir) const override;
  virtual FftGeometry geometry(const ConvProblem& p, Direction dir) const = 0;
  // Its geometry's transforms (algorithms/cpu/fft_cost.cpp): 16-lane r2c / c2r, pruned to the
  // rows that are non-zero or needed (the hand FFT; FFTW transforms whole frames), the frame
  // copies, the per-frequency complex GEMMs and the spectra's traffic.
  CostPhases cost_phases(const ConvProblem& p, Direction dir) const override;
  NominalCost nominal_cost(const ConvProblem& p, Direction dir) const override;
  bool probe_1x1() const override { return false; }
  // "T=16x16 tiles=4x4 avx2": the transform size, the tiles, the FFT kernels' ISA.
  std::string implementation(const ConvProblem& p, Direction dir, int threads = 0) const override;

 protected:
  FftConvolution(std::string name, std::string description, const FftEngine& engine, bool fftw = false)
      : NamedAlgorithm(std::move(name), DeviceKind::cpu, "fft", std::move(description)), engine_(engine), fftw_(fftw) {}
  const FftEngine& engine_;
  bool fftw_;  // transforms through FFTW: whole frames, FFTW's probed rate
};

// Whole-image geometry (one tile, L = smallest smooth >= max(H + pad, P, R)).
FftGeometry whole_image_geometry(const ConvProblem& p, Direction dir);
// Overlap-save geometry with the tile size picked by a flop cost model.
FftGeometry tiled_geometry(const ConvProblem& p, Direction dir);

class CpuFft final : public FftConvolution {
 public:
  CpuFft()
      : FftConvolution("cpu.fft",
                       "whole-image FFT convolution, hand-written mixed-radix FFT + per-frequency complex GEMM",
                       hand_fft_engine()) {}
  FftGeometry geometry(const ConvProblem& p, Direction dir) const override { return whole_image_geometry(p, dir); }
};

class CpuFftTiled final : public FftConvolution {
 public:
  CpuFftTiled()
      : FftConvolution("cpu.fft_tiled",
                       "overlap-save tiled FFT convolution (tile size from a cost model), hand-written FFT",
                       hand_fft_engine()) {}
  FftGeometry geometry(const ConvProblem& p, Direction dir) const override { return tiled_geometry(p, dir); }
};

class CpuFftFftw final : public FftConvolution {
 public:
  CpuFftFftw()
      : FftConvolution("cpu.fft_fftw",
                       "whole-image FFT convolution with FFTW (fftw3f, FFTW_MEASURE) transforms",
                       fftw_engine(), true) {}
  FftGeometry geometry(const ConvProblem& p, Direction dir) const override { return whole_image_geometry(p, dir); }
  bool library_backed() const override { return true; }
};

}  // namespace convlab
