#include "autotune/cache.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "algorithms/registry.hpp"
#include "autotune/build_identity.hpp"
#include "autotune/cache_lines.hpp"
#include "core/error.hpp"
#include "core/npy.hpp"
#include "core/paths.hpp"
#include "core/timing.hpp"

namespace convlab {

using cache_file::blank;
using cache_file::qpath;
using cache_file::read_cache_lines;

// ---- the file ------------------------------------------------------------

TuneCache::TuneCache(std::string path, bool echo_warnings) : path_(std::move(path)), echo_(echo_warnings) {
  if (path_.empty()) fail("autotune cache: empty file name");
}

namespace {

// The default cache file and the one folder convlab may create for it (see default_path()); "" and
// the reason when there is none.
struct DefaultCache {
  std::string path, creatable, why;
};

DefaultCache default_cache() {
  const auto folder = [](const char* p) {
    struct stat st {};
    return ::stat(p, &st) == 0 && S_ISDIR(st.st_mode);
  };
  const char* how = "; name a cache file (--cache F, get:F, cache:F) or set CONVLAB_CACHE or XDG_CACHE_HOME";
  if (const char* e = std::getenv("CONVLAB_CACHE"); e && *e) return {e, "", ""};
  // XDG: a relative path is invalid and ignored.
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x == '/') {
    if (!folder(x))
      return {"", "", "no default autotune cache: XDG_CACHE_HOME '" + printable(x) + "' is not an existing folder" + how};
    return {std::string(x) + "/convlab/autotune.jsonl", std::string(x) + "/convlab", ""};
  }
  const char* h = std::getenv("HOME");
  if (!h || !*h) return {"", "", std::string("no default autotune cache: HOME is not set") + how};
  if (*h != '/') return {"", "", "no default autotune cache: HOME '" + printable(h) + "' is not an absolute path" + how};
  if (!folder(h)) return {"", "", "no default autotune cache: HOME '" + printable(h) + "' is not an existing folder" + how};
  const std::string home(h);
  return {home + "/.cache/convlab/autotune.jsonl", home + "/.cache/convlab", ""};
}

}  // namespace

std::string TuneCache::default_path() {
  DefaultCache d = default_cache();
  if (d.path.empty()) fail(d.why);
  return d.path;
}

void TuneCache::warn(const std::string& w) {
  warnings_.push_back(printable(w));  // a warning quotes file content: one printable line, whatever the file holds
  if (echo_) std::fprintf(stderr, "warning: %s\n", warnings_.back().c_str());
}

TuneCache::FileContents TuneCache::read_file(bool do_warn) {
  FileContents fc;
  std::string first_bad;
  int line_no = 0, stale = 0;
  std::string first_stale_text;
  std::vector<std::pair<uint64_t, uint64_t>> bad_ranges;  // (offset, length) of each unreadable line
  read_cache_lines(path_, [&](int n, std::string_view line, bool too_long, uint64_t offset, uint64_t length) {
    line_no = n;
    if (blank(line)) return;
    CacheLine cl;
    if (too_long) cl.error = "line longer than " + std::to_string(kCacheMaxLineBytes >> 20) + " MiB";
    else cl = parse_cache_line(line);
    if (cl.other_format) {
      fc.foreign_lines.emplace_back(line);
      return;
    }
    if (cl.probe) {
      const std::string k = "probe\x1f" + cl.probe->key.str();
      auto it = fc.probes.find(k);
      if (it == fc.probes.end() || cl.probe->tuned_at >= it->second.tuned_at) fc.probes[k] = std::move(*cl.probe);
      return;
    }
    std::optional<CacheEntry>& e = cl.entry;
    if (!e) {
      if (fc.bad_lines++ == 0) first_bad = "line " + std::to_string(n) + ": " + cl.error;
      bad_ranges.emplace_back(offset, length);
      return;
    }
    if (!is_current_key(e->key) && stale++ == 0)
      first_stale_text = "convlab " + printable(e->key.version) +
                         (e->key.build.empty() ? std::string() : ", keyed on the whole build '" + printable(e->key.build) + "'");
    const std::string k = e->key.str();
    auto it = fc.entries.find(k);
    if (it == fc.entries.end()) fc.entries.emplace(k, std::move(*e));
    else if (e->tuned_at >= it->second.tuned_at) it->second = std::move(*e);
  }, [&](const InputFile& in) {
    // The unreadable lines' exact bytes (over-long ones whole), to be set aside when the file is rewritten.
    for (const auto& [offset, length] : bad_ranges) {
      const size_t at = fc.set_aside.size();
      fc.set_aside.resize(at + size_t(length));
      for (size_t done = 0; done < length;) {
        const ssize_t got = ::pread(in.fd(), fc.set_aside.data() + at + done, size_t(length) - done, off_t(offset + done));
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) fail(in.name() + ": read error while keeping its unreadable lines: " + std::strerror(got < 0 ? errno : EIO));
        done += size_t(got);
      }
      fc.set_aside += '\n';
    }
  });
  if (!do_warn) return fc;
  if (fc.bad_lines)
    warn("autotune cache " + qpath(path_) + ": " + std::to_string(fc.bad_lines) + " of " + std::to_string(line_no) +
         " lines unreadable and ignored (first: " + first_bad + "); " +
         (bad_lines_fate_.empty() ? "they stay in the file until its next write, which appends them to " +
                                        qpath(path_ + ".bad")
                                  : bad_lines_fate_));
  if (!fc.foreign_lines.empty())
    warn("autotune cache " + qpath(path_) + ": " + std::to_string(fc.foreign_lines.size()) +
         " lines of another cache format ignored (kept in the file)");
  if (stale)
    warn("autotune cache " + qpath(path_) + ": " + std::to_string(stale) +
         " entries of another convlab version, or written before each result kept its algorithm's version, ignored"
         " (first: " + first_stale_text + "; this is convlab " + CONVLAB_VERSION + "); those problems will be re-tuned");
  return fc;
}

