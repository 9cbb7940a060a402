// Makes the fp64 oracle trustworthy: hand-computed cases, the adjoint
// identities <fwd(x,w), dy> = <x, bwd_data(dy,w)> = <w, bwd_filter(x,dy)>, an
// independent brute-force forward (explicit padding and dilated filter), and the
// backward passes checked column by column against the forward's Jacobian.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "algorithms/algorithm.hpp"
#include "core/problem.hpp"
#include "core/tensor.hpp"
#include "kernels/ref/conv_ref.hpp"
#include "convlab/testing.hpp"

namespace convlab {
namespace {

struct RefRun {
  ConvShape sh;
  std::vector<float> src, wei, dst;
  explicit RefRun(const ConvProblem& p)
      : sh(to_shape(p)), src(size_t(p.src_elems())), wei(size_t(p.wei_elems())), dst(size_t(p.dst_elems())) {}
  std::vector<double> fwd() {
    std::vector<double> o(dst.size());
    ref::conv_fwd(sh, src.data(), wei.data(), o.data(), nullptr);
    return o;
  }
  std::vector<double> bwd_data() {
    std::vector<double> o(src.size());
    ref::conv_bwd_data(sh, dst.data(), wei.data(), o.data(), nullptr);
    return o;
  }
  std::vector<double> bwd_filter() {
    std::vector<double> o(wei.size());
    ref::conv_bwd_filter(sh, src.data(), dst.data(), o.data(), nullptr);
    return o;
  }
};

void iota(std::vector<float>& v, float start = 1) {
  for (size_t i = 0; i < v.size(); ++i) v[i] = start + float(i);
}

TEST(Reference, HandComputedForwardNoPad) {
  RefRun r(parse_problem("mb1ic1ih3oc1kh2"));
  iota(r.src);                 // 1..9
  r.wei = {1, 0, 0, -1};       // x[p][q] - x[p+1][q+1] = -4
  EXPECT_EQ(r.fwd(), (std::vector<double>{-4, -4, -4, -4}));
}

TEST(Reference, HandComputedForwardPadded) {
  RefRun r(parse_problem("mb1ic1ih3oc1kh3ph1"));
  iota(r.src);
  r.wei.assign(9, 1);  // neighbourhood sums with zero padding
  EXPECT_EQ(r.fwd(), (std::vector<double>{12, 21, 16, 27, 45, 33, 24, 39, 28}));
}

TEST(Reference, HandComputedStrideDilation) {
  RefRun r(parse_problem("mb1ic1ih5oc1kh2sh2dh1"));  // dilation 2: taps at 0 and 2
  iota(r.src, 0);                                    // x[i][j] = 5i + j
  r.wei = {1, 10, 100, 1000};
  // P = (5 - 3) / 2 + 1 = 2; out[p][q] = x[2p][2q] + 10 x[2p][2q+2] + 100 x[2p+2][2q] + 1000 x[2p+2][2q+2]
  auto x = [](int i, int j) { return 5.0 * i + j; };
  std::vector<double> want;
  for (int p = 0; p < 2; ++p)
    for (int q = 0; q < 2; ++q)
      want.push_back(x(2 * p, 2 * q) + 10 * x(2 * p, 2 * q + 2) + 100 * x(2 * p + 2, 2 * q) + 1000 * x(2 * p + 2, 2 * q + 2));
  EXPECT_EQ(r.fwd(), want);
}

// benchdnn's 1-D string with the right padding from ow: 2 zeros on the left,
// none on the right (symmetric pw2 would give 5 outputs, not 3).
TEST(Reference, HandComputed1dAsymmetricPadding) {
  const ConvProblem p = parse_problem("mb1ic1iw3oc1ow3kw3pw2");
  ASSERT_EQ(p.h, 1);
  ASSERT_EQ(p.pad_w, 2);
  ASSERT_EQ(p.pad_w_end, 0);
  RefRun r(p);
  r.src = {1, 2, 3};
  r.wei = {1, 10, 100};
  // y[q] = sum_s wei[s] x[q - 2 + s]
  EXPECT_EQ(r.fwd(), (std::vector<double>{100, 10 + 200, 1 + 20 + 300}));
  r.dst = {1, 0, 0};  // dx[i] = wei[i + 2]
  EXPECT_EQ(r.bwd_data(), (std::vector<double>{100, 0, 0}));
  r.dst = {0, 0, 1};  // dx[i] = wei[i]
  EXPECT_EQ(r.bwd_data(), (std::vector<double>{1, 10, 100}));
  r.dst = {1, 1, 1};  // dw[s] = sum_q x[q - 2 + s]
  EXPECT_EQ(r.bwd_filter(), (std::vector<double>{1, 1 + 2, 1 + 2 + 3}));
}

// 2-D, both axes asymmetric: 2 rows above and none below, no column on the
// left and one on the right.
TEST(Reference, HandComputed2dAsymmetricPadding) {
  const ConvProblem p = parse_problem("mb1ic1ih2iw2oc1oh3ow2kh2kw2ph2pw0");
  ASSERT_EQ(p.pad_h_end, 0);
  ASSERT_EQ(p.pad_w_end, 1);
  RefRun r(p);
  r.src = {1, 2, 3, 4};
  r.wei = {1, 10, 100, 1000};
  // y[p][q] = sum w[r][s] x[p - 2 + r][q + s]: row 0 reads only padding, row 1
  // the filter's second row over x's first, row 2 the whole filter.
  EXPECT_EQ(r.fwd(), (std::vector<double>{0, 0, 100 * 1 + 1000 * 2, 100 * 2, 1 + 10 * 2 + 100 * 3 + 1000 * 4,
                                          2 + 100 * 4}));
  r.dst = {0, 0, 0, 0, 1, 0};  // dy at (2, 0) scatters the filter onto x
  EXPECT_EQ(r.bwd_data(), (std::vector<double>{1, 10, 100, 1000}));
  r.dst = {0, 0, 0, 1, 0, 0};  // dy at (1, 1): only tap (1, 0) lands on x (0, 1)
  EXPECT_EQ(r.bwd_data(), (std::vector<double>{0, 100, 0, 0}));
  r.dst = {1, 1, 1, 1, 1, 1};  // dw[r][s] = sum over outputs of x[p - 2 + r][q + s]
  EXPECT_EQ(r.bwd_filter(), (std::vector<double>{1 + 2, 2, 1 + 2 + 3 + 4, 2 + 4}));
}

TEST(Reference, HandComputedGroups) {
  RefRun r(parse_problem("g2mb1ic2ih1oc4kh1"));  // group 0: in 0 -> out 0,1; group 1: in 1 -> out 2,3
  r.src = {3, 5};
  r.wei = {1, 2, 3, 4};
  EXPECT_EQ(r.fwd(), (std::vector<double>{3, 6, 15, 20}));
  r.dst = {1, 1, 1, 1};
  EXPECT_EQ(r.bwd_data(), (std::vector<double>{1 + 2, 3 + 4}));
  r.dst = {1, 2, 3, 4};
  EXPECT_EQ(r.bwd_filter(), (std::vector<double>{3, 6, 15, 20}));
}

TEST(Reference, HandComputedBackwardData) {
  RefRun r(parse_problem("mb1ic1ih3oc1kh2"));
  r.wei = {1, 2, 3, 4};
  r.dst = {1, 0, 0, 0};  // scatters the filter at (0, 0)
  EXPECT_EQ(r.bwd_data(), (std::vector<double>{1, 2, 0, 3, 4, 0, 0, 0, 0}));
  r.dst = {0, 0, 0, 1};  // ... at (1, 1)
  EXPECT_EQ(r.bwd_data(), (std::vector<double>{0, 0, 0, 0, 1, 2, 0, 3, 4}));
}

TEST(Reference, HandComputedBackwardFilter) {
  RefRun r(parse_problem("mb1ic1ih3oc1kh2"));
  iota(r.src);
  r.dst = {1, 1, 1, 1};
  EXPECT_EQ(r.bwd_filter(), (std::vector<double>{12, 16, 24, 28}));
}

double dot(const std::vector<float>& a, const std::vector<double>& b) {
  double s = 0;
  for (size_t i = 0; i < a.size(); ++i) s += double(a[i]) * b[i];
  return s;
}

TEST(Reference, AdjointIdentities) {
  int checked = 0;
  for (const auto& tp : testing::edge_sweep()) {
    RefRun r(tp.problem);
    fill_uniform(r.src.data(), r.src.size(), 11);
    fill_uniform(r.wei.data(), r.wei.size(), 12);
    fill_uniform(r.dst.data(), r.dst.size(), 13);
    const double a = dot(r.dst, r.fwd());
    const double b = dot(r.src, r.bwd_data());
    const double c = dot(r.wei, r.bwd_filter());
    const double scale = std::max({std::fabs(a), 1.0});
    EXPECT_NEAR(a, b, 1e-12 * scale * double(tp.problem.dst_elems())) << tp.label;
    EXPECT_NEAR(a, c, 1e-12 * scale * double(tp.problem.dst_elems())) << tp.label;
    ++checked;
  }
  EXPECT_GT(checked, 20);
}

// Forward computed a different way: materialise the zero-padded input and the
// dilated (holes filled with zeros) filter, then a dense strided correlation.
std::vector<double> brute_forward(const ConvProblem& p, const std::vector<float>& src, const std::vector<float>& wei) {
  // The top / left padding, the image, the bottom / right padding (none when
  // negative: those last rows are never read).
  const int Hp = p.pad_h + p.h + std::max(p.pad_h_end, 0), Wp = p.pad_w + p.w + std::max(p.pad_w_end, 0);
  const int Rd = (p.r - 1) * p.dil_h + 1, Sd = (p.s - 1) * p.dil_w + 1;
  std::vector<double> out(size_t(p.dst_elems()), 0.0);
  for (int n = 0; n < p.n; ++n)
    for (int k = 0; k < p.k; ++k) {
      const int g = k / p.k_per_group();
      for (int cl = 0; cl < p.c_per_group(); ++cl) {
        const int c = g * p.c_per_group() + cl;
        std::vector<double> padded(size_t(Hp) * Wp, 0.0), dil(size_t(Rd) * Sd, 0.0);
        for (int i = 0; i < p.h; ++i)
          for (int j = 0; j < p.w; ++j)
            padded[size_t(i + p.pad_h) * Wp + j + p.pad_w] = src[((size_t(n) * p.c + c) * p.h + i) * p.w + j];
        for (int i = 0; i < p.r; ++i)
          for (int j = 0; j < p.s; ++j)
            dil[size_t(i * p.dil_h) * Sd + j * p.dil_w] = wei[((size_t(k) * p.c_per_group() + cl) * p.r + i) * p.s + j];
        for (int y = 0; y < p.p(); ++y)
          for (int x = 0; x < p.q(); ++x) {
            double acc = 0;
            for (int i = 0; i < Rd; ++i)
              for (int j = 0; j < Sd; ++j)
                acc += dil[size_t(i) * Sd + j] * padded[size_t(y * p.stride_h + i) * Wp + x * p.stride_w + j];
            out[((size_t(n) * p.k + k) * p.p() + y) * p.q() + x] += acc;
          }
      }
    }
  return out;
}

TEST(Reference, BruteForceForwardOnRandomShapes) {
  auto problems = testing::random_sweep(99, 40);
  for (const auto& tp : testing::edge_sweep()) problems.push_back(tp);
  for (const auto& tp : problems) {
    RefRun r(tp.problem);
    fill_uniform(r.src.data(), r.src.size(), 21);
    fill_uniform(r.wei.data(), r.wei.size(), 22);
    const auto got = r.fwd();
    const auto want = brute_forward(tp.problem, r.src, r.wei);
    for (size_t i = 0; i < got.size(); ++i)
      ASSERT_NEAR(got[i], want[i], 1e-12 * (1 + std::fabs(want[i]))) << tp.label << " [" << tp.problem.key() << "] i=" << i;
  }
}

// The backward passes are the transposes of the forward's Jacobians: column j of
// d fwd / d src is fwd(e_j, w), so bwd_data(dy)[j] = <dy, fwd(e_j, w)>; likewise
// bwd_filter(x, dy)[j] = <dy, fwd(x, e_j)>.
TEST(Reference, BackwardEqualsJacobianTranspose) {
  auto problems = testing::random_sweep(5, 15);
  problems.push_back({"groups", parse_problem("g2mb1ic4ih5oc4kh3ph1sh2")});
  problems.push_back({"dilated", parse_problem("mb1ic2ih7oc2kh3dh1ph1")});
  for (const auto& tp : problems) {
    const ConvProblem& p = tp.problem;
    if (p.src_elems() > 800 || p.wei_elems() > 400) continue;
    RefRun r(p);
    fill_uniform(r.src.data(), r.src.size(), 31);
    fill_uniform(r.wei.data(), r.wei.size(), 32);
    fill_uniform(r.dst.data(), r.dst.size(), 33);
    const auto bd = r.bwd_data();
    const auto bf = r.bwd_filter();
    RefRun e(p);
    e.wei = r.wei;
    for (size_t j = 0; j < e.src.size(); ++j) {
      std::fill(e.src.begin(), e.src.end(), 0.f);
      e.src[j] = 1;
      ASSERT_NEAR(bd[j], dot(r.dst, e.fwd()), 1e-12 * (1 + std::fabs(bd[j]))) << tp.label << " bwd-data j=" << j;
    }
    e.src = r.src;
    for (size_t j = 0; j < e.wei.size(); ++j) {
      std::fill(e.wei.begin(), e.wei.end(), 0.f);
      e.wei[j] = 1;
      ASSERT_NEAR(bf[j], dot(r.dst, e.fwd()), 1e-12 * (1 + std::fabs(bf[j]))) << tp.label << " bwd-filter j=" << j;
    }
  }
}

TEST(Reference, MagnitudeBoundsValue) {
  const ConvProblem p = parse_problem("g2mb2ic6ih7oc4kh3ph1");
  RefRun r(p);
  fill_uniform(r.src.data(), r.src.size(), 41);
  fill_uniform(r.wei.data(), r.wei.size(), 42);
  std::vector<double> v(r.dst.size()), m(r.dst.size());
  ref::conv_fwd(r.sh, r.src.data(), r.wei.data(), v.data(), m.data());
  for (size_t i = 0; i < v.size(); ++i) EXPECT_LE(std::fabs(v[i]), m[i] * (1 + 1e-15));
}

}  // namespace
}  // namespace convlab
