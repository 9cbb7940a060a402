#include "algorithms/algorithm.hpp"

#include "core/device.hpp"

namespace convlab {

Tolerance summation_tolerance(const ConvProblem& p, Direction dir) {
  Tolerance t;
  const double k = double(std::max<int64_t>(p.reduction_length(dir), 1));
  t.elem = k * double(FLT_EPSILON);
  t.basis = "K*eps summation bound, K=" + std::to_string(int64_t(k));
  return t;
}

std::string Algorithm::unavailable_reason() const {
  if (device() == DeviceKind::cpu) return {};
  const CudaInfo& info = cuda_info();
  return info.available ? std::string() : "no CUDA device (" + info.reason + ")";
}

CostPhases Algorithm::cost_phases(const ConvProblem& p, Direction dir) const {
  (void)p;
  (void)dir;
  CostPhases c;
  c.unpriced = std::string(name()) + " states no cost (Algorithm::cost_phases)";
  return c;
}

NominalCost Algorithm::nominal_cost(const ConvProblem& p, Direction dir) const {
  (void)p;
  (void)dir;
  NominalCost c;
  c.unpriced = std::string(name()) + " states no cost (Algorithm::nominal_cost)";
  return c;
}

ConvShape to_shape(const ConvProblem& p) {
  return ConvShape{p.n,     p.c,         p.h,         p.w,        p.k,        p.r,     p.s,     p.p(),
                   p.q(),   p.pad_h,     p.pad_w,     p.pad_h_end, p.pad_w_end, p.stride_h, p.stride_w,
                   p.dil_h, p.dil_w,     p.groups};
}

}  // namespace convlab
