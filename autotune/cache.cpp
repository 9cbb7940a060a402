#include "autotune/cache.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "autotune/json_value.hpp"
#include "core/error.hpp"
#include "core/json.hpp"
#include "core/npy.hpp"

namespace convlab {

namespace {
constexpr int kFormat = 1;
constexpr size_t kMaxLine = size_t(1) << 20;  // longer lines are not ours
}  // namespace

std::string CacheKey::str() const {
  return problem + '\x1f' + dir + '\x1f' + dtype + '\x1f' + device + '\x1f' + version;
}

CacheKey make_cache_key(const ConvProblem& p, Direction dir, const ExecContext& ctx) {
  CacheKey k;
  k.problem = p.key();
  k.dir = std::string(to_string(dir));
  k.device = device_fingerprint(ctx.device, ctx.device == DeviceKind::cpu ? ctx.resolved_threads() : 0);
  k.version = CONVLAB_VERSION;
  return k;
}

// ---- one line ------------------------------------------------------------

std::string to_json(const AlgoPerf& r) {
  using json::number;
  using json::quote;
  return "{\"algo\":" + quote(r.algo) + ",\"status\":" + quote(to_string(r.status)) + ",\"time\":" + number(r.time) +
         ",\"spread\":" + number(r.spread) + ",\"reps\":" + std::to_string(r.reps) +
         ",\"workspace\":" + std::to_string(r.workspace) + ",\"max_rel_error\":" + number(r.max_rel_error) +
         ",\"err_ratio\":" + number(r.err_ratio) + ",\"deterministic\":" + (r.deterministic ? "true" : "false") +
         ",\"note\":" + quote(r.note) + "}";
}

std::string serialize(const CacheEntry& e) {
  using json::number;
  using json::quote;
  auto size_or_null = [](size_t v) { return v == size_t(-1) ? std::string("null") : std::to_string(v); };
  std::string o = "{\"format\":" + std::to_string(kFormat) + ",\"problem\":" + quote(e.key.problem) +
                  ",\"dir\":" + quote(e.key.dir) + ",\"dtype\":" + quote(e.key.dtype) + ",\"device\":" +
                  quote(e.key.device) + ",\"version\":" + quote(e.key.version) + ",\"tuned_at\":" + number(e.tuned_at) +
                  ",\"workspace_limit\":" + size_or_null(e.workspace_limit) + ",\"results\":[";
  for (size_t i = 0; i < e.results.size(); ++i) o += (i ? "," : "") + to_json(e.results[i]);
  return o + "]}";
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
    r.reps = int(std::clamp(reps, 0.0, 1e9));
    if (!parse_perf_status(status, r.status)) {
      if (err) *err = "unknown status '" + status + "'";
      return std::nullopt;
    }
    if (r.status == PerfStatus::ok && !(r.time > 0)) {
      if (err) *err = "an ok result without a positive time";
      return std::nullopt;
    }
    e.results.push_back(std::move(r));
  }
  try {
    (void)parse_direction(e.key.dir);
  } catch (const Error&) {
    if (err) *err = "bad direction '" + e.key.dir + "'";
    return std::nullopt;
  }
  // Stored lists are re-ranked so a hand-edited or older file cannot smuggle in an order.
  rank(e.results);
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
  if (line_format(*v) != kFormat) {
    if (error) *error = "format is not " + std::to_string(kFormat);
    return std::nullopt;
  }
  return from_value(*v, error);
}

bool entry_covers(const CacheEntry& e, const std::vector<const Algorithm*>& candidates, size_t workspace_limit) {
  std::map<std::string, const AlgoPerf*> by_name;
  for (const AlgoPerf& r : e.results) by_name[r.algo] = &r;
  for (const Algorithm* a : candidates) {
    if (a->family() == "reference") continue;
    auto it = by_name.find(std::string(a->name()));
    if (it == by_name.end()) return false;  // registered since the entry was tuned
    const AlgoPerf& r = *it->second;
    if (r.status == PerfStatus::over_workspace && r.workspace <= workspace_limit) return false;
  }
  return true;
}

// ---- the file ------------------------------------------------------------

TuneCache::TuneCache(std::string path, bool echo_warnings) : path_(std::move(path)), echo_(echo_warnings) {
  if (path_.empty()) fail("autotune cache: empty file name");
}

std::string TuneCache::default_path() {
  if (const char* e = std::getenv("CONVLAB_CACHE"); e && *e) return e;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return std::string(x) + "/convlab/autotune.jsonl";
  if (const char* h = std::getenv("HOME"); h && *h) return std::string(h) + "/.cache/convlab/autotune.jsonl";
  return "convlab-autotune.jsonl";
}

void TuneCache::warn(const std::string& w) {
  warnings_.push_back(w);
  if (echo_) std::fprintf(stderr, "warning: %s\n", w.c_str());
}

