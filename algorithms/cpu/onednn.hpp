// onednn.direct, onednn.winograd, onednn.auto: oneDNN's (2.6)
// convolution primitives as algorithms — the CPU peers, playing the role cuDNN
// plays on the GPU.
//
// Each wraps convolution_forward / convolution_backward_data /
// convolution_backward_weights with one oneDNN algorithm kind
// (convolution_direct, convolution_winograd, convolution_auto). oneDNN chooses
// its own (blocked) layouts (format_tag::any); the reorders from our NCHW /
// (K, C/g, R, S) tensors into them and back run inside run() and count in its
// time. Reorder buffers and oneDNN's scratchpad (scratchpad_mode::user) live in
// the workspace. Primitives are built once per (problem, direction, threads)
// and cached. supports() is oneDNN's own answer: creating the primitive
// descriptor either succeeds or the problem is rejected with a reason.
#pragma once
#include "algorithms/algorithm.hpp"

namespace convlab {

// The oneDNN implementation -> family mapping (oneDNN 2.x
// names, first match wins):
//   contains "wino"        -> "winograd"  (jit_wino_4x3:avx512_core, ...)
//   contains "brg"         -> "direct"    (brg:avx512_core, brgconv_1x1:...: brgemm-based
//                                          convolution over blocked layouts, no im2col
//                                          matrix -- direct-like)
//   contains "gemm"        -> "gemm"      (gemm:jit, x64:gemm:jit, gemm:blas: im2col + sgemm)
//   starts "ref"           -> "reference" (oneDNN's reference loops)
//   contains "jit"         -> "direct"    (jit:avx512_core, jit_1x1:..., jit_dw:...: JIT direct)
//   anything else          -> "unknown"
std::string onednn_family(std::string_view implementation);

enum class OnednnKind { direct, winograd, automatic };

// The ISA oneDNN dispatches to here ("avx512_core", "avx2", ...), after the
// CONVLAB_ISA cap (applied before oneDNN's first primitive).
std::string onednn_cpu_isa();

class CpuOnednn final : public NamedAlgorithm {
 public:
  explicit CpuOnednn(OnednnKind kind);
  // Winograd: oneDNN's (jit_wino_4x3:avx512_core) needs AVX-512, so it is
  // unavailable on an AVX2-only CPU or under CONVLAB_ISA=avx2|portable. All
  // three: unavailable when oneDNN could not be capped at CONVLAB_ISA.
  std::string unavailable_reason() const override;
  Support supports(const ConvProblem& p, Direction dir) const override;
  // The largest need (reorder buffers + scratchpad) over the thread counts 1
  // and all hardware threads: oneDNN sizes its scratchpad for the threads it
  // was created with.
  size_t workspace_bytes(const ConvProblem& p, Direction dir) const override;
  void run(const ConvProblem& p, Direction dir, const ConvBuffers& buf, void* workspace,
           const ExecContext& ctx) const override;
  Tolerance tolerance(const ConvProblem& p, Direction dir) const override;

  // oneDNN's name for the implementation it picked (e.g. "jit:avx512_core",
  // "jit_wino_4x3:avx512_core", "x64:gemm:jit") for that many threads (0 = all
  // hardware threads); throws Error when unsupported. For tests and reports
  // (autotune/vendor.hpp shows onednn.auto's pick).
  std::string implementation(const ConvProblem& p, Direction dir, int threads = 0) const override;
  CostPhases cost_phases(const ConvProblem& p, Direction dir) const override;
  NominalCost nominal_cost(const ConvProblem& p, Direction dir) const override;
  const Algorithm& priced_as(const ConvProblem& p, Direction dir) const override;
  bool probe_1x1() const override { return kind_ != OnednnKind::winograd; }
  bool picks_own_implementation() const override { return kind_ == OnednnKind::automatic; }
  // oneDNN's own choice is what a framework on oneDNN runs.
  bool comparison_baseline() const override { return kind_ == OnednnKind::automatic; }
  bool vendor_peer() const override { return true; }
  std::string implementation_family(std::string_view impl) const override { return onednn_family(impl); }

 private:
  bool depthwise_kernel(const ConvProblem& p, Direction dir) const;  // onednn_cost.cpp
  OnednnKind kind_;
};

}  // namespace convlab