void TuneCache::load() {
  FileContents fc = read_file(true);
  set_aside_ = std::move(fc.set_aside);
  bad_lines_ = fc.bad_lines;
  entries_ = std::move(fc.entries);
  probes_ = std::move(fc.probes);
  foreign_lines_ = std::move(fc.foreign_lines);
  for (const auto& [k, e] : pending_) entries_[k] = e;
  for (const auto& [k, e] : pending_probes_) probes_[k] = e;
}

const MachineProbe* TuneCache::lookup_probe(const std::string& device) const {
  const ProbeEntry* best = nullptr;
  for (const auto& [k, e] : probes_)
    if (e.key.device == device && e.probe.version == kProbeVersion && is_current_probe_key(e.key) &&
        (!best || e.tuned_at > best->tuned_at))
      best = &e;
  return best ? &best->probe : nullptr;
}

void TuneCache::put_probe(const MachineProbe& p) {
  ProbeEntry e;
  e.key.device = p.device;
  e.key.build = probe_identity();
  e.key.version = CONVLAB_VERSION;
  e.tuned_at = p.probed_at > 0 ? p.probed_at : double(std::time(nullptr));
  e.probe = p;
  const std::string k = "probe\x1f" + e.key.str();
  probes_[k] = e;
  pending_probes_[k] = std::move(e);
}

std::vector<ProbeEntry> TuneCache::probes() const {
  std::vector<ProbeEntry> out;
  for (const auto& [k, e] : probes_) out.push_back(e);
  return out;
}

const CacheEntry* TuneCache::lookup(const CacheKey& k) const {
  if (!is_current_key(k)) return nullptr;
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
    if (fd_ < 0) fail("autotune cache: cannot open lock file " + qpath(lp) + ": " + std::strerror(errno));
    while (::flock(fd_, LOCK_EX) != 0) {
      if (errno == EINTR) continue;
      const std::string e = std::strerror(errno);
      ::close(fd_);
      fail("autotune cache: cannot lock " + qpath(lp) + ": " + e);
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

// Appends `lines` (the exact bytes of `count` unreadable lines of `source`) to `bad_path` after a
// header line naming the time, convlab's version, `by` and the source; nothing when there are none.
// The backup is rewritten atomically (its old text first), so a failure leaves it as it was.
void append_set_aside_lines(const std::string& bad_path, const std::string& source, int count, const std::string& lines,
                            const std::string& by) {
  if (lines.empty()) return;
  std::string before;
  {
    const InputFile old(bad_path, "autotune cache backup", true);
    if (old.exists()) before = old.read_all(uint64_t(4) * kCacheMaxFileBytes);
  }
  if (!before.empty() && before.back() != '\n') before += '\n';
  char when[32] = "?";
  const std::time_t now = std::time(nullptr);
  struct tm utc {};
  if (::gmtime_r(&now, &utc)) std::strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &utc);
  const std::string header = "# " + std::string(when) + " convlab " + CONVLAB_VERSION + ", " + by + ": " +
                             std::to_string(count) + " unreadable line" + (count == 1 ? "" : "s") + " of " +
                             qpath(source) + "\n";
  write_file_atomic(bad_path, before + header + lines);
}

// Only the default cache's own folder is created (~/.cache/convlab on a fresh
// machine, $XDG_CACHE_HOME/convlab): never HOME or XDG_CACHE_HOME themselves, never
// the folder of a file named by the user or by CONVLAB_CACHE.
void make_default_dir(const std::string& path) {
  const DefaultCache d = default_cache();
  if (d.creatable.empty() || path != d.path) return;
  std::error_code ec;
  std::filesystem::create_directories(d.creatable, ec);
  if (ec) fail("autotune cache: cannot create " + qpath(d.creatable) + ": " + ec.message());
}

// Called under the lock of `path`: removes "<path>.tmp.<pid>.*" and
// "<path>.bad.tmp.<pid>.*" left by writers that died mid-write (killed, out of
// power). A live writer's temp is never touched: every writer holds the lock
// while its temp exists, and a pid that still exists is left alone anyway.
void remove_dead_writers_temps(const std::string& path) {
  const std::filesystem::path p(path);
  const std::string dir = p.parent_path().empty() ? "." : p.parent_path().string();
  const std::string base = p.filename().string();
  DIR* d = ::opendir(dir.c_str());
  if (!d) return;
  while (const dirent* de = ::readdir(d)) {
    const std::string name = de->d_name;
    for (const std::string& prefix : {base + ".tmp.", base + ".bad.tmp."}) {
      if (name.compare(0, prefix.size(), prefix) != 0) continue;
      const char* digits = name.c_str() + prefix.size();
      char* end = nullptr;
      errno = 0;
      const long pid = std::strtol(digits, &end, 10);
      if (end == digits || *end != '.' || errno != 0 || pid <= 0 || pid > (long(1) << 30)) continue;
      if (::kill(pid_t(pid), 0) == 0 || errno != ESRCH) continue;  // alive (or not ours to judge)
      ::unlink((dir + "/" + name).c_str());
    }
  }
  ::closedir(d);
}

}  // namespace

