#include "train/compare.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <sstream>

#include "algorithms/execute.hpp"
#include "algorithms/registry.hpp"
#include "core/json.hpp"
#include "core/layers.hpp"

namespace convlab::train {

std::vector<LayerAlgoTime> compare_layer_algorithms(const std::string& net, int batch, const ExecContext& ctx,
                                                    double max_seconds_per_case,
                                                    const std::function<void(const std::string&)>& log) {
  std::vector<LayerAlgoTime> rows;
  for (const NetLayer& l : network_layers(net, batch)) {
    for (Direction dir : kAllDirections) {
      const ConvData data = ConvData::random(l.problem, 1);
      for (const Algorithm* a : registry()) {
        if (a->device() != ctx.device || a->family() == "reference" || !a->unavailable_reason().empty()) continue;
        LayerAlgoTime r;
        r.layer = l.id;
        r.dir = std::string(to_string(dir));
        r.algo = std::string(a->name());
        r.family = std::string(a->family());
        if (auto s = a->supports(l.problem, dir); !s) {
          r.supported = false;
          r.reason = s.reason;
          rows.push_back(r);
          continue;
        }
        ConvRunner runner(*a, l.problem, dir, ctx);
        runner.upload(data);
        TimingOptions opt;
        opt.warmup = 1;
        opt.min_reps = 3;
        opt.max_reps = 10;
        opt.max_seconds = max_seconds_per_case;
        const TimingStats t = runner.time(opt);
        r.median_s = t.median;
        r.gflops = l.problem.flops() / t.median * 1e-9;
        r.workspace_bytes = runner.workspace_bytes();
        if (log) {
          char line[200];
          std::snprintf(line, sizeof line, "%s %s %s: %.2f ms", r.layer.c_str(), r.dir.c_str(), r.algo.c_str(),
                        r.median_s * 1e3);
          log(line);
        }
        rows.push_back(r);
      }
    }
  }
  return rows;
}

std::string comparison_markdown(const std::vector<LayerAlgoTime>& rows) {
  // One table: rows = (layer, dir), columns = algorithms, cells = ms; the fastest in bold.
  std::vector<std::string> algos, keys;
  std::map<std::string, std::map<std::string, const LayerAlgoTime*>> cell;
  for (auto& r : rows) {
    if (std::find(algos.begin(), algos.end(), r.algo) == algos.end()) algos.push_back(r.algo);
    const std::string key = r.layer + " | " + r.dir;
    if (std::find(keys.begin(), keys.end(), key) == keys.end()) keys.push_back(key);
    cell[key][r.algo] = &r;
  }
  std::ostringstream o;
  o << "| layer | dir |";
  for (auto& a : algos) o << " " << a << " |";
  o << "\n|---|---|";
  for (size_t i = 0; i < algos.size(); ++i) o << "---:|";
  o << "\n";
  for (auto& k : keys) {
    const LayerAlgoTime* best = nullptr;
    for (auto& [a, r] : cell[k])
      if (r->supported && (!best || r->median_s < best->median_s)) best = r;
    o << "| " << k << " |";
    for (auto& a : algos) {
      auto it = cell[k].find(a);
      if (it == cell[k].end() || !it->second->supported) {
        o << " - |";
        continue;
      }
      char b[32];
      std::snprintf(b, sizeof b, "%.2f", it->second->median_s * 1e3);
      o << " " << (it->second == best ? "**" + std::string(b) + "**" : std::string(b)) << " |";
    }
    o << "\n";
  }
  return o.str();
}

std::string comparison_csv(const std::vector<LayerAlgoTime>& rows) {
  std::ostringstream o;
  o << "layer,dir,algo,family,supported,median_ms,gflops,workspace_bytes,reason\n";
  for (auto& r : rows) {
    std::string reason = r.reason;
    for (char& c : reason)
      if (c == ',' || c == '"') c = ';';
    char b[64];
    std::snprintf(b, sizeof b, "%.4f,%.2f", r.median_s * 1e3, r.gflops);
    o << r.layer << "," << r.dir << "," << r.algo << "," << r.family << "," << (r.supported ? 1 : 0) << ","
      << (r.supported ? std::string(b) : std::string(",")) << "," << r.workspace_bytes << "," << reason << "\n";
  }
  return o.str();
}

std::string comparison_json(const std::vector<LayerAlgoTime>& rows) {
  std::ostringstream o;
  o << "[";
  for (size_t i = 0; i < rows.size(); ++i) {
    const auto& r = rows[i];
    o << (i ? "," : "") << "\n    {\"layer\": " << json::quote(r.layer) << ", \"dir\": " << json::quote(r.dir)
      << ", \"algo\": " << json::quote(r.algo) << ", \"family\": " << json::quote(r.family)
      << ", \"supported\": " << (r.supported ? "true" : "false");
    if (r.supported)
      o << ", \"median_s\": " << json::number(r.median_s) << ", \"gflops\": " << json::number(r.gflops)
        << ", \"workspace_bytes\": " << r.workspace_bytes;
    else
      o << ", \"reason\": " << json::quote(r.reason);
    o << "}";
  }
  o << "\n  ]";
  return o.str();
}

}  // namespace convlab::train
