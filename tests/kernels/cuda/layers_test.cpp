// kernels/cuda/layers (the training engine's non-convolution layers) under the
// SIMT emulator, against fp64 host references of the formulas in layers.hpp /
// net/layers.cpp, on small ragged shapes with NaN-prefilled outputs.
//
// Tolerances (u = 2^-24 the float unit roundoff, ud = 2^-53 the double one):
//   - relu, bias_add, dropout, maxpool fwd: exact. One float operation (or none)
//     per element; rounding the exact fp64 result of a + b or a * b to float is
//     the correctly rounded float operation (53 >= 2 * 24 + 2: double rounding is
//     innocuous), so the fp64 reference rounded to float must match bit for bit.
//   - sums of N terms in double then rounded to float (bias_grad):
//     u |ref| + 3 N ud sum|terms| (GPU and reference each within N ud sum|terms|
//     of the exact sum, then one rounding to float).
//   - LRN, softmax, sgd: per test, from the operations each side performs.
// LRN and max pooling: layers_lrn_pool_test.cpp.
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


// ---- relu -------------------------------------------------------------------------

TEST(CudaLayersRelu, ForwardBackwardExact) {
  for (int64_t count : {0, 1, 37, 300, 1029}) {
    SCOPED_TRACE("count " + std::to_string(count));
    auto x = padded(uniform(size_t(count), -1.f, 1.f, 1));
    if (count >= 4) {
      x[0] = 0.f;
      x[1] = -0.f;
      x[2] = kNaN;  // not > 0: 0, as the CPU
      x[3] = -kInf;
    }
    const auto dy = padded(uniform(size_t(count), -1.f, 1.f, 2));
    DeviceArray<float> dx_in(x), ddy(dy);
    auto y = poisoned(count), dx = poisoned(count);
    relu_fwd(count, dx_in.get(), y.get(), nullptr);
    relu_bwd(count, dx_in.get(), ddy.get(), dx.get(), nullptr);
    const auto hy = y.download(), hdx = dx.download();
    for (int64_t i = 0; i < count; ++i) {
      ASSERT_EQ(bits(hy[i]), bits(x[i] > 0.f ? x[i] : 0.f)) << i;
      ASSERT_EQ(bits(hdx[i]), bits(x[i] > 0.f ? dy[i] : 0.f)) << i;
    }
    if (count == 0) {
      EXPECT_TRUE(std::isnan(hy[0]) && std::isnan(hdx[0])) << "written with count 0";
    }
  }
}

// ---- bias ---------------------------------------------------------------------------

struct BiasShape {
  int n, k;
  int64_t pq;
};

TEST(CudaLayersBias, AddIsExact) {
  for (const BiasShape& s : std::initializer_list<BiasShape>{{2, 5, 37}, {3, 70, 1}, {1, 1, 1}, {4, 3, 6}, {0, 3, 5}}) {
    SCOPED_TRACE("n " + std::to_string(s.n) + " k " + std::to_string(s.k) + " pq " + std::to_string(s.pq));
    const int64_t total = int64_t(s.n) * s.k * s.pq;
    const auto y0 = padded(uniform(size_t(total), -2.f, 2.f, 3));
    const auto b = uniform(size_t(s.k), -1.f, 1.f, 4);
    DeviceArray<float> y(y0), db(b);
    bias_add(s.n, s.k, s.pq, db.get(), y.get(), nullptr);
    const auto hy = y.download();
    for (int64_t i = 0; i < total; ++i)
      ASSERT_EQ(bits(hy[i]), bits(float(double(y0[i]) + double(b[i / s.pq % s.k])))) << i;
    if (total == 0) {
      EXPECT_TRUE(std::isnan(hy[0]));
    }
  }
}

