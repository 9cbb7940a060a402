// Calibrating get from a cache is near-linear in its size.
// It used to ask every cached algorithm supports() and workspace_bytes() per
// entry (oneDNN and FFT plans, costlier the larger the problem), so a cache of
// growing layers took 0.2 / 1.5 / 10 s at 100 / 400 / 800 entries.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>

#include "algorithms/registry.hpp"
#include "autotune/build_identity.hpp"
#include "autotune/cache.hpp"
#include "autotune/get.hpp"
#include "core/timing.hpp"

namespace convlab {
namespace {

// Counts every question the calibration asks it.
class Counting final : public Algorithm {
 public:
  mutable std::atomic<int> asked{0};
  std::string_view name() const override { return "test.counting"; }
  DeviceKind device() const override { return DeviceKind::cpu; }
  std::string_view family() const override { return "gemm"; }
  std::string_view description() const override { return "test-only"; }
  Support supports(const ConvProblem&, Direction) const override {
    ++asked;
    return Support::yes();
  }
  size_t workspace_bytes(const ConvProblem&, Direction) const override {
    ++asked;
    return 4096;
  }
  void run(const ConvProblem&, Direction, const ConvBuffers&, void*, const ExecContext&) const override {}
  // Priced as an im2col + GEMM (a question calibration may ask: it plans nothing).
  NominalCost nominal_cost(const ConvProblem& p, Direction) const override { return nominal_gemm(p); }
  const Algorithm& priced_as(const ConvProblem&, Direction) const override {
    return get_algorithm("cpu.im2col_gemm");
  }
};

AlgoPerf ok(const std::string& algo, double time, size_t workspace) {
  AlgoPerf r;
  r.algo = algo;
  r.time = time;
  r.workspace = workspace;
  return r;
}

TEST(CalibrationScale, FitUsesTheRecordedWorkspaceAndAsksNoAlgorithm) {
  Counting c;
  const std::vector<const Algorithm*> algos = {&c};
  const MachineModel m = MachineModel::for_context(ExecContext{});
  const ConvProblem p = parse_problem("mb2ic16ih14oc16oh14kh3ph1");
  const double pred = model_cost(c, p, Direction::fwd, m, 4096).seconds;
  c.asked = 0;
  const std::vector<Measured> data = {{p, Direction::fwd, {ok("test.counting", 3 * pred, 4096)}}};
  const Calibration cal = Calibration::fit(data, m, "", &algos);
  EXPECT_EQ(c.asked.load(), 0);
  EXPECT_EQ(cal.samples(), 1);
  c.asked = 0;
  EXPECT_NEAR(cal.factor(c, Direction::fwd), 3.0, 1e-9);
}

TEST(CalibrationScale, LeaveOneOutFromOnePassMatchesARefit) {
  Counting c;
  const std::vector<const Algorithm*> algos = {&c};
  const MachineModel m = MachineModel::for_context(ExecContext{});
  std::vector<Measured> data;
  for (int i = 0; i < 5; ++i) {
    const ConvProblem p = parse_problem("mb1ic8ih" + std::to_string(10 + i) + "oc8oh" + std::to_string(10 + i) + "kh3ph1");
    data.push_back({p, Direction::fwd, {ok("test.counting", (1 + i) * model_cost(c, p, Direction::fwd, m, 0).seconds, 0)}});
  }
  const CalibrationData once(data, m, &algos);
  for (int i = 0; i < 5; ++i) {
    std::vector<Measured> rest = data;
    rest.erase(rest.begin() + i);
    const Calibration loo = once.fit(data[size_t(i)].problem.key()), refit = Calibration::fit(rest, m, "", &algos);
    EXPECT_EQ(loo.samples(), 4);
    EXPECT_NEAR(loo.factor(c, Direction::fwd), refit.factor(c, Direction::fwd), 1e-9);
  }
  EXPECT_EQ(once.fit().samples(), 5);
}

// The whole path `tune --mode get --cache F` takes: load the file, select the
// usable entries, fit. N and 4N entries of growing layers (every registered CPU
// algorithm measured on each), timed side by side: the ratio must stay far
// below the 16x of a quadratic.
TEST(CalibrationScale, NearLinearInCacheEntries) {
  const std::string dir = (std::filesystem::temp_directory_path() / ("convlab_calscale_" + std::to_string(::getpid()))).string();
  std::filesystem::create_directories(dir);
  std::vector<std::string> cpu_algos;
  for (const Algorithm* a : registry())
    if (a->device() == DeviceKind::cpu && a->family() != "reference") cpu_algos.push_back(std::string(a->name()));
  std::vector<AlgorithmVersion> versions;
  for (const std::string& a : cpu_algos) versions.push_back(algorithm_version(get_algorithm(a)));
  const ExecContext ctx;
  auto write = [&](int n) {
    TuneCache c(dir + "/c" + std::to_string(n) + ".jsonl", false);
    for (int i = 0; i < n; ++i) {
      const std::string s = std::to_string(8 + i % 1000), mb = std::to_string(1 + i / 1000);
      CacheEntry e;
      e.key = make_cache_key(parse_problem("mb" + mb + "ic4ih" + s + "oc4oh" + s + "kh3ph1"), Direction::fwd, ctx);
      e.tuned_at = 1;
      for (size_t k = 0; k < cpu_algos.size(); ++k) {
        e.results.push_back(ok(cpu_algos[k], 1e-4 * (1 + k), 1024 * k));
        e.results.back().code = versions[k].code;  // measured by this build's algorithms
        e.results.back().libs = versions[k].libs;
      }
      c.put(std::move(e));
    }
    c.save();
    return c.path();
  };
  // 8x the entries: linear is 8x, quadratic 64x; the bound (20x) leaves a busy CI machine 2.5x of margin.
  const int n = 200, f = 8;
  const std::string small = write(n), large = write(f * n);
  const MachineModel m = MachineModel::for_context(ctx);
  const CacheKey like = make_cache_key(parse_problem("mb1ic4ih8oc4oh8kh3ph1"), Direction::fwd, ctx);
  auto seconds = [&](const std::string& file, int& samples) {
    const double t0 = now_seconds();
    TuneCache c(file, false);
    c.load();
    const CalibrationData cal(c.measurements({like.device}), m);
    samples = cal.samples();
    return now_seconds() - t0;
  };
  double ts = 1e30, tl = 1e30;
  int ss = 0, sl = 0;
  for (int rep = 0; rep < 5; ++rep) {  // interleaved, best of five: a busy machine hits both alike
    ts = std::min(ts, seconds(small, ss));
    tl = std::min(tl, seconds(large, sl));
  }
  std::filesystem::remove_all(dir);
  ASSERT_EQ(ss, n * int(cpu_algos.size()));
  ASSERT_EQ(sl, f * n * int(cpu_algos.size()));
  EXPECT_LT(tl / ts, 20.0) << n << " entries: " << ts << " s, " << f * n << " entries: " << tl << " s";
}

}  // namespace
}  // namespace convlab
