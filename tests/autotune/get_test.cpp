// get: the cost model ranks the way arithmetic says it should, calibration
// moves predictions toward measurements, and the get-vs-find comparison.
#include <gtest/gtest.h>

#include <vector>

#include "algorithms/registry.hpp"
#include "autotune/get.hpp"
#include "autotune/probe.hpp"
#include "core/problem.hpp"
#include "tests/autotune/planted.hpp"

namespace convlab {
namespace {

using testing::Planted;

TEST(Get, WinogradBeatsGemmOnWide3x3AndLosesOnThin) {
  Planted gemm("test.gemm", "gemm"), wino("test.winograd_f4x3", "winograd");
  const ExecContext ctx;
  const ConvProblem wide = parse_problem("mb8ic256ih28oc256oh28kh3ph1");
  auto ranked = get(wide, Direction::fwd, ctx, size_t(-1), nullptr, {&gemm, &wino});
  ASSERT_EQ(ranked.size(), 2u);
  EXPECT_EQ(ranked[0].algo, "test.winograd_f4x3") << ranked[0].note << "\n" << ranked[1].note;
  EXPECT_TRUE(std::isnan(ranked[0].max_rel_error));  // nothing ran
  EXPECT_EQ(gemm.runs.load() + wino.runs.load(), 0);
  // Three input channels: the transforms dominate, GEMM wins.
  const ConvProblem thin = parse_problem("mb8ic3ih28oc8oh28kh3ph1");
  ranked = get(thin, Direction::fwd, ctx, size_t(-1), nullptr, {&gemm, &wino});
  EXPECT_EQ(ranked[0].algo, "test.gemm") << ranked[0].note << "\n" << ranked[1].note;
}

TEST(Get, FftWinsOnLargeFiltersOverDirect) {
  Planted direct("test.direct", "direct"), fft("test.fft", "fft");
  const ConvProblem big = parse_problem("mb8ic64ih32oc64oh32kh11ph5");
  const auto ranked = get(big, Direction::fwd, ExecContext{}, size_t(-1), nullptr, {&direct, &fft});
  EXPECT_EQ(ranked[0].algo, "test.fft") << ranked[0].note << "\n" << ranked[1].note;
}

TEST(Get, PredictionScalesWithBatchAndRespectsLimits) {
  Planted gemm("test.gemm", "gemm"), big("test.big", "gemm"), no("test.no", "gemm");
  big.extra_workspace = 1 << 30;
  no.support_reason = "never";
  const ConvProblem p = parse_problem("mb4ic64ih28oc64oh28kh3ph1");
  const MachineModel m = MachineModel::for_context(ExecContext{});
  EXPECT_GT(m.peak_flops, 0);
  EXPECT_GT(m.bandwidth, 0);
  const double t4 = model_cost(gemm, p, Direction::fwd, m).seconds;
  const double t8 = model_cost(gemm, p.with_batch(8), Direction::fwd, m).seconds;
  EXPECT_NEAR(t8 / t4, 2.0, 0.2);
  const size_t limit = gemm.workspace_bytes(p, Direction::fwd) + (1 << 20);
  const auto ranked = get(p, Direction::fwd, ExecContext{}, limit, nullptr, {&big, &no, &gemm});
  ASSERT_EQ(ranked.size(), 3u);
  EXPECT_EQ(ranked[0].algo, "test.gemm");
  EXPECT_EQ(ranked[1].status, PerfStatus::over_workspace);
  EXPECT_EQ(ranked[2].status, PerfStatus::unsupported);
  EXPECT_EQ(select(ranked, {})->algo, "test.gemm");
}

TEST(Get, CalibrationFlipsAWrongPrior) {
  // The model prefers Winograd on this layer; measurements say it is 10x slower than predicted.
  Planted gemm("test.gemm", "gemm"), wino("test.winograd_f4x3", "winograd");
  std::vector<const Algorithm*> algos = {&gemm, &wino};
  const ExecContext ctx;
  const MachineModel m = MachineModel::for_context(ctx);
  const ConvProblem train = parse_problem("mb8ic128ih28oc128oh28kh3ph1"), test = parse_problem("mb8ic192ih14oc192oh14kh3ph1");
  auto measured = [&](const Algorithm& a, double factor) {
    AlgoPerf r;
    r.algo = std::string(a.name());
    r.time = model_cost(a, train, Direction::fwd, m).seconds * factor;
    r.workspace = a.workspace_bytes(train, Direction::fwd);  // as find records it (calibration uses the recorded one)
    return r;
  };
  std::vector<Measured> data = {{train, Direction::fwd, {measured(gemm, 1.0), measured(wino, 10.0)}}};
  const Calibration cal = Calibration::fit(data, m, "", &algos);
  EXPECT_EQ(cal.samples(), 2);
  EXPECT_NEAR(cal.factor(wino, Direction::fwd), 10.0, 1e-9);
  EXPECT_NEAR(cal.factor(gemm, Direction::fwd), 1.0, 1e-9);
  // Per algorithm, falling back across directions.
  EXPECT_NEAR(cal.factor(wino, Direction::bwd_data), 10.0, 1e-9);
  EXPECT_EQ(get(test, Direction::fwd, ctx, size_t(-1), nullptr, algos)[0].algo, "test.winograd_f4x3");
  EXPECT_EQ(get(test, Direction::fwd, ctx, size_t(-1), &cal, algos)[0].algo, "test.gemm");
  // Leave-one-out excludes the only data point: back to the prior.
  const Calibration loo = Calibration::fit(data, m, train.key(), &algos);
  EXPECT_EQ(loo.samples(), 0);
  EXPECT_EQ(loo.factor(wino, Direction::fwd), 1.0);
}

// An algorithm that states no cost (the Algorithm defaults), as one registered at run time may be.
class Silent final : public Algorithm {
 public:
  std::string_view name() const override { return "user.silent"; }
  DeviceKind device() const override { return DeviceKind::cpu; }
  std::string_view family() const override { return "gemm"; }
  std::string_view description() const override { return "test-only: states no cost"; }
  Support supports(const ConvProblem&, Direction) const override { return Support::yes(); }
  void run(const ConvProblem&, Direction, const ConvBuffers&, void*, const ExecContext&) const override {}
};

TEST(Get, AnAlgorithmThatStatesNoCostIsListedUnpricedAndNeverPicked) {
  Silent silent;
  Planted gemm("test.gemm", "gemm");
  const ConvProblem p = parse_problem("mb4ic64ih28oc64oh28kh3ph1");
  const ExecContext ctx{DeviceKind::cpu, 3};
  auto check = [&](const char* model) {
    const auto ranked = get(p, Direction::fwd, ctx, size_t(-1), nullptr, {&silent, &gemm});
    ASSERT_EQ(ranked.size(), 2u) << model;
    EXPECT_EQ(ranked[0].algo, "test.gemm") << model;
    EXPECT_EQ(ranked[1].algo, "user.silent") << model;
    EXPECT_EQ(ranked[1].status, PerfStatus::unsupported) << model;
    EXPECT_EQ(ranked[1].note, "the cost model cannot price it: user.silent states no cost (Algorithm::" +
                                  std::string(model) + ")");
    EXPECT_EQ(select(ranked, {})->algo, "test.gemm") << model;
  };
  clear_probes();
  check("nominal_cost");
  // Under a probe too (the kernel rates only: nothing is scaled).
  MachineProbe pr;
  pr.device = device_fingerprint(DeviceKind::cpu, 3);
  for (const std::string& r : probe_required_rates()) pr.rates[r] = 10;
  register_probe(pr);
  check("cost_phases");
  clear_probes();
  // Calibration has nothing to scale: its measurements are left out.
  const std::vector<const Algorithm*> algos = {&silent};
  AlgoPerf measured;
  measured.algo = "user.silent";
  measured.time = 1e-3;
  const Calibration cal = Calibration::fit({{p, Direction::fwd, {measured}}}, MachineModel::for_context(ctx), "", &algos);
  EXPECT_EQ(cal.samples(), 0);
}

// Every registered algorithm states its cost for both models on a problem it supports.
TEST(Get, EveryRegisteredAlgorithmStatesItsCost) {
  const ConvProblem p = parse_problem("mb2ic32ih14oc32oh14kh3ph1");
  int oracles = 0;
  for (const Algorithm* a : registry()) {
    oracles += a->is_oracle();
    EXPECT_EQ(a->nominal_cost(p, Direction::fwd).unpriced, "") << a->name();
    if (a->device() != DeviceKind::cpu || !a->supports(p, Direction::fwd)) continue;
    const Algorithm& who = a->priced_as(p, Direction::fwd);
    const CostPhases c = who.cost_phases(p, Direction::fwd);
    EXPECT_EQ(c.unpriced, "") << a->name();
    EXPECT_FALSE(c.phases.empty()) << a->name();
    EXPECT_FALSE(c.what.empty()) << a->name();
    EXPECT_EQ(find_algorithm(who.name()), &who) << a->name() << " is priced as an unregistered algorithm";
  }
  EXPECT_EQ(oracles, 1);
}

// oneDNN's depthwise kernel puts the channels in the lanes as cpu.direct_depthwise does: on a depthwise layer
// both state the same FMAs and plain-tensor traffic (not the blocked direct kernel's channel blocks), but
// oneDNN reorders the whole tensors into its blocked layout and back where cpu.direct_depthwise blocks a
// band at a time in cache: its band copies become one copy of the blocked tensors, written and read back,
// at the rate of their size.
TEST(Get, OnednnDepthwiseKernelIsPricedAsTheDepthwiseFamily) {
  const ConvProblem p = parse_problem("g32mb2ic32ih28oc32oh28kh3ph1");
  const Algorithm* dw = find_algorithm("cpu.direct_depthwise");
  ASSERT_NE(dw, nullptr);
  int checked = 0;
  for (const char* name : {"onednn.direct", "onednn.auto"}) {
    const Algorithm* a = find_algorithm(name);
    if (!a || !a->supports(p, Direction::fwd)) continue;
    if (a->implementation(p, Direction::fwd).find("dw") == std::string::npos) continue;  // not its depthwise kernel
    ++checked;
    for (Direction d : kAllDirections) {
      const CostPhases mine = a->priced_as(p, d).cost_phases(p, d), ours = dw->cost_phases(p, d);
      EXPECT_EQ(mine.what, ours.what + ", whole tensors reordered") << name << " " << to_string(d);
      std::vector<CostPhase> kept;
      for (const CostPhase& ph : ours.phases)
        if (ph.kind != CostKind::copy_cached) kept.push_back(ph);
      ASSERT_EQ(mine.phases.size(), kept.size() + 1) << name;
      for (size_t i = 0; i < kept.size(); ++i) {
        EXPECT_EQ(mine.phases[i].kind, kept[i].kind) << name;
        EXPECT_EQ(mine.phases[i].work, kept[i].work) << name;
      }
      const double blocked = 4.0 * (double(p.src_elems()) + double(p.dst_elems()));
      EXPECT_EQ(mine.phases.back().kind, CostKind::copy) << name;
      EXPECT_EQ(mine.phases.back().work, 2 * blocked) << name;
      EXPECT_EQ(mine.phases.back().footprint, 2 * blocked) << name;
    }
  }
  if (checked == 0) GTEST_SKIP() << "oneDNN runs no depthwise kernel here";
}

// Under the probe of a 2-core Zen 3 (AVX2; its measured rates, two threads), ResNet-50's 56x56x64 3x3
// layer at batch 16 has F(4x4) Winograd ahead of the tiled FFT, as find measured there (14.5 vs 22.0 ms
// forward, 15.9 vs 23.7 bwd-data): the FFT's spectra and tensors (about 68 MB) spill the cache and go
// through memory, which the probe problem (everything cache-resident) does not show.
TEST(Get, AWorkingSetPastTheCacheMovesAtTheMemoryRate) {
  ExecContext ctx;
  ctx.threads = 2;
  MachineProbe pr;
  pr.device = device_fingerprint(DeviceKind::cpu, 2);
  pr.rates = {
      {"cgemm_gflops", 160.16},
      {"col2im_gbs", 23.398},
      {"copy1_gbs", 61.727},
      {"copy_gbs", 114.699},
      {"dram1_gbs", 21.637},
      {"dram_gbs", 22.916},
      {"fft_fwd_16_us", 2.365},
      {"fft_fwd_32_us", 10.688},
      {"fft_inv_16_us", 2.4},
      {"fft_inv_32_us", 10.774},
      {"fftw_fwd_32_us", 41.021},
      {"fftw_inv_32_us", 45.306},
      {"fma_gflops", 174.199},
      {"im2col_gbs", 18.701},
      {"ukernel_gflops", 200.615},
      {"wino2_dst_gtps", 0.147},
      {"wino2_in_gtps", 0.135},
      {"wino2_out_gtps", 0.379},
      {"wino4_dst_gtps", 0.054},
      {"wino4_in_gtps", 0.049},
      {"wino4_out_gtps", 0.132},
      {"wino6_dst_gtps", 0.027},
      {"wino6_in_gtps", 0.025},
      {"wino6_out_gtps", 0.047},
      {"cpu.fft_tiled|fwd|3x3", 153.948},
      {"cpu.fft_tiled|bwd-data|3x3", 154.667},
      {"cpu.winograd_f4x3|fwd|3x3", 244.497},
      {"cpu.winograd_f4x3|bwd-data|3x3", 242.812},
  };
  clear_probes();
  register_probe(pr);
  const Algorithm& fft = get_algorithm("cpu.fft_tiled");
  const Algorithm& wino = get_algorithm("cpu.winograd_f4x3");
  const ConvProblem layer = parse_problem("mb16ic64ih56oc64oh56kh3ph1");
  for (Direction dir : {Direction::fwd, Direction::bwd_data}) {
    const auto ranked = get(layer, dir, ctx, size_t(-1), nullptr, {&fft, &wino});
    EXPECT_EQ(ranked[0].algo, "cpu.winograd_f4x3") << to_string(dir) << "\n" << ranked[0].note << "\n" << ranked[1].note;
  }
  // At batch 2 (9 MB) everything stays in the cache: the FFT's memory share is gone.
  const MachineModel m = MachineModel::for_context(ctx);
  const double big = model_cost(fft, layer, Direction::fwd, m).seconds;
  const double small = model_cost(fft, layer.with_batch(2), Direction::fwd, m).seconds;
  EXPECT_GT(big / small, 8 * 1.08) << "a spilled working set costs more per image than a cache-resident one";
  clear_probes();
}

TEST(Get, AgreementAndSummary) {
  auto perf = [](std::string n, double t, PerfStatus s = PerfStatus::ok) {
    AlgoPerf a;
    a.algo = std::move(n);
    a.time = t;
    a.status = s;
    return a;
  };
  std::vector<AlgoPerf> found = {perf("a", 1.0), perf("b", 1.05), perf("c", 2.0), perf("w", 0.5, PerfStatus::inaccurate)};
  rank(found);
  std::vector<Agreement> rows;
  rows.push_back(compare_get_find("l1", Direction::fwd, {perf("a", 9)}, found, {}));
  rows.push_back(compare_get_find("l2", Direction::fwd, {perf("b", 9)}, found, {}));
  rows.push_back(compare_get_find("l3", Direction::fwd, {perf("c", 9)}, found, {}));
  rows.push_back(compare_get_find("l4", Direction::fwd, {perf("w", 9)}, found, {}));
  EXPECT_TRUE(rows[0].same());
  EXPECT_DOUBLE_EQ(rows[1].slowdown(), 1.05);
  EXPECT_FALSE(std::isfinite(rows[3].slowdown()));  // get picked what find rejected
  const AgreementSummary s = summarize(rows);
  EXPECT_EQ(s.pairs, 4);
  EXPECT_EQ(s.same, 1);
  EXPECT_EQ(s.within_10pct, 2);
  EXPECT_EQ(s.get_rejected, 1);
  EXPECT_NEAR(s.geomean_slowdown, std::cbrt(1.0 * 1.05 * 2.0), 1e-12);
  EXPECT_DOUBLE_EQ(s.total_get, 4.05);
  EXPECT_DOUBLE_EQ(s.total_find, 3.0);
}

}  // namespace
}  // namespace convlab
