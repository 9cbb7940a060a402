// Winograd kernels: the transform matrices (hand values for F(2,3), the 1-D
// and 2-D identities in fp64 for every tile), and each ISA's transforms and
// micro-kernel against plain fp64 math on known data.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "core/device.hpp"
#include "kernels/cpu/winograd/winograd_kernels.hpp"

namespace convlab::winograd {
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
  // alpha^2 * (Kp*C + tc*C + tc*Kp), Kp = round_up(K, 12)
  EXPECT_EQ(workspace_floats_fwd(4, 13, 5, 32), 36ll * (24 * 5 + 32 * 5 + 32 * 24));
  EXPECT_EQ(workspace_floats_bwd_filter(2, 13, 5, 32), 16ll * (32 * 32 + 32 * 24 + 24 * 32));
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
      const int kp = int(round_up(K, kMR));
      PackLayout lay{int64_t(kp) * tc, kMR, int64_t(tc) * kMR, 1, 1, kMR, 0};  // (alpha^2, KB, tc, MR)
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

// Micro-kernel on exact small integers: C = A^T B exactly, and accumulate adds.
TEST(WinogradKernels, GemmUkernelExact) {
  std::mt19937 rng(8);
  std::uniform_int_distribution<int> u(-4, 4);
  for (const Kernels* kn : isa_tables())
    for (int kc : {1, 7, 64}) {
      std::vector<float> a(size_t(kc) * kMR), b(size_t(kc) * kNR);
      for (float& f : a) f = float(u(rng));
      for (float& f : b) f = float(u(rng));
      const int ldc = kNR + 5;
      std::vector<float> c(size_t(kMR) * ldc, 1.f);
      kn->gemm_ukernel(kc, a.data(), b.data(), c.data(), ldc, false);
      kn->gemm_ukernel(kc, a.data(), b.data(), c.data(), ldc, true);
      for (int i = 0; i < kMR; ++i) {
        for (int j = 0; j < kNR; ++j) {
          double ref = 0;
          for (int p = 0; p < kc; ++p) ref += double(a[size_t(p) * kMR + i]) * b[size_t(p) * kNR + j];
          EXPECT_EQ(c[size_t(i) * ldc + j], float(2 * ref)) << kn->isa << " kc=" << kc;
        }
        for (int j = kNR; j < ldc; ++j) EXPECT_EQ(c[size_t(i) * ldc + j], 1.f) << "wrote past NR";
      }
    }
}

// Filter transform of a delta filter in both orientations equals G e_rs GT.
TEST(WinogradKernels, FilterTransformDeltaAndRotation) {
  for (int m : {2, 4, 6}) {
    const int A = m + 2;
    const Matrices& Mx = matrices(m);
    std::vector<float> wei(9, 0.f);
    wei[0 * 3 + 1] = 1.f;  // (K=1, C=1), tap (r=0, s=1)
    const int kp = kMR;
    std::vector<float> u(size_t(A) * A * kp, -3.f), ub(u.size(), -3.f);
    filter_transform(m, wei.data(), 1, 1, false, u.data(), 1);
    filter_transform(m, wei.data(), 1, 1, true, ub.data(), 1);
    for (int a = 0; a < A; ++a)
      for (int b = 0; b < A; ++b) {
        EXPECT_FLOAT_EQ(u[size_t(a * A + b) * kp], float(Mx.G[a][0] * Mx.G[b][1]));
        EXPECT_FLOAT_EQ(ub[size_t(a * A + b) * kp], float(Mx.G[a][2] * Mx.G[b][1]));  // rotated: (2, 1)
        for (int i = 1; i < kMR; ++i) EXPECT_EQ(u[size_t(a * A + b) * kp + i], 0.f) << "padded rows are zero";
      }
  }
}

}  // namespace
}  // namespace convlab::winograd
