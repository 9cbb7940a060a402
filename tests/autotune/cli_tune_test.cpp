// `convlab tune` and `convlab cache` as a user runs them.
#include <gtest/gtest.h>

#include "tests/support/cli_fixture.hpp"
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "autotune/cache.hpp"
#include "autotune/json_value.hpp"
#include "core/problem.hpp"

namespace convlab {
namespace {

using Result = testing::CliResult;
class TuneCli : public testing::CliTest {};

TEST_F(TuneCli, Help) {
  for (const char* c : {"tune", "cache"}) {
    const Result r = run(std::string(c) + " --help");
    EXPECT_EQ(r.code, 0) << c;
    EXPECT_NE(r.out.find("usage: convlab " + std::string(c)), std::string::npos);
  }
}

TEST_F(TuneCli, JsonOutputParsesAndCacheIsWritten) {
  const std::string cache = path("t.jsonl");
  const Result r = run("tune mb1ic4ih8oc4oh8kh3ph1 --dir fwd,bwd-data --json --quiet --max-seconds 0.02 --cache " + cache);
  // Exit 1 only when some pair has no acceptable candidate (a registry of just the reference).
  EXPECT_TRUE(r.code == 0 || r.code == 1) << r.err;
  std::string err;
  const auto v = json::parse(r.out, &err);
  ASSERT_TRUE(v) << err << "\n" << r.out;
  const json::Value* pairs = v->get("pairs");
  ASSERT_TRUE(pairs && pairs->arr.size() == 2);
  EXPECT_EQ(pairs->arr[1].get("dir")->str, "bwd-data");
  EXPECT_TRUE(std::filesystem::exists(cache));
  // Second run: everything from the cache.
  const Result again = run("tune mb1ic4ih8oc4oh8kh3ph1 --dir fwd,bwd-data --json --quiet --cache " + cache);
  const auto v2 = json::parse(again.out);
  ASSERT_TRUE(v2);
  EXPECT_EQ(v2->get("cache_hits")->num, 2);
  EXPECT_EQ(v2->get("tuned")->num, 0);
}

TEST_F(TuneCli, CorruptCacheWarnsOnceAndStillTunes) {
  const std::string cache = path("bad.jsonl");
  std::ofstream(cache) << "garbage\n{\"format\":1\n";
  const Result r = run("tune mb1ic2ih6oc2oh6kh3ph1 --dir fwd --quiet --max-seconds 0.02 --cache " + cache);
  EXPECT_TRUE(r.code == 0 || r.code == 1) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_NE(r.err.find("warning: autotune cache"), std::string::npos) << r.err;
  EXPECT_TRUE(std::filesystem::exists(cache + ".bad"));
  const Result check = run("cache check " + cache);
  EXPECT_EQ(check.code, 0) << check.out << check.err;
}

TEST_F(TuneCli, CacheMergeAndShow) {
  const std::string a = path("a.jsonl"), b = path("b.jsonl"), c = path("c.jsonl");
  CacheEntry e;
  e.key = make_cache_key(parse_problem("mb1ic1ih4oc1oh4kh1"), Direction::fwd, ExecContext{});
  e.tuned_at = 5;
  AlgoPerf r;
  r.algo = "cpu.something";
  r.time = 1e-3;
  e.results = {r};
  std::ofstream(a) << serialize(e) << "\n";
  e.key.dir = "bwd-data";
  std::ofstream(b) << serialize(e) << "\nnot json\n";
  const Result m = run("cache merge " + a + " " + b + " -o " + c);
  EXPECT_EQ(m.code, 0) << m.err;
  EXPECT_NE(m.out.find("2 entries"), std::string::npos) << m.out;
  EXPECT_EQ(std::count(m.err.begin(), m.err.end(), '\n'), 1) << m.err;  // the garbage line in b
  const Result s = run("cache show " + c);
  EXPECT_EQ(s.code, 0);
  EXPECT_NE(s.out.find("cpu.something"), std::string::npos) << s.out;
  EXPECT_EQ(run("cache check " + b).code, 1);
  EXPECT_EQ(run("cache merge " + a).code, 2);  // no -o
  EXPECT_EQ(run("cache frobnicate " + a).code, 2);
}

}  // namespace
}  // namespace convlab
