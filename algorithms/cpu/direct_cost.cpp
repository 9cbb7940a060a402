// The direct convolution's cost statement (algorithms/cost.hpp): cpu.direct's, and oneDNN's
// JIT direct kernels' (algorithms/cpu/onednn_cost.cpp), which block the same way.
#include <cmath>
#include <cstdio>

#include "algorithms/cpu/direct.hpp"
#include "algorithms/cpu/direct_wgrad_pixels.hpp"
#include "algorithms/cpu/direct_wgrad_pixels.hpp"
#include "algorithms/cpu/family_cost.hpp"

namespace convlab {

// FMA   F x lane waste: the lanes are the channels produced (K/g for fwd and bwd-filter, C/g for
//       bwd-data: AlexNet conv1's C = 3 fills 3 of 16), except a bwd-data that vectorises over pixels
// layouts  the blocked / padded copies and the unblocking
CostPhases direct_cost_phases(const ConvProblem& p, Direction dir, bool pixel_bwd_data) {
  CostPhases c;
  const double V = cpu_direct_lanes(), cg = p.c_per_group(), kg = p.k_per_group();
  double waste = std::ceil(kg / V) * V / kg;
  if (dir == Direction::bwd_data) {
    if (pixel_bwd_data && 2 * cg < V) {
      const double row = std::ceil(double(p.w) / p.stride_w);  // pixels of one stride phase in a row
      waste = std::ceil(row / V) * V / row;
    } else {
      waste = std::ceil(cg / V) * V / cg;
    }
  }
  c.phases.push_back({CostKind::fma, p.flops() * waste});
  const double src = double(p.src_elems()), dst = double(p.dst_elems()), wei = double(p.wei_elems());
  const double padded = double(p.n) * p.c * double(p.padded_h64()) * double(p.padded_w64());
  const double bytes = dir == Direction::fwd        ? src + padded + 2 * dst + 2 * wei
                       : dir == Direction::bwd_data ? 2 * dst + 2 * src + 2 * wei
                                                    : src + padded + 2 * dst + 2 * wei;
  CostPhase layouts{CostKind::copy, 4 * bytes};
  layouts.footprint = 2 * bytes;
  c.phases.push_back(layouts);
  char buf[64];
  std::snprintf(buf, sizeof buf, "direct x%.2f lanes", waste);
  c.what = buf;
  return c;
}

CostPhases CpuDirect::cost_phases(const ConvProblem& p, Direction dir) const {
  if (dir == Direction::bwd_filter && direct_pix_wgrad::applies(to_shape(p)))
    return direct_pix_wgrad::cost_phases(p, to_shape(p));
  return direct_cost_phases(p, dir, true);
}

NominalCost CpuDirect::nominal_cost(const ConvProblem& p, Direction dir) const { return nominal_direct(p, dir); }

}  // namespace convlab
