// Winograd kernels: the transform matrices (hand values for F(2,3), the 1-D
// and 2-D identities in fp64 for every tile), each ISA's transforms against
// plain fp64 math on known data, packing for its own ISA's sgemm micro-kernel
// tile (the micro-kernels themselves: tests/kernels/cpu/gemm).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "core/device.hpp"
#include "kernels/cpu/gemm/sgemm.hpp"
#include "kernels/cpu/winograd/winograd_kernels.hpp"

namespace convlab::cpu::winograd {
namespace {

TEST(WinogradMath, F2MatchesHandDerivation) {
  // Points {0, 1, -1, inf}: rows of BT are x^2-1, x^2+x, x^2-x, x^3-x (coefficients low to high).
  const double BT[4][4] = {{-1, 0, 1, 0}, {0, 1, 1, 0}, {0, -1, 1, 0}, {0, -1, 0, 1}};
  const double G[4][3] = {{-1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0, 0, 1}};
  const double AT[2][4] = {{1, 1, 1, 0}, {0, 1, -1, 1}};
  for (int i = 0; i < 4; ++i) {
    for (int j = 0; j < 4; ++j) EXPECT_EQ(kF2.BT[i][j], BT[i][j]) << i << "," << j;
    for (int j = 0; j < 3; ++j) EXPECT_EQ(kF2.G[i][j], G[i][j]) << i << "," << j;
    for (int j = 0; j < 2; ++j) EXPECT_EQ(kF2.AT[j][i], AT[j][i]) << j << "," << i;
  }
}

TEST(WinogradMath, OneDimensionalIdentityHolds) {
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> u(-1, 1);
  for (int m : {2, 4, 6}) {
    const Matrices& W = matrices(m);
    ASSERT_EQ(W.alpha, m + 2);
    for (int trial = 0; trial < 10; ++trial) {
      double g[3], d[8];
      for (double& x : g) x = u(rng);
      for (double& x : d) x = u(rng);
      double prod[8];
      for (int e = 0; e < W.alpha; ++e) {
        double gg = 0, dd = 0;
        for (int k = 0; k < 3; ++k) gg += W.G[e][k] * g[k];
        for (int k = 0; k < W.alpha; ++k) dd += W.BT[e][k] * d[k];
        prod[e] = gg * dd;
      }
      for (int i = 0; i < m; ++i) {
        double y = 0, ref = 0;
        for (int e = 0; e < W.alpha; ++e) y += W.AT[i][e] * prod[e];
        for (int k = 0; k < 3; ++k) ref += g[k] * d[i + k];
        EXPECT_NEAR(y, ref, 1e-12) << "m=" << m << " i=" << i;
      }
    }
  }
}

TEST(WinogradMath, TileCountsAndWorkspace) {
  EXPECT_EQ(tiles_1d(13, 4), 4);
  EXPECT_EQ(tiles_1d(12, 6), 2);
  EXPECT_EQ(tiles_1d(13, 6), 3);
  EXPECT_EQ(tiles_1d(1, 2), 1);
  // alpha^2 * (Kp*C + tc*C + tc*Kp), Kp = round_up(K, MR)
  EXPECT_EQ(workspace_floats_fwd(4, 13, 5, 32, {12, 32}), 36ll * (24 * 5 + 32 * 5 + 32 * 24));
  EXPECT_EQ(workspace_floats_fwd(4, 13, 5, 32, {6, 16}), 36ll * (18 * 5 + 32 * 5 + 32 * 18));
  // alpha^2 * (tc*Cp + tc*Kp + Kp*Cp), Cp = round_up(C, NR)
  EXPECT_EQ(workspace_floats_bwd_filter(2, 13, 5, 32, {12, 32}), 16ll * (32 * 32 + 32 * 24 + 24 * 32));
  EXPECT_EQ(workspace_floats_bwd_filter(2, 13, 5, 32, {4, 16}), 16ll * (32 * 16 + 32 * 16 + 16 * 16));
}

std::vector<const Kernels*> isa_tables() {
  std::vector<const Kernels*> v = {&kernels_portable()};
  if (cpu_info().avx2 && cpu_info().fma) v.push_back(&kernels_avx2());
  if (cpu_info().isa() == "avx512") v.push_back(&kernels_avx512());
  return v;
}

// One image (1 x C x H x W), 16 tiles: the input transform of each lane equals
// BT d B of its zero-padded patch in fp64, stored contiguously (forward layout).
TEST(WinogradKernels, InputTransformMatchesFp64) {
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> u(-1, 1);
  for (const Kernels* kn : isa_tables())
    for (int m : {2, 4, 6}) {
      const int A = m + 2, C = 3, H = 4 * m + 1, W = 4 * m - 1, pad = 1;
      const int th = tiles_1d(H, m), tw = tiles_1d(W, m);  // "same" output size with pad 1
      std::vector<float> x(size_t(C) * H * W);
      for (float& f : x) f = u(rng);
      TiledImage img{x.data(), nullptr, int64_t(C) * H * W, C, H, W, pad, pad, th, tw, int64_t(th) * tw};
      const int tc = 32;
      PackLayout lay{int64_t(C) * tc, 1, tc, 0, tc, int64_t(C) * tc, 1};  // (alpha^2, C, tc)
      std::vector<float> v(size_t(A) * A * C * tc, -7.f);
      kn->input_transform(m, img, 0, 0, 0, C, v.data(), lay);
      const Matrices& Mx = matrices(m);
      for (int c = 0; c < C; ++c)
        for (int t = 0; t < 16; ++t) {
          double d[8][8] = {};
          if (t < th * tw) {
            const int y0 = (t / tw) * m - pad, x0 = (t % tw) * m - pad;
            for (int i = 0; i < A; ++i)
              for (int j = 0; j < A; ++j) {
                const int yy = y0 + i, xx = x0 + j;
                if (yy >= 0 && yy < H && xx >= 0 && xx < W) d[i][j] = x[(size_t(c) * H + yy) * W + xx];
              }
          }
          for (int a = 0; a < A; ++a)
            for (int b = 0; b < A; ++b) {
              double ref = 0, mag = 0;
              for (int i = 0; i < A; ++i)
                for (int j = 0; j < A; ++j) {
                  ref += Mx.BT[a][i] * d[i][j] * Mx.BT[b][j];
                  mag += std::abs(Mx.BT[a][i] * d[i][j] * Mx.BT[b][j]);
                }
              EXPECT_NEAR(v[size_t(a * A + b) * lay.e_stride + lay.offset(c, t)], ref, 1e-6 * mag)
                  << kn->isa << " m=" << m << " c=" << c << " t=" << t << " e=" << a << "," << b;
            }
        }
    }
}

// The backward-filter layouts (tile outermost, channels contiguous within a
// block of cb): the same values as the forward layout for every channel piece
// a call can hold (blocks of 16 and of 6, ranges that start inside a block),
// on an image with edge tiles on every side.
TEST(WinogradKernels, TileOutermostLayoutMatchesForwardLayout) {
  std::mt19937 rng(8);
  std::uniform_real_distribution<float> u(-1, 1);
  for (const Kernels* kn : isa_tables())
    for (int m : {2, 4, 6}) {
      const int A = m + 2, C = 20, H = 3 * m + 1, W = 5 * m - 1, tc = 16;
      const int th = tiles_1d(H, m), tw = tiles_1d(W, m);
      std::vector<float> x(size_t(C) * H * W);
      for (float& f : x) f = u(rng);
      TiledImage img{x.data(), nullptr, int64_t(C) * H * W, C, H, W, 1, 1, th, tw, int64_t(th) * tw};
      const PackLayout fwd{int64_t(C) * tc, 1, tc, 0, tc, int64_t(C) * tc, 1};
      std::vector<float> ref(size_t(A) * A * C * tc);
      kn->input_transform(m, img, 0, 0, 0, C, ref.data(), fwd);
      for (int cb : {16, 6})
        for (int c0 : {0, 3}) {
          const int cp = int(round_up(C, cb));
          const PackLayout outer{int64_t(cp) * tc, cb, int64_t(tc) * cb, 1, 1, cb, 0};
          std::vector<float> v(size_t(A) * A * cp * tc, -7.f);
          kn->input_transform(m, img, 0, 0, c0, C, v.data(), outer);
          for (int e = 0; e < A * A; ++e)
            for (int c = c0; c < C; ++c)
              for (int t = 0; t < tc; ++t)
                ASSERT_EQ(v[size_t(e) * outer.e_stride + outer.offset(c, t)], ref[size_t(e) * fwd.e_stride + fwd.offset(c, t)])
                    << kn->isa << " m=" << m << " cb=" << cb << " c0=" << c0 << " e=" << e << " c=" << c << " t=" << t;
        }
    }
}

// Output transform: AT X A (error within 1e-6 of the sum of |terms|, ~8 fp32 roundings) written only inside the image, tile by tile.
TEST(WinogradKernels, OutputTransformMatchesFp64) {
  std::mt19937 rng(6);
  std::uniform_real_distribution<float> u(-1, 1);
  for (const Kernels* kn : isa_tables())
    for (int m : {2, 4, 6}) {
      const int A = m + 2, K = 2, P = 3 * m - 1, Q = 2 * m + 1;
      const int th = tiles_1d(P, m), tw = tiles_1d(Q, m), tc = 32;
      PackLayout lay{int64_t(K) * tc, 1, tc, 0, tc, int64_t(K) * tc, 1};
      std::vector<float> mb(size_t(A) * A * K * tc);
      for (float& f : mb) f = u(rng);
      std::vector<float> y(size_t(K) * P * Q, NAN);
      TiledImage img{nullptr, y.data(), int64_t(K) * P * Q, K, P, Q, 0, 0, th, tw, int64_t(th) * tw};
      ASSERT_LE(th * tw, 16);
      kn->output_transform(m, mb.data(), lay, img, 0, 0, 0, K);
      const Matrices& Mx = matrices(m);
      for (int k = 0; k < K; ++k)
        for (int p = 0; p < P; ++p)
          for (int q = 0; q < Q; ++q) {
            const int t = (p / m) * tw + q / m, i = p % m, j = q % m;
            double ref = 0, mag = 0;
            for (int a = 0; a < A; ++a)
              for (int b = 0; b < A; ++b) {
                const double term = Mx.AT[i][a] * mb[size_t(a * A + b) * lay.e_stride + lay.offset(k, t)] * Mx.AT[j][b];
                ref += term;
                mag += std::abs(term);
              }
            EXPECT_NEAR(y[(size_t(k) * P + p) * Q + q], ref, 1e-6 * mag) << kn->isa << " m=" << m;
          }
    }
}

// diff_dst transform: A dy AT of the m x m tile (zeros outside), transposed layout.
TEST(WinogradKernels, DstTransformMatchesFp64) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-1, 1);
  for (const Kernels* kn : isa_tables())
    for (int m : {2, 4, 6}) {
      const int A = m + 2, K = 3, P = 2 * m + 1, Q = 2 * m - 1;
      const int th = tiles_1d(P, m), tw = tiles_1d(Q, m), tc = 16;
      std::vector<float> dy(size_t(K) * P * Q);
      for (float& f : dy) f = u(rng);
      TiledImage img{dy.data(), nullptr, int64_t(K) * P * Q, K, P, Q, 0, 0, th, tw, int64_t(th) * tw};
      const int MR = gemm_tile(*kn).mr;
      const int kp = int(round_up(K, MR));
      PackLayout lay{int64_t(kp) * tc, MR, int64_t(tc) * MR, 1, 1, MR, 0};  // (alpha^2, KB, tc, MR)
      std::vector<float> w(size_t(A) * A * kp * tc, -7.f);
      kn->dst_transform(m, img, 0, 0, 0, kp, w.data(), lay);
      const Matrices& Mx = matrices(m);
      for (int k = 0; k < kp; ++k)
        for (int t = 0; t < 16; ++t) {
          double d[6][6] = {};
          if (k < K && t < th * tw)
            for (int i = 0; i < m; ++i)
              for (int j = 0; j < m; ++j) {
                const int p = (t / tw) * m + i, q = (t % tw) * m + j;
                if (p < P && q < Q) d[i][j] = dy[(size_t(k) * P + p) * Q + q];
              }
          for (int a = 0; a < A; ++a)
            for (int b = 0; b < A; ++b) {
              double ref = 0, mag = 0;
              for (int i = 0; i < m; ++i)
                for (int j = 0; j < m; ++j) {
                  ref += Mx.AT[i][a] * d[i][j] * Mx.AT[j][b];
                  mag += std::abs(Mx.AT[i][a] * d[i][j] * Mx.AT[j][b]);
                }
              EXPECT_NEAR(w[size_t(a * A + b) * lay.e_stride + lay.offset(k, t)], ref, 1e-6 * mag) << kn->isa;
            }
        }
    }
}

