// One autotune cache entry: its key and its JSON line. The file that holds
// these lines, one per key, is autotune/cache.hpp. A line looks like
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
// The machine probe (autotune/probe.hpp) is a line of the same format with a
// "probe" object instead of problem, dir and results, keyed by device, build
// and version like the entries:
//
//   {"format":1,"probe":{"version":1,"seconds":0.93,"rates":{"fma_gflops":301.2,...}},
//    "device":"Intel Xeon ... | avx512 | 2 threads","build":"convlab 0.1.0 ...","version":"0.1.0",
//    "tuned_at":1763800000}
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
  std::string build;    // build_identity() ("" in lines written before it was recorded)
  std::string version;  // CONVLAB_VERSION
  std::string str() const;  // one string joining all fields (map key)
  bool operator==(const CacheKey&) const = default;
};
// The key for this machine, context and build.
CacheKey make_cache_key(const ConvProblem& p, Direction dir, const ExecContext& ctx);
// True when the key's convlab version and build identity are this build's.
bool is_current_build(const CacheKey& k);

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

// True when `e` can answer for this candidate set and limit: every candidate
// is in the list, and nothing skipped as over-workspace would fit the limit now.
bool entry_covers(const CacheEntry& e, const std::vector<const Algorithm*>& candidates, size_t workspace_limit);

}  // namespace convlab
