// One autotune cache entry: its key and its JSON line. The file that holds
// these lines, one per key, is autotune/cache.hpp. A line looks like
//
//   {"format":1,"problem":"mb32ic96ih27oc256oh27kh5ph2","dir":"fwd","dtype":"f32",
//    "device":"Intel Xeon ... | avx512 | 2 threads","version":"0.1.0","tuned_at":1763800000,
//    "workspace_limit":null,"results":[{"algo":"cpu.im2col_gemm","status":"ok","time":0.0123,...,
//    "lo":0.0121,"hi":0.0125,"tie":false,"code":"cpu/im2col_gemm 1fd9fee98f11","libs":"OpenBLAS 0.3.21 ..."},...]}
//
// The key is (problem, direction, dtype, device fingerprint -- CPU model, ISA,
// threads, or the GPU with its driver and cuDNN --, convlab version). Each
// result carries what else its time depends on: its algorithm's code version
// and library versions ("code", "libs": autotune/build_identity.hpp
// algorithm_version). A result whose versions are not this build's is stale:
// cache_or_find re-times those candidates only and keeps the rest.
//
// Lines written before results carried their versions were keyed on the whole
// build instead: a "build" field (build_identity(): convlab's git commit and
// the library versions), or none in still older lines. They still load: a line
// with a "build" is an entry of another key (never used, kept in the file for
// the build that wrote it); results without "code" are stale.
//
// The machine probe (autotune/probe.hpp) is a line of the same format with a
// "probe" object instead of problem, dir and results; its "build" is
// probe_identity() (the probe's own code and every CPU algorithm's version):
//
//   {"format":1,"probe":{"version":1,"seconds":0.93,"rates":{"fma_gflops":301.2,...}},
//    "device":"Intel Xeon ... | avx512 | 2 threads","build":"probe 8f8f5de0238d algorithms ...",
//    "version":"0.1.0","tuned_at":1763800000}
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "algorithms/algorithm.hpp"
#include "autotune/perf.hpp"
#include "autotune/probe.hpp"

namespace convlab {

// The "format" number of the lines this build reads and writes. Lines of
// another format are kept in the file verbatim, never used.
constexpr int kCacheFormat = 1;

struct CacheKey {
  std::string problem;  // ConvProblem::key()
  std::string dir;      // "fwd", "bwd-data", "bwd-filter"
  std::string dtype = "f32";
  std::string device;   // device_fingerprint()
  // Entries: "" (this format). A line that names a whole build here was written
  // before results carried their versions: another key, never used.
  // Probes: probe_identity().
  std::string build;
  std::string version;  // CONVLAB_VERSION
  std::string str() const;  // one string joining all fields (map key)
  bool operator==(const CacheKey&) const = default;
};
// The key for this machine and context.
CacheKey make_cache_key(const ConvProblem& p, Direction dir, const ExecContext& ctx);
// True when an entry's key is of this convlab version and not keyed on a whole build.
bool is_current_key(const CacheKey& k);
// True when a probe's key is this build's probe_identity() and convlab version.
bool is_current_probe_key(const CacheKey& k);

// Why a cached result no longer stands for algorithm `a` in this build ("" when
// it does): its code version or its library versions differ (which, and how),
// or it has none (a line written before they were kept).
std::string stale_reason(const AlgoPerf& r, const Algorithm& a);
// The same for a result of a registered algorithm, by name; an unregistered
// name is stale ("not a registered algorithm").
std::string stale_reason(const AlgoPerf& r);

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

// A machine probe line: its key has no problem and no direction.
struct ProbeEntry {
  CacheKey key;  // device, build, version (problem and dir empty)
  double tuned_at = 0;
  MachineProbe probe;
};
// The key of this machine's probe for ctx in this build.
CacheKey make_probe_key(const ExecContext& ctx);
std::string serialize(const ProbeEntry& e);  // one line, no newline

// What a line of a cache file is (never throws): an entry of this format, a
// probe of this format, a line of another format (other_format > 0), or
// unreadable (error says why).
struct CacheLine {
  std::optional<CacheEntry> entry;
  std::optional<ProbeEntry> probe;
  int other_format = 0;
  std::string error;
};
CacheLine parse_cache_line(std::string_view line);

// The candidates `e` cannot answer for at this limit: not in the list,
// measured by another code or library version (stale_reason), or skipped as
// over-workspace but fitting the limit now. The reference is never one.
std::vector<const Algorithm*> uncovered(const CacheEntry& e, const std::vector<const Algorithm*>& candidates,
                                        size_t workspace_limit);
// True when uncovered() is empty: the entry answers for every candidate.
bool entry_covers(const CacheEntry& e, const std::vector<const Algorithm*>& candidates, size_t workspace_limit);

}  // namespace convlab
