// One cache entry: its key and its JSON line (autotune/cache_entry.hpp).
#include "autotune/cache_entry.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <mutex>

#include "algorithms/registry.hpp"
#include "autotune/build_identity.hpp"
#include "core/json_value.hpp"
#include "core/error.hpp"
#include "core/json.hpp"

namespace convlab {

std::string CacheKey::str() const {
  return problem + '\x1f' + dir + '\x1f' + dtype + '\x1f' + device + '\x1f' + build + '\x1f' + version;
}

CacheKey make_cache_key(const ConvProblem& p, Direction dir, const ExecContext& ctx) {
  CacheKey k;
  k.problem = p.key();
  k.dir = std::string(to_string(dir));
  k.device = device_fingerprint(ctx.device, ctx.device == DeviceKind::cpu ? ctx.resolved_threads() : 0);
  k.version = CONVLAB_VERSION;
  return k;
}

CacheKey make_probe_key(const ExecContext& ctx) {
  CacheKey k;
  k.device = device_fingerprint(ctx.device, ctx.device == DeviceKind::cpu ? ctx.resolved_threads() : 0);
  k.build = probe_identity();
  k.version = CONVLAB_VERSION;
  return k;
}

bool is_current_key(const CacheKey& k) { return k.version == CONVLAB_VERSION && k.build.empty(); }

bool is_current_probe_key(const CacheKey& k) { return k.version == CONVLAB_VERSION && k.build == probe_identity(); }

namespace {

// Why r does not stand for version v ("" when it does).
std::string stale_against(const AlgoPerf& r, const AlgorithmVersion& v) {
  if (r.code.empty()) return "no algorithm version recorded (tuned before each result kept one)";
  std::string why;
  if (r.code != v.code) why = "code '" + printable(r.code) + "', this build has '" + v.code + "'";
  if (r.libs != v.libs)
    why += (why.empty() ? "" : "; ") + std::string("libraries '") + printable(r.libs) + "', this build calls '" + v.libs + "'";
  return why;
}

// A registered algorithm's version, computed once per name (a cache holds thousands of results;
// asked lazily, so a CPU run never asks CUDA's libraries). nullptr for an unregistered name.
const AlgorithmVersion* registered_version(const std::string& name) {
  static std::mutex m;
  static std::map<std::string, AlgorithmVersion> known;
  std::lock_guard lock(m);
  if (auto it = known.find(name); it != known.end()) return &it->second;
  const Algorithm* a = find_algorithm(name);
  return a ? &known.emplace(name, algorithm_version(*a)).first->second : nullptr;
}

}  // namespace

std::string stale_reason(const AlgoPerf& r, const Algorithm& a) { return stale_against(r, algorithm_version(a)); }

std::string stale_reason(const AlgoPerf& r) {
  const AlgorithmVersion* v = registered_version(r.algo);
  return v ? stale_against(r, *v) : std::string("not a registered algorithm");
}

// ---- one line ------------------------------------------------------------

std::string to_json(const AlgoPerf& r) {
  using json::number;
  using json::quote;
  return "{\"algo\":" + quote(r.algo) + ",\"status\":" + quote(to_string(r.status)) + ",\"time\":" + number(r.time) +
         ",\"spread\":" + number(r.spread) + ",\"reps\":" + std::to_string(r.reps) +
         ",\"workspace\":" + std::to_string(r.workspace) + ",\"max_rel_error\":" + number(r.max_rel_error) +
         ",\"err_ratio\":" + number(r.err_ratio) + ",\"deterministic\":" + (r.deterministic ? "true" : "false") +
         ",\"note\":" + quote(r.note) + ",\"lo\":" + number(r.lo) + ",\"hi\":" + number(r.hi) +
         ",\"tie\":" + (r.tie ? "true" : "false") + ",\"code\":" + quote(r.code) + ",\"libs\":" + quote(r.libs) + "}";
}

std::string serialize(const CacheEntry& e) {
  using json::number;
  using json::quote;
  auto size_or_null = [](size_t v) { return v == size_t(-1) ? std::string("null") : std::to_string(v); };
  std::string o = "{\"format\":" + std::to_string(kCacheFormat) + ",\"problem\":" + quote(e.key.problem) +
                  ",\"dir\":" + quote(e.key.dir) + ",\"dtype\":" + quote(e.key.dtype) + ",\"device\":" +
                  quote(e.key.device) + (e.key.build.empty() ? "" : ",\"build\":" + quote(e.key.build)) +
                  ",\"version\":" + quote(e.key.version) + ",\"tuned_at\":" + number(e.tuned_at) +
                  ",\"workspace_limit\":" + size_or_null(e.workspace_limit) + ",\"results\":[";
  for (size_t i = 0; i < e.results.size(); ++i) o += (i ? "," : "") + to_json(e.results[i]);
  return o + "]}";
}

std::string serialize(const ProbeEntry& e) {
  using json::number;
  using json::quote;
  std::string rates;
  for (const auto& [name, v] : e.probe.rates) rates += (rates.empty() ? "" : ",") + quote(name) + ":" + number(v);
  return "{\"format\":" + std::to_string(kCacheFormat) + ",\"probe\":{\"version\":" + std::to_string(e.probe.version) +
         ",\"seconds\":" + number(e.probe.seconds) + ",\"rates\":{" + rates + "}},\"device\":" + quote(e.key.device) +
         ",\"build\":" + quote(e.key.build) + ",\"version\":" + quote(e.key.version) + ",\"tuned_at\":" +
         number(e.tuned_at) + "}";
}

namespace {

using json::Value;

bool get_string(const Value& o, const char* k, std::string& out, std::string* err) {
  const Value* v = o.get(k);
  if (!v || v->type != Value::Type::string) {
    if (err) *err = std::string("field '") + k + "' missing or not a string";
    return false;
  }
  out = v->str;
  return true;
}

// A number, or null (-> NaN) when allow_null.
bool get_number(const Value& o, const char* k, double& out, std::string* err, bool allow_null) {
  const Value* v = o.get(k);
  if (v && v->type == Value::Type::number) {
    out = v->num;
    return true;
  }
  if (v && allow_null && v->type == Value::Type::null) {
    out = std::numeric_limits<double>::quiet_NaN();
    return true;
  }
  if (err) *err = std::string("field '") + k + "' missing or not a number";
  return false;
}

bool get_count(const Value& o, const char* k, size_t& out, std::string* err, bool null_is_max) {
  double d = 0;
  if (!get_number(o, k, d, err, null_is_max)) return false;
  if (std::isnan(d) && null_is_max) {
    out = size_t(-1);
    return true;
  }
  if (!(d >= 0) || d > 9.007199254740992e15 || d != std::floor(d)) {
    if (err) *err = std::string("field '") + k + "' is not a non-negative integer";
    return false;
  }
  out = size_t(d);
  return true;
}

// Which format a line claims: -1 if it is not a JSON object with an integer "format".
int line_format(const Value& v) {
  const Value* f = v.is_object() ? v.get("format") : nullptr;
  if (!f || f->type != Value::Type::number || f->num != std::floor(f->num) || std::fabs(f->num) > 1e6) return -1;
  return int(f->num);
}

std::optional<CacheEntry> from_value(const Value& v, std::string* err) {
  CacheEntry e;
  if (!get_string(v, "problem", e.key.problem, err) || !get_string(v, "dir", e.key.dir, err) ||
      !get_string(v, "dtype", e.key.dtype, err) || !get_string(v, "device", e.key.device, err) ||
      !get_string(v, "version", e.key.version, err) || !get_number(v, "tuned_at", e.tuned_at, err, false) ||
      !get_count(v, "workspace_limit", e.workspace_limit, err, true))
    return std::nullopt;
  // "build" names the whole build in lines written before results carried their versions.
  if (const Value* b = v.get("build"); b && !get_string(v, "build", e.key.build, err)) return std::nullopt;
  const Value* rs = v.get("results");
  if (!rs || rs->type != Value::Type::array) {
    if (err) *err = "field 'results' missing or not an array";
    return std::nullopt;
  }
  for (const Value& x : rs->arr) {
    if (!x.is_object()) {
      if (err) *err = "a result is not an object";
      return std::nullopt;
    }
    AlgoPerf r;
    std::string status;
    double reps = 0;
    const Value* det = x.get("deterministic");
    if (!get_string(x, "algo", r.algo, err) || !get_string(x, "status", status, err) ||
        !get_number(x, "time", r.time, err, true) || !get_number(x, "spread", r.spread, err, true) ||
        !get_number(x, "reps", reps, err, false) || !get_count(x, "workspace", r.workspace, err, false) ||
        !get_number(x, "max_rel_error", r.max_rel_error, err, true) ||
        !get_number(x, "err_ratio", r.err_ratio, err, true) || !get_string(x, "note", r.note, err))
      return std::nullopt;
    if (!det || det->type != Value::Type::boolean) {
      if (err) *err = "field 'deterministic' missing or not a boolean";
      return std::nullopt;
    }
    r.deterministic = det->b;
    r.algo = std::string(canonical_algorithm_name(r.algo));  // a name an older convlab gave it
    // Added later (absent in older lines): the median's interval and what produced the result.
    for (auto [k, out] : {std::pair{"lo", &r.lo}, std::pair{"hi", &r.hi}})
      if (x.get(k) && !get_number(x, k, *out, err, true)) return std::nullopt;
    for (auto [k, out] : {std::pair{"code", &r.code}, std::pair{"libs", &r.libs}})
      if (x.get(k) && !get_string(x, k, *out, err)) return std::nullopt;
    r.reps = int(std::clamp(reps, 0.0, 1e9));
    if (!parse_perf_status(status, r.status)) {
      if (err) *err = "unknown status '" + printable(status) + "'";
      return std::nullopt;
    }
    if (r.status == PerfStatus::ok && !(r.time > 0)) {
      if (err) *err = "an ok result without a positive time";
      return std::nullopt;
    }
    for (const AlgoPerf& seen : e.results)
      if (seen.algo == r.algo) {  // one measurement per algorithm: a second would make the ranking ambiguous
        if (err) *err = "algorithm '" + printable(r.algo) + "' listed twice in results";
        return std::nullopt;
      }
    e.results.push_back(std::move(r));
  }
  try {
    (void)parse_direction(e.key.dir);
  } catch (const Error&) {
    if (err) *err = "bad direction '" + printable(e.key.dir) + "'";
    return std::nullopt;
  }
  // Stored lists are re-ranked so a hand-edited or older file cannot smuggle in an order.
  rank(e.results);
  return e;
}

// A probe line (the object has "probe"): every field typed, every required rate
// present, every rate a positive finite number.
std::optional<ProbeEntry> probe_from_value(const Value& v, std::string* err) {
  ProbeEntry e;
  if (!get_string(v, "device", e.key.device, err) || !get_string(v, "build", e.key.build, err) ||
      !get_string(v, "version", e.key.version, err) || !get_number(v, "tuned_at", e.tuned_at, err, false))
    return std::nullopt;
  const Value* pr = v.get("probe");
  if (!pr || !pr->is_object()) {
    if (err) *err = "field 'probe' is not an object";
    return std::nullopt;
  }
  double version = 0;
  if (!get_number(*pr, "version", version, err, false) || !get_number(*pr, "seconds", e.probe.seconds, err, false))
    return std::nullopt;
  if (version != std::floor(version) || version < 1 || version > 1e6 || !(e.probe.seconds >= 0)) {
    if (err) *err = "probe 'version' or 'seconds' out of range";
    return std::nullopt;
  }
  e.probe.version = int(version);
  const Value* rates = pr->get("rates");
  if (!rates || !rates->is_object()) {
    if (err) *err = "field 'probe.rates' missing or not an object";
    return std::nullopt;
  }
  for (const auto& [name, r] : rates->obj) {
    if (r.type != Value::Type::number || !(r.num > 0) || !std::isfinite(r.num) || name.empty()) {
      if (err) *err = "probe rate '" + printable(name) + "' is not a positive number";
      return std::nullopt;
    }
    e.probe.rates[name] = r.num;
  }
  if (e.probe.version == kProbeVersion)
    for (const std::string& need : probe_required_rates())
      if (!e.probe.rates.count(need)) {
        if (err) *err = "probe rate '" + need + "' missing";
        return std::nullopt;
      }
  e.probe.device = e.key.device;
  e.probe.probed_at = e.tuned_at;
  return e;
}

}  // namespace

std::optional<CacheEntry> deserialize(std::string_view line, std::string* error) {
  auto v = json::parse(line, error);
  if (!v) return std::nullopt;
  if (!v->is_object()) {
    if (error) *error = "not a JSON object";
    return std::nullopt;
  }
  if (line_format(*v) != kCacheFormat) {
    if (error) *error = "format is not " + std::to_string(kCacheFormat);
    return std::nullopt;
  }
  return from_value(*v, error);
}

CacheLine parse_cache_line(std::string_view line) {
  CacheLine out;
  auto v = json::parse(line, &out.error);
  if (!v) return out;
  const int f = line_format(*v);
  if (f > 0 && f != kCacheFormat) out.other_format = f;
  else if (f < 0) out.error = "no integer 'format' field";
  else if (v->get("probe")) out.probe = probe_from_value(*v, &out.error);
  else out.entry = from_value(*v, &out.error);
  return out;
}

std::vector<const Algorithm*> uncovered(const CacheEntry& e, const std::vector<const Algorithm*>& candidates,
                                        size_t workspace_limit) {
  std::map<std::string, const AlgoPerf*> by_name;
  for (const AlgoPerf& r : e.results) by_name[r.algo] = &r;
  std::vector<const Algorithm*> out;
  for (const Algorithm* a : candidates) {
    if (a->is_oracle()) continue;
    auto it = by_name.find(std::string(a->name()));
    if (it == by_name.end()) out.push_back(a);  // registered since the entry was tuned
    else if (!stale_reason(*it->second, *a).empty()) out.push_back(a);  // its code or libraries changed
    else if (it->second->status == PerfStatus::over_workspace && it->second->workspace <= workspace_limit) out.push_back(a);
  }
  return out;
}

bool entry_covers(const CacheEntry& e, const std::vector<const Algorithm*>& candidates, size_t workspace_limit) {
  return uncovered(e, candidates, workspace_limit).empty();
}

}  // namespace convlab
