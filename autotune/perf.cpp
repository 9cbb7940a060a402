#include "autotune/perf.hpp"

#include <algorithm>
#include <tuple>

#include "algorithms/registry.hpp"

namespace convlab {

std::string_view to_string(PerfStatus s) {
  switch (s) {
    case PerfStatus::ok: return "ok";
    case PerfStatus::inaccurate: return "inaccurate";
    case PerfStatus::failed: return "failed";
    case PerfStatus::over_workspace: return "over-workspace";
    case PerfStatus::unsupported: return "unsupported";
    case PerfStatus::unavailable: return "unavailable";
  }
  return "?";
}

bool parse_perf_status(std::string_view t, PerfStatus& out) {
  for (PerfStatus s : {PerfStatus::ok, PerfStatus::inaccurate, PerfStatus::failed, PerfStatus::over_workspace,
                       PerfStatus::unsupported, PerfStatus::unavailable})
    if (to_string(s) == t) {
      out = s;
      return true;
    }
  return false;
}

namespace {
constexpr double kMinNoise = 0.01, kMaxNoise = 0.10;
double noise(const AlgoPerf& a) { return std::clamp(std::isfinite(a.spread) ? a.spread : 0.0, kMinNoise, kMaxNoise); }

// The fixed tie-break rule: deterministic, then smaller workspace, then name.
bool tie_order(const AlgoPerf& a, const AlgoPerf& b) {
  return std::make_tuple(!a.deterministic, a.workspace, a.algo) < std::make_tuple(!b.deterministic, b.workspace, b.algo);
}
}  // namespace

bool near_tie(const AlgoPerf& a, const AlgoPerf& b) {
  if (!std::isfinite(a.time) || !std::isfinite(b.time)) return false;
  const double lo = std::min(a.time, b.time), hi = std::max(a.time, b.time);
  return hi - lo <= std::max(noise(a), noise(b)) * lo;
}

void rank(std::vector<AlgoPerf>& list) {
  auto good = [](const AlgoPerf& a) { return a.status == PerfStatus::ok && std::isfinite(a.time); };
  std::vector<AlgoPerf> ok, rest;
  for (auto& a : list) (good(a) ? ok : rest).push_back(std::move(a));
  // Plain order by time (name as the last resort so equal times sort stably).
  std::sort(ok.begin(), ok.end(), [](const AlgoPerf& a, const AlgoPerf& b) {
    return std::tie(a.time, a.algo) < std::tie(b.time, b.algo);
  });
  // Clusters: the fastest remaining entry and every entry within its noise.
  std::vector<AlgoPerf> out;
  size_t i = 0;
  while (i < ok.size()) {
    size_t j = i + 1;
    while (j < ok.size() && near_tie(ok[i], ok[j])) ++j;
    std::stable_sort(ok.begin() + long(i), ok.begin() + long(j), tie_order);
    i = j;
  }
  std::sort(rest.begin(), rest.end(), [](const AlgoPerf& a, const AlgoPerf& b) {
    return std::make_tuple(int(a.status), a.algo) < std::make_tuple(int(b.status), b.algo);
  });
  list = std::move(ok);
  for (auto& a : rest) list.push_back(std::move(a));
  mark_ties(list, list.empty() ? std::string_view() : std::string_view(list.front().algo));
}

bool indistinguishable(const AlgoPerf& a, const AlgoPerf& b) {
  if (a.status != PerfStatus::ok || b.status != PerfStatus::ok) return false;
  const bool intervals = std::isfinite(a.lo) && std::isfinite(a.hi) && std::isfinite(b.lo) && std::isfinite(b.hi);
  if (intervals && a.lo <= b.hi && b.lo <= a.hi) return true;
  return near_tie(a, b);
}

void mark_ties(std::vector<AlgoPerf>& list, std::string_view pick) {
  const AlgoPerf* p = nullptr;
  for (const AlgoPerf& a : list)
    if (a.algo == pick && a.status == PerfStatus::ok) p = &a;
  std::vector<bool> tied(list.size(), false);
  bool any = false;
  for (size_t i = 0; i < list.size(); ++i)
    if (p && &list[i] != p && indistinguishable(list[i], *p)) tied[i] = any = true;
  for (size_t i = 0; i < list.size(); ++i) list[i].tie = tied[i] || (any && &list[i] == p);
}

std::vector<std::string> ties_of(const std::vector<AlgoPerf>& list, std::string_view pick) {
  std::vector<std::string> out;
  for (const AlgoPerf& p : list)
    if (p.algo == pick && p.status == PerfStatus::ok)
      for (const AlgoPerf& a : list)
        if (&a != &p && indistinguishable(a, p)) out.push_back(a.algo);
  return out;
}

const AlgoPerf* select(const std::vector<AlgoPerf>& ranked, const Constraints& c) {
  for (const AlgoPerf& a : ranked) {
    if (a.status != PerfStatus::ok) continue;
    if (a.workspace > c.workspace_limit) continue;
    if (c.deterministic && !a.deterministic) continue;
    if (std::isfinite(a.max_rel_error) && a.max_rel_error > c.max_error) continue;
    const Algorithm* reg = find_algorithm(a.algo);
    if (!c.tf32 && reg && reg->math() != "fp32") continue;
    if (c.own && reg && reg->vendor_peer()) continue;
    return &a;
  }
  return nullptr;
}

bool screen_candidate(const Algorithm& a, const ConvProblem& p, Direction dir, size_t workspace_limit, AlgoPerf& r) {
  r.algo = std::string(a.name());
  r.deterministic = a.deterministic();
  if (auto why = a.unavailable_reason(); !why.empty()) {
    r.status = PerfStatus::unavailable;
    r.note = why;
    return false;
  }
  if (auto s = a.supports(p, dir); !s) {
    r.status = PerfStatus::unsupported;
    r.note = s.reason;
    return false;
  }
  if ((r.workspace = a.workspace_bytes(p, dir)) > workspace_limit) {
    r.status = PerfStatus::over_workspace;
    r.note = "needs " + std::to_string(r.workspace) + " bytes, limit " + std::to_string(workspace_limit);
    return false;
  }
  return true;
}

}  // namespace convlab