// Both paths: pq >= 32 (one 512-thread block per channel; n * pq below and above
// 512, with and without a carry in the stepped coordinates) and pq < 32 (channels
// across lanes, k not a multiple of 32, n not a multiple of 8), and empty n.
// Small k: the emulator (under TSan above all) pays per thread and barrier.
TEST(CudaLayersBias, GradMatchesReferenceAndIsDeterministic) {
  struct Case {
    BiasShape s;
    bool twice;  // run again and compare the bits
  };
  for (const Case& t : std::initializer_list<Case>{{{3, 3, 37}, false},
                                                   {{1, 2, 1000}, false},
                                                   {{3, 2, 300}, true},
                                                   {{2, 2, 32}, false},
                                                   {{5, 70, 1}, true},
                                                   {{9, 3, 5}, false},
                                                   {{1, 1, 1}, false},
                                                   {{13, 33, 31}, false},
                                                   {{0, 2, 37}, false},
                                                   {{0, 4, 1}, false}}) {
    const BiasShape& s = t.s;
    SCOPED_TRACE("n " + std::to_string(s.n) + " k " + std::to_string(s.k) + " pq " + std::to_string(s.pq));
    const int64_t total = int64_t(s.n) * s.k * s.pq;
    const auto dy = padded(uniform(size_t(total), -1.f, 1.f, 5));
    DeviceArray<float> ddy(dy);
    auto db = poisoned(s.k), db2 = poisoned(s.k);
    bias_grad(s.n, s.k, s.pq, ddy.get(), db.get(), nullptr);
    if (t.twice) bias_grad(s.n, s.k, s.pq, ddy.get(), db2.get(), nullptr);
    const auto h = db.download(), h2 = db2.download();
    const int64_t terms = int64_t(s.n) * s.pq;
    for (int kk = 0; kk < s.k; ++kk) {
      double ref = 0, abs_sum = 0;
      for (int i = 0; i < s.n; ++i)
        for (int64_t j = 0; j < s.pq; ++j) {
          const double t = dy[size_t((int64_t(i) * s.k + kk) * s.pq + j)];
          ref += t;
          abs_sum += std::abs(t);
        }
      const double tol = kU * std::abs(ref) + 3.0 * double(terms) * kUd * abs_sum;
      ASSERT_LE(std::abs(double(h[kk]) - ref), tol) << "k " << kk;
      if (t.twice) {
        ASSERT_EQ(bits(h[kk]), bits(h2[kk])) << "two runs differ at k " << kk;
      }
    }
  }
}

// ---- dropout ---------------------------------------------------------------------------------

TEST(CudaLayersDropout, MaskIsTheCpuStreamBitForBit) {
  const int64_t count = 4099;
  const float p = 0.3f;
  const uint64_t key = 0x0123456789ABCDEFull;
  const auto x = uniform(size_t(count), -1.f, 1.f, 14), dy = uniform(size_t(count), -1.f, 1.f, 15);
  DeviceArray<float> dx_in(x), ddy(dy);
  auto y = poisoned(count), mask = poisoned(count), dx = poisoned(count);
  dropout_fwd(count, p, key, dx_in.get(), y.get(), mask.get(), nullptr);
  dropout_bwd(count, ddy.get(), mask.get(), dx.get(), nullptr);
  const auto hy = y.download(), hm = mask.download(), hdx = dx.download();
  const float keep = 1.f / (1.f - p);
  int64_t zeros = 0;
  for (int64_t i = 0; i < count; ++i) {
    const float m = rng::dropout_mask(key, i, p, keep);
    ASSERT_EQ(bits(hm[i]), bits(m)) << i;
    ASSERT_EQ(bits(hy[i]), bits(float(double(x[i]) * m))) << i;
    ASSERT_EQ(bits(hdx[i]), bits(float(double(dy[i]) * m))) << i;
    zeros += hm[i] == 0.f;
  }
  // zeros ~ Binomial(count, p): within 5 standard deviations
  const double frac = double(zeros) / count, sigma = std::sqrt(p * (1 - p) / count);
  EXPECT_NEAR(frac, p, 5 * sigma);
  // another key, another mask
  auto mask2 = poisoned(count);
  dropout_fwd(count, p, key + 1, dx_in.get(), y.get(), mask2.get(), nullptr);
  EXPECT_NE(mask2.download(), hm);
}

TEST(CudaLayersDropout, ZeroProbabilityIsIdentityAndEmptyIsANoOp) {
  const int64_t count = 1000;
  const auto x = uniform(size_t(count), -1.f, 1.f, 16);
  DeviceArray<float> dx_in(x);
  auto y = poisoned(count), mask = poisoned(count);
  dropout_fwd(count, 0.f, 42, dx_in.get(), y.get(), mask.get(), nullptr);
  const auto hy = y.download(), hm = mask.download();
  for (int64_t i = 0; i < count; ++i) {
    ASSERT_EQ(bits(hy[i]), bits(x[i])) << i;
    ASSERT_EQ(hm[i], 1.f) << i;
  }
  auto y0 = poisoned(0), m0 = poisoned(0), dx0 = poisoned(0);
  dropout_fwd(0, 0.5f, 42, dx_in.get(), y0.get(), m0.get(), nullptr);
  dropout_bwd(0, dx_in.get(), m0.get(), dx0.get(), nullptr);
  EXPECT_TRUE(std::isnan(y0.download()[0]) && std::isnan(m0.download()[0]) && std::isnan(dx0.download()[0]));
}

// ---- softmax cross-entropy ------------------------------------------------------------------

struct SoftmaxRef {
  std::vector<double> loss, d, tol_loss;  // tol_loss: the loss's bound, which dlogits' also uses
};

