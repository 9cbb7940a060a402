// The FFT convolutions' cost statement (algorithms/cost.hpp) and plan label, from the algorithm's own geometry
// (whole image or tiles): what run() transforms, multiplies and moves.
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "algorithms/cpu/fft.hpp"
#include "kernels/cpu/fft/fft.hpp"

namespace convlab {

// transforms  16-lane Lh x Lw r2c / c2r, the hand FFT's pruned in proportion to the rows it skips;
//             the frame fills and scatters
// complex GEMM  8 freqs x M x 16 ceil(N'/16) x L, its packing, the spectra written and read
// tensors  src, weights and dst read or written once, in the working set of spectra + tensors
CostPhases FftConvolution::cost_phases(const ConvProblem& p, Direction dir) const {
  CostPhases c;
  const FftGeometry geo = geometry(p, dir);
  const double th = geo.h.t, tw = geo.w.t, n = th * tw;
  const double tiles = double(geo.h.tiles) * geo.w.tiles, msig = p.n * tiles, G = p.groups;
  const double cg = p.c_per_group(), kg = p.k_per_group(), cb = std::ceil(cg / 16), kb = std::ceil(kg / 16);
  const double freqs = th * (std::floor(tw / 2) + 1);
  // A transform of `blocks` 16-lane blocks with `rows` of th rows non-zero / needed.
  auto transforms = [&](CostKind k, double blocks, double rows) {
    CostPhase t{k, blocks};
    t.points = n;
    t.prune = fftw_ ? 1.0 : 0.5 + 0.5 * std::min(1.0, rows / th);
    t.fftw = fftw_;
    c.phases.push_back(t);
    c.phases.push_back({CostKind::copy_cached, blocks * 16 * n * 4 * 2});  // the frame: zeroed and filled / scattered
  };
  const double in_h = std::min(th, double(p.h)), dy_h = std::min(th, double(p.p()));
  double gm = 0, gl = 0, gnb = 0;
  switch (dir) {
    case Direction::fwd:
      transforms(CostKind::fft_fwd, msig * G * cb, in_h);
      transforms(CostKind::fft_fwd, G * cg * kb, p.r);
      transforms(CostKind::fft_inv, msig * G * kb, std::min(double(geo.h.step), double(p.p())));
      gm = msig, gl = cg, gnb = kb;
      break;
    case Direction::bwd_data:
      transforms(CostKind::fft_fwd, msig * G * kb, dy_h);
      transforms(CostKind::fft_fwd, G * kg * cb, p.r);
      transforms(CostKind::fft_inv, msig * G * cb, std::min(double(geo.h.step), double(p.h)));
      gm = msig, gl = kg, gnb = cb;
      break;
    case Direction::bwd_filter:
      transforms(CostKind::fft_fwd, msig * G * cb, in_h);
      transforms(CostKind::fft_fwd, msig * G * kb, std::min(double(geo.h.step), double(p.p())));
      transforms(CostKind::fft_inv, G * kg * cb, p.r);
      gm = kg, gl = msig, gnb = cb;
      break;
  }
  c.phases.push_back({CostKind::cgemm, freqs * G * 8 * gm * gnb * 16 * gl});
  c.phases.push_back({CostKind::copy_cached, freqs * G * gm * gl * 8 * 2});  // pack_a
  // The spectra (frequency-major, in the workspace): written by the transforms, read by the GEMMs
  // and the inverse transforms; the tensors: read by the forward transforms, written by the inverse
  // ones. The run's working set is all of them: past the cache they all go through memory.
  const double spectra = 4.0 * freqs * 32 * (msig * G * (cb + kb) + G * cg * kb);
  const double tensors = 4.0 * (double(p.src_elems()) + double(p.dst_elems()) + double(p.wei_elems()));
  CostPhase sp{CostKind::copy, 2 * spectra};
  sp.footprint = spectra + tensors;
  c.phases.push_back(sp);
  CostPhase io{CostKind::copy, tensors};
  io.footprint = spectra + tensors;
  c.phases.push_back(io);
  char buf[96];
  std::snprintf(buf, sizeof buf, "fft %gx%g x%g tiles", th, tw, tiles);
  c.what = buf;
  return c;
}

NominalCost FftConvolution::nominal_cost(const ConvProblem& p, Direction dir) const { return nominal_fft(p, dir); }

std::string FftConvolution::implementation(const ConvProblem& p, Direction dir, int) const {
  const FftGeometry g = geometry(p, dir);
  return "T=" + std::to_string(g.h.t) + "x" + std::to_string(g.w.t) + " tiles=" + std::to_string(g.h.tiles) + "x" +
         std::to_string(g.w.tiles) + " " + cpu::fft::isa_used();
}

}  // namespace convlab