// Every shape a 16-tile group takes in a batch of images: one run of tiles in
// a wide tile row, a group straddling two tile rows or two images, more tile
// rows than a group gathers by rows (narrow images), tiles past the end,
// patches cut by the image on every side (pads -1 .. 2, the backward-data
// crop included), groups that start at any tile (t_first odd). Every group's
// input transform (S = m + 2 patches, padded) and diff_dst transform (m x m,
// unpadded) against fp64.
TEST(WinogradKernels, TransformsMatchFp64OnEveryGroupShape) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> u(-1, 1);
  for (const Kernels* kn : isa_tables())
    for (int m : {2, 4, 6})
      for (int W : {m + 1, 3 * m - 1, 9 * m + 1, 37 * m + 2})
        for (int pad : {-1, 0, 1, 2}) {
          const int A = m + 2, N = 3, C = 2, H = 2 * m + 1, tc = 64;
          const int th = tiles_1d(H, m), tw = tiles_1d(W, m);
          const int64_t total = int64_t(N) * th * tw;
          std::vector<float> x(size_t(N) * C * H * W);
          for (float& f : x) f = u(rng);
          for (bool dst : {false, true}) {
            const int p = dst ? 0 : pad;
            TiledImage img{x.data(), nullptr, int64_t(C) * H * W, C, H, W, p, p, th, tw, total};
            const PackLayout lay{int64_t(C) * tc + 16, 1, tc, 0, tc, int64_t(C) * tc, 1};
            const Matrices& Mx = matrices(m);
            for (int64_t t_first : {int64_t(0), int64_t(5)})
              for (int t0 = 0; t_first + t0 < total + 16; t0 += 16) {
                if (t0 + 16 > tc) break;
                std::vector<float> v(size_t(A) * A * lay.e_stride, -7.f);
                if (dst) kn->dst_transform(m, img, t_first, t0, 0, C, v.data(), lay);
                else kn->input_transform(m, img, t_first, t0, 0, C, v.data(), lay);
                for (int c = 0; c < C; ++c)
                  for (int l = 0; l < 16; ++l) {
                    const int64_t t = t_first + t0 + l;
                    double d[8][8] = {};
                    const int span = dst ? m : A;
                    if (t < total) {
                      const int64_t n = t / (th * tw);
                      const int r = int(t % (th * tw));
                      const int y0 = (r / tw) * m - p, x0 = (r % tw) * m - p;
                      for (int i = 0; i < span; ++i)
                        for (int j = 0; j < span; ++j) {
                          const int yy = y0 + i, xx = x0 + j;
                          if (yy >= 0 && yy < H && xx >= 0 && xx < W)
                            d[i][j] = x[((size_t(n) * C + c) * H + yy) * W + xx];
                        }
                    }
                    for (int a = 0; a < A; ++a)
                      for (int b = 0; b < A; ++b) {
                        double ref = 0, mag = 0;
                        for (int i = 0; i < span; ++i)
                          for (int j = 0; j < span; ++j) {
                            const double ca = dst ? Mx.AT[i][a] : Mx.BT[a][i];
                            const double cb = dst ? Mx.AT[j][b] : Mx.BT[b][j];
                            ref += ca * d[i][j] * cb;
                            mag += std::abs(ca * d[i][j] * cb);
                          }
                        ASSERT_NEAR(v[size_t(a * A + b) * lay.e_stride + lay.offset(c, t0 + l)], ref, 1e-6 * mag + 1e-30)
                            << kn->isa << (dst ? " dst" : " input") << " m=" << m << " W=" << W << " pad=" << p
                            << " t_first=" << t_first << " t0=" << t0 << " c=" << c << " lane=" << l << " e=" << a
                            << "," << b;
                      }
                  }
              }
          }
        }
}

