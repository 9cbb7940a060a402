// The non-convolution layers of the training engine on the GPU (kernels/cuda/layers/layers.cu):
// bias, ReLU, LRN, max pooling, dropout, softmax cross-entropy and the SGD
// update. Plain data in (sizes, device pointers, a stream); the same formulas as
// the CPU layers in net/layers.cpp, which document them. Every kernel is
// deterministic: no atomics, every reduction in a fixed order, so two runs give
// the same bits. All tensors are NCHW fp32 on the device.
#pragma once
#include <cstdint>

namespace convlab::cuda {

// y[i] = max(x[i], 0) and dx[i] = x[i] > 0 ? dy[i] : 0, for i < count.
void relu_fwd(int64_t count, const float* x, float* y, void* stream);
void relu_bwd(int64_t count, const float* x, const float* dy, float* dx, void* stream);

// y (n, k, pq) += bias[k]: the convolution's and the fully connected layer's
// bias (pq = 1 for (n, out) rows).
void bias_add(int n, int k, int64_t pq, const float* bias, float* y, void* stream);
// db[k] = sum over (n, pq) of dy (n, k, pq), accumulated in double, one block per k.
void bias_grad(int n, int k, int64_t pq, const float* dy, float* db, void* stream);

// Local response normalisation across channels (Krizhevsky et al., alpha not divided by size):
//   scale = k + alpha * sum_{|c'-c| <= size/2} x_c'^2,  y = x * scale^-beta
//   dx_j  = dy_j scale_j^-beta - 2 alpha beta x_j sum_{i in window(j)} dy_i y_i / scale_i
// x, y, scale, dy, dx are (n, c, hw); scale is written by lrn_fwd and read by lrn_bwd.
struct LrnParams {
  int size = 5;  // odd
  float alpha = 1e-4f, beta = 0.75f, k = 2.f;
};
void lrn_fwd(int n, int c, int64_t hw, const LrnParams& lp, const float* x, float* y, float* scale, void* stream);
void lrn_bwd(int n, int c, int64_t hw, const LrnParams& lp, const float* x, const float* y, const float* scale,
             const float* dy, float* dx, void* stream);

// Max pooling over `planes` planes of h x w, window size x size, stride; output p x q
// (p = (h - size) / stride + 1). argmax holds the winning index into the input
// plane (the first maximum in row-major window order, as on the CPU).
// maxpool_bwd gathers: every input element sums the dy of the outputs whose argmax it is (dx fully written).
struct PoolShape {
  int64_t planes = 0;
  int h = 0, w = 0, p = 0, q = 0, size = 0, stride = 0;
};
void maxpool_fwd(const PoolShape& ps, const float* x, float* y, int32_t* argmax, void* stream);
void maxpool_bwd(const PoolShape& ps, const float* dy, const int32_t* argmax, float* dx, void* stream);

// Inverted dropout: mask[i] = rng::dropout_mask(key, i, p, 1 / (1 - p)) (kernels/counter_rng.hpp,
// the CPU's masks bit for bit), y[i] = x[i] * mask[i]. dropout_bwd: dx[i] = dy[i] * mask[i].
void dropout_fwd(int64_t count, float p, uint64_t key, const float* x, float* y, float* mask, void* stream);
void dropout_bwd(int64_t count, const float* dy, const float* mask, float* dx, void* stream);

// Softmax cross-entropy of logits (n, classes) against labels in [0, classes)
// (the caller checks them): loss[i] = logsumexp(z_i) - z_i[label_i] in double,
// one block per sample; dlogits (may be null) = (softmax - onehot) / grad_n
// (grad_n = 0: n; the CPU kernel's convention).
void softmax_xent(int n, int classes, const float* logits, const int32_t* labels, float* dlogits, double* loss,
                  void* stream, int grad_n = 0);

// SGD with momentum and weight decay (PyTorch semantics, as train::sgd_update):
//   v = momentum * v + (g + weight_decay * w);  w -= lr * v
void sgd_update(int64_t count, float lr, float momentum, float weight_decay, float* w, const float* g, float* v,
                void* stream);

}  // namespace convlab::cuda
