// The non-convolution layers of the training engine on the CPU
// (kernels/cpu/layers/), mirroring kernels/cuda/layers/layers.hpp: bias (+ the
// fused ReLU of a convolution's output), ReLU, LRN, max pooling, dropout,
// softmax cross-entropy and the SGD update. Plain data in (sizes, host
// pointers, a thread count: 0 = all); NCHW fp32. net/layers.cpp documents
// the formulas; each function below says what it computes and what it
// promises.
//
// Every kernel is written for its memory traffic: one pass over its inputs and
// outputs, nothing re-read from memory that a register or L1 can keep. Results
// are bit-identical for any thread count and on every ISA (the bodies are
// compiled once per ISA without FP contraction; reductions have one fixed
// order, independent of both). The ISA variant comes from cpu_info().isa()
// (CONVLAB_ISA caps it), see layer_kernels.hpp.
#pragma once
#include <cstdint>

namespace convlab::cpu {

// y[i] = x[i] > 0 ? x[i] : 0, and dx[i] = x[i] > 0 ? dy[i] : 0, for i < count.
// In place is allowed (y == x, dx == dy). relu_bwd may be given the ReLU's
// output instead of its input: y > 0 exactly when x > 0.
void relu_fwd(int64_t count, const float* x, float* y, int threads);
void relu_bwd(int64_t count, const float* x, const float* dy, float* dx, int threads);

// A convolution's output epilogue, in place on y (n, k, pq): y += bias[k]
// (bias may be null), then when relu y = y > 0 ? y : 0. The same bits as a
// bias pass followed by relu_fwd. One pass: 8 bytes per element.
void bias_relu_fwd(int n, int k, int64_t pq, const float* bias, bool relu, float* y, int threads);
// Its backward, in place on dy (n, k, pq): when y is given (the fused ReLU's
// output), dy = y > 0 ? dy : 0; then when db is given, db[k] = the sum over
// (n, pq) of dy, in double: element j of a channel's rows goes to lane j % 16
// of 16 double accumulators (rows in sample order), the lanes summed as a
// fixed tree. Threads split the channels. One pass: 12 bytes per element with
// the ReLU (4 without).
void bias_relu_bwd(int n, int k, int64_t pq, const float* y, float* dy, float* db, int threads);

// Local response normalisation across channels (Krizhevsky et al., alpha not divided by size):
//   s = k + alpha * sum_{|c'-c| <= size/2} x_c'^2,   y = x / s^beta
//   dx_j = dy_j / s_j^beta - 2 alpha beta x_j sum_{i in window(j)} dy_i x_i / (s_i^beta s_i)
// x, y, dy, dx are (n, c, hw). In fp32: the window sum adds the squares in
// ascending channel order (from registers of L1, each x read once); beta =
// 0.75 takes s^0.75 = sqrt(s * sqrt(s)) (correctly rounded sqrt, ~2 ulp; other
// betas use powf). The backward recomputes s from x (the bytes of a saved
// scale cost more than the arithmetic): fwd moves 8, bwd 12 bytes per element.
// size is odd and at most 15.
struct LrnParams {
  int size = 5;
  float alpha = 1e-4f, beta = 0.75f, k = 2.f;
};
void lrn_fwd(int n, int c, int64_t hw, const LrnParams& lp, const float* x, float* y, int threads);
void lrn_bwd(int n, int c, int64_t hw, const LrnParams& lp, const float* x, const float* dy, float* dx, int threads);

// Max pooling over `planes` planes of h x w, window size x size, stride; output
// p x q (p = (h - size) / stride + 1). argmax holds the winner's place in its
// window, r * size + s (the first maximum in row-major window order, as the
// GPU's), one byte per output: size * size <= 256.
// maxpool_bwd: dx = 0, then dx[winner] += dy in output order (the GPU's
// gather sums in the same order: the same bits).
struct PoolShape {
  int64_t planes = 0;
  int h = 0, w = 0, p = 0, q = 0, size = 0, stride = 0;
};
void maxpool_fwd(const PoolShape& ps, const float* x, float* y, uint8_t* argmax, int threads);
void maxpool_bwd(const PoolShape& ps, const float* dy, const uint8_t* argmax, float* dx, int threads);

// Inverted dropout with rng::dropout_mask(key, i, p, 1 / (1 - p)) (kernels/counter_rng.hpp),
// the GPU's masks bit for bit: y[i] = x[i] * mask[i]; dropout_bwd recomputes the
// mask (no mask buffer: 8 bytes per element each way): dx[i] = dy[i] * mask[i].
void dropout_fwd(int64_t count, float p, uint64_t key, const float* x, float* y, int threads);
void dropout_bwd(int64_t count, float p, uint64_t key, const float* dy, float* dx, int threads);

// Softmax cross-entropy of logits (n, classes) against labels in [0, classes)
// (the caller checks them), in double: loss_i = logsumexp(z_i) - z_i[label_i],
// returned as the sum over samples in sample order; dlogits (may be null) =
// (softmax - onehot) / grad_n (grad_n = 0: n; a data-parallel rank passes the
// global batch, so the ranks' gradients sum to the global mean). exp is a vectorised double exp (< 2 ulp).
double softmax_xent(int n, int classes, const float* logits, const int32_t* labels, float* dlogits, int threads,
                    int grad_n = 0);

// SGD with momentum and weight decay (PyTorch semantics, as train::sgd_update)
// over every tensor in one parallel pass: the tensors' elements, end to end,
// are cut into one contiguous range per thread.
//   v = momentum * v + (g + weight_decay * w);  w -= lr * v      (20 bytes per element)
struct SgdTensor {
  float* w = nullptr;
  const float* g = nullptr;
  float* v = nullptr;
  int64_t count = 0;
  float weight_decay = 0;
};
void sgd_update(const SgdTensor* tensors, int count, float lr, float momentum, int threads);

}  // namespace convlab::cpu
