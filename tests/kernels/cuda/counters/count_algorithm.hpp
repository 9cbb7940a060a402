// The cuda.* algorithms the emulator runs (every one but the cuBLAS / cuFFT
// paths) and one counted run of an algorithm: its own composition
// (supports, workspace_bytes, run), as tests/algorithms/cuda drives it, under
// the counting runtime (kernels/cuda/simt/counters.hpp).
#pragma once

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "algorithms/algorithm.hpp"
#include "algorithms/cuda/direct.hpp"
#include "algorithms/cuda/fft.hpp"
#include "algorithms/cuda/im2col_gemm.hpp"
#include "algorithms/cuda/implicit_gemm.hpp"
#include "algorithms/cuda/winograd.hpp"
#include "core/device.hpp"
#include "core/error.hpp"
#include "kernels/cuda/simt/counters.hpp"
#include "kernels/cuda/simt/memory.hpp"

namespace convlab::cuda::counting {

inline std::vector<std::unique_ptr<Algorithm>> emulated_algorithms() {
  std::vector<std::unique_ptr<Algorithm>> v;
  v.push_back(std::make_unique<CudaImplicitGemm>());
  v.push_back(std::make_unique<CudaDirect>());
  v.push_back(std::make_unique<CudaIm2colGemm>());
  v.push_back(std::make_unique<CudaWinogradF2x3>());
  v.push_back(std::make_unique<CudaWinograd>(4));
  v.push_back(std::make_unique<CudaWinograd>(6));
  v.push_back(std::make_unique<CudaFftTiled>());
  return v;
}

// The algorithm named `name`, or nullptr.
inline std::unique_ptr<Algorithm> emulated_algorithm(std::string_view name) {
  for (auto& a : emulated_algorithms())
    if (a->name() == name) return std::move(a);
  return nullptr;
}

// One run of a on p in direction d, counted; throws Error when a does not
// support it. Inputs are zero bytes (the counts do not depend on the values).
inline std::vector<simt::counters::LaunchCounts> count_algorithm(const Algorithm& a, const ConvProblem& p,
                                                                  Direction d, const simt::counters::Options& o) {
  const Support s = a.supports(p, d);
  if (!s.ok) fail(std::string(a.name()) + " does not support this problem (" + std::string(to_string(d)) +
                  "): " + s.reason);
  const size_t ws_floats = std::max<size_t>((a.workspace_bytes(p, d) + 3) / 4, 1);
  require_memory(DeviceKind::cpu, 4 * (size_t(p.src_elems() + p.wei_elems() + p.dst_elems()) + ws_floats),
                 std::string(a.name()) + " (" + std::string(to_string(d)) + ")");
  simt::DeviceArray<float> src(size_t(p.src_elems())), wei(size_t(p.wei_elems())), dst(size_t(p.dst_elems()));
  simt::DeviceArray<float> ws(ws_floats);
  for (auto* arr : {&src, &wei, &dst}) arr->fill_bytes(0);
  ExecContext ctx;
  ctx.device = DeviceKind::cuda;
  simt::counters::start(o);
  try {
    a.run(p, d, ConvBuffers{src.get(), wei.get(), dst.get()}, ws.get(), ctx);
  } catch (...) {
    simt::counters::stop();
    throw;
  }
  return simt::counters::stop();
}

// The scaled counts of every launch, summed.
inline simt::counters::Counts total(const std::vector<simt::counters::LaunchCounts>& launches) {
  simt::counters::Counts t;
  for (const auto& l : launches) t += l.scaled();
  return t;
}

}  // namespace convlab::cuda::counting