// The output transform on the same group shapes: each group's tiles get AT x A
// of their products (cut at the image's right and bottom edges), and no other
// pixel is written.
TEST(WinogradKernels, OutputTransformMatchesFp64OnEveryGroupShape) {
  std::mt19937 rng(12);
  std::uniform_real_distribution<float> u(-1, 1);
  for (const Kernels* kn : isa_tables())
    for (int m : {2, 4, 6})
      for (int W : {m - 1, 3 * m - 1, 9 * m + 1, 37 * m + 2}) {
        const int A = m + 2, N = 3, K = 2, H = 2 * m + 1, tc = 64;
        const int th = tiles_1d(H, m), tw = tiles_1d(W, m);
        const int64_t total = int64_t(N) * th * tw;
        const PackLayout lay{int64_t(K) * tc + 16, 1, tc, 0, tc, int64_t(K) * tc, 1};
        std::vector<float> mbuf(size_t(A) * A * lay.e_stride);
        for (float& f : mbuf) f = u(rng);
        const Matrices& Mx = matrices(m);
        for (int64_t t_first : {int64_t(0), int64_t(5)})
          for (int t0 = 0; t0 + 16 <= tc && t_first + t0 < total; t0 += 16) {
            std::vector<float> y(size_t(N) * K * H * W, -7.f);
            TiledImage img{nullptr, y.data(), int64_t(K) * H * W, K, H, W, 0, 0, th, tw, total};
            kn->output_transform(m, mbuf.data(), lay, img, t_first, t0, 0, K);
            std::vector<char> mine(y.size(), 0);
            for (int k = 0; k < K; ++k)
              for (int l = 0; l < 16 && t_first + t0 + l < total; ++l) {
                const int64_t t = t_first + t0 + l, n = t / (th * tw);
                const int r = int(t % (th * tw)), y0 = (r / tw) * m, x0 = (r % tw) * m;
                for (int i = 0; i < m && y0 + i < H; ++i)
                  for (int j = 0; j < m && x0 + j < W; ++j) {
                    double ref = 0, mag = 0;
                    for (int a = 0; a < A; ++a)
                      for (int b = 0; b < A; ++b) {
                        const double term = Mx.AT[i][a] *
                                            mbuf[size_t(a * A + b) * lay.e_stride + lay.offset(k, t0 + l)] *
                                            Mx.AT[j][b];
                        ref += term;
                        mag += std::abs(term);
                      }
                    const size_t at = ((size_t(n) * K + k) * H + y0 + i) * W + x0 + j;
                    mine[at] = 1;
                    ASSERT_NEAR(y[at], ref, 1e-6 * mag) << kn->isa << " m=" << m << " W=" << W << " t=" << t;
                  }
              }
            for (size_t i = 0; i < y.size(); ++i) {
              if (mine[i]) continue;
              ASSERT_EQ(y[i], -7.f) << kn->isa << " m=" << m << " W=" << W << " wrote pixel " << i;
            }
          }
      }
}

