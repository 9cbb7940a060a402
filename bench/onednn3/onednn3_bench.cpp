// convlab_onednn3: oneDNN 3.x's convolutions (PyPI's `onednn` wheel: the
// library frameworks ship) timed on convlab's problems the way `convlab
// layers` times its candidates, in a process of its own (convlab links
// Debian's oneDNN 2.6; the two never share an address space).
//
//   convlab_onednn3 NET|PROBLEM|@FILE... [--dir DIRS] [--batch N] [--threads N]
//                   [--max-seconds S] [--json F]
//
// For every problem, direction and algorithm kind (onednn3.auto, .direct,
// .winograd) one row: oneDNN's implementation, the check against the fp64
// reference (bench/onednn3/onednn3_measure.hpp), the median time and its 95 %
// interval. Threads: oneDNN 3's SYCL CPU runtime runs on TBB, which sizes its
// pool from the process's CPU affinity; --threads N keeps the first N CPUs of
// the affinity mask and caps TBB at N (tbb::global_control), so oneDNN reports
// nthr:N. Exit 0 when every row is ok or unsupported, 1 when a check failed
// (the JSON is written either way), 2 on bad input.
#include <sched.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <oneapi/tbb/global_control.h>
#include <omp.h>
#include <string>
#include <vector>

#include "bench/onednn3/onednn3_measure.hpp"
#include "core/device.hpp"
#include "core/error.hpp"
#include "core/json.hpp"
#include "core/npy.hpp"
#include "core/paths.hpp"
#include "core/problem_list.hpp"

namespace {

using namespace convlab;
using onednn3::Row;

struct Args {
  std::vector<std::string> problems;
  std::vector<Direction> dirs = {Direction::fwd, Direction::bwd_data, Direction::bwd_filter};
  bool dirs_given = false;
  int batch = 0, threads = 0;
  double max_seconds = 0.3;
  std::string json;
};

const char kUsage[] =
    "usage: convlab_onednn3 NET|PROBLEM|@FILE... [--dir DIRS] [--batch N] [--threads N] [--max-seconds S] "
    "[--json F]\n";

Args parse_args(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) fail("convlab_onednn3: " + arg + " needs a value");
      return argv[++i];
    };
    if (arg == "--dir") {
      a.dirs = parse_directions(value());
      a.dirs_given = true;
    } else if (arg == "--batch") {
      a.batch = int(parse_int(value(), 1, 1 << 20, "convlab_onednn3: --batch"));
    } else if (arg == "--threads") {
      a.threads = int(parse_int(value(), 0, 4096, "convlab_onednn3: --threads"));
    } else if (arg == "--max-seconds") {
      const std::string v = value();
      char* end = nullptr;
      a.max_seconds = std::strtod(v.c_str(), &end);
      if (v.empty() || *end || !(a.max_seconds > 0 && a.max_seconds <= 3600))
        fail("convlab_onednn3: --max-seconds expects seconds in (0, 3600], got " + json::quote(v));
    } else if (arg == "--json") {
      a.json = value();
      require_output_path(a.json, "convlab_onednn3: --json");
    } else if (arg.rfind("--", 0) == 0) {
      fail("convlab_onednn3: unknown option " + json::quote(arg));
    } else {
      a.problems.push_back(arg);
    }
  }
  if (a.problems.empty()) fail("convlab_onednn3: no problems given");
  return a;
}

// Keeps the first `want` CPUs of the affinity mask (0 = all of them); returns the thread count.
int pin_threads(int want) {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) fail("convlab_onednn3: cannot read the CPU affinity mask");
  const int have = CPU_COUNT(&set);
  if (want <= 0 || want >= have) return have;
  cpu_set_t keep;
  CPU_ZERO(&keep);
  for (int cpu = 0, kept = 0; cpu < CPU_SETSIZE && kept < want; ++cpu)
    if (CPU_ISSET(cpu, &set)) {
      CPU_SET(cpu, &keep);
      ++kept;
    }
  if (sched_setaffinity(0, sizeof keep, &keep) != 0) fail("convlab_onednn3: cannot set the CPU affinity mask");
  return want;
}

