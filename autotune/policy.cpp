#include "autotune/policy.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "algorithms/registry.hpp"
#include "autotune/cache.hpp"
#include "autotune/find.hpp"
#include "autotune/get.hpp"
#include "core/error.hpp"
#include "core/timing.hpp"

namespace convlab {

size_t parse_bytes(std::string_view text) {
  std::string t(text);
  if (t.empty()) fail("empty byte count");
  size_t mult = 1;
  switch (t.back()) {
    case 'k': case 'K': mult = size_t(1) << 10; break;
    case 'm': case 'M': mult = size_t(1) << 20; break;
    case 'g': case 'G': mult = size_t(1) << 30; break;
    default: break;
  }
  if (mult != 1) t.pop_back();
  if (t.empty() || t.find_first_not_of("0123456789") != std::string::npos || t.size() > 15)
    fail("bad byte count '" + printable(text) + "' (expected e.g. 4096, 64K, 256M, 2G)");
  return size_t(std::stoull(t)) * mult;
}

std::string Policy::name() const {
  std::string n;
  switch (kind) {
    case Kind::default_: n = "default"; break;
    case Kind::fixed: n = "fixed:" + fixed_algo; break;
    case Kind::get: n = cache_path.empty() ? "get" : "get:" + cache_path; break;
    case Kind::find: n = "find"; break;
    case Kind::find_context: n = "find-context"; break;
    case Kind::cache: n = cache_path.empty() ? "cache" : "cache:" + cache_path; break;
  }
  if (std::isfinite(max_error)) {
    char buf[48];
    std::snprintf(buf, sizeof buf, ",max-error=%g", max_error);
    n += buf;
  }
  if (deterministic) n += ",deterministic";
  if (tf32) n += ",tf32";
  if (own) n += ",own";
  if (workspace_limit != size_t(-1)) n += ",workspace=" + std::to_string(workspace_limit);
  return n;
}

namespace {
// One ",option" suffix; false when `opt` is not an option (then it belongs to the head, e.g. a path).
bool apply_option(Policy& p, std::string_view opt) {
  if (opt == "deterministic") {
    p.deterministic = true;
    return true;
  }
  if (opt == "tf32") {
    p.tf32 = true;
    return true;
  }
  if (opt == "own") {
    p.own = true;
    return true;
  }
  if (opt.rfind("max-error=", 0) == 0) {
    const std::string v(opt.substr(10));
    char* end = nullptr;
    const double e = std::strtod(v.c_str(), &end);
    if (v.empty() || *end != '\0' || !(e > 0))
      fail("policy option 'max-error=" + printable(v) + "': expected a positive number");
    p.max_error = e;
    return true;
  }
  if (opt.rfind("workspace=", 0) == 0) {
    p.workspace_limit = parse_bytes(opt.substr(10));
    return true;
  }
  return false;
}
}  // namespace

Policy Policy::parse(std::string_view full) {
  Policy p;
  // Options are peeled off the end so that a path may itself contain commas.
  std::string_view text = full;
  while (true) {
    const size_t comma = text.rfind(',');
    if (comma == std::string_view::npos || !apply_option(p, text.substr(comma + 1))) break;
    text = text.substr(0, comma);
  }
  if (text == "default") return p;
  if (text == "get") { p.kind = Kind::get; return p; }
  if (text == "find") { p.kind = Kind::find; return p; }
  if (text == "find-context") { p.kind = Kind::find_context; return p; }
  if (text == "cache") { p.kind = Kind::cache; return p; }
  for (auto [prefix, kind] : {std::pair{"cache:", Kind::cache}, std::pair{"get:", Kind::get}}) {
    const std::string_view pre(prefix);
    if (text.rfind(pre, 0) == 0) {
      p.kind = kind;
      p.cache_path = std::string(text.substr(pre.size()));
      if (p.cache_path.empty())
        fail("policy '" + printable(full) + "' needs a file path after '" + std::string(pre) + "'");
      return p;
    }
  }
  if (text.rfind("fixed:", 0) == 0) {
    p.kind = Kind::fixed;
    p.fixed_algo = std::string(text.substr(6));
    const Algorithm& a = get_algorithm(p.fixed_algo);  // throws for unknown names
    if (a.is_oracle())
      fail("policy 'fixed:" + printable(p.fixed_algo) + "': the reference is not a policy choice");
    return p;
  }
  fail("unknown policy '" + printable(full) +
       "' (expected default, fixed:<algorithm>, get[:<path>], find, find-context, cache[:<path>], then optional "
       ",max-error=E ,deterministic ,workspace=BYTES ,tf32 ,own)");
}

namespace {

bool is_constraint(std::string_view t) {
  return t == "deterministic" || t == "tf32" || t == "own" || t.rfind("max-error=", 0) == 0 || t.rfind("workspace=", 0) == 0;
}

// "" when `text` is one valid policy, else Policy::parse's message.
std::string parse_error(std::string_view text) {
  try {
    Policy::parse(text);
    return {};
  } catch (const Error& e) {
    return e.what();
  }
}

}  // namespace

std::vector<std::string> split_policy_list(std::string_view text) {
  std::vector<std::string> out;
  if (text.find(';') != std::string_view::npos) {
    // The explicit form: every ';'-piece is exactly one policy (its commas are constraints or path characters).
    for (std::string_view piece : split_list(text, ';')) {
      if (piece.empty()) continue;
      Policy::parse(piece);  // throws with the reason
      out.emplace_back(piece);
    }
    if (out.empty()) fail("empty policy list '" + printable(text) + "'");
    return out;
  }
  if (text.empty()) fail("empty policy list");
  const std::string whole_err = parse_error(text);
  if (text.find(',') == std::string_view::npos) {
    if (!whole_err.empty()) fail(whole_err);
    return {std::string(text)};
  }
  // The plain comma list: every token a policy without constraints.
  const auto tokens = split_list(text, ',');
  bool list = true, constraint = false;
  std::string token_err;
  for (std::string_view t : tokens) {
    constraint = constraint || is_constraint(t);
    if (!list) continue;
    const std::string e = t.empty() ? "empty policy in '" + printable(text) + "'" : parse_error(t);
    if (!e.empty()) {
      list = false;
      token_err = e;
    }
  }
  if (whole_err.empty() && list) {
    std::string as_list;
    for (std::string_view t : tokens) as_list += (as_list.empty() ? "" : ";") + std::string(t);
    fail("policy list '" + printable(text) + "' is ambiguous: write '" + printable(as_list) + "' for " +
         std::to_string(tokens.size()) + " policies, or end it with ';' for one policy whose path contains ','");
  }
  if (whole_err.empty()) return {std::string(text)};
  if (list) {
    for (std::string_view t : tokens) out.emplace_back(t);
    return out;
  }
  // Neither reading works: say what is wrong with the reading the user most likely meant.
  if (!constraint) fail(token_err);
  if (whole_err.rfind("unknown policy", 0) == 0)
    fail(whole_err + "; separate policies with ';' (e.g. 'find,deterministic;default')");
  fail(whole_err);
}

std::string policy_unavailable_reason(const Policy& policy, DeviceKind device) {
  if (policy.kind != Policy::Kind::fixed) return {};
  const Algorithm& a = get_algorithm(policy.fixed_algo);
  if (a.device() != device)
    return std::string(a.name()) + " runs on " + std::string(to_string(a.device())) + ", this run is on " +
           std::string(to_string(device));
  if (std::string why = a.unavailable_reason(); !why.empty()) return std::string(a.name()) + " cannot run here: " + why;
  return {};
}

namespace {

bool usable(const Algorithm& a, const ConvProblem& p, Direction dir, const ExecContext& ctx, size_t ws_limit,
            bool need_deterministic, bool allow_tf32, bool own_only) {
  return a.device() == ctx.device && !a.is_oracle() && a.unavailable_reason().empty() && !(own_only && a.vendor_peer()) &&
         (allow_tf32 || a.math() == "fp32") && (!need_deterministic || a.deterministic()) && a.supports(p, dir).ok &&
         a.workspace_bytes(p, dir) <= ws_limit;
}

// Per-process state of the measuring policies: find results by key, open caches by path.
struct TunerState {
  std::mutex mu;
  std::map<std::string, std::vector<AlgoPerf>> found;  // CacheKey::str() + limit + tf32 -> ranked list
  std::map<std::string, std::unique_ptr<TuneCache>> caches;
  std::map<std::string, std::unique_ptr<Calibration>> calibrations;  // by cache path and device
  std::map<std::string, ProbeOutcome> probes;                        // by device
};
TunerState& state() {
  static TunerState s;
  return s;
}

TuneCache& open_cache(TunerState& s, const std::string& path) {
  auto& c = s.caches[path];
  if (!c) {
    c = std::make_unique<TuneCache>(path);
    c->load();
  }
  return *c;
}

Choice pick(const std::vector<AlgoPerf>& all, const Constraints& c, const std::string& how, const ConvProblem& p,
            Direction dir) {
  // Only registered algorithms can be convlab's choice: a cache line may name one this build does not
  // have (renamed, removed like cudnn.direct, or a cudnn.unknown_<id> written by hand).
  std::vector<AlgoPerf> ranked;
  for (const AlgoPerf& r : all)
    if (find_algorithm(r.algo)) ranked.push_back(r);
  const AlgoPerf* best = select(ranked, c);
  if (!best)
    fail("no algorithm meets the constraints for " + p.key() + " " + std::string(to_string(dir)) + " (" +
         std::to_string(ranked.size()) + " candidates " + how + ")");
  int ok = 0;
  for (const auto& r : ranked) ok += r.status == PerfStatus::ok;
  return {&get_algorithm(best->algo), how + ": best of " + std::to_string(ok), 0};
}

std::string cache_file(const Policy& policy) {
  return policy.cache_path.empty() ? TuneCache::default_path() : policy.cache_path;
}

// get[:path]: the cost model's ranking, calibrated once per process from the cache file's entries of this device.
Choice choose_by_model(const Policy& policy, const ConvProblem& p, Direction dir, const ExecContext& ctx,
                       const Constraints& cons) {
  TunerState& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  const std::string path = cache_file(policy);
  const std::string device = make_cache_key(p, dir, ctx).device;
  // The machine probe first (the calibration's predictions use it): this process's, else the cache
  // file's, else measured once and stored in the file (the default cache is created for it).
  auto& probe = s.probes[device];
  if (ctx.device == DeviceKind::cpu && probe.source == ProbeOutcome::Source::none)
    probe = ensure_probe(ctx, &open_cache(s, path));
  auto& cal = s.calibrations[path + '\x1f' + device];
  if (!cal) {
    std::vector<Measured> data;
    if (!policy.cache_path.empty() || std::filesystem::exists(path)) data = open_cache(s, path).measurements({device});
    cal = std::make_unique<Calibration>(Calibration::fit(data, MachineModel::for_context(ctx)));
  }
  const auto ranked = get(p, dir, ctx, cons.workspace_limit, cal.get(), find_candidates(ctx.device, policy.tf32));
  Choice c = pick(ranked, cons, "cost model", p, dir);
  c.why += cal->samples() ? " (calibrated from " + std::to_string(cal->samples()) + " measurements" : " (uncalibrated";
  c.why += probe.source == ProbeOutcome::Source::measured ? ", machine probe measured)"
           : probe.source == ProbeOutcome::Source::none   ? ", no machine probe)"
                                                          : ", machine probe loaded)";
  return c;
}

// find's ranked list for (p, dir), memoised per process (find and find-context share it); s.mu held.
const std::vector<AlgoPerf>& found(TunerState& s, const Policy& policy, const ConvProblem& p, Direction dir,
                                   const ExecContext& ctx, size_t workspace_limit) {
  FindOptions fo;
  fo.workspace_limit = workspace_limit;
  const std::string memo = make_cache_key(p, dir, ctx).str() + '\x1f' + std::to_string(fo.workspace_limit) +
                           (policy.tf32 ? "\x1ftf32" : "");
  auto& ranked = s.found[memo];
  if (ranked.empty()) ranked = find(p, dir, ctx, fo, find_candidates(ctx.device, policy.tf32));
  return ranked;
}

// find and find-context (memoised per process) and cache[:path] (cache_or_find on the file).
Choice choose_by_measuring(const Policy& policy, const ConvProblem& p, Direction dir, const ExecContext& ctx,
                           const Constraints& cons, double t0) {
  TunerState& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  Choice c;
  if (policy.kind != Policy::Kind::cache) {
    c = pick(found(s, policy, p, dir, ctx, cons.workspace_limit), cons, "find", p, dir);
  } else {
    const auto candidates = find_candidates(ctx.device, policy.tf32);
    FindOptions fo;
    fo.workspace_limit = cons.workspace_limit;
    const Tuned t = cache_or_find(&open_cache(s, cache_file(policy)), p, dir, ctx, fo, candidates);
    c = pick(t.results, cons, t.from_cache ? "cache hit" : "cache miss, find", p, dir);
    if (t.from_cache) return c;  // nothing was tuned
  }
  c.tuning_seconds = now_seconds() - t0;
  return c;
}

// default, and fixed:<name> (which falls back to default where its algorithm does not support the problem).
Choice choose_in_order(const Policy& policy, const ConvProblem& p, Direction dir, const ExecContext& ctx, size_t ws) {
  if (policy.kind == Policy::Kind::fixed) {
    // An algorithm that cannot run on this device at all is never replaced by another under its name: the
    // policy fails (the trainer skips it with this reason). Only a problem it does not support falls back.
    if (std::string why = policy_unavailable_reason(policy, ctx.device); !why.empty()) fail(why);
    const Algorithm& a = get_algorithm(policy.fixed_algo);
    if (usable(a, p, dir, ctx, ws, policy.deterministic, true, false)) return {&a, "fixed", 0};
  }
  for (const Algorithm* a : registry())
    if (usable(*a, p, dir, ctx, ws, policy.deterministic, policy.tf32, policy.own))
      return {a, policy.kind == Policy::Kind::fixed ? "fixed algorithm unsupported here; first supporting in registry order"
                                                    : "first supporting in registry order",
              0};
  fail("no " + std::string(to_string(ctx.device)) + " algorithm supports " + p.key() + " " + std::string(to_string(dir)));
}

Constraints constraints_of(const Policy& policy, size_t workspace_limit) {
  Constraints cons;
  cons.workspace_limit = std::min(workspace_limit, policy.workspace_limit);
  cons.max_error = policy.max_error;
  cons.deterministic = policy.deterministic;
  cons.tf32 = policy.tf32;
  cons.own = policy.own;
  return cons;
}

}  // namespace

std::vector<AlgoPerf> find_ranking(const Policy& policy, const ConvProblem& p, Direction dir, const ExecContext& ctx,
                                   size_t workspace_limit) {
  const Constraints cons = constraints_of(policy, workspace_limit);
  TunerState& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  std::vector<AlgoPerf> ranked;
  if (policy.kind == Policy::Kind::cache) {  // the file's list (find on a miss, then stored), as choose reads it
    FindOptions fo;
    fo.workspace_limit = cons.workspace_limit;
    ranked = cache_or_find(&open_cache(s, cache_file(policy)), p, dir, ctx, fo,
                           find_candidates(ctx.device, policy.tf32)).results;  // ranked, as find's
  } else {
    ranked = found(s, policy, p, dir, ctx, cons.workspace_limit);
  }
  std::vector<AlgoPerf> out;
  for (const AlgoPerf& r : ranked)
    if (find_algorithm(r.algo) && select({r}, cons)) out.push_back(r);  // select: ok and within the constraints
  if (out.empty()) fail("no algorithm meets the constraints for " + p.key() + " " + std::string(to_string(dir)));
  return out;
}

Choice choose_algorithm(const Policy& policy, const ConvProblem& p, Direction dir, const ExecContext& ctx,
                        size_t workspace_limit) {
  const double t0 = now_seconds();
  const Constraints cons = constraints_of(policy, workspace_limit);
  switch (policy.kind) {
    case Policy::Kind::get: return choose_by_model(policy, p, dir, ctx, cons);
    case Policy::Kind::find:
    case Policy::Kind::find_context:
    case Policy::Kind::cache: return choose_by_measuring(policy, p, dir, ctx, cons, t0);
    case Policy::Kind::default_:
    case Policy::Kind::fixed: break;
  }
  return choose_in_order(policy, p, dir, ctx, cons.workspace_limit);
}

}  // namespace convlab