// Each transform table packs for the sgemm micro-kernel of its own ISA (the
// one kernels/cpu/gemm's table binds there), whose NR is whole 16-tile groups.
TEST(WinogradKernels, PacksForItsIsaMicroKernel) {
  for (const Kernels* kn : isa_tables()) {
    const cpu::SgemmUkernel& uk = cpu::sgemm_ukernel(kn->gemm_isa);
    const std::string name = uk.name;
    EXPECT_EQ(name.substr(name.rfind('_') + 1), kn->isa) << name;
    EXPECT_EQ(gemm_tile(*kn).mr, uk.mr);
    EXPECT_EQ(gemm_tile(*kn).nr, uk.nr);
    EXPECT_EQ(uk.nr % kLanes, 0) << name;
    EXPECT_TRUE(filter_transform_supports_mr(uk.mr)) << name;
  }
}

// Filter transform of a delta filter in both orientations equals G e_rs GT;
// with several channels, each lands in row k % MR of block k / MR of its
// micro-kernel's layout (alpha^2, KB, C, MR), padded rows zero.
TEST(WinogradKernels, FilterTransformDeltaAndRotation) {
  const int MR = gemm_tile(best_kernels()).mr;
  for (int m : {2, 4, 6}) {
    const int A = m + 2;
    const Matrices& Mx = matrices(m);
    std::vector<float> wei(9, 0.f);
    wei[0 * 3 + 1] = 1.f;  // (K=1, C=1), tap (r=0, s=1)
    const int kp = MR;
    std::vector<float> u(size_t(A) * A * kp, -3.f), ub(u.size(), -3.f);
    filter_transform(m, wei.data(), 1, 1, false, {MR, 16}, u.data(), 1);
    filter_transform(m, wei.data(), 1, 1, true, {MR, 16}, ub.data(), 1);
    for (int a = 0; a < A; ++a)
      for (int b = 0; b < A; ++b) {
        EXPECT_FLOAT_EQ(u[size_t(a * A + b) * kp], float(Mx.G[a][0] * Mx.G[b][1]));
        EXPECT_FLOAT_EQ(ub[size_t(a * A + b) * kp], float(Mx.G[a][2] * Mx.G[b][1]));  // rotated: (2, 1)
        for (int i = 1; i < MR; ++i) EXPECT_EQ(u[size_t(a * A + b) * kp + i], 0.f) << "padded rows are zero";
      }
  }
  // K = 19 output channels, C = 2, every MR of the table: channel k's filter is k * delta(1, 1)
  // (centre tap), so U(e, k, c) = (c + 1) * k * G[a][1] * G[b][1].
  // Packed (pitch 0) and with the elements' slices 16 floats further apart than packed, where
  // the floats between slices stay untouched.
  for (int mr : {4, 6, 12})
    for (int64_t extra : {0, 16}) {
      const int K = 19, C = 2, A = 6, kp = int(round_up(K, mr));
      const int64_t pitch = int64_t(kp) * C + extra;
      std::vector<float> wei(size_t(K) * C * 9, 0.f);
      for (int k = 0; k < K; ++k)
        for (int c = 0; c < C; ++c) wei[(size_t(k) * C + c) * 9 + 4] = float(k * (c + 1));
      std::vector<float> u(size_t(A) * A * pitch, -3.f);
      filter_transform(4, wei.data(), K, C, false, {mr, 16}, u.data(), 2, extra ? pitch : 0);
      const Matrices& Mx = matrices(4);
      for (int e = 0; e < A * A; ++e) {
        for (int k = 0; k < kp; ++k)
          for (int c = 0; c < C; ++c) {
            const float want = k < K ? float(k * (c + 1) * Mx.G[e / A][1] * Mx.G[e % A][1]) : 0.f;
            EXPECT_FLOAT_EQ(u[size_t(e) * pitch + (size_t(k / mr) * C + c) * mr + k % mr], want)
                << "mr=" << mr << " pitch=" << pitch << " e=" << e << " k=" << k << " c=" << c;
          }
        for (int64_t i = int64_t(kp) * C; i < pitch; ++i) EXPECT_EQ(u[size_t(e) * pitch + i], -3.f) << "gap written";
      }
    }
}

