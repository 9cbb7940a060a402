// The machine's measured fp32 FMA peak: a register-resident FMA loop (enough
// independent accumulators to cover latency x ports) run on `threads` threads.
// Reports use it as the denominator of "fraction of peak"; it is measured, not
// taken from a data sheet, because clocks under AVX-512 load differ per machine.
#pragma once
#include <string>

namespace convlab {

struct PeakResult {
  double gflops = 0;   // all threads together
  int threads = 1;
  std::string isa;     // the instruction set the loop used
};

// Runs for about `seconds` per measurement and returns the best of 3. Each
// thread's rate is over its wall time, or with thread_cpu_time over the CPU
// time it ran (a kernel benchmark that reports CPU-time rates on a shared
// machine compares against this one).
PeakResult measure_fma_peak(int threads, double seconds = 0.2, bool thread_cpu_time = false);

}  // namespace convlab

namespace convlab {
// Streaming memory bandwidth (GB/s, read + write bytes) of a triad a = b + s*c
// over arrays far larger than the caches, best of 3, on `threads` threads.
double measure_stream_bandwidth(int threads);
}  // namespace convlab
