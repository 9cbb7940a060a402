// cpu.winograd_f{2,4,6}x3: sweeps around each tile size (outputs one below /
// equal / one above m, ragged H != W), pads 0/1/2 (bwd-data pad' = 2 - pad
// crops at pad 2 ... and beyond), groups, channel counts around the vector
// width 16 and the micro-kernel tiles (12 x 32, 6 x 16, 4 x 16), several chunks of tiles; all
// three directions, bit-identical reruns; both schedules of the forward-like
// directions (tile blocks per thread with few channels, phase by phase with many).
#include <gtest/gtest.h>

#include <string>

#include "algorithms/registry.hpp"
#include "convlab/testing.hpp"

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
      p.pad_h = p.pad_w = p.pad_h_end = p.pad_w_end = pad;
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
  // The two schedules the plan picks from the layer: few channels on a large,
  // odd-sized image (tile blocks through all three phases per thread; batch 1
  // and 2) and many channels on a small image (phase by phase over the chunk).
  v.push_back({"large_image_few_channels", parse_problem("mb2ic8ih57iw61oc12kh3ph1")});
  v.push_back({"large_image_batch1", parse_problem("mb1ic32ih45oc32kh3ph1")});
  v.push_back({"many_channels_small_image", parse_problem("mb2ic200ih7oc260kh3ph1")});
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

// The measurement behind CpuWinograd::tolerance(): max |y - ref| / max_i sum|terms|_i
// over AlexNet's 3x3 layers (alexnet, alexnet-owt; batch 2) and a random 3x3
// sweep (48 problems), the tile sweeps above and the tester's 3x3 edge shapes,
// per variant and direction. Run with --gtest_also_run_disabled_tests.
#include "algorithms/execute.hpp"
#include "core/layers.hpp"

namespace convlab {
namespace {

TEST(CpuWinograd, DISABLED_MeasureAccuracy) {
  std::vector<testing::TestProblem> probs;
  for (const char* net : {"alexnet", "alexnet-owt"})
    for (auto& l : network_layers(net, 2))
      if (l.problem.r == 3) probs.push_back({l.id, l.problem});
  uint64_t state = 12345;
  auto next = [&](int lo, int hi) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return lo + int((state >> 33) % uint64_t(hi - lo + 1));
  };
  for (int m : {2, 4, 6})
    for (auto& tp : tile_sweep(m)) probs.push_back(tp);
  for (auto& tp : testing::edge_sweep())
    if (get_algorithm("cpu.winograd_f2x3").supports(tp.problem, Direction::fwd)) probs.push_back(tp);
  for (int i = 0; i < 48; ++i) {
    ConvProblem p;
    p.groups = next(1, 2);
    p.n = next(1, 3);
    p.c = p.groups * next(1, 64);
    p.k = p.groups * next(1, 64);
    p.h = next(1, 30);
    p.w = next(1, 30);
    p.r = p.s = 3;
    p.pad_h = p.pad_h_end = next(0, 2);
    p.pad_w = p.pad_w_end = next(0, 2);
    if (!p.validate().empty()) continue;
    probs.push_back({"random" + std::to_string(i), p});
  }
  for (const char* name : {"cpu.winograd_f2x3", "cpu.winograd_f4x3", "cpu.winograd_f6x3"}) {
    const Algorithm& a = get_algorithm(name);
    for (Direction dir : kAllDirections) {
      double worst = 0;
      std::string where;
      for (auto& tp : probs) {
        ConvData data = ConvData::random(tp.problem, 7);
        const Reference ref = compute_reference(tp.problem, dir, data);
        ConvRunner runner(a, tp.problem, dir, ExecContext{});
        runner.upload(data);
        runner.run();
        ConvData out(tp.problem);
        runner.download_output(out);
        const ErrorStats st = compare(out.output(dir).data(), ref, Tolerance{0, 1, "global"});
        if (st.worst_ratio > worst) {
          worst = st.worst_ratio;
          where = tp.label + " [" + tp.problem.key() + "]";
        }
      }
      std::printf("%s %-10s max|err|/max sum|terms| = %.3e  (%.2f eps)  at %s\n", name,
                  std::string(to_string(dir)).c_str(), worst, worst / FLT_EPSILON, where.c_str());
    }
  }
}

}  // namespace
}  // namespace convlab
