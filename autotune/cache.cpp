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
#include "core/error.hpp"
#include "core/npy.hpp"
#include "core/paths.hpp"
#include "core/timing.hpp"

namespace convlab {

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

namespace {

std::string qpath(const std::string& path) { return "'" + printable(path) + "'"; }

// Reads a cache file line by line, bounded: `on_line(line_no, text, too_long)`
// for every line (text cut at kCacheMaxLineBytes when too_long; a trailing
// '\r' dropped). Returns false when the file does not exist (nor its folder).
// Throws Error, one line, for a folder, anything that is not a regular file
// (/dev/zero, a FIFO: never opened, so never read or waited on), a file over
// kCacheMaxFileBytes (also one that grows past it while read), a read error.
template <class OnLine>
bool read_cache_lines(const std::string& path, const OnLine& on_line) {
  const std::string what = "autotune cache " + qpath(path);
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT || errno == ENOTDIR) return false;
    fail(what + ": cannot read (" + std::strerror(errno) + ")");
  }
  auto check = [&](const struct stat& s) {
    if (S_ISDIR(s.st_mode)) fail(what + " is a folder, not a cache file");
    if (!S_ISREG(s.st_mode)) fail(what + " is not a regular file");
    if (uint64_t(s.st_size) > kCacheMaxFileBytes)
      fail(what + " is " + std::to_string(uint64_t(s.st_size) >> 20) + " MiB, over the " +
           std::to_string(kCacheMaxFileBytes >> 20) + " MiB limit of a cache file");
  };
  check(st);
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0) fail(what + ": cannot read (" + std::strerror(errno) + ")");
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  if (::fstat(fd, &st) != 0) fail(what + ": cannot read (" + std::strerror(errno) + ")");
  check(st);  // the path may have been replaced between stat and open
  std::string buf(size_t(1) << 16, '\0'), line;
  size_t total = 0;
  int line_no = 0;
  bool too_long = false;
  auto emit = [&] {
    ++line_no;
    if (!too_long && !line.empty() && line.back() == '\r') line.pop_back();
    on_line(line_no, std::string_view(line), too_long);
    line.clear();
    too_long = false;
  };
  for (;;) {
    const ssize_t n = ::read(fd, buf.data(), buf.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      fail(what + ": read error (" + std::strerror(errno) + ")");
    }
    if (n == 0) break;
    total += size_t(n);
    if (total > kCacheMaxFileBytes)
      fail(what + " grew past the " + std::to_string(kCacheMaxFileBytes >> 20) + " MiB limit of a cache file while read");
    for (size_t at = 0; at < size_t(n);) {
      const char* nl = static_cast<const char*>(std::memchr(buf.data() + at, '\n', size_t(n) - at));
      const size_t end = nl ? size_t(nl - buf.data()) : size_t(n);
      if (!too_long) {
        line.append(buf.data() + at, end - at);
        if (line.size() > kCacheMaxLineBytes) {
          too_long = true;
          line.resize(64);  // enough to say what it started with; the rest is skipped
        }
      }
      if (!nl) break;
      emit();
      at = end + 1;
    }
  }
  if (!line.empty() || too_long) emit();
  return true;
}

bool blank(std::string_view line) { return line.find_first_not_of(" \t\r") == std::string_view::npos; }

}  // namespace

TuneCache::FileContents TuneCache::read_file(bool do_warn) {
  FileContents fc;
  std::string first_bad;
  int line_no = 0, stale = 0;
  std::string first_stale_text;
  read_cache_lines(path_, [&](int n, std::string_view line, bool too_long) {
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
      return;
    }
    if (!is_current_build(e->key) && stale++ == 0)
      first_stale_text = "convlab " + printable(e->key.version) +
                         (e->key.build.empty() ? std::string(", no build recorded") : ", build '" + printable(e->key.build) + "'");
    const std::string k = e->key.str();
    auto it = fc.entries.find(k);
    if (it == fc.entries.end()) fc.entries.emplace(k, std::move(*e));
    else if (e->tuned_at >= it->second.tuned_at) it->second = std::move(*e);
  });
  if (!do_warn) return fc;
  if (fc.bad_lines)
    warn("autotune cache " + qpath(path_) + ": " + std::to_string(fc.bad_lines) + " of " + std::to_string(line_no) +
         " lines unreadable and ignored (first: " + first_bad + "); a copy is kept as " + qpath(path_ + ".bad") +
         " on the next write");
  if (!fc.foreign_lines.empty())
    warn("autotune cache " + qpath(path_) + ": " + std::to_string(fc.foreign_lines.size()) +
         " lines of another cache format ignored (kept in the file)");
  if (stale)
    warn("autotune cache " + qpath(path_) + ": " + std::to_string(stale) +
         " entries tuned by another convlab build or library version ignored (first: " + first_stale_text +
         "; this is '" + build_identity(DeviceKind::cpu) + "'); those problems will be re-tuned");
  return fc;
}

