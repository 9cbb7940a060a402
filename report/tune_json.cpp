// convlab tune --json (report/tune_json.hpp): the writer and its reader side by side.
#include "report/tune_json.hpp"

#include "autotune/cache_entry.hpp"
#include "core/json.hpp"
#include "core/json_value.hpp"
#include "core/machine_load.hpp"
#include "core/problem.hpp"
#include "report/layers.hpp"

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

namespace {

using json::Value;

double num(const Value& v, const char* key, double otherwise = NAN) { return json::number_or(v, key, otherwise); }

AgreementSummary summary_from_json(const Value* v) {
  AgreementSummary s;
  if (!v) return s;
  s.pairs = int(num(*v, "pairs", 0));
  s.same = int(num(*v, "same", 0));
  s.within_10pct = int(num(*v, "within_10pct", 0));
  s.geomean_slowdown = num(*v, "geomean_slowdown");
  s.total_get = num(*v, "total_get");
  s.total_find = num(*v, "total_find");
  s.get_rejected = int(num(*v, "get_rejected", 0));
  return s;
}

// One result in the cache's form (autotune/cache_entry.hpp to_json).
AlgoPerf perf_from_json(const Value& v) {
  AlgoPerf r;
  r.algo = json::text_or(v, "algo");
  parse_perf_status(json::text_or(v, "status"), r.status);
  r.time = num(v, "time");
  r.spread = num(v, "spread");
  r.reps = int(num(v, "reps", 0));
  r.workspace = size_t(num(v, "workspace", 0));
  r.max_rel_error = num(v, "max_rel_error");
  r.err_ratio = num(v, "err_ratio");
  r.deterministic = json::bool_or(v, "deterministic", 1) == 1;
  r.note = json::text_or(v, "note");
  r.lo = num(v, "lo");
  r.hi = num(v, "hi");
  r.tie = json::bool_or(v, "tie", 0) == 1;
  r.code = json::text_or(v, "code");
  r.libs = json::text_or(v, "libs");
  return r;
}

std::vector<AlgoPerf> list_from_json(const Value& v, const char* key) {
  std::vector<AlgoPerf> out;
  for (const Value& x : json::array_or_empty(v, key)) out.push_back(perf_from_json(x));
  return out;
}

ProbeOutcome probe_from_json(const Value* v) {
  ProbeOutcome o;
  if (!v || !v->is_object()) return o;
  const std::string source = json::text_or(*v, "source");
  for (auto s : {ProbeOutcome::Source::measured, ProbeOutcome::Source::cache, ProbeOutcome::Source::process}) {
    ProbeOutcome named;
    named.source = s;
    if (named.source_name() == source) o.source = s;
  }
  o.seconds = num(*v, "seconds", 0);
  o.device = json::text_or(*v, "device");
  // A measured probe's note ends with where it was (not) stored.
  const std::string note = json::text_or(*v, "note"), said = o.text();
  if (note.size() > said.size() + 2 && note.compare(0, said.size(), said) == 0) o.stored = note.substr(said.size() + 2);
  return o;
}

TunePair pair_from_json(const Value& v, bool find) {
  TunePair p;
  p.label = json::text_or(v, "layer");
  p.problem = parse_problem(json::text_or(v, "problem"));
  p.dir = parse_direction(json::text_or(v, "dir", "fwd"));
  p.get_algo = json::text_or(v, "get_choice");
  p.find_algo = json::text_or(v, "find_choice");
  for (const Value& t : json::array_or_empty(v, "find_ties")) p.find_ties.push_back(t.str);
  p.from_cache = json::bool_or(v, "from_cache", 0) == 1;
  p.reused = int(num(v, "reused", 0));
  p.tune_seconds = num(v, "tune_seconds", 0);
  p.got_in_sample = list_from_json(v, "get");
  if (find) p.found = list_from_json(v, "find");
  p.vendor.status = json::text_or(v, "vendor_status");
  p.vendor.choices.clear();
  for (const Value& c : json::array_or_empty(v, "vendor")) {
    VendorPicks k = vendor_picks_from_json(c);
    p.vendor.choices.push_back(std::move(k.choice));
    p.find_time = k.find_time;
    p.get_time = k.get_time;
  }
  return p;
}

}  // namespace

TuneDocument tune_from_json(const json::Value& v) {
  TuneDocument d;
  TuneResult& r = d.result;
  d.mode = json::text_or(v, "mode");
  d.find = v.get("summary") != nullptr;
  r.fingerprint = json::text_or(v, "device");
  r.find_seconds = num(v, "find_seconds", 0);
  r.cache_path = json::text_or(v, "cache");
  r.cache_hits = int(num(v, "cache_hits", 0));
  r.tuned = int(num(v, "tuned", 0));
  r.partly = int(num(v, "tuned_partly", 0));
  if (const Value* l = v.get("load"); l && l->is_object()) {
    r.load_measured = true;
    r.load = load_from_json(*l);
  }
  r.probe = probe_from_json(v.get("probe"));
  for (const Value& p : json::array_or_empty(v, "pairs")) r.pairs.push_back(pair_from_json(p, d.find));
  if (const Value* vs = v.get("vendor_summary"); vs && vs->is_object())
    for (const auto& [source, t] : vs->obj)
      r.vendor.push_back({source, int(num(t, "pairs", 0)), int(num(t, "same", 0)), int(num(t, "within_10pct", 0)),
                          int(num(t, "unmeasured", 0)), int(num(t, "unknown_ids", 0))});
  if (const Value* s = v.get("summary")) {
    r.uncalibrated = summary_from_json(s->get("uncalibrated"));
    r.in_sample = summary_from_json(s->get("calibrated_in_sample"));
    r.leave_one_out = summary_from_json(s->get("calibrated_leave_one_layer_out"));
  }
  return d;
}

}  // namespace convlab
