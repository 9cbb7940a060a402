// The emulated algorithm tests' helpers: a cuda.* algorithm class goes through
// the shared tester (<convlab/testing.hpp>, ConvTester(...).emulated()) like
// every algorithm, on the emulator's device memory; by_algorithm() drives one
// through its own interface as a test::ConvRun for the checks of entry points
// below the Algorithm interface (chunk counts, stand-in transforms).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "algorithms/algorithm.hpp"
#include "convlab/testing.hpp"
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

inline std::vector<testing::TestProblem> problems_of(const std::vector<ConvShape>& shapes) {
  std::vector<testing::TestProblem> v;
  for (const ConvShape& sh : shapes) v.push_back({label(sh), problem_of(sh)});
  return v;
}

// Every shape of `shapes` in `dirs`, each supported, through the shared tester
// under the algorithm's own tolerance() (every other shape under the sanitizers).
inline void sweep(const Algorithm& a, const std::vector<ConvShape>& shapes, std::vector<Dir> dirs = {Dir::fwd, Dir::bwd_data, Dir::bwd_filter}) {
  testing::ConvTester(a).emulated().sweep(problems_of(shapes)).directions(std::move(dirs)).require_all_supported().run();
}

// How many problems of `sweep` `a` supports in every direction; each refusal
// must give a reason.
inline size_t supported_in_every_direction(const Algorithm& a, const std::vector<testing::TestProblem>& sweep) {
  size_t n = 0;
  for (const testing::TestProblem& t : sweep) {
    bool all = true;
    for (Dir d : kDirs) {
      const Support s = a.supports(t.problem, d);
      EXPECT_TRUE(s.ok || !s.reason.empty()) << a.name() << " " << t.label;
      all = all && s.ok;
    }
    n += all;
  }
  return n;
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

}  // namespace convlab::cuda::test
