// The persistent autotune cache: a JSON-lines file, one line per
//   (problem key, direction, dtype, device fingerprint, convlab version)
// holding the whole ranked list find produced, each result with the code and
// library versions of the algorithm that produced it (the line, its key and
// its format: autotune/cache_entry.hpp).
//
// Reading never throws on bad content: a line that is not valid JSON, misses a
// field, has a wrong type or is longer than 1 MiB is ignored with one warning
// line per file (naming the first bad line); lines of another format number are
// ignored and kept verbatim. Entries of other devices or convlab versions, and
// lines keyed on a whole build (written before results kept their versions),
// are kept in the file but never used (a lookup is a miss, and the caller
// re-tunes); a result of another code or library version is re-measured by
// cache_or_find. What is read is bounded: a path that is not a regular file (a
// folder, /dev/zero, a FIFO) or a file over 256 MiB is refused with one line
// (Error), never read; a missing file is an empty cache.
//
// Writing (save) is safe for several processes tuning at once: it takes an
// exclusive flock on "<file>.lock", re-reads the file, merges its own new
// entries in (per key the newer tuned_at wins), and replaces the file
// atomically (temp file "<file>.tmp.<pid>.<n>" + fsync + rename). If the file
// had unreadable lines, they are appended to "<file>.bad" (byte for byte, after
// a "# <UTC time> convlab <version>, ...: N unreadable lines of '<file>'"
// header) before they are dropped: every line ever set aside stays there. A read-only file (no write bit, even for root) or a missing folder
// is refused with one line, never replaced or created (only the default cache's
// own folder, ~/.cache/convlab, is created). Under the lock, temp files left
// by writers that were killed (their pid no longer exists) are removed.
//
// The file also holds the machine probes (autotune/probe.hpp), one line per
// (device, probe identity, version): read, merged and checked like the
// entries (an unreadable probe line is an unreadable line).
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
  // $CONVLAB_CACHE, else $XDG_CACHE_HOME/convlab/autotune.jsonl (XDG_CACHE_HOME absolute and an
  // existing folder; a relative one is ignored, as the XDG spec says), else
  // $HOME/.cache/convlab/autotune.jsonl (HOME absolute and an existing folder). Throws Error (one
  // line, saying to pass --cache F or set CONVLAB_CACHE or XDG_CACHE_HOME) when there is none: with
  // HOME unset or missing there is no default cache, never one in the current folder. Only the
  // convlab folder under XDG_CACHE_HOME or HOME (~/.cache/convlab, .cache included) is ever created.
  static std::string default_path();

  // Reads the file (a missing file is an empty cache). Never throws for bad
  // content; throws Error (one line) for a folder, a non-regular file, a file
  // over kCacheMaxFileBytes or one that cannot be read.
  void load();
  const CacheEntry* lookup(const CacheKey& k) const;
  // Adds or replaces in memory; save() writes it.
  void put(CacheEntry e);
  // Lock, re-read, merge, atomic write. Throws WriteError (one line, naming the
  // file and the reason) when the file cannot be written: read-only, a folder, a
  // missing folder, a full disk.
  void save();

  const std::string& path() const { return path_; }
  // Every warning, printable() (one line each, whatever bytes the file holds).
  const std::vector<std::string>& warnings() const { return warnings_; }
  // The end of load()'s warning about unreadable lines: what happens to them. By default "they stay
  // in the file until its next write, which appends them to '<file>.bad'" (save() does).
  void set_bad_lines_fate(std::string text) { bad_lines_fate_ = std::move(text); }
  // The unreadable lines load() found: their count and exact bytes, each ending in '\n'.
  int bad_lines() const { return bad_lines_; }
  const std::string& set_aside() const { return set_aside_; }
  const std::vector<std::string>& foreign_lines() const { return foreign_lines_; }
  std::vector<CacheEntry> entries() const;  // sorted by key
  // This build's probe for a device fingerprint (of the current probe version); nullptr if none.
  const MachineProbe* lookup_probe(const std::string& device) const;
  // Adds or replaces this build's probe for p.device in memory; save() writes it.
  void put_probe(const MachineProbe& p);
  std::vector<ProbeEntry> probes() const;  // every probe line read or put, sorted by key
  // Every entry of this version (is_current_key) whose device fingerprint is
  // one of `devices`, as calibration data: only its results of this build's
  // code and library versions.
  std::vector<Measured> measurements(const std::vector<std::string>& devices) const;

 private:
  struct FileContents {
    std::map<std::string, CacheEntry> entries;
    std::map<std::string, ProbeEntry> probes;
    std::vector<std::string> foreign_lines;  // other format numbers, kept verbatim
    int bad_lines = 0;
    std::string set_aside;  // the unreadable lines' bytes, each ending in '\n'
  };
  FileContents read_file(bool warn);
  void save_locked();
  void warn(const std::string& w);

  std::string path_;
  bool echo_;
  std::map<std::string, CacheEntry> entries_;
  std::map<std::string, CacheEntry> pending_;
  std::map<std::string, ProbeEntry> probes_, pending_probes_;
  std::vector<std::string> foreign_lines_;
  std::vector<std::string> warnings_;
  std::string bad_lines_fate_, set_aside_;
  int bad_lines_ = 0;
};

