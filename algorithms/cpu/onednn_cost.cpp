// oneDNN's cost statement (algorithms/cost.hpp): each oneDNN algorithm is priced as the plan of
// the implementation oneDNN picks for the problem -- its Winograd as our F(4x4), its JIT direct
// kernels as our blocked direct convolution, its JIT depthwise kernel as our depthwise one, its im2col + GEMM fallback as cpu.im2col_gemm (no
// probe of oneDNN's GEMM path: ours stands for it).
#include "algorithms/cpu/family_cost.hpp"
#include "algorithms/cpu/onednn.hpp"
#include "algorithms/registry.hpp"

namespace convlab {

CostPhases CpuOnednn::cost_phases(const ConvProblem& p, Direction dir) const {
  if (kind_ == OnednnKind::winograd) return winograd_cost_phases(p, dir, 4);
  if (depthwise_kernel(p, dir)) return depthwise_cost_phases(p, dir);
  return direct_cost_phases(p, dir, false);
}

// oneDNN runs a depthwise layer (groups == C == K) on its JIT depthwise kernel (jit_dw / jit_uni_dw):
// channels in the lanes like cpu.direct_depthwise, not the blocked direct kernel's channel blocks.
bool CpuOnednn::depthwise_kernel(const ConvProblem& p, Direction dir) const {
  if (!(p.groups > 1 && p.c_per_group() == 1 && p.k_per_group() == 1)) return false;
  try {
    return implementation(p, dir).find("dw") != std::string::npos;
  } catch (const std::exception&) {
    return false;
  }
}

NominalCost CpuOnednn::nominal_cost(const ConvProblem& p, Direction dir) const {
  if (kind_ == OnednnKind::winograd) return nominal_winograd(p, dir, 4);
  return nominal_direct(p, dir);
}

const Algorithm& CpuOnednn::priced_as(const ConvProblem& p, Direction dir) const {
  if (kind_ == OnednnKind::winograd) return *this;
  auto registered = [this](const char* name) -> const Algorithm& {
    const Algorithm* a = find_algorithm(name);
    return a ? *a : *this;
  };
  std::string impl;
  try {
    impl = implementation(p, dir);
  } catch (const std::exception&) {
  }
  if (impl.find("wino") != std::string::npos) return registered("onednn.winograd");
  if (impl.find("gemm") != std::string::npos) return registered("cpu.im2col_gemm");
  return kind_ == OnednnKind::direct ? *this : registered("onednn.direct");
}

}  // namespace convlab
