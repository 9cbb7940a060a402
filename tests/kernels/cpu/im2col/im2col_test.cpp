// im2col against its definition, col2im against a naive scatter of the same
// definition (exact: small-integer data), over stride, asymmetric-ish pad
// (pad larger than the filter reach), dilation, groups, padded ldcol, and
// thread counts 1 and 2. Untouched column padding must keep its guard value.
// The small-image plane path (im2col_plane.hpp) runs most of these shapes on an
// AVX2 / AVX-512 CPU; its ISA variants are also checked directly, on their own
// shapes (stride 1 and 2, Q up to 32, dilation, the widest reach it takes).
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "core/device.hpp"
#include "kernels/cpu/im2col/im2col.hpp"
#include "kernels/cpu/im2col/im2col_plane.hpp"

namespace convlab::cpu {
namespace {

ConvShape make(int n, int c, int h, int w, int k, int r, int s, int pad_h, int pad_w, int sh_, int sw, int dh, int dw,
               int g) {
  ConvShape x{n, c, h, w, k, r, s, 0, 0, pad_h, pad_w, pad_h, pad_w, sh_, sw, dh, dw, g};
  x.p = (h + 2 * pad_h - dh * (r - 1) - 1) / sh_ + 1;
  x.q = (w + 2 * pad_w - dw * (s - 1) - 1) / sw + 1;
  return x;
}

// x with bottom / right padding end_h / end_w (p, q follow).
ConvShape asym(ConvShape x, int end_h, int end_w) {
  x.pad_h_end = end_h;
  x.pad_w_end = end_w;
  x.p = (x.padded_h() - x.dil_h * (x.r - 1) - 1) / x.stride_h + 1;
  x.q = (x.padded_w() - x.dil_w * (x.s - 1) - 1) / x.stride_w + 1;
  return x;
}

std::string str(const ConvShape& s) {
  return "c" + std::to_string(s.c) + " h" + std::to_string(s.h) + "w" + std::to_string(s.w) + " r" +
         std::to_string(s.r) + "s" + std::to_string(s.s) + " pad" + std::to_string(s.pad_h) + "," +
         std::to_string(s.pad_w) + " end" + std::to_string(s.pad_h_end) + "," + std::to_string(s.pad_w_end) + " stride" + std::to_string(s.stride_h) + "," + std::to_string(s.stride_w) +
         " dil" + std::to_string(s.dil_h) + "," + std::to_string(s.dil_w) + " g" + std::to_string(s.groups);
}

std::vector<ConvShape> shapes() {
  return {
      make(2, 3, 7, 9, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1),   make(2, 4, 8, 8, 4, 3, 3, 0, 0, 2, 2, 1, 1, 2),
      make(2, 2, 11, 10, 2, 5, 3, 2, 1, 1, 2, 1, 1, 1), make(2, 2, 9, 9, 2, 3, 3, 2, 2, 1, 1, 2, 2, 1),
      make(2, 3, 13, 13, 6, 11, 11, 0, 0, 4, 4, 1, 1, 1), make(2, 6, 5, 6, 6, 1, 1, 0, 0, 1, 1, 1, 1, 3),
      make(2, 2, 4, 4, 2, 3, 3, 3, 3, 1, 1, 1, 1, 1),   make(2, 2, 6, 7, 2, 2, 3, 1, 0, 3, 2, 2, 1, 2),
      // asymmetric padding (benchdnn's ih5oh8kh3ph3: 3 above, 2 below; a negative end leaves the last
      // rows unread) and 1-D (H = 1, one filter row)
      asym(make(2, 3, 5, 6, 4, 3, 3, 3, 0, 1, 1, 1, 1, 1), 2, 2),
      asym(make(2, 2, 9, 8, 2, 3, 3, 1, 2, 2, 3, 1, 1, 2), -1, 0),
      asym(make(2, 3, 1, 11, 4, 1, 3, 0, 1, 1, 2, 1, 2, 1), 0, 3),
      // output rows of 16, 20, 7 (ResNet's res5 stride 2) and 40 (the row path)
      make(2, 2, 32, 32, 2, 3, 3, 1, 1, 2, 2, 1, 1, 1), make(1, 2, 40, 40, 2, 3, 3, 1, 1, 2, 2, 1, 1, 1),
      make(2, 3, 14, 14, 2, 3, 3, 1, 1, 2, 2, 1, 1, 1), make(1, 2, 80, 80, 2, 3, 3, 1, 1, 2, 2, 1, 1, 1),
  };
}

// The column matrix by its definition (guard value 555 where nothing is written).
std::vector<float> definition(const ConvShape& sh, int g, const std::vector<float>& src, int64_t ld) {
  const int nb = sh.n, pq = sh.p * sh.q, rows = sh.cg() * sh.r * sh.s;
  std::vector<float> want(size_t(rows * ld), 555.0f);
  for (int i = 0; i < nb; ++i)
    for (int c = 0; c < sh.cg(); ++c)
      for (int r = 0; r < sh.r; ++r)
        for (int s = 0; s < sh.s; ++s)
          for (int p = 0; p < sh.p; ++p)
            for (int q = 0; q < sh.q; ++q) {
              const int ih = p * sh.stride_h - sh.pad_h + r * sh.dil_h;
              const int iw = q * sh.stride_w - sh.pad_w + s * sh.dil_w;
              const bool in = ih >= 0 && ih < sh.h && iw >= 0 && iw < sh.w;
              const size_t o = size_t(((c * sh.r + r) * sh.s + s) * ld + i * pq + p * sh.q + q);
              want[o] = in ? src[size_t(((i * sh.c + g * sh.cg() + c) * sh.h + ih) * sh.w + iw)] : 0.0f;
            }
  return want;
}

class Im2colTest : public ::testing::TestWithParam<int> {};

TEST_P(Im2colTest, MatchesDefinitionAndAdjoint) {
  const int threads = GetParam();
  std::mt19937 rng(3);
  std::uniform_int_distribution<int> d(-4, 4);
  for (const ConvShape& sh : shapes()) {
    const int nb = sh.n, pq = sh.p * sh.q, rows = sh.cg() * sh.r * sh.s;
    const int64_t ld = int64_t(nb) * pq + 5;
    std::vector<float> src(size_t(sh.n) * sh.c * sh.h * sh.w);
    for (auto& x : src) x = float(d(rng));
    for (int g = 0; g < sh.groups; ++g) {
      std::vector<float> col(size_t(rows * ld), 555.0f);
      const std::vector<float> want = definition(sh, g, src, ld);
      im2col(sh, nb, g, src.data(), col.data(), ld, threads);
      EXPECT_EQ(col, want) << str(sh) << " group " << g;

      // col2im: scatter-add of a random column matrix; other groups' channels untouched.
      std::vector<float> cm(col.size());
      for (auto& x : cm) x = float(d(rng));
      std::vector<float> ds(src.size(), 999.0f), wd(src.size(), 999.0f);
      for (int i = 0; i < nb; ++i)
        for (int c = 0; c < sh.cg(); ++c)
          for (int y = 0; y < sh.h * sh.w; ++y) wd[size_t((i * sh.c + g * sh.cg() + c) * sh.h * sh.w + y)] = 0;
      for (int i = 0; i < nb; ++i)
        for (int c = 0; c < sh.cg(); ++c)
          for (int r = 0; r < sh.r; ++r)
            for (int s = 0; s < sh.s; ++s)
              for (int p = 0; p < sh.p; ++p)
                for (int q = 0; q < sh.q; ++q) {
                  const int ih = p * sh.stride_h - sh.pad_h + r * sh.dil_h;
                  const int iw = q * sh.stride_w - sh.pad_w + s * sh.dil_w;
                  if (ih < 0 || ih >= sh.h || iw < 0 || iw >= sh.w) continue;
                  wd[size_t(((i * sh.c + g * sh.cg() + c) * sh.h + ih) * sh.w + iw)] +=
                      cm[size_t(((c * sh.r + r) * sh.s + s) * ld + i * pq + p * sh.q + q)];
                }
      col2im(sh, nb, g, cm.data(), ld, ds.data(), threads);
      EXPECT_EQ(ds, wd) << str(sh) << " group " << g;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Threads, Im2colTest, ::testing::Values(1, 2));

// One ISA variant of the plane path against the definition: each (image, channel) plane through a
// zero-bordered buffer as im2col fills it, its rows into a column matrix with a padded ldcol.
void check_plane(Im2colPlaneRows rows_fn, const std::string& isa) {
  std::mt19937 rng(5);
  std::uniform_int_distribution<int> d(-4, 4);
  std::vector<ConvShape> cases;
  for (int st = 1; st <= 2; ++st)
    for (int w : {3, 7, 14, 15, 16, 17, 28, 31, 32, 33, 56, 57, 63, 64})
      for (int pad : {0, 1, 2}) {
        ConvShape sh = make(2, 2, w, w, 2, 3, 3, pad, pad, st, st, 1, 1, 1);
        if (sh.p > 0 && sh.q > 0 && im2col_plane_applies(sh)) cases.push_back(sh);
      }
  cases.push_back(make(2, 2, 13, 13, 2, 3, 3, 2, 2, 2, 2, 2, 2, 1));   // dilation 2
  cases.push_back(make(2, 2, 9, 100, 2, 3, 5, 1, 2, 1, 2, 1, 16, 1));  // (S - 1) dil_w = 64, the widest reach
  cases.push_back(asym(make(2, 2, 9, 9, 2, 3, 3, 1, 1, 2, 2, 1, 1, 1), -1, 0));
  int ran = 0;
  for (const ConvShape& sh : cases) {
    if (!im2col_plane_applies(sh)) continue;
    ++ran;
    const int64_t ld = int64_t(sh.n) * sh.p * sh.q + 3;
    std::vector<float> src(size_t(sh.n) * sh.c * sh.h * sh.w);
    for (auto& x : src) x = float(d(rng));
    std::vector<float> col(size_t(sh.c * sh.r * sh.s * ld), 555.0f);
    for (int i = 0; i < sh.n; ++i)
      for (int c = 0; c < sh.c; ++c) {
        const int bw = plane_width(sh);
        std::vector<float> buf(size_t(kPlaneRows) * kPlaneWidth, 0.0f);
        for (int ih = 0; ih < sh.h && ih + sh.pad_h < plane_rows(sh); ++ih)
          for (int iw = 0; iw < sh.w; ++iw)
            buf[size_t((ih + sh.pad_h) * bw + sh.pad_w + iw)] = src[size_t(((i * sh.c + c) * sh.h + ih) * sh.w + iw)];
        rows_fn(sh, buf.data(), col.data() + int64_t(c) * sh.r * sh.s * ld + i * sh.p * sh.q, ld);
      }
    EXPECT_EQ(col, definition(sh, 0, src, ld)) << isa << " " << str(sh);
  }
  EXPECT_GE(ran, 60) << "the plane path's cases";
}

TEST(Im2colPlane, Avx2MatchesDefinition) {
  if (!(cpu_info().avx2 && cpu_info().fma)) GTEST_SKIP() << "no AVX2 on this CPU";
  check_plane(im2col_plane_rows_avx2, "avx2");
}

TEST(Im2colPlane, Avx512MatchesDefinition) {
  if (cpu_info().isa() != "avx512") GTEST_SKIP() << "no AVX-512 on this CPU (" << cpu_info().isa() << ")";
  check_plane(im2col_plane_rows_avx512, "avx512");
}

TEST(Im2colPlane, TakesOnlyWhatItCan) {
  EXPECT_TRUE(im2col_plane_applies(make(16, 512, 14, 14, 512, 3, 3, 1, 1, 2, 2, 1, 1, 1)));  // res5 stride 2
  EXPECT_TRUE(im2col_plane_applies(make(16, 128, 14, 14, 32, 3, 3, 1, 1, 1, 1, 1, 1, 1)));   // DenseNet block3
  EXPECT_TRUE(im2col_plane_applies(make(16, 128, 56, 56, 128, 3, 3, 1, 1, 2, 2, 1, 1, 1)));  // res3 stride 2
  EXPECT_FALSE(im2col_plane_applies(make(1, 2, 80, 80, 2, 3, 3, 1, 1, 2, 2, 1, 1, 1)));      // Q = 40
  EXPECT_FALSE(im2col_plane_applies(make(1, 2, 9, 9, 2, 3, 3, 1, 1, 3, 3, 1, 1, 1)));        // stride 3
  EXPECT_TRUE(im2col_plane_applies(make(1, 2, 9, 120, 2, 3, 5, 1, 2, 1, 2, 1, 24, 1)));      // reach 128
  EXPECT_FALSE(im2col_plane_applies(make(1, 2, 9, 120, 2, 3, 5, 1, 2, 1, 2, 1, 25, 1)));     // reach 132
  EXPECT_EQ(plane_width(make(16, 512, 14, 14, 512, 3, 3, 1, 1, 2, 2, 1, 1, 1)), 64);
  EXPECT_EQ(plane_width(make(16, 128, 56, 56, 128, 3, 3, 1, 1, 2, 2, 1, 1, 1)), 128);
}

}  // namespace
}  // namespace convlab::cpu
