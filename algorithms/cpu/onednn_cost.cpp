// oneDNN's cost statement (algorithms/cost.hpp): each oneDNN algorithm is priced as the plan of
// the implementation oneDNN picks for the problem -- its Winograd as our F(4x4), its JIT direct
// kernels as our blocked direct convolution, its JIT depthwise kernel as our depthwise one with whole-tensor
// reorders, its im2col + GEMM fallback as cpu.im2col_gemm (no
// probe of oneDNN's GEMM path: ours stands for it).
#include <vector>

#include "algorithms/cpu/family_cost.hpp"
#include "algorithms/cpu/onednn.hpp"
#include "algorithms/registry.hpp"

namespace convlab {

namespace {

// oneDNN's JIT depthwise kernel blocks as cpu.direct_depthwise's does, but reorders the whole plain
// tensors (src or diff_src, dst or diff_dst) into its blocked layout and back through its own buffers
// instead of a band at a time in cache: the blocked copies are written and read back at the rate
// of their size. Priced with cpu.direct_depthwise's band copies, both scaled to the depthwise probe
// problem (4.8 MB tensors, its reorders within the L3), get chose oneDNN on MobileNetV2's 56 x 56
// and 112 x 112 depthwise forwards, where it took 1.7-2.9x cpu.direct_depthwise's time (29 MB
// tensors; Zen 4, 2 threads, oneDNN 2.6 with a 55 MiB workspace).
CostPhases onednn_depthwise_phases(const ConvProblem& p, Direction dir) {
  CostPhases c = depthwise_cost_phases(p, dir);
  std::erase_if(c.phases, [](const CostPhase& ph) { return ph.kind == CostKind::copy_cached; });
  const double bytes = 4 * (double(p.src_elems()) + double(p.dst_elems()));  // the blocked copies
  CostPhase reorder{CostKind::copy, 2 * bytes};  // written, read back
  reorder.footprint = 2 * bytes;                 // beside the plain tensors
  c.phases.push_back(reorder);
  c.what += ", whole tensors reordered";
  return c;
}

}  // namespace

CostPhases CpuOnednn::cost_phases(const ConvProblem& p, Direction dir) const {
  if (kind_ == OnednnKind::winograd) return winograd_cost_phases(p, dir, 4);
  if (depthwise_kernel(p, dir)) return onednn_depthwise_phases(p, dir);
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
