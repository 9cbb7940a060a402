// cpu.im2col_gemm's and cpu.im2col_openblas's cost statement (algorithms/cost.hpp), from the
// plan run() follows (plan_im2col_gemm: chunks, groups, the 1x1 path).
#include <algorithm>
#include <cstdio>

#include "algorithms/cpu/im2col_gemm.hpp"
#include "kernels/cpu/gemm/sgemm.hpp"

namespace convlab {

// GEMM   2 ceil(m/MR)MR ceil(n/NR)NR k per call on the micro-kernel (MR x NR: the hand micro-kernel's tile)
// packing  8 (m k + k n) bytes per call
// im2col (fwd, bwd-filter) / col2im (bwd-data)  C/g R S x N P Q floats; none on the 1x1 paths (pl.direct:
//   stride 1, or a stride sampled in the GEMM's packing; pl.batched: one GEMM per group through grids)
// the dst scatter / diff_dst gather when a chunk holds several images: 8 K/g N P Q bytes (not when batched)
CostPhases Im2colGemmBase::cost_phases(const ConvProblem& p, Direction dir) const {
  CostPhases c;
  const cpu::SgemmUkernel& u = cpu::sgemm_ukernel(cpu::sgemm_resolve_isa(cpu::GemmIsa::auto_));
  const Im2colGemmPlan pl = plan_im2col_gemm(p, dir, gemm_reads_grid());
  const Im2colGemmCall& g = pl.gemm;
  const double pq = double(p.p()) * p.q(), L = double(p.n) * pq;
  const double crs = double(p.c_per_group()) * p.r * p.s, kg = p.k_per_group();
  // Calls as if every chunk were full (the last one may be short): groups x N / nb.
  const double calls = double(p.groups) * p.n / std::max(1, pl.nb);
  c.phases.push_back({CostKind::ukernel, calls * 2 * ceil_to(g.m, u.mr) * ceil_to(g.n, u.nr) * double(g.k)});
  const double operands = 4 * (double(g.m) * g.k + double(g.k) * g.n);
  CostPhase pack{CostKind::copy, 2 * operands, calls};
  // Batched: the packing streams the batch through in blocks, an image's planes at a time, as the per-image
  // calls do: the working set is one image's share of the long side.
  pack.footprint = pl.batched ? 4 * (double(g.m) * g.k + double(g.k) * g.n) / p.n : operands;
  c.phases.push_back(pack);
  if (!pl.direct && !pl.batched) {
    CostPhase col{dir == Direction::bwd_data ? CostKind::col2im : CostKind::im2col, p.groups * crs * L * 4};
    col.footprint = double(pl.col_elems) * 4;
    c.phases.push_back(col);
  }
  if (pl.nb > 1 && !pl.batched) {
    CostPhase scatter{CostKind::copy, kg * L * 8, double(p.groups)};
    scatter.footprint = kg * pl.nb * pq * 8;
    c.phases.push_back(scatter);
  }
  char buf[128];
  std::snprintf(buf, sizeof buf, "gemm %gx%gx%g x%.0f calls", double(g.m), double(g.n), double(g.k), calls);
  c.what = buf;
  return c;
}

NominalCost Im2colGemmBase::nominal_cost(const ConvProblem& p, Direction) const { return nominal_gemm(p); }

}  // namespace convlab
