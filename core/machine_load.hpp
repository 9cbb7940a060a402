// How busy the machine was around a long measurement. Timings taken while
// other processes compete for the cores, or while a hypervisor steals them,
// are inflated by an amount nobody can subtract afterwards; what a report can
// do is say so, with the numbers. Take a snapshot before the long work and one
// after it, and judge the pair:
//
//   MachineLoad before = load_snapshot();
//   ... find / training ...
//   const LoadCheck c = check_load(before, load_snapshot());
//   print load_text(c); put load_json(c) in the JSON
//
// What a snapshot holds (Linux; on another system the /proc fields stay NaN
// and the check says the load is unknown):
//   - /proc/loadavg: the 1-minute load average and the tasks runnable at that
//     instant (this process's included), and /proc/self/task: how many of this
//     process's own threads were runnable then (an OpenMP team still spinning
//     after the noise probe or a kernel is ours, not another process's);
//   - /proc/stat's "cpu" line: busy (user + nice + system + irq + softirq),
//     steal and total CPU seconds since boot, over all CPUs; /proc/self/stat:
//     this process's own user + system seconds (the same tick accounting, so
//     the difference is the other processes' share);
//   - the noise probe: kProbeReps timings (at least 5 when they take over a
//     quarter second) of one short fixed piece of arithmetic (about 0.5 ms)
//     run on every CPU at once. On a quiet machine the reps agree to a few
//     percent; a competing process makes some reps wait for a core, which
//     shows as spread.
//
// The rule (check_load): the interval was disturbed when any of
//   - other processes used more than kOthersShareLimit of the machine's CPU
//     time over the interval (busy - own, less one tick per CPU per snapshot
//     of accounting granularity, / (cpus x seconds));
//   - more than kStealShareLimit of the CPU time was stolen by the hypervisor;
//   - at either snapshot, other tasks runnable (those of other processes:
//     runnable less this process's runnable threads) >= the number of CPUs
//     (every core wanted by someone else at that instant);
//   - the probe's spread ((p75 - p25) / median) exceeds kProbeSpreadLimit at
//     either snapshot, or its median moved by more than kProbeDriftLimit x
//     between them;
//   - the threads' cores moved (core/thread_distance.hpp): the round trip of a
//     cache line between the probe's threads differs by more than kFarRatio
//     between the snapshots (a cache newly or no longer shared between them).
// `why` names every rule that fired, with its numbers.
#pragma once
#include <limits>
#include <string>

namespace convlab::json {
struct Value;
}

namespace convlab {

constexpr double kOthersShareLimit = 0.10;
constexpr double kStealShareLimit = 0.02;
constexpr double kProbeSpreadLimit = 0.10;
constexpr double kProbeDriftLimit = 1.25;
constexpr int kProbeReps = 15;

struct MachineLoad {
  static constexpr double nan = std::numeric_limits<double>::quiet_NaN();
  double wall = nan;       // now_seconds() when taken
  int cpus = 0;            // online CPUs
  double tick = 0.01;      // seconds per /proc accounting tick (1 / sysconf(_SC_CLK_TCK))
  double loadavg1 = nan;   // 1-minute load average
  int runnable = -1;       // tasks runnable at that instant, this thread included (-1: unknown)
  int self_runnable = -1;  // this process's threads runnable then, this one included (-1: unknown)
  double busy_s = nan;     // all CPUs, since boot
  double steal_s = nan;
  double total_s = nan;
  double self_s = nan;     // this process's user + system seconds
  int probe_reps = 0;      // 0: the probe was not run
  double probe_median_s = nan;
  double probe_spread = nan;  // (p75 - p25) / median
  double round_trip_ns = nan; // with the probe: the farthest pair of its threads (core/thread_distance.hpp)
};

// Reads /proc and, when `probe`, runs the noise probe (under 10 ms on a quiet
// machine, at most about a quarter second on a busy one). Never throws.
MachineLoad load_snapshot(bool probe = true);

struct LoadCheck {
  static constexpr double nan = std::numeric_limits<double>::quiet_NaN();
  bool known = false;       // /proc was readable at both snapshots
  bool disturbed = false;
  std::string why;          // every rule that fired, with its numbers; "" when quiet or unknown
  MachineLoad before, after;
  double seconds = nan;     // between the snapshots
  double others_share = nan;   // of cpus x seconds
  double steal_share = nan;    // of the interval's total CPU time
  int others_runnable_before = -1, others_runnable_after = -1;
  double probe_drift = nan;    // after / before probe median
};

// A pure function of the two snapshots.
LoadCheck check_load(const MachineLoad& before, const MachineLoad& after);
// check_load(...).disturbed, with its reasons in *why.
bool disturbed(const MachineLoad& before, const MachineLoad& after, std::string* why = nullptr);

// One line: "machine: quiet while measuring (...)" or "machine: DISTURBED while
// measuring: <why> -- timings may be inflated", or "machine load: unknown (...)".
std::string load_text(const LoadCheck& c);
// One JSON object: {"known", "disturbed", "why", "seconds", "cpus", "others_cpu_share",
// "steal_share", "runnable_others": [before, after], "loadavg1": [before, after],
// "probe_spread": [before, after], "probe_median_us": [before, after], "probe_drift"}, and
// "round_trip_ns": [before, after] where either side was measured.
std::string load_json(const LoadCheck& c);
// load_json's object read back: what it wrote, so load_json(load_from_json(v)) is the same text.
LoadCheck load_from_json(const json::Value& v);

}  // namespace convlab
