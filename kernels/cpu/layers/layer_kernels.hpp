// The per-ISA halves of kernels/cpu/layers (internal): the inner loops the
// drivers (eltwise.cpp, lrn.cpp, pool.cpp, softmax_sgd.cpp) call on one thread's
// share. Written once in *_impl.inc as plain C++ the compiler vectorises, and
// compiled three times: layers_avx512.cpp, layers_avx2.cpp (their ISA flags,
// cmake/convlab.cmake) and layers_portable.cpp (baseline x86-64), all without
// FP contraction and with -fno-math-errno (kernels/CMakeLists.txt), so the
// three give the same bits. select_layer_kernels() picks by cpu_info().isa().
#pragma once
#include <algorithm>
#include <cstdint>
#include <string_view>

#include "kernels/cpu/layers/layers.hpp"

namespace convlab::cpu {

// LRN on one block: sample n's pixels [p0, p0 + len) of every channel; len <= kLrnBlock.
constexpr int kLrnBlock = 512;
constexpr int kLrnRing = 16;  // ring of channel rows in L1: size <= kLrnRing - 1
struct LrnBlock {
  const float* x = nullptr;  // channel 0, pixel p0; channel c at + c * hw
  const float* dy = nullptr;
  float* y = nullptr;  // forward: y; backward: dx
  int64_t hw = 0;
  int c = 0, len = 0, half = 0;
  float alpha = 0, beta = 0, k = 0;
};

// Dropout: the threshold t with uniform01(u) < p  <=>  (mix(u) >> 11) < t.
struct DropoutArgs {
  uint64_t key = 0;
  int64_t threshold = 0;
  float keep = 1;
};

struct LayerKernels {
  const char* isa;
  void (*relu_fwd)(int64_t n, const float* x, float* y);
  void (*relu_bwd)(int64_t n, const float* x, const float* dy, float* dx);
  // One (sample, channel) row of pq: y += b (when has_bias), then the ReLU (when relu).
  void (*bias_relu_row)(int64_t pq, float b, bool has_bias, bool relu, float* y);
  // One row: dy = y > 0 ? dy : 0 (when y), then acc[j % 16] += double(dy[j]) (when acc).
  void (*bias_relu_bwd_row)(int64_t pq, const float* y, float* dy, double* acc);
  void (*lrn_fwd_block)(const LrnBlock& b);
  void (*lrn_bwd_block)(const LrnBlock& b);
  // One plane of maxpool_fwd.
  void (*pool_fwd_plane)(const PoolShape& ps, const float* x, float* y, uint8_t* argmax);
  // Elements [begin, begin + n) of the mask keyed by a.key: y = x * mask.
  void (*dropout)(const DropoutArgs& a, int64_t begin, int64_t n, const float* x, float* y);
  void (*sgd)(int64_t n, float lr, float momentum, float weight_decay, float* w, const float* g, float* v);
  // One sample: returns logsumexp(z) - z[label]; d (may be null) = (softmax - onehot) * inv_n.
  // e: `classes` doubles of scratch.
  double (*softmax_row)(int classes, const float* z, int label, double inv_n, float* d, double* e);
};

const LayerKernels& layer_kernels_avx512();
const LayerKernels& layer_kernels_avx2();
const LayerKernels& layer_kernels_portable();
// "avx512", "avx2" or "portable"; nullptr for any other name.
const LayerKernels* layer_kernels(std::string_view isa);
// The widest this CPU runs (cpu_info().isa(), capped by CONVLAB_ISA), or the override.
const LayerKernels& select_layer_kernels();
// Tests: run `k` (nullptr: back to the CPU's choice).
void override_layer_kernels(const LayerKernels* k);

// The drivers' threading: how many threads a pass over `bytes` gets (at most
// `threads`, 0 = all; one per 64 KiB at least, so a small tensor does not pay
// for waking a team), and thread t's share [begin, end) of n items cut at
// multiples of `align` (contiguous, in order: the split changes no result).
int pass_threads(int threads, int64_t bytes);
inline void share(int64_t n, int t, int nt, int64_t align, int64_t& begin, int64_t& end) {
  const int64_t blocks = (n + align - 1) / align;
  begin = std::min(n, blocks * t / nt * align);
  end = std::min(n, blocks * (t + 1) / nt * align);
}

}  // namespace convlab::cpu
