// The training engine's non-convolution layers on the GPU (contract in layers.hpp);
// the formulas are the CPU layers' (net/layers.cpp), reductions in double as there.
//
// Work split (256 threads per block unless said otherwise; grid-stride loops over
// at most kMaxBlocks blocks; nothing is launched for an empty tensor):
//   relu, dropout, sgd     one thread per element, consecutive threads on
//                          consecutive elements (coalesced).
//   bias_add               one thread per element of (n, k, pq).
//   bias_grad              pq >= 32: one 512-thread block per channel k; its
//                          threads walk the channel's n x pq elements (consecutive
//                          threads on consecutive pixels), each summing a fixed
//                          strided subset in double, then a fixed-order block
//                          reduction (warp shuffles, then warp 0 over the warp sums).
//                          pq < 32 (fully connected: pq = 1): a (32, 8) block per
//                          32 channels, lane x on channel x (coalesced across k),
//                          row y on samples y, y + 8, ...; a shared-memory tree over y.
//   lrn_fwd / lrn_bwd      one thread per element (n, c, pixel), consecutive threads
//                          on consecutive pixels; each loops over its <= size channel
//                          window (reads strided by hw, coalesced across the warp).
//   maxpool_fwd            one thread per output (plane, p, q), scanning its window
//                          in row-major order (first maximum wins, as on the CPU).
//   maxpool_bwd            gather: one thread per input element, looping over the
//                          <= ceil(size/stride)^2 outputs whose window covers it in
//                          output order, adding dy where argmax is this element
//                          (the CPU's summation order, so the same bits; no atomics).
//   softmax_xent           one block per sample (32..256 threads, by classes): block
//                          max, block sum of exp in double, then the row of dlogits.
// Index arithmetic: kernels that split a flat index into coordinates are templates
// on the index type and run with 32-bit unsigned indices (cheap division) when the
// tensor has fewer than 2^31 elements, with int64 otherwise.
// Determinism: no atomics; every reduction has an order fixed by the launch
// configuration, which depends only on the sizes.
// Precision: LRN, bias_grad and softmax accumulate in FP64 like the CPU; on sm_90
// FP64 runs at half the FP32 rate, well above what these memory-bound kernels need.
#include "kernels/cuda/layers/layers.hpp"

#include <algorithm>
#include <cassert>
#include <cstdint>
#include <limits>

#include "kernels/counter_rng.hpp"
#include "kernels/cuda/simt/simt.hpp"

