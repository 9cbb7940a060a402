// The per-stage profile (core/stage_profile.hpp, profile_stages in
// algorithms/execute.hpp): every CPU algorithm gives one, the composed ones
// stage by stage with their work counted by the documented rules, and
// profiling only observes (the output is the same bits).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <set>
#include <string>

#include "algorithms/execute.hpp"
#include "algorithms/registry.hpp"
#include "core/error.hpp"

namespace convlab {
namespace {

// Algorithms that record their own stages: a compute stage (GEMM) between memory ones.
const std::set<std::string> kStaged = {"cpu.im2col_gemm", "cpu.im2col_openblas", "cpu.fft",           "cpu.fft_tiled",
                                       "cpu.fft_fftw",    "cpu.winograd_f2x3",   "cpu.winograd_f4x3", "cpu.winograd_f6x3"};

TEST(StageProfile, EveryCpuAlgorithmEveryDirection) {
  const ConvProblem p = parse_problem("g2mb2ic8ih12oc16oh12kh3ph1");  // 3x3 s1: every CPU family supports it
  for (const Algorithm* a : registry()) {
    if (a->device() != DeviceKind::cpu || a->name() == "cpu.reference" || !a->unavailable_reason().empty()) continue;
    for (Direction dir : kAllDirections) {
      if (!a->supports(p, dir)) continue;
      SCOPED_TRACE(std::string(a->name()) + " " + std::string(to_string(dir)));
      const std::vector<StageRecord> st = profile_stages(*a, p, dir, ExecContext{}, 3);
      ASSERT_FALSE(st.empty());
      int compute = 0;
      for (const StageRecord& s : st) {
        EXPECT_FALSE(s.name.empty());
        EXPECT_TRUE(std::isfinite(s.seconds) && s.seconds >= 0) << s.name;
        EXPECT_GE(s.flops, 0) << s.name;
        EXPECT_GT(s.bytes, 0) << s.name;
        EXPECT_GE(s.calls, 1) << s.name;
        compute += s.kind == StageKind::compute;
      }
      if (kStaged.count(std::string(a->name()))) {
        EXPECT_GE(st.size(), 2u);
        EXPECT_EQ(compute, 1) << "one arithmetic stage (the GEMM), the rest data movement";
      } else {
        ASSERT_EQ(st.size(), 1u);
        EXPECT_EQ(st[0].name, "whole run");
        EXPECT_DOUBLE_EQ(st[0].flops, p.flops());
      }
    }
  }
}

const StageRecord& stage(const std::vector<StageRecord>& st, const std::string& name) {
  for (const StageRecord& s : st)
    if (s.name == name) return s;
  ADD_FAILURE() << "no stage '" << name << "'";
  static const StageRecord none;
  return none;
}

TEST(StageProfile, GemmStagesCountTheArithmetic) {
  // im2col + GEMM: the GEMMs are the direct convolution's flops exactly, in every direction.
  const ConvProblem p = parse_problem("g2mb3ic6ih9oc8oh9kh3ph1");
  for (Direction dir : kAllDirections)
    EXPECT_DOUBLE_EQ(stage(profile_stages(*find_algorithm("cpu.im2col_gemm"), p, dir, ExecContext{}, 1), "GEMM").flops,
                     p.flops());
  // Winograd F(4x4): 36 GEMMs of tiles x K x C/g per group; 12x12 outputs = 3x3 tiles of 4x4 per image.
  const ConvProblem w = parse_problem("g2mb3ic6ih12oc8oh12kh3ph1");
  const double tiles = 3.0 * 3 * 3;
  for (Direction dir : kAllDirections)
    EXPECT_DOUBLE_EQ(
        stage(profile_stages(*find_algorithm("cpu.winograd_f4x3"), w, dir, ExecContext{}, 1), "batched GEMM").flops,
        2.0 * 36 * tiles * 8 * 3);
  // FFT: 8 flops per complex multiply-add, every frequency of the Lh x (Lw/2 + 1) spectrum, msig x Cg x Kg per group.
  const ConvProblem f = parse_problem("mb2ic4ih10oc6oh10kh3ph1");  // whole image: L = smooth >= 12 -> 12
  const double freqs = 12.0 * (12 / 2 + 1);
  EXPECT_DOUBLE_EQ(stage(profile_stages(*find_algorithm("cpu.fft"), f, Direction::fwd, ExecContext{}, 1),
                         "complex GEMM").flops,
                   8.0 * freqs * 2 * 4 * 6);
}

TEST(StageProfile, ProfilingOnlyObserves) {
  const ConvProblem p = parse_problem("mb2ic16ih14oc32oh14kh3ph1");
  for (const char* name : {"cpu.im2col_gemm", "cpu.fft", "cpu.winograd_f4x3"}) {
    const Algorithm& a = *find_algorithm(name);
    for (Direction dir : kAllDirections) {
      SCOPED_TRACE(std::string(name) + " " + std::string(to_string(dir)));
      const ConvData in = ConvData::random(p, 7);
      ConvRunner r(a, p, dir, ExecContext{});
      r.upload(in);
      r.run();
      ConvData plain(p), profiled(p);
      r.download_output(plain);
      StageProfile prof;
      r.run_profiled(&prof);
      r.download_output(profiled);
      EXPECT_FALSE(prof.stages().empty());
      const Tensor& x = plain.output(dir);
      const Tensor& y = profiled.output(dir);
      ASSERT_EQ(x.size(), y.size());
      EXPECT_EQ(std::memcmp(x.data(), y.data(), size_t(x.size()) * sizeof(float)), 0);
    }
  }
}

TEST(StageProfile, RecordsAccumulateByName) {
  StageProfile p;
  p.add("a", StageKind::memory, 1.0, 0, 10);
  p.add("b", StageKind::compute, 2.0, 5, 1);
  p.add("a", StageKind::memory, 0.5, 0, 10);
  ASSERT_EQ(p.stages().size(), 2u);
  EXPECT_EQ(p.stages()[0].name, "a");
  EXPECT_DOUBLE_EQ(p.stages()[0].seconds, 1.5);
  EXPECT_DOUBLE_EQ(p.stages()[0].bytes, 20);
  EXPECT_EQ(p.stages()[0].calls, 2);
  EXPECT_DOUBLE_EQ(p.total_seconds(), 3.5);
  StageClock off(nullptr);
  off.lap("x", StageKind::compute, 1, 1);  // inert without a profile
  EXPECT_FALSE(off.active());
}

TEST(StageProfile, CpuOnly) {
  for (const Algorithm* a : registry())
    if (a->device() == DeviceKind::cuda) {
      EXPECT_THROW(profile_stages(*a, parse_problem("mb1ic4ih8oc4oh8kh3ph1"), Direction::fwd, ExecContext{}), Error);
      break;
    }
}

}  // namespace
}  // namespace convlab
