// `convlab train` / `convlab report` as a user runs them (tiny network, fast).
#include <gtest/gtest.h>

#include <regex>
#include <set>

#include "core/device.hpp"
#include "core/npy.hpp"
#include "core/tensor.hpp"
#include "tests/support/cli_fixture.hpp"
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace {

using Result = convlab::testing::CliResult;
class TrainCli : public convlab::testing::CliTest {};

TEST_F(TrainCli, Help) {
  for (const char* c : {"train", "report"}) {
    const Result r = run(std::string(c) + " --help");
    EXPECT_EQ(r.code, 0);
    EXPECT_NE(r.out.find(std::string("usage: convlab ") + c), std::string::npos);
  }
  EXPECT_NE(run("train --help").out.find("--first-layer-grad"), std::string::npos);
}

TEST_F(TrainCli, BadArgumentsAreOneLineErrors) {
  for (const char* a : {"train", "train vgg16", "train tiny --batch 0", "train tiny --policy nope",
                        "train tiny --data npy", "train tiny --lr x", "train tiny --policy fixed:cpu.reference",
                        "train tiny --data npy --images /nonexistent.npy --labels /nonexistent.npy"}) {
    const Result r = run(a);
    EXPECT_EQ(r.code, 2) << a << "\n" << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << a << " -> " << r.err;
  }
}

TEST_F(TrainCli, TinyRunWritesJsonAndReport) {
  const Result r = run("train tiny --batch 2 --iters 2 --warmup 1 --classes 4 --threads 2 --policy default,find --json " +
                       path("t.json") + " --md " + path("t.md"));
  if (r.code == 1) {
    // No algorithm for the default policy yet (only the reference is registered): said so, and skipped.
    EXPECT_NE(r.out.find("skipped"), std::string::npos) << r.out;
    GTEST_SKIP() << "no policy can run here yet";
  }
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("## Iteration time per policy"), std::string::npos);
  EXPECT_NE(r.out.find("| default |"), std::string::npos);
  const std::string j = slurp(path("t.json"));
  EXPECT_NE(j.find("\"policy\": \"default\""), std::string::npos);
  EXPECT_NE(j.find("\"losses\""), std::string::npos);
  EXPECT_EQ(slurp(path("t.md")), r.out);
}

// Images that are not finite are refused on load (one line, exit 2); finite images so large that
// the forward overflows make the loss non-finite: that policy stops there, named with the
// iteration and the first layer whose output is not finite, exit 1, and neither the report nor
// the JSON counts it as agreeing.
TEST_F(TrainCli, NonFiniteImagesAndLossesStopWithOneLine) {
  const int64_t n = 2;  // tiny's input is (3, 16, 16)
  convlab::Tensor labels({n});
  labels.data()[0] = 0;
  labels.data()[1] = 1;
  convlab::write_npy(path("l.npy"), labels);
  convlab::Tensor images({n, 3, 16, 16});
  for (int64_t i = 0; i < images.size(); ++i) images.data()[i] = std::nanf("");
  convlab::write_npy(path("nan.npy"), images);
  const std::string data = std::string(kTiny) + "--data npy --labels " + path("l.npy") + " --images ";
  expect_one_line_error(data + path("nan.npy"), "element 0 (sample 0, channel 0, row 0, column 0) is nan");

  for (int64_t i = 0; i < images.size(); ++i) images.data()[i] = 3e38f;  // finite; conv1's sums overflow
  convlab::write_npy(path("huge.npy"), images);
  const Result r = run(data + path("huge.npy") + " --policy 'default;fixed:cpu.direct' --json " + path("t.json"));
  EXPECT_EQ(r.code, 1) << r.err;
  const std::string last = r.err.substr(r.err.rfind('\n', r.err.size() - 2) + 1);
  EXPECT_EQ(last.rfind("error: policy default stopped: the loss is not finite (", 0), 0u) << r.err;
  EXPECT_NE(last.find(") at iteration 0; the first layer whose output is not finite: conv1's output (element "),
            std::string::npos) << last;
  EXPECT_NE(last.find("(2 policies stopped; see the report)"), std::string::npos) << last;
  EXPECT_EQ(r.err.find("error:"), r.err.rfind("error:")) << "more than one error line: " << r.err;
  EXPECT_NE(r.out.find("No policy ran to the end:\n\n- default: stopped (the loss is not finite"), std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("| yes |"), std::string::npos) << r.out;
  const std::string j = slurp(path("t.json"));
  EXPECT_NE(j.find("\"policy\": \"default\", \"ran\": false, \"skipped\": \"the loss is not finite"),
            std::string::npos) << j;
  EXPECT_NE(j.find("\"stopped\": true"), std::string::npos) << j;
  EXPECT_EQ(j.find("loss_rel_diff_vs_baseline"), std::string::npos) << j;
}

