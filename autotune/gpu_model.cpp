// The GPU cost model (gpu_model.hpp).
#include "autotune/gpu_model.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>

#include "core/error.hpp"

namespace convlab {

namespace {

// Published limits (SM count, the maximum SM clock nvidia-smi reports, L2
// bandwidth); the efficiencies are scripts/gpu_model.py's fit on the measured
// rows named in fitted_on.
const GpuCard kCards[] = {
    {"h100", "NVIDIA H100 SXM (132 SMs, 1.98 GHz, L2 5.5 TB/s)", 132, 1.98e9, 5.5e12, 0.40, 0.40, 0.65, 0.65,
     "fitted on the H100's AlexNet rows of 2026-11-26, run 3 (docs/results/2026-11-26-h100/model-h100.md)"},
    {"h200", "NVIDIA H200 (132 SMs, 1.98 GHz, L2 5.5 TB/s)", 132, 1.98e9, 5.5e12, 0.40, 0.40, 0.80, 0.50,
     "fitted on the H200's AlexNet rows of 2026-11-26, run 5 (docs/results/2026-11-26-h200/model-h200-run5.md)"},
};

// One CSV line's fields; "..." may hold commas and "" for a quote.
std::vector<std::string> csv_fields(const std::string& line) {
  std::vector<std::string> out(1);
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') out.back() += '"', ++i;
      else if (c == '"') quoted = false;
      else out.back() += c;
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      out.emplace_back();
    } else if (c != '\r') {
      out.back() += c;
    }
  }
  if (quoted) fail("counts CSV: an unterminated quote in '" + printable(line.substr(0, 80)) + "'");
  return out;
}

double count_field(const std::string& text, const std::string& column) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || !(v >= 0) || !std::isfinite(v))
    fail("counts CSV: column " + column + " holds '" + printable(text) + "', not a count");
  return v;
}

}  // namespace

const GpuCard& gpu_card(std::string_view name) {
  for (const GpuCard& c : kCards)
    if (c.name == name) return c;
  fail("unknown GPU model '" + printable(name) + "' (known: " + gpu_card_names() + ")");
}

std::string gpu_card_names() {
  std::string out;
  for (const GpuCard& c : kCards) out += (out.empty() ? "" : ", ") + std::string(c.name);
  return out;
}

std::vector<LaunchCounts> parse_launch_counts(const std::string& csv) {
  std::vector<std::string> lines;
  for (size_t pos = 0; pos < csv.size();) {
    const size_t nl = std::min(csv.find('\n', pos), csv.size());
    if (nl > pos) lines.push_back(csv.substr(pos, nl - pos));
    pos = nl + 1;
  }
  if (lines.empty()) fail("counts CSV: empty");
  const std::vector<std::string> header = csv_fields(lines[0]);
  std::map<std::string, size_t> at;
  for (size_t i = 0; i < header.size(); ++i) at[header[i]] = i;
  static const char* kNeeded[] = {"kernel", "fma_instructions", "warp_instructions", "mma_instructions",
                                  "shared_ld_wavefronts", "shared_st_wavefronts", "global_ld_sectors",
                                  "global_st_sectors", "global_atom_sectors"};
  for (const char* c : kNeeded)
    if (!at.count(c)) fail(std::string("counts CSV: no column ") + c + " in its header");
  std::vector<LaunchCounts> out;
  for (size_t l = 1; l < lines.size(); ++l) {
    const std::vector<std::string> f = csv_fields(lines[l]);
    if (f.size() != header.size())
      fail("counts CSV: row " + std::to_string(l) + " has " + std::to_string(f.size()) + " fields, the header " +
           std::to_string(header.size()));
    const auto num = [&](const char* c) { return count_field(f[at[c]], c); };
    LaunchCounts lc;
    lc.kernel = f[at["kernel"]];
    lc.fma = num("fma_instructions");
    lc.warp = num("warp_instructions");
    lc.mma = num("mma_instructions");
    lc.smem_wavefronts = num("shared_ld_wavefronts") + num("shared_st_wavefronts");
    lc.sectors = num("global_ld_sectors") + num("global_st_sectors") + num("global_atom_sectors");
    out.push_back(std::move(lc));
  }
  return out;
}

ModelledTime modelled_time(const std::vector<LaunchCounts>& launches, const GpuCard& card) {
  ModelledTime t;
  double longest = -1;
  const double per_clock = double(card.sms) * card.clock_hz;
  for (const LaunchCounts& l : launches) {
    const std::pair<const char*, double> floors[] = {
        {"fma", l.fma / (4 * per_clock) / card.eff_fma},
        {"sched", (l.warp + l.fma + l.mma) / (4 * per_clock) / card.eff_sched},
        {"smem", l.smem_wavefronts / per_clock / card.eff_smem},
        {"l2", 32 * l.sectors / card.l2_bytes_per_s / card.eff_l2},
        {"tensor", l.mma / per_clock},  // 1024 multiply-adds per MMA, 1024 per SM and clock
    };
    const auto* top = std::max_element(std::begin(floors), std::end(floors),
                                       [](const auto& a, const auto& b) { return a.second < b.second; });
    const double s = kLaunchSeconds + top->second;
    t.seconds += s;
    if (s > longest) longest = s, t.bound = top->first, t.kernel = l.kernel;
  }
  return t;
}

}  // namespace convlab
