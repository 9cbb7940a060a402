// The `convlab layers` run around compare_layers: thread scaling from the rows,
// and the refusals before any work.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "autotune/compare_run.hpp"
#include "core/device.hpp"
#include "core/error.hpp"
#include "core/problem.hpp"

namespace convlab {
namespace {

ComparisonRow row(const std::string& algo, const std::string& layer, int threads, double time,
                  const std::string& status = "ok") {
  ComparisonRow r;
  r.algo = algo;
  r.layer = layer;
  r.dir = "fwd";
  r.threads = threads;
  r.time = time;
  r.status = status;
  return r;
}

TEST(ThreadScaling, GeometricMeanOverTheCasesBothThreadCountsRanOk) {
  Comparison c;
  c.rows = {row("cpu.a", "l1", 1, 2.0), row("cpu.a", "l1", 4, 1.0),   // x2
            row("cpu.a", "l2", 1, 8.0), row("cpu.a", "l2", 4, 1.0),   // x8
            row("cpu.a", "l3", 1, 8.0), row("cpu.a", "l3", 4, NAN, "inaccurate"),  // not counted
            row("cpu.b", "l1", 1, 3.0),                                // never at 4 threads
            row("cpu.c", "l1", 2, 1.0)};                               // neither the fewest nor the most
  const ThreadScaling s = thread_scaling(c);
  EXPECT_EQ(s.from_threads, 1);
  EXPECT_EQ(s.to_threads, 4);
  ASSERT_EQ(s.rows.size(), 1u);
  EXPECT_EQ(s.rows[0].algo, "cpu.a");
  EXPECT_EQ(s.rows[0].cases, 2u);
  EXPECT_NEAR(s.rows[0].speedup, 4.0, 1e-12);  // sqrt(2 * 8)
}

TEST(ThreadScaling, RowsAreOrderedByAlgorithmName) {
  Comparison c;
  c.rows = {row("cpu.z", "l1", 1, 2.0), row("cpu.z", "l1", 2, 1.0), row("cpu.a", "l1", 1, 3.0),
            row("cpu.a", "l1", 2, 1.0)};
  const ThreadScaling s = thread_scaling(c);
  ASSERT_EQ(s.rows.size(), 2u);
  EXPECT_EQ(s.rows[0].algo, "cpu.a");
  EXPECT_NEAR(s.rows[0].speedup, 3.0, 1e-12);
  EXPECT_EQ(s.rows[1].algo, "cpu.z");
}

// A cache file in a folder that does not exist is refused before the machine probe and any find, and
// nothing is measured or created.
TEST(CompareRun, CacheInAMissingFolderIsRefusedFirst) {
  const std::string missing = (std::filesystem::temp_directory_path() / "convlab-no-such-folder" / "c.jsonl").string();
  ASSERT_FALSE(std::filesystem::exists(std::filesystem::path(missing).parent_path()));
  CompareRunOptions opt;
  opt.compare.threads = {1};
  opt.use_cache = true;
  opt.cache_path = missing;
  bool setup = false;
  opt.on_setup = [&](const CompareSetup&) { setup = true; };
  const std::vector<LayerCase> cases = {{"tiny", parse_problem("mb1ic2ih5oc2oh5kh3ph1"), {Direction::fwd}}};
  EXPECT_THROW(run_comparison(cases, opt), Error);
  EXPECT_FALSE(setup);
  EXPECT_FALSE(std::filesystem::exists(std::filesystem::path(missing).parent_path()));
}

TEST(CompareRun, CudaWithoutADeviceIsRefused) {
  if (cuda_info().available) GTEST_SKIP() << "a CUDA device is here";
  CompareRunOptions opt;
  opt.compare.device = DeviceKind::cuda;
  const std::vector<LayerCase> cases = {{"tiny", parse_problem("mb1ic2ih5oc2oh5kh3ph1"), {Direction::fwd}}};
  try {
    run_comparison(cases, opt);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no CUDA device"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace convlab
