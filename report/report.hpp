// The report of a training run (train/trainer.hpp's TrainReport), written
// three ways:
//   report_markdown  for people: the setup; iteration time, speedup and final
//                    loss per policy, the measurement checks and the user's --expect; the loss per
//                    iteration; find's tuning cost and its break-even against
//                    default and get; the algorithm each policy chose per layer
//                    and direction; per-layer times; the time saved per layer
//                    and direction against the baseline policy; what the skipped
//                    first-layer input gradient would cost.
//   report_json      the same numbers for the notebooks ("command": "train");
//                    report_from_json reads it back into the TrainReport it was
//                    written from (report_json of that is the same text), side
//                    by side with it in report/train_json.cpp. The document
//                    holds medians, not every round's layer times: the CSV
//                    writes from a report read back, the Markdown only from
//                    the run.
//   report_csv       one row per (policy, layer).
#pragma once
#include <string>

namespace convlab::json {
struct Value;
}

namespace convlab::train {

struct TrainReport;

std::string report_markdown(const TrainReport& r);
std::string report_json(const TrainReport& r);
TrainReport report_from_json(const json::Value& v);
std::string report_csv(const TrainReport& r);

}  // namespace convlab::train
