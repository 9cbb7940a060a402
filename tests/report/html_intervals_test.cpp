// report.html's per-layer chart draws each direction's 95 % interval that
// train.json holds (a whisker at the end of the direction's segment), and says
// so; a train.json without them gets the note instead.
#include <gtest/gtest.h>

#include <regex>
#include <sstream>

#include "report/html/report_html.hpp"
#include "tests/report/results_data.hpp"

namespace convlab::train {
namespace {

std::string slurp(const std::string& name) { return testing::results_data(name); }

std::string page(const std::string& train_json) {
  HtmlInputs in;
  in.halves.push_back({"CPU", "", train_json, "", ""});
  return report_html(in);
}

TEST(HtmlIntervals, PerLayerChartDrawsTheDirectionsIntervals) {
  const std::string html = page(slurp("train.json"));
  EXPECT_NE(html.find("Whiskers: 95 % intervals."), std::string::npos);
  EXPECT_EQ(html.find("No per-layer intervals in this train.json."), std::string::npos);
}

TEST(HtmlIntervals, WithoutIntervalsThePageSaysSo) {
  // The same run with every interval removed.
  const std::string text =
      std::regex_replace(slurp("train.json"), std::regex("\"ms_ci\": \\{[^}]*\\}"), "\"ms_ci\": {}");
  const std::string html = page(text);
  EXPECT_NE(html.find("No per-layer intervals in this train.json."), std::string::npos);
}

}  // namespace
}  // namespace convlab::train
