// The max-pooling and softmax cross-entropy bodies of kernels/cpu/layers
// (contracts in layers.hpp and layer_kernels.hpp), plain C++ the compiler
// vectorises; included by layers_{avx512,avx2,portable}.cpp only.
//   pool_fwd_plane   one plane; lanes over up to 64 outputs of an output row,
//                    the window scanned row-major with a strict > (the first
//                    maximum wins, as the GPU's and the reference's scan);
//                    stride 2 (AlexNet) is compiled for its constant stride.
//   softmax_row      one sample in double: max, e = exp(z - max) (exp_shifted,
//                    below), the sum in 16 lanes (element c in lane c % 16) and
//                    a fixed tree, then the row of dlogits.
#pragma once
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

#include "kernels/cpu/layers/layer_kernels.hpp"

namespace convlab::cpu {
namespace {

template <int kStride>  // 0: the stride from ps
void pool_fwd_plane_t(const PoolShape& ps, const float* x, float* y, uint8_t* argmax) {
  constexpr int QB = 64;
  const int S = kStride ? kStride : ps.stride, K = ps.size, W = ps.w, Q = ps.q;
  alignas(64) float best[QB];
  alignas(64) int32_t at[QB];
  for (int p = 0; p < ps.p; ++p)
    for (int q0 = 0; q0 < Q; q0 += QB) {
      const int nq = std::min(QB, Q - q0);
      for (int j = 0; j < nq; ++j) {
        best[j] = -std::numeric_limits<float>::infinity();
        at[j] = 0;
      }
      for (int r = 0; r < K; ++r) {
        const float* row = x + int64_t(p * S + r) * W + int64_t(q0) * S;  // (h, w)
        for (int s = 0; s < K; ++s) {
          const int32_t code = r * K + s;
          for (int j = 0; j < nq; ++j) {
            const float v = row[j * S + s];
            const bool m = v > best[j];
            best[j] = m ? v : best[j];
            at[j] = m ? code : at[j];
          }
        }
      }
      float* yr = y + int64_t(p) * Q + q0;  // (p, q)
      uint8_t* ar = argmax + int64_t(p) * Q + q0;
      for (int j = 0; j < nq; ++j) {
        yr[j] = best[j];
        ar[j] = uint8_t(at[j]);
      }
    }
}

// A window and stride known at compile time (AlexNet's 3 x 3 / 2): one loop
// per output row with the whole window unrolled and branch-free in its body
// (the winner is data: a branch on it mispredicts), instead of the generic
// body's loop per window position, mostly remainder on rows of 27, 13 and 6
// outputs. On random data, batch 32, 2 threads: pool1 6.0 -> 4.6 ms, pool2
// 3.5 -> 2.8, pool5 1.2 -> 0.6. The same scan order and strict >, so the same
// outputs and argmax.
template <int K, int S>
void pool_fwd_plane_fixed(const PoolShape& ps, const float* x, float* y, uint8_t* argmax) {
  const int W = ps.w, Q = ps.q;
  for (int p = 0; p < ps.p; ++p) {
    const float* base = x + int64_t(p * S) * W;  // (h, w)
    float* yr = y + int64_t(p) * Q;               // (p, q)
    uint8_t* ar = argmax + int64_t(p) * Q;
    for (int q = 0; q < Q; ++q) {
      float best = -std::numeric_limits<float>::infinity();
      int32_t at = 0;
      for (int r = 0; r < K; ++r)
        for (int s = 0; s < K; ++s) {
          const float v = base[r * W + q * S + s];
          const int32_t m = -int32_t(v > best);  // all ones where v wins: no branch on the data
          best = v > best ? v : best;
          at += (r * K + s - at) & m;
        }
      yr[q] = best;
      ar[q] = uint8_t(at);
    }
  }
}

void pool_fwd_plane(const PoolShape& ps, const float* x, float* y, uint8_t* argmax) {
  if (ps.size == 3 && ps.stride == 2) pool_fwd_plane_fixed<3, 2>(ps, x, y, argmax);
  else if (ps.stride == 2) pool_fwd_plane_t<2>(ps, x, y, argmax);
  else pool_fwd_plane_t<0>(ps, x, y, argmax);
}

// e[c] = exp(double(z[c]) - zmax) for z[c] <= zmax: Cody-Waite reduction
// x = k ln2 + r (|r| <= ln2 / 2, k by the 1.5 * 2^52 rounding trick, ln2 in a
// 32-bit head that k times exactly and a tail), exp(r) by its Taylor series to
// r^13 (truncation < 2e-17 relative) in Horner form, times 2^k built in the
// exponent bits. Arguments below -708 are clamped there (exp < 3.4e-308: a
// softmax with its maximum at exp(0) = 1 cannot tell). Error < 2 ulp.
inline void exp_shifted(const float* z, double zmax, int n, double* e) {
  constexpr double kLog2e = 1.4426950408889634074, kLn2Hi = 6.93147180369123816490e-01,
                   kLn2Lo = 1.90821492927058770002e-10, kShift = 0x1.8p52;
  const int64_t shift_bits = std::bit_cast<int64_t>(kShift);
  for (int c = 0; c < n; ++c) {
    double x = double(z[c]) - zmax;
    x = x < -708.0 ? -708.0 : x;
    const double big = x * kLog2e + kShift;
    const double kd = big - kShift;
    const int64_t ki = std::bit_cast<int64_t>(big) - shift_bits;
    const double r = (x - kd * kLn2Hi) - kd * kLn2Lo;
    double p = 1.0 / 6227020800.0;  // 1/13!
    p = p * r + 1.0 / 479001600.0;
    p = p * r + 1.0 / 39916800.0;
    p = p * r + 1.0 / 3628800.0;
    p = p * r + 1.0 / 362880.0;
    p = p * r + 1.0 / 40320.0;
    p = p * r + 1.0 / 5040.0;
    p = p * r + 1.0 / 720.0;
    p = p * r + 1.0 / 120.0;
    p = p * r + 1.0 / 24.0;
    p = p * r + 1.0 / 6.0;
    p = p * r + 0.5;
    p = p * r + 1.0;
    p = p * r + 1.0;
    e[c] = p * std::bit_cast<double>((ki + 1023) << 52);
  }
}

double softmax_row(int classes, const float* z, int label, double inv_n, float* d, double* e) {
  float m = z[0];
  for (int c = 1; c < classes; ++c) m = z[c] > m ? z[c] : m;
  const double zmax = m;
  exp_shifted(z, zmax, classes, e);
  double acc[16] = {};
  int c = 0;
  for (; c + 16 <= classes; c += 16)
    for (int l = 0; l < 16; ++l) acc[l] += e[c + l];
  for (int l = 0; c < classes; ++c, ++l) acc[l] += e[c];
  for (int h = 8; h > 0; h /= 2)
    for (int l = 0; l < h; ++l) acc[l] += acc[l + h];
  const double sum = acc[0];
  if (d) {
    const double inv_sum = 1.0 / sum;
    for (int i = 0; i < classes; ++i) d[i] = float((e[i] * inv_sum - (i == label ? 1.0 : 0.0)) * inv_n);
  }
  return zmax + std::log(sum) - double(z[label]);
}

}  // namespace
}  // namespace convlab::cpu
