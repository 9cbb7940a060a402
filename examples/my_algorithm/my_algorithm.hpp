// A convolution algorithm written outside convlab's tree: the plain direct
// loop nest, forward only, every shape (groups, strides, dilation, padding).
// Both the plugin (plugin.cpp) and the test (test.cpp) compile this one class.
#pragma once
#include <convlab/convlab.hpp>

class UserDirect : public convlab::NamedAlgorithm {
 public:
  UserDirect()
      : NamedAlgorithm("user.direct_naive", convlab::DeviceKind::cpu, "direct",
                       "the plain direct loop nest, forward only (examples/my_algorithm)") {}

  convlab::Support supports(const convlab::ConvProblem&, convlab::Direction dir) const override {
    if (dir != convlab::Direction::fwd) return {false, "forward only"};
    return {true, ""};
  }

  // One fp32 sum of K = C/g * R * S products per output, in order: within
  // K * eps * sum|terms| of the exact result (the summation bound).
  convlab::Tolerance tolerance(const convlab::ConvProblem& p, convlab::Direction dir) const override {
    return convlab::summation_tolerance(p, dir);
  }

  // Its cost, for get (algorithms/cost.hpp): scalar FMAs, one lane of eight
  // with no unrolling: a sixteenth of the FMA peak, our estimate until find
  // measures it; the same share for the model without a probe.
  convlab::CostPhases cost_phases(const convlab::ConvProblem& p, convlab::Direction) const override {
    return {{{convlab::CostKind::fma, p.flops(), 1, 0, 1.0 / 16}}, "scalar direct loops", ""};
  }
  convlab::NominalCost nominal_cost(const convlab::ConvProblem& p, convlab::Direction) const override {
    return convlab::nominal_flops(p, "direct", 1.0 / 16);
  }

  void run(const convlab::ConvProblem& p, convlab::Direction, const convlab::ConvBuffers& buf, void*,
           const convlab::ExecContext&) const override {
    const int cg = p.c / p.groups, kg = p.k / p.groups, P = p.p(), Q = p.q();
    for (int n = 0; n < p.n; ++n)
      for (int k = 0; k < p.k; ++k)
        for (int y = 0; y < P; ++y)
          for (int x = 0; x < Q; ++x) {
            const int g = k / kg;
            float sum = 0;
            for (int c = 0; c < cg; ++c)
              for (int r = 0; r < p.r; ++r)
                for (int s = 0; s < p.s; ++s) {
                  const int h = y * p.stride_h - p.pad_h + r * p.dil_h, w = x * p.stride_w - p.pad_w + s * p.dil_w;
                  if (h < 0 || h >= p.h || w < 0 || w >= p.w) continue;
                  sum += buf.src[((int64_t(n) * p.c + g * cg + c) * p.h + h) * p.w + w] *
                         buf.wei[((int64_t(k) * cg + c) * p.r + r) * p.s + s];
                }
            buf.dst[((int64_t(n) * p.k + k) * P + y) * Q + x] = sum;
          }
  }
};