// The one rule of every command's --cache F, checked before any work: F is
// created when missing, but its folder must exist (only the default cache's
// own folder, e.g. ~/.cache/convlab, is created, here); a folder, anything
// that is not a regular file or a file over kCacheMaxFileBytes is refused, and
// so is a read-only file when the command stores find's results (`writes`).
// Throws Error "<what>: <reason>" (one line).
void require_cache_file(const std::string& path, const std::string& what, bool writes);

// What cache_or_find() answered with.
struct Tuned {
  std::vector<AlgoPerf> results;  // ranked, as find returns them
  bool from_cache = false;        // a cache entry answered: find did not run
  double find_seconds = 0;        // find's wall time, when it ran
  int reused = 0;                 // results taken from the cache entry (all of them on a hit)
};

// The one cache-or-find step (`convlab tune`, the cache policy): the entry of
// (p, dir, ctx) in `cache` answers when it covers `candidates` and
// opt.workspace_limit (entry_covers()). Otherwise find runs with `opt` on the
// candidates it does not cover (uncovered(): new ones, those whose code or
// libraries changed since, over-workspace ones that fit now; all of them when
// there is no entry), its pruning starting from the best time kept; the kept
// and the new results, ranked together, are stored in `cache` and saved.
// `cache` may be null: find runs and nothing is stored. `retune` ignores the
// entry (find runs on every candidate and replaces it).
// The entry that cache_or_find would answer (p, dir, ctx) with alone, or null when it would run find (on
// some candidates or all).
const CacheEntry* cached_answer(const TuneCache* cache, const ConvProblem& p, Direction dir, const ExecContext& ctx,
                                const FindOptions& opt, const std::vector<const Algorithm*>& candidates, bool retune);
Tuned cache_or_find(TuneCache* cache, const ConvProblem& p, Direction dir, const ExecContext& ctx,
                    const FindOptions& opt, const std::vector<const Algorithm*>& candidates, bool retune = false);

// `convlab cache merge A B ... -o C`: the union of the inputs, per key the
// newer tuned_at, written under C's lock; unreadable lines of every input are
// warned about, appended to "C.bad" (as save() does) and not written to C.
// Returns entries written.
int merge_cache_files(const std::vector<std::string>& inputs, const std::string& output, bool echo_warnings = true);

// `convlab cache check FILE`: every line this build on this machine would not
// use as it is, one warning per line ("line 7: stale: ..."): unreadable or
// over-long lines, other cache formats, other devices (any thread count of
// this CPU is this device), other convlab versions, lines keyed on a whole
// build, results whose algorithm's code or library versions are not this
// build's (named, with what differs: they would be re-timed), problems this
// build rejects or whose key is not canonical, unregistered algorithms,
// empty results.
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
