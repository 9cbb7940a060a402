// `convlab layers --device cuda --model CARD`: the per-layer table of the CUDA
// algorithms with *modelled* times for a GPU that is not here (gpu_model.hpp).
// Each hand-written algorithm the SIMT emulator runs is counted by the helper
// program simt_counts (one process per layer, direction and algorithm, a sample
// of each launch's blocks at the full problem size) and priced on the card.
// Rows: status "modelled" with time = the modelled seconds and note = the floor
// that bounds it; "not modelled" for what the emulator does not run (cuDNN's
// kernels, the cuBLAS / cuFFT paths) with the reason; "unsupported" as in a
// measured run; "failed" with the helper's message. Nothing is measured.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "autotune/compare.hpp"
#include "autotune/gpu_model.hpp"

namespace convlab {

struct ModelRunOptions {
  const GpuCard* card = nullptr;
  std::vector<Direction> dirs = {Direction::fwd, Direction::bwd_data, Direction::bwd_filter};
  bool tf32 = false;             // also the reduced-precision algorithms (cuda.implicit_gemm_tf32)
  std::string counter;           // the simt_counts executable
  int sample_blocks = 16;        // blocks counted per launch (the counts are scaled to the grid)
  double timeout_s = 900;        // per helper run
  std::function<void(const LayerCase&, Direction, const std::vector<ComparisonRow>&)> on_case;
  // Which algorithms of a case get a row (none given: every CUDA one).
  std::function<bool(const LayerCase&, Direction, const Algorithm&)> keep;
};

// The emulated algorithms' names as the helper lists them; throws Error with one
// line when the helper cannot be run or lists nothing.
std::vector<std::string> emulated_algorithms(const std::string& counter);

Comparison model_comparison(const std::vector<LayerCase>& cases, const ModelRunOptions& opt);

}  // namespace convlab
