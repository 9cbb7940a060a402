#include "autotune/compare.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include "autotune/find.hpp"
#include "core/json.hpp"

namespace convlab {

double ComparisonRow::gflops() const { return std::isfinite(time) && time > 0 ? flops / time * 1e-9 : NAN; }

void require_compare_memory(const std::vector<LayerCase>& cases, const CompareOptions& opt) {
  ExecContext ctx;
  ctx.device = opt.device;
  const std::vector<const Algorithm*> candidates = find_candidates(opt.device);
  for (const LayerCase& lc : cases)
    for (Direction dir : lc.dirs.empty() ? opt.dirs : lc.dirs)
      find_memory(lc.problem, dir, ctx, FindOptions{}, candidates)
          .require(opt.device, "find on " + lc.label + " " + std::string(to_string(dir)));
}

Comparison compare_layers(const std::vector<LayerCase>& cases, const CompareOptions& opt) {
  require_compare_memory(cases, opt);  // before the peaks and any find
  Comparison out;
  out.device = opt.device;
  out.fingerprint = device_fingerprint(opt.device, 0);
  if (opt.device == DeviceKind::cpu) {
    for (int t : opt.threads) out.peaks.push_back(measure_fma_peak(t));
    out.bandwidth_gbs = measure_stream_bandwidth(0);
  }
  if (opt.device == DeviceKind::cpu && opt.probe)
    for (int t : opt.threads) {
      ExecContext c;
      c.threads = t;
      out.probes.emplace_back(c.resolved_threads(), ensure_probe(c, opt.probe_cache, opt.reprobe));
    }
  std::map<std::string, const Algorithm*> by_name;
  for (const Algorithm* a : find_candidates(opt.device)) by_name[std::string(a->name())] = a;
  const MachineLoad before = load_snapshot();
  for (size_t ti = 0; ti < opt.threads.size(); ++ti) {
    ExecContext ctx;
    ctx.device = opt.device;
    ctx.threads = opt.threads[ti];
    const double peak = opt.device == DeviceKind::cpu ? out.peaks[ti].gflops : 0;
    for (const LayerCase& lc : cases) {
      for (Direction dir : lc.dirs.empty() ? opt.dirs : lc.dirs) {
        FindOptions fo;
        fo.max_seconds = opt.max_seconds;
        std::vector<AlgoPerf> found = find(lc.problem, dir, ctx, fo);
        const std::vector<AlgoPerf> got = get(lc.problem, dir, ctx, size_t(-1), opt.calibration);
        if (const AlgoPerf* f = select(found, Constraints{})) mark_ties(found, std::string(f->algo));
        const AlgoPerf* fsel = select(found, Constraints{});
        const AlgoPerf* gsel = select(got, Constraints{});
        std::map<std::string, int> grank;
        for (size_t i = 0; i < got.size(); ++i)
          if (got[i].status == PerfStatus::ok) grank[got[i].algo] = int(i) + 1;
        std::vector<ComparisonRow> rows;
        for (size_t i = 0; i < found.size(); ++i) {
          const AlgoPerf& a = found[i];
          ComparisonRow r;
          r.layer = lc.label;
          r.problem = lc.problem.canonical();
          r.dir = std::string(to_string(dir));
          r.algo = a.algo;
          r.family = by_name.count(a.algo) ? std::string(by_name[a.algo]->family()) : "";
          r.status = std::string(to_string(a.status));
          r.note = a.note;
          r.threads = ctx.resolved_threads();
          r.flops = lc.problem.flops();
          r.bytes = lc.problem.bytes();
          r.time = a.time;
          r.spread = a.spread;
          r.max_rel_error = a.max_rel_error;
          r.workspace = a.workspace;
          r.find_rank = a.status == PerfStatus::ok ? int(i) + 1 : 0;
          r.get_rank = grank.count(a.algo) ? grank[a.algo] : 0;
          r.find_choice = fsel && fsel->algo == a.algo;
          r.lo = a.lo;
          r.hi = a.hi;
          r.tie = a.tie;
          r.get_choice = gsel && gsel->algo == a.algo;
          r.peak_fraction = peak > 0 && std::isfinite(r.gflops()) ? r.gflops() / peak : NAN;
          rows.push_back(r);
        }
        const VendorReport vr = vendor_choices(lc.problem, dir, ctx, found);
        VendorRow base;
        base.layer = lc.label;
        base.problem = lc.problem.canonical();
        base.dir = std::string(to_string(dir));
        base.threads = ctx.resolved_threads();
        base.status = vr.status;
        base.find_algo = fsel ? fsel->algo : "";
        base.find_time = fsel ? fsel->time : NAN;
        base.get_algo = gsel ? gsel->algo : "";
        base.get_time = gsel ? measured_time(found, gsel->algo) : NAN;
        std::vector<VendorRow> vrows;
        if (vr.choices.empty()) vrows.push_back(base);
        for (const VendorChoice& v : vr.choices) {
          vrows.push_back(base);
          vrows.back().choice = v;
        }
        if (opt.on_case) opt.on_case(lc, dir, ctx.resolved_threads(), rows);
        if (opt.on_vendor) opt.on_vendor(vrows);
        out.vendor.insert(out.vendor.end(), vrows.begin(), vrows.end());
        out.rows.insert(out.rows.end(), rows.begin(), rows.end());
      }
    }
  }
  out.load = check_load(before, load_snapshot());
  return out;
}

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
  return o + "  ]\n}\n";
}

