// cpu.winograd_f{2,4,6}x3: sweeps around each tile size (outputs one below /
// equal / one above m, ragged H != W), pads 0/1/2 (bwd-data pad' = 2 - pad
// crops at pad 2 ... and beyond), groups, channel counts around the vector
// width 16 and the micro-kernel blocks 12 x 32, several chunks of tiles; all
// three directions, bit-identical reruns.
#include <gtest/gtest.h>

#include <string>

#include "algorithms/registry.hpp"
#include "tests/support/conv_tester.hpp"

namespace convlab {
namespace {

using testing::TestProblem;

std::vector<TestProblem> tile_sweep(int m) {
  std::vector<TestProblem> v;
  int i = 0;
  for (int out : {m - 1, m, m + 1, 2 * m + 1})
    for (int pad : {0, 1, 2}) {
      if (out < 1) continue;
      ConvProblem p;
      p.n = 2;
      p.c = (i % 3 == 0) ? 15 : (i % 3 == 1) ? 16 : 17;
      p.k = (i % 2 == 0) ? 13 : 33;
      p.r = p.s = 3;
      p.pad_h = p.pad_w = pad;
      p.h = out + 2 - 2 * pad;
      p.w = out + 3 - 2 * pad;  // ragged: Q = P + 1
      if (p.h < 1 || p.w < 1) continue;
      v.push_back({"m" + std::to_string(m) + "_out" + std::to_string(out) + "_pad" + std::to_string(pad), p});
      ++i;
    }
  v.push_back({"asym_pad", parse_problem("mb2ic5ih7iw10oc7kh3ph2pw0")});
  v.push_back({"groups2", parse_problem("g2mb2ic34ih9iw7oc26kh3ph1")});
  v.push_back({"groups3", parse_problem("g3mb1ic9ih11oc15kh3ph1")});
  v.push_back({"depthwise", parse_problem("g8mb2ic8ih9oc8kh3ph1")});
  v.push_back({"c1_k1", parse_problem("mb1ic1ih5oc1kh3ph1")});
  v.push_back({"image_1x1_pad", parse_problem("mb1ic2ih1oc3kh3ph1")});
  // Many tiles: several chunks and partial panels (the chunk holds >= 32 tiles).
  v.push_back({"many_tiles", parse_problem("mb5ic20ih31iw29oc24kh3ph1")});
  return v;
}

void sweep(const char* name, int m) {
  testing::ConvTester(name).sweep(tile_sweep(m)).require_all_supported().check_determinism().run();
}

TEST(CpuWinograd, F2x3TileEdges) { sweep("cpu.winograd_f2x3", 2); }
TEST(CpuWinograd, F4x3TileEdges) { sweep("cpu.winograd_f4x3", 4); }
TEST(CpuWinograd, F6x3TileEdges) { sweep("cpu.winograd_f6x3", 6); }

TEST(CpuWinograd, SingleThreadMatches) {
  for (const char* name : {"cpu.winograd_f2x3", "cpu.winograd_f4x3", "cpu.winograd_f6x3"})
    testing::ConvTester(name).sweep(tile_sweep(4)).threads(1).run();
}

TEST(CpuWinograd, RejectsNon3x3WithReason) {
  const Algorithm& a = get_algorithm("cpu.winograd_f4x3");
  for (const char* d : {"mb1ic4ih9oc4kh5ph2", "mb1ic4ih9oc4kh3sh2", "mb1ic4ih9oc4kh3dh1"}) {
    const Support s = a.supports(parse_problem(d), Direction::fwd);
    EXPECT_FALSE(s.ok) << d;
    EXPECT_FALSE(s.reason.empty()) << d;
  }
}

}  // namespace
}  // namespace convlab
