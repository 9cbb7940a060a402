// The machine's load around a measurement (core/machine_load.hpp).
#include "core/machine_load.hpp"

#include <unistd.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <vector>

#include "core/json.hpp"
#include "core/json_value.hpp"
#include "core/thread_distance.hpp"
#include "core/timing.hpp"

namespace convlab {

namespace {

// One dependent multiply-add chain: a fixed amount of work whose time moves
// only when the core is not ours (about 0.3 ms at 3 GHz).
double probe_work(double seed) {
  double x = seed;
  for (int i = 0; i < 200000; ++i) x = x * 0.9999999 + 1e-9;
  return x;
}

void read_proc(MachineLoad& m) {
  if (std::ifstream in("/proc/loadavg"); in) {
    double l1 = 0, l5 = 0, l15 = 0;
    char slash = 0;
    int run = -1, tasks = 0;
    if (in >> l1 >> l5 >> l15 >> run >> slash >> tasks && slash == '/') {
      m.loadavg1 = l1;
      m.runnable = run;
    }
  }
  // This process's runnable threads (state R in /proc/self/task/*/stat), read
  // right after the run queue so both see the same instant as nearly as can be.
  std::error_code ec;
  int self_run = 0;
  bool any = false;
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task", ec)) {
    std::ifstream st(task.path() / "stat");
    std::string s((std::istreambuf_iterator<char>(st)), std::istreambuf_iterator<char>());
    const size_t close = s.rfind(')');  // the command name may hold spaces and parentheses
    if (close == std::string::npos || close + 2 >= s.size()) continue;
    any = true;
    self_run += s[close + 2] == 'R';
  }
  if (any && !ec) m.self_runnable = std::max(1, self_run);  // the reading thread runs
  if (std::ifstream in("/proc/stat"); in) {
    std::string label;
    double v[8] = {0, 0, 0, 0, 0, 0, 0, 0};  // user nice system idle iowait irq softirq steal
    in >> label;
    int got = 0;
    while (got < 8 && in >> v[got]) ++got;
    if (label == "cpu" && got >= 7) {
      // guest time is already counted in user; steal is its own field (absent on old kernels).
      m.busy_s = (v[0] + v[1] + v[2] + v[5] + v[6]) * m.tick;
      m.steal_s = (got == 8 ? v[7] : 0) * m.tick;
      m.total_s = (v[0] + v[1] + v[2] + v[3] + v[4] + v[5] + v[6] + (got == 8 ? v[7] : 0)) * m.tick;
    }
  }
  if (std::ifstream in("/proc/self/stat"); in) {
    std::stringstream ss;
    ss << in.rdbuf();
    const std::string s = ss.str();
    const size_t close = s.rfind(')');  // the command name may hold spaces and parentheses
    if (close != std::string::npos) {
      std::istringstream rest(s.substr(close + 1));
      std::string field;
      std::vector<std::string> f;
      while (f.size() < 13 && rest >> field) f.push_back(field);
      if (f.size() == 13) m.self_s = (std::atof(f[11].c_str()) + std::atof(f[12].c_str())) * m.tick;  // utime, stime
    }
  }
}

void run_probe(MachineLoad& m) {
  const int threads = std::max(1, m.cpus);
  std::vector<double> times;
  std::vector<double> sink(size_t(threads), 0.0);
  const double start = now_seconds();
  // kProbeReps reps; on a machine so busy that they take long, at least 5 within a quarter second.
  for (int r = 0; r < kProbeReps && (r < 5 || now_seconds() - start < 0.25); ++r) {
    const double t0 = now_seconds();
#pragma omp parallel num_threads(threads)
    {
#ifdef _OPENMP
      const int me = omp_get_thread_num();
#else
      const int me = 0;
#endif
      sink[size_t(me)] += probe_work(1.0 + me);
    }
    times.push_back(now_seconds() - t0);
  }
  double keep = 0;
  for (double s : sink) keep += s;
  if (keep == 42.0) std::fputs("", stderr);  // the work has an observable result: never optimised away
  const TimingStats st = summarize(times);
  m.probe_reps = st.reps;
  m.probe_median_s = st.median;
  m.probe_spread = st.spread;
  m.round_trip_ns = measure_thread_distance(threads).max_ns;
}

std::string pct(double x) {
  char b[32];
  std::snprintf(b, sizeof b, "%.0f %%", x * 100);
  return b;
}

std::string pct1(double x) {
  char b[32];
  std::snprintf(b, sizeof b, "%.1f %%", x * 100);
  return b;
}

std::string secs(double x) {
  char b[32];
  std::snprintf(b, sizeof b, "%.1f s", x);
  return b;
}

bool known(double x) { return std::isfinite(x); }

}  // namespace

