// The machine-load check (core/machine_load.hpp): the disturbance rule on
// synthetic snapshots, one rule at a time, and a real snapshot's fields.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <thread>
#include <vector>

#include "core/machine_load.hpp"

namespace convlab {
namespace {

// A quiet 2-CPU machine: 10 s apart, this process busy on both CPUs (19.6 s of
// CPU), nobody else, no steal, the probe tight and unchanged.
MachineLoad snap(double wall, double busy, double self, double steal = 0, int runnable = 1, double spread = 0.02,
                 double probe_s = 3e-4) {
  MachineLoad m;
  m.wall = wall;
  m.cpus = 2;
  m.tick = 0.01;
  m.loadavg1 = 1.0;
  m.runnable = runnable;
  m.busy_s = busy;
  m.steal_s = steal;
  m.total_s = 2 * wall + steal;  // every CPU-second accounted for
  m.self_s = self;
  m.probe_reps = kProbeReps;
  m.probe_median_s = probe_s;
  m.probe_spread = spread;
  return m;
}

TEST(MachineLoad, QuietMachineIsNotDisturbed) {
  const MachineLoad b = snap(100, 50, 1), a = snap(110, 69.6, 20.6);
  std::string why = "unchanged";
  EXPECT_FALSE(disturbed(b, a, &why));
  EXPECT_EQ(why, "");
  const LoadCheck c = check_load(b, a);
  EXPECT_TRUE(c.known);
  EXPECT_NEAR(c.seconds, 10, 1e-9);
  EXPECT_NEAR(c.others_share, 0, 1e-9);
  EXPECT_EQ(load_text(c).rfind("machine: quiet while measuring (other processes 0 % of the 2 CPUs over 10.0 s", 0), 0u)
      << load_text(c);
  const std::string j = load_json(c);
  EXPECT_NE(j.find("\"disturbed\":false"), std::string::npos) << j;
  EXPECT_NE(j.find("\"runnable_others\":[0,0]"), std::string::npos) << j;
}

TEST(MachineLoad, OtherProcessesCpuTime) {
  // Others used 6 of the 20 CPU-seconds: 30 %.
  const MachineLoad b = snap(100, 50, 1), a = snap(110, 75.6, 20.6);
  std::string why;
  EXPECT_TRUE(disturbed(b, a, &why));
  EXPECT_NE(why.find("other processes used 30 % of the 2 CPUs over 10.0 s"), std::string::npos) << why;
  // Within one tick per CPU per snapshot of accounting granularity: nobody.
  EXPECT_FALSE(disturbed(b, snap(110, 69.63, 20.6)));
  // Just over the 10 % limit, and just under it.
  EXPECT_TRUE(disturbed(b, snap(110, 69.6 + 2.1 + 0.04, 20.6)));
  EXPECT_FALSE(disturbed(b, snap(110, 69.6 + 1.9 + 0.04, 20.6)));
}

TEST(MachineLoad, StealTime) {
  const MachineLoad b = snap(100, 50, 1, 0), a = snap(110, 69.6, 20.6, 1.0);  // 1 of 21 CPU-seconds stolen
  std::string why;
  EXPECT_TRUE(disturbed(b, a, &why));
  EXPECT_NE(why.find("the hypervisor stole 4.8 % of the CPU time"), std::string::npos) << why;
  EXPECT_FALSE(disturbed(b, snap(110, 69.6, 20.6, 0.2)));  // 1 %: under the 2 % limit
}

TEST(MachineLoad, RunQueue) {
  // 3 runnable at the "before" snapshot on 2 CPUs: 2 besides this thread, every core wanted.
  std::string why;
  EXPECT_TRUE(disturbed(snap(100, 50, 1, 0, 3), snap(110, 69.6, 20.6), &why));
  EXPECT_NE(why.find("2 other tasks runnable before on 2 CPUs"), std::string::npos) << why;
  EXPECT_FALSE(disturbed(snap(100, 50, 1, 0, 2), snap(110, 69.6, 20.6)));  // one other: a core is still free
}

// This process's own runnable threads (an OpenMP team spinning after a
// parallel region) are not other tasks: 3 runnable of which 3 are ours is quiet.
TEST(MachineLoad, OwnRunnableThreadsAreNotOthers) {
  MachineLoad before = snap(100, 50, 1, 0, 3), after = snap(110, 69.6, 20.6);
  before.self_runnable = 3;
  EXPECT_FALSE(disturbed(before, after));
  EXPECT_EQ(check_load(before, after).others_runnable_before, 0);
  before.runnable = 5;  // two of another process's tasks besides our three
  std::string why;
  EXPECT_TRUE(disturbed(before, after, &why));
  EXPECT_NE(why.find("2 other tasks runnable before on 2 CPUs"), std::string::npos) << why;
}

// Two spinning threads of this process are counted as its own runnable threads.
TEST(MachineLoad, RealSnapshotCountsOwnRunnableThreads) {
#ifdef __linux__
  std::atomic<bool> stop{false};
  std::vector<std::thread> spin;
  for (int i = 0; i < 2; ++i)
    spin.emplace_back([&] {
      while (!stop.load(std::memory_order_relaxed)) {
      }
    });
  const MachineLoad m = load_snapshot(false);
  stop = true;
  for (auto& t : spin) t.join();
  EXPECT_GE(m.self_runnable, 1);
  EXPECT_LE(m.self_runnable, 3);
  EXPECT_GE(m.runnable, m.self_runnable - 2);  // the two reads are instants apart; a spinner may be preempted
#else
  GTEST_SKIP() << "/proc is Linux's";
#endif
}

TEST(MachineLoad, NoiseProbeSpreadAndDrift) {
  std::string why;
  EXPECT_TRUE(disturbed(snap(100, 50, 1), snap(110, 69.6, 20.6, 0, 1, 0.35), &why));
  EXPECT_NE(why.find("noise probe spread 35 % after"), std::string::npos) << why;
  EXPECT_TRUE(disturbed(snap(100, 50, 1), snap(110, 69.6, 20.6, 0, 1, 0.02, 6e-4), &why));
  EXPECT_NE(why.find("noise probe 2.00x slower after than before"), std::string::npos) << why;
  EXPECT_TRUE(disturbed(snap(100, 50, 1, 0, 1, 0.02, 6e-4), snap(110, 69.6, 20.6), &why));
  EXPECT_NE(why.find("slower before than after"), std::string::npos) << why;
  EXPECT_FALSE(disturbed(snap(100, 50, 1), snap(110, 69.6, 20.6, 0, 1, 0.02, 3.3e-4)));  // 1.1x: within 1.25x
  // Every rule that fires is named.
  const LoadCheck all = check_load(snap(100, 50, 1, 0, 4), snap(110, 79.6, 20.6, 1.0, 4, 0.5, 9e-4));
  EXPECT_TRUE(all.disturbed);
  for (const char* w : {"other processes", "stole", "runnable before", "runnable after", "spread", "slower after"})
    EXPECT_NE(all.why.find(w), std::string::npos) << w << " in " << all.why;
  EXPECT_EQ(load_text(all).rfind("machine: DISTURBED while measuring: ", 0), 0u) << load_text(all);
  EXPECT_NE(load_json(all).find("\"disturbed\":true"), std::string::npos);
}

TEST(MachineLoad, ThreadsThatMovedApart) {
  MachineLoad b = snap(100, 50, 1), a = snap(110, 69.6, 20.6);
  b.round_trip_ns = 100, a.round_trip_ns = 180;  // within kFarRatio: the same placement
  LoadCheck c = check_load(b, a);
  EXPECT_FALSE(c.disturbed) << c.why;
  EXPECT_NE(load_text(c).find("threads' round trip 100 / 180 ns"), std::string::npos) << load_text(c);
  EXPECT_NE(load_json(c).find("\"round_trip_ns\":[100,180]"), std::string::npos) << load_json(c);
  a.round_trip_ns = 390;
  c = check_load(b, a);
  EXPECT_TRUE(c.disturbed);
  EXPECT_NE(c.why.find("the threads' cores moved: a cache line's round trip between them 100 ns before, 390 ns after"),
            std::string::npos)
      << c.why;
  // Not measured (one CPU): no rule, no key.
  b.round_trip_ns = a.round_trip_ns = MachineLoad::nan;
  c = check_load(b, a);
  EXPECT_FALSE(c.disturbed);
  EXPECT_EQ(load_json(c).find("round_trip_ns"), std::string::npos) << load_json(c);
}

TEST(MachineLoad, UnknownWithoutProc) {
  MachineLoad b, a;  // nothing read
  b.wall = 1;
  a.wall = 2;
  const LoadCheck c = check_load(b, a);
  EXPECT_FALSE(c.known);
  EXPECT_FALSE(c.disturbed);
  EXPECT_EQ(load_text(c), "machine load: unknown (no /proc to read)");
  EXPECT_NE(load_json(c).find("\"known\":false"), std::string::npos);
}

TEST(MachineLoad, RealSnapshot) {
  const MachineLoad m = load_snapshot();
  EXPECT_GE(m.cpus, 1);
  EXPECT_GE(m.probe_reps, 5);
  EXPECT_LE(m.probe_reps, kProbeReps);
  EXPECT_GT(m.probe_median_s, 0);
  EXPECT_GE(m.probe_spread, 0);
#ifdef __linux__
  EXPECT_TRUE(std::isfinite(m.busy_s) && m.busy_s > 0);
  EXPECT_TRUE(std::isfinite(m.self_s) && m.self_s >= 0);
  EXPECT_GE(m.runnable, 1);  // this thread, reading
  EXPECT_GE(m.total_s, m.busy_s);
  const LoadCheck c = check_load(m, load_snapshot(false));
  EXPECT_TRUE(c.known);
  EXPECT_GE(c.others_share, 0);
#endif
}

}  // namespace
}  // namespace convlab