// Streaming stores (stream = true) write the same U as plain stores, bit for bit, on every ISA
// table and micro-kernel MR, both orientations: whole runs of channels that start on a 64-byte
// line streamed, the rest (a last partial run, a misaligned start) stored plainly; the k-blocks
// split between two calls as the threads split them; the floats between element slices untouched.
TEST(WinogradKernels, FilterTransformStreamedMatchesPlain) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  for (const Kernels* kn : isa_tables())
    for (int mr : {4, 6, 12})
      for (int m : {2, 4, 6})
        for (bool bwd : {false, true})
          for (int cg : {1, 13, 32}) {
            const int kg = 37, A = m + 2, k_out = bwd ? cg : kg, c_in = bwd ? kg : cg;
            const int kb_count = ceil_div(k_out, mr);
            const int64_t pitch = round_up(int64_t(kb_count) * mr * c_in, 16) + 16;
            std::vector<float> wei(size_t(kg) * cg * 9);
            for (float& w : wei) w = dist(rng);
            const size_t n = size_t(A) * A * pitch;
            std::vector<float> plain_buf(n + 16, -3.f), streamed_buf(n + 16, -3.f);
            auto align64 = [](std::vector<float>& v) {
              return reinterpret_cast<float*>((reinterpret_cast<uintptr_t>(v.data()) + 63) & ~uintptr_t(63));
            };
            float* plain = align64(plain_buf);
            float* streamed = align64(streamed_buf);
            const int half = kb_count / 2;
            kn->filter_transform_block(m, wei.data(), kg, cg, bwd, mr, plain, pitch, 0, kb_count, 0, c_in, false);
            kn->filter_transform_block(m, wei.data(), kg, cg, bwd, mr, streamed, pitch, 0, half, 0, c_in, true);
            kn->filter_transform_block(m, wei.data(), kg, cg, bwd, mr, streamed, pitch, half, kb_count, 0, c_in, true);
            EXPECT_EQ(std::memcmp(plain, streamed, n * sizeof(float)), 0)
                << kn->isa << " mr=" << mr << " m=" << m << " bwd=" << bwd << " cg=" << cg;
            // The channels split too, at multiples of 8 (as the threads split a block they share).
            std::vector<float> split_buf(n + 16, -3.f);
            float* split = align64(split_buf);
            for (int kb = 0; kb < kb_count; ++kb)
              for (int c0 = 0; c0 < c_in; c0 += 8)
                kn->filter_transform_block(m, wei.data(), kg, cg, bwd, mr, split, pitch, kb, kb + 1, c0,
                                           std::min(c0 + 8, c_in), (kb + c0) % 2 == 0);
            EXPECT_EQ(std::memcmp(plain, split, n * sizeof(float)), 0)
                << kn->isa << " split by channels: mr=" << mr << " m=" << m << " bwd=" << bwd << " cg=" << cg;
          }
}