MachineLoad load_snapshot(bool probe) {
  MachineLoad m;
  const long cpus = ::sysconf(_SC_NPROCESSORS_ONLN);
  m.cpus = cpus > 0 ? int(cpus) : 1;
  const long hz = ::sysconf(_SC_CLK_TCK);
  m.tick = hz > 0 ? 1.0 / double(hz) : 0.01;
  if (probe) run_probe(m);  // before /proc, so the probe's own CPU time falls before the snapshot's counters
  read_proc(m);
  m.wall = now_seconds();
  return m;
}

LoadCheck check_load(const MachineLoad& b, const MachineLoad& a) {
  LoadCheck c;
  c.before = b;
  c.after = a;
  c.seconds = a.wall - b.wall;
  c.known = known(b.busy_s) && known(a.busy_s) && known(b.self_s) && known(a.self_s) && c.seconds > 0;
  std::vector<std::string> why;
  const int cpus = std::max(1, std::max(a.cpus, b.cpus));
  if (c.known) {
    // One tick per CPU per snapshot of accounting granularity is not evidence of anybody.
    const double slack = 2.0 * cpus * std::max(a.tick, b.tick);
    const double others = std::max(0.0, (a.busy_s - b.busy_s) - (a.self_s - b.self_s) - slack);
    c.others_share = others / (cpus * c.seconds);
    const double total = a.total_s - b.total_s;
    c.steal_share = total > 0 ? std::max(0.0, a.steal_s - b.steal_s) / total : 0;
    if (c.others_share > kOthersShareLimit)
      why.push_back("other processes used " + pct(c.others_share) + " of the " + std::to_string(cpus) + " CPUs over " +
                    secs(c.seconds) + " (limit " + pct(kOthersShareLimit) + ")");
    if (c.steal_share > kStealShareLimit)
      why.push_back("the hypervisor stole " + pct1(c.steal_share) + " of the CPU time (limit " + pct1(kStealShareLimit) + ")");
  }
  // Other processes' runnable tasks: the run queue less this process's own
  // runnable threads (or less this one thread where those were not read).
  const auto others = [](const MachineLoad& m) {
    return m.runnable < 1 ? -1 : std::max(0, m.runnable - std::max(1, m.self_runnable));
  };
  c.others_runnable_before = others(b);
  c.others_runnable_after = others(a);
  for (auto [n, when] : {std::pair{c.others_runnable_before, "before"}, std::pair{c.others_runnable_after, "after"}})
    if (n >= cpus)
      why.push_back(std::to_string(n) + " other tasks runnable " + when + " on " + std::to_string(cpus) + " CPUs");
  for (auto [m, when] : {std::pair{&b, "before"}, std::pair{&a, "after"}})
    if (m->probe_reps > 0 && m->probe_spread > kProbeSpreadLimit)
      why.push_back(std::string("noise probe spread ") + pct(m->probe_spread) + " " + when + " (limit " +
                    pct(kProbeSpreadLimit) + ")");
  if (b.probe_reps > 0 && a.probe_reps > 0 && b.probe_median_s > 0 && a.probe_median_s > 0) {
    c.probe_drift = a.probe_median_s / b.probe_median_s;
    if (c.probe_drift > kProbeDriftLimit || c.probe_drift < 1 / kProbeDriftLimit) {
      char s[96];
      std::snprintf(s, sizeof s, "noise probe %.2fx slower after than before", c.probe_drift);
      if (c.probe_drift < 1) std::snprintf(s, sizeof s, "noise probe %.2fx slower before than after", 1 / c.probe_drift);
      why.push_back(s);
    }
  }
  if (placement_changed(b.round_trip_ns, a.round_trip_ns)) {
    char s[160];
    std::snprintf(s, sizeof s, "the threads' cores moved: a cache line's round trip between them %.0f ns before, %.0f ns after",
                  b.round_trip_ns, a.round_trip_ns);
    why.push_back(s);
  }
  for (size_t i = 0; i < why.size(); ++i) c.why += (i ? "; " : "") + why[i];
  c.disturbed = !why.empty();
  return c;
}

bool disturbed(const MachineLoad& before, const MachineLoad& after, std::string* why) {
  const LoadCheck c = check_load(before, after);
  if (why) *why = c.why;
  return c.disturbed;
}

