// oneDNN's cost statement (algorithms/cost.hpp): each oneDNN algorithm is priced as the plan of
// the implementation oneDNN picks for the problem -- its Winograd as our F(4x4), its JIT direct
// kernels as our blocked direct convolution, its im2col + GEMM fallback as cpu.im2col_gemm (no
// probe of oneDNN's GEMM path: ours stands for it).
#include "algorithms/cpu/family_cost.hpp"
#include "algorithms/cpu/onednn.hpp"
#include "algorithms/registry.hpp"

namespace convlab {

CostPhases CpuOnednn::cost_phases(const ConvProblem& p, Direction dir) const {
  if (kind_ == OnednnKind::winograd) return winograd_cost_phases(p, dir, 4);
  return direct_cost_phases(p, dir, false);
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
