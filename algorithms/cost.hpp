// What an algorithm's time is made of, stated by the algorithm next to its
// plan (Algorithm::cost_phases, Algorithm::nominal_cost): the tuner's cost
// model (autotune/get.hpp) multiplies these by the rates it has, and knows no
// algorithm.
//
// Two statements, one per model:
//   CostPhases   the probed model: the phases of the plan, each a kind of
//                kernel the machine probe (autotune/probe.hpp) measures a rate
//                for and the work done at that rate. Seconds of a phase =
//                count x work / rate, the rate chosen by kind (below).
//   NominalCost  the model without a probe (a GPU, or before any probe ran):
//                FLOPs of the main arithmetic and of the transforms, and the
//                fractions of the nominal peak each reaches.
// An algorithm that states neither (the Algorithm defaults) is never priced:
// get lists it with the reason and never picks it (find measures it as usual).
#pragma once
#include <string>
#include <vector>

#include "core/problem.hpp"

namespace convlab {

// The kernel a phase runs, i.e. which probed rate times its work.
enum class CostKind {
  fma,           // direct-convolution FMAs: work = FLOPs, at `eff` of the FMA peak      (compute)
  ukernel,       // the sgemm micro-kernel (kernels/cpu/gemm): work = FLOPs               (compute)
  cgemm,         // the FFT's per-frequency complex GEMM: work = FLOPs                    (compute)
  im2col,        // im2col / col2im: work = column bytes; a column matrix of `footprint`  (transform)
  col2im,        //   bytes beyond the cache also goes through memory
  winograd_in,   // Winograd F(tile x tile, 3x3) input / output / diff_dst transforms:    (transform)
  winograd_out,  //   work = tiles x channels
  winograd_dst,
  fft_fwd,       // 16-lane r2c / c2r transforms of `points` points: work = transforms,   (transform)
  fft_inv,       //   each x `prune`; `fftw`: through FFTW, else the hand FFT
  copy,          // bytes read + written of a working set of `footprint` bytes: the       (copy)
                 //   cache-resident copy rate, the memory rate for big working sets
  copy_cached,   // bytes read + written at the cache-resident copy rate                  (copy)
};

struct CostPhase {
  CostKind kind = CostKind::copy;
  double work = 0;
  double count = 1;      // the phase repeats this often (groups, GEMM calls)
  double footprint = 0;  // copy, im2col, col2im: bytes
  double eff = 1;        // fma: fraction of the FMA peak
  int tile = 0;          // winograd_*: the output tile m
  double points = 0;     // fft_*: points per transform
  double prune = 1;      // fft_*: the share of the transform's work done
  bool fftw = false;     // fft_*
};

struct CostPhases {
  std::vector<CostPhase> phases;
  std::string what;      // one line: "gemm 96x18150x363 x3 calls"
  std::string unpriced;  // non-empty: why the algorithm cannot be priced (phases then empty)
};

struct NominalCost {
  double main_flops = 0, transform_flops = 0;
  double eff_main = 0.20, eff_transform = 0.10;  // fractions of the nominal peak
  // Direct kernels vectorise over the channels they produce: fewer of them than
  // SIMD lanes wastes lanes (0: not lane-bound).
  double lane_channels = 0;
  std::string formula;   // "winograd F(4x3): 1.2 GFLOP batched GEMM + 0.3 GFLOP transforms"
  std::string unpriced;  // non-empty: why the algorithm cannot be priced
};

// ---- the statements the built-in families share ---------------------------

// The nominal model of the families: main = the direct convolution's FLOPs at
// `eff_main` of peak, named `family`.
NominalCost nominal_flops(const ConvProblem& p, const char* family, double eff_main);
NominalCost nominal_gemm(const ConvProblem& p);           // im2col + GEMM (70%)
NominalCost nominal_implicit_gemm(const ConvProblem& p);  // 60%
// Direct (35%): vectorised over the channels produced (K/g for fwd and bwd-filter, C/g for bwd-data).
NominalCost nominal_direct(const ConvProblem& p, Direction dir);
// Winograd F(m x r): tiles T = N ceil(P/m) ceil(Q/m), a = m + r - 1; main = 2 a^2 T C K / g,
// transforms = T C 4 a^3 + T K 2 (a^2 m + a m^2) + K C/g 2 (a r^2 + a^2 r).
NominalCost nominal_winograd(const ConvProblem& p, Direction dir, int m);
// FFT: whole image (tile 0; L = pow2(H + 2 pad) x pow2(W + 2 pad)) or t x t tiles:
// main = 8 bins N K C/g, transforms = planes x 2.5 L log2 L.
NominalCost nominal_fft(const ConvProblem& p, Direction dir, int tile = 0);
// By family name, for algorithms that carry their family as data (cuDNN's,
// test doubles): "gemm", "implicit_gemm", "direct", "winograd" (F(m x 3),
// m = winograd_tile), "fft"; anything else at 20% of peak.
NominalCost nominal_of_family(const ConvProblem& p, Direction dir, std::string_view family, int winograd_tile = 4);

// The SIMD lanes of the CPU's direct kernels (16 with AVX-512, else 8).
int cpu_direct_lanes();
double ceil_to(double x, double q);
// printf into a string, for the one-line accounts (up to four numbers).
std::string cost_text(const char* f, double a, double b = 0, double c = 0, double d = 0);

}  // namespace convlab
