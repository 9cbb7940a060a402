// The one interface every convolution algorithm implements, on every device
// (CUTLASS's can_implement / get_workspace_size / run, oneDNN's "every rejection
// states its reason").
//
// Buffers (device pointers of the algorithm's device), by direction:
//   fwd        reads src, wei            writes dst
//   bwd-data   reads dst (diff_dst), wei writes src (diff_src)
//   bwd-filter reads src, dst (diff_dst) writes wei (diff_wei)
// The output is overwritten (beta = 0), every element of it. The workspace is
// at least workspace_bytes() long, uninitialised, and may be clobbered.
#pragma once
#include <cfloat>
#include <cstddef>
#include <string>
#include <string_view>
#include <utility>

#include "algorithms/cost.hpp"
#include "core/device.hpp"
#include "core/problem.hpp"
#include "kernels/conv_shape.hpp"

namespace convlab {

struct Support {
  bool ok = true;
  std::string reason;  // why not, in words a person can act on
  static Support yes() { return {}; }
  static Support no(std::string why) { return {false, std::move(why)}; }
  explicit operator bool() const { return ok; }
};

struct ConvBuffers {
  float* src = nullptr;
  float* wei = nullptr;
  float* dst = nullptr;
};

// The error an algorithm promises against the fp64 reference, per output
// element i:  |y_i - ref_i| <= elem * mag_i + global * max_j mag_j
// where mag_i = sum |a*b| over the terms of output i (see kernels/ref).
// GEMM-like summation: elem = K * FLT_EPSILON with K the reduction length, a
// bound that holds for any summation order. Transform algorithms (Winograd,
// FFT) mix terms across elements; they declare a measured, documented bound.
struct Tolerance {
  double elem = 0;
  double global = 0;
  std::string basis;  // where the numbers come from, printed with failures
};

Tolerance summation_tolerance(const ConvProblem& p, Direction dir);

class Algorithm {
 public:
  virtual ~Algorithm() = default;

  // Stable dotted name: registry, cache, tests, benchmarks and notebooks.
  virtual std::string_view name() const = 0;
  virtual DeviceKind device() const = 0;
  // "reference", "gemm", "direct", "fft", "winograd" or "implicit_gemm".
  virtual std::string_view family() const = 0;
  virtual std::string_view description() const = 0;

  // Why this algorithm cannot run on this machine or build at all; empty when
  // it can. Default: CPU algorithms always run, CUDA ones need a device.
  virtual std::string unavailable_reason() const;

  // supports(), workspace_bytes() and run() may assume p.validate() is empty:
  // then p.p(), p.q() and every tensor / column size fit in int (callers --
  // ConvRunner, find, get, the CLI -- validate first).
  virtual Support supports(const ConvProblem& p, Direction dir) const = 0;
  virtual size_t workspace_bytes(const ConvProblem& p, Direction dir) const {
    (void)p;
    (void)dir;
    return 0;
  }
  // Precondition: supports(p, dir) and workspace >= workspace_bytes(p, dir).
  // Throws Error on a runtime failure (out of memory, library error).
  virtual void run(const ConvProblem& p, Direction dir, const ConvBuffers& buf, void* workspace,
                   const ExecContext& ctx) const = 0;

  virtual Tolerance tolerance(const ConvProblem& p, Direction dir) const { return summation_tolerance(p, dir); }
  // Same inputs, same thread count -> bit-identical output.
  virtual bool deterministic() const { return true; }
  // The arithmetic the algorithm computes in: "fp32" (fp32 inputs, products and
  // sums; the default) or a reduced-precision mode such as "tf32" (inputs
  // rounded to a 10-bit mantissa on tensor cores). Anything but "fp32" is
  // never chosen unless asked for: find/get candidates and the `default`
  // policy leave it out without the `tf32` constraint (autotune/policy.hpp);
  // fixed:<name> runs it.
  virtual std::string_view math() const { return "fp32"; }
  // The source file the class's constructor is in ("" when unknown):
  // NamedAlgorithm records it. The autotune cache keys each measurement on
  // that file's code unit (autotune/code_version.hpp).
  virtual std::string_view source_file() const { return {}; }

