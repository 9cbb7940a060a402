// convlab tune --json read back into the TuneResult it was written from: write ->
// read -> write gives the same text, on the documents real runs print.
#include <gtest/gtest.h>

#include "core/json_value.hpp"
#include "report/tune_json.hpp"
#include "tests/support/cli_fixture.hpp"

namespace convlab {
namespace {

class TuneJson : public convlab::testing::CliTest {
 protected:
  void expect_round_trip(const std::string& args) {
    const convlab::testing::CliResult r = run(args + " --json --quiet --cache " + path("cache.jsonl"));
    ASSERT_EQ(r.code, 0) << r.err;
    ASSERT_FALSE(r.out.empty());
    const std::string written = r.out.substr(0, r.out.find_last_not_of('\n') + 1);
    std::string err;
    const auto v = json::parse(written, &err);
    ASSERT_TRUE(v.has_value()) << err;
    const TuneDocument d = tune_from_json(*v);
    EXPECT_EQ(tune_json(d.result, d.mode, d.find), written);
  }
};

// find and get on two directions (the machine probe measured, then loaded from the cache), then get alone.
TEST_F(TuneJson, RoundTripOfRealRuns) {
  expect_round_trip("tune mb1ic4ih8oc4oh8kh3ph1 --dir fwd,bwd-data --max-seconds 0.02");
  expect_round_trip("tune mb1ic4ih8oc4oh8kh3ph1 --dir fwd,bwd-data");
  expect_round_trip("tune mb1ic4ih8oc4oh8kh3ph1 --dir bwd-filter --mode get");
}

}  // namespace
}  // namespace convlab
