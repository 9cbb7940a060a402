// The emulated algorithm tests' entry point: a cuda.* algorithm class driven
// through its own interface (supports, workspace_bytes, run) under the SIMT
// emulator, as one test::ConvRun for check_conv (tests/support/cuda_conv_check.hpp).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "algorithms/algorithm.hpp"
#include "tests/support/cuda_conv_check.hpp"

namespace convlab::cuda::test {

inline ConvProblem problem_of(const ConvShape& sh) {
  ConvProblem p;
  p.n = sh.n, p.c = sh.c, p.h = sh.h, p.w = sh.w, p.k = sh.k, p.r = sh.r, p.s = sh.s;
  p.pad_h = sh.pad_h, p.pad_w = sh.pad_w, p.pad_h_end = sh.pad_h_end, p.pad_w_end = sh.pad_w_end;
  p.stride_h = sh.stride_h, p.stride_w = sh.stride_w;
  p.dil_h = sh.dil_h, p.dil_w = sh.dil_w, p.groups = sh.groups;
  return p;
}

// a.supports() must accept the shape; the workspace is exactly
// workspace_bytes() (rounded up to floats), poisoned with NaN bytes; the stream
// is the emulator's (null).
inline ConvRun by_algorithm(const Algorithm& a) {
  return [&a](Dir d, const ConvShape& sh, float* src, float* wei, float* dst) {
    const ConvProblem p = problem_of(sh);
    ASSERT_EQ(p.p(), sh.p) << label(sh);
    ASSERT_EQ(p.q(), sh.q) << label(sh);
    const Support s = a.supports(p, d);
    ASSERT_TRUE(s.ok) << a.name() << " " << label(sh) << " " << name(d) << ": " << s.reason;
    simt::DeviceArray<float> ws(std::max<size_t>((a.workspace_bytes(p, d) + 3) / 4, 1));
    ws.fill_bytes(0xFF);
    ExecContext ctx;
    ctx.device = DeviceKind::cuda;
    a.run(p, d, ConvBuffers{src, wei, dst}, ws.get(), ctx);
  };
}

// Every shape of `shapes` (every other one under the sanitizers) in direction
// d, with the K*eps summation bound.
inline void sweep(const Algorithm& a, const std::vector<ConvShape>& shapes, Dir d) {
  for (const ConvShape& sh : sanitized_subset(shapes)) check_conv(sh, d, by_algorithm(a));
}

// The shapes of asym_1d_shapes() the algorithm supports, each in every
// direction, within the tolerance it declares (as the registry sweep checks it
// on a GPU); `want` is how many it must support (the rest refuse with a reason).
inline void sweep_asym_1d(const Algorithm& a, size_t want) {
  size_t supported = 0;
  for (const ConvShape& sh : asym_1d_shapes()) {
    const ConvProblem p = problem_of(sh);
    bool all = true;
    for (Dir d : kDirs) {
      const Support s = a.supports(p, d);
      EXPECT_TRUE(s.ok || !s.reason.empty()) << a.name() << " " << label(sh);
      all = all && s.ok;
    }
    if (!all) continue;
    ++supported;
    for (Dir d : kDirs) {
      const Tolerance t = a.tolerance(p, d);
      check_conv(sh, d, by_algorithm(a), t.elem, t.global);
    }
  }
  EXPECT_EQ(supported, want) << a.name();
}

}  // namespace convlab::cuda::test