TEST_F(TrainCli, CudaWithoutADeviceIsOneLine) {
  if (convlab::cuda_info().available) GTEST_SKIP() << "a CUDA device exists: nothing to refuse";
  expect_one_line_error("train tiny --device cuda", "no CUDA device");
  expect_one_line_error("train tiny --device tpu", "tpu");
  expect_one_line_error("report --net tiny --gpu on --out " + path("r"), "no CUDA device");
  expect_one_line_error("report --net tiny --gpu sometimes --out " + path("r"), "--gpu");
}

TEST_F(TrainCli, ReportRunsTheCpuHalfAndSaysWhyTheGpuHalfWasSkipped) {
  const Result r = run("report --net tiny --batch 2 --iters 1 --warmup 0 --classes 4 --threads 2 --policy default --out " +
                       path("r"));
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string md = slurp(path("r/report.md"));
  EXPECT_NE(md.find("| default |"), std::string::npos) << md;
  EXPECT_TRUE(std::filesystem::exists(path("r/train.json")));
  // The page beside the tables, self-contained, with the measurement's sections.
  const std::string page = slurp(path("r/report.html"));
  EXPECT_NE(page.find("id=\"chart-policy-time\""), std::string::npos);
  EXPECT_EQ(page.find("<link"), std::string::npos);
  EXPECT_NE(md.find("## The step's limit on this machine"), std::string::npos) << md;
  EXPECT_NE(md.find("## How this was measured"), std::string::npos) << md;
  // --help promises the per-layer comparison's files for every network, the tiny one included.
  EXPECT_TRUE(std::filesystem::exists(path("r/layers.json")));
  EXPECT_TRUE(std::filesystem::exists(path("r/layers.csv")));
  // Every in-page link has its target (a skipped GPU half links to its note, not to sections it lacks).
  {
    std::set<std::string> ids;
    static const std::regex id_re("id=\"([^\"]+)\""), href_re("href=\"#([^\"]+)\"");
    for (auto it = std::sregex_iterator(page.begin(), page.end(), id_re); it != std::sregex_iterator(); ++it)
      ids.insert((*it)[1]);
    for (auto it = std::sregex_iterator(page.begin(), page.end(), href_re); it != std::sregex_iterator(); ++it)
      EXPECT_TRUE(ids.count((*it)[1])) << "report.html links to #" << (*it)[1] << ", which it does not have";
  }
  if (convlab::cuda_info().available) {
    EXPECT_TRUE(std::filesystem::exists(path("r/train_cuda.json")));
    EXPECT_EQ(md.find("GPU half\n\nSkipped"), std::string::npos) << md;
  } else {
    EXPECT_NE(md.find("# GPU half"), std::string::npos) << md;
    EXPECT_NE(md.find("Skipped: no CUDA device"), std::string::npos) << md;
    EXPECT_FALSE(std::filesystem::exists(path("r/train_cuda.json")));
    EXPECT_NE(r.err.find("GPU half skipped"), std::string::npos) << r.err;
  }
}

// `convlab html DIR` redraws the page from the results files; what it cannot
// read is one line and exit 2, and nothing is written then.
TEST_F(TrainCli, HtmlRedrawsAndRefusesBadInputInOneLine) {
  std::filesystem::create_directories(path("h"));
  const Result t = run("train tiny --batch 2 --iters 2 --warmup 0 --classes 4 --threads 2 --policy default --json " +
                       path("h/train.json"));
  ASSERT_EQ(t.code, 0) << "the training run that feeds the page failed: " << t.err;
  const Result r = run("html " + path("h"));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(slurp(path("h/report.html")).find("id=\"chart-policy-time\""), std::string::npos);
  expect_one_line_error("html " + path("missing"), "is not a folder");
  std::filesystem::create_directories(path("empty"));
  expect_one_line_error("html " + path("empty"), "has none of train.json");
  std::filesystem::create_directories(path("bad"));
  std::ofstream(path("bad/train.json")) << "{\"policies\": [";
  expect_one_line_error("html " + path("bad"), "train.json is not JSON");
  EXPECT_FALSE(std::filesystem::exists(path("bad/report.html")));
  expect_one_line_error("html " + path("h") + " --out " + path("nowhere/x.html"), "does not exist");
}

}  // namespace
