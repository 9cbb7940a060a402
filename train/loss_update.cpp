// The loss and the update of train/layers.hpp (softmax cross-entropy, SGD with
// momentum), CPU and CUDA. Not layers: the net calls them once per step, after
// the last layer's forward and after every backward. CPU threading as in
// train/layers.cpp: static OpenMP partitions, bit-identical for a fixed thread
// count (the loss is summed in sample order, the same order on both devices).
#include <algorithm>
#include <cmath>
#include <vector>

#include "core/error.hpp"
#include "train/layers.hpp"

#if CONVLAB_HAS_CUDA
#include "kernels/cuda/layers/layers.hpp"
#endif

namespace convlab::train {

namespace {
void check_labels(const int* labels, int n, int classes) {
  for (int i = 0; i < n; ++i)
    if (labels[i] < 0 || labels[i] >= classes)
      fail("label " + std::to_string(labels[i]) + " of sample " + std::to_string(i) + " is outside [0, " +
           std::to_string(classes) + ")");
}
}  // namespace

double softmax_cross_entropy(const ExecContext& ctx, const float* logits, const int* host_labels,
                             const int* device_labels, int n, int classes, float* dlogits, double* loss_scratch) {
  if (ctx.device == DeviceKind::cpu) return softmax_cross_entropy(logits, host_labels, n, classes, dlogits, ctx.threads);
  check_labels(host_labels, n, classes);
#if CONVLAB_HAS_CUDA
  static_assert(sizeof(int) == sizeof(int32_t));
  cuda::softmax_xent(n, classes, logits, device_labels, dlogits, loss_scratch, ctx.stream);
  std::vector<double> per(static_cast<size_t>(n));
  device_synchronize(ctx);
  copy_to_host(ctx.device, per.data(), loss_scratch, per.size() * sizeof(double));
  double loss = 0;
  for (double v : per) loss += v;  // the CPU's order
  return loss / n;
#else
  (void)logits, (void)device_labels, (void)dlogits, (void)loss_scratch;
  fail("softmax_cross_entropy on CUDA: built without CUDA");
#endif
}

double softmax_cross_entropy(const float* logits, const int* labels, int n, int classes, float* dlogits, int threads) {
  ExecContext ctx;
  ctx.threads = threads;
  std::vector<double> per(size_t(n), 0.0);
  check_labels(labels, n, classes);
#pragma omp parallel for schedule(static) num_threads(ctx.resolved_threads())
  for (int i = 0; i < n; ++i) {
    const float* z = logits + int64_t(i) * classes;
    double zmax = z[0];
    for (int c = 1; c < classes; ++c) zmax = std::max(zmax, double(z[c]));
    double sum = 0;
    for (int c = 0; c < classes; ++c) sum += std::exp(double(z[c]) - zmax);
    const double lse = zmax + std::log(sum);
    per[size_t(i)] = lse - double(z[labels[i]]);
    if (dlogits) {
      float* d = dlogits + int64_t(i) * classes;
      for (int c = 0; c < classes; ++c)
        d[c] = float((std::exp(double(z[c]) - lse) - (c == labels[i] ? 1.0 : 0.0)) / n);
    }
  }
  double loss = 0;
  for (double v : per) loss += v;
  return loss / n;
}

void sgd_update(Param& p, const SgdOptions& opt, const ExecContext& ctx) {
  if (p.device == DeviceKind::cpu) return sgd_update(p, opt, ctx.threads);
#if CONVLAB_HAS_CUDA
  cuda::sgd_update(p.value.size(), opt.lr, opt.momentum, p.decay ? opt.weight_decay : 0.f, p.w(), p.g(), p.m(), ctx.stream);
#else
  fail("sgd_update on CUDA: built without CUDA");
#endif
}

void sgd_update(Param& p, const SgdOptions& opt, int threads) {
  if (p.device != DeviceKind::cpu) fail("sgd_update: " + p.name + " lives on the device; pass its ExecContext");
  ExecContext ctx;
  ctx.threads = threads;
  const int64_t n = p.value.size();
  float* w = p.value.data();
  const float* g = p.grad.data();
  float* v = p.momentum.data();
  const float wd = p.decay ? opt.weight_decay : 0.f;
#pragma omp parallel for schedule(static) num_threads(ctx.resolved_threads())
  for (int64_t i = 0; i < n; ++i) {
    v[i] = opt.momentum * v[i] + (g[i] + wd * w[i]);
    w[i] -= opt.lr * v[i];
  }
}

}  // namespace convlab::train