// The threaded transform writes the U one call writes, bit for bit, whatever the thread count: with
// few k-blocks and many channels (32 output channels: 3 blocks of 12) the threads share blocks by
// channels; with many blocks they take whole ones; both orientations, every MR, plain and streamed.
TEST(WinogradKernels, FilterTransformSameOnAnyThreadCount) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  const Kernels& kn = best_kernels();
  for (int mr : {4, 6, 12})
    for (int m : {4, 6})
      for (bool bwd : {false, true})
        for (auto [kg, cg] : {std::pair{32, 128}, std::pair{37, 13}, std::pair{96, 40}})
          for (bool stream : {false, true}) {
            const int A = m + 2, k_out = bwd ? cg : kg, c_in = bwd ? kg : cg;
            const int kb_count = ceil_div(k_out, mr);
            const int64_t pitch = round_up(int64_t(kb_count) * mr * c_in, 16);
            std::vector<float> wei(size_t(kg) * cg * 9);
            for (float& w : wei) w = dist(rng);
            const size_t n = size_t(A) * A * pitch;
            std::vector<float> one(n + 16, -3.f);
            kn.filter_transform_block(m, wei.data(), kg, cg, bwd, mr, one.data(), pitch, 0, kb_count, 0, c_in, false);
            for (int threads : {1, 2, 3}) {
              std::vector<float> u(n + 16, -3.f);
              filter_transform(m, wei.data(), kg, cg, bwd, {mr, 16}, u.data(), threads, pitch, stream);
              EXPECT_EQ(std::memcmp(one.data(), u.data(), (n + 16) * sizeof(float)), 0)
                  << "threads=" << threads << " mr=" << mr << " m=" << m << " bwd=" << bwd << " kg=" << kg
                  << " cg=" << cg << " stream=" << stream;
            }
          }
}

}  // namespace
}  // namespace convlab::cpu::winograd
