// The LRN bodies of kernels/cpu/layers (one block: sample n, pixels [p0, p0 +
// len) of every channel; contracts in layers.hpp and layer_kernels.hpp), plain
// C++ the compiler vectorises over the block's pixels; included by
// layers_{avx512,avx2,portable}.cpp only.
//
// The block walks the channels once, keeping the last rows it needs in small
// rings (kLrnRing rows of kLrnBlock pixels, row c at c % kLrnRing, in L1/L2):
// x is read from memory once per element (dy once in the backward), the window
// sums are re-added from the ring in ascending channel order (no add/subtract
// running sum, whose fp32 drift would depend on the channel count). Each
// channel's output is one pass per pixel (window sum, scale, power, divide in
// registers), the window's row count a template constant (with_rows).
//   forward, channel c:  s_c = k + alpha * sum sq[c-h .. c+h];  y_c = x_c / s_c^beta
//   backward, a pipeline two half-windows deep: at step a, sq[a] = x_a^2; for
//   b = a - h, q_b = s_b^beta and t_b = dy_b x_b / (q_b s_b); for c = a - 2h,
//   dx_c = dy_c / q_c - (2 alpha beta) x_c sum t[c-h .. c+h].
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "kernels/cpu/layers/layer_kernels.hpp"

namespace convlab::cpu {
namespace {

constexpr int kB = kLrnBlock, kRingMask = kLrnRing - 1;
using Row = float[kLrnBlock];

// A block reads one row of len pixels per channel, the rows a channel stride
// (hw floats) apart: too many short streams for the hardware prefetchers,
// which left the loads waiting on memory (perf: half the forward's samples on
// the first use of x). So the rows kLrnAhead channels ahead are prefetched.
constexpr int kLrnAhead = 6;
inline void prefetch_row(const float* row, int len) {
  for (int p = 0; p < len; p += 16) __builtin_prefetch(row + p);
}

// dst = x * x over len pixels.
inline void square_row(const float* x, int len, float* dst) {
  for (int p = 0; p < len; ++p) dst[p] = x[p] * x[p];
}

// The window sum of pixel p over NR ring rows, added in ascending channel order
// (r[0] first): the same order whatever NR, so the same bits as one row at a time.
template <int NR>
inline float window_at(const float* const* r, int p) {
  float acc = r[0][p];
  for (int j = 1; j < NR; ++j) acc += r[j][p];  // unrolled: NR is a constant
  return acc;
}

// s^beta: AlexNet's 0.75 as sqrt(s * sqrt(s)) (correctly rounded steps), else powf.
template <bool Beta075>
inline float power(float s, float beta) {
  if constexpr (Beta075) return std::sqrt(s * std::sqrt(s));
  else return std::pow(s, beta);
}

// Forward of one channel row, one pass per pixel: window sum, s = k + alpha *
// sum, y = x / s^beta -- nothing stored between the steps.
template <int NR, bool Beta075>
void lrn_fwd_row(const float* const* r, const float* x, float* y, int len, float alpha, float k, float beta) {
  for (int p = 0; p < len; ++p) {
    const float s = k + alpha * window_at<NR>(r, p);
    y[p] = x[p] / power<Beta075>(s, beta);
  }
}

// Backward, the first stage of channel b: q = s^beta (kept for its dx) and
// t = dy x / (q s) (kept for the window sums of its neighbours).
template <int NR, bool Beta075>
void lrn_bwd_stage(const float* const* r, const float* x, const float* dy, float* q, float* t, int len, float alpha,
                   float k, float beta) {
  for (int p = 0; p < len; ++p) {
    const float s = k + alpha * window_at<NR>(r, p);
    const float qp = power<Beta075>(s, beta);
    q[p] = qp;
    t[p] = dy[p] * x[p] / (qp * s);
  }
}

// Backward, the second stage of channel c: dx = dy / q - (2 alpha beta) x * (window sum of t).
template <int NR>
void lrn_bwd_out(const float* const* r, const float* x, const float* dy, const float* q, float* dx, int len, float c2) {
  for (int p = 0; p < len; ++p) dx[p] = dy[p] / q[p] - c2 * x[p] * window_at<NR>(r, p);
}

// The ring rows lo..hi in order; their count picks the instantiation (size <= 15: up to 15 rows).
template <typename F>
void with_rows(const Row* ring, int lo, int hi, F&& f) {
  const float* r[kLrnRing];
  const int n = hi - lo + 1;
  for (int j = 0; j < n; ++j) r[j] = ring[(lo + j) & kRingMask];
  switch (n) {
    case 1: return f(std::integral_constant<int, 1>{}, r);
    case 2: return f(std::integral_constant<int, 2>{}, r);
    case 3: return f(std::integral_constant<int, 3>{}, r);
    case 4: return f(std::integral_constant<int, 4>{}, r);
    case 5: return f(std::integral_constant<int, 5>{}, r);
    case 6: return f(std::integral_constant<int, 6>{}, r);
    case 7: return f(std::integral_constant<int, 7>{}, r);
    case 8: return f(std::integral_constant<int, 8>{}, r);
    case 9: return f(std::integral_constant<int, 9>{}, r);
    case 10: return f(std::integral_constant<int, 10>{}, r);
    case 11: return f(std::integral_constant<int, 11>{}, r);
    case 12: return f(std::integral_constant<int, 12>{}, r);
    case 13: return f(std::integral_constant<int, 13>{}, r);
    case 14: return f(std::integral_constant<int, 14>{}, r);
    default: return f(std::integral_constant<int, 15>{}, r);
  }
}

template <bool Beta075>
void lrn_fwd_block_t(const LrnBlock& b) {
  alignas(64) float sq[kLrnRing][kB];
  const int C = b.c, h = b.half, len = b.len;
  for (int a = 0; a < C + h; ++a) {
    if (a + kLrnAhead < C) prefetch_row(b.x + (a + kLrnAhead) * b.hw, len);
    if (a < C) square_row(b.x + a * b.hw, len, sq[a & kRingMask]);
    const int c = a - h;
    if (c < 0) continue;
    const float* xc = b.x + c * b.hw;  // (c, hw)
    float* yc = b.y + c * b.hw;
    with_rows(sq, std::max(0, c - h), std::min(C - 1, c + h), [&](auto nr, const float* const* r) {
      lrn_fwd_row<decltype(nr)::value, Beta075>(r, xc, yc, len, b.alpha, b.k, b.beta);
    });
  }
}

template <bool Beta075>
void lrn_bwd_block_t(const LrnBlock& b) {
  alignas(64) float sq[kLrnRing][kB], t[kLrnRing][kB], qr[kLrnRing][kB];
  const int C = b.c, h = b.half, len = b.len;
  const float c2 = 2.f * b.alpha * b.beta;
  for (int a = 0; a < C + 2 * h; ++a) {
    if (a + kLrnAhead < C) {
      prefetch_row(b.x + (a + kLrnAhead) * b.hw, len);
      prefetch_row(b.dy + (a + kLrnAhead) * b.hw, len);
    }
    if (a < C) square_row(b.x + a * b.hw, len, sq[a & kRingMask]);
    const int bb = a - h;
    if (bb >= 0 && bb < C) {
      const float* xb = b.x + bb * b.hw;  // (c, hw)
      const float* dyb = b.dy + bb * b.hw;
      float* q = qr[bb & kRingMask];
      float* tb = t[bb & kRingMask];
      with_rows(sq, std::max(0, bb - h), std::min(C - 1, bb + h), [&](auto nr, const float* const* r) {
        lrn_bwd_stage<decltype(nr)::value, Beta075>(r, xb, dyb, q, tb, len, b.alpha, b.k, b.beta);
      });
    }
    const int c = a - 2 * h;
    if (c < 0) continue;
    const float* xc = b.x + c * b.hw;
    const float* dyc = b.dy + c * b.hw;
    const float* q = qr[c & kRingMask];
    float* dxc = b.y + c * b.hw;
    with_rows(t, std::max(0, c - h), std::min(C - 1, c + h), [&](auto nr, const float* const* r) {
      lrn_bwd_out<decltype(nr)::value>(r, xc, dyc, q, dxc, len, c2);
    });
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
