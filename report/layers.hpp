// The per-layer comparison's results (autotune/compare.hpp's Comparison),
// written and read back here: layers.json (comparison_json, and
// comparison_from_json reading it into the same Comparison, side by side in
// report/layers_json.cpp), layers.csv and the Markdown table
// (report/layers_views.cpp). report.html reads layers.json through
// comparison_from_json (report/html/view.cpp).
//
// layers.json, comparison_json's document (keys are only ever added, never changed):
//   {"tool", "version", "device", "fingerprint", "network", "batch",
//    "peak": [{"threads", "gflops", "isa"}], "bandwidth_gbs",
//    "probe": [{"threads", "source" (measured, cache, process), "seconds", "device"}],
//    "rows": [ one per (layer, direction, threads, algorithm):
//              {"layer", "problem", "direction", "threads", "algorithm", "family",
//               "status", "note", "time_ms", "spread", "gflops", "peak_fraction",
//               "flops", "bytes", "workspace_bytes", "max_rel_error", "find_rank",
//               "get_rank", "find_choice", "get_choice",
//               "time_lo_ms", "time_hi_ms" (the median's 95 % interval, null when
//               not timed), "tie" (find cannot tell it apart from its choice:
//               intervals overlap, autotune/perf.hpp mark_ties)} ],
//    "load": the machine's load around the measurements (core/machine_load.hpp
//            load_json: "disturbed", "why" and the numbers),
//    "vendor": [ one per (layer, direction, threads, vendor source):
//              {"layer", "problem", "direction", "threads",
//               "status": "ok" or why there is no vendor choice (then "source"
//                         and "algorithm" are null and nothing else follows),
//               then vendor_json()'s keys (autotune/vendor.hpp): "source",
//               "algorithm", "family", "implementation", "vendor_status", "math",
//               "vendor_time_ms", "workspace_bytes", "deterministic", "time_ms",
//               "find_choice", "find_time_ms", "same_as_find", "ratio_to_find",
//               "get_choice", "get_time_ms", "ratio_to_get"} ]}
#pragma once
#include <cmath>
#include <string>

#include "autotune/compare.hpp"

namespace convlab {

namespace json {
struct Value;
}

std::string comparison_json(const Comparison& c);
// comparison_json's document read back: comparison_json(comparison_from_json(v))
// is the text v was parsed from (a file written by this version; an older one
// reads with its missing keys at their defaults). What the document does not
// hold (a probe's `stored`, a vendor pick's unknown_id, convlab's picks beside
// a missing vendor choice) stays at its default.
Comparison comparison_from_json(const json::Value& v);

// vendor_json's object (autotune/vendor.hpp, in layers.json and tune's document)
// read back: the vendor's choice and convlab's picks it was compared with.
struct VendorPicks {
  VendorChoice choice;
  std::string find_algo, get_algo;
  double find_time = NAN, get_time = NAN;
};
VendorPicks vendor_picks_from_json(const json::Value& v);

std::string comparison_csv(const Comparison& c);
// rows = (layer, direction), columns = algorithms, cells = median ms, fastest
// in bold, find's pick marked F, the cells find cannot tell apart from it ≈,
// get's G, the vendor's V (oneDNN auto on the CPU, cuDNN Find on a GPU) and
// cuDNN Get_v7's Vh; the most threads measured.
// A vendor pick with no cell (find did not run it) is listed under the table.
std::string comparison_markdown(const Comparison& c);

}  // namespace convlab
