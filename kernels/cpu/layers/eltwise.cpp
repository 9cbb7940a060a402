// Drivers of the elementwise layers of kernels/cpu/layers/layers.hpp: ReLU,
// the convolution's bias (+ ReLU) epilogue and its backward, dropout and the
// SGD update. Work split: one contiguous range per thread, cut at 16 elements
// (ReLU, dropout, SGD: one OpenMP region over the flat tensor; SGD over all
// tensors end to end), or whole (sample, channel) rows (bias forward) or whole
// channels (bias backward: each channel's sum stays on one thread, in one
// order). The loops themselves are the ISA table's (layer_kernels.hpp).
#include <omp.h>

#include <cassert>
#include <cmath>
#include <vector>

#include "core/device.hpp"
#include "kernels/cpu/layers/layer_kernels.hpp"

namespace convlab::cpu {

int pass_threads(int threads, int64_t bytes) {
  const int all = threads > 0 ? threads : cpu_info().hardware_threads;
  const int64_t by_size = std::max<int64_t>(1, bytes >> 16);
  return int(std::min<int64_t>(all, by_size));
}

namespace {

// f(begin, end) on each thread's share of n elements.
template <class F>
void split_flat(int64_t n, int64_t bytes_per_elem, int threads, F f) {
  const int nt = pass_threads(threads, n * bytes_per_elem);
  if (nt == 1) return f(int64_t(0), n);
#pragma omp parallel num_threads(nt)
  {
    int64_t b, e;
    share(n, omp_get_thread_num(), omp_get_num_threads(), 16, b, e);
    if (b < e) f(b, e);
  }
}

DropoutArgs dropout_args(float p, uint64_t key) {
  assert(p >= 0.f && p < 1.f);
  DropoutArgs a;
  a.key = key;
  // uniform01(u) = (mix(u) >> 11) * 2^-53 < p  <=>  (mix(u) >> 11) < ceil(p * 2^53) (exact in double)
  a.threshold = int64_t(std::ceil(double(p) * 0x1p53));
  a.keep = 1.f / (1.f - p);  // as rng::dropout_mask's callers, in float
  return a;
}

}  // namespace

void relu_fwd(int64_t count, const float* x, float* y, int threads) {
  assert(count >= 0);
  const LayerKernels& k = select_layer_kernels();
  split_flat(count, 8, threads, [&](int64_t b, int64_t e) { k.relu_fwd(e - b, x + b, y + b); });
}

void relu_bwd(int64_t count, const float* x, const float* dy, float* dx, int threads) {
  assert(count >= 0);
  const LayerKernels& k = select_layer_kernels();
  split_flat(count, 12, threads, [&](int64_t b, int64_t e) { k.relu_bwd(e - b, x + b, dy + b, dx + b); });
}

void bias_relu_fwd(int n, int k, int64_t pq, const float* bias, bool relu, float* y, int threads) {
  assert(n >= 0 && k >= 0 && pq >= 0);
  if (!bias && !relu) return;
  const LayerKernels& kk = select_layer_kernels();
  const int64_t rows = int64_t(n) * k;
  const int nt = pass_threads(threads, rows * pq * 8);
#pragma omp parallel for schedule(static) num_threads(nt)
  for (int64_t r = 0; r < rows; ++r) kk.bias_relu_row(pq, bias ? bias[r % k] : 0.f, bias != nullptr, relu, y + r * pq);
}

void bias_relu_bwd(int n, int k, int64_t pq, const float* y, float* dy, float* db, int threads) {
  assert(n >= 0 && k >= 0 && pq >= 0);
  if (!y && !db) return;
  const LayerKernels& kk = select_layer_kernels();
  const int nt = pass_threads(threads, int64_t(n) * k * pq * (y ? 12 : 4));
#pragma omp parallel for schedule(static) num_threads(nt)
  for (int c = 0; c < k; ++c) {
    double acc[16] = {};
    for (int i = 0; i < n; ++i) {
      const int64_t off = (int64_t(i) * k + c) * pq;  // (n, k, pq)
      kk.bias_relu_bwd_row(pq, y ? y + off : nullptr, dy + off, db ? acc : nullptr);
    }
    if (db) {
      for (int h = 8; h > 0; h /= 2)
        for (int l = 0; l < h; ++l) acc[l] += acc[l + h];
      db[c] = float(acc[0]);
    }
  }
}

void dropout_fwd(int64_t count, float p, uint64_t key, const float* x, float* y, int threads) {
  assert(count >= 0);
  const LayerKernels& k = select_layer_kernels();
  const DropoutArgs a = dropout_args(p, key);
  split_flat(count, 8, threads, [&](int64_t b, int64_t e) { k.dropout(a, b, e - b, x + b, y + b); });
}

void dropout_bwd(int64_t count, float p, uint64_t key, const float* dy, float* dx, int threads) {
  // dx = dy * mask: the forward's loop on dy (the same mask, the same product).
  dropout_fwd(count, p, key, dy, dx, threads);
}

void sgd_update(const SgdTensor* tensors, int count, float lr, float momentum, int threads) {
  assert(count >= 0);
  const LayerKernels& k = select_layer_kernels();
  std::vector<int64_t> start(size_t(count) + 1, 0);  // tensor i's first element in the whole
  for (int i = 0; i < count; ++i) start[size_t(i) + 1] = start[size_t(i)] + tensors[i].count;
  split_flat(start.back(), 20, threads, [&](int64_t b, int64_t e) {
    for (int i = 0; i < count; ++i) {
      const int64_t lo = std::max(b, start[size_t(i)]), hi = std::min(e, start[size_t(i) + 1]);
      if (lo >= hi) continue;
      const SgdTensor& t = tensors[i];
      const int64_t o = lo - start[size_t(i)];
      k.sgd(hi - lo, lr, momentum, t.weight_decay, t.w + o, t.g + o, t.v + o);
    }
  });
}

}  // namespace convlab::cpu
