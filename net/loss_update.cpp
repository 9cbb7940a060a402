// The loss and the update of net/layers.hpp (softmax cross-entropy, SGD with
// momentum), CPU and CUDA. Not layers: the net calls them once per step, after
// the last layer's forward and after every backward. The CPU runs the kernels
// of kernels/cpu/layers/ (the loss summed in sample order, the same order on
// both devices; SGD one pass over every parameter).
#include <algorithm>
#include <cmath>
#include <vector>

#include "core/error.hpp"
#include "kernels/cpu/layers/layers.hpp"
#include "net/layers.hpp"

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
                             const int* device_labels, int n, int classes, float* dlogits, double* loss_scratch,
                             int grad_n) {
  if (ctx.device == DeviceKind::cpu)
    return softmax_cross_entropy(logits, host_labels, n, classes, dlogits, ctx.threads, grad_n);
  check_labels(host_labels, n, classes);
#if CONVLAB_HAS_CUDA
  static_assert(sizeof(int) == sizeof(int32_t));
  cuda::softmax_xent(n, classes, logits, device_labels, dlogits, loss_scratch, ctx.stream, grad_n);
  std::vector<double> per(static_cast<size_t>(n));
  device_synchronize(ctx);
  copy_to_host(ctx.device, per.data(), loss_scratch, per.size() * sizeof(double));
  double loss = 0;
  for (double v : per) loss += v;  // the CPU's order
  return loss / n;
#else
  (void)logits, (void)device_labels, (void)dlogits, (void)loss_scratch, (void)grad_n;
  fail("softmax_cross_entropy on CUDA: built without CUDA");
#endif
}

double softmax_cross_entropy(const float* logits, const int* labels, int n, int classes, float* dlogits, int threads,
                             int grad_n) {
  ExecContext ctx;
  ctx.threads = threads;
  check_labels(labels, n, classes);
  static_assert(sizeof(int) == sizeof(int32_t));
  return cpu::softmax_xent(n, classes, logits, reinterpret_cast<const int32_t*>(labels), dlogits,
                           ctx.resolved_threads(), grad_n) /
         n;
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
  sgd_update(std::vector<Param*>{&p}, opt, ctx);
}

void sgd_update(const std::vector<Param*>& params, const SgdOptions& opt, const ExecContext& ctx) {
  if (ctx.device != DeviceKind::cpu) {
    for (Param* p : params) sgd_update(*p, opt, ctx);
    return;
  }
  std::vector<cpu::SgdTensor> t;
  t.reserve(params.size());
  for (Param* p : params) {
    if (p->device != DeviceKind::cpu) fail("sgd_update: " + p->name + " lives on the device; pass its ExecContext");
    t.push_back({p->value.data(), p->grad.data(), p->momentum.data(), p->value.size(), p->decay ? opt.weight_decay : 0.f});
  }
  cpu::sgd_update(t.data(), int(t.size()), opt.lr, opt.momentum, ctx.resolved_threads());
}

}  // namespace convlab::train
