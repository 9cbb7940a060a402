// The non-fused Winograd's cost statement (algorithms/cost.hpp): cpu.winograd_f{2,4,6}x3's, and
// oneDNN's Winograd as F(4x4) (algorithms/cpu/onednn_cost.cpp).
#include <cmath>
#include <cstdio>

#include "algorithms/cpu/family_cost.hpp"
#include "algorithms/cpu/winograd.hpp"
#include "kernels/cpu/gemm/sgemm.hpp"

namespace convlab {

// transforms  tiles x channels at the probed input, output and diff_dst transform rates
// GEMM  2 a^2 ceil(K'/MR)MR C' ceil(T/NR)NR on the micro-kernel (a = m + 2, T = tiles)
CostPhases winograd_cost_phases(const ConvProblem& p, Direction dir, int m) {
  CostPhases c;
  const cpu::SgemmUkernel& u = cpu::sgemm_ukernel(cpu::sgemm_resolve_isa(cpu::GemmIsa::auto_));
  const double a2 = double(m + 2) * (m + 2);
  const double oh = dir == Direction::bwd_data ? p.h : p.p(), ow = dir == Direction::bwd_data ? p.w : p.q();
  const double T = double(p.n) * std::ceil(oh / m) * std::ceil(ow / m);
  const double kg = p.k_per_group(), cg = p.c_per_group(), G = p.groups;
  auto transform = [&](CostKind k, double work) {
    CostPhase t{k, work, G};
    t.tile = m;
    c.phases.push_back(t);
  };
  if (dir == Direction::bwd_filter) {
    const double kp = ceil_to(kg, u.mr), cp = ceil_to(cg, u.nr), t16 = ceil_to(T, 16);
    transform(CostKind::winograd_in, t16 * cp);
    transform(CostKind::winograd_dst, t16 * kp);
    c.phases.push_back({CostKind::ukernel, G * 2 * a2 * kp * cp * t16});
    c.phases.push_back({CostKind::copy_cached, G * a2 * kp * cp * 8});
  } else {
    const double k_out = dir == Direction::fwd ? kg : cg, c_in = dir == Direction::fwd ? cg : kg;
    const double kp = ceil_to(k_out, u.mr), tp = ceil_to(T, u.nr);
    transform(CostKind::winograd_in, tp * c_in);
    transform(CostKind::winograd_out, ceil_to(T, 16) * k_out);
    c.phases.push_back({CostKind::ukernel, G * 2 * a2 * kp * c_in * tp});
    c.phases.push_back({CostKind::copy_cached, G * a2 * kp * c_in * 8});
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, "winograd F(%dx%d,3x3) %.0f tiles", m, m, T);
  c.what = buf;
  return c;
}

CostPhases CpuWinograd::cost_phases(const ConvProblem& p, Direction dir) const {
  return winograd_cost_phases(p, dir, m_);
}

NominalCost CpuWinograd::nominal_cost(const ConvProblem& p, Direction dir) const {
  return nominal_winograd(p, dir, m_);
}

}  // namespace convlab
