// The cuda.* algorithms the emulator runs (every one but the cuBLAS / cuFFT
// paths) and one counted run of an algorithm: its own composition
// (supports, workspace_bytes, run), as tests/algorithms/cuda drives it, under
// the counting runtime (kernels/cuda/simt/counters.hpp).
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <random>
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
  v.push_back(std::make_unique<CudaImplicitGemm>(true));
  return v;
}

// The algorithm named `name`, or nullptr.
inline std::unique_ptr<Algorithm> emulated_algorithm(std::string_view name) {
  for (auto& a : emulated_algorithms())
    if (a->name() == name) return std::move(a);
  return nullptr;
}

// Seeded values in +-[0.5, 1.5): no zeros, so an FMA with a zero multiplicand
// is one the algorithm made up (padding, masked rows, stride holes).
inline std::vector<float> nonzero_values(size_t n, uint32_t seed) {
  std::vector<float> v(n);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> mag(0.5f, 1.5f);
  for (float& x : v) x = (rng() & 1) ? mag(rng) : -mag(rng);
  return v;
}

// One run of a on p in direction d, counted; throws Error when a does not
// support it. Every tensor holds nonzero_values(). The workspace holds 32-bit
// ones: with sampling, what skipped blocks would have written stays that, and
// a one is a harmless index (a kernel may read a table an earlier kernel
// built) and a non-zero float (the smallest denormal), so made-up zeros are
// still the algorithm's own.
inline std::vector<simt::counters::LaunchCounts> count_algorithm(const Algorithm& a, const ConvProblem& p, Direction d,
                                                                 const simt::counters::Options& o) {
  const Support s = a.supports(p, d);
  if (!s.ok)
    fail(std::string(a.name()) + " does not support this problem (" + std::string(to_string(d)) + "): " + s.reason);
  const size_t ws_floats = std::max<size_t>((a.workspace_bytes(p, d) + 3) / 4, 1);
  require_memory(DeviceKind::cpu, 4 * (size_t(p.src_elems() + p.wei_elems() + p.dst_elems()) + ws_floats),
                 std::string(a.name()) + " (" + std::string(to_string(d)) + ")");
  simt::DeviceArray<float> src(size_t(p.src_elems())), wei(size_t(p.wei_elems())), dst(size_t(p.dst_elems()));
  simt::DeviceArray<float> ws(ws_floats);
  uint32_t seed = 1;
  for (auto* arr : {&src, &wei, &dst}) arr->upload(nonzero_values(arr->size(), seed++));
  const std::vector<uint32_t> ones(ws_floats, 1u);
  simt::copy_h2d(ws.get(), ones.data(), ws_floats * sizeof(uint32_t));
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
