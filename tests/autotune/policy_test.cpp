// Policy text forms (the trainer and the CLI parse these) and byte counts.
#include <gtest/gtest.h>

#include <cmath>

#include <unistd.h>

#include <filesystem>

#include "autotune/cache.hpp"
#include "autotune/policy.hpp"
#include "core/error.hpp"

namespace convlab {
namespace {

TEST(Policy, ParsesKindsAndConstraints) {
  EXPECT_EQ(Policy::parse("default").kind, Policy::Kind::default_);
  EXPECT_EQ(Policy::parse("get").kind, Policy::Kind::get);
  EXPECT_EQ(Policy::parse("find").kind, Policy::Kind::find);
  const Policy c = Policy::parse("cache:/tmp/a,b.jsonl,max-error=1e-4,deterministic,workspace=64M");
  EXPECT_EQ(c.kind, Policy::Kind::cache);
  EXPECT_EQ(c.cache_path, "/tmp/a,b.jsonl");  // commas in a path survive
  EXPECT_DOUBLE_EQ(c.max_error, 1e-4);
  EXPECT_TRUE(c.deterministic);
  EXPECT_EQ(c.workspace_limit, size_t(64) << 20);
  // name() reads back to the same policy.
  const Policy again = Policy::parse(c.name());
  EXPECT_EQ(again.cache_path, c.cache_path);
  EXPECT_DOUBLE_EQ(again.max_error, c.max_error);
  EXPECT_EQ(again.deterministic, c.deterministic);
  EXPECT_EQ(again.workspace_limit, c.workspace_limit);
  const Policy g = Policy::parse("get:/x/cal.jsonl");
  EXPECT_EQ(g.kind, Policy::Kind::get);
  EXPECT_EQ(g.cache_path, "/x/cal.jsonl");
  const Policy plain = Policy::parse("find");
  EXPECT_FALSE(std::isfinite(plain.max_error));
  EXPECT_FALSE(plain.deterministic);
  EXPECT_EQ(plain.workspace_limit, size_t(-1));
  EXPECT_EQ(plain.name(), "find");
}

TEST(Policy, Tf32Constraint) {
  const Policy plain = Policy::parse("find");
  EXPECT_FALSE(plain.tf32);
  const Policy t = Policy::parse("find,tf32");
  EXPECT_EQ(t.kind, Policy::Kind::find);
  EXPECT_TRUE(t.tf32);
  EXPECT_EQ(t.name(), "find,tf32");
  EXPECT_TRUE(Policy::parse(t.name()).tf32);
  const Policy c = Policy::parse("cache:/tmp/x.jsonl,tf32,deterministic");
  EXPECT_EQ(c.cache_path, "/tmp/x.jsonl");
  EXPECT_TRUE(c.tf32);
  EXPECT_TRUE(c.deterministic);
  EXPECT_TRUE(Policy::parse("default,tf32").tf32);
  EXPECT_THROW(Policy::parse("find,tf16"), Error);
}

TEST(Policy, RejectsBadText) {
  for (const char* bad : {"", "fastest", "cache:", "get:", "find,max-error=abc", "find,max-error=-1", "find,workspace=12Q",
                          "fixed:cpu.no_such_algorithm", "fixed:cpu.reference"})
    EXPECT_THROW(Policy::parse(bad), Error) << bad;
}

TEST(Policy, ParseBytes) {
  EXPECT_EQ(parse_bytes("4096"), 4096u);
  EXPECT_EQ(parse_bytes("64K"), 65536u);
  EXPECT_EQ(parse_bytes("2g"), size_t(2) << 30);
  for (const char* bad : {"", "K", "-1", "1.5M", "12 M"}) EXPECT_THROW(parse_bytes(bad), Error) << bad;
}

TEST(Policy, MeasuringPoliciesNeverReturnTheReference) {
  // With only the reference registered there is nothing to choose: a clear
  // error, not the reference. With more algorithms, whatever is chosen is not it.
  const ConvProblem p = parse_problem("mb1ic2ih6oc2oh6kh3ph1");
  const std::string cache = (std::filesystem::temp_directory_path() /
                             ("convlab_policy_" + std::to_string(::getpid()) + ".jsonl")).string();
  for (const std::string& text : {std::string("get"), std::string("find"), std::string("default"), "cache:" + cache,
                                 std::string("find,deterministic,workspace=1G")}) {
    try {
      const Choice c = choose_algorithm(Policy::parse(text), p, Direction::fwd, ExecContext{});
      ASSERT_NE(c.algo, nullptr);
      EXPECT_NE(c.algo->family(), "reference") << text;
      EXPECT_TRUE(text != "find" || c.why.find("find") != std::string::npos) << c.why;
      EXPECT_FALSE(c.why.empty());
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("mb1ic2ih6oc2oh6kh3ph1"), std::string::npos) << e.what();
    }
  }
  // The cache policy stored what it measured, and a second process-level lookup hits it.
  TuneCache c(cache, false);
  c.load();
  EXPECT_NE(c.lookup(make_cache_key(p, Direction::fwd, ExecContext{})), nullptr);
  std::filesystem::remove(cache);
  std::filesystem::remove(cache + ".lock");
}

}  // namespace
}  // namespace convlab