std::string row_json(const Row& r) {
  auto ms = [](double s) { return json::number(s * 1e3); };
  return "{\"layer\": " + json::quote(r.layer) + ", \"problem\": " + json::quote(r.problem) +
         ", \"direction\": " + json::quote(r.direction) + ", \"threads\": " + std::to_string(r.threads) +
         ", \"algorithm\": " + json::quote(r.algorithm) + ", \"implementation\": " + json::quote(r.impl) +
         ", \"status\": " + json::quote(r.status) + ", \"note\": " + json::quote(r.note) +
         ", \"time_ms\": " + ms(r.time) + ", \"time_lo_ms\": " + ms(r.lo) + ", \"time_hi_ms\": " + ms(r.hi) +
         ", \"spread\": " + json::number(r.spread) + ", \"reps\": " + std::to_string(r.reps) +
         ", \"flops\": " + json::number(r.flops) + ", \"check_err_ratio\": " + json::number(r.err_ratio) + "}";
}

std::string document(const std::vector<Row>& rows, int threads, double max_seconds) {
  std::string s = "{\"tool\": \"convlab_onednn3\", \"onednn_version\": " + json::quote(onednn3::version()) +
                  ", \"onednn_isa\": " + json::quote(onednn3::cpu_isa()) + ", \"cpu\": " +
                  json::quote(cpu_info().model) + ", \"threads\": " + std::to_string(threads) +
                  ", \"max_seconds\": " + json::number(max_seconds) + ", \"rows\": [";
  for (size_t i = 0; i < rows.size(); ++i) s += (i ? ",\n  " : "\n  ") + row_json(rows[i]);
  return s + "\n]}\n";
}

void print_row(const Row& r) {
  if (r.status == "ok")
    std::printf("%-36s %-10s %-17s %-26s %9.3f ms [%.3f, %.3f]\n", r.layer.c_str(), r.direction.c_str(),
                r.algorithm.c_str(), r.impl.c_str(), r.time * 1e3, r.lo * 1e3, r.hi * 1e3);
  else
    std::printf("%-36s %-10s %-17s %s: %s\n", r.layer.c_str(), r.direction.c_str(), r.algorithm.c_str(),
                r.status.c_str(), r.note.c_str());
  std::fflush(stdout);
}

// The SYCL CPU device is Intel's OpenCL CPU runtime from the same wheels; the
// ICD loader finds it through OCL_ICD_FILENAMES when no system ICD names it.
void point_opencl_at_wheel() {
#ifdef CONVLAB_ONEDNN3_LIBDIR
  if (!std::getenv("OCL_ICD_FILENAMES")) setenv("OCL_ICD_FILENAMES", CONVLAB_ONEDNN3_LIBDIR "/libintelocl.so", 1);
#endif
}

int run_main(int argc, char** argv) {
  const Args a = parse_args(argc, argv);
  const ProblemSet set = expand_problems(a.problems, a.batch);
  const int threads = pin_threads(a.threads);
  oneapi::tbb::global_control cap(oneapi::tbb::global_control::max_allowed_parallelism, size_t(threads));
  omp_set_num_threads(threads);  // the fp64 reference of the check
  point_opencl_at_wheel();
  try {
    (void)onednn3::engine();
  } catch (const dnnl::error& e) {
    fail(std::string("convlab_onednn3: oneDNN 3 has no CPU engine here: ") + e.what());
  }
  for (const ProblemItem& item : set.items)
    for (Direction dir : item_directions(item, a.dirs, a.dirs_given))
      require_memory(DeviceKind::cpu, onednn3::measure_bytes(item.problem, dir),
                     "convlab_onednn3 on " + item.label + " " + std::string(to_string(dir)));
  std::fprintf(stderr, "oneDNN %s, ISA %s, %d threads\n", onednn3::version().c_str(), onednn3::cpu_isa().c_str(),
               threads);
  std::vector<Row> rows;
  bool failed = false;
  onednn3::MeasureOptions opt;
  opt.threads = threads;
  opt.max_seconds = a.max_seconds;
  for (const ProblemItem& item : set.items)
    for (Direction dir : item_directions(item, a.dirs, a.dirs_given))
      for (onednn3::Kind kind : onednn3::kKinds) {
        rows.push_back(onednn3::measure(kind, item.problem, dir, opt));
        rows.back().layer = item.label;
        failed = failed || rows.back().status == "inaccurate";
        print_row(rows.back());
      }
  if (!a.json.empty()) write_file_atomic(a.json, document(rows, threads, a.max_seconds));
  return failed ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 2 && std::string(argv[1]) == "--help") {
    std::fputs(kUsage, stdout);
    return 0;
  }
  try {
    return run_main(argc, argv);
  } catch (const convlab::Error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 2;
  } catch (const dnnl::error& e) {
    std::fprintf(stderr, "error: convlab_onednn3: oneDNN: %s\n", e.what());
    return 2;
  }
}
