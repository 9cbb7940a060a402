// Drivers of max pooling and softmax cross-entropy (kernels/cpu/layers/layers.hpp).
//   maxpool_fwd / _bwd   one plane per task, planes split statically over
//                        threads. The backward zeroes its plane (in L1/L2) and
//                        adds each dy at its winner in output order: scalar,
//                        bound by the plane's write.
//   softmax_xent         samples split statically over threads, each sample's
//                        loss in its own slot, summed in sample order after.
#include <cassert>
#include <cstring>
#include <vector>

#include "kernels/cpu/layers/layer_kernels.hpp"

namespace convlab::cpu {

namespace {
void check_pool(const PoolShape& ps) {
  (void)ps;
  assert(ps.planes >= 0 && ps.h >= 0 && ps.w >= 0 && ps.p >= 0 && ps.q >= 0 && ps.size >= 1 && ps.stride >= 1);
  assert(ps.size * ps.size <= 256);  // the argmax is one byte
  assert(ps.p == 0 || int64_t(ps.p - 1) * ps.stride + ps.size <= ps.h);
  assert(ps.q == 0 || int64_t(ps.q - 1) * ps.stride + ps.size <= ps.w);
}
}  // namespace

void maxpool_fwd(const PoolShape& ps, const float* x, float* y, uint8_t* argmax, int threads) {
  check_pool(ps);
  const LayerKernels& k = select_layer_kernels();
  const int64_t hw = int64_t(ps.h) * ps.w, pq = int64_t(ps.p) * ps.q;
  const int nt = pass_threads(threads, ps.planes * (hw * 4 + pq * 5));
#pragma omp parallel for schedule(static) num_threads(nt)
  for (int64_t pl = 0; pl < ps.planes; ++pl) k.pool_fwd_plane(ps, x + pl * hw, y + pl * pq, argmax + pl * pq);
}

void maxpool_bwd(const PoolShape& ps, const float* dy, const uint8_t* argmax, float* dx, int threads) {
  check_pool(ps);
  const int64_t hw = int64_t(ps.h) * ps.w, pq = int64_t(ps.p) * ps.q;
  const int nt = pass_threads(threads, ps.planes * (hw * 4 + pq * 5));
  const int K = ps.size, S = ps.stride, W = ps.w;
  // The winner's place in the plane relative to its window's corner, per argmax
  // code (r * K + s -> r * W + s): a table lookup instead of a division per output.
  int32_t off[256];
  for (int code = 0; code < K * K; ++code) off[code] = code / K * W + code % K;
#pragma omp parallel for schedule(static) num_threads(nt)
  for (int64_t pl = 0; pl < ps.planes; ++pl) {
    float* d = dx + pl * hw;
    const float* g = dy + pl * pq;
    const uint8_t* a = argmax + pl * pq;
    std::memset(d, 0, size_t(hw) * sizeof(float));
    for (int p = 0; p < ps.p; ++p) {
      float* corner = d + int64_t(p * S) * W;  // (h, w) of the row's first window
      const int o0 = p * ps.q;
      for (int q = 0; q < ps.q; ++q) corner[q * S + off[a[o0 + q]]] += g[o0 + q];
    }
  }
}

double softmax_xent(int n, int classes, const float* logits, const int32_t* labels, float* dlogits, int threads,
                    int grad_n) {
  assert(n >= 0 && (n == 0 || classes >= 1));
  const LayerKernels& k = select_layer_kernels();
  std::vector<double> per(size_t(n), 0.0);
  const int nt = std::min(pass_threads(threads, int64_t(n) * classes * 8), std::max(n, 1));
  const double inv_n = 1.0 / double(grad_n > 0 ? grad_n : n);
#pragma omp parallel num_threads(nt)
  {
    std::vector<double> e(static_cast<size_t>(classes));
#pragma omp for schedule(static)
    for (int i = 0; i < n; ++i) {
      const int64_t off = int64_t(i) * classes;  // (n, classes)
      per[size_t(i)] = k.softmax_row(classes, logits + off, labels[i], inv_n, dlogits ? dlogits + off : nullptr, e.data());
    }
  }
  double loss = 0;
  for (double v : per) loss += v;
  return loss;
}

}  // namespace convlab::cpu
