#include "algorithms/cpu/reference.hpp"

#include <omp.h>

#include "kernels/ref/conv_ref.hpp"

namespace convlab {

namespace {
int64_t out_elems(const ConvProblem& p, Direction dir) {
  switch (dir) {
    case Direction::fwd: return p.dst_elems();
    case Direction::bwd_data: return p.src_elems();
    case Direction::bwd_filter: return p.wei_elems();
  }
  return 0;
}
}  // namespace

size_t CpuReference::workspace_bytes(const ConvProblem& p, Direction dir) const {
  return size_t(out_elems(p, dir)) * sizeof(double);
}

void CpuReference::run(const ConvProblem& p, Direction dir, const ConvBuffers& buf, void* workspace,
                       const ExecContext& ctx) const {
  const ConvShape sh = to_shape(p);
  double* acc = static_cast<double*>(workspace);
  const int saved = omp_get_max_threads();
  omp_set_num_threads(ctx.resolved_threads());
  float* out = nullptr;
  switch (dir) {
    case Direction::fwd: ref::conv_fwd(sh, buf.src, buf.wei, acc, nullptr); out = buf.dst; break;
    case Direction::bwd_data: ref::conv_bwd_data(sh, buf.dst, buf.wei, acc, nullptr); out = buf.src; break;
    case Direction::bwd_filter: ref::conv_bwd_filter(sh, buf.src, buf.dst, acc, nullptr); out = buf.wei; break;
  }
  omp_set_num_threads(saved);
  const int64_t n = out_elems(p, dir);
  for (int64_t i = 0; i < n; ++i) out[i] = float(acc[i]);
}

CostPhases CpuReference::cost_phases(const ConvProblem& p, Direction) const {
  CostPhases c;
  CostPhase loops{CostKind::fma, p.flops()};
  loops.eff = 0.20;
  CostPhase tensors{CostKind::copy, double(p.bytes())};
  tensors.footprint = double(p.bytes());
  c.phases = {loops, tensors};
  c.what = "reference";
  return c;
}

NominalCost CpuReference::nominal_cost(const ConvProblem& p, Direction dir) const {
  return nominal_of_family(p, dir, "reference");
}

}  // namespace convlab