std::string load_text(const LoadCheck& c) {
  if (c.disturbed) return "machine: DISTURBED while measuring: " + c.why + " -- timings may be inflated";
  if (!c.known) return "machine load: unknown (no /proc to read)";
  char b[256];
  std::snprintf(b, sizeof b, "machine: quiet while measuring (other processes %s of the %d CPUs over %.1f s, steal %s",
                pct(c.others_share).c_str(), std::max(1, c.after.cpus), c.seconds, pct1(c.steal_share).c_str());
  std::string s = b;
  if (c.before.probe_reps > 0 && c.after.probe_reps > 0)
    s += ", noise probe spread " + pct1(c.before.probe_spread) + " before / " + pct1(c.after.probe_spread) + " after";
  if (known(c.before.round_trip_ns) && known(c.after.round_trip_ns)) {
    std::snprintf(b, sizeof b, ", threads' round trip %.0f / %.0f ns", c.before.round_trip_ns, c.after.round_trip_ns);
    s += b;
  }
  return s + ")";
}

std::string load_json(const LoadCheck& c) {
  using json::number;
  auto pair = [](double x, double y) { return "[" + number(x) + "," + number(y) + "]"; };
  auto runnable = [](int n) { return n < 0 ? std::string("null") : std::to_string(n); };
  auto us = [](const MachineLoad& m) { return m.probe_reps > 0 ? m.probe_median_s * 1e6 : MachineLoad::nan; };
  auto spread = [](const MachineLoad& m) { return m.probe_reps > 0 ? m.probe_spread : MachineLoad::nan; };
  return std::string("{\"known\":") + (c.known ? "true" : "false") + ",\"disturbed\":" + (c.disturbed ? "true" : "false") +
         ",\"why\":" + json::quote(c.why) + ",\"seconds\":" + number(c.seconds) +
         ",\"cpus\":" + std::to_string(std::max(1, c.after.cpus)) + ",\"others_cpu_share\":" + number(c.others_share) +
         ",\"steal_share\":" + number(c.steal_share) + ",\"runnable_others\":[" + runnable(c.others_runnable_before) +
         "," + runnable(c.others_runnable_after) + "],\"loadavg1\":" + pair(c.before.loadavg1, c.after.loadavg1) +
         ",\"probe_spread\":" + pair(spread(c.before), spread(c.after)) +
         ",\"probe_median_us\":" + pair(us(c.before), us(c.after)) + ",\"probe_drift\":" + number(c.probe_drift) +
         (known(c.before.round_trip_ns) || known(c.after.round_trip_ns)
              ? ",\"round_trip_ns\":" + pair(c.before.round_trip_ns, c.after.round_trip_ns)
              : std::string()) +
         "}";
}

LoadCheck load_from_json(const json::Value& v) {
  using json::number_or;
  const double nan = LoadCheck::nan;
  LoadCheck c;
  c.known = json::bool_or(v, "known", 0) == 1;
  c.disturbed = json::bool_or(v, "disturbed", 0) == 1;
  c.why = json::text_or(v, "why");
  c.seconds = number_or(v, "seconds", nan);
  c.after.cpus = int(number_or(v, "cpus", 1));
  c.others_share = number_or(v, "others_cpu_share", nan);
  c.steal_share = number_or(v, "steal_share", nan);
  c.probe_drift = number_or(v, "probe_drift", nan);
  // [before, after] pairs; a null side stays unknown.
  auto pair = [&](const char* key, int i) {
    const auto& a = json::array_or_empty(v, key);
    return a.size() == 2 && a[i].type == json::Value::Type::number ? a[i].num : nan;
  };
  c.others_runnable_before = std::isfinite(pair("runnable_others", 0)) ? int(pair("runnable_others", 0)) : -1;
  c.others_runnable_after = std::isfinite(pair("runnable_others", 1)) ? int(pair("runnable_others", 1)) : -1;
  MachineLoad* side[2] = {&c.before, &c.after};
  for (int i = 0; i < 2; ++i) {
    side[i]->loadavg1 = pair("loadavg1", i);
    const double us = pair("probe_median_us", i), spread = pair("probe_spread", i);
    if (std::isfinite(us) || std::isfinite(spread)) side[i]->probe_reps = 1;  // written only when the probe ran
    side[i]->probe_median_s = json::unscale(us, 1e6);
    side[i]->probe_spread = spread;
    side[i]->round_trip_ns = pair("round_trip_ns", i);
  }
  return c;
}

}  // namespace convlab