TuneCache::FileContents TuneCache::read_file(bool do_warn) {
  FileContents fc;
  std::ifstream in(path_, std::ios::binary);
  if (!in) {
    if (errno != ENOENT && std::filesystem::exists(path_) && do_warn)
      warn("autotune cache '" + path_ + "': cannot read (" + std::strerror(errno) + "); starting empty");
    return fc;
  }
  std::string line, first_bad;
  int line_no = 0, foreign_version = 0;
  std::set<std::string> versions;
  while (std::getline(in, line)) {
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find_first_not_of(" \t") == std::string::npos) continue;
    std::string why;
    std::optional<CacheEntry> e;
    if (line.size() > kMaxLine) {
      why = "line longer than 1 MiB";
    } else if (auto v = json::parse(line, &why)) {
      const int f = line_format(*v);
      if (f > 0 && f != kFormat) {
        fc.foreign_lines.push_back(line);
        continue;
      }
      if (f < 0) why = "no integer 'format' field";
      else e = from_value(*v, &why);
    }
    if (!e) {
      if (fc.bad_lines++ == 0) first_bad = "line " + std::to_string(line_no) + ": " + why;
      continue;
    }
    if (e->key.version != CONVLAB_VERSION) {
      ++foreign_version;
      versions.insert(e->key.version);
    }
    const std::string k = e->key.str();
    auto it = fc.entries.find(k);
    if (it == fc.entries.end() || e->tuned_at >= it->second.tuned_at) fc.entries[k] = std::move(*e);
  }
  if (!do_warn) return fc;
  if (fc.bad_lines)
    warn("autotune cache '" + path_ + "': " + std::to_string(fc.bad_lines) + " of " + std::to_string(line_no) +
         " lines unreadable and ignored (first: " + first_bad + "); a copy is kept as '" + path_ + ".bad' on the next write");
  if (!fc.foreign_lines.empty())
    warn("autotune cache '" + path_ + "': " + std::to_string(fc.foreign_lines.size()) +
         " lines of another cache format ignored (kept in the file)");
  if (foreign_version) {
    std::string vs;
    for (const auto& v : versions) vs += (vs.empty() ? "" : ", ") + v;
    warn("autotune cache '" + path_ + "': " + std::to_string(foreign_version) + " entries from convlab " + vs +
         " ignored (this is " + CONVLAB_VERSION + "); those problems will be re-tuned");
  }
  return fc;
}

void TuneCache::load() {
  FileContents fc = read_file(true);
  entries_ = std::move(fc.entries);
  foreign_lines_ = std::move(fc.foreign_lines);
  for (const auto& [k, e] : pending_) entries_[k] = e;
}

const CacheEntry* TuneCache::lookup(const CacheKey& k) const {
  if (k.version != CONVLAB_VERSION) return nullptr;
  auto it = entries_.find(k.str());
  return it == entries_.end() ? nullptr : &it->second;
}

void TuneCache::put(CacheEntry e) {
  rank(e.results);
  const std::string k = e.key.str();
  entries_[k] = e;
  pending_[k] = std::move(e);
}

namespace {
// An exclusive flock on "<path>.lock", released on destruction.
class FileLock {
 public:
  explicit FileLock(const std::string& path) {
    const std::string lp = path + ".lock";
    fd_ = ::open(lp.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0) fail("autotune cache: cannot open lock file '" + lp + "': " + std::strerror(errno));
    while (::flock(fd_, LOCK_EX) != 0) {
      if (errno == EINTR) continue;
      const std::string e = std::strerror(errno);
      ::close(fd_);
      fail("autotune cache: cannot lock '" + lp + "': " + e);
    }
  }
  ~FileLock() {
    ::flock(fd_, LOCK_UN);
    ::close(fd_);
  }
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

 private:
  int fd_ = -1;
};

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void make_parent_dir(const std::string& path) {
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  if (parent.empty()) return;
  std::error_code ec;
  std::filesystem::create_directories(parent, ec);
  if (ec) fail("autotune cache: cannot create '" + parent.string() + "': " + ec.message());
}

std::string render(const std::map<std::string, CacheEntry>& entries, const std::vector<std::string>& foreign) {
  std::string out;
  for (const auto& l : foreign) out += l + "\n";
  for (const auto& [k, e] : entries) out += serialize(e) + "\n";
  return out;
}
}  // namespace

void TuneCache::save() {
  make_parent_dir(path_);
  FileLock lock(path_);
  FileContents disk = read_file(false);
  if (disk.bad_lines) write_file_atomic(path_ + ".bad", slurp(path_));
  for (auto& [k, e] : pending_) {
    auto it = disk.entries.find(k);
    if (it == disk.entries.end() || e.tuned_at >= it->second.tuned_at) disk.entries[k] = e;
  }
  write_file_atomic(path_, render(disk.entries, disk.foreign_lines));
  pending_.clear();
  entries_ = std::move(disk.entries);
  foreign_lines_ = std::move(disk.foreign_lines);
}

std::vector<CacheEntry> TuneCache::entries() const {
  std::vector<CacheEntry> out;
  for (const auto& [k, e] : entries_) out.push_back(e);
  return out;
}

std::vector<Measured> TuneCache::measurements(const std::string& device, const std::string& version) const {
  std::vector<Measured> out;
  for (const auto& [k, e] : entries_) {
    if (e.key.device != device || e.key.version != version) continue;
    try {
      out.push_back({parse_problem(e.key.problem), parse_direction(e.key.dir), e.results});
    } catch (const Error&) {
      // A key this build cannot parse is not calibration data.
    }
  }
  return out;
}

int merge_cache_files(const std::vector<std::string>& inputs, const std::string& output, bool echo_warnings) {
  if (inputs.empty()) fail("cache merge: no input files");
  std::map<std::string, CacheEntry> all;
  std::vector<std::string> foreign;
  for (const auto& in : inputs) {
    if (!std::filesystem::is_regular_file(in)) fail("cache merge: '" + in + "' is not a file");
    TuneCache c(in, echo_warnings);
    c.load();
    for (CacheEntry& e : c.entries()) {
      const std::string k = e.key.str();
      auto it = all.find(k);
      if (it == all.end() || e.tuned_at > it->second.tuned_at) all[k] = std::move(e);  // equal: the earlier input wins
    }
    for (const auto& l : c.foreign_lines())
      if (std::find(foreign.begin(), foreign.end(), l) == foreign.end()) foreign.push_back(l);
  }
  make_parent_dir(output);
  FileLock lock(output);
  write_file_atomic(output, render(all, foreign));
  return int(all.size());
}

}  // namespace convlab
