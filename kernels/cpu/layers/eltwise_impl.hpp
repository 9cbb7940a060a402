// The elementwise bodies of kernels/cpu/layers (ReLU, bias + ReLU, dropout, SGD),
// plain C++ the compiler vectorises; included by layers_{avx512,avx2,portable}.cpp
// only, inside an anonymous namespace (each ISA's copy stays its own).
// Contracts: layer_kernels.hpp. No FP contraction (kernels/CMakeLists.txt):
// every lane does the same rounded operations on every ISA.
#pragma once
#include <cstdint>

#include "kernels/cpu/layers/layer_kernels.hpp"

namespace convlab::cpu {
namespace {

void relu_fwd_span(int64_t n, const float* x, float* y) {
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] > 0.f ? x[i] : 0.f;
}

void relu_bwd_span(int64_t n, const float* x, const float* dy, float* dx) {
  for (int64_t i = 0; i < n; ++i) dx[i] = x[i] > 0.f ? dy[i] : 0.f;
}

template <bool Bias, bool Relu>
void bias_relu_row_t(int64_t n, float b, float* y) {
  for (int64_t i = 0; i < n; ++i) {
    float v = y[i];
    if constexpr (Bias) v = v + b;
    if constexpr (Relu) v = v > 0.f ? v : 0.f;
    y[i] = v;
  }
}

void bias_relu_row(int64_t n, float b, bool has_bias, bool relu, float* y) {
  if (has_bias && relu) bias_relu_row_t<true, true>(n, b, y);
  else if (has_bias) bias_relu_row_t<true, false>(n, b, y);
  else if (relu) bias_relu_row_t<false, true>(n, b, y);
}

// 16 double lanes, element j of the row in lane j % 16: the same additions on every ISA.
template <bool Mask, bool Sum>
void bias_relu_bwd_row_t(int64_t n, const float* y, float* dy, double* acc) {
  double a[16];
  for (int l = 0; l < 16; ++l) a[l] = Sum ? acc[l] : 0.0;
  int64_t j = 0;
  for (; j + 16 <= n; j += 16)
    for (int l = 0; l < 16; ++l) {
      float g = dy[j + l];
      if constexpr (Mask) {
        g = y[j + l] > 0.f ? g : 0.f;
        dy[j + l] = g;
      }
      if constexpr (Sum) a[l] += double(g);
    }
  for (int l = 0; j < n; ++j, ++l) {
    float g = dy[j];
    if constexpr (Mask) {
      g = y[j] > 0.f ? g : 0.f;
      dy[j] = g;
    }
    if constexpr (Sum) a[l] += double(g);
  }
  if constexpr (Sum)
    for (int l = 0; l < 16; ++l) acc[l] = a[l];
}

void bias_relu_bwd_row(int64_t n, const float* y, float* dy, double* acc) {
  if (y && acc) bias_relu_bwd_row_t<true, true>(n, y, dy, acc);
  else if (y) bias_relu_bwd_row_t<true, false>(n, y, dy, acc);
  else if (acc) bias_relu_bwd_row_t<false, true>(n, y, dy, acc);
}

// rng::mix (kernels/counter_rng.hpp), written out so the loops below vectorise.
inline uint64_t mix64(uint64_t z) {
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
constexpr uint64_t kDropoutStride = 0xD1B54A32D192ED03ull;  // rng::dropout_mask's counter step

inline float dropout_mask1(const DropoutArgs& a, int64_t i) {
  return int64_t(mix64(a.key + uint64_t(i) * kDropoutStride) >> 11) < a.threshold ? 0.f : a.keep;
}

// Masks of 16 consecutive elements in plain C++ (vectorised where the ISA has a
// 64-bit multiply: AVX-512DQ); the AVX2 file brings its own.
struct Mask16 {
  static void run(const DropoutArgs& a, int64_t i0, float* m) {
    for (int l = 0; l < 16; ++l) m[l] = dropout_mask1(a, i0 + l);
  }
};

template <class M16>
void dropout_span_t(const DropoutArgs& a, int64_t begin, int64_t n, const float* x, float* y) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    alignas(64) float m[16];
    M16::run(a, begin + i, m);
    for (int l = 0; l < 16; ++l) y[i + l] = x[i + l] * m[l];
  }
  for (; i < n; ++i) y[i] = x[i] * dropout_mask1(a, begin + i);
}

void sgd_span(int64_t n, float lr, float momentum, float wd, float* w, const float* g, float* v) {
  for (int64_t i = 0; i < n; ++i) {
    const float vi = momentum * v[i] + (g[i] + wd * w[i]);
    v[i] = vi;
    w[i] = w[i] - lr * vi;
  }
}

}  // namespace
}  // namespace convlab::cpu
