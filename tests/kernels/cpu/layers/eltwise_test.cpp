// ReLU, bias + ReLU, dropout, SGD and softmax cross-entropy of kernels/cpu/layers
// against plain fp64 (or exact) references on every ISA table this CPU has,
// over sizes around the 16-element blocks (0, 1, 15, 16, 17, ...), with NaN-
// filled outputs; each result the same bits for 1, 2 and 3 threads and on
// every ISA.
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>
#include <vector>

#include "kernels/counter_rng.hpp"
#include "tests/kernels/cpu/layers/layers_support.hpp"

namespace convlab::cpu {
namespace {

using testing::bit_mismatches;
using testing::for_each_isa;
using testing::kEps;
using testing::poisoned;
using testing::uniform;

// Every ISA and thread count gives `want`'s bits: f(threads) returns the outputs.
template <class F>
void expect_everywhere(const std::vector<float>& want, F f) {
  for_each_isa([&](const LayerKernels& k) {
    for (int threads : {1, 2, 3}) EXPECT_EQ(bit_mismatches(f(threads), want), 0) << k.isa << " threads " << threads;
  });
}

TEST(CpuLayersEltwise, ReluExact) {
  for (int64_t n : {0, 1, 15, 16, 17, 100003}) {
    auto x = uniform(n, 1);
    if (n > 3) {
      x[0] = -0.f;
      x[1] = NAN;
      x[2] = INFINITY;
    }
    const auto dy = uniform(n, 2);
    std::vector<float> y(static_cast<size_t>(n)), dx(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) {
      y[size_t(i)] = x[size_t(i)] > 0 ? x[size_t(i)] : 0.f;
      dx[size_t(i)] = x[size_t(i)] > 0 ? dy[size_t(i)] : 0.f;
    }
    expect_everywhere(y, [&](int t) {
      auto out = poisoned(n);
      relu_fwd(n, x.data(), out.data(), t);
      return out;
    });
    expect_everywhere(dx, [&](int t) {
      auto out = poisoned(n);
      relu_bwd(n, x.data(), dy.data(), out.data(), t);
      return out;
    });
    expect_everywhere(dx, [&](int t) {  // given the output instead of the input, and in place
      auto out = dy;
      relu_bwd(n, y.data(), out.data(), out.data(), t);
      return out;
    });
  }
}

// The fused epilogue gives the bits of bias then ReLU; its backward the ReLU's
// mask and a bias gradient within a few ulps of fp64 (double accumulation).
TEST(CpuLayersEltwise, BiasReluFusedEqualsUnfusedAndMatchesFp64) {
  struct Case {
    int n, k;
    int64_t pq;
  };
  for (Case c : {Case{2, 3, 1}, Case{3, 5, 17}, Case{2, 4, 55 * 55}, Case{4, 7, 169}, Case{1, 1, 0}}) {
    const int64_t total = int64_t(c.n) * c.k * c.pq;
    const auto y0 = uniform(total, 3), b = uniform(c.k, 4), dy0 = uniform(total, 5);
    std::vector<float> biased(y0), relu(static_cast<size_t>(total));
    for (int64_t i = 0; i < total; ++i) biased[size_t(i)] = y0[size_t(i)] + b[size_t(i / c.pq % c.k)];
    for (int64_t i = 0; i < total; ++i) relu[size_t(i)] = biased[size_t(i)] > 0 ? biased[size_t(i)] : 0.f;
    expect_everywhere(biased, [&](int t) {
      auto y = y0;
      bias_relu_fwd(c.n, c.k, c.pq, b.data(), false, y.data(), t);
      return y;
    });
    expect_everywhere(relu, [&](int t) {
      auto y = y0;
      bias_relu_fwd(c.n, c.k, c.pq, b.data(), true, y.data(), t);
      return y;
    });
    // backward: mask in place, then the bias gradient of the masked gradient
    std::vector<float> masked(static_cast<size_t>(total));
    for (int64_t i = 0; i < total; ++i) masked[size_t(i)] = relu[size_t(i)] > 0 ? dy0[size_t(i)] : 0.f;
    std::vector<float> db0;
    for_each_isa([&](const LayerKernels& k) {
      for (int t : {1, 2, 3}) {
        auto dy = dy0;
        auto db = poisoned(c.k);
        bias_relu_bwd(c.n, c.k, c.pq, relu.data(), dy.data(), db.data(), t);
        EXPECT_EQ(bit_mismatches(dy, masked), 0) << k.isa;
        auto db_unfused = poisoned(c.k);
        auto dy2 = masked;
        bias_relu_bwd(c.n, c.k, c.pq, nullptr, dy2.data(), db_unfused.data(), t);
        EXPECT_EQ(bit_mismatches(db_unfused, db), 0) << k.isa;
        if (db0.empty()) db0 = db;
        EXPECT_EQ(bit_mismatches(db, db0), 0) << k.isa << " threads " << t;
      }
    });
    for (int kk = 0; kk < c.k; ++kk) {
      double s = 0, sa = 0;
      for (int i = 0; i < c.n; ++i)
        for (int64_t j = 0; j < c.pq; ++j) {
          const double v = masked[size_t((int64_t(i) * c.k + kk) * c.pq + j)];
          s += v;
          sa += std::fabs(v);
        }
      // double sums (error ~ n pq 2^-53 sum|v|) rounded once to float
      EXPECT_NEAR(db0[size_t(kk)], s, 0.5 * kEps * std::fabs(s) + 1e-12 * sa) << kk;
    }
  }
}

TEST(CpuLayersEltwise, DropoutIsTheCounterRngMaskBitForBit) {
  for (float p : {0.f, 0.1f, 0.5f, 0.9f})
    for (int64_t n : {0, 1, 15, 16, 17, 1000, 70001}) {
      const uint64_t key = rng::mix(1234 + uint64_t(n)) ^ uint64_t(p * 1000);
      const float keep = 1.f / (1.f - p);
      const auto x = uniform(n, 6), dy = uniform(n, 7);
      std::vector<float> y(static_cast<size_t>(n)), dx(static_cast<size_t>(n));
      for (int64_t i = 0; i < n; ++i) {
        const float m = rng::dropout_mask(key, i, p, keep);
        y[size_t(i)] = x[size_t(i)] * m;
        dx[size_t(i)] = dy[size_t(i)] * m;
      }
      expect_everywhere(y, [&](int t) {
        auto out = poisoned(n);
        dropout_fwd(n, p, key, x.data(), out.data(), t);
        return out;
      });
      expect_everywhere(dx, [&](int t) {
        auto out = poisoned(n);
        dropout_bwd(n, p, key, dy.data(), out.data(), t);
        return out;
      });
    }
}

// One pass over several tensors = the per-tensor formula in float, the same bits.
TEST(CpuLayersEltwise, SgdOnePassOverAllTensorsExact) {
  const std::vector<int64_t> sizes = {5, 0, 17, 1000, 3};
  const float lr = 0.05f, mom = 0.9f;
  std::vector<std::vector<float>> w0, g, v0, w_want, v_want;
  for (size_t i = 0; i < sizes.size(); ++i) {
    w0.push_back(uniform(sizes[i], 10 + i));
    g.push_back(uniform(sizes[i], 20 + i));
    v0.push_back(uniform(sizes[i], 30 + i));
    w_want.push_back(w0.back());
    v_want.push_back(v0.back());
    const float wd = i % 2 ? 0.f : 5e-4f;
    for (size_t j = 0; j < size_t(sizes[i]); ++j) {
      float& v = v_want.back()[j];
      float& w = w_want.back()[j];
      v = mom * v + (g[i][j] + wd * w);
      w -= lr * v;
      // and within a few ulps of the same step in fp64
      const double vd = double(mom) * v0[i][j] + (double(g[i][j]) + double(wd) * w0[i][j]);
      EXPECT_NEAR(w, w0[i][j] - double(lr) * vd, 4 * kEps * (std::fabs(w0[i][j]) + std::fabs(lr * vd)));
    }
  }
  for_each_isa([&](const LayerKernels& k) {
    for (int t : {1, 2, 3}) {
      auto w = w0, v = v0;
      std::vector<SgdTensor> ts;
      for (size_t i = 0; i < sizes.size(); ++i)
        ts.push_back({w[i].data(), g[i].data(), v[i].data(), sizes[i], i % 2 ? 0.f : 5e-4f});
      sgd_update(ts.data(), int(ts.size()), lr, mom, t);
      for (size_t i = 0; i < sizes.size(); ++i) {
        EXPECT_EQ(bit_mismatches(w[i], w_want[i]), 0) << k.isa << " tensor " << i;
        EXPECT_EQ(bit_mismatches(v[i], v_want[i]), 0) << k.isa << " tensor " << i;
      }
    }
  });
}

TEST(CpuLayersEltwise, SoftmaxCrossEntropyMatchesFp64) {
  struct Case {
    int n, classes;
    float range;
  };
  for (Case c : {Case{1, 1, 1.f}, Case{3, 5, 3.f}, Case{32, 1000, 5.f}, Case{7, 17, 800.f}}) {
    const auto z = uniform(int64_t(c.n) * c.classes, 8, -c.range, c.range);
    std::vector<int32_t> labels(size_t(c.n));
    for (int i = 0; i < c.n; ++i) labels[size_t(i)] = (i * 37 + 3) % c.classes;
    double want = 0, dmax = 0;
    std::vector<double> dref(z.size());
    for (int i = 0; i < c.n; ++i) {
      const float* zi = z.data() + int64_t(i) * c.classes;
      double m = zi[0], s = 0;
      for (int k = 1; k < c.classes; ++k) m = std::max(m, double(zi[k]));
      for (int k = 0; k < c.classes; ++k) s += std::exp(double(zi[k]) - m);
      const double lse = m + std::log(s);
      want += lse - zi[labels[size_t(i)]];
      for (int k = 0; k < c.classes; ++k) {
        dref[size_t(int64_t(i) * c.classes + k)] = (std::exp(double(zi[k]) - lse) - (k == labels[size_t(i)])) / c.n;
        dmax = std::max(dmax, std::fabs(dref[size_t(int64_t(i) * c.classes + k)]));
      }
    }
    std::vector<float> d0;
    double loss0 = 0;
    for_each_isa([&](const LayerKernels& k) {
      for (int t : {1, 2, 3}) {
        auto d = poisoned(int64_t(z.size()));
        const double loss = softmax_xent(c.n, c.classes, z.data(), labels.data(), d.data(), t);
        EXPECT_NEAR(loss, want, 1e-13 * std::max(1.0, std::fabs(want))) << k.isa;
        double worst = 0;
        for (size_t i = 0; i < z.size(); ++i) worst = std::max(worst, std::fabs(d[i] - dref[i]));
        EXPECT_LE(worst, 1.0 * kEps * dmax) << k.isa;  // one float rounding of each (|d| <= dmax)
        EXPECT_EQ(softmax_xent(c.n, c.classes, z.data(), labels.data(), nullptr, t), loss);
        if (d0.empty()) {
          d0 = d;
          loss0 = loss;
        }
        EXPECT_EQ(bit_mismatches(d, d0), 0) << k.isa << " threads " << t;
        EXPECT_EQ(loss, loss0) << k.isa << " threads " << t;
      }
    });
  }
}

}  // namespace
}  // namespace convlab::cpu
