// Internal to report/report*.cpp: the number formats every section shares and
// the sections that live in their own files (report/report_measurement.cpp: how
// the run was measured, the intervals, the checks, the in-context find).
#pragma once
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include "core/stats.hpp"

namespace convlab::json {
struct Value;
}

namespace convlab::train {

struct TrainReport;
struct PolicyResult;
struct LayerResult;

namespace report_detail {

using Out = std::ostringstream;

inline std::string fmt(const char* f, double v) {
  char b[64];
  std::snprintf(b, sizeof b, f, v);
  return b;
}
inline std::string ms(double s) { return fmt("%.2f", s * 1e3); }

// The policy named `name` when it ran, else nullptr.
const PolicyResult* find_policy(const TrainReport& r, const std::string& name);
// "[12.1, 12.9]": an interval of seconds, in ms.
std::string ms_interval(const stats::Interval& ci);
// "1.23x [1.10, 1.35] faster", "1.01x [1.00, 1.01] same (within 1.2 %)", "0.99x [0.96, 1.03] not significant",
// "1.00x (baseline)"; margin = TrainReport::margin.
std::string speedup_cell(const PolicyResult& p, bool is_baseline, double margin);
// [lo, hi] in ms as JSON; and [lo, hi] read back, each end / scale (1e3: json_ms_interval's;
// anything but a pair: {NaN, NaN}).
std::string json_ms_interval(const stats::Interval& ci);
stats::Interval interval_from_json(const json::Value* v, double scale);
// The final loss's relative difference from the baseline's.
double loss_rel_diff(const PolicyResult& p, const PolicyResult& base);

// Per timed round: every non-convolution layer, the loss and the update (the
// code every policy shares; attribution's "other").
std::vector<double> other_seconds(const PolicyResult& p);

// What the in-context find claims, checked against the policies' own iterations:
// the time its separated pairs save per iteration (the isolated winners' in-context
// medians minus the in-context winners'), and find's iterations minus the
// find-context policy's with their paired interval. The claim is consistent when
// it lies inside that interval; not checked when find did not run.
struct ContextClaim {
  const PolicyResult* policy = nullptr;  // the find-context policy (nullptr: none ran)
  const PolicyResult* find = nullptr;    // the find policy with the same constraints (nullptr: did not run)
  int pairs = 0, differ = 0, ties = 0;
  double claimed_s = 0;                  // saved per iteration, by the per-layer in-context times
  double measured_s = 0;                 // find's median iteration - find-context's
  stats::Interval measured_ci{0, 0};
  bool consistent = false;               // find ran and claimed_s is inside measured_ci
};
ContextClaim context_claim(const TrainReport& r);

// Markdown sections.
void md_measurement(Out& o, const TrainReport& r);   // rounds, order, intervals, memory
void md_checks(Out& o, const TrainReport& r);         // equivalence margin, shared-code spread, --expect
void md_in_context(Out& o, const TrainReport& r);     // isolated vs in-context rankings
// JSON: top-level fields (each line starts with ",\n  "): rounds, order, memory, in_context_find;
// and read back into r (its policies already read).
void json_measurement(Out& o, const TrainReport& r);
void measurement_from_json(const json::Value& v, TrainReport& r);

// The step's limit (report/report_limit.cpp): a policy's median / the limit (0
// when not measured), a layer's bound / its median time in %, the markdown
// section and the JSON "limit" object.
double x_limit(const TrainReport& r, const PolicyResult& p);
double pct_of_bound(const LayerResult& l);
void md_limit(Out& o, const TrainReport& r, const PolicyResult& base);
void json_limit(Out& o, const TrainReport& r);
void limit_from_json(const json::Value& v, TrainReport& r);

}  // namespace report_detail
}  // namespace convlab::train
