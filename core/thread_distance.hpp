// How far apart the cores running a thread team are: the round trip of one
// cache line between the team's first thread and each other thread (one
// writes, the other sees it and writes back), in nanoseconds.
//
// Why a benchmark needs it: two threads on cores that share a last-level
// cache pass a line in tens of nanoseconds; on cores in different cache
// domains (another CCD of an AMD part, another socket, or wherever a
// hypervisor has just moved a guest's virtual CPUs) in hundreds. Which one a
// run gets decides which working sets stay in cache between calls: on a
// 2-core guest measured here the same depthwise layer ran 0.42 ms with the
// threads 100 ns apart and 0.75 ms with them 380 ns apart, while oneDNN's
// kernel went the other way (0.70 -> 0.39 ms: its 38 MB fit two separate
// caches, not one). A comparison measured at one placement says nothing
// about the other, so every measurement records the placement it ran at.
//
//   const ThreadDistance d = measure_thread_distance(threads);
//   d.max_ns  // the team's farthest pair: what a kernel's data crosses
//
// The threads are the OpenMP team the kernels use (num_threads(threads)), so
// the numbers describe where that team sits now; nothing is pinned. The cost
// is at most about 20 ms (a descheduled partner ends the measurement early).
#pragma once
#include <limits>

namespace convlab {

struct ThreadDistance {
  static constexpr double nan = std::numeric_limits<double>::quiet_NaN();
  int threads = 0;      // the team measured; below 2 nothing is measured
  double min_ns = nan;  // the nearest of thread 0's partners: median round trip
  double max_ns = nan;  // the farthest
  bool measured() const { return min_ns == min_ns; }
};

// threads <= 0: all (omp_get_max_threads). Partners: threads 1 .. 7 of the team.
ThreadDistance measure_thread_distance(int threads);

// Two round trips (ns) at different placements: the larger over the smaller above kFarRatio.
constexpr double kFarRatio = 2.0;
bool placement_changed(double a_ns, double b_ns);

}  // namespace convlab