namespace {
std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string o = "\"";
  for (char ch : s) o += ch == '"' ? std::string("\"\"") : std::string(1, ch);
  return o + "\"";
}
std::string num(double v) { return std::isfinite(v) ? json::number(v) : ""; }
}  // namespace

std::string comparison_csv(const Comparison& c) {
  std::string o = "layer,problem,direction,threads,algorithm,family,status,time_ms,spread,gflops,peak_fraction,flops,"
                  "bytes,workspace_bytes,max_rel_error,find_rank,get_rank,find_choice,get_choice,note\n";
  for (const ComparisonRow& r : c.rows)
    o += csv_field(r.layer) + "," + csv_field(r.problem) + "," + r.dir + "," + std::to_string(r.threads) + "," +
         r.algo + "," + r.family + "," + r.status + "," + num(r.time * 1e3) + "," + num(r.spread) + "," +
         num(r.gflops()) + "," + num(r.peak_fraction) + "," + num(r.flops) + "," + num(r.bytes) + "," +
         std::to_string(r.workspace) + "," + num(r.max_rel_error) + "," + std::to_string(r.find_rank) + "," +
         std::to_string(r.get_rank) + "," + (r.find_choice ? "1" : "0") + "," + (r.get_choice ? "1" : "0") + "," +
         csv_field(r.note) + "\n";
  return o;
}

std::string comparison_markdown(const Comparison& c) {
  int threads = 0;
  for (const auto& r : c.rows) threads = std::max(threads, r.threads);
  std::vector<std::string> algos, keys;
  std::map<std::string, std::map<std::string, const ComparisonRow*>> cell;
  for (const auto& r : c.rows) {
    if (r.threads != threads) continue;
    if (std::find(algos.begin(), algos.end(), r.algo) == algos.end()) algos.push_back(r.algo);
    const std::string key = r.layer + " | " + r.dir;
    if (std::find(keys.begin(), keys.end(), key) == keys.end()) keys.push_back(key);
    cell[key][r.algo] = &r;
  }
  std::sort(algos.begin(), algos.end());
  std::string o = "| layer | dir |";
  for (const auto& a : algos) o += " " + a + " |";
  o += "\n|---|---|";
  for (size_t i = 0; i < algos.size(); ++i) o += "---:|";
  o += "\n";
  for (const auto& k : keys) {
    o += "| " + k + " |";
    for (const auto& a : algos) {
      auto it = cell[k].find(a);
      if (it == cell[k].end() || !it->second->ran()) {
        o += " - |";
        continue;
      }
      const ComparisonRow& r = *it->second;
      char b[48];
      std::snprintf(b, sizeof b, "%.2f", r.time * 1e3);
      std::string v = r.find_rank == 1 ? "**" + std::string(b) + "**" : std::string(b);
      if (r.status != "ok") v += " (" + r.status + ")";
      if (r.find_choice) v += " F";
      else if (r.tie) v += " \u2248";
      if (r.get_choice) v += " G";
      for (const VendorRow& vr : c.vendor)
        if (vr.threads == threads && vr.layer + " | " + vr.dir == k && vr.choice.algo == a)
          v += vr.choice.source == "cudnnGet_v7" ? " Vh" : " V";
      o += " " + v + " |";
    }
    o += "\n";
  }
  // Vendor picks the table cannot mark (find did not run them here).
  std::string unmarked;
  for (const VendorRow& vr : c.vendor) {
    if (vr.threads != threads || vr.choice.source.empty()) continue;
    bool marked = false;
    if (auto row = cell.find(vr.layer + " | " + vr.dir); row != cell.end())
      if (auto it = row->second.find(vr.choice.algo); it != row->second.end()) marked = it->second->ran();
    if (marked) continue;
    unmarked += "- " + vr.layer + " " + vr.dir + ": " + vr.choice.source + " picks " + vr.choice.algo +
                " (not measured by find)\n";
  }
  if (!unmarked.empty()) o += "\nVendor picks without a measured cell:\n" + unmarked;
  return o;
}

}  // namespace convlab
