// convlab cache: show / check / merge autotune cache files (autotune/cache.hpp does the work).
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "autotune/cache.hpp"
#include "core/error.hpp"
#include "core/paths.hpp"
#include "tools/cli.hpp"

namespace convlab::cli {

namespace {

Args cache_args() {
  Args args("cache", "show FILE | check FILE | merge A B... -o OUT",
            "Inspects and combines autotune cache files (JSON lines, see autotune/cache.hpp).\n"
            "  show FILE        one line per entry: problem, direction, device, version, winner, time\n"
            "  check FILE       one warning per line this build on this machine would not use (exit 1 if\n"
            "                   any): unreadable or over-long lines, another cache format, another device,\n"
            "                   another convlab version, a key of a whole build (an older line), results of\n"
            "                   another code or library version of their algorithm (named, with what differs),\n"
            "                   a problem this build rejects, an unregistered algorithm, no results; the\n"
            "                   machine probe lines (get's measured rates) likewise\n"
            "  merge A B... -o OUT   union of the inputs, per key the most recently tuned entry wins;\n"
            "                   OUT is written atomically under the cache lock\n"
            "A missing file, a folder or anything not a regular file is an error (exit 2), as is a file over\n"
            "256 MiB; lines over 1 MiB are unreadable lines.");
  args.positionals("ACTION FILE...", "show, check or merge, then the files", 2, 1000);
  args.option("out", "FILE", "merge: the output file (also -o)");
  return args;
}

// Every line this build on this machine would not use, one warning each (exit 1 if any).
int check(const std::string& file) {
  const CacheCheck r = check_cache_file(file);
  for (const std::string& w : r.warnings) std::printf("%s: %s\n", printable(file).c_str(), printable(w).c_str());
  const std::string probes = r.probes ? std::to_string(r.probes) + " machine probe" + (r.probes == 1 ? "" : "s") +
                                            " (" + std::to_string(r.usable_probes) + " usable here), "
                                      : std::string();
  std::printf("%s: %d lines, %d entries, %d usable here, %s%zu warnings\n", printable(file).c_str(), r.lines,
              r.entries, r.usable, probes.c_str(), r.warnings.size());
  return r.warnings.empty() ? 0 : 1;
}

int show(const std::string& file) {
  if (!std::filesystem::exists(file)) fail("convlab cache show: '" + printable(file) + "' does not exist");
  TuneCache c(file, true);
  c.load();
  for (const ProbeEntry& e : c.probes()) {
    char b[64];
    std::snprintf(b, sizeof b, "%zu rates, %.2f s", e.probe.rates.size(), e.probe.seconds);
    std::printf("%-40s %-10s %-8s %-28s %-10s %s\n", "(machine probe)", "-", printable(e.key.version).c_str(), b, "-",
                printable(e.key.device).c_str());
  }
  // Every field is the file's content: printed through printable(), one line per entry whatever it holds.
  for (const CacheEntry& e : c.entries()) {
    const AlgoPerf* best = select(e.results, Constraints{});
    std::printf("%-40s %-10s %-8s %-28s %-10s %s\n", printable(e.key.problem).c_str(), printable(e.key.dir).c_str(),
                printable(e.key.version).c_str(), best ? printable(best->algo).c_str() : "-",
                best ? ms(best->time).c_str() : "-", printable(e.key.device).c_str());
  }
  return 0;
}

}  // namespace

int cmd_cache(int argc, char** argv) {
  // "-o C" is accepted as a synonym of "--out C".
  std::vector<char*> av(argv, argv + argc);
  static char out_flag[] = "--out";
  for (auto& a : av)
    if (std::string(a) == "-o") a = out_flag;
  Args args = cache_args();
  if (!args.parse(int(av.size()), av.data())) return 0;
  const std::string action = args.pos()[0];
  const std::vector<std::string> files(args.pos().begin() + 1, args.pos().end());
  if (action == "merge") {
    if (!args.has("out")) fail("convlab cache merge: -o OUT is required");
    const int n = merge_cache_files(files, args.get("out"));
    std::printf("wrote %s: %d entries from %zu files\n", printable(args.get("out")).c_str(), n, files.size());
    return 0;
  }
  if (files.size() != 1) fail("convlab cache " + action + ": expects exactly one FILE");
  if (action != "show" && action != "check") fail("convlab cache: unknown action '" + action + "' (show, check, merge)");
  return action == "check" ? check(files[0]) : show(files[0]);
}

}  // namespace convlab::cli
