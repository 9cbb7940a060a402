// The autotune cache tests' fixture: a scratch folder per test, and a sample entry.
#pragma once

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include "autotune/build_identity.hpp"
#include "autotune/cache.hpp"
#include "core/json_value.hpp"
#include "core/build_id.hpp"
#include "core/problem.hpp"
#include "tests/autotune/planted.hpp"

namespace convlab::testing_cache {


namespace fs = std::filesystem;

class Cache : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("convlab_cache_" + std::to_string(::getpid()) + "_" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& n) const { return (dir_ / n).string(); }
  static std::string slurp(const std::string& f) {
    std::ifstream in(f, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
  static void spit(const std::string& f, const std::string& s) {
    std::ofstream(f, std::ios::binary) << s;
  }
  fs::path dir_;
};

inline CacheEntry sample(const std::string& problem = "mb2ic4ih8oc4oh8kh3ph1", const std::string& dir = "fwd", double at = 100) {
  CacheEntry e;
  e.key = make_cache_key(parse_problem(problem), parse_direction(dir), ExecContext{});
  e.tuned_at = at;
  AlgoPerf a;
  a.algo = "cpu.fast";
  a.time = 1.25e-3;
  a.spread = 0.031;
  a.reps = 9;
  a.workspace = 4096;
  a.max_rel_error = 3.5e-7;
  a.err_ratio = 0.02;
  a.note = "quote \" backslash \\ newline \n tab \t";
  AlgoPerf b;
  b.algo = "cpu.wrong";
  b.status = PerfStatus::inaccurate;
  b.max_rel_error = 0.5;
  b.err_ratio = 1e6;
  b.deterministic = false;
  AlgoPerf c;
  c.algo = "cpu.huge";
  c.status = PerfStatus::over_workspace;
  c.workspace = size_t(1) << 40;
  a.lo = 1.2e-3;
  a.hi = 1.3e-3;
  // Measured by this build: the version a planted (unregistered) algorithm has.
  for (AlgoPerf* r : {&a, &b, &c}) r->code = algorithm_version(testing::Planted(r->algo)).code;
  e.results = {a, b, c};
  return e;
}

inline void expect_same(const CacheEntry& x, const CacheEntry& y) {
  EXPECT_EQ(x.key, y.key);
  EXPECT_EQ(x.tuned_at, y.tuned_at);
  EXPECT_EQ(x.workspace_limit, y.workspace_limit);
  ASSERT_EQ(x.results.size(), y.results.size());
  for (size_t i = 0; i < x.results.size(); ++i) {
    const AlgoPerf &a = x.results[i], &b = y.results[i];
    EXPECT_EQ(a.algo, b.algo);
    EXPECT_EQ(a.status, b.status);
    EXPECT_TRUE(a.time == b.time || (std::isnan(a.time) && std::isnan(b.time)));
    EXPECT_EQ(a.spread, b.spread);
    EXPECT_EQ(a.reps, b.reps);
    EXPECT_EQ(a.workspace, b.workspace);
    EXPECT_TRUE(a.max_rel_error == b.max_rel_error || (std::isnan(a.max_rel_error) && std::isnan(b.max_rel_error)));
    EXPECT_TRUE(a.err_ratio == b.err_ratio || (std::isnan(a.err_ratio) && std::isnan(b.err_ratio)));
    EXPECT_EQ(a.deterministic, b.deterministic);
    EXPECT_EQ(a.note, b.note);
    EXPECT_TRUE(a.lo == b.lo || (std::isnan(a.lo) && std::isnan(b.lo)));
    EXPECT_TRUE(a.hi == b.hi || (std::isnan(a.hi) && std::isnan(b.hi)));
    EXPECT_EQ(a.code, b.code);
    EXPECT_EQ(a.libs, b.libs);
  }
}

}  // namespace convlab::testing_cache