// fp64 reference. The loss is lse - z[label], lse = zmax + log(sum exp(z - zmax)):
// each side's sum of classes terms in (0, 1] errs by <= (classes + 2) ud relative
// (additions, exp of <= 1 ulp), so log(sum) by that absolutely plus its own rounding;
// zmax + log and the final subtraction add ud |lse| and ud |loss|:
//   |loss_gpu - loss_ref| <= 2 (classes + 4) ud (1 + |lse| + |zmax| + |z_label|).
SoftmaxRef softmax_ref(int n, int classes, const std::vector<float>& z, const std::vector<int32_t>& labels) {
  SoftmaxRef r;
  r.loss.resize(size_t(n));
  r.tol_loss.resize(size_t(n));
  r.d.resize(size_t(n) * classes);
  for (int i = 0; i < n; ++i) {
    const float* zi = z.data() + size_t(i) * classes;
    double zmax = -INFINITY;
    for (int c = 0; c < classes; ++c) zmax = std::max(zmax, double(zi[c]));
    double sum = 0;
    for (int c = 0; c < classes; ++c) sum += std::exp(zi[c] - zmax);
    const double lse = zmax + std::log(sum);
    const int l = labels[size_t(i)];
    r.loss[size_t(i)] = lse - zi[l];
    r.tol_loss[size_t(i)] = 2.0 * (classes + 4) * kUd * (1 + std::abs(lse) + std::abs(zmax) + std::abs(zi[l]));
    for (int c = 0; c < classes; ++c)
      r.d[size_t(i) * classes + c] = (std::exp(zi[c] - lse) - (c == l ? 1.0 : 0.0)) / n;
  }
  return r;
}

struct SoftmaxOut {
  std::vector<double> loss;
  std::vector<float> d;
};

SoftmaxOut run_softmax(int n, int classes, const std::vector<float>& z, const std::vector<int32_t>& labels,
                       bool with_d = true) {
  DeviceArray<float> dz(padded(z));
  DeviceArray<int32_t> dl(labels.empty() ? std::vector<int32_t>{0} : labels);
  auto d = poisoned(int64_t(n) * classes);
  DeviceArray<double> loss(std::vector<double>(size_t(std::max(n, 1)), std::numeric_limits<double>::quiet_NaN()));
  softmax_xent(n, classes, dz.get(), dl.get(), with_d ? d.get() : nullptr, loss.get(), nullptr);
  return {loss.download(), d.download()};
}

std::vector<int32_t> labels_for(int n, int classes, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_int_distribution<int> d(0, classes - 1);
  std::vector<int32_t> l(static_cast<size_t>(n));
  for (auto& v : l) v = d(gen);
  if (n >= 2) {
    l[0] = 0;
    l[1] = classes - 1;
  }
  return l;
}

// dlogits: the double value (exp(z - lse) - onehot) / n errs by <= (tol_loss + 4 ud) / n
// (an absolute error e in lse is a relative one in the softmax, which is <= 1),
// then one rounding to float: u |ref|. A row's exact sum is 0, so |sum_c d_c| is
// bounded by the sum of the per-element bounds (plus the host's double sum).
void check_softmax(int n, int classes, const std::vector<float>& z, const std::vector<int32_t>& labels) {
  SCOPED_TRACE("n " + std::to_string(n) + " classes " + std::to_string(classes));
  const SoftmaxOut g = run_softmax(n, classes, z, labels);
  const SoftmaxRef r = softmax_ref(n, classes, z, labels);
  for (int i = 0; i < n; ++i) {
    ASSERT_TRUE(std::isfinite(g.loss[size_t(i)])) << i;
    ASSERT_LE(std::abs(g.loss[size_t(i)] - r.loss[size_t(i)]), r.tol_loss[size_t(i)]) << "loss " << i;
    double row = 0, row_abs = 0, row_tol = 0;
    for (int c = 0; c < classes; ++c) {
      const size_t j = size_t(i) * classes + c;
      const double tol = kU * std::abs(r.d[j]) + (r.tol_loss[size_t(i)] + 4 * kUd) / n;
      ASSERT_LE(std::abs(g.d[j] - r.d[j]), tol) << "dlogits " << i << ", " << c;
      row += g.d[j];
      row_abs += std::abs(g.d[j]);
      row_tol += tol;
    }
    EXPECT_LE(std::abs(row), row_tol + classes * kUd * row_abs) << "row " << i << " of dlogits does not sum to 0";
  }
  if (n == 0) {
    EXPECT_TRUE(std::isnan(g.loss[0]) && std::isnan(g.d[0]));
  }
}

TEST(CudaLayersSoftmax, MatchesReference) {
  for (auto [n, classes] : std::vector<std::pair<int, int>>{{1, 1}, {3, 10}, {2, 37}, {2, 300}, {1, 1000}, {0, 10}}) {
    const auto z = uniform(size_t(n) * classes, -5.f, 5.f, 17);
    check_softmax(n, classes, z, labels_for(n, classes, 18));
  }
}

