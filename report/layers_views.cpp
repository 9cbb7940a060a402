// layers.csv and the Markdown table of the per-layer comparison (report/layers.hpp).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include "core/json.hpp"
#include "report/layers.hpp"

namespace convlab {

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
