#include "autotune/vendor.hpp"

#include <algorithm>
#include <cstdio>
#include <exception>

#include "algorithms/registry.hpp"
#include "core/device.hpp"
#include "core/error.hpp"
#include "core/json.hpp"
#if CONVLAB_HAS_CUDA
#include "algorithms/cudnn/cudnn_conv.hpp"
#endif

namespace convlab {

double measured_time(const std::vector<AlgoPerf>& found, std::string_view algo) {
  for (const AlgoPerf& r : found)
    if (r.algo == algo && r.status == PerfStatus::ok) return r.time;
  return std::numeric_limits<double>::quiet_NaN();
}

namespace {

#if CONVLAB_HAS_CUDA
void add_issue(VendorReport& r, const std::string& why) {
  r.status = r.status == "ok" ? why : r.status + "; " + why;
}

// The first successful entry of a cuDNN list within the constraints.
void take_first(VendorReport& rep, const char* source, const std::vector<CudnnPerf>& list, const VendorOptions& opt,
                const std::vector<AlgoPerf>& found) {
  for (const CudnnPerf& e : list) {
    if (e.status != "CUDNN_STATUS_SUCCESS") continue;
    if (e.workspace > opt.workspace_limit) continue;
    if (opt.deterministic && !e.deterministic) continue;
    VendorChoice v;
    v.source = source;
    v.algo = e.algo;
    const Algorithm* a = find_algorithm(e.algo);
    v.family = a ? std::string(a->family()) : "unknown";
    v.vendor_status = e.status;
    v.math = e.math;
    v.vendor_time = e.time_ms >= 0 ? e.time_ms * 1e-3 : std::numeric_limits<double>::quiet_NaN();
    v.workspace = e.workspace;
    v.deterministic = e.deterministic;
    v.unknown_id = !e.known;
    v.our_time = v.unknown_id ? std::numeric_limits<double>::quiet_NaN() : measured_time(found, v.algo);
    rep.choices.push_back(std::move(v));
    return;
  }
  add_issue(rep, std::string(source) + ": no successful entry" +
                     (opt.workspace_limit != size_t(-1) || opt.deterministic ? " within the constraints" : "") + " (" +
                     std::to_string(list.size()) + " listed)");
}
#endif

}  // namespace

// (p, dir, found, opt go unused in a build with neither oneDNN nor CUDA.)
VendorReport vendor_choices([[maybe_unused]] const ConvProblem& p, [[maybe_unused]] Direction dir,
                            const ExecContext& ctx, [[maybe_unused]] const std::vector<AlgoPerf>& found,
                            [[maybe_unused]] const VendorOptions& opt) {
  VendorReport rep;
  if (ctx.device == DeviceKind::cpu) {
#ifdef CONVLAB_HAS_ONEDNN
    // The registered CPU algorithm that lets oneDNN pick its implementation (onednn.auto).
    const Algorithm* onednn = nullptr;
    for (const Algorithm* a : registry())
      if (!onednn && a->device() == DeviceKind::cpu && a->picks_own_implementation()) onednn = a;
    if (!onednn) {
      rep.status = "no CPU algorithm that lets oneDNN pick is registered";
      return rep;
    }
    if (const Support s = onednn->supports(p, dir); !s) {
      rep.status = "onednn_auto: " + s.reason;
      return rep;
    }
    VendorChoice v;
    v.source = "onednn_auto";
    v.algo = std::string(onednn->name());
    try {
      v.implementation = onednn->implementation(p, dir, ctx.resolved_threads());
    } catch (const Error& e) {
      rep.status = std::string("onednn_auto: ") + e.what();
      return rep;
    }
    v.family = onednn->implementation_family(v.implementation);
    v.vendor_status = "ok";
    v.math = std::string(onednn->math());
    v.workspace = onednn->workspace_bytes(p, dir);
    v.deterministic = onednn->deterministic();
    v.our_time = measured_time(found, v.algo);
    rep.choices.push_back(std::move(v));
#else
    rep.status = "oneDNN not built (CONVLAB_ONEDNN=OFF): no vendor choice on the CPU";
#endif
    return rep;
  }
  // CUDA
  if (!cuda_info().available) {
    rep.status = "no CUDA device (" + cuda_info().reason + ")";
    return rep;
  }
#if CONVLAB_HAS_CUDA
  if (opt.measure) {
    try {
      take_first(rep, "cudnnFind", cudnn_find(p, dir, opt.tf32), opt, found);
    } catch (const DeviceFault&) {
      throw;  // the device is gone: the caller's loop stops with this one line
    } catch (const std::exception& e) {
      add_issue(rep, std::string("cudnnFind: ") + e.what());
    }
  }
  try {
    take_first(rep, "cudnnGet_v7", cudnn_get(p, dir, opt.tf32), opt, found);
  } catch (const DeviceFault&) {
    throw;
  } catch (const std::exception& e) {
    add_issue(rep, std::string("cudnnGet_v7: ") + e.what());
  }
#else
  rep.status = "built without CUDA (CONVLAB_CUDA=OFF): cuDNN is not compiled";
#endif
  return rep;
}

namespace {
std::string fmt_ms(double s) {
  if (!std::isfinite(s)) return "-";
  char b[32];
  std::snprintf(b, sizeof b, "%.3f ms", s * 1e3);
  return b;
}
std::string fmt_ratio(double r) {
  if (!std::isfinite(r)) return "-";
  char b[32];
  std::snprintf(b, sizeof b, "%.2fx", r);
  return b;
}
std::string fmt_mb(size_t bytes) {
  char b[32];
  std::snprintf(b, sizeof b, "%.1f MB", double(bytes) / 1e6);
  return b;
}
}  // namespace

std::string vendor_text(const VendorChoice& v, const std::string& find_algo, double find_time,
                        const std::string& get_algo, double get_time) {
  std::string o = v.source + " -> ";
  if (v.source == "onednn_auto") {
    o += v.implementation + " (" + v.family + "), " + v.algo;
  } else {
    o += v.algo + " (";
    if (std::isfinite(v.vendor_time)) o += "its time " + fmt_ms(v.vendor_time) + ", ";
    o += "ws " + fmt_mb(v.workspace) + ", " + (v.deterministic ? "det" : "non-det") + ", " + v.math + ")";
  }
  if (v.unknown_id) return o + ": an unknown cuDNN algorithm id (convlab has no entry for it; find cannot measure it)";
  o += ": our find " + fmt_ms(v.our_time);
  if (!std::isfinite(v.our_time)) return o + " (not measured)";
  // "= 1.13x find's pick X (t ms), 0.90x get's pick Y (t ms)"; one clause when both picked the same.
  auto clause = [&](const std::string& who, const std::string& algo, double t) {
    if (v.algo == algo) return who + " pick";
    return fmt_ratio(v.our_time / t) + " " + who + " pick " + algo + " (" + fmt_ms(t) + ")";
  };
  std::vector<std::string> parts;
  if (!find_algo.empty() && find_algo == get_algo)
    parts.push_back(clause("find's and get's", find_algo, find_time));
  else {
    if (!find_algo.empty()) parts.push_back(clause("find's", find_algo, find_time));
    if (!get_algo.empty()) parts.push_back(clause("get's", get_algo, get_time));
  }
  for (size_t i = 0; i < parts.size(); ++i) o += (i ? ", " : " = ") + parts[i];
  return o;
}

void tally(std::vector<VendorTally>& tallies, const VendorReport& r, const std::string& find_algo, double find_time) {
  if (find_algo.empty()) return;
  for (const VendorChoice& v : r.choices) {
    auto it = std::find_if(tallies.begin(), tallies.end(), [&](const VendorTally& t) { return t.source == v.source; });
    if (it == tallies.end()) {
      tallies.push_back({});
      tallies.back().source = v.source;
      it = tallies.end() - 1;
    }
    ++it->pairs;
    if (v.unknown_id) {
      ++it->unknown_ids;
      continue;
    }
    const bool same = v.algo == find_algo;
    it->same += same;
    if (same || (std::isfinite(v.our_time) && v.our_time <= 1.10 * find_time))
      ++it->within_10pct;
    else if (!std::isfinite(v.our_time))
      ++it->unmeasured;
  }
}

std::string tally_text(const VendorTally& t) {
  std::string o = "same pick " + std::to_string(t.same) + "/" + std::to_string(t.pairs) + ", within 10% " +
                  std::to_string(t.within_10pct) + "/" + std::to_string(t.pairs);
  if (t.unmeasured) o += ", " + std::to_string(t.unmeasured) + " not measured by find";
  if (t.unknown_ids) o += ", " + std::to_string(t.unknown_ids) + " unknown cuDNN id" +
                          (t.unknown_ids == 1 ? "" : "s");
  return o;
}

std::string vendor_json(const VendorChoice& v, const std::string& find_algo, double find_time,
                        const std::string& get_algo, double get_time) {
  auto str_or_null = [](const std::string& s) { return s.empty() ? std::string("null") : json::quote(s); };
  return "{\"source\":" + json::quote(v.source) + ",\"algorithm\":" + json::quote(v.algo) + ",\"family\":" +
         json::quote(v.family) + ",\"implementation\":" + str_or_null(v.implementation) +
         ",\"vendor_status\":" + json::quote(v.vendor_status) + ",\"math\":" + json::quote(v.math) +
         ",\"vendor_time_ms\":" + json::number(v.vendor_time * 1e3) + ",\"workspace_bytes\":" +
         std::to_string(v.workspace) + ",\"deterministic\":" + (v.deterministic ? "true" : "false") +
         ",\"time_ms\":" + json::number(v.our_time * 1e3) + ",\"find_choice\":" + str_or_null(find_algo) +
         ",\"find_time_ms\":" + json::number(find_time * 1e3) + ",\"same_as_find\":" +
         (!find_algo.empty() && v.algo == find_algo ? "true" : "false") +
         ",\"ratio_to_find\":" + json::number(v.our_time / find_time) + ",\"get_choice\":" + str_or_null(get_algo) +
         ",\"get_time_ms\":" + json::number(get_time * 1e3) + ",\"ratio_to_get\":" + json::number(v.our_time / get_time) +
         "}";
}

}  // namespace convlab