void require_cache_file(const std::string& path, const std::string& what, bool writes) {
  if (path.empty()) fail(what + ": empty file name");
  try {
    make_default_dir(path);
  } catch (const Error& e) {
    fail(what + ": " + e.what());
  }
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) fail(what + ": " + qpath(path) + " is a folder, not a cache file");
    if (!S_ISREG(st.st_mode)) fail(what + ": " + qpath(path) + " " + why_not_regular_file(st));
    if (uint64_t(st.st_size) > kCacheMaxFileBytes)
      fail(what + ": " + qpath(path) + " is " + std::to_string(uint64_t(st.st_size) >> 20) + " MiB, over the " +
           std::to_string(kCacheMaxFileBytes >> 20) + " MiB limit of a cache file");
    if (!writes) return;  // read; what it may add (a machine probe) says itself if it cannot be stored
  }
  require_output_path(path, what);
}

namespace {

std::string render(const std::map<std::string, CacheEntry>& entries, const std::map<std::string, ProbeEntry>& probes,
                   const std::vector<std::string>& foreign) {
  std::string out;
  for (const auto& l : foreign) out += l + "\n";
  for (const auto& [k, e] : probes) out += serialize(e) + "\n";
  for (const auto& [k, e] : entries) out += serialize(e) + "\n";
  return out;
}
}  // namespace

void TuneCache::save() {
  // Whatever stops the write comes after the work whose results it holds: a WriteError (exit 1).
  try {
    save_locked();
  } catch (const WriteError&) {
    throw;
  } catch (const Error& e) {
    throw WriteError(e.what());
  }
}

void TuneCache::save_locked() {
  make_default_dir(path_);
  require_output_path(path_, "autotune cache");
  FileLock lock(path_);
  remove_dead_writers_temps(path_);
  FileContents disk = read_file(false);
  // The unreadable lines are dropped from the file: set aside first, so a failure loses nothing.
  append_set_aside_lines(path_ + ".bad", path_, disk.bad_lines, disk.set_aside, "set aside by a write of the cache");
  for (auto& [k, e] : pending_) {
    auto it = disk.entries.find(k);
    if (it == disk.entries.end() || e.tuned_at >= it->second.tuned_at) disk.entries[k] = e;
  }
  for (auto& [k, e] : pending_probes_) {
    auto it = disk.probes.find(k);
    if (it == disk.probes.end() || e.tuned_at >= it->second.tuned_at) disk.probes[k] = e;
  }
  write_file_atomic(path_, render(disk.entries, disk.probes, disk.foreign_lines));
  pending_.clear();
  pending_probes_.clear();
  entries_ = std::move(disk.entries);
  probes_ = std::move(disk.probes);
  foreign_lines_ = std::move(disk.foreign_lines);
}

std::vector<CacheEntry> TuneCache::entries() const {
  std::vector<CacheEntry> out;
  out.reserve(entries_.size());
  for (const auto& [k, e] : entries_) out.push_back(e);
  return out;
}

