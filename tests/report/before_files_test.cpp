// Results files written before the report layer existed (tests/data/results: a
// layers.json and layers.csv from `convlab report --net tiny`, a train.json and
// train.csv from `convlab train tiny` with every policy kind and --expect, a
// `convlab tune --json` document) read back and written again by today's
// writers: the same bytes.
#include <gtest/gtest.h>

#include <sstream>

#include "core/json_value.hpp"
#include "report/layers.hpp"
#include "report/report.hpp"
#include "report/tune_json.hpp"
#include "tests/report/results_data.hpp"
#include "train/trainer.hpp"

namespace convlab {
namespace {

std::string slurp(const std::string& name) { return testing::results_data(name); }

json::Value parse(const std::string& text) {
  std::string err;
  auto v = json::parse(text, &err);
  EXPECT_TRUE(v.has_value()) << err;
  return v ? *v : json::Value{};
}

TEST(BeforeFiles, LayersJsonAndCsvWriteTheSameBytes) {
  const std::string text = slurp("layers.json");
  const Comparison c = comparison_from_json(parse(text));
  EXPECT_EQ(comparison_json(c), text);
  EXPECT_EQ(comparison_csv(c), slurp("layers.csv"));
}

TEST(BeforeFiles, TrainJsonAndCsvWriteTheSameBytes) {
  const std::string text = slurp("train.json");
  const train::TrainReport r = train::report_from_json(parse(text));
  EXPECT_EQ(train::report_json(r), text);
  EXPECT_EQ(train::report_csv(r), slurp("train.csv"));
}

TEST(BeforeFiles, TuneJsonWritesTheSameBytes) {
  std::string text = slurp("tune.json");
  ASSERT_FALSE(text.empty());
  text.pop_back();  // the newline the command printed after the document
  const TuneDocument d = tune_from_json(parse(text));
  EXPECT_EQ(tune_json(d.result, d.mode, d.find), text);
}

}  // namespace
}  // namespace convlab
