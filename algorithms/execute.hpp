// Running an algorithm on host data and checking it against the fp64 oracle.
// Shared by the CLI, the tester, the autotuner and the reports so that "run",
// "poison", "time" and "max error" mean the same thing everywhere.
#pragma once
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "algorithms/algorithm.hpp"
#include "core/stage_profile.hpp"
#include "core/tensor.hpp"
#include "core/timing.hpp"

namespace convlab {

// Host tensors of one problem: src (N,C,H,W), wei (K,C/g,R,S), dst (N,K,P,Q).
// For the backward directions dst holds diff_dst, src/wei receive diff_src/diff_wei.
struct ConvData {
  Tensor src, wei, dst;
  explicit ConvData(const ConvProblem& p);
  // All three tensors uniform in [-1, 1) from `seed` (each tensor its own stream).
  static ConvData random(const ConvProblem& p, uint64_t seed);
  Tensor& output(Direction d);
  const Tensor& output(Direction d) const;
};

// The oracle's answer for the output of `dir`, and the magnitude sum |terms|.
struct Reference {
  AlignedBuffer<double> value, mag;
  double max_mag = 0, max_abs = 0;
};
Reference compute_reference(const ConvProblem& p, Direction dir, const ConvData& inputs, int threads = 0);

struct ErrorStats {
  double max_abs = 0;      // max |y - ref|
  double max_rel = 0;      // max |y - ref| / |ref| over elements with |ref| >= 1e-3 * max |ref|
  double worst_ratio = 0;  // max |y - ref| / allowed(i); <= 1 passes
  int64_t worst_index = -1;
  int64_t bad = 0;         // elements over their bound
  int64_t non_finite = 0;  // NaN / Inf (an unwritten, NaN-prefilled element shows up here)
  bool passed() const { return bad == 0 && non_finite == 0; }
};
ErrorStats compare(const float* out, const Reference& ref, const Tolerance& tol);

// What running and checking an algorithm holds, counted before it is allocated
// (core/device.hpp require_memory):
//   data_bytes       one ConvData (src, wei, dst as fp32; host)
//   reference_bytes  compute_reference's fp64 value and magnitude of `dir`'s output (host)
//   runner_bytes     one ConvRunner on the algorithm's device: the three tensors and the
//                    workspace, each with its guard zone (the algorithm must support p, dir)
size_t data_bytes(const ConvProblem& p);
size_t reference_bytes(const ConvProblem& p, Direction dir);
size_t runner_bytes(const Algorithm& a, const ConvProblem& p, Direction dir);

// Bytes on the host and on a device (equal to the host on the CPU: one sum).
struct MemoryNeed {
  size_t host = 0, device = 0;
  // `bytes` more on `d`'s memory (the host for the CPU).
  void add(DeviceKind d, size_t bytes) { (d == DeviceKind::cpu ? host : device) += bytes; }
  // The larger of this and `o`, each memory on its own (the peak of two phases).
  void keep_max(const MemoryNeed& o) { host = std::max(host, o.host); device = std::max(device, o.device); }
  // require_memory for both: "<what> needs ... of memory but ...".
  void require(DeviceKind device_kind, const std::string& what) const;
};

// Device buffers for one (algorithm, problem, direction): inputs, output and
// workspace, each followed by a guard zone that must survive the run.
class ConvRunner {
 public:
  // Throws Error when the algorithm is unavailable here or does not support the problem.
  ConvRunner(const Algorithm& algo, const ConvProblem& p, Direction dir, const ExecContext& ctx);
  void upload(const ConvData& data);
  // NaN into every output element, a poison byte pattern into the workspace.
  void poison();
  void run();  // one call, synchronised
  // The same, the algorithm recording its stages into `profile` (core/stage_profile.hpp).
  void run_profiled(StageProfile* profile);
  // CPU: the host clock around run() (core/timing.hpp). CUDA: events around
  // the enqueued run on ctx.stream, L2 evicted before every timed rep
  // (time_cuda, core/cuda_stream.hpp).
  TimingStats time(const TimingOptions& opt);
  void download_output(ConvData& data) const;
  // Empty if no guard zone was touched, else which buffer was overrun.
  std::string check_guards() const;
  // Empty if the direction's input tensors on the device still equal `uploaded`.
  std::string check_inputs(const ConvData& uploaded) const;
  size_t workspace_bytes() const { return ws_bytes_; }

 private:
  const Algorithm& algo_;
  ConvProblem p_;
  Direction dir_;
  ExecContext ctx_;
  size_t ws_bytes_ = 0;
  DeviceBuffer src_, wei_, dst_, ws_;
  float* out_ptr() const;
  size_t out_bytes() const;
};

// Where the time of one run goes (core/stage_profile.hpp): one untimed run,
// then `runs` runs of the algorithm with a stage profile, on random data. Each
// stage's seconds are the median over the runs (flops and bytes are per run);
// the stages keep the order the algorithm recorded them in. An algorithm that
// records no stages (oneDNN, cpu.direct) gives one compute stage "whole run"
// with the direct convolution's flops and the three tensors' bytes. CPU only
// (a CUDA algorithm's launches are asynchronous to the host clock): throws
// Error for another device, or when the algorithm cannot run the problem.
std::vector<StageRecord> profile_stages(const Algorithm& a, const ConvProblem& p, Direction dir, ExecContext ctx,
                                        int runs = 5);

}  // namespace convlab
