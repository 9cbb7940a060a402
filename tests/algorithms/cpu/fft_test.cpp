// cpu.fft, cpu.fft_tiled and cpu.fft_fftw beyond the registry sweep: output
// sizes around the overlap-save tile steps, whole-image sizes that need radix
// 3 and 5 (L = 12, 15, 25, 30, 45 ...), groups, padding up to and beyond the
// filter, channel counts around the 16-lane blocks, and AlexNet conv2 at batch 2.
// Plus the accuracy measurement behind the declared tolerances (printed).
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>

#include "algorithms/cpu/fft.hpp"
#include "algorithms/execute.hpp"
#include "algorithms/registry.hpp"
#include "core/layers.hpp"
#include "kernels/cpu/fft/fft.hpp"
#include "convlab/testing.hpp"

namespace convlab {
namespace {

using testing::TestProblem;

ConvProblem P(const char* s) { return parse_problem(s); }

std::vector<TestProblem> fft_sweep() {
  std::vector<TestProblem> v = {
      {"radix3_L12", P("mb2ic3ih11oc4kh3ph1")},          // 11+1 -> 12
      {"radix35_L15", P("mb2ic5ih13oc6kh5ph2")},         // 13+2 -> 15
      {"radix5_L25", P("mb1ic3ih23oc5kh5ph2")},          // 23+2 -> 25
      {"radix235_L30", P("mb1ic4ih27oc3kh5ph2")},        // 27+2 -> 29 -> 30
      {"L45_rect", P("mb1ic2ih43iw17oc3kh3kw5ph2pw1")},  // 45 x 18
      {"odd_hw", P("mb2ic3ih9iw11oc5kh3kw5ph1pw2")},
      {"pad0", P("mb2ic3ih10oc4kh5")},
      {"pad3_k3", P("mb1ic2ih6oc3kh3ph3")},  // pad beyond the filter
      {"pad_hw", P("mb1ic3ih12iw9oc4kh3kw3ph2pw0")},
      {"k7", P("mb1ic3ih20oc4kh7ph3")},
      {"k11", P("mb1ic2ih24oc3kh11ph5")},
      {"groups2", P("g2mb2ic8ih13oc12kh3ph1")},
      {"groups3", P("g3mb1ic9ih10oc6kh5ph2")},
      {"depthwise", P("g6mb2ic6ih9oc6kh3ph1")},
      {"channels_15_17", P("mb1ic15ih7oc17kh3ph1")},
      {"channels_16_33", P("mb2ic16ih6oc33kh3ph1")},
      {"groups2_c40_k36", P("g2mb1ic40ih8oc36kh3ph1")},
      {"batch7", P("mb7ic2ih5oc3kh3ph1")},
      {"alexnet_conv2_b2", network_layer("alexnet.conv2", 2).problem},
  };
  // Outputs one below / at / one above the overlap-save steps T-R+1 of the
  // common tile sizes (8: 6, 16: 14, 32: 30 for 3x3; 16: 12 for 5x5).
  for (int out : {5, 6, 7, 13, 14, 15, 29, 30, 31}) {
    ConvProblem p = P("mb1ic3ih4oc4kh3ph1");
    p.h = out;
    p.w = out + 2;
    v.push_back({"tile3_" + std::to_string(out), p});
  }
  for (int out : {11, 12, 13, 25}) {
    ConvProblem p = P("mb1ic2ih4oc3kh5ph2");
    p.h = out;
    p.w = out;
    v.push_back({"tile5_" + std::to_string(out), p});
  }
  return v;
}

TEST(CpuFft, Sweep) { testing::ConvTester("cpu.fft").sweep(fft_sweep()).require_all_supported().run(); }
TEST(CpuFftTiled, Sweep) { testing::ConvTester("cpu.fft_tiled").sweep(fft_sweep()).require_all_supported().run(); }
TEST(CpuFftFftw, Sweep) { testing::ConvTester("cpu.fft_fftw").sweep(fft_sweep()).require_all_supported().run(); }

TEST(CpuFft, Determinism) {
  for (const char* name : {"cpu.fft", "cpu.fft_tiled", "cpu.fft_fftw"})
    testing::ConvTester(name)
        .sweep({{"groups2", P("g2mb2ic8ih13oc12kh3ph1")}, {"k5", P("mb2ic17ih19oc18kh5ph2")}})
        .check_determinism()
        .threads(2)
        .run();
}

TEST(CpuFft, RejectsStrideAndDilationWithReason) {
  const Algorithm& a = get_algorithm("cpu.fft");
  const Support s1 = a.supports(P("mb1ic3ih11oc4kh3sh2"), Direction::fwd);
  EXPECT_FALSE(s1.ok);
  EXPECT_NE(s1.reason.find("stride"), std::string::npos);
  const Support s2 = a.supports(P("mb1ic3ih11oc4kh3dh1"), Direction::bwd_data);
  EXPECT_FALSE(s2.ok);
  EXPECT_NE(s2.reason.find("dilation"), std::string::npos);
}

TEST(CpuFft, GeometryChoices) {
  const ConvProblem c2 = network_layer("alexnet.conv2", 32).problem;
  const FftGeometry g = whole_image_geometry(c2, Direction::fwd);
  EXPECT_TRUE(cpu::fft::is_smooth(g.h.t));
  EXPECT_GE(g.h.t, 29);
  const FftGeometry t = tiled_geometry(network_layer("vgg16.conv1_2", 1).problem, Direction::fwd);
  EXPECT_GT(t.h.tiles, 1);
  EXPECT_LE(t.h.t, 64);
}

// Accuracy measurement (the numbers behind tolerance()): max |y - ref| over
// max_i sum|terms|_i, per algorithm and direction. Default: AlexNet's stride-1
// layers at batch 1 and 40 random stride-1 problems; CONVLAB_FFT_MEASURE=1 adds
// batch 2 and 60 random problems (the measured worst in docs/algorithms.md). Prints a table and
// checks the declared global bound.
TEST(CpuFft, MeasureAccuracy) {
  const bool full = std::getenv("CONVLAB_FFT_MEASURE") != nullptr;
  std::vector<TestProblem> probs;
  for (const char* net : {"alexnet", "alexnet-owt"})
    for (auto& l : network_layers(net, full ? 2 : 1))
      if (l.problem.stride_h == 1) probs.push_back({l.id, l.problem});
  for (auto& t : testing::random_sweep(7, full ? 60 : 40)) {
    ConvProblem p = t.problem;
    p.stride_h = p.stride_w = p.dil_h = p.dil_w = 1;
    if (p.validate().empty()) probs.push_back({t.label, p});
  }
  const char* names[] = {"cpu.fft", "cpu.fft_tiled", "cpu.fft_fftw"};
  double worst[3][3] = {};
  std::string where[3][3];
  for (auto& tp : probs) {
    const ConvData data = ConvData::random(tp.problem, 99);
    for (int di = 0; di < 3; ++di) {
      const Direction d = kAllDirections[di];
      const Reference ref = compute_reference(tp.problem, d, data);
      for (int ai = 0; ai < 3; ++ai) {
        ConvRunner r(get_algorithm(names[ai]), tp.problem, d, ExecContext{});
        r.upload(data);
        r.run();
        ConvData out(tp.problem);
        r.download_output(out);
        const ErrorStats st = compare(out.output(d).data(), ref, Tolerance{0, 1.0, "measure"});
        if (st.worst_ratio > worst[ai][di]) {
          worst[ai][di] = st.worst_ratio;
          where[ai][di] = tp.label;
        }
      }
    }
  }
  for (int ai = 0; ai < 3; ++ai)
    for (int di = 0; di < 3; ++di) {
      const Direction d = kAllDirections[di];
      std::printf("%-14s %-10s max|err|/max_mag = %.3e (%.2f eps) at %s\n", names[ai],
                  std::string(to_string(d)).c_str(), worst[ai][di], worst[ai][di] / FLT_EPSILON,
                  where[ai][di].c_str());
      const Tolerance tol = get_algorithm(names[ai]).tolerance(probs.front().problem, d);
      EXPECT_LE(worst[ai][di], tol.global) << names[ai] << " " << to_string(d);
    }
}

}  // namespace
}  // namespace convlab