void TuneCache::load() {
  FileContents fc = read_file(true);
  entries_ = std::move(fc.entries);
  probes_ = std::move(fc.probes);
  foreign_lines_ = std::move(fc.foreign_lines);
  for (const auto& [k, e] : pending_) entries_[k] = e;
  for (const auto& [k, e] : pending_probes_) probes_[k] = e;
}

const MachineProbe* TuneCache::lookup_probe(const std::string& device) const {
  const ProbeEntry* best = nullptr;
  for (const auto& [k, e] : probes_)
    if (e.key.device == device && e.probe.version == kProbeVersion && is_current_build(e.key) &&
        (!best || e.tuned_at > best->tuned_at))
      best = &e;
  return best ? &best->probe : nullptr;
}

void TuneCache::put_probe(const MachineProbe& p) {
  ProbeEntry e;
  e.key.device = p.device;
  e.key.build = build_identity(DeviceKind::cpu);
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
  if (!is_current_build(k)) return nullptr;
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

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Only the default cache's own folder is created (~/.cache/convlab on a fresh
// machine); a folder named by the user must exist.
void make_default_dir(const std::string& path) {
  if (path != TuneCache::default_path()) return;
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  if (parent.empty()) return;
  std::error_code ec;
  std::filesystem::create_directories(parent, ec);
  if (ec) fail("autotune cache: cannot create " + qpath(parent.string()) + ": " + ec.message());
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
  make_default_dir(path_);
  require_output_path(path_, "autotune cache");
  FileLock lock(path_);
  remove_dead_writers_temps(path_);
  FileContents disk = read_file(false);
  if (disk.bad_lines) write_file_atomic(path_ + ".bad", slurp(path_));
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
    if (std::find(devices.begin(), devices.end(), e.key.device) == devices.end() || !is_current_build(e.key)) continue;
    try {
      out.push_back({parse_problem(e.key.problem), parse_direction(e.key.dir), e.results});
    } catch (const Error&) {
      // A key this build cannot parse is not calibration data.
    }
  }
  return out;
}

const CacheEntry* cached_answer(const TuneCache* cache, const ConvProblem& p, Direction dir, const ExecContext& ctx,
                                const FindOptions& opt, const std::vector<const Algorithm*>& candidates, bool retune) {
  const CacheEntry* hit = cache && !retune ? cache->lookup(make_cache_key(p, dir, ctx)) : nullptr;
  return hit && entry_covers(*hit, candidates, opt.workspace_limit) ? hit : nullptr;
}

