// kernels/cuda/layers LRN and max pooling under the SIMT emulator, against
// fp64 host references (the other layers and the tolerance rules: layers_test.cpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "kernels/counter_rng.hpp"
#include "kernels/cuda/layers/layers.hpp"
#include "kernels/cuda/simt/memory.hpp"
#include "tests/kernels/cuda/layers_support.hpp"

namespace convlab::cuda {
namespace {

using namespace layers_test;

// ---- LRN ------------------------------------------------------------------------------

struct LrnCase {
  int n, c;
  int64_t hw;
  LrnParams lp;
};

// fp64 forward from the formula (pow directly, not the kernels' two square roots).
void lrn_ref(const LrnCase& t, const std::vector<double>& x, std::vector<double>& y, std::vector<double>& scale) {
  const int half = t.lp.size / 2;
  const double alpha = t.lp.alpha, k = t.lp.k, beta = t.lp.beta;
  y.assign(x.size(), 0);
  scale.assign(x.size(), 0);
  for (int n = 0; n < t.n; ++n)
    for (int c = 0; c < t.c; ++c)
      for (int64_t p = 0; p < t.hw; ++p) {
        double s = 0;
        for (int j = std::max(0, c - half); j <= std::min(t.c - 1, c + half); ++j) {
          const double v = x[size_t((int64_t(n) * t.c + j) * t.hw + p)];
          s += v * v;
        }
        const size_t i = size_t((int64_t(n) * t.c + c) * t.hw + p);
        scale[i] = k + alpha * s;
        y[i] = x[i] * std::pow(scale[i], -beta);
      }
}

LrnCase lrn_case(int n, int c, int64_t hw, int size, float alpha, float beta, float k) {
  LrnCase t{n, c, hw, {}};
  t.lp.size = size;
  t.lp.alpha = alpha;
  t.lp.beta = beta;
  t.lp.k = k;
  return t;
}

std::string str(const LrnCase& t) {
  return "n " + std::to_string(t.n) + " c " + std::to_string(t.c) + " hw " + std::to_string(t.hw) + " size " +
         std::to_string(t.lp.size) + " beta " + std::to_string(t.lp.beta);
}

const std::vector<LrnCase>& lrn_cases() {
  static const std::vector<LrnCase> cases = {
      lrn_case(2, 7, 13, 5, 0.1f, 0.75f, 2.f),   // c > size
      lrn_case(1, 3, 5, 5, 0.3f, 0.75f, 1.f),    // c < size: every window clipped
      lrn_case(3, 1, 11, 5, 0.2f, 0.75f, 2.f),   // c = 1
      lrn_case(1, 6, 40, 3, 0.05f, 0.6f, 1.5f),  // beta != 0.75: pow
      lrn_case(1, 4, 1, 5, 1e-4f, 0.75f, 2.f),   // AlexNet's parameters, hw = 1
      lrn_case(0, 5, 7, 5, 0.1f, 0.75f, 2.f),    // empty
  };
  return cases;
}

// Forward: the kernel's double result has relative error <= (size + 10) ud (size - 1
// additions of exact squares of floats, k + alpha s, two square roots or a pow of
// <= 2 ulp, a division, the product with x), the reference's likewise; rounding to
// float adds u. So |gpu - ref| <= (u + 2 (size + 10) ud) |ref|, for y and for scale.
TEST(CudaLayersLrn, ForwardMatchesReference) {
  for (const LrnCase& t : lrn_cases()) {
    SCOPED_TRACE(str(t));
    const int64_t total = int64_t(t.n) * t.c * t.hw;
    const auto x = padded(uniform(size_t(total), -2.f, 2.f, 6));
    DeviceArray<float> dx(x);
    auto y = poisoned(total), scale = poisoned(total);
    lrn_fwd(t.n, t.c, t.hw, t.lp, dx.get(), y.get(), scale.get(), nullptr);
    const auto hy = y.download(), hs = scale.download();
    std::vector<double> yr, sr;
    lrn_ref(t, std::vector<double>(x.begin(), x.begin() + total), yr, sr);
    const double rel = kU + 2.0 * (t.lp.size + 10) * kUd;
    for (int64_t i = 0; i < total; ++i) {
      ASSERT_LE(std::abs(hs[i] - sr[i]), rel * std::abs(sr[i])) << "scale " << i;
      ASSERT_LE(std::abs(hy[i] - yr[i]), rel * std::abs(yr[i])) << "y " << i;
    }
    if (total == 0) {
      EXPECT_TRUE(std::isnan(hy[0]) && std::isnan(hs[0]));
    }
  }
}

// Backward against the formula evaluated in fp64 on the same float x, y, scale, dy:
//   A = dy_j s_j^-beta, B = 2 alpha beta x_j sum_i dy_i y_i / s_i, dx = A - B.
// Each side's double evaluation errs by <= (size + 10) ud (|A| + |B|abs), |B|abs the
// sum with absolute terms; rounding to float adds u |dx|.
TEST(CudaLayersLrn, BackwardMatchesFormula) {
  for (const LrnCase& t : lrn_cases()) {
    SCOPED_TRACE(str(t));
    const int64_t total = int64_t(t.n) * t.c * t.hw;
    const auto x = padded(uniform(size_t(total), -2.f, 2.f, 7));
    const auto dy = padded(uniform(size_t(total), -1.f, 1.f, 8));
    DeviceArray<float> dxin(x), ddy(dy);
    auto y = poisoned(total), scale = poisoned(total), dx = poisoned(total);
    lrn_fwd(t.n, t.c, t.hw, t.lp, dxin.get(), y.get(), scale.get(), nullptr);
    lrn_bwd(t.n, t.c, t.hw, t.lp, dxin.get(), y.get(), scale.get(), ddy.get(), dx.get(), nullptr);
    const auto hy = y.download(), hs = scale.download(), hdx = dx.download();
    const int half = t.lp.size / 2;
    const double alpha = t.lp.alpha, beta = t.lp.beta;
    for (int n = 0; n < t.n; ++n)
      for (int c = 0; c < t.c; ++c)
        for (int64_t p = 0; p < t.hw; ++p) {
          double s = 0, s_abs = 0;
          for (int i = std::max(0, c - half); i <= std::min(t.c - 1, c + half); ++i) {
            const size_t o = size_t((int64_t(n) * t.c + i) * t.hw + p);
            const double term = double(dy[o]) * hy[o] / hs[o];
            s += term;
            s_abs += std::abs(term);
          }
          const size_t j = size_t((int64_t(n) * t.c + c) * t.hw + p);
          const double a = dy[j] * std::pow(double(hs[j]), -beta), b = 2.0 * alpha * beta * x[j] * s;
          const double ref = a - b;
          const double tol = kU * std::abs(ref) + 2.0 * (t.lp.size + 10) * kUd *
                                                      (std::abs(a) + std::abs(2.0 * alpha * beta * x[j]) * s_abs);
          ASSERT_LE(std::abs(hdx[j] - ref), tol) << "n " << n << " c " << c << " p " << p;
        }
    if (total == 0) {
      EXPECT_TRUE(std::isnan(hdx[0]));
    }
  }
}

// Gradient check: the kernel's dx against the derivative of L(x) = sum_i dy_i y_i(x)
// by central differences of the fp64 forward, Richardson-extrapolated:
// R = (4 D(h/2) - D(h)) / 3. Tolerance:
//   - the kernel reads y and scale rounded to float (relative u each) and rounds dx:
//     <= 3 u (|A| + |B|abs) (A, B as in BackwardMatchesFormula);
//   - R's truncation error is O(h^4), well below |D(h) - D(h/2)| (which is ~3/4 of
//     D(h)'s O(h^2) error), which the tolerance adds;
//   - each L is within 40 ud sum|dy_i y_i| of exact; divided by the step 2h (h/2 in R's
//     4 D(h/2) / 3 term, weight 4/3): <= 4 * 40 ud sum|dy y| / h in all.
// alpha is large so that the normalisation term B is a real part of the gradient.
TEST(CudaLayersLrn, BackwardMatchesCentralDifferences) {
  for (const LrnCase& t : {lrn_case(1, 7, 2, 5, 0.5f, 0.75f, 1.f), lrn_case(2, 4, 3, 3, 0.4f, 0.6f, 1.f)}) {
    SCOPED_TRACE(str(t));
    const int64_t total = int64_t(t.n) * t.c * t.hw;
    const auto x = uniform(size_t(total), -1.5f, 1.5f, 9);
    const auto dy = uniform(size_t(total), -1.f, 1.f, 10);
    DeviceArray<float> dxin(x), ddy(dy);
    auto y = poisoned(total), scale = poisoned(total), dx = poisoned(total);
    lrn_fwd(t.n, t.c, t.hw, t.lp, dxin.get(), y.get(), scale.get(), nullptr);
    lrn_bwd(t.n, t.c, t.hw, t.lp, dxin.get(), y.get(), scale.get(), ddy.get(), dx.get(), nullptr);
    const auto hdx = dx.download(), hy = y.download(), hs = scale.download();

    const std::vector<double> xd(x.begin(), x.end());
    auto loss = [&](const std::vector<double>& xv, double& abs_sum) {
      std::vector<double> yv, sv;
      lrn_ref(t, xv, yv, sv);
      double l = 0;
      abs_sum = 0;
      for (size_t i = 0; i < yv.size(); ++i) {
        l += dy[i] * yv[i];
        abs_sum += std::abs(dy[i] * yv[i]);
      }
      return l;
    };
    auto diff = [&](size_t j, double h, double& abs_sum) {
      std::vector<double> xp = xd, xm = xd;
      xp[j] += h;
      xm[j] -= h;
      double a1, a2;
      const double d = (loss(xp, a1) - loss(xm, a2)) / (2 * h);
      abs_sum = std::max(a1, a2);
      return d;
    };
    const double h = 0x1p-10;
    const int half = t.lp.size / 2;
    const double alpha = t.lp.alpha, beta = t.lp.beta;
    double max_b = 0;
    for (size_t j = 0; j < size_t(total); ++j) {
      double abs1, abs2;
      const double d1 = diff(j, h, abs1), d2 = diff(j, h / 2, abs2);
      const double r = (4 * d2 - d1) / 3;
      // |A| + |B|abs of the formula at j, for the float-input part of the tolerance
      const int64_t p = int64_t(j) % t.hw, c = int64_t(j) / t.hw % t.c, n = int64_t(j) / (t.hw * t.c);
      double s_abs = 0;
      for (int64_t i = std::max<int64_t>(0, c - half); i <= std::min<int64_t>(t.c - 1, c + half); ++i) {
        const size_t o = size_t((n * t.c + i) * t.hw + p);
        s_abs += std::abs(double(dy[o]) * hy[o] / hs[o]);
      }
      const double a = std::abs(dy[j] * std::pow(double(hs[j]), -beta));
      const double b = std::abs(2.0 * alpha * beta * x[j]) * s_abs;
      max_b = std::max(max_b, b);
      const double tol = 3 * kU * (a + b) + std::abs(d1 - d2) + 4 * 40 * kUd * std::max(abs1, abs2) / h;
      ASSERT_LE(std::abs(hdx[j] - r), tol) << "element " << j << " numeric " << r;
    }
    EXPECT_GT(max_b, 0.05) << "the normalisation term should matter in this check";
  }
}

// ---- max pooling ---------------------------------------------------------------------------

PoolShape pool(int64_t planes, int h, int w, int size, int stride) {
  PoolShape ps;
  ps.planes = planes;
  ps.h = h;
  ps.w = w;
  ps.size = size;
  ps.stride = stride;
  ps.p = (h - size) / stride + 1;
  ps.q = (w - size) / stride + 1;
  return ps;
}

std::string str(const PoolShape& ps) {
  return std::to_string(ps.planes) + " x " + std::to_string(ps.h) + "x" + std::to_string(ps.w) + " size " +
         std::to_string(ps.size) + " stride " + std::to_string(ps.stride);
}

// Small integers: many ties inside windows.
std::vector<float> tie_data(int64_t n, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_int_distribution<int> d(-2, 2);
  std::vector<float> v(size_t(std::max<int64_t>(n, 1)));
  for (auto& x : v) x = float(d(gen));
  return v;
}

// Reference max pooling: the maximum m of the window's non-NaN values and the
// first row-major position holding m; a window without a value above -inf reports
// its first position (the CPU's scan from -inf with strict >).
void pool_ref(const PoolShape& ps, const std::vector<float>& x, std::vector<float>& y, std::vector<int32_t>& am) {
  const int64_t hw = int64_t(ps.h) * ps.w, pq = int64_t(ps.p) * ps.q;
  y.assign(size_t(ps.planes * pq), 0);
  am.assign(size_t(ps.planes * pq), 0);
  for (int64_t pl = 0; pl < ps.planes; ++pl)
    for (int p = 0; p < ps.p; ++p)
      for (int q = 0; q < ps.q; ++q) {
        auto at = [&](int r, int s) { return (p * ps.stride + r) * ps.w + q * ps.stride + s; };
        float m = -kInf;
        for (int r = 0; r < ps.size; ++r)
          for (int s = 0; s < ps.size; ++s)
            if (!std::isnan(x[size_t(pl * hw + at(r, s))])) m = std::max(m, x[size_t(pl * hw + at(r, s))]);
        int32_t first = at(0, 0);
        if (m > -kInf) {
          bool found = false;
          for (int r = 0; r < ps.size && !found; ++r)
            for (int s = 0; s < ps.size && !found; ++s)
              if (x[size_t(pl * hw + at(r, s))] == m) {
                first = at(r, s);
                found = true;
              }
        }
        y[size_t(pl * pq + p * ps.q + q)] = m;
        am[size_t(pl * pq + p * ps.q + q)] = first;
      }
}

const std::vector<PoolShape>& pool_cases() {
  static const std::vector<PoolShape> cases = {
      pool(3, 7, 6, 3, 2),    // overlapping; column 5 in no window
      pool(2, 8, 9, 2, 2),    // disjoint; column 8 in no window
      pool(1, 5, 5, 3, 1),    // heavy overlap: up to 9 windows per element
      pool(2, 3, 3, 3, 3),    // one window per plane
      pool(1, 11, 13, 3, 2),  // AlexNet's pooling
      pool(0, 7, 6, 3, 2),    // empty
  };
  return cases;
}

TEST(CudaLayersMaxPool, ForwardFirstMaximumWins) {
  for (const PoolShape& ps : pool_cases()) {
    SCOPED_TRACE(str(ps));
    const int64_t in = ps.planes * ps.h * ps.w, out = ps.planes * ps.p * ps.q;
    auto x = tie_data(in, 11);
    if (ps.planes >= 2) {
      std::fill(x.begin() + ps.h * ps.w, x.begin() + 2 * ps.h * ps.w, -kInf);  // plane 1: all -inf
      x[0] = kNaN;                                                            // never a maximum
      x[size_t(ps.h * ps.w + 1)] = kNaN;  // plane 1 keeps -inf, argmax the window's first position
    }
    DeviceArray<float> dx(x);
    auto y = poisoned(out);
    DeviceArray<int32_t> am(std::vector<int32_t>(size_t(std::max<int64_t>(out, 1)), -7));
    maxpool_fwd(ps, dx.get(), y.get(), am.get(), nullptr);
    const auto hy = y.download();
    const auto ham = am.download();
    std::vector<float> yr;
    std::vector<int32_t> amr;
    pool_ref(ps, x, yr, amr);
    for (int64_t o = 0; o < out; ++o) {
      ASSERT_EQ(bits(hy[o]), bits(yr[size_t(o)])) << o;
      ASSERT_EQ(ham[o], amr[size_t(o)]) << o;
    }
    if (out == 0) {
      EXPECT_TRUE(std::isnan(hy[0]) && ham[0] == -7);
    }
  }
}

// Tolerance against fp64: an element sums m <= 9 dy in float from 0, error
// <= m u sum|terms|. Also bit-equal to the CPU's order (dx[argmax[o]] += dy[o] for o ascending).
TEST(CudaLayersMaxPool, BackwardGathersOverlappingWindows) {
  for (const PoolShape& ps : pool_cases()) {
    SCOPED_TRACE(str(ps));
    const int64_t hw = int64_t(ps.h) * ps.w, pq = int64_t(ps.p) * ps.q;
    const int64_t in = ps.planes * hw, out = ps.planes * pq;
    auto x = tie_data(in, 12);
    if (ps.planes == 1 && ps.h == 5) x[2 * 5 + 2] = 100.f;  // the centre wins all 9 windows
    const auto dy = padded(uniform(size_t(out), -1.f, 1.f, 13));
    DeviceArray<float> dxin(x), ddy(dy);
    auto y = poisoned(out), dx = poisoned(in);
    DeviceArray<int32_t> am(size_t(std::max<int64_t>(out, 1)));
    maxpool_fwd(ps, dxin.get(), y.get(), am.get(), nullptr);
    maxpool_bwd(ps, ddy.get(), am.get(), dx.get(), nullptr);
    const auto ham = am.download();
    const auto hdx = dx.download();
    std::vector<double> ref(size_t(in), 0), abs_sum(size_t(in), 0);
    std::vector<int> terms(size_t(in), 0);
    std::vector<float> cpu(size_t(in), 0.f);
    for (int64_t pl = 0; pl < ps.planes; ++pl)
      for (int64_t o = 0; o < pq; ++o) {
        const size_t i = size_t(pl * hw + ham[size_t(pl * pq + o)]), oo = size_t(pl * pq + o);
        ref[i] += dy[oo];
        abs_sum[i] += std::abs(dy[oo]);
        ++terms[i];
        cpu[i] += dy[oo];
      }
    int shared = 0;
    for (int64_t i = 0; i < in; ++i) {
      ASSERT_LE(std::abs(hdx[i] - ref[size_t(i)]), terms[size_t(i)] * kU * abs_sum[size_t(i)]) << i;
      ASSERT_EQ(bits(hdx[i]), bits(cpu[size_t(i)])) << i;
      shared += terms[size_t(i)] >= 2;
    }
    if (ps.planes == 1 && ps.h == 5) {
      EXPECT_EQ(terms[12], 9);
      EXPECT_EQ(shared, 1);
    }
    if (ps.stride < ps.size && out > 0) {
      EXPECT_GT(shared, 0) << "no element won two windows";
    }
    if (in == 0) {
      EXPECT_TRUE(std::isnan(hdx[0]));
    }
  }
}

}  // namespace
}  // namespace convlab::cuda
