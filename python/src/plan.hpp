// What the Python package runs: one algorithm on one problem and direction,
// planned once (the algorithm found, its support checked, its workspace
// allocated) and run many times on the caller's own buffers.
#pragma once
#include <cstdint>
#include <mutex>
#include <string>

#include "algorithms/algorithm.hpp"
#include "core/device.hpp"
#include "core/problem.hpp"

namespace convlab::py {

// A buffer handed in from Python, already read off its array: where its
// floats are, on which device, and its shape as given.
struct ArrayView {
  float* data = nullptr;
  DeviceKind device = DeviceKind::cpu;
  int device_id = 0;
  int64_t shape[4] = {0, 0, 0, 0};
};

class Plan {
 public:
  // Throws Error (one line) when the problem is invalid, the algorithm unknown,
  // unavailable here, on another device than `device`, or not supporting the
  // problem in `dir`; OutOfMemory when its workspace cannot be had.
  Plan(std::string_view algo, const ConvProblem& p, Direction dir, DeviceKind device, int threads);

  // src (N,C,H,W), wei (K,C/g,R,S), dst (N,K,P,Q), in the Algorithm buffer
  // convention (algorithms/algorithm.hpp): `dir`'s output is overwritten.
  // Throws Error when a buffer has another shape or lives on another device.
  // `stream` is a cudaStream_t (0: the default stream), ignored on the CPU.
  void run(const ArrayView& src, const ArrayView& wei, const ArrayView& dst, uintptr_t stream) const;

  // run() without the checks, for buffers the caller checked (float32,
  // C-contiguous, the problem's shapes, on the plan's device).
  void run_trusted(float* src, float* wei, float* dst, uintptr_t stream) const;

  const Algorithm& algorithm() const { return *algo_; }
  const ConvProblem& problem() const { return p_; }
  Direction direction() const { return dir_; }
  DeviceKind device() const { return device_; }
  size_t workspace_bytes() const { return ws_.bytes(); }
  int threads() const { return threads_; }

 private:
  const Algorithm* algo_ = nullptr;
  ConvProblem p_;
  Direction dir_;
  DeviceKind device_;
  int threads_ = 0;
  DeviceBuffer ws_;
  // One run at a time: the workspace is the plan's (Python threads run
  // kernels with the GIL released).
  mutable std::mutex mutex_;
};

// "src has shape (2, 3, 5, 5) but the problem's src is (2, 3, 6, 6)" when the
// shapes differ, else "".
std::string shape_mismatch(const char* role, const int64_t (&got)[4], const int64_t (&want)[4]);

}  // namespace convlab::py