namespace convlab::cuda {

namespace {

constexpr int kThreads = 256;
constexpr int64_t kMaxBlocks = 8192;        // grid-stride beyond: 8192 x 256 = 2M threads
constexpr int kBiasRowThreads = 512;        // bias_grad, one block per channel
constexpr int kBiasColWidth = 32, kBiasColRows = 8;  // bias_grad for pq < 32
constexpr unsigned kFullMask = 0xffffffffu;

unsigned blocks_for(int64_t total) {
  return unsigned(std::min<int64_t>((total + kThreads - 1) / kThreads, kMaxBlocks));
}
// 32-bit indices are safe when idx + grid stride (<= 2^21) cannot wrap.
bool fits_u32(int64_t total) { return total <= int64_t(std::numeric_limits<int32_t>::max()); }

// ---- block reductions ----------------------------------------------------------

struct Sum {
  template <typename T>
  __device__ T operator()(T a, T b) const {
    return a + b;
  }
};
struct Max {
  template <typename T>
  __device__ T operator()(T a, T b) const {
    return a < b ? b : a;
  }
};

// Reduction over the warp in a fixed order; the result is in lane 0.
template <typename T, typename Op>
__device__ __forceinline__ T warp_reduce(T v, Op op) {
  for (int off = 16; off > 0; off /= 2) v = op(v, __shfl_down_sync(kFullMask, v, off));
  return v;
}

// Reduction over the block (blockDim.x a multiple of 32, blockDim.y = 1); every
// thread must call it (it has barriers) and gets the result. smem: 33 elements of
// shared memory, free again when it returns.
template <typename T, typename Op>
__device__ T block_reduce(T v, T identity, Op op, T* smem) {
  const int lane = int(threadIdx.x) % 32, warp = int(threadIdx.x) / 32, warps = int(blockDim.x) / 32;
  v = warp_reduce(v, op);
  if (lane == 0) smem[warp] = v;
  __syncthreads();
  if (warp == 0) {  // a whole warp: the shuffles have every lane
    T t = lane < warps ? smem[lane] : identity;
    t = warp_reduce(t, op);
    if (lane == 0) smem[32] = t;
  }
  __syncthreads();
  const T total = smem[32];
  __syncthreads();  // smem may be reused by the caller's next reduction
  return total;
}

// s^-beta; beta = 0.75 as two square roots, as the CPU.
__device__ __forceinline__ double pow_neg(double s, double beta) {
  return beta == 0.75 ? 1.0 / sqrt(s * sqrt(s)) : pow(s, -beta);
}

// ---- elementwise -----------------------------------------------------------------

__global__ void __launch_bounds__(kThreads)
    relu_fwd_kernel(int64_t count, const float* __restrict__ x, float* __restrict__ y) {
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += int64_t(gridDim.x) * blockDim.x) {
    const float v = x[i];
    y[i] = v > 0.f ? v : 0.f;
  }
}

__global__ void __launch_bounds__(kThreads) relu_bwd_kernel(int64_t count, const float* __restrict__ x,
                                                            const float* __restrict__ dy, float* __restrict__ dx) {
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += int64_t(gridDim.x) * blockDim.x)
    dx[i] = x[i] > 0.f ? dy[i] : 0.f;
}

__global__ void __launch_bounds__(kThreads)
    dropout_fwd_kernel(int64_t count, float p, float keep, uint64_t key, const float* __restrict__ x,
                       float* __restrict__ y, float* __restrict__ mask) {
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += int64_t(gridDim.x) * blockDim.x) {
    const float m = rng::dropout_mask(key, i, p, keep);
    mask[i] = m;
    y[i] = x[i] * m;
  }
}

__global__ void __launch_bounds__(kThreads) dropout_bwd_kernel(int64_t count, const float* __restrict__ dy,
                                                               const float* __restrict__ mask,
                                                               float* __restrict__ dx) {
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += int64_t(gridDim.x) * blockDim.x)
    dx[i] = dy[i] * mask[i];
}

__global__ void __launch_bounds__(kThreads)
    sgd_kernel(int64_t count, float lr, float momentum, float weight_decay, float* __restrict__ w,
               const float* __restrict__ g, float* __restrict__ v) {
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += int64_t(gridDim.x) * blockDim.x) {
    const float wi = w[i];
    const float vi = momentum * v[i] + (g[i] + weight_decay * wi);
    v[i] = vi;
    w[i] = wi - lr * vi;
  }
}

// ---- bias ---------------------------------------------------------------------------