std::vector<Measured> TuneCache::measurements(const std::vector<std::string>& devices) const {
  std::vector<Measured> out;
  for (const auto& [k, e] : entries_) {
    if (std::find(devices.begin(), devices.end(), e.key.device) == devices.end() || !is_current_key(e.key)) continue;
    // Only what this build's algorithms measured: results of another code or library version are left out.
    std::vector<AlgoPerf> current;
    for (const AlgoPerf& r : e.results)
      if (stale_reason(r).empty()) current.push_back(r);
    if (current.empty()) continue;
    try {
      out.push_back({parse_problem(e.key.problem), parse_direction(e.key.dir), std::move(current)});
    } catch (const Error&) {
      // A key this build cannot parse is not calibration data.
    }
  }
  return out;
}

const CacheEntry* cached_answer(const TuneCache* cache, const ConvProblem& p, Direction dir, const ExecContext& ctx,
                                const FindOptions& opt, const std::vector<const Algorithm*>& candidates, bool retune) {
  const CacheEntry* hit = cache && !retune ? cache->lookup(make_cache_key(p, dir, ctx)) : nullptr;
  return hit && uncovered(*hit, candidates, opt.workspace_limit).empty() ? hit : nullptr;
}

Tuned cache_or_find(TuneCache* cache, const ConvProblem& p, Direction dir, const ExecContext& ctx,
                    const FindOptions& opt, const std::vector<const Algorithm*>& candidates, bool retune) {
  const CacheKey key = make_cache_key(p, dir, ctx);
  const CacheEntry* hit = cache && !retune ? cache->lookup(key) : nullptr;
  std::vector<const Algorithm*> need = hit ? uncovered(*hit, candidates, opt.workspace_limit) : candidates;
  if (hit && need.empty()) return {hit->results, true, 0, int(hit->results.size())};
  Tuned out;
  // What the entry still answers for is kept; only `need` is measured (every candidate on a miss).
  std::vector<AlgoPerf> kept;
  FindOptions fo = opt;
  if (hit)
    for (const AlgoPerf& r : hit->results) {
      if (std::any_of(need.begin(), need.end(), [&](const Algorithm* a) { return a->name() == r.algo; })) continue;
      kept.push_back(r);
      if (r.status == PerfStatus::ok) fo.best_so_far = std::min(fo.best_so_far, r.time);
    }
  out.reused = int(kept.size());
  const double t0 = now_seconds();
  out.results = find(p, dir, ctx, fo, need);
  out.find_seconds = now_seconds() - t0;
  out.results.insert(out.results.end(), kept.begin(), kept.end());
  rank(out.results);
  if (cache) {
    CacheEntry e;
    e.key = key;
    e.tuned_at = double(std::time(nullptr));
    e.workspace_limit = opt.workspace_limit;
    e.results = out.results;
    cache->put(std::move(e));
    cache->save();
  }
  return out;
}

int merge_cache_files(const std::vector<std::string>& inputs, const std::string& output, bool echo_warnings) {
  if (inputs.empty()) fail("cache merge: no input files");
  require_output_path(output, "cache merge: output");
  for (const auto& in : inputs)
    if (!std::filesystem::is_regular_file(in)) fail("cache merge: " + qpath(in) + " is not a file");
  // Under the output's lock from the first read: an input that is the output (merge a b -o a) is read
  // and replaced with no other writer in between.
  FileLock lock(output);
  remove_dead_writers_temps(output);
  std::map<std::string, CacheEntry> all;
  std::map<std::string, ProbeEntry> probes;
  std::vector<std::string> foreign;
  for (const auto& in : inputs) {
    TuneCache c(in, echo_warnings);
    c.set_bad_lines_fate("appended to " + qpath(output + ".bad") + " by this merge");
    c.load();
    // The output will not hold them: kept in OUT.bad before OUT is written.
    append_set_aside_lines(output + ".bad", in, c.bad_lines(), c.set_aside(), "set aside by cache merge");
    for (CacheEntry& e : c.entries()) {
      const std::string k = e.key.str();
      auto it = all.find(k);
      if (it == all.end() || e.tuned_at > it->second.tuned_at) all[k] = std::move(e);  // equal: the earlier input wins
    }
    for (ProbeEntry& e : c.probes()) {
      const std::string k = "probe\x1f" + e.key.str();
      auto it = probes.find(k);
      if (it == probes.end() || e.tuned_at > it->second.tuned_at) probes[k] = std::move(e);
    }
    for (const auto& l : c.foreign_lines())
      if (std::find(foreign.begin(), foreign.end(), l) == foreign.end()) foreign.push_back(l);
  }
  write_file_atomic(output, render(all, probes, foreign));
  return int(all.size());
}

}  // namespace convlab
