// The machine probe: a short measurement (3-4 s on an idle 2-core machine;
// nothing starts after 6 s) of the rates get's cost model
// (autotune/get.hpp) needs, taken once per device fingerprint (CPU model, ISA,
// threads) and probe identity (its own code version and every CPU algorithm's:
// autotune/build_identity.hpp probe_identity), and stored in the autotune
// cache file beside the find entries (autotune/cache_entry.hpp: a line with a
// "probe" object, keyed by device, probe identity and version).
//
// What it measures, on the ISA in use (cpu_info().isa(), capped by
// CONVLAB_ISA) and the fingerprint's thread count. Every rate is a best of
// a few repetitions (the least disturbed one on a shared machine); all threads
// together:
//
//   kernel rates (the phases the model adds up)
//     fma_gflops            the FMA peak (core/peak.hpp, a short run)
//     copy_gbs              parallel copy of 16 MiB (cache-resident), read + written bytes / s
//     dram_gbs              the same of 96 MiB (memory)
//     copy1_gbs, dram1_gbs  the same on one thread (8 and 48 MiB)
//     ukernel_gflops        the sgemm micro-kernel (kernels/cpu/gemm) on an L1 B panel
//                           and L2 A panels: the Winograd batched GEMM's inner loop
//     im2col_gbs, col2im_gbs   kernels/cpu/im2col on the 3x3 probe problem, column bytes / s
//     wino<m>_{in,out,dst}_gtps   the Winograd F(m x m, 3x3) tile transforms
//                           (input, output, diff_dst), G (tile x channel) / s, m = 2, 4, 6
//     fft_{fwd,inv}_{16,32}_us    one 16-lane 16x16 / 32x32 r2c / c2r transform
//                           of the hand FFT, microseconds, all threads busy (per thread)
//     fftw_{fwd,inv}_32_us  the same through FFTW (cpu.fft_fftw's engine)
//     cgemm_gflops          the FFT's per-frequency complex GEMM (8 flops per complex MAC)
//
//   algorithm rates (whole algorithms, layout changes and reorders included; the 3x3
//   class's run on one thread, its rate counted `threads` times and related by the model
//   to one thread's kernel rates, the other classes' on every thread: probe_all_threads)
//     <algorithm>|<dir>|3x3   effective GFLOP/s (direct-convolution flops / time) of every
//     <algorithm>|<dir>|1x1   registered CPU algorithm but the oracle and the one that lets
//     <algorithm>|<dir>|dw    a vendor library pick (Algorithm::is_oracle,
//     <algorithm>|<dir>|dw_small  picks_own_implementation) on the probe problems below, every
//                           direction it supports; on the 1x1 one only those whose plan
//                           changes for 1x1 filters (Algorithm::probe_1x1; not the FFT's and
//                           Winograd's: their 1x1 predictions are scaled by the 3x3 rate); on
//                           the depthwise ones the same ones (one input channel per group runs
//                           other code, or the general code at other speeds, than the 3x3
//                           problem's: a model scaled there misprices it)
//
// The probe problems are synthetic, not any network's layer (probe_problems.cpp says why each):
//   3x3:      mb2ic96ih20oc128oh20kh3ph1       (backward-filter: 8 images)
//   1x1:      mb8ic128ih28oc128oh28kh1         (backward-filter: mb16ic512ih14oc128oh14kh1)
//   dw:       g96mb4ic96ih56oc96oh56kh3ph1     (depthwise: groups = input channels)
//   dw_small: g384mb8ic384ih14oc384oh14kh3ph1  (depthwise images of at most 28 x 28 pixels)
// The model builds each algorithm's time from the kernel rates and the phases
// the algorithm states (its plan: GEMM shapes, tiles, transforms, copies), then scales it so that it equals
// the algorithm's measured time on the probe problem of the same filter class
// (autotune/get.hpp). No table is keyed by CPU model or by layer.
#pragma once
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/device.hpp"
#include "core/problem.hpp"

