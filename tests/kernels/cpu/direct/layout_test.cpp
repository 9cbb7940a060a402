// Blocked-layout conversions of the direct convolution: exact round trips,
// zero padding of spatial margins and of channel lanes past C / K, reversed
// filter columns, and the interleaved-row copy.
#include <gtest/gtest.h>

#include <vector>

#include "kernels/cpu/direct/layout.hpp"

namespace convlab::cpu::direct {
namespace {

std::vector<float> iota(size_t n) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = float(i + 1);  // never 0: zeros are padding
  return v;
}

TEST(DirectLayout, BlockActPadsAndPlacesEveryElement) {
  // Widths around the 8 / 16-pixel transposes and their masked tails: only a
  // tail (7, 13), full blocks and a tail (37).
  for (int w : {7, 13, 37})
  for (int b : {1, 3, 8, 16})
    for (int cg : {1, 3, 5, 16, 17}) {  // 3 at b 3: an RGB input's interleave
      const int n = 2, groups = 2, h = 4, top = 1, left = 2;
      const ActBlocking a{n, groups, cg, h, w, std::min(b, cg), top, left, h + 3, w + 4};
      const auto src = iota(size_t(n) * groups * cg * h * w);
      std::vector<float> dst(a.elems(), -1.f);
      for (int t = 0; t < 3; ++t) block_act(a, src.data(), dst.data(), t, 3);
      const int B = a.b, CB = a.cb();
      for (int in = 0; in < n; ++in)
        for (int g = 0; g < groups; ++g)
          for (int cb = 0; cb < CB; ++cb)
            for (int y = 0; y < a.hp; ++y)
              for (int x = 0; x < a.wp; ++x)
                for (int i = 0; i < B; ++i) {
                  const int c = cb * B + i, ys = y - top, xs = x - left;
                  const bool inside = c < cg && ys >= 0 && ys < h && xs >= 0 && xs < w;
                  const float want = inside ? src[((size_t(in) * groups + g) * cg + c) * h * w + ys * w + xs] : 0.f;
                  const size_t at = ((((size_t(in) * groups + g) * CB + cb) * a.hp + y) * a.wp + x) * B + i;
                  ASSERT_EQ(dst[at], want) << "w=" << w << " b=" << b << " cg=" << cg << " n=" << in << " g=" << g << " c=" << c
                                           << " y=" << y << " x=" << x;
                }
    }
}

TEST(DirectLayout, UnblockTileDropsPaddedLanes) {
  // v = 16 (AVX-512's 16x16 transposes) and 8 (AVX2's 8x8): pixel counts one
  // below, at and one above the transpose width, and a full / partial block.
  for (int v : {16, 8})
    for (int hw : {v - 1, v, v + 1, 45})
      for (int nchan : {v - 5, v}) {
        const auto tile = iota(size_t(hw) * v);
        std::vector<float> dst(size_t(nchan) * hw + 7, -1.f);
        unblock_tile(tile.data(), hw, v, nchan, dst.data());
        for (int c = 0; c < nchan; ++c)
          for (int x = 0; x < hw; ++x)
            EXPECT_EQ(dst[size_t(c) * hw + x], tile[size_t(x) * v + c]) << "v=" << v << " hw=" << hw;
        for (size_t i = size_t(nchan) * hw; i < dst.size(); ++i) EXPECT_EQ(dst[i], -1.f) << "wrote past the planes";
      }
}

TEST(DirectLayout, WeightsForwardRoundTripAndZeroLanes) {
  for (int v : {8, 16})
    for (int kg : {1, 15, 17}) {
      const WeiBlocking b{2, kg, 5, 3, 2, std::min(v, 5), v};
      const int KB = (kg + v - 1) / v, CB = (5 + b.bi - 1) / b.bi;
      const auto wei = iota(size_t(2) * kg * 5 * 3 * 2);
      std::vector<float> blk(size_t(2) * KB * CB * 3 * 2 * b.bi * v, -1.f), back(wei.size(), -1.f);
      block_wei_fwd(b, wei.data(), blk.data(), 0, 2);
      block_wei_fwd(b, wei.data(), blk.data(), 1, 2);
      for (float x : blk) EXPECT_GE(x, 0.f) << "unwritten element";
      size_t zeros = 0;
      for (float x : blk) zeros += x == 0.f;
      EXPECT_EQ(zeros, blk.size() - wei.size()) << "padding lanes must be zero, data lanes never";
      unblock_wei_fwd(b, blk.data(), back.data(), 0, 1);
      EXPECT_EQ(back, wei);
    }
}

TEST(DirectLayout, WeightsBackwardDataTransposedAndFlipped) {
  const int v = 16, kg = 7, cg = 18, r = 2, s = 3;
  for (bool flip : {false, true}) {
    const WeiBlocking b{1, kg, cg, r, s, kg, v};
    const int CB = (cg + v - 1) / v;
    const auto wei = iota(size_t(kg) * cg * r * s);
    std::vector<float> blk(size_t(CB) * r * s * kg * v, -1.f);
    block_wei_bwd_data(b, wei.data(), blk.data(), flip, 0, 1);
    for (int cb = 0; cb < CB; ++cb)
      for (int y = 0; y < r; ++y)
        for (int x = 0; x < s; ++x)
          for (int k = 0; k < kg; ++k)
            for (int l = 0; l < v; ++l) {
              const int c = cb * v + l, xs = flip ? s - 1 - x : x;
              const float want = c < cg ? wei[((size_t(k) * cg + c) * r + y) * s + xs] : 0.f;
              EXPECT_EQ(blk[((((size_t(cb) * r + y) * s + x) * kg + k) * v) + l], want);
            }
  }
}

TEST(DirectLayout, WeightsPixelChunksOfChannels) {
  const WeiBlocking b{2, 3, 5, 2, 2, 4, 16};  // NC = 4: chunks {0..3}, {4, pad x3}
  const auto wei = iota(size_t(2) * 3 * 5 * 4);
  std::vector<float> blk(size_t(2) * 2 * 4 * 3 * 4, -1.f);
  block_wei_pix(b, wei.data(), blk.data(), 0, 1);
  for (int g = 0; g < 2; ++g)
    for (int cc = 0; cc < 2; ++cc)
      for (int t = 0; t < 4; ++t)
        for (int k = 0; k < 3; ++k)
          for (int i = 0; i < 4; ++i) {
            const int c = cc * 4 + i;
            const float want = c < 5 ? wei[((size_t(g) * 3 + k) * 5 + c) * 4 + t] : 0.f;
            EXPECT_EQ(blk[((((size_t(g) * 2 + cc) * 4 + t) * 3 + k) * 4) + i], want);
          }
}

TEST(DirectLayout, PadRowsInterleaved) {
  const int c = 3, h = 4, w = 5, top = 2, left = 1, hp = 8, wp = 9;
  const auto src = iota(size_t(c) * h * w);
  std::vector<float> dst(size_t(hp) * c * wp, -1.f);
  pad_rows_interleaved(src.data(), c, h, w, top, left, hp, wp, dst.data());
  for (int y = 0; y < hp; ++y)
    for (int ch = 0; ch < c; ++ch)
      for (int x = 0; x < wp; ++x) {
        const int ys = y - top, xs = x - left;
        const float want = ys >= 0 && ys < h && xs >= 0 && xs < w ? src[(size_t(ch) * h + ys) * w + xs] : 0.f;
        EXPECT_EQ(dst[(size_t(y) * c + ch) * wp + x], want);
      }
}

}  // namespace
}  // namespace convlab::cpu::direct
