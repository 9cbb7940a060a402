// The LRN bodies of kernels/cpu/layers (one block: sample n, pixels [p0, p0 +
// len) of every channel; contracts in layers.hpp and layer_kernels.hpp), plain
// C++ the compiler vectorises over the block's pixels; included by
// layers_{avx512,avx2,portable}.cpp only.
//
// The block walks the channels once, keeping the last rows it needs in small
// rings in L1 (kLrnRing rows of kLrnBlock pixels, row c at c % kLrnRing): x is
// read from memory once per element (dy once in the backward), the window sums
// are re-added from the ring in ascending channel order (no add/subtract
// running sum, whose fp32 drift would depend on the channel count). Scratch
// rows are always kLrnBlock wide (lanes past len hold zeros and are never
// stored), so the inner loops have a constant trip count.
//   forward, channel c:  s_c = k + alpha * sum sq[c-h .. c+h];  y_c = x_c / s_c^beta
//   backward, a pipeline two half-windows deep: at step a, sq[a] = x_a^2; for
//   b = a - h, q_b = s_b^beta and t_b = dy_b x_b / (q_b s_b); for c = a - 2h,
//   dx_c = dy_c / q_c - (2 alpha beta) x_c sum t[c-h .. c+h].
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "kernels/cpu/layers/layer_kernels.hpp"

namespace convlab::cpu {
namespace {

constexpr int kB = kLrnBlock, kRingMask = kLrnRing - 1;
using Row = float[kLrnBlock];

// dst = x * x over len pixels, zeros after.
inline void square_row(const float* x, int len, float* dst) {
  for (int p = 0; p < len; ++p) dst[p] = x[p] * x[p];
  for (int p = len; p < kB; ++p) dst[p] = 0.f;
}

// acc = sum of ring rows lo..hi (ascending).
inline void window_sum(const Row* ring, int lo, int hi, float* acc) {
  const float* r0 = ring[lo & kRingMask];
  for (int p = 0; p < kB; ++p) acc[p] = r0[p];
  for (int j = lo + 1; j <= hi; ++j) {
    const float* r = ring[j & kRingMask];
    for (int p = 0; p < kB; ++p) acc[p] += r[p];
  }
}

// s = k + alpha * (window of squares), q = s^beta.
template <bool Beta075>
inline void scale_and_power(const Row* sq, int lo, int hi, float alpha, float k, float beta, float* s, float* q) {
  window_sum(sq, lo, hi, s);
  for (int p = 0; p < kB; ++p) s[p] = k + alpha * s[p];
  if constexpr (Beta075) {
    for (int p = 0; p < kB; ++p) q[p] = std::sqrt(s[p] * std::sqrt(s[p]));
  } else {
    for (int p = 0; p < kB; ++p) q[p] = std::pow(s[p], beta);
  }
}

template <bool Beta075>
void lrn_fwd_block_t(const LrnBlock& b) {
  alignas(64) float sq[kLrnRing][kB];
  alignas(64) float s[kB], q[kB];
  const int C = b.c, h = b.half, len = b.len;
  for (int a = 0; a < C + h; ++a) {
    if (a < C) square_row(b.x + a * b.hw, len, sq[a & kRingMask]);
    const int c = a - h;
    if (c < 0) continue;
    scale_and_power<Beta075>(sq, std::max(0, c - h), std::min(C - 1, c + h), b.alpha, b.k, b.beta, s, q);
    const float* xc = b.x + c * b.hw;  // (c, hw)
    float* yc = b.y + c * b.hw;
    for (int p = 0; p < len; ++p) yc[p] = xc[p] / q[p];
  }
}

template <bool Beta075>
void lrn_bwd_block_t(const LrnBlock& b) {
  alignas(64) float sq[kLrnRing][kB], t[kLrnRing][kB], qr[kLrnRing][kB];
  alignas(64) float s[kB], tsum[kB];
  const int C = b.c, h = b.half, len = b.len;
  const float c2 = 2.f * b.alpha * b.beta;
  for (int a = 0; a < C + 2 * h; ++a) {
    if (a < C) square_row(b.x + a * b.hw, len, sq[a & kRingMask]);
    const int bb = a - h;
    if (bb >= 0 && bb < C) {
      float* q = qr[bb & kRingMask];
      scale_and_power<Beta075>(sq, std::max(0, bb - h), std::min(C - 1, bb + h), b.alpha, b.k, b.beta, s, q);
      const float* xb = b.x + bb * b.hw;  // (c, hw)
      const float* dyb = b.dy + bb * b.hw;
      float* tb = t[bb & kRingMask];
      for (int p = 0; p < len; ++p) tb[p] = dyb[p] * xb[p] / (q[p] * s[p]);
      for (int p = len; p < kB; ++p) tb[p] = 0.f;
    }
    const int c = a - 2 * h;
    if (c < 0) continue;
    window_sum(t, std::max(0, c - h), std::min(C - 1, c + h), tsum);
    const float* xc = b.x + c * b.hw;
    const float* dyc = b.dy + c * b.hw;
    const float* q = qr[c & kRingMask];
    float* dxc = b.y + c * b.hw;
    for (int p = 0; p < len; ++p) dxc[p] = dyc[p] / q[p] - c2 * xc[p] * tsum[p];
  }
}

void lrn_fwd_block(const LrnBlock& b) {
  if (b.beta == 0.75f) lrn_fwd_block_t<true>(b);
  else lrn_fwd_block_t<false>(b);
}

void lrn_bwd_block(const LrnBlock& b) {
  if (b.beta == 0.75f) lrn_bwd_block_t<true>(b);
  else lrn_bwd_block_t<false>(b);
}

}  // namespace
}  // namespace convlab::cpu
