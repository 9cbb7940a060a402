// The machine probe (autotune/probe.hpp): measured in bounded time, stored in
// the cache file and reloaded, refused for another device or build, bad probe
// lines handled like other bad lines; and get's model with a probe ranks the
// way the probed rates say it should. Nothing here asserts an absolute time.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "algorithms/registry.hpp"
#include "autotune/build_identity.hpp"
#include "autotune/cache.hpp"
#include "autotune/get.hpp"
#include "autotune/probe.hpp"
#include "core/problem.hpp"
#include "core/timing.hpp"
#include "tests/autotune/planted.hpp"

namespace convlab {
namespace {

namespace fs = std::filesystem;
using testing::Planted;

class Probe : public ::testing::Test {
 protected:
  void SetUp() override {
    clear_probes();
    dir_ = fs::temp_directory_path() /
           ("convlab_probe_" + std::to_string(::getpid()) + "_" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    clear_probes();  // the other suites of this binary see the nominal model
    fs::remove_all(dir_);
  }
  std::string path(const std::string& n) const { return (dir_ / n).string(); }
  fs::path dir_;
};

// A probe with every required kernel rate (values of a plausible 2-core AVX-512 machine) and no algorithm rates.
MachineProbe synthetic(const ExecContext& ctx) {
  MachineProbe p;
  p.device = device_fingerprint(DeviceKind::cpu, ctx.resolved_threads());
  p.seconds = 0.5;
  p.probed_at = 1000;
  for (const std::string& name : probe_required_rates()) p.rates[name] = 1;
  p.rates["fma_gflops"] = 300;
  p.rates["copy_gbs"] = 50;
  p.rates["dram_gbs"] = 15;
  p.rates["copy1_gbs"] = 30;
  p.rates["dram1_gbs"] = 10;
  p.rates["ukernel_gflops"] = 250;
  p.rates["im2col_gbs"] = 30;
  p.rates["col2im_gbs"] = 25;
  p.rates["cgemm_gflops"] = 200;
  for (int m : {2, 4, 6}) {
    const double per_tile = 0.4 / (m * m);  // G (tile x channel) / s: bigger tiles, fewer of them
    p.rates["wino" + std::to_string(m) + "_in_gtps"] = per_tile * 4;
    p.rates["wino" + std::to_string(m) + "_out_gtps"] = per_tile * 5;
    p.rates["wino" + std::to_string(m) + "_dst_gtps"] = per_tile * 2;
  }
  p.rates["fft_fwd_16_us"] = p.rates["fft_inv_16_us"] = 1.4;
  p.rates["fft_fwd_32_us"] = p.rates["fft_inv_32_us"] = 7;
  return p;
}

TEST_F(Probe, MeasuredInBoundedTimeWithEveryRequiredRate) {
  ExecContext ctx;  // every thread, as tune runs it
  const double t0 = now_seconds();
  const MachineProbe p = measure_probe(ctx);
  const double wall = now_seconds() - t0;
  // Designed for 3-4 s on an idle 2-core machine, nothing started after 6 s; generous for a shared one.
  EXPECT_LT(wall, 9.0);
  EXPECT_LE(p.seconds, wall);
  EXPECT_EQ(p.device, device_fingerprint(DeviceKind::cpu, ctx.resolved_threads()));
  for (const std::string& r : probe_required_rates()) EXPECT_GT(p.rate(r), 0) << r;
  // Every CPU algorithm that runs here has a rate on the 3x3 probe problem in every direction -- unless
  // the machine was so busy that the probe reached its 6 s limit first (then it is partial by design).
  if (p.seconds > 5.9) GTEST_SKIP() << "the probe reached its time limit on a busy machine (" << p.seconds << " s)";
  for (const Algorithm* a : registry()) {
    if (a->device() != DeviceKind::cpu || a->family() == "reference" || a->name() == "onednn.auto" ||
        !a->unavailable_reason().empty())
      continue;
    for (Direction d : kAllDirections) {
      // An algorithm of one kind of layer (depthwise only) has its rate on its own probe problem.
      const char* cls = a->supports(probe_problem_3x3(), d) ? "3x3" : "dw";
      ASSERT_TRUE(std::string(cls) == "3x3" || a->supports(probe_problem_dw(), d)) << a->name();
      EXPECT_GT(p.rate(probe_algo_key(a->name(), d, cls)), 0) << a->name() << " " << to_string(d);
    }
  }
  EXPECT_GT(p.rate(probe_algo_key("cpu.im2col_gemm", Direction::fwd, "1x1")), 0);
  for (Direction d : kAllDirections) EXPECT_GT(p.rate(probe_algo_key("cpu.direct", d, "dw")), 0) << to_string(d);
  for (Direction d : kAllDirections)
    EXPECT_GT(p.rate(probe_algo_key("cpu.direct_depthwise", d, "dw_small")), 0) << to_string(d);
}

TEST_F(Probe, StoredInTheCacheAndReloaded) {
  ExecContext ctx;
  ctx.threads = 1;
  const std::string file = path("c.jsonl");
  {
    TuneCache cache(file, false);
    cache.load();
    const ProbeOutcome o = ensure_probe(ctx, &cache);
    EXPECT_EQ(o.source, ProbeOutcome::Source::measured);
    EXPECT_NE(o.text().find("measured in"), std::string::npos) << o.text();
    EXPECT_NE(o.stored.find("stored in"), std::string::npos) << o.stored;
  }
  const std::shared_ptr<const MachineProbe> measured = current_probe(device_fingerprint(DeviceKind::cpu, 1));
  ASSERT_TRUE(measured);
  // The same process asks again: nothing is measured or read.
  EXPECT_EQ(ensure_probe(ctx, file).source, ProbeOutcome::Source::process);
  // Another process (a fresh registry) reads it from the file, every rate as measured.
  clear_probes();
  TuneCache again(file, false);
  again.load();
  const MachineProbe* loaded = again.lookup_probe(device_fingerprint(DeviceKind::cpu, 1));
  ASSERT_NE(loaded, nullptr);
  EXPECT_EQ(loaded->rates, measured->rates);
  const ProbeOutcome o = ensure_probe(ctx, &again);
  EXPECT_EQ(o.source, ProbeOutcome::Source::cache);
  EXPECT_NE(o.text().find("loaded from the cache"), std::string::npos) << o.text();
  // The model uses it from now on.
  EXPECT_TRUE(MachineModel::for_context(ctx).probe);
  // cache check: the probe line is usable here.
  const CacheCheck c = check_cache_file(file);
  EXPECT_EQ(c.probes, 1);
  EXPECT_EQ(c.usable_probes, 1);
  EXPECT_TRUE(c.warnings.empty()) << c.warnings.front();
}

TEST_F(Probe, RefusedForAnotherDeviceOrBuild) {
  ExecContext one;
  one.threads = 1;
  const std::string file = path("c.jsonl");
  MachineProbe other = synthetic(one);
  other.device = device_fingerprint(DeviceKind::cpu, 1) + "x";  // another CPU
  ProbeEntry stale;
  stale.key = make_probe_key(one);
  stale.key.build = "convlab 0.0.1 0000000 | an older oneDNN";
  stale.tuned_at = 5;
  stale.probe = synthetic(one);
  {
    TuneCache c(file, false);
    c.load();
    c.put_probe(other);
    c.save();
  }
  std::ofstream(file, std::ios::app) << serialize(stale) << "\n";
  TuneCache c(file, false);
  c.load();
  EXPECT_EQ(c.probes().size(), 2u);                                       // both kept in the file
  EXPECT_EQ(c.lookup_probe(device_fingerprint(DeviceKind::cpu, 1)), nullptr);  // neither used here
  EXPECT_NE(c.lookup_probe(other.device), nullptr);                       // (the other device's is its own)
  // Another thread count is another fingerprint.
  ExecContext three;
  three.threads = 3;
  EXPECT_EQ(c.lookup_probe(device_fingerprint(DeviceKind::cpu, 3)), nullptr);
  const CacheCheck check = check_cache_file(file);
  EXPECT_EQ(check.probes, 2);
  EXPECT_EQ(check.usable_probes, 0);
  ASSERT_EQ(check.warnings.size(), 2u);
  EXPECT_NE(check.warnings[0].find("machine probe of another device"), std::string::npos) << check.warnings[0];
  EXPECT_NE(check.warnings[1].find("stale machine probe"), std::string::npos) << check.warnings[1];
}

TEST_F(Probe, BadProbeLinesAreBadLines) {
  ExecContext one;
  one.threads = 1;
  ProbeEntry e;
  e.key = make_probe_key(one);
  e.tuned_at = 7;
  e.probe = synthetic(one);
  const std::string good = serialize(e);
  ProbeEntry missing = e, negative = e;
  missing.probe.rates.erase("cgemm_gflops");
  negative.probe.rates["copy_gbs"] = -3;
  std::string truncated = good.substr(0, good.size() / 2);
  const std::string file = path("bad.jsonl");
  std::ofstream(file) << serialize(missing) << "\n" << serialize(negative) << "\n" << truncated << "\n" << good << "\n";
  TuneCache c(file, false);
  c.load();
  ASSERT_EQ(c.warnings().size(), 1u);  // one warning for the file, naming the first bad line
  EXPECT_NE(c.warnings()[0].find("3 of 4 lines unreadable"), std::string::npos) << c.warnings()[0];
  EXPECT_NE(c.warnings()[0].find("line 1: probe rate 'cgemm_gflops' missing"), std::string::npos) << c.warnings()[0];
  ASSERT_NE(c.lookup_probe(e.key.device), nullptr);  // the good line still counts
  const CacheCheck check = check_cache_file(file);
  EXPECT_EQ(check.warnings.size(), 3u);
  EXPECT_NE(check.warnings[1].find("line 2: unreadable: probe rate 'copy_gbs' is not a positive number"),
            std::string::npos)
      << check.warnings[1];
  EXPECT_EQ(check.usable_probes, 1);
  // The next write drops them (a copy is kept as .bad).
  c.save();
  EXPECT_TRUE(fs::exists(file + ".bad"));
  TuneCache after(file, false);
  after.load();
  EXPECT_TRUE(after.warnings().empty());
  EXPECT_EQ(after.probes().size(), 1u);
}

// ---- the model with a probe ---------------------------------------------------

TEST_F(Probe, ModelRanksByFamilyOnSyntheticRates) {
  const ExecContext ctx;
  register_probe(synthetic(ctx));
  ASSERT_TRUE(MachineModel::for_context(ctx).probe);
  Planted gemm("test.gemm", "gemm"), wino("test.winograd_f4x3", "winograd"), direct("test.direct", "direct"),
      fft("test.fft", "fft");
  // Wide 3x3: Winograd's 4x fewer multiplies win; three input channels (a first layer): its transforms
  // of every output tile lose to the GEMM.
  auto ranked = get(parse_problem("mb8ic256ih28oc256oh28kh3ph1"), Direction::fwd, ctx, size_t(-1), nullptr, {&gemm, &wino});
  EXPECT_EQ(ranked[0].algo, "test.winograd_f4x3") << ranked[0].note << "\n" << ranked[1].note;
  ranked = get(parse_problem("mb8ic3ih56oc64oh56kh3ph1"), Direction::fwd, ctx, size_t(-1), nullptr, {&gemm, &wino});
  EXPECT_EQ(ranked[0].algo, "test.gemm") << ranked[0].note << "\n" << ranked[1].note;
  // 11x11 filters at stride 1: the FFT's cost does not grow with the filter.
  ranked = get(parse_problem("mb8ic64ih32oc64oh32kh11ph5"), Direction::fwd, ctx, size_t(-1), nullptr, {&direct, &fft});
  EXPECT_EQ(ranked[0].algo, "test.fft") << ranked[0].note << "\n" << ranked[1].note;
  // Predictions still scale with the work.
  const MachineModel m = MachineModel::for_context(ctx);
  const ConvProblem p = parse_problem("mb4ic64ih28oc64oh28kh3ph1");
  EXPECT_NEAR(model_cost(gemm, p.with_batch(8), Direction::fwd, m).seconds / model_cost(gemm, p, Direction::fwd, m).seconds,
              2.0, 0.2);
}

TEST_F(Probe, AlgorithmRatesScaleTheirAlgorithm) {
  ExecContext ctx;
  ctx.threads = 1;  // one thread: the probe's algorithm runs are the context's own
  MachineProbe p = synthetic(ctx);
  const Algorithm& direct = get_algorithm("cpu.direct");
  const Algorithm& wino = get_algorithm("cpu.winograd_f4x3");
  const ConvProblem& pp = probe_problem_3x3();
  const ConvProblem layer = parse_problem("mb16ic192ih28oc192oh28kh3ph1");
  auto rank_of = [&](double direct_gflops, double wino_gflops) {
    p.rates[probe_algo_key("cpu.direct", Direction::fwd, "3x3")] = direct_gflops;
    p.rates[probe_algo_key("cpu.winograd_f4x3", Direction::fwd, "3x3")] = wino_gflops;
    register_probe(p);
    return get(layer, Direction::fwd, ctx, size_t(-1), nullptr, {&direct, &wino});
  };
  // Measured three times faster on the probe problem: first on another 3x3 layer; measured slower: second.
  EXPECT_EQ(rank_of(100, 300)[0].algo, "cpu.winograd_f4x3");
  EXPECT_EQ(rank_of(300, 100)[0].algo, "cpu.direct");
  // On the probe problem itself the prediction is the measured time.
  const MachineModel m = MachineModel::for_context(ctx);
  EXPECT_NEAR(model_cost(direct, pp, Direction::fwd, m).seconds, pp.flops() / 300e9, pp.flops() / 300e9 * 1e-9);
  // Twice the probed rate, half the prediction, wherever the layer is.
  const double before = model_cost(wino, layer, Direction::fwd, m).seconds;
  p.rates[probe_algo_key("cpu.winograd_f4x3", Direction::fwd, "3x3")] = 200;
  register_probe(p);
  EXPECT_NEAR(model_cost(wino, layer, Direction::fwd, MachineModel::for_context(ctx)).seconds, before / 2, before * 1e-9);
  // A 1x1 layer uses the 1x1 rate when there is one, else the 3x3 rate.
  const Algorithm& gemm = get_algorithm("cpu.im2col_gemm");
  const ConvProblem one = parse_problem("mb16ic256ih14oc256oh14kh1");
  p.rates[probe_algo_key("cpu.im2col_gemm", Direction::fwd, "3x3")] = 100;
  register_probe(p);
  const double from_3x3 = model_cost(gemm, one, Direction::fwd, MachineModel::for_context(ctx)).seconds;
  p.rates[probe_algo_key("cpu.im2col_gemm", Direction::fwd, "1x1")] = probe_problem_1x1().flops() / 1e-3 * 1e-9;
  register_probe(p);
  const double from_1x1 = model_cost(gemm, one, Direction::fwd, MachineModel::for_context(ctx)).seconds;
  EXPECT_NE(from_1x1, from_3x3);
  EXPECT_NEAR(model_cost(gemm, probe_problem_1x1(), Direction::fwd, MachineModel::for_context(ctx)).seconds, 1e-3, 1e-9);
}

// A depthwise layer (one input channel per group) is scaled by the algorithm's time on the depthwise
// probe problem when it has one, else by the 3x3 one; the ranking follows what was measured there.
TEST_F(Probe, DepthwiseLayersAreScaledOnTheDepthwiseProbeProblem) {
  ExecContext ctx;
  ctx.threads = 1;
  MachineProbe p = synthetic(ctx);
  const Algorithm& direct = get_algorithm("cpu.direct");
  const Algorithm& gemm = get_algorithm("cpu.im2col_gemm");
  const ConvProblem dw = parse_problem("g144mb16ic144ih56oc144oh56kh3ph1");
  EXPECT_EQ(probe_class(dw), "dw");
  EXPECT_EQ(probe_class(probe_problem_dw()), "dw");
  EXPECT_EQ(probe_class(parse_problem("g2mb16ic96ih27oc256oh27kh5ph2")), "3x3");
  EXPECT_EQ(probe_class(parse_problem("g2mb16ic2ih27oc2oh27kh1")), "dw_small");
  EXPECT_EQ(probe_class(parse_problem("g2mb16ic2ih29oc2oh29kh1")), "dw");
  EXPECT_EQ(probe_class(probe_problem_dw_small()), "dw_small");
  p.rates[probe_algo_key("cpu.direct", Direction::fwd, "3x3")] = 100;
  p.rates[probe_algo_key("cpu.im2col_gemm", Direction::fwd, "3x3")] = 100;
  register_probe(p);
  const double from_3x3 = model_cost(direct, dw, Direction::fwd, MachineModel::for_context(ctx)).seconds;
  // On the depthwise probe problem the prediction is the measured time.
  p.rates[probe_algo_key("cpu.direct", Direction::fwd, "dw")] = probe_problem_dw().flops() / 2e-3 * 1e-9;
  register_probe(p);
  EXPECT_NEAR(model_cost(direct, probe_problem_dw(), Direction::fwd, MachineModel::for_context(ctx)).seconds, 2e-3,
              1e-9);
  EXPECT_NE(model_cost(direct, dw, Direction::fwd, MachineModel::for_context(ctx)).seconds, from_3x3);
  auto first = [&](double direct_dw, double gemm_dw) {
    p.rates[probe_algo_key("cpu.direct", Direction::fwd, "dw")] = direct_dw;
    p.rates[probe_algo_key("cpu.im2col_gemm", Direction::fwd, "dw")] = gemm_dw;
    register_probe(p);
    return get(dw, Direction::fwd, ctx, size_t(-1), nullptr, {&direct, &gemm})[0].algo;
  };
  // The same 3x3 rates; what the depthwise problem measured decides.
  EXPECT_EQ(first(0.1, 10), "cpu.im2col_gemm");
  EXPECT_EQ(first(10, 0.1), "cpu.direct");
  // Images up to 28 x 28 have their own probe problem; an algorithm without a rate there is scaled on
  // the larger depthwise one.
  const ConvProblem small = parse_problem("g576mb16ic576ih14oc576oh14kh3ph1");
  ASSERT_EQ(probe_class(small), "dw_small");
  const MachineModel before = MachineModel::for_context(ctx);
  const CostEstimate via_dw = model_cost(direct, small, Direction::fwd, before);
  EXPECT_NE(via_dw.formula.find("on the dw probe problem"), std::string::npos) << via_dw.formula;
  p.rates[probe_algo_key("cpu.direct", Direction::fwd, "dw_small")] = probe_problem_dw_small().flops() / 1e-3 * 1e-9;
  register_probe(p);
  const MachineModel after = MachineModel::for_context(ctx);
  EXPECT_NEAR(model_cost(direct, probe_problem_dw_small(), Direction::fwd, after).seconds, 1e-3, 1e-9);
  const CostEstimate own = model_cost(direct, small, Direction::fwd, after);
  EXPECT_NE(own.formula.find("on the dw_small probe problem"), std::string::npos) << own.formula;
  EXPECT_NE(own.seconds, via_dw.seconds);
}

}  // namespace
// The 3x3 class's backward-filter rates are measured on a problem with more images (the sum over the
// batch's tiles as on a network's layer): on that problem the prediction is the measured time, and the
// other directions keep the 3x3 problem.
TEST_F(Probe, BackwardFilterIsScaledOnItsOwnProbeProblem) {
  ExecContext ctx;
  ctx.threads = 1;
  MachineProbe p = synthetic(ctx);
  const ConvProblem& wgrad = probe_problem("3x3", Direction::bwd_filter);
  EXPECT_EQ(&wgrad, &probe_problem_3x3_wgrad());
  EXPECT_EQ(&probe_problem("3x3", Direction::fwd), &probe_problem_3x3());
  EXPECT_EQ(&probe_problem("3x3", Direction::bwd_data), &probe_problem_3x3());
  EXPECT_EQ(probe_class(wgrad), "3x3");
  EXPECT_GT(wgrad.n, probe_problem_3x3().n);
  const Algorithm& wino = get_algorithm("cpu.winograd_f4x3");
  p.rates[probe_algo_key("cpu.winograd_f4x3", Direction::bwd_filter, "3x3")] = wgrad.flops() / 3e-3 * 1e-9;
  p.rates[probe_algo_key("cpu.winograd_f4x3", Direction::fwd, "3x3")] = probe_problem_3x3().flops() / 1e-3 * 1e-9;
  register_probe(p);
  const MachineModel m = MachineModel::for_context(ctx);
  EXPECT_NEAR(model_cost(wino, wgrad, Direction::bwd_filter, m).seconds, 3e-3, 1e-9);
  EXPECT_NEAR(model_cost(wino, probe_problem_3x3(), Direction::fwd, m).seconds, 1e-3, 1e-9);
}

}  // namespace convlab
