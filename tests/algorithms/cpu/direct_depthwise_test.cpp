// cpu.direct_depthwise: a depthwise sweep (strides 1 and 2, padding,
// asymmetric padding, 1-D, dilation, 3x3 and 5x5 and other windows, channel counts around and off the
// 8 / 16 channel blocks, odd image sizes, batch 1 and 2) in all three
// directions on every micro-kernel table this CPU runs, bit-identical
// results across runs and thread counts, and the problems it refuses with
// their reason.
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "algorithms/cpu/direct_depthwise.hpp"
#include "algorithms/execute.hpp"
#include "algorithms/registry.hpp"
#include "core/device.hpp"
#include "core/problem.hpp"
#include "kernels/cpu/depthwise/dw_ukernel.hpp"
#include "convlab/testing.hpp"

namespace convlab {
namespace {

using testing::ConvTester;
using testing::TestProblem;

std::string dw(int c, const std::string& rest) {
  return "g" + std::to_string(c) + "ic" + std::to_string(c) + "oc" + std::to_string(c) + rest;
}

std::vector<TestProblem> depthwise_sweep() {
  std::vector<TestProblem> v;
  for (int c : {1, 3, 8, 13, 16, 17, 33})
    for (const char* rest : {"mb2ih9iw11kh3ph1", "mb1ih10kh3sh2ph1", "mb2ih13iw7kh5ph2", "mb1ih12iw9kh5sh2ph2"}) {
      const std::string d = dw(c, rest);
      v.push_back({d, parse_problem(d)});
    }
  for (const std::string& d :
       {dw(24, "mb1ih15kh3ph2dh2"), dw(9, "mb2ih11iw14kh3sh2ph2dh2"), dw(20, "mb1ih9iw12kh3kw5ph1pw2dw1"),
        dw(12, "mb1ih8kh3ph0"), dw(11, "mb2ih7kh1"), dw(10, "mb1ih17iw8kh7sh3ph3"), dw(8, "mb1ih3iw2kh5ph2pw2"),
        dw(18, "mb1ih12iw12kh3sh2ph0"), dw(7, "mb1ih1iw1kh3ph1pw1"), dw(32, "mb2ih28iw28kh3ph1"),
        dw(40, "mb1ih31iw40kh3sh2ph1"), dw(6, "mb1ih9iw20kh2kw4sh1sw3ph1pw0dh2dw2"), dw(5, "mb1ih6iw9kh3sh4ph1"),
        // stride 1: several bands; padding past the filter's reach (backward-data as a
        // forward with negative padding)
        dw(20, "mb1ih40iw40kh3ph1"), dw(3, "mb2ih6iw5kh3ph3pw1"), dw(17, "mb1ih9iw7kh3ph4pw3dh2dw2")})
    v.push_back({d, parse_problem(d)});
  return v;
}

TEST(CpuDirectDepthwise, SweepAllDirections) {
  ConvTester("cpu.direct_depthwise").sweep(depthwise_sweep()).require_all_supported().run();
}

// The plane path's shapes (stride 1, output plane = input plane): planes of one pixel to a few
// hundred, a last chunk full or nearly empty, windows 1x1 to 5x5, dilated, asymmetric padding, 1-D,
// channel counts that wrap the planes' channel cycle mid-thread; then the same problems down the
// channel-blocked path, so both stay tested on the small images the plane path takes.
std::vector<TestProblem> plane_sweep() {
  std::vector<TestProblem> v;
  for (const std::string& d :
       {dw(5, "mb3ih7kh3ph1"), dw(16, "mb2ih4kh3ph1"), dw(3, "mb2ih1kh3ph1"), dw(9, "mb1ih8iw2kh3ph1pw1"),
        dw(7, "mb2ih17kh3ph1"), dw(6, "mb2ih11iw13kh5ph2pw2"), dw(4, "mb1ih12kh3ph2dh1"), dw(11, "mb2ih9kh1"),
        dw(8, "mb1ih6iw10oh6ow10kh2kw2ph1pw1"), dw(5, "mb2iw23kw3pw1"), dw(13, "mb1ih28kh3ph1"), dw(3, "mb1ih9iw5kh3kw5ph1pw2"),
        dw(33, "mb3ih14kh3ph1")})
    v.push_back({d, parse_problem(d)});
  return v;
}

TEST(CpuDirectDepthwise, PlanePathAndBlockedPathOnSmallImages) {
  for (bool plane : {true, false}) {
    set_depthwise_plane_path(plane);
    ConvTester("cpu.direct_depthwise").sweep(plane_sweep()).threads(2).require_all_supported().check_determinism().run();
  }
  set_depthwise_plane_path(true);
}

// 1-D problems and asymmetric padding (larger, smaller, negative end padding), as depthwise.
TEST(CpuDirectDepthwise, AsymmetricPaddingAnd1d) {
  std::vector<TestProblem> v;
  for (TestProblem t : testing::asym_1d_sweep()) {
    t.problem.k = t.problem.groups = t.problem.c;
    t.label += "_depthwise";
    ASSERT_EQ(t.problem.validate(), "") << t.label;
    v.push_back(t);
  }
  ConvTester("cpu.direct_depthwise").sweep(v).threads(2).require_all_supported().run();
}

TEST(CpuDirectDepthwise, MobileNetShapesBatch1TwoThreads) {
  std::vector<TestProblem> v;
  for (const std::string& d : {dw(32, "mb1ih112kh3ph1"), dw(96, "mb1ih112oh56kh3sh2ph1"), dw(144, "mb1ih56kh3ph1"),
                               dw(384, "mb1ih14kh3ph1"), dw(960, "mb1ih7kh3ph1"), dw(72, "mb1ih56oh28kh5sh2ph2")})
    v.push_back({d, parse_problem(d)});
  ConvTester("cpu.direct_depthwise").sweep(v).threads(2).require_all_supported().check_determinism().run();
}

TEST(CpuDirectDepthwise, BitIdenticalAcrossRunsOnTwoThreads) {
  ConvTester("cpu.direct_depthwise").sweep(depthwise_sweep()).threads(2).check_determinism().run();
}

// Each output element is summed in an order fixed by the problem (backward-filter: fixed runs of
// images and rows, then the runs in order; on the plane path every image of a channel in order),
// not by the thread count: 1 and 2 threads agree bit for bit.
TEST(CpuDirectDepthwise, BitIdenticalAcrossThreadCounts) {
  const Algorithm& a = get_algorithm("cpu.direct_depthwise");
  for (const std::string& d : {dw(24, "mb3ih23iw19kh3ph1"), dw(24, "mb3ih23iw19kh3ph1pw1"), dw(13, "mb2ih16kh5sh2ph2")})
    for (Direction dir : kAllDirections) {
      const ConvProblem p = parse_problem(d);
      ConvData one = ConvData::random(p, 5), two = ConvData::random(p, 5);
      AlignedBuffer<unsigned char> ws(a.workspace_bytes(p, dir) + 64);
      a.run(p, dir, {one.src.data(), one.wei.data(), one.dst.data()}, ws.data(), ExecContext{DeviceKind::cpu, 1});
      a.run(p, dir, {two.src.data(), two.wei.data(), two.dst.data()}, ws.data(), ExecContext{DeviceKind::cpu, 2});
      const Tensor &x = one.output(dir), &y = two.output(dir);
      ASSERT_EQ(x.size(), y.size());
      EXPECT_EQ(std::memcmp(x.data(), y.data(), x.size() * sizeof(float)), 0) << d << " " << to_string(dir);
    }
}

// The whole algorithm on each narrower table: other vector widths and register tiles, same answers.
void run_with(const cpu::depthwise::DwUkernels& uk) {
  cpu::depthwise::override_dw_ukernels(&uk);
  ConvTester("cpu.direct_depthwise").sweep(depthwise_sweep()).threads(2).require_all_supported().run();
  ConvTester("cpu.direct_depthwise").sweep(plane_sweep()).threads(2).require_all_supported().run();
  cpu::depthwise::override_dw_ukernels(nullptr);
}

TEST(CpuDirectDepthwise, PortableMicroKernels) { run_with(cpu::depthwise::dw_ukernels_portable()); }

TEST(CpuDirectDepthwise, Avx2MicroKernels) {
  if (!(cpu_info().avx2 && cpu_info().fma)) GTEST_SKIP() << "no AVX2+FMA on this CPU";
  run_with(cpu::depthwise::dw_ukernels_avx2());
}

TEST(CpuDirectDepthwise, Avx512MicroKernels) {
  if (cpu_info().isa() != "avx512") GTEST_SKIP() << "no AVX-512 (F/VL/BW/DQ) on this CPU or under CONVLAB_ISA";
  run_with(cpu::depthwise::dw_ukernels_avx512());
}

TEST(CpuDirectDepthwise, RefusesOtherProblemsWithReason) {
  const Algorithm& a = get_algorithm("cpu.direct_depthwise");
  for (const char* d : {"mb2ic16ih8oc16kh3ph1", "g2mb2ic16ih8oc16kh3ph1", "g8mb1ic16ih8oc16kh3ph1"}) {
    const Support s = a.supports(parse_problem(d), Direction::fwd);
    EXPECT_FALSE(s.ok) << d;
    EXPECT_NE(s.reason.find("groups == C"), std::string::npos) << d << ": " << s.reason;
  }
  for (Direction dir : kAllDirections) {
    const Support s = a.supports(parse_problem("g16mb1ic16ih8oc32kh3ph1"), dir);
    EXPECT_FALSE(s.ok);
    EXPECT_NE(s.reason.find("multiplier 2"), std::string::npos) << s.reason;
  }
  EXPECT_TRUE(a.supports(parse_problem("g16mb1ic16ih8oc16kh3ph1"), Direction::bwd_filter).ok);
}

}  // namespace
}  // namespace convlab
