// LRN and max pooling of kernels/cpu/layers against plain fp64 references, on
// every ISA table this CPU has, with outputs pre-filled with NaN:
//   LRN   AlexNet's norm1 / norm2 planes and ragged shapes around the 64-pixel
//         block (hw 1, 63, 64, 65, 130), channel counts below / at / above
//         the window, sizes 1 to 7, beta 0.75 (the sqrt path) and 0.6 (powf),
//         alpha 1e-4 and 0.2. Tolerances derived per element (see lrn_tol);
//         the three ISAs give the same bits, and 1, 2 and 3 threads too.
//   pool  exact: outputs, winners (the first maximum, data full of ties) and
//         the backward's sums (the reference adds in output order too).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "tests/kernels/cpu/layers/layers_support.hpp"

namespace convlab::cpu {
namespace {

using testing::bit_mismatches;
using testing::for_each_isa;
using testing::kEps;
using testing::poisoned;
using testing::uniform;

struct LrnRef {
  std::vector<double> y, dx, mag;  // mag: |dy / q| + c2 |x| sum |t|, the backward's scale
};

LrnRef lrn_ref(int n, int c, int64_t hw, const LrnParams& lp, const std::vector<float>& x, const std::vector<float>& dy) {
  const int h = lp.size / 2;
  const size_t total = x.size();
  std::vector<double> s(total), t(total), ta(total);
  LrnRef r{std::vector<double>(total), std::vector<double>(total), std::vector<double>(total)};
  auto at = [&](int i, int ch, int64_t p) { return (int64_t(i) * c + ch) * hw + p; };
  for (int i = 0; i < n; ++i)
    for (int ch = 0; ch < c; ++ch)
      for (int64_t p = 0; p < hw; ++p) {
        double sum = 0;
        for (int j = std::max(0, ch - h); j <= std::min(c - 1, ch + h); ++j) sum += double(x[size_t(at(i, j, p))]) * x[size_t(at(i, j, p))];
        const size_t o = size_t(at(i, ch, p));
        s[o] = double(lp.k) + double(lp.alpha) * sum;
        r.y[o] = x[o] * std::pow(s[o], -double(lp.beta));
        t[o] = dy[o] * r.y[o] / s[o];
        ta[o] = std::fabs(t[o]);
      }
  const double c2 = 2.0 * lp.alpha * lp.beta;
  for (int i = 0; i < n; ++i)
    for (int ch = 0; ch < c; ++ch)
      for (int64_t p = 0; p < hw; ++p) {
        double ts = 0, tas = 0;
        for (int j = std::max(0, ch - h); j <= std::min(c - 1, ch + h); ++j) {
          ts += t[size_t(at(i, j, p))];
          tas += ta[size_t(at(i, j, p))];
        }
        const size_t o = size_t(at(i, ch, p));
        const double first = dy[o] * std::pow(s[o], -double(lp.beta));
        r.dx[o] = first - c2 * x[o] * ts;
        r.mag[o] = std::fabs(first) + c2 * std::fabs(x[o]) * tas;
      }
  return r;
}

// Per-element bounds in units of u = eps / 2. s = k + alpha * sum of `size`
// squares: (size + 2) u relative (the squares, the size - 1 additions, the
// product and the sum with k; alpha * sum <= s). y = x / s^beta adds beta
// times that, ~2.5 u for sqrt(s * sqrt(s)) (or powf's < 1 ulp) and u for the
// division. The backward's terms carry that plus the product / quotient of t
// and the window sum of t: bounded against mag (no cancellation credit).
double lrn_tol_fwd(const LrnParams& lp) { return 0.5 * kEps * (lp.beta * (lp.size + 2) + 4.5); }
double lrn_tol_bwd(const LrnParams& lp) { return 0.5 * kEps * (lp.beta * (lp.size + 2) + 2.0 * lp.size + 12); }

struct LrnCase {
  int n, c;
  int64_t hw;
  LrnParams lp;
};

void check_lrn(const LrnCase& cs) {
  const int64_t total = int64_t(cs.n) * cs.c * cs.hw;
  const auto x = uniform(total, 11, -3.f, 3.f), dy = uniform(total, 12);
  const LrnRef ref = lrn_ref(cs.n, cs.c, cs.hw, cs.lp, x, dy);
  std::vector<float> y0, dx0;
  for_each_isa([&](const LayerKernels& k) {
    for (int threads : {1, 2, 3}) {
      auto y = poisoned(total), dx = poisoned(total);
      lrn_fwd(cs.n, cs.c, cs.hw, cs.lp, x.data(), y.data(), threads);
      lrn_bwd(cs.n, cs.c, cs.hw, cs.lp, x.data(), dy.data(), dx.data(), threads);
      if (y0.empty()) {
        y0 = y;
        dx0 = dx;
        double worst_f = 0, worst_b = 0;
        for (int64_t i = 0; i < total; ++i) {
          const size_t o = size_t(i);
          worst_f = std::max(worst_f, std::fabs(y[o] - ref.y[o]) / (std::fabs(ref.y[o]) + 1e-300));
          worst_b = std::max(worst_b, std::fabs(dx[o] - ref.dx[o]) / (ref.mag[o] + 1e-300));
        }
        EXPECT_LE(worst_f, lrn_tol_fwd(cs.lp)) << "forward";
        EXPECT_LE(worst_b, lrn_tol_bwd(cs.lp)) << "backward";
        std::printf("lrn n%d c%d hw%lld size %d alpha %g beta %g: worst fwd %.2f eps (bound %.2f), bwd %.2f eps (bound %.2f)\n",
                    cs.n, cs.c, (long long)cs.hw, cs.lp.size, double(cs.lp.alpha), double(cs.lp.beta), worst_f / kEps,
                    lrn_tol_fwd(cs.lp) / kEps, worst_b / kEps, lrn_tol_bwd(cs.lp) / kEps);
      } else {
        EXPECT_EQ(bit_mismatches(y, y0), 0) << k.isa << " threads " << threads;
        EXPECT_EQ(bit_mismatches(dx, dx0), 0) << k.isa << " threads " << threads;
      }
    }
  });
}

TEST(CpuLayersLrn, AlexNetPlanesMatchFp64) {
  check_lrn({2, 96, 55 * 55, {}});   // norm1
  check_lrn({1, 256, 27 * 27, {}});  // norm2
}

TEST(CpuLayersLrn, RaggedShapesSizesAndBetas) {
  for (int64_t hw : {1, 63, 64, 65, 130})
    for (int c : {1, 2, 4, 5, 6, 9})
      for (LrnParams lp : {LrnParams{}, LrnParams{3, 0.2f, 0.75f, 1.f}, LrnParams{7, 0.2f, 0.6f, 2.f},
                           LrnParams{1, 0.5f, 0.75f, 1.f}}) {
        SCOPED_TRACE("hw " + std::to_string(hw) + " c " + std::to_string(c) + " size " + std::to_string(lp.size));
        check_lrn({2, c, hw, lp});
      }
}

// The GPU test (tests/net/layers_cuda_test.cpp) compares the GPU (fp64, one
// rounding) with this code at norm1's size on uniform [-1, 1) data, errors
// relative to the largest output: < 4 eps forward, < 16 eps backward. Against
// fp64 this code must leave room for the GPU's half ulp.
TEST(CpuLayersLrn, AlexNetConstantsLeaveTheGpuTestItsMargin) {
  const int n = 2, c = 96;
  const int64_t hw = 55 * 55, total = int64_t(n) * c * hw;
  const auto x = uniform(total, 1), dy = uniform(total, 2);
  const LrnRef ref = lrn_ref(n, c, hw, {}, x, dy);
  std::vector<float> y(static_cast<size_t>(total)), dx(static_cast<size_t>(total));
  lrn_fwd(n, c, hw, {}, x.data(), y.data(), 0);
  lrn_bwd(n, c, hw, {}, x.data(), dy.data(), dx.data(), 0);
  double my = 0, mdx = 0, ey = 0, edx = 0;
  for (size_t i = 0; i < size_t(total); ++i) {
    my = std::max(my, std::fabs(ref.y[i]));
    mdx = std::max(mdx, std::fabs(ref.dx[i]));
    ey = std::max(ey, std::fabs(y[i] - ref.y[i]));
    edx = std::max(edx, std::fabs(dx[i] - ref.dx[i]));
  }
  std::printf("norm1 vs fp64, relative to the largest output: y %.2f eps, dx %.2f eps\n", ey / my / kEps,
              edx / mdx / kEps);
  EXPECT_LT(ey / my, 2.5 * kEps);
  EXPECT_LT(edx / mdx, 8 * kEps);
}

// ---- max pooling ----------------------------------------------------------------------

struct PoolRef {
  std::vector<float> y, dx;
  std::vector<uint8_t> am;
};

PoolRef pool_ref(const PoolShape& ps, const std::vector<float>& x, const std::vector<float>& dy) {
  const int64_t hw = int64_t(ps.h) * ps.w, pq = int64_t(ps.p) * ps.q;
  PoolRef r{std::vector<float>(size_t(ps.planes * pq)), std::vector<float>(size_t(ps.planes * hw), 0.f),
            std::vector<uint8_t>(size_t(ps.planes * pq))};
  for (int64_t pl = 0; pl < ps.planes; ++pl)
    for (int p = 0; p < ps.p; ++p)
      for (int q = 0; q < ps.q; ++q) {
        float best = -INFINITY;
        int at = 0;
        for (int rr = 0; rr < ps.size; ++rr)
          for (int s = 0; s < ps.size; ++s) {
            const float v = x[size_t(pl * hw + int64_t(p * ps.stride + rr) * ps.w + q * ps.stride + s)];
            if (v > best) {
              best = v;
              at = rr * ps.size + s;
            }
          }
        const size_t o = size_t(pl * pq + p * ps.q + q);
        r.y[o] = best;
        r.am[o] = uint8_t(at);
        const int rr = at / ps.size, s = at % ps.size;
        r.dx[size_t(pl * hw + int64_t(p * ps.stride + rr) * ps.w + q * ps.stride + s)] += dy[o];
      }
  return r;
}

void check_pool(int planes, int h, int w, int size, int stride) {
  PoolShape ps{planes, h, w, (h - size) / stride + 1, (w - size) / stride + 1, size, stride};
  SCOPED_TRACE("pool " + std::to_string(h) + "x" + std::to_string(w) + " size " + std::to_string(size) + " stride " +
               std::to_string(stride));
  const int64_t in = int64_t(planes) * h * w, out = int64_t(planes) * ps.p * ps.q;
  auto x = uniform(in, 21, -4.f, 4.f);
  for (auto& v : x) v = std::round(v);  // 9 values: ties everywhere, the first maximum must win
  if (in > 5) x[5] = -INFINITY;
  const auto dy = uniform(out, 22);
  const PoolRef ref = pool_ref(ps, x, dy);
  for_each_isa([&](const LayerKernels& k) {
    for (int threads : {1, 3}) {
      auto y = poisoned(out), dx = poisoned(in);
      std::vector<uint8_t> am(size_t(out), 0xEE);
      maxpool_fwd(ps, x.data(), y.data(), am.data(), threads);
      maxpool_bwd(ps, dy.data(), am.data(), dx.data(), threads);
      EXPECT_EQ(bit_mismatches(y, ref.y), 0) << k.isa;
      EXPECT_EQ(am, ref.am) << k.isa;
      EXPECT_EQ(bit_mismatches(dx, ref.dx), 0) << k.isa;
    }
  });
}

TEST(CpuLayersPool, AlexNetShapesExact) {
  check_pool(6, 55, 55, 3, 2);  // pool1
  check_pool(6, 27, 27, 3, 2);  // pool2
  check_pool(6, 13, 13, 3, 2);  // pool5
}

TEST(CpuLayersPool, EdgeShapesExact) {
  check_pool(3, 3, 3, 3, 2);      // one output
  check_pool(2, 4, 5, 3, 2);
  check_pool(2, 7, 141, 3, 2);    // 70 outputs per row: more than one 64-lane chunk
  check_pool(2, 8, 8, 2, 2);      // non-overlapping
  check_pool(2, 9, 10, 3, 1);     // stride 1: four-way overlaps
  check_pool(2, 11, 11, 3, 3);    // the generic-stride path
  check_pool(1, 16, 16, 16, 1);   // a 256-tap window: the largest one-byte argmax
}

}  // namespace
}  // namespace convlab::cpu