namespace convlab {

// Bumped when the probe's problems or rate definitions change: probes of
// another version are not used (re-measured).
constexpr int kProbeVersion = 5;

struct MachineProbe {
  std::string device;   // device_fingerprint() of the context it was measured for
  double seconds = 0;   // how long the measurement took
  double probed_at = 0; // unix seconds
  int version = kProbeVersion;
  std::map<std::string, double> rates;  // the names above -> values (units in the names)
  double rate(std::string_view name) const;  // 0 when absent
  bool has(std::string_view name) const { return rate(name) > 0; }
};

// The rates every probe must hold (the kernel rates; algorithm rates are
// present for the algorithms that ran). A probe line missing one is unreadable.
const std::vector<std::string>& probe_required_rates();
// The probe problems.
const ConvProblem& probe_problem_3x3();
const ConvProblem& probe_problem_1x1();
const ConvProblem& probe_problem_dw();
const ConvProblem& probe_problem_dw_small();
const ConvProblem& probe_problem_3x3_wgrad();  // the 3x3 class's backward-filter problem: more images
const ConvProblem& probe_problem_1x1_wgrad();  // the 1x1 class's: more images, smaller, more channels
// Depthwise images of at most this many pixels (28 x 28) have their own probe problem.
constexpr int64_t kProbeSmallImage = 28 * 28;
// "3x3", "1x1", "dw" or "dw_small": which probe problem stands for p (one input channel per group:
// dw, dw_small on images up to kProbeSmallImage pixels; else 1x1 filters: 1x1; all else 3x3).
std::string_view probe_class(const ConvProblem& p);
// The probe problem of a class in a direction (the 3x3 and 1x1 classes have backward-filter ones of
// their own).
const ConvProblem& probe_problem(std::string_view cls, Direction dir);
// Whether the probe times a class's algorithms on every thread of the context, not on one: the
// depthwise ones (oneDNN's depthwise backward-filter runs slower on two threads than on one, so one
// thread's rate times the threads ranks it 2-3x too well) and the 1x1 one (OpenBLAS's per-image
// GEMMs run as fast as convlab's batch-wide one on one thread and 1.3-1.5x slower on two).
bool probe_all_threads(std::string_view cls);
// The algorithm-rate key: "cpu.direct|fwd|3x3".
std::string probe_algo_key(std::string_view algo, Direction dir, std::string_view cls);

// Measures the probe for a CPU context (throws Error for another device).
MachineProbe measure_probe(const ExecContext& ctx);

// The process's probes, by device fingerprint: what MachineModel::for_context
// (autotune/get.hpp) uses. register_probe replaces the fingerprint's probe;
// current_probe returns nullptr when none is registered for it.
void register_probe(const MachineProbe& p);
std::shared_ptr<const MachineProbe> current_probe(const std::string& device);
void clear_probes();  // tests

class TuneCache;
// What ensure_probe did.
struct ProbeOutcome {
  enum class Source { measured, cache, process, none };
  Source source = Source::none;
  std::string device;  // the fingerprint it is for
  double seconds = 0;  // the probe's own measuring time
  std::string stored;  // "" when stored (or nothing to store); else why it was not
  std::string text() const;  // "machine probe: measured in 0.93 s, stored in F" / "loaded from the cache ..." / ...
  std::string source_name() const;  // "measured", "cache", "process", "none"
};
// The probe for ctx (CPU only; other devices: Source::none): this process's
// registered one, else the cache's entry for this device and probe identity, else
// measured, registered, and stored in `cache` (saved; a cache that cannot be
// written is said in `stored`, not thrown). reprobe: measure even when one
// exists. `cache` may be null (measured and registered only).
ProbeOutcome ensure_probe(const ExecContext& ctx, TuneCache* cache, bool reprobe = false);
// The same with the cache file's path ("" = the default cache, TuneCache::default_path()):
// loaded for the probe and, when one is measured, written. A file that cannot be
// read is not used (said in `stored`).
ProbeOutcome ensure_probe(const ExecContext& ctx, const std::string& cache_path, bool reprobe = false);

}  // namespace convlab
