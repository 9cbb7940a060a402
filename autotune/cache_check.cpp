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

// Why a probe key is not this build's, naming the part that differs.
std::string probe_stale_reason(const CacheKey& k) {
  if (k.version != CONVLAB_VERSION)
    return "measured by convlab " + printable(k.version) + " (this is " + CONVLAB_VERSION + ")";
  const std::string& now = probe_identity();
  const size_t at = k.build.find(" algorithms ");
  if (k.build.rfind("probe ", 0) != 0 || at == std::string::npos)
    return "keyed on the whole build '" + printable(k.build) + "' (written before probes were keyed on their code)";
  const size_t now_at = now.find(" algorithms ");
  std::string why;
  if (k.build.substr(0, at) != now.substr(0, now_at))
    why = "the probe's own code changed ('" + printable(k.build.substr(0, at)) + "', this build has '" +
          now.substr(0, now_at) + "')";
  if (k.build.substr(at) != now.substr(now_at))
    why += (why.empty() ? "" : "; ") + std::string("a CPU algorithm it times changed ('") +
           printable(k.build.substr(at + 1)) + "', this build has '" + now.substr(now_at + 1) + "')";
  return why;
}

// The results that no longer stand for this build's registered algorithms,
// grouped by reason: reason -> "a, b, c". Unregistered names are said elsewhere.
std::map<std::string, std::string> stale_results(const std::vector<AlgoPerf>& results) {
  std::map<std::string, std::string> by_reason;
  for (const AlgoPerf& r : results)
    if (const Algorithm* a = find_algorithm(r.algo))
      if (std::string why = stale_reason(r, *a); !why.empty()) {
        std::string& names = by_reason[why];
        names += (names.empty() ? "" : ", ") + printable(r.algo);
      }
  return by_reason;
}

}  // namespace

CacheCheck check_cache_file(const std::string& path) {
  CacheCheck out;
  std::map<std::string, int> seen;  // key -> line of its newest entry so far
  const bool exists = read_cache_lines(path, [&](int n, std::string_view line, bool too_long, uint64_t, uint64_t) {
    if (blank(line)) return;
    ++out.lines;
    std::vector<std::string> why;
    auto report = [&] {
      std::string w = "line " + std::to_string(n) + ": ";
      for (size_t i = 0; i < why.size(); ++i) w += (i ? "; " : "") + why[i];
      out.warnings.push_back(printable(w));  // it quotes the line's content: one printable line
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
      if (!is_current_probe_key(k)) why.push_back("stale machine probe: " + probe_stale_reason(k));
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
    if (k.version != CONVLAB_VERSION)
      why.push_back("stale: tuned by convlab " + printable(k.version) + " (this is " + CONVLAB_VERSION + ")");
    if (!k.build.empty())
      why.push_back("stale: keyed on the whole build '" + printable(k.build) +
                    "' (written before each result kept its algorithm's version): never used");
    if (is_current_key(k) && is_this_machine(k.device))
      for (const auto& [reason, algos] : stale_results(e->results))
        why.push_back("stale results, re-timed on use: " + algos + " (" + reason + ")");
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
