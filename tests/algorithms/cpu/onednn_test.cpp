// onednn.*: sweeps around oneDNN's blocking (channels around 16, grouped
// and depthwise blocked kernels), Winograd's own sweep (3x3 stride 1, tile
// edges), thread counts, and the honesty of supports().
#ifdef CONVLAB_HAS_ONEDNN
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <thread>

#include "algorithms/cpu/onednn.hpp"
#include "algorithms/execute.hpp"
#include "algorithms/registry.hpp"
#include "core/layers.hpp"
#include "convlab/testing.hpp"

namespace convlab {
namespace {

using testing::ConvTester;
using testing::TestProblem;

ConvProblem P(const char* desc) { return parse_problem(desc); }

const CpuOnednn& onednn(const char* name) { return dynamic_cast<const CpuOnednn&>(get_algorithm(name)); }

// oneDNN's Winograd runs only with AVX-512 (this CPU's, under CONVLAB_ISA):
// tests of it skip with the reason elsewhere (an AVX2-only CPU, CONVLAB_ISA=avx2).
std::string winograd_unavailable() { return onednn("onednn.winograd").unavailable_reason(); }
#define SKIP_WITHOUT_ONEDNN_WINOGRAD()                              \
  do {                                                             \
    if (const std::string why = winograd_unavailable(); !why.empty()) \
      GTEST_SKIP() << "onednn.winograd: " << why;              \
  } while (0)

// Around oneDNN's 16-channel blocking: channel counts one below / at / above,
// grouped and depthwise blocked kernels, 1x1 kernels, the first-layer (plain
// src) kernels, stride and dilation on blocked layouts.
std::vector<TestProblem> blocking_sweep() {
  return {
      {"c15_k17", P("mb2ic15ih7oc17kh3ph1")},
      {"c16_k16", P("mb2ic16ih7oc16kh3ph1")},
      {"c17_k15", P("mb2ic17ih7oc15kh3ph1")},
      {"c33_k48_s2", P("mb2ic33ih9oc48kh3sh2ph1")},
      {"groups2_c16", P("g2mb2ic32ih7oc32kh3ph1")},
      {"groups4_c8", P("g4mb1ic32ih6oc16kh3ph1")},
      {"depthwise16", P("g16mb2ic16ih9oc16kh3ph1")},
      {"depthwise32_s2", P("g32mb1ic32ih10oc32kh3sh2ph1")},
      {"conv1x1_c32", P("mb2ic32ih6oc48kh1")},
      {"conv1x1_c16_s2", P("mb1ic16ih9oc16kh1sh2")},
      {"first_layer_c3", P("mb2ic3ih23oc32kh5sh2ph2")},
      {"dilated_c16", P("mb1ic16ih12oc16kh3ph2dh1")},
      {"asym_hw_c16", P("mb1ic16ih5iw11oc32kh3kw1ph1pw0")},
  };
}

// 3x3 stride-1 problems for oneDNN's F(4x4, 3x3): outputs one below / at / one
// above 4 and 8, channel counts around 16, padding 0 and 1 (per side).
std::vector<TestProblem> winograd_sweep() {
  std::vector<TestProblem> v = {
      {"c16_k16", P("mb2ic16ih8oc16kh3ph1")},
      {"c17_k31", P("mb1ic17ih6oc31kh3ph1")},
      {"c1_k1", P("mb2ic1ih5oc1kh3ph1")},
      {"pad_h_only", P("mb1ic16ih9iw7oc16kh3ph1pw0")},
      {"pad_w_only", P("mb1ic16ih9iw7oc16kh3ph0pw1")},
      {"c64_k32_batch3", P("mb3ic64ih10oc32kh3ph1")},
  };
  for (int out : {3, 4, 5, 7, 8, 9}) {
    ConvProblem p = P("mb1ic16ih4oc16kh3");
    p.h = out + 2;
    p.w = out + 3;
    v.push_back({"out_" + std::to_string(out) + "x" + std::to_string(out + 1), p});
  }
  return v;
}

TEST(OnednnDirect, BlockingEdges) {
  ConvTester("onednn.direct").sweep(blocking_sweep()).require_all_supported().check_determinism().run();
}

TEST(OnednnAuto, BlockingEdges) {
  ConvTester("onednn.auto").sweep(blocking_sweep()).require_all_supported().check_determinism().run();
}

TEST(OnednnWinograd, TileEdges) {
  SKIP_WITHOUT_ONEDNN_WINOGRAD();
  ConvTester("onednn.winograd").sweep(winograd_sweep()).require_all_supported().check_determinism().run();
}

TEST(OnednnAuto, WinogradShapes) {
  ConvTester("onednn.auto").sweep(winograd_sweep()).require_all_supported().run();
}

// Primitives are built per thread count: one thread must work (and give the
// right answer) beside the default.
TEST(OnednnThreads, OneThread) {
  std::vector<TestProblem> few = {blocking_sweep()[1], blocking_sweep()[4], winograd_sweep()[0]};
  for (const char* a : {"onednn.direct", "onednn.auto"}) ConvTester(a).sweep(few).threads(1).run();
}

TEST(OnednnThreads, OneThreadWinograd) {
  SKIP_WITHOUT_ONEDNN_WINOGRAD();
  ConvTester("onednn.winograd").sweep({winograd_sweep()[0], winograd_sweep()[1]}).threads(1).run();
}

// The plan cache is shared: callers on several threads at once, on the same
// and on new (problem, direction, threads) keys, each get a correct answer.
TEST(OnednnThreads, ConcurrentCallers) {
  const std::vector<TestProblem> probs = {winograd_sweep()[0], blocking_sweep()[2]};
  for (const char* a : {"onednn.direct", "onednn.winograd"}) {
    const Algorithm& algo = get_algorithm(a);
    for (Direction dir : kAllDirections)
      for (const auto& tp : probs) {
        const ConvProblem p = tp.problem.with_batch(3 + direction_index(dir));  // keys no other test has built
        if (!algo.supports(p, dir)) continue;
        const ConvData in = ConvData::random(p, 5);
        const Reference ref = compute_reference(p, dir, in);
        std::vector<ConvData> outs;
        for (int i = 0; i < 4; ++i) outs.emplace_back(p);
        std::vector<std::string> errors(4);
        std::vector<std::thread> workers;
        for (int i = 0; i < 4; ++i)
          workers.emplace_back([&, i] {
            try {
              ExecContext ctx;
              ctx.threads = 1 + i % 2;  // 2 also where this process has 1 CPU: run() then uses 1
              ConvRunner runner(algo, p, dir, ctx);
              runner.upload(in);
              runner.poison();
              runner.run();
              runner.download_output(outs[size_t(i)]);
            } catch (const std::exception& e) {
              errors[size_t(i)] = e.what();
            }
          });
        for (auto& w : workers) w.join();
        for (int i = 0; i < 4; ++i) {
          ASSERT_EQ(errors[size_t(i)], "") << a << " " << to_string(dir) << " " << tp.label << " caller " << i;
          const ErrorStats st = compare(outs[size_t(i)].output(dir).data(), ref, algo.tolerance(p, dir));
          EXPECT_TRUE(st.passed()) << a << " " << to_string(dir) << " " << tp.label << " caller " << i
                                   << ": worst error/bound " << st.worst_ratio;
        }
      }
  }
}

TEST(OnednnSupports, WinogradRejectionsSayWhy) {
  SKIP_WITHOUT_ONEDNN_WINOGRAD();
  const auto& wino = onednn("onednn.winograd");
  struct Case { const char* problem; const char* says; };
  for (auto [problem, says] : {Case{"g2mb1ic32ih8oc32kh3ph1", "groups 2"}, Case{"mb1ic16ih9oc16kh3sh2ph1", "stride 2x2"},
                               Case{"mb1ic16ih9oc16kh5ph2", "5x5 filter"}, Case{"mb1ic16ih9oc16kh3ph2dh1", "dilation"},
                               Case{"mb1ic16ih9oc16kh3ph2", "padding 2x2"}}) {
    for (Direction d : kAllDirections) {
      const Support s = wino.supports(P(problem), d);
      EXPECT_FALSE(s) << problem;
      EXPECT_NE(s.reason.find("oneDNN has no Winograd for this problem"), std::string::npos) << s.reason;
      EXPECT_NE(s.reason.find(says), std::string::npos) << problem << ": " << s.reason;
    }
  }
  // AlexNet's grouped 3x3 layers (alexnet.conv4/5, groups 2) are rejected, its conv3 is taken.
  EXPECT_FALSE(wino.supports(network_layer("alexnet.conv4", 2).problem, Direction::fwd));
  EXPECT_TRUE(wino.supports(network_layer("alexnet.conv3", 2).problem, Direction::fwd));
}

// What supports() accepts is what oneDNN runs: Winograd's implementation is a
// Winograd one, in every direction.
TEST(OnednnSupports, WinogradIsWinograd) {
  SKIP_WITHOUT_ONEDNN_WINOGRAD();
  const auto& wino = onednn("onednn.winograd");
  for (const auto& tp : winograd_sweep())
    for (Direction d : kAllDirections) {
      ASSERT_TRUE(wino.supports(tp.problem, d)) << tp.label;
      EXPECT_NE(wino.implementation(tp.problem, d).find("wino"), std::string::npos)
          << tp.label << ": " << wino.implementation(tp.problem, d);
    }
}

// convolution_auto may choose Winograd, never fewer problems than direct; direct
// (with oneDNN's reference kernels behind its JIT ones) takes every valid problem.
TEST(OnednnSupports, AutoAndDirectCoverEverything) {
  const auto& direct = onednn("onednn.direct");
  const auto& autom = onednn("onednn.auto");
  auto all = testing::standard_sweep();
  for (auto& t : blocking_sweep()) all.push_back(t);
  for (auto& t : winograd_sweep()) all.push_back(t);
  for (const auto& tp : all)
    for (Direction d : kAllDirections) {
      const Support s = direct.supports(tp.problem, d);
      EXPECT_TRUE(s) << tp.label << " " << to_string(d) << ": " << s.reason;
      if (s) {
        EXPECT_TRUE(autom.supports(tp.problem, d)) << tp.label << " " << to_string(d);
      }
    }
}

TEST(OnednnSupports, InvalidProblemIsRejectedWithItsReason) {
  ConvProblem bad = P("mb1ic4ih8oc4kh3");
  bad.groups = 3;  // 4 channels in 3 groups
  for (const char* a : {"onednn.direct", "onednn.winograd", "onednn.auto"}) {
    const Support s = onednn(a).supports(bad, Direction::fwd);
    EXPECT_FALSE(s) << a;
    EXPECT_EQ(s.reason, bad.validate()) << a;
  }
}

// The declared Winograd bound is a measured one (see onednn.cpp); the global
// term is what allows the transforms' mixing, and it is not zero.
TEST(OnednnTolerance, WinogradDeclaresMeasuredBound) {
  const ConvProblem p = P("mb1ic16ih8oc16kh3ph1");
  const Tolerance direct = onednn("onednn.direct").tolerance(p, Direction::fwd);
  const Tolerance wino = onednn("onednn.winograd").tolerance(p, Direction::fwd);
  EXPECT_EQ(direct.elem, summation_tolerance(p, Direction::fwd).elem);
  EXPECT_EQ(direct.global, 0);
  EXPECT_EQ(wino.elem, direct.elem);
  EXPECT_DOUBLE_EQ(wino.global, 16 * double(FLT_EPSILON));
  // auto: Winograd's bound where Winograd applies (oneDNN may pick it), K*eps elsewhere;
  // without AVX-512 (or under CONVLAB_ISA=avx2) auto cannot pick Winograd: K*eps everywhere.
  const double auto_global = onednn("onednn.auto").tolerance(p, Direction::fwd).global;
  if (winograd_unavailable().empty())
    EXPECT_DOUBLE_EQ(auto_global, wino.global);
  else
    EXPECT_EQ(auto_global, 0) << "auto claims Winograd's bound where Winograd cannot run: " << winograd_unavailable();
  EXPECT_EQ(onednn("onednn.auto").tolerance(P("mb1ic16ih8oc16kh3sh2ph1"), Direction::fwd).global, 0);
}

// "Available here" follows the (capped) CPU: oneDNN's Winograd exactly where
// convlab's ISA is avx512, with the ISA named in the reason otherwise, and
// supports() answers the same reason for every problem. Runs both ways in CI:
// plain and under CONVLAB_ISA=avx2 (tests/algorithms/cpu/CMakeLists.txt).
TEST(OnednnAvailability, WinogradFollowsTheIsa) {
  const auto& wino = onednn("onednn.winograd");
  const std::string why = wino.unavailable_reason();
  EXPECT_TRUE(onednn("onednn.direct").unavailable_reason().empty()) << onednn("onednn.direct").unavailable_reason();
  EXPECT_TRUE(onednn("onednn.auto").unavailable_reason().empty()) << onednn("onednn.auto").unavailable_reason();
  if (cpu_info().isa() == "avx512") {
    EXPECT_TRUE(why.empty()) << why;
    return;
  }
  EXPECT_NE(why.find("oneDNN's Winograd needs AVX-512"), std::string::npos) << why;
  EXPECT_NE(why.find("has " + cpu_info().isa()), std::string::npos) << why;
  for (Direction d : kAllDirections) {
    const Support s = wino.supports(P("mb1ic16ih8oc16kh3ph1"), d);
    EXPECT_FALSE(s) << to_string(d);
    EXPECT_EQ(s.reason, why);
  }
  // auto runs there, and what oneDNN picks for it is no Winograd.
  const ConvProblem p = winograd_sweep()[0].problem;
  ASSERT_TRUE(onednn("onednn.auto").supports(p, Direction::fwd));
  EXPECT_EQ(onednn("onednn.auto").implementation(p, Direction::fwd).find("wino"), std::string::npos);
}

// oneDNN is capped with convlab: under CONVLAB_ISA below avx512 no oneDNN
// kernel is an AVX-512 one, and oneDNN's effective ISA says so.
TEST(OnednnAvailability, OnednnFollowsTheIsaCap) {
  const std::string isa = cpu_info().isa();
  const std::string dnnl = onednn_cpu_isa();
  if (isa == "avx512") {
    EXPECT_EQ(dnnl.rfind("avx512_core", 0), 0u) << dnnl;
    return;
  }
  EXPECT_EQ(dnnl.find("avx512"), std::string::npos) << dnnl;
  if (isa == "avx2") {
    EXPECT_EQ(dnnl.rfind("avx2", 0), 0u) << dnnl;
  }
  for (const auto& tp : blocking_sweep())
    for (const char* a : {"onednn.direct", "onednn.auto"}) {
      const std::string impl = onednn(a).implementation(tp.problem, Direction::fwd);
      EXPECT_EQ(impl.find("avx512"), std::string::npos) << a << " " << tp.label << ": " << impl;
    }
}

// Every Winograd rejection over the standard sweep is one the known limits
// explain (groups, filter size, stride, dilation, padding), none unexplained.
TEST(OnednnSupports, WinogradRejectionsAreExplained) {
  SKIP_WITHOUT_ONEDNN_WINOGRAD();
  const auto& wino = onednn("onednn.winograd");
  int taken = 0;
  for (const auto& tp : testing::standard_sweep())
    for (Direction d : kAllDirections) {
      const Support s = wino.supports(tp.problem, d);
      if (s) {
        ++taken;
        continue;
      }
      EXPECT_EQ(s.reason.rfind("oneDNN has no Winograd for this problem (", 0), 0u) << tp.label << ": " << s.reason;
    }
  EXPECT_GT(taken, 0);
}

// 3x3 stride-1 problems oneDNN's Winograd takes: AlexNet's (both variants) at
// batch 2 and `random` seeded ones (channels 1..64, images 1..24, pad 0..1).
std::vector<TestProblem> winograd_measure_sweep(uint64_t seed, int random) {
  std::vector<TestProblem> v;
  for (auto& t : testing::alexnet_sweep(2))
    if (t.problem.r == 3 && t.problem.groups == 1) v.push_back(t);
  uint64_t state = seed;
  auto next = [&](int lo, int hi) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return lo + int((state >> 33) % uint64_t(hi - lo + 1));
  };
  while (int(v.size()) < random + 4) {
    ConvProblem p = P("mb1ic1ih8oc1kh3");
    p.n = next(1, 3);
    p.c = next(1, 64);
    p.k = next(1, 64);
    p.h = next(1, 24);
    p.w = next(1, 24);
    p.pad_h = p.pad_h_end = next(0, 1);
    p.pad_w = p.pad_w_end = next(0, 1);
    if (!p.validate().empty()) continue;
    v.push_back({"wino_random" + std::to_string(v.size()), p});
  }
  return v;
}

// Measures the error of onednn.winograd against the fp64 reference, in
// units of eps: per element err/sum|terms|, and what remains over the K*eps
// summation bound relative to the largest sum|terms| of the output — the
// numbers behind its declared tolerance (onednn.cpp). Slow (fp64 reference on
// AlexNet layers); run with --gtest_also_run_disabled_tests, vary CONVLAB_TEST_SEED.
TEST(OnednnMeasure, DISABLED_WinogradError) {
  const Algorithm& algo = get_algorithm("onednn.winograd");
  const double eps = FLT_EPSILON;
  for (Direction dir : kAllDirections) {
    double worst_elem = 0, worst_global = 0, worst_resid = 0;
    for (const auto& tp : winograd_measure_sweep(testing::test_seed(), 60)) {
      const ConvProblem& p = tp.problem;
      ASSERT_TRUE(algo.supports(p, dir)) << tp.label;
      const ConvData in = ConvData::random(p, testing::test_seed() + 7);
      const Reference ref = compute_reference(p, dir, in);
      ConvData out(p);
      ConvRunner runner(algo, p, dir, ExecContext{});
      runner.upload(in);
      runner.poison();
      runner.run();
      runner.download_output(out);
      const float* y = out.output(dir).data();
      const double kk = double(p.reduction_length(dir));
      double e_elem = 0, e_global = 0, e_resid = 0;
      for (size_t i = 0; i < ref.value.size(); ++i) {
        const double err = std::fabs(double(y[i]) - ref.value[i]);
        if (ref.mag[i] > 0) e_elem = std::max(e_elem, err / ref.mag[i] / eps);
        e_global = std::max(e_global, err / ref.max_mag / eps);
        e_resid = std::max(e_resid, std::max(0.0, err - kk * eps * ref.mag[i]) / ref.max_mag / eps);
      }
      const ErrorStats st = compare(y, ref, algo.tolerance(p, dir));
      EXPECT_TRUE(st.passed()) << tp.label << " " << to_string(dir) << ": worst error/bound " << st.worst_ratio;
      std::printf("%-10s %-18s %-40s K=%-7.0f err/mag %8.2f eps  err/maxmag %7.3f eps  over K*eps: %7.3f eps\n",
                  std::string(to_string(dir)).c_str(), tp.label.c_str(), p.key().c_str(), kk, e_elem, e_global, e_resid);
      worst_elem = std::max(worst_elem, e_elem);
      worst_global = std::max(worst_global, e_global);
      worst_resid = std::max(worst_resid, e_resid);
    }
    std::printf("%s: worst err/mag %.2f eps, err/maxmag %.3f eps, over K*eps %.3f eps\n",
                std::string(to_string(dir)).c_str(), worst_elem, worst_global, worst_resid);
  }
}

}  // namespace
}  // namespace convlab
#endif  // CONVLAB_HAS_ONEDNN
