// The hand-written FFT against a direct (separable) DFT in fp64: every smooth
// size n = 2^a 3^b 5^c <= 64 as n x n, every smooth height <= 64 against 11
// widths (1 .. 32, odd and even), row pruning, and larger squares up to 240
// (whole-image sizes of big layers); r2c and c2r. Plus the complex GEMM
// against naive complex loops in all three conjugation modes.
//
// Error bound: a radix-2/3/4/5 FFT's error is O(eps * log2 n) times the signal's
// L2 norm; we check max |X - X_ref| <= 2 * eps * log2(2 lh lw) * ||x||_2, a
// bound the measured error stays well under (the test prints the worst ratio).
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <complex>
#include <random>
#include <vector>

#include "core/tensor.hpp"
#include "kernels/cpu/fft/fft.hpp"

namespace convlab::cpu::fft {
namespace {

constexpr int V = kLanes;
using cd = std::complex<double>;

// Separable direct DFT of one lane: rows (length lw) then columns (length lh).
std::vector<cd> direct_dft(const std::vector<double>& x, int lh, int lw, int sign) {
  std::vector<cd> t(size_t(lh) * lw), y(size_t(lh) * lw), ew(static_cast<size_t>(lw)), eh(static_cast<size_t>(lh));
  for (int j = 0; j < lw; ++j) ew[size_t(j)] = std::polar(1.0, sign * 2 * M_PI * double(j) / lw);
  for (int j = 0; j < lh; ++j) eh[size_t(j)] = std::polar(1.0, sign * 2 * M_PI * double(j) / lh);
  for (int h = 0; h < lh; ++h)
    for (int k = 0; k < lw; ++k) {
      cd s = 0;
      for (int j = 0; j < lw; ++j) s += x[size_t(h) * lw + j] * ew[size_t(j * k % lw)];
      t[size_t(h) * lw + k] = s;
    }
  for (int u = 0; u < lh; ++u)
    for (int k = 0; k < lw; ++k) {
      cd s = 0;
      for (int h = 0; h < lh; ++h) s += t[size_t(h) * lw + k] * eh[size_t(h * u % lh)];
      y[size_t(u) * lw + k] = s;
    }
  return y;
}

double worst_ratio_seen = 0;

// r2c over rows [rb, re) of random data and c2r back, lane by lane vs fp64.
void check_size(int lh, int lw, int rb, int re, uint64_t seed) {
  Plan2D plan(lh, lw);
  const int wc = plan.wc;
  const ptrdiff_t fstride = 2 * V + 16;  // a gap between frequencies, like the algorithms use
  AlignedBuffer<float> frame(size_t(lh) * lw * V), spec(size_t(plan.frequencies()) * fstride + 64),
      back(size_t(lh) * lw * V), scratch(plan.scratch_floats());
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> U(-1.f, 1.f);
  for (int h = 0; h < lh; ++h)
    for (int j = 0; j < lw * V; ++j) frame[size_t(h) * lw * V + j] = (h >= rb && h < re) ? U(rng) : 0.f;
  for (size_t i = 0; i < spec.size(); ++i) spec[i] = NAN;
  r2c_2d(plan, frame.data(), rb, re, spec.data(), fstride, scratch.data());

  const double eps = FLT_EPSILON;
  const double logn = std::log2(2.0 * lh * lw);
  // Large sizes: three lanes (the direct DFT is the slow part).
  const int lane_step = lh * lw > 64 * 64 ? 7 : 1;
  for (int lane = 0; lane < V; lane += lane_step) {
    std::vector<double> x(size_t(lh) * lw);
    double norm2 = 0;
    for (int i = 0; i < lh * lw; ++i) {
      x[size_t(i)] = frame[size_t(i) * V + lane];
      norm2 += x[size_t(i)] * x[size_t(i)];
    }
    const double bound = 2 * eps * logn * std::sqrt(norm2) + 1e-30;
    const std::vector<cd> ref = direct_dft(x, lh, lw, -1);
    double worst = 0;
    for (int u = 0; u < lh; ++u)
      for (int k = 0; k < wc; ++k) {
        const float* e = spec.data() + (ptrdiff_t(u) * wc + k) * fstride;
        const cd got(e[lane], e[V + lane]);
        worst = std::max(worst, std::abs(got - ref[size_t(u) * lw + k]));
      }
    worst_ratio_seen = std::max(worst_ratio_seen, worst / bound);
    ASSERT_LE(worst, bound) << "r2c " << lh << "x" << lw << " rows [" << rb << "," << re << ") lane " << lane;
  }

  // c2r of the spectrum just computed: rows [rb2, re2) must be lh*lw * x.
  const int rb2 = lh / 3, re2 = lh - lh / 4;
  for (size_t i = 0; i < back.size(); ++i) back[i] = NAN;
  c2r_2d(plan, spec.data(), fstride, rb2, re2, back.data(), scratch.data());
  for (int lane = 0; lane < V; ++lane) {
    double norm2 = 0;
    for (int i = 0; i < lh * lw; ++i) norm2 += double(frame[size_t(i) * V + lane]) * frame[size_t(i) * V + lane];
    // Round trip: forward error scaled by n plus the inverse's own.
    const double bound = 4 * eps * logn * std::sqrt(norm2) * lh * lw + 1e-30;
    double worst = 0;
    for (int h = rb2; h < re2; ++h)
      for (int j = 0; j < lw; ++j) {
        const size_t i = (size_t(h) * lw + j) * V + lane;
        worst = std::max(worst, std::abs(double(back[i]) - double(lh) * lw * frame[i]));
      }
    ASSERT_LE(worst, bound) << "c2r " << lh << "x" << lw << " lane " << lane;
  }
}

std::vector<int> smooth_up_to(int n) {
  std::vector<int> v;
  for (int i = 1; i <= n; ++i)
    if (is_smooth(i)) v.push_back(i);
  return v;
}

TEST(Fft, SmoothNumbers) {
  EXPECT_TRUE(is_smooth(1));
  EXPECT_TRUE(is_smooth(30));
  EXPECT_TRUE(is_smooth(225));
  EXPECT_FALSE(is_smooth(7));
  EXPECT_FALSE(is_smooth(0));
  EXPECT_EQ(next_smooth(29), 30);
  EXPECT_EQ(next_smooth(31), 32);
  EXPECT_EQ(next_smooth(13), 15);
  EXPECT_EQ(next_smooth(97), 100);
}

TEST(Fft, SquareSizesVsDirectDft) {
  for (int n : smooth_up_to(64)) check_size(n, n, 0, n, 1000 + uint64_t(n));
  std::printf("worst error / bound: %.3f\n", worst_ratio_seen);
}

TEST(Fft, RectangularSizesVsDirectDft) {
  for (int lh : smooth_up_to(64))
    for (int lw : {1, 2, 3, 5, 6, 9, 15, 16, 25, 30, 32})
      if (lh != lw) check_size(lh, lw, 0, lh, uint64_t(lh * 100 + lw));
  std::printf("worst error / bound: %.3f\n", worst_ratio_seen);
}

TEST(Fft, PrunedRows) {
  // Only rows [rb, re) non-zero, odd and even counts, touching either end.
  check_size(32, 32, 2, 29, 1);
  check_size(30, 30, 0, 5, 2);
  check_size(30, 30, 27, 30, 3);
  check_size(15, 16, 7, 8, 4);
  check_size(16, 15, 0, 0, 5);
}

TEST(Fft, LargeSizesVsDirectDft) {
  for (int n : {75, 96, 120, 128, 225, 240}) check_size(n, n, 0, n, uint64_t(n));
  std::printf("worst error / bound: %.3f\n", worst_ratio_seen);
}

TEST(Cgemm, MatchesNaiveComplexLoops) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<float> U(-1.f, 1.f);
  for (int m : {1, 5, 6, 7, 13, 32})
    for (int nb : {1, 2, 3, 5})
      for (int l : {1, 3, 17, 48})
        for (int mode = 0; mode < 3; ++mode) {
          const bool conj_a = mode == 2, conj_b = mode == 1;
          // A lane-blocked along l: A(i, l) at (i*LB + l/16)*32 + l%16.
          const int lb = (l + V - 1) / V;
          AlignedBuffer<float> a(size_t(m) * lb * 2 * V), b(size_t(l) * nb * 2 * V + 32),
              c(size_t(m) * (nb + 1) * 2 * V), pa(packed_a_floats(m, l));
          for (auto* buf : {&a, &b})
            for (size_t i = 0; i < buf->size(); ++i) (*buf)[i] = U(rng);
          for (size_t i = 0; i < c.size(); ++i) c[i] = NAN;
          pack_a(m, l, a.data(), ptrdiff_t(V) * lb * 2 * V, ptrdiff_t(lb) * 2 * V, 2 * V, 1, conj_a, pa.data());
          const ptrdiff_t b_ls = ptrdiff_t(nb) * 2 * V, c_is = ptrdiff_t(nb + 1) * 2 * V;
          cgemm(m, nb, l, pa.data(), b.data(), b_ls, c.data(), c_is, conj_b);
          for (int i = 0; i < m; ++i)
            for (int jb = 0; jb < nb; ++jb)
              for (int lane = 0; lane < V; ++lane) {
                cd ref = 0;
                double mag = 0;
                for (int k = 0; k < l; ++k) {
                  const float* ae = a.data() + (ptrdiff_t(i) * lb + k / V) * 2 * V + k % V;
                  cd av(ae[0], ae[V]);
                  const float* be = b.data() + k * b_ls + jb * 2 * V + lane;
                  cd bv(be[0], be[V]);
                  if (conj_a) av = std::conj(av);
                  if (conj_b) bv = std::conj(bv);
                  ref += av * bv;
                  mag += std::abs(av) * std::abs(bv);
                }
                const float* ce = c.data() + i * c_is + jb * 2 * V + lane;
                const cd got(ce[0], ce[V]);
                ASSERT_LE(std::abs(got - ref), 2.0 * (l + 2) * FLT_EPSILON * mag + 1e-30)
                    << "m" << m << " nb" << nb << " l" << l << " mode" << mode;
              }
        }
}

}  // namespace
}  // namespace convlab::cpu::fft