Tuned cache_or_find(TuneCache* cache, const ConvProblem& p, Direction dir, const ExecContext& ctx,
                    const FindOptions& opt, const std::vector<const Algorithm*>& candidates, bool retune) {
  const CacheKey key = make_cache_key(p, dir, ctx);
  if (const CacheEntry* hit = cached_answer(cache, p, dir, ctx, opt, candidates, retune)) return {hit->results, true, 0};
  Tuned out;
  const double t0 = now_seconds();
  out.results = find(p, dir, ctx, opt, candidates);
  out.find_seconds = now_seconds() - t0;
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
  std::map<std::string, CacheEntry> all;
  std::map<std::string, ProbeEntry> probes;
  std::vector<std::string> foreign;
  for (const auto& in : inputs) {
    if (!std::filesystem::is_regular_file(in)) fail("cache merge: " + qpath(in) + " is not a file");
    TuneCache c(in, echo_warnings);
    c.load();
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
  FileLock lock(output);
  remove_dead_writers_temps(output);
  write_file_atomic(output, render(all, probes, foreign));
  return int(all.size());
}

// ---- cache check -----------------------------------------------------------

namespace {

// Whether a fingerprint is this machine's: a CPU one at any thread count
// ("... | 8 threads"), or this GPU's.
bool is_this_machine(const std::string& device) {
  const size_t at = device.rfind(" threads");
  if (at != std::string::npos) {
    size_t b = at;
    while (b > 0 && std::isdigit(static_cast<unsigned char>(device[b - 1]))) --b;
    if (b < at && at - b <= 6) {
      const int t = std::atoi(device.c_str() + b);
      if (t > 0 && device == device_fingerprint(DeviceKind::cpu, t)) return true;
    }
    return false;
  }
  return device == device_fingerprint(DeviceKind::cuda, 0);
}

}  // namespace

CacheCheck check_cache_file(const std::string& path) {
  CacheCheck out;
  std::map<std::string, int> seen;  // key -> line of its newest entry so far
  const bool exists = read_cache_lines(path, [&](int n, std::string_view line, bool too_long) {
    if (blank(line)) return;
    ++out.lines;
    std::vector<std::string> why;
    auto report = [&] {
      std::string w = "line " + std::to_string(n) + ": ";
      for (size_t i = 0; i < why.size(); ++i) w += (i ? "; " : "") + why[i];
      out.warnings.push_back(std::move(w));
    };
    if (too_long) {
      why.push_back("longer than " + std::to_string(kCacheMaxLineBytes >> 20) + " MiB");
      return report();
    }
    const CacheLine cl = parse_cache_line(line);
    if (cl.other_format) {
      why.push_back("cache format " + std::to_string(cl.other_format) + ", this build reads " +
                    std::to_string(kCacheFormat) + " (kept, never used)");
      return report();
    }
    if (cl.probe) {
      ++out.probes;
      const CacheKey& k = cl.probe->key;
      if (!is_this_machine(k.device))
        why.push_back("machine probe of another device '" + printable(k.device) + "' (this machine is '" +
                      device_fingerprint(DeviceKind::cpu, 0) + "' at any thread count)");
      if (!is_current_build(k))
        why.push_back("stale machine probe: measured by convlab " + printable(k.version) + ", build '" +
                      printable(k.build) + "' (this is '" + build_identity(DeviceKind::cpu) + "')");
      if (cl.probe->probe.version != kProbeVersion)
        why.push_back("machine probe of probe version " + std::to_string(cl.probe->probe.version) +
                      ", this build measures version " + std::to_string(kProbeVersion));
      const std::string pk = "probe\x1f" + k.str();
      if (auto it = seen.find(pk); it != seen.end())
        why.push_back("same machine probe key as line " + std::to_string(it->second) + " (the newer tuned_at is used)");
      seen[pk] = n;
      if (why.empty()) ++out.usable_probes;
      else report();
      return;
    }
    const std::optional<CacheEntry>& e = cl.entry;
    if (!e) {
      why.push_back("unreadable: " + cl.error);
      return report();
    }
    ++out.entries;
    const CacheKey& k = e->key;
    if (!is_this_machine(k.device))
      why.push_back("another device '" + printable(k.device) + "' (this machine is '" +
                    device_fingerprint(DeviceKind::cpu, 0) + "' at any thread count)");
    if (!is_current_build(k)) {
      std::string s = "stale: tuned by convlab " + printable(k.version);
      s += k.build.empty() ? std::string(" before builds were recorded") : ", build '" + printable(k.build) + "'";
      why.push_back(s + " (this is '" + build_identity(DeviceKind::cpu) + "')");
    }
    try {
      const ConvProblem p = parse_problem(k.problem);
      if (p.key() != k.problem)
        why.push_back("problem '" + printable(k.problem) + "' is not canonical (this build writes '" + p.key() +
                      "'): no lookup can reach it");
    } catch (const Error& x) {
      why.push_back("impossible problem '" + printable(k.problem) + "': " + x.what());
    }
    if (e->results.empty()) {
      why.push_back("no results");
    } else {
      const AlgoPerf* best = select(e->results, Constraints{});
      std::vector<std::string> unknown;
      for (const AlgoPerf& r : e->results)
        if (!find_algorithm(r.algo)) unknown.push_back(r.algo);
      if (best && !find_algorithm(best->algo)) why.push_back("winner '" + printable(best->algo) + "' is not a registered algorithm");
      for (const std::string& u : unknown)
        if (!best || u != best->algo) why.push_back("result for unregistered algorithm '" + printable(u) + "'");
    }
    if (auto it = seen.find(k.str()); it != seen.end())
      why.push_back("same key as line " + std::to_string(it->second) + " (the newer tuned_at is used)");
    seen[k.str()] = n;
    if (why.empty()) ++out.usable;
    else report();
  });
  if (!exists) fail("autotune cache " + qpath(path) + " does not exist");
  return out;
}

}  // namespace convlab
