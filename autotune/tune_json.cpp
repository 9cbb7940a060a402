#include "autotune/tune_json.hpp"

#include "autotune/cache_entry.hpp"
#include "core/json.hpp"
#include "core/machine_load.hpp"

namespace convlab {

namespace {

std::string summary_json(const AgreementSummary& s) {
  return "{\"pairs\":" + std::to_string(s.pairs) + ",\"same\":" + std::to_string(s.same) +
         ",\"within_10pct\":" + std::to_string(s.within_10pct) + ",\"geomean_slowdown\":" + json::number(s.geomean_slowdown) +
         ",\"total_get\":" + json::number(s.total_get) + ",\"total_find\":" + json::number(s.total_find) +
         ",\"get_rejected\":" + std::to_string(s.get_rejected) + "}";
}

std::string list_json(const std::vector<AlgoPerf>& l) {
  std::string o = "[";
  for (size_t i = 0; i < l.size(); ++i) o += (i ? "," : "") + to_json(l[i]);
  return o + "]";
}

std::string names_json(const std::vector<std::string>& names) {
  std::string o = "[";
  for (size_t i = 0; i < names.size(); ++i) o += (i ? "," : "") + json::quote(names[i]);
  return o + "]";
}

std::string or_null(const std::string& algo) { return algo.empty() ? std::string("null") : json::quote(algo); }

std::string probe_json(const ProbeOutcome& p) {
  if (p.source == ProbeOutcome::Source::none) return "null";
  return "{\"source\":" + json::quote(p.source_name()) + ",\"seconds\":" + json::number(p.seconds) +
         ",\"device\":" + json::quote(p.device) + ",\"note\":" + json::quote(p.text()) + "}";
}


}  // namespace

std::string tune_json(const TuneResult& res, const std::string& mode, bool find) {
  std::string o = "{\"device\":" + json::quote(res.fingerprint) + ",\"version\":" + json::quote(CONVLAB_VERSION) +
                  ",\"mode\":" + json::quote(mode) + ",\"find_seconds\":" + json::number(res.find_seconds) +
                  ",\"cache\":" + (res.cache_path.empty() ? std::string("null") : json::quote(res.cache_path)) +
                  ",\"cache_hits\":" + std::to_string(res.cache_hits) + ",\"tuned\":" + std::to_string(res.tuned) +
                  ",\"tuned_partly\":" + std::to_string(res.partly) +
                  ",\"load\":" + (res.load_measured ? load_json(res.load) : std::string("null")) +
                  ",\"probe\":" + probe_json(res.probe) + ",\"pairs\":[";
  for (size_t i = 0; i < res.pairs.size(); ++i) {
    const TunePair& pr = res.pairs[i];
    o += std::string(i ? "," : "") + "{\"layer\":" + json::quote(pr.label) + ",\"problem\":" +
         json::quote(pr.problem.key()) + ",\"dir\":" + json::quote(to_string(pr.dir)) +
         ",\"get_choice\":" + or_null(pr.get_algo) + ",\"find_choice\":" + or_null(pr.find_algo) +
         ",\"find_ties\":" + names_json(pr.find_ties) + ",\"from_cache\":" + (pr.from_cache ? "true" : "false") +
         ",\"reused\":" + std::to_string(pr.reused) + ",\"tune_seconds\":" + json::number(pr.tune_seconds) +
         ",\"get\":" + list_json(pr.got_in_sample) + (find ? ",\"find\":" + list_json(pr.found) : "");
    o += ",\"vendor_status\":" + json::quote(pr.vendor.status) + ",\"vendor\":[";
    for (size_t k = 0; k < pr.vendor.choices.size(); ++k)
      o += (k ? "," : "") + vendor_json(pr.vendor.choices[k], pr.find_algo, pr.find_time, pr.get_algo, pr.get_time);
    o += "]}";
  }
  o += "],\"vendor_summary\":{";
  for (size_t k = 0; k < res.vendor.size(); ++k) {
    const VendorTally& t = res.vendor[k];
    o += (k ? "," : "") + json::quote(t.source) + ":{\"pairs\":" + std::to_string(t.pairs) +
         ",\"same\":" + std::to_string(t.same) + ",\"within_10pct\":" + std::to_string(t.within_10pct) +
         ",\"unmeasured\":" + std::to_string(t.unmeasured) + ",\"unknown_ids\":" + std::to_string(t.unknown_ids) + "}";
  }
  o += "}";
  if (find)
    o += ",\"summary\":{\"uncalibrated\":" + summary_json(res.uncalibrated) + ",\"calibrated_in_sample\":" +
         summary_json(res.in_sample) + ",\"calibrated_leave_one_layer_out\":" + summary_json(res.leave_one_out) + "}";
  return o + "}";
}

}  // namespace convlab
