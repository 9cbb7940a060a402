// The persistent autotune cache: a JSON-lines file, one line per
//   (problem key, direction, dtype, device fingerprint, build identity, convlab version)
// holding the whole ranked list find produced, e.g.
//
//   {"format":1,"problem":"mb32ic96ih27oc256oh27kh5ph2","dir":"fwd","dtype":"f32",
//    "device":"Intel Xeon ... | avx512 | 2 threads","build":"convlab 0.1.0 65c8b8b74b9b | oneDNN 2.6.3 ...",
//    "version":"0.1.0","tuned_at":1763800000,
//    "workspace_limit":null,"results":[{"algo":"cpu.im2col_gemm","status":"ok","time":0.0123,...},...]}
//
// "build" is build_identity() (autotune/build_identity.hpp: convlab's git
// commit and the oneDNN / OpenBLAS / FFTW / cuDNN versions). Lines written
// before it existed have none: they are read as entries of an unknown build.
//
// Reading never throws on bad content: a line that is not valid JSON, misses a
// field, has a wrong type or is longer than 1 MiB is ignored with one warning
// line per file (naming the first bad line); lines of another format number are
// ignored and kept verbatim. Entries of other convlab builds or devices are
// kept in the file but never used (a lookup is a miss, and the caller
// re-tunes). What is read is bounded: a path that is not a regular file (a
// folder, /dev/zero, a FIFO) or a file over 256 MiB is refused with one line
// (Error), never read; a missing file is an empty cache.
//
// Writing (save) is safe for several processes tuning at once: it takes an
// exclusive flock on "<file>.lock", re-reads the file, merges its own new
// entries in (per key the newer tuned_at wins), and replaces the file
// atomically (temp file "<file>.tmp.<pid>.<n>" + fsync + rename). If the file
// had unreadable lines, a copy of it is kept as "<file>.bad" before they are
// dropped. A read-only file (no write bit, even for root) or a missing folder
// is refused with one line, never replaced or created (only the default cache's
// own folder, ~/.cache/convlab, is created). Under the lock, temp files left
// by writers that were killed (their pid no longer exists) are removed.
#pragma once
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "autotune/get.hpp"
#include "autotune/perf.hpp"

namespace convlab {

struct CacheKey {
  std::string problem;  // ConvProblem::key()
  std::string dir;      // "fwd", "bwd-data", "bwd-filter"
  std::string dtype = "f32";
  std::string device;   // device_fingerprint()
  std::string build;    // build_identity() ("" in lines written before it was recorded)
  std::string version;  // CONVLAB_VERSION
  std::string str() const;  // one string joining all fields (map key)
  bool operator==(const CacheKey&) const = default;
};
// The key for this machine, context and build.
CacheKey make_cache_key(const ConvProblem& p, Direction dir, const ExecContext& ctx);
// True when the key's convlab version and build identity are this build's.
bool is_current_build(const CacheKey& k);

// The limits on what is read (see above).
constexpr size_t kCacheMaxLineBytes = size_t(1) << 20;
constexpr size_t kCacheMaxFileBytes = size_t(256) << 20;

struct CacheEntry {
  CacheKey key;
  double tuned_at = 0;                   // unix seconds
  size_t workspace_limit = size_t(-1);   // the limit find ran with
  std::vector<AlgoPerf> results;         // ranked
};

std::string serialize(const CacheEntry& e);  // one line, no newline
std::string to_json(const AlgoPerf& r);      // one result as a JSON object (the cache's form)
// nullopt with a reason on anything malformed (never throws).
std::optional<CacheEntry> deserialize(std::string_view line, std::string* error = nullptr);

// True when `e` can answer for this candidate set and limit: every candidate
// is in the list, and nothing skipped as over-workspace would fit the limit now.
bool entry_covers(const CacheEntry& e, const std::vector<const Algorithm*>& candidates, size_t workspace_limit);

class TuneCache {
 public:
  // Nothing is read until load(). `echo_warnings` prints each warning to stderr as it arises.
  explicit TuneCache(std::string path, bool echo_warnings = true);
  // $CONVLAB_CACHE, else $XDG_CACHE_HOME/convlab/autotune.jsonl, else ~/.cache/convlab/autotune.jsonl.
  static std::string default_path();

  // Reads the file (a missing file is an empty cache). Never throws for bad
  // content; throws Error (one line) for a folder, a non-regular file, a file
  // over kCacheMaxFileBytes or one that cannot be read.
  void load();
  const CacheEntry* lookup(const CacheKey& k) const;
  // Adds or replaces in memory; save() writes it.
  void put(CacheEntry e);
  // Lock, re-read, merge, atomic write. Throws Error (one line) when the file
  // cannot be written: read-only, a folder, a missing folder, a write error.
  void save();

  const std::string& path() const { return path_; }
  const std::vector<std::string>& warnings() const { return warnings_; }
  const std::vector<std::string>& foreign_lines() const { return foreign_lines_; }
  std::vector<CacheEntry> entries() const;  // sorted by key
  // Every entry of this build (is_current_build) whose device fingerprint is
  // one of `devices`, as calibration data.
  std::vector<Measured> measurements(const std::vector<std::string>& devices) const;

 private:
  struct FileContents {
    std::map<std::string, CacheEntry> entries;
    std::vector<std::string> foreign_lines;  // other format numbers, kept verbatim
    int bad_lines = 0;
  };
  FileContents read_file(bool warn);
  void warn(const std::string& w);

  std::string path_;
  bool echo_;
  std::map<std::string, CacheEntry> entries_;
  std::map<std::string, CacheEntry> pending_;
  std::vector<std::string> foreign_lines_;
  std::vector<std::string> warnings_;
};

// `convlab cache merge A B ... -o C`: the union of the inputs, per key the
// newer tuned_at; unreadable lines warned about and dropped. Returns entries written.
int merge_cache_files(const std::vector<std::string>& inputs, const std::string& output, bool echo_warnings = true);

// `convlab cache check FILE`: every line this build on this machine would not
// use, one warning per line ("line 7: stale: tuned by ..."): unreadable or
// over-long lines, other cache formats, other devices (any thread count of
// this CPU is this device), other builds (stale), problems this build rejects
// or whose key is not canonical, unregistered algorithms, empty results.
// Throws Error (one line) for a missing file and everything load() refuses.
struct CacheCheck {
  int lines = 0;    // non-blank lines
  int entries = 0;  // lines that are entries of this format
  int usable = 0;   // entries this build on this machine would use
  std::vector<std::string> warnings;
};
CacheCheck check_cache_file(const std::string& path);

}  // namespace convlab
