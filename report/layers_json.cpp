// layers.json (report/layers.hpp): the writer and its reader side by side.
#include <cmath>

#include "core/json.hpp"
#include "core/json_value.hpp"
#include "report/layers.hpp"

namespace convlab {

std::string comparison_json(const Comparison& c) {
  std::string o = "{\n  \"tool\": \"convlab layers\",\n  \"run_id\": " +
                  (c.run_id.empty() ? std::string("null") : json::quote(c.run_id)) +
                  ",\n  \"version\": " + json::quote(CONVLAB_VERSION) +
                  ",\n  \"device\": " + json::quote(to_string(c.device)) + ",\n  \"fingerprint\": " +
                  json::quote(c.fingerprint) + ",\n  \"network\": " +
                  (c.network.empty() ? std::string("null") : json::quote(c.network)) +
                  ",\n  \"batch\": " + std::to_string(c.batch) + ",\n  \"peak\": [";
  for (size_t i = 0; i < c.peaks.size(); ++i)
    o += std::string(i ? ", " : "") + "{\"threads\": " + std::to_string(c.peaks[i].threads) +
         ", \"gflops\": " + json::number(c.peaks[i].gflops) + ", \"isa\": " + json::quote(c.peaks[i].isa) + "}";
  o += "],\n  \"bandwidth_gbs\": " + (c.bandwidth_gbs > 0 ? json::number(c.bandwidth_gbs) : std::string("null")) +
       ",\n  \"probe\": [";
  for (size_t i = 0; i < c.probes.size(); ++i) {
    const ProbeOutcome& p = c.probes[i].second;
    o += std::string(i ? ", " : "") + "{\"threads\": " + std::to_string(c.probes[i].first) + ", \"source\": " +
         json::quote(p.source_name()) + ", \"seconds\": " + json::number(p.seconds) + ", \"device\": " +
         json::quote(p.device) + "}";
  }
  o += "],\n  \"load\": " + load_json(c.load) + ",\n  \"rows\": [\n";
  for (size_t i = 0; i < c.rows.size(); ++i) {
    const ComparisonRow& r = c.rows[i];
    o += "    {\"layer\": " + json::quote(r.layer) + ", \"problem\": " + json::quote(r.problem) +
         ", \"direction\": " + json::quote(r.dir) + ", \"threads\": " + std::to_string(r.threads) +
         ", \"algorithm\": " + json::quote(r.algo) + ", \"family\": " + json::quote(r.family) +
         ", \"status\": " + json::quote(r.status) + ", \"note\": " + json::quote(r.note) +
         ", \"time_ms\": " + json::number(r.time * 1e3) + ", \"spread\": " + json::number(r.spread) +
         ", \"gflops\": " + json::number(r.gflops()) + ", \"peak_fraction\": " + json::number(r.peak_fraction) +
         ", \"flops\": " + json::number(r.flops) + ", \"bytes\": " + json::number(r.bytes) +
         ", \"workspace_bytes\": " + std::to_string(r.workspace) +
         ", \"max_rel_error\": " + json::number(r.max_rel_error) + ", \"find_rank\": " + std::to_string(r.find_rank) +
         ", \"get_rank\": " + std::to_string(r.get_rank) + ", \"find_choice\": " + (r.find_choice ? "true" : "false") +
         ", \"get_choice\": " + (r.get_choice ? "true" : "false") + ", \"time_lo_ms\": " + json::number(r.lo * 1e3) +
         ", \"time_hi_ms\": " + json::number(r.hi * 1e3) + ", \"tie\": " + (r.tie ? "true" : "false") + "}" +
         (i + 1 < c.rows.size() ? ",\n" : "\n");
  }
  o += "  ],\n  \"vendor\": [\n";
  for (size_t i = 0; i < c.vendor.size(); ++i) {
    const VendorRow& v = c.vendor[i];
    o += "    {\"layer\": " + json::quote(v.layer) + ", \"problem\": " + json::quote(v.problem) +
         ", \"direction\": " + json::quote(v.dir) + ", \"threads\": " + std::to_string(v.threads) +
         ", \"status\": " + json::quote(v.status) + ", ";
    if (v.choice.source.empty())
      o += "\"source\": null, \"algorithm\": null}";
    else
      o += vendor_json(v.choice, v.find_algo, v.find_time, v.get_algo, v.get_time).substr(1);
    o += i + 1 < c.vendor.size() ? ",\n" : "\n";
  }
  if (c.duels.empty() && c.placements.empty()) return o + "  ]\n}\n";  // files from before the interleaved timing keep their bytes
  o += "  ],\n  \"duels\": [\n";
  for (size_t i = 0; i < c.duels.size(); ++i) {
    const DuelRow& d = c.duels[i];
    o += "    {\"layer\": " + json::quote(d.layer) + ", \"problem\": " + json::quote(d.problem) +
         ", \"direction\": " + json::quote(d.dir) + ", \"threads\": " + std::to_string(d.threads) +
         ", \"own\": " + json::quote(d.own) + ", \"peer\": " + json::quote(d.peer) +
         ", \"rounds\": " + std::to_string(d.rounds) + ", \"own_ms\": " + json::number(d.own_ms) +
         ", \"peer_ms\": " + json::number(d.peer_ms) + ", \"speed\": " + json::number(d.speed) +
         ", \"speed_lo\": " + json::number(d.lo) + ", \"speed_hi\": " + json::number(d.hi) +
         ", \"note\": " + json::quote(d.note) + "}" + (i + 1 < c.duels.size() ? ",\n" : "\n");
  }
  if (c.placements.empty()) return o + "  ]\n}\n";  // files from before placements were measured keep their bytes
  o += "  ],\n  \"placements\": [\n";
  for (size_t i = 0; i < c.placements.size(); ++i) {
    const PlacementRow& p = c.placements[i];
    o += "    {\"layer\": " + json::quote(p.layer) + ", \"problem\": " + json::quote(p.problem) +
         ", \"direction\": " + json::quote(p.dir) + ", \"threads\": " + std::to_string(p.threads) +
         ", \"round_trip_ns\": [" + json::number(p.find_before_ns) + ", " + json::number(p.find_after_ns) + ", " +
         json::number(p.duel_after_ns) + "]}" + (i + 1 < c.placements.size() ? ",\n" : "\n");
  }
  return o + "  ]\n}\n";
}

namespace {

using json::Value;

double num(const Value& v, const char* key, double otherwise = NAN) { return json::number_or(v, key, otherwise); }
std::string text_or_null(const Value& v, const char* key) { return json::text_or(v, key); }

ProbeOutcome probe_from_json(const Value& p) {
  ProbeOutcome o;
  const std::string source = json::text_or(p, "source");
  for (auto s : {ProbeOutcome::Source::measured, ProbeOutcome::Source::cache, ProbeOutcome::Source::process}) {
    ProbeOutcome named;
    named.source = s;
    if (named.source_name() == source) o.source = s;
  }
  o.seconds = num(p, "seconds", 0);
  o.device = json::text_or(p, "device");
  return o;
}

// The keys every row kind (comparison, vendor, duel) opens with: which layer, direction and threads.
template <class Row>
void read_case(const Value& v, Row& row) {
  row.layer = json::text_or(v, "layer");
  row.problem = json::text_or(v, "problem");
  row.dir = json::text_or(v, "direction");
  row.threads = int(num(v, "threads", 0));
}

ComparisonRow row_from_json(const Value& r) {
  ComparisonRow o;
  read_case(r, o);
  o.algo = json::text_or(r, "algorithm");
  o.family = json::text_or(r, "family");
  o.status = json::text_or(r, "status");
  o.note = json::text_or(r, "note");
  o.spread = num(r, "spread");
  o.peak_fraction = num(r, "peak_fraction");
  o.flops = num(r, "flops", 0);
  o.bytes = num(r, "bytes", 0);
  o.workspace = size_t(num(r, "workspace_bytes", 0));
  o.max_rel_error = num(r, "max_rel_error");
  o.find_rank = int(num(r, "find_rank", 0));
  o.get_rank = int(num(r, "get_rank", 0));
  o.find_choice = json::bool_or(r, "find_choice", 0) == 1;
  o.get_choice = json::bool_or(r, "get_choice", 0) == 1;
  o.lo = json::unscale(num(r, "time_lo_ms"), 1e3);
  o.hi = json::unscale(num(r, "time_hi_ms"), 1e3);
  o.tie = json::bool_or(r, "tie", 0) == 1;
  // The time whose GFLOP/s is the one written.
  const double gflops = num(r, "gflops");
  const std::vector<double> times = json::unscaled(num(r, "time_ms"), 1e3);
  o.time = times.front();
  for (double t : times) {
    o.time = t;
    if (json::same_number(o.gflops(), gflops)) break;
  }
  if (!json::same_number(o.gflops(), gflops)) o.time = times.front();
  return o;
}

VendorRow vendor_from_json(const Value& v) {
  VendorRow o;
  read_case(v, o);
  o.status = json::text_or(v, "status");
  if (json::text_or(v, "source").empty()) return o;  // no choice: nothing else follows
  VendorPicks k = vendor_picks_from_json(v);
  o.choice = std::move(k.choice);
  o.find_algo = std::move(k.find_algo);
  o.get_algo = std::move(k.get_algo);
  o.find_time = k.find_time;
  o.get_time = k.get_time;
  return o;
}

}  // namespace

VendorPicks vendor_picks_from_json(const json::Value& v) {
  VendorPicks o;
  VendorChoice& c = o.choice;
  c.source = json::text_or(v, "source");
  c.algo = json::text_or(v, "algorithm");
  c.family = json::text_or(v, "family");
  c.implementation = json::text_or(v, "implementation");
  c.vendor_status = json::text_or(v, "vendor_status");
  c.math = json::text_or(v, "math");
  c.vendor_time = json::unscale(num(v, "vendor_time_ms"), 1e3);
  c.workspace = size_t(num(v, "workspace_bytes", 0));
  c.deterministic = json::bool_or(v, "deterministic", 1) == 1;
  o.find_algo = json::text_or(v, "find_choice");
  o.get_algo = json::text_or(v, "get_choice");
  // Our time and find's / get's: the ones whose ratios are the ones written.
  const std::vector<double> ours = json::unscaled(num(v, "time_ms"), 1e3);
  const std::vector<double> finds = json::unscaled(num(v, "find_time_ms"), 1e3);
  const std::vector<double> gets = json::unscaled(num(v, "get_time_ms"), 1e3);
  const double to_find = num(v, "ratio_to_find"), to_get = num(v, "ratio_to_get");
  c.our_time = ours.front();
  o.find_time = finds.front();
  o.get_time = gets.front();
  for (double ot : ours)
    for (double ft : finds)
      for (double gt : gets)
        if (json::same_number(ot / ft, to_find) && json::same_number(ot / gt, to_get)) {
          c.our_time = ot;
          o.find_time = ft;
          o.get_time = gt;
          return o;
        }
  return o;
}

DuelRow duel_from_json(const Value& v) {
  DuelRow d;
  read_case(v, d);
  d.own = json::text_or(v, "own");
  d.peer = json::text_or(v, "peer");
  d.rounds = int(num(v, "rounds", 0));
  d.own_ms = num(v, "own_ms");
  d.peer_ms = num(v, "peer_ms");
  d.speed = num(v, "speed");
  d.lo = num(v, "speed_lo");
  d.hi = num(v, "speed_hi");
  d.note = json::text_or(v, "note");
  return d;
}

Comparison comparison_from_json(const Value& v) {
  Comparison c;
  c.device = json::text_or(v, "device") == to_string(DeviceKind::cuda) ? DeviceKind::cuda : DeviceKind::cpu;
  c.fingerprint = json::text_or(v, "fingerprint");
  c.network = text_or_null(v, "network");
  c.run_id = text_or_null(v, "run_id");
  c.batch = int(num(v, "batch", 0));
  for (const Value& p : json::array_or_empty(v, "peak"))
    c.peaks.push_back({num(p, "gflops"), int(num(p, "threads", 0)), json::text_or(p, "isa")});
  c.bandwidth_gbs = num(v, "bandwidth_gbs", 0);
  for (const Value& p : json::array_or_empty(v, "probe"))
    c.probes.emplace_back(int(num(p, "threads", 0)), probe_from_json(p));
  if (const Value* l = v.get("load"); l && l->is_object()) c.load = load_from_json(*l);
  for (const Value& r : json::array_or_empty(v, "rows")) c.rows.push_back(row_from_json(r));
  for (const Value& r : json::array_or_empty(v, "vendor")) c.vendor.push_back(vendor_from_json(r));
  for (const Value& r : json::array_or_empty(v, "duels")) c.duels.push_back(duel_from_json(r));
  for (const Value& r : json::array_or_empty(v, "placements")) {
    PlacementRow p;
    read_case(r, p);
    const auto& ns = json::array_or_empty(r, "round_trip_ns");
    double* at[3] = {&p.find_before_ns, &p.find_after_ns, &p.duel_after_ns};
    for (size_t i = 0; i < 3 && i < ns.size(); ++i)
      if (ns[i].type == Value::Type::number) *at[i] = ns[i].num;
    c.placements.push_back(p);
  }
  return c;
}

}  // namespace convlab
