#include <cstdio>

#include "core/device.hpp"
#include "core/peak.hpp"
#include "tools/cli.hpp"

namespace convlab::cli {

int cmd_peak(int argc, char** argv) {
  Args args("peak", "[--threads 1,2]",
            "Measures the CPU's fp32 FMA peak with a register-resident FMA loop, per thread count.\n"
            "This is the denominator of every 'fraction of peak' convlab reports.");
  args.option("threads", "LIST", "comma-separated thread counts (0 = all hardware threads)", "0");
  if (!args.parse(argc, argv)) return 0;
  std::printf("%s\n%s\n%s\n", device_fingerprint(DeviceKind::cpu, 0).c_str(), describe_isa(cpu_info()).c_str(),
              describe_caches(cpu_info()).c_str());
  for (long t : args.get_int_list("threads", 0, 4096)) {
    const PeakResult r = measure_fma_peak(int(t));
    std::printf("threads %2d  %-7s  %8.1f GFLOP/s  stream %6.1f GB/s\n", r.threads, r.isa.c_str(), r.gflops,
                measure_stream_bandwidth(int(t)));
  }
  return 0;
}

}  // namespace convlab::cli