TEST(CudaLayersSoftmax, HugeLogitsStayFinite) {
  const int n = 3, classes = 13;
  auto z = uniform(size_t(n) * classes, -1.f, 1.f, 19);
  for (int c = 0; c < classes; ++c) z[size_t(c)] = 1e4f + float(c);  // row 0: all huge
  z[size_t(classes)] = 1e4f;                                         // row 1: one huge, one hugely negative
  z[size_t(classes) + 1] = -1e4f;
  for (int c = 0; c < classes; ++c) z[size_t(2 * classes + c)] = -1e4f - float(c % 3);  // row 2: all very negative
  check_softmax(n, classes, z, {5, 1, 12});
}

TEST(CudaLayersSoftmax, DeterministicAndOptionalGradient) {
  const int n = 2, classes = 300;
  const auto z = uniform(size_t(n) * classes, -5.f, 5.f, 20);
  const auto labels = labels_for(n, classes, 21);
  const SoftmaxOut a = run_softmax(n, classes, z, labels), b = run_softmax(n, classes, z, labels);
  const SoftmaxOut c = run_softmax(n, classes, z, labels, false);
  for (int i = 0; i < n; ++i) {
    EXPECT_EQ(bits(a.loss[size_t(i)]), bits(b.loss[size_t(i)])) << i;
    EXPECT_EQ(bits(a.loss[size_t(i)]), bits(c.loss[size_t(i)])) << "loss without dlogits " << i;
  }
  for (size_t j = 0; j < a.d.size(); ++j) ASSERT_EQ(bits(a.d[j]), bits(b.d[j])) << j;
  EXPECT_TRUE(std::all_of(c.d.begin(), c.d.end(), [](float v) { return std::isnan(v); })) << "dlogits written";
}

TEST(CudaLayersSoftmax, BadLabelGivesNaN) {
  const SoftmaxOut g = run_softmax(2, 5, uniform(10, -1.f, 1.f, 22), {5, 2});
  EXPECT_TRUE(std::isnan(g.loss[0]));
  EXPECT_TRUE(std::isfinite(g.loss[1]));
  for (int c = 0; c < 5; ++c) {
    EXPECT_TRUE(std::isnan(g.d[size_t(c)]));
    EXPECT_TRUE(std::isfinite(g.d[size_t(5 + c)]));
  }
}

// ---- sgd ---------------------------------------------------------------------------------------

// v' = m v + (g + wd w), w' = w - lr v' in float: v' has <= 3 roundings of terms bounded by
// T = |m v| + |g| + |wd w|, so |v' - ref| <= 4 u T (one u of slack for second-order terms
// and fused multiply-adds); w' = fl(w - fl(lr v')) errs by <= 2 u (|w| + |lr v'|) plus
// lr times v's error: |w' - ref| <= 3 u (|w| + |lr v'|) + lr 4 u T.
TEST(CudaLayersSgd, MatchesReference) {
  struct Opt {
    float lr, momentum, wd;
  };
  for (int64_t count : {0, 1, 1237})
    for (const Opt& o : {Opt{0.01f, 0.9f, 5e-4f}, Opt{0.1f, 0.f, 0.f}}) {
      SCOPED_TRACE("count " + std::to_string(count) + " momentum " + std::to_string(o.momentum));
      const auto w0 = padded(uniform(size_t(count), -1.f, 1.f, 23)), g = padded(uniform(size_t(count), -1.f, 1.f, 24)),
                 v0 = padded(uniform(size_t(count), -1.f, 1.f, 25));
      DeviceArray<float> w(w0), dg(g), v(v0);
      if (count == 0) {
        w.upload({kNaN});
        v.upload({kNaN});
      }
      sgd_update(count, o.lr, o.momentum, o.wd, w.get(), dg.get(), v.get(), nullptr);
      const auto hw = w.download(), hv = v.download();
      for (int64_t i = 0; i < count; ++i) {
        const double mv = double(o.momentum) * v0[i], dw = double(o.wd) * w0[i];
        const double vr = mv + (g[i] + dw), wr = w0[i] - double(o.lr) * vr;
        const double tv = 4 * kU * (std::abs(mv) + std::abs(g[i]) + std::abs(dw));
        ASSERT_LE(std::abs(hv[i] - vr), tv) << "v " << i;
        ASSERT_LE(std::abs(hw[i] - wr), 3 * kU * (std::abs(w0[i]) + std::abs(o.lr * vr)) + o.lr * tv) << "w " << i;
      }
      if (count == 0) {
        EXPECT_TRUE(std::isnan(hw[0]) && std::isnan(hv[0]));
      }
    }
}

}  // namespace
}  // namespace convlab::cuda
