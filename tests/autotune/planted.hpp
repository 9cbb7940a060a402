// Test-only algorithms for the autotuner's tests: the fp64 reference wrapped
// with knobs (delay, planted error, nondeterminism, throw, overrun, workspace,
// family). They are NOT registered; tests pass them to find()/get() explicitly.
#pragma once
#include <atomic>
#include <chrono>
#include <string>
#include <thread>

#include "algorithms/algorithm.hpp"
#include "algorithms/registry.hpp"
#include "core/error.hpp"

namespace convlab::testing {

class Planted final : public Algorithm {
 public:
  explicit Planted(std::string name, std::string family = "direct") : name_(std::move(name)), family_(std::move(family)) {}
  std::string name_, family_;
  double delay_ms = 0;          // sleep after computing (orders candidates by time)
  // Calls number outlier_first..outlier_last to run() (1-based) sleep outlier_ms more: one disturbed rep.
  // find makes two calls for its accuracy check and one warm-up, so call 4 is the first timed rep.
  int outlier_first = 0, outlier_last = 0;
  double outlier_ms = 0;
  float perturb = 0;            // added to every output element (a wrong algorithm)
  bool drift = false;           // every run adds a different tiny amount (nondeterministic)
  bool claims_deterministic = true;
  bool throws = false;
  bool device_fault = false;    // throws DeviceFault, as a CUDA call in a sticky-error context does
  bool overrun = false;         // writes one byte past its workspace
  size_t extra_workspace = 0;
  std::string support_reason;   // non-empty: supports() says no with this reason
  mutable std::atomic<int> runs{0};

  std::string_view name() const override { return name_; }
  DeviceKind device() const override { return DeviceKind::cpu; }
  std::string_view family() const override { return family_; }
  std::string_view description() const override { return "test-only wrapper of the reference"; }
  Support supports(const ConvProblem&, Direction) const override {
    return support_reason.empty() ? Support::yes() : Support::no(support_reason);
  }
  size_t workspace_bytes(const ConvProblem& p, Direction dir) const override {
    return ref().workspace_bytes(p, dir) + extra_workspace;
  }
  bool deterministic() const override { return claims_deterministic; }
  // Priced as the family it claims: the nominal model by family, the probed one as the
  // registered algorithm of that family (an F(4x4) Winograd, a whole-image FFT).
  NominalCost nominal_cost(const ConvProblem& p, Direction dir) const override {
    return nominal_of_family(p, dir, family_);
  }
  const Algorithm& priced_as(const ConvProblem&, Direction) const override {
    const char* as = family_ == "gemm" ? "cpu.im2col_gemm" : family_ == "winograd" ? "cpu.winograd_f4x3"
                     : family_ == "fft" ? "cpu.fft" : "cpu.direct";
    return get_algorithm(as);
  }
  void run(const ConvProblem& p, Direction dir, const ConvBuffers& buf, void* ws, const ExecContext& ctx) const override {
    const int n = ++runs;
    if (throws) fail("planted failure");
    if (device_fault) throw DeviceFault("planted sticky fault: an illegal memory access was encountered");
    ref().run(p, dir, buf, ws, ctx);
    float* out = dir == Direction::fwd ? buf.dst : dir == Direction::bwd_data ? buf.src : buf.wei;
    const int64_t elems = dir == Direction::fwd ? p.dst_elems() : dir == Direction::bwd_data ? p.src_elems() : p.wei_elems();
    if (perturb != 0)
      for (int64_t i = 0; i < elems; ++i) out[i] += perturb;
    if (drift) out[0] += float(n % 2 + 1) * 1e-6f * (out[0] == 0 ? 1e-3f : out[0]);  // alternates: runs differ
    if (overrun) static_cast<unsigned char*>(ws)[workspace_bytes(p, dir)] = 0;
    if (delay_ms > 0) std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(delay_ms));
    if (n >= outlier_first && n <= outlier_last && outlier_ms > 0)
      std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(outlier_ms));
  }

 private:
  static const Algorithm& ref() { return get_algorithm("cpu.reference"); }
};

}  // namespace convlab::testing