template <typename Idx>
__global__ void __launch_bounds__(kThreads)
    bias_add_kernel(Idx total, Idx k, Idx pq, const float* __restrict__ bias, float* __restrict__ y) {
  for (Idx i = Idx(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += Idx(gridDim.x) * blockDim.x)
    y[i] += bias[i / pq % k];  // (n, k, pq)
}

// One block per channel kk: the n x pq elements dy (n, kk, pq) as a flat range m =
// i * pq + j, thread t taking m = t, t + blockDim.x, ... (coordinates stepped without division).
__global__ void __launch_bounds__(kBiasRowThreads)
    bias_grad_rows_kernel(int n, int k, int64_t pq, const float* __restrict__ dy, float* __restrict__ db) {
  CONVLAB_SHARED(double, red, [33]);
  const int64_t kk = blockIdx.x, count = int64_t(n) * pq, step = blockDim.x;
  const int64_t di = step / pq, dj = step % pq;
  int64_t i = int64_t(threadIdx.x) / pq, j = int64_t(threadIdx.x) % pq;
  double s = 0;
  for (int64_t m = threadIdx.x; m < count; m += step) {
    s += dy[(i * k + kk) * pq + j];  // (n, k, pq)
    i += di;
    j += dj;
    if (j >= pq) {
      j -= pq;
      ++i;
    }
  }
  s = block_reduce(s, 0.0, Sum{}, red);
  if (threadIdx.x == 0) db[kk] = float(s);
}

// Small pq: lane x on channel blockIdx.x * 32 + x, row y on samples y, y + 8, ...
__global__ void __launch_bounds__(kBiasColWidth* kBiasColRows)
    bias_grad_cols_kernel(int n, int k, int pq, const float* __restrict__ dy, float* __restrict__ db) {
  CONVLAB_SHARED(double, part, [kBiasColRows][kBiasColWidth]);
  const int x = int(threadIdx.x), y = int(threadIdx.y);
  const int kk = int(blockIdx.x) * kBiasColWidth + x;
  double s = 0;
  if (kk < k)
    for (int i = y; i < n; i += kBiasColRows) {
      const float* row = dy + (int64_t(i) * k + kk) * pq;  // (n, k, pq)
      for (int j = 0; j < pq; ++j) s += row[j];
    }
  part[y][x] = s;
  __syncthreads();
  for (int h = kBiasColRows / 2; h > 0; h /= 2) {
    if (y < h) part[y][x] += part[y + h][x];
    __syncthreads();
  }
  if (y == 0 && kk < k) db[kk] = float(part[0][x]);
}

// ---- LRN --------------------------------------------------------------------------------

template <typename Idx>
__global__ void __launch_bounds__(kThreads)
    lrn_fwd_kernel(Idx total, Idx hw, int c, int half, double alpha, double k, double beta,
                   const float* __restrict__ x, float* __restrict__ y, float* __restrict__ scale) {
  for (Idx i = Idx(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += Idx(gridDim.x) * blockDim.x) {
    const int ch = int(i / hw % Idx(c));
    const float* x0 = x + (i - Idx(ch) * hw);  // channel 0 of this (sample, pixel)
    const int lo = std::max(0, ch - half), hi = std::min(c - 1, ch + half);
    double s = 0;
    for (int j = lo; j <= hi; ++j) {
      const double v = x0[Idx(j) * hw];  // (n, c, hw)
      s += v * v;
    }
    const double sc = k + alpha * s;
    scale[i] = float(sc);
    y[i] = float(double(x[i]) * pow_neg(sc, beta));
  }
}

// dx_j = dy_j s_j^-beta - 2 alpha beta x_j sum_{i in window(j)} dy_i y_i / s_i (the window is symmetric).
template <typename Idx>
__global__ void __launch_bounds__(kThreads)
    lrn_bwd_kernel(Idx total, Idx hw, int c, int half, double alpha, double beta, const float* __restrict__ x,
                   const float* __restrict__ y, const float* __restrict__ scale, const float* __restrict__ dy,
                   float* __restrict__ dx) {
  for (Idx i = Idx(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += Idx(gridDim.x) * blockDim.x) {
    const int ch = int(i / hw % Idx(c));
    const Idx base = i - Idx(ch) * hw;  // channel 0 of this (sample, pixel)
    const int lo = std::max(0, ch - half), hi = std::min(c - 1, ch + half);
    double s = 0;
    for (int j = lo; j <= hi; ++j) {
      const Idx o = base + Idx(j) * hw;  // (n, c, hw)
      s += double(dy[o]) * y[o] / scale[o];
    }
    dx[i] = float(double(dy[i]) * pow_neg(scale[i], beta) - 2.0 * alpha * beta * x[i] * s);
  }
}

// ---- max pooling ---------------------------------------------------------------------------

template <typename Idx>
__global__ void __launch_bounds__(kThreads)
    maxpool_fwd_kernel(Idx total, PoolShape ps, const float* __restrict__ x, float* __restrict__ y,
                       int32_t* __restrict__ argmax) {
  const Idx P = Idx(ps.p), Q = Idx(ps.q), HW = Idx(ps.h) * Idx(ps.w);
  for (Idx o = Idx(blockIdx.x) * blockDim.x + threadIdx.x; o < total; o += Idx(gridDim.x) * blockDim.x) {
    const int q = int(o % Q), p = int(o / Q % P);
    const Idx plane = o / (P * Q);
    const float* xp = x + plane * HW;  // (planes, h, w)
    const int r0 = p * ps.stride, s0 = q * ps.stride;
    float best = -std::numeric_limits<float>::infinity();
    int32_t at = r0 * ps.w + s0;
    for (int r = 0; r < ps.size; ++r)
      for (int s = 0; s < ps.size; ++s) {
        const int32_t idx = (r0 + r) * ps.w + (s0 + s);
        const float v = xp[idx];
        if (v > best) {  // first maximum wins
          best = v;
          at = idx;
        }
      }
    y[o] = best;
    argmax[o] = at;
  }
}

template <typename Idx>
__global__ void __launch_bounds__(kThreads)
    maxpool_bwd_kernel(Idx total, PoolShape ps, const float* __restrict__ dy, const int32_t* __restrict__ argmax,
                       float* __restrict__ dx) {
  const Idx H = Idx(ps.h), W = Idx(ps.w), PQ = Idx(ps.p) * Idx(ps.q);
  for (Idx i = Idx(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += Idx(gridDim.x) * blockDim.x) {
    const int xw = int(i % W), yh = int(i / W % H);
    const Idx plane = i / (H * W);
    const int32_t me = yh * ps.w + xw;
    // outputs p with p * stride <= yh <= p * stride + size - 1
    const int p_lo = yh < ps.size ? 0 : (yh - ps.size) / ps.stride + 1, p_hi = std::min(yh / ps.stride, ps.p - 1);
    const int q_lo = xw < ps.size ? 0 : (xw - ps.size) / ps.stride + 1, q_hi = std::min(xw / ps.stride, ps.q - 1);
    const Idx out0 = plane * PQ;  // (planes, p, q)
    float acc = 0.f;
    for (int p = p_lo; p <= p_hi; ++p)
      for (int q = q_lo; q <= q_hi; ++q) {
        const Idx o = out0 + Idx(p) * Idx(ps.q) + Idx(q);
        if (argmax[o] == me) acc += dy[o];
      }
    dx[i] = acc;
  }
}

// ---- softmax cross-entropy -----------------------------------------------------------------

__global__ void __launch_bounds__(kThreads)
    softmax_xent_kernel(int classes, const float* __restrict__ logits, const int32_t* __restrict__ labels,
                        float* __restrict__ dlogits, double* __restrict__ loss, int grad_n) {
  CONVLAB_SHARED(float, red_f, [33]);
  CONVLAB_SHARED(double, red_d, [33]);
  const int64_t row = blockIdx.x;
  const float* z = logits + row * classes;  // (n, classes)
  const int t = int(threadIdx.x), nt = int(blockDim.x);
  float m = -std::numeric_limits<float>::infinity();
  for (int c = t; c < classes; c += nt) m = Max{}(m, z[c]);
  const double zmax = block_reduce(m, -std::numeric_limits<float>::infinity(), Max{}, red_f);
  double s = 0;
  for (int c = t; c < classes; c += nt) s += exp(double(z[c]) - zmax);
  const double lse = zmax + log(block_reduce(s, 0.0, Sum{}, red_d));
  const int label = labels[row];
  // the caller checks labels; a bad one gives NaN (loss and row), not a stray read
  const bool valid = label >= 0 && label < classes;
  if (t == 0) loss[row] = valid ? lse - double(z[label]) : std::numeric_limits<double>::quiet_NaN();
  if (dlogits) {
    float* d = dlogits + row * classes;
    for (int c = t; c < classes; c += nt)
      d[c] = valid ? float((exp(double(z[c]) - lse) - (c == label ? 1.0 : 0.0)) / grad_n)
                   : std::numeric_limits<float>::quiet_NaN();
  }
}

}  // namespace

// ---- launchers -----------------------------------------------------------------------------

void relu_fwd(int64_t count, const float* x, float* y, void* stream) {
  assert(count >= 0);
  if (count <= 0) return;
  CONVLAB_LAUNCH(relu_fwd_kernel, dim3(blocks_for(count)), dim3(kThreads), 0, stream, count, x, y);
}

void relu_bwd(int64_t count, const float* x, const float* dy, float* dx, void* stream) {
  assert(count >= 0);
  if (count <= 0) return;
  CONVLAB_LAUNCH(relu_bwd_kernel, dim3(blocks_for(count)), dim3(kThreads), 0, stream, count, x, dy, dx);
}

void bias_add(int n, int k, int64_t pq, const float* bias, float* y, void* stream) {
  assert(n >= 0 && k >= 0 && pq >= 0);
  const int64_t total = int64_t(n) * k * pq;
  if (total <= 0) return;
  const dim3 grid(blocks_for(total)), block(kThreads);
  if (fits_u32(total))
    CONVLAB_LAUNCH(bias_add_kernel<uint32_t>, grid, block, 0, stream, uint32_t(total), uint32_t(k), uint32_t(pq),
                   bias, y);
  else
    CONVLAB_LAUNCH(bias_add_kernel<int64_t>, grid, block, 0, stream, total, int64_t(k), pq, bias, y);
}

void bias_grad(int n, int k, int64_t pq, const float* dy, float* db, void* stream) {
  assert(n >= 0 && k >= 0 && pq >= 0);
  if (k <= 0) return;  // n * pq == 0 still writes db = 0
  if (pq >= kBiasColWidth)
    CONVLAB_LAUNCH(bias_grad_rows_kernel, dim3(unsigned(k)), dim3(kBiasRowThreads), 0, stream, n, k, pq, dy, db);
  else
    CONVLAB_LAUNCH(bias_grad_cols_kernel, dim3(unsigned((k + kBiasColWidth - 1) / kBiasColWidth)),
                   dim3(kBiasColWidth, kBiasColRows), 0, stream, n, k, int(pq), dy, db);
}

void lrn_fwd(int n, int c, int64_t hw, const LrnParams& lp, const float* x, float* y, float* scale, void* stream) {
  assert(n >= 0 && c >= 0 && hw >= 0 && lp.size >= 1 && lp.size % 2 == 1);
  const int64_t total = int64_t(n) * c * hw;
  if (total <= 0) return;
  const dim3 grid(blocks_for(total)), block(kThreads);
  const int half = lp.size / 2;
  if (fits_u32(total))
    CONVLAB_LAUNCH(lrn_fwd_kernel<uint32_t>, grid, block, 0, stream, uint32_t(total), uint32_t(hw), c, half,
                   double(lp.alpha), double(lp.k), double(lp.beta), x, y, scale);
  else
    CONVLAB_LAUNCH(lrn_fwd_kernel<int64_t>, grid, block, 0, stream, total, hw, c, half, double(lp.alpha),
                   double(lp.k), double(lp.beta), x, y, scale);
}

void lrn_bwd(int n, int c, int64_t hw, const LrnParams& lp, const float* x, const float* y, const float* scale,
             const float* dy, float* dx, void* stream) {
  assert(n >= 0 && c >= 0 && hw >= 0 && lp.size >= 1 && lp.size % 2 == 1);
  const int64_t total = int64_t(n) * c * hw;
  if (total <= 0) return;
  const dim3 grid(blocks_for(total)), block(kThreads);
  const int half = lp.size / 2;
  if (fits_u32(total))
    CONVLAB_LAUNCH(lrn_bwd_kernel<uint32_t>, grid, block, 0, stream, uint32_t(total), uint32_t(hw), c, half,
                   double(lp.alpha), double(lp.beta), x, y, scale, dy, dx);
  else
    CONVLAB_LAUNCH(lrn_bwd_kernel<int64_t>, grid, block, 0, stream, total, hw, c, half, double(lp.alpha),
                   double(lp.beta), x, y, scale, dy, dx);
}

namespace {
void check_pool(const PoolShape& ps) {
  (void)ps;
  assert(ps.planes >= 0 && ps.h >= 0 && ps.w >= 0 && ps.p >= 0 && ps.q >= 0 && ps.size >= 1 && ps.stride >= 1);
  // every window inside the plane; argmax is an int32 index into the plane
  assert(ps.p == 0 || int64_t(ps.p - 1) * ps.stride + ps.size <= ps.h);
  assert(ps.q == 0 || int64_t(ps.q - 1) * ps.stride + ps.size <= ps.w);
  assert(int64_t(ps.h) * ps.w <= int64_t(std::numeric_limits<int32_t>::max()));
}
}  // namespace

void maxpool_fwd(const PoolShape& ps, const float* x, float* y, int32_t* argmax, void* stream) {
  check_pool(ps);
  const int64_t outputs = ps.planes * ps.p * ps.q;
  if (outputs <= 0) return;
  const dim3 grid(blocks_for(outputs)), block(kThreads);
  if (fits_u32(ps.planes * ps.h * ps.w))  // the input offsets too
    CONVLAB_LAUNCH(maxpool_fwd_kernel<uint32_t>, grid, block, 0, stream, uint32_t(outputs), ps, x, y, argmax);
  else
    CONVLAB_LAUNCH(maxpool_fwd_kernel<int64_t>, grid, block, 0, stream, outputs, ps, x, y, argmax);
}

void maxpool_bwd(const PoolShape& ps, const float* dy, const int32_t* argmax, float* dx, void* stream) {
  check_pool(ps);
  const int64_t inputs = ps.planes * ps.h * ps.w;
  if (inputs <= 0) return;
  const dim3 grid(blocks_for(inputs)), block(kThreads);
  if (fits_u32(inputs))
    CONVLAB_LAUNCH(maxpool_bwd_kernel<uint32_t>, grid, block, 0, stream, uint32_t(inputs), ps, dy, argmax, dx);
  else
    CONVLAB_LAUNCH(maxpool_bwd_kernel<int64_t>, grid, block, 0, stream, inputs, ps, dy, argmax, dx);
}

void dropout_fwd(int64_t count, float p, uint64_t key, const float* x, float* y, float* mask, void* stream) {
  assert(count >= 0 && p >= 0.f && p < 1.f);
  if (count <= 0) return;
  const float keep = 1.f / (1.f - p);  // as the CPU, in float
  CONVLAB_LAUNCH(dropout_fwd_kernel, dim3(blocks_for(count)), dim3(kThreads), 0, stream, count, p, keep, key, x, y,
                 mask);
}

void dropout_bwd(int64_t count, const float* dy, const float* mask, float* dx, void* stream) {
  assert(count >= 0);
  if (count <= 0) return;
  CONVLAB_LAUNCH(dropout_bwd_kernel, dim3(blocks_for(count)), dim3(kThreads), 0, stream, count, dy, mask, dx);
}

void softmax_xent(int n, int classes, const float* logits, const int32_t* labels, float* dlogits, double* loss,
                  void* stream, int grad_n) {
  assert(n >= 0 && (n == 0 || classes >= 1));
  if (n <= 0) return;
  // one thread per class up to 256, a whole number of warps
  const int threads = std::min(kThreads, (classes + 31) / 32 * 32);
  CONVLAB_LAUNCH(softmax_xent_kernel, dim3(unsigned(n)), dim3(unsigned(threads)), 0, stream, classes, logits,
                 labels, dlogits, loss, grad_n > 0 ? grad_n : n);
}

void sgd_update(int64_t count, float lr, float momentum, float weight_decay, float* w, const float* g, float* v,
                void* stream) {
  assert(count >= 0);
  if (count <= 0) return;
  CONVLAB_LAUNCH(sgd_kernel, dim3(blocks_for(count)), dim3(kThreads), 0, stream, count, lr, momentum, weight_decay, w,
                 g, v);
}

}  // namespace convlab::cuda
