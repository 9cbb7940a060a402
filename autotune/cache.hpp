// The persistent autotune cache: a JSON-lines file, one line per
//   (problem key, direction, dtype, device fingerprint, build identity, convlab version)
// holding the whole ranked list find produced (the line, its key and its
// format: autotune/cache_entry.hpp).
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
//
// The file also holds the machine probes (autotune/probe.hpp), one line per
// (device, build, version): read, merged and checked like the entries (an
// unreadable probe line is an unreadable line).
#pragma once
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "autotune/cache_entry.hpp"
#include "autotune/find.hpp"
#include "autotune/get.hpp"

namespace convlab {

// The limits on what is read (see above).
constexpr size_t kCacheMaxLineBytes = size_t(1) << 20;
constexpr size_t kCacheMaxFileBytes = size_t(256) << 20;

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
  // This build's probe for a device fingerprint (of the current probe version); nullptr if none.
  const MachineProbe* lookup_probe(const std::string& device) const;
  // Adds or replaces this build's probe for p.device in memory; save() writes it.
  void put_probe(const MachineProbe& p);
  std::vector<ProbeEntry> probes() const;  // every probe line read or put, sorted by key
  // Every entry of this build (is_current_build) whose device fingerprint is
  // one of `devices`, as calibration data.
  std::vector<Measured> measurements(const std::vector<std::string>& devices) const;

 private:
  struct FileContents {
    std::map<std::string, CacheEntry> entries;
    std::map<std::string, ProbeEntry> probes;
    std::vector<std::string> foreign_lines;  // other format numbers, kept verbatim
    int bad_lines = 0;
  };
  FileContents read_file(bool warn);
  void warn(const std::string& w);

  std::string path_;
  bool echo_;
  std::map<std::string, CacheEntry> entries_;
  std::map<std::string, CacheEntry> pending_;
  std::map<std::string, ProbeEntry> probes_, pending_probes_;
  std::vector<std::string> foreign_lines_;
  std::vector<std::string> warnings_;
};

// What cache_or_find() answered with.
struct Tuned {
  std::vector<AlgoPerf> results;  // ranked, as find returns them
  bool from_cache = false;        // a cache entry answered: find did not run
  double find_seconds = 0;        // find's wall time, when it ran
};

// The one cache-or-find step (`convlab tune`, the cache policy): the entry of
// (p, dir, ctx) in `cache` answers when it covers `candidates` and
// opt.workspace_limit (entry_covers()); otherwise find runs with `opt` and its
// results are stored in `cache` and saved. `cache` may be null: find runs and
// nothing is stored. `retune` ignores the entry (find runs and replaces it).
// The entry that cache_or_find would answer (p, dir, ctx) with, or null when it would run find.
const CacheEntry* cached_answer(const TuneCache* cache, const ConvProblem& p, Direction dir, const ExecContext& ctx,
                                const FindOptions& opt, const std::vector<const Algorithm*>& candidates, bool retune);
Tuned cache_or_find(TuneCache* cache, const ConvProblem& p, Direction dir, const ExecContext& ctx,
                    const FindOptions& opt, const std::vector<const Algorithm*>& candidates, bool retune = false);

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
  int probes = 0, usable_probes = 0;  // machine probe lines of this format; those this build would use
  std::vector<std::string> warnings;
};
CacheCheck check_cache_file(const std::string& path);

}  // namespace convlab
