// train.json read back into the TrainReport it was written from: write -> read
// -> write gives the same text, on the files real runs write.
#include <gtest/gtest.h>

#include "core/json_value.hpp"
#include "report/report.hpp"
#include "tests/support/cli_fixture.hpp"
#include "train/trainer.hpp"

namespace convlab::train {
namespace {

class TrainJson : public convlab::testing::CliTest {
 protected:
  // Runs `convlab ARGS --json F --csv C` and checks F reads back into a report that writes F
  // and C again.
  void expect_round_trip(const std::string& args) {
    const std::string file = path("train.json"), csv = path("train.csv");
    const convlab::testing::CliResult r = run(args + " --json " + file + " --csv " + csv);
    ASSERT_LE(r.code, 1) << r.err;  // 1: an --expect missed; the file is written all the same
    const std::string written = slurp(file);
    std::string err;
    const auto v = json::parse(written, &err);
    ASSERT_TRUE(v.has_value()) << err;
    const TrainReport back = report_from_json(*v);
    EXPECT_EQ(report_json(back), written);
    EXPECT_EQ(report_csv(back), slurp(csv));
  }
};

// Every policy kind, the in-context find and its claim, the expectations, met and missed.
TEST_F(TrainJson, RoundTripOfARealRun) {
  expect_round_trip("train tiny --batch 1 --iters 2 --warmup 1 --classes 4 --threads 1 "
                    "--policy 'default;find;find-context;get;fixed:cpu.direct' "
                    "--expect 'find/default<=5' --expect 'get/default>=100'");
}

// A policy that cannot run on this device: its "skipped" entry.
TEST_F(TrainJson, RoundTripWithASkippedPolicy) {
  expect_round_trip(std::string(kTiny) + "--policy 'default;fixed:cuda.direct'");
}

// A results file another driver wrote (the PyTorch bridge: PyTorch's default as "pytorch", convlab's default
// policy beside it) names its baseline; a file without the key keeps the rule (default, else the first).
TEST(TrainJsonBaseline, TheFileNamesItsBaseline) {
  const std::string pols = R"("policies": [{"policy": "pytorch", "ran": true, "iter_median_s": 0.002},
                                           {"policy": "default", "ran": true, "iter_median_s": 0.001}])";
  std::string err;
  const auto named = json::parse("{\"baseline\": \"pytorch\", " + pols + "}", &err);
  ASSERT_TRUE(named.has_value()) << err;
  EXPECT_EQ(report_from_json(*named).baseline(), 0);
  const auto unnamed = json::parse("{" + pols + "}", &err);
  ASSERT_TRUE(unnamed.has_value()) << err;
  EXPECT_EQ(report_from_json(*unnamed).baseline(), 1);
  const auto gone = json::parse("{\"baseline\": \"nosuch\", " + pols + "}", &err);
  ASSERT_TRUE(gone.has_value()) << err;
  EXPECT_EQ(report_from_json(*gone).baseline(), 1);
}

}  // namespace
}  // namespace convlab::train