  // ---- what the tuner may know of it (autotune/get.hpp, algorithms/cost.hpp) ----
  // Its cost, stated next to its plan: the phases of its plan on p for the
  // probed model, the FLOPs and efficiencies for the nominal one. Precondition:
  // supports(p, dir). Default: no statement ("unpriced" says so), and get lists
  // the algorithm with that reason and never picks it.
  virtual CostPhases cost_phases(const ConvProblem& p, Direction dir) const;
  virtual NominalCost nominal_cost(const ConvProblem& p, Direction dir) const;
  // The algorithm whose statement and probed rate stand for this one on p: an
  // algorithm that hands the problem to another's plan (a vendor library's own
  // pick among its implementations) names it. Default: itself.
  virtual const Algorithm& priced_as(const ConvProblem& p, Direction dir) const {
    (void)p;
    (void)dir;
    return *this;
  }
  // The machine probe times it on its 1x1 problem too (its plan differs for
  // 1x1 filters; Winograd's and the FFT's do not). Default: yes.
  virtual bool probe_1x1() const { return true; }
  // The oracle (fp64 reference): what the others are checked against, never a
  // candidate of find, get or a policy.
  virtual bool is_oracle() const { return false; }
  // It picks among a vendor library's implementations itself (oneDNN's
  // "any"): its own rate is that of what it picks, so the probe leaves it out.
  virtual bool picks_own_implementation() const { return false; }
  // What it runs on p, in words, for threads threads (0: all hardware
  // threads): a vendor library's implementation ("jit:avx2",
  // "jit_wino_4x3:avx512_core") or its plan's shape (the FFT's tiling); "" when
  // there is nothing to say. May throw Error.
  virtual std::string implementation(const ConvProblem& p, Direction dir, int threads = 0) const {
    (void)p;
    (void)dir;
    (void)threads;
    return {};
  }
  // A baseline a comparison is usually read against (the classic im2col +
  // BLAS path, the vendor library's default convolution): a training
  // comparison runs it as a fixed: policy unless told otherwise. Default: no.
  virtual bool comparison_baseline() const { return false; }
  // A vendor library's own convolution (oneDNN's, cuDNN's): the peer the
  // hand-written algorithms are compared with (bench_conv --family keeps it).
  virtual bool vendor_peer() const { return false; }
  // Its arithmetic runs in an outside library that is not the vendor's own convolution
  // (OpenBLAS's GEMM, FFTW's transforms): comparisons of convlab's hand-written kernels
  // against the vendor peer leave it out. Default: no.
  virtual bool library_backed() const { return false; }
  // Seconds its library's worker threads keep spinning after a call (OpenBLAS's
  // busy-wait before they sleep): a benchmark waits that long, untimed, before
  // the next case so they do not steal its cores.
  virtual double spin_after_run_s() const { return 0; }
  // The family an implementation() answer amounts to ("winograd" for oneDNN's
  // jit_wino_4x3). Default: the algorithm's own family.
  virtual std::string implementation_family(std::string_view impl) const {
    (void)impl;
    return std::string(family());
  }
};

// An Algorithm whose name, device, family and description are data given at
// construction, so a class states only what it computes: supports(),
// workspace_bytes(), run(), tolerance() (CUTLASS's can_implement /
// get_workspace_size / run, the rest is its descriptor). `source_file` is
// left to its default: the file of the derived class's constructor (the call
// site), which names the algorithm's code unit.
class NamedAlgorithm : public Algorithm {
 public:
  NamedAlgorithm(std::string name, DeviceKind device, std::string family, std::string description,
                 const char* source_file = __builtin_FILE())
      : name_(std::move(name)),
        family_(std::move(family)),
        description_(std::move(description)),
        source_file_(source_file),
        device_(device) {}
  std::string_view name() const final { return name_; }
  DeviceKind device() const final { return device_; }
  std::string_view family() const final { return family_; }
  std::string_view description() const final { return description_; }
  std::string_view source_file() const final { return source_file_; }

 private:
  std::string name_, family_, description_, source_file_;
  DeviceKind device_;
};

// The kernel-facing shape of a (valid) problem.
ConvShape to_shape(const ConvProblem& p);

}  // namespace convlab
