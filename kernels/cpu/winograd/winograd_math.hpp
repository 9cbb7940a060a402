// Winograd F(m x m, 3 x 3) math shared by the CPU and (future) CUDA kernels:
// the transform matrices, tile counts and the workspace formula. Plain
// constexpr C++ (no std::, no host-only calls) so nvcc can include it too.
//
// One dimension, F(m, r) with alpha = m + r - 1 points (alpha - 1 finite
// points a_j and infinity), correlation y_i = sum_k g_k d_{i+k}:
//     y = AT [ (G g) .* (BT d) ]
//   G  (alpha x r):  G[j][k] = a_j^k / f_j,  f_j = prod_{l != j} (a_j - a_l);  G[inf][k] = (k == r-1)
//   AT (m x alpha):  AT[i][j] = a_j^i;                                          AT[i][inf] = (i == m-1)
//   BT (alpha x alpha): row j = coefficients (x^0 .. x^{alpha-1}) of prod_{l != j} (x - a_l);
//                       row inf = coefficients of prod_l (x - a_l)
// (modified Toom-Cook: the transpose of the polynomial-product algorithm, the
// Lagrange denominators f_j moved into G, which is applied in fp64 once per call).
// Two dimensions: Y = AT [ (G g GT) .* (BT d B) ] A.
// Backward filter (the same identity read for the filter): dW = GT [ (A dy AT) .* (BT x B) ] G.
//
// Points (accuracy, Barabasz et al. / Lavin): F(2): {0, 1, -1}; F(4): {0, -1, 1, 1/2, -2};
// F(6): {0, -1, 1, 1/2, -1/2, 2, -2}.
#pragma once

namespace convlab::winograd {

inline constexpr int kR = 3;            // filter size (3 x 3 only)
inline constexpr int kMaxAlpha = 8;     // F(6, 3)

struct Matrices {
  int m = 0, alpha = 0;
  double AT[kMaxAlpha][kMaxAlpha] = {};  // m x alpha
  double G[kMaxAlpha][kR] = {};          // alpha x 3
  double BT[kMaxAlpha][kMaxAlpha] = {};  // alpha x alpha
};

constexpr bool supported_tile(int m) { return m == 2 || m == 4 || m == 6; }

constexpr Matrices make_matrices(int m) {
  Matrices M;
  M.m = m;
  M.alpha = m + kR - 1;
  const int na = M.alpha - 1;  // finite points
  double a[kMaxAlpha] = {};
  if (m == 2) {
    const double p[] = {0, 1, -1};
    for (int j = 0; j < na; ++j) a[j] = p[j];
  } else if (m == 4) {
    const double p[] = {0, -1, 1, 0.5, -2};
    for (int j = 0; j < na; ++j) a[j] = p[j];
  } else {
    const double p[] = {0, -1, 1, 0.5, -0.5, 2, -2};
    for (int j = 0; j < na; ++j) a[j] = p[j];
  }
  const int inf = M.alpha - 1;
  for (int j = 0; j < na; ++j) {
    double f = 1;
    for (int l = 0; l < na; ++l)
      if (l != j) f *= a[j] - a[l];
    double pw = 1;
    for (int k = 0; k < kR; ++k, pw *= a[j]) M.G[j][k] = pw / f;
    pw = 1;
    for (int i = 0; i < m; ++i, pw *= a[j]) M.AT[i][j] = pw;
  }
  for (int k = 0; k < kR; ++k) M.G[inf][k] = (k == kR - 1) ? 1 : 0;
  for (int i = 0; i < m; ++i) M.AT[i][inf] = (i == m - 1) ? 1 : 0;
  // BT rows: polynomial coefficients, lowest degree first.
  for (int j = 0; j <= na; ++j) {
    double c[kMaxAlpha + 1] = {};
    c[0] = 1;
    int deg = 0;
    for (int l = 0; l < na; ++l) {
      if (l == j) continue;  // j == na (infinity) skips nothing
      // multiply by (x - a_l)
      for (int d = deg + 1; d >= 1; --d) c[d] = c[d - 1] - a[l] * c[d];
      c[0] = -a[l] * c[0];
      ++deg;
    }
    for (int i = 0; i < M.alpha; ++i) M.BT[j][i] = c[i];
  }
  return M;
}

inline constexpr Matrices kF2 = make_matrices(2);
inline constexpr Matrices kF4 = make_matrices(4);
inline constexpr Matrices kF6 = make_matrices(6);

constexpr const Matrices& matrices(int m) { return m == 2 ? kF2 : m == 4 ? kF4 : kF6; }

constexpr int ceil_div(int a, int b) { return (a + b - 1) / b; }
constexpr long long round_up(long long a, long long b) { return (a + b - 1) / b * b; }

// Register blocking of the batched GEMM (shared by every ISA so the packed
// layouts are ISA-independent): MR rows broadcast from A, NR columns of B.
inline constexpr int kMR = 12;
inline constexpr int kNR = 32;

// Tiles of an output P x Q covered by m x m tiles.
constexpr int tiles_1d(int out, int m) { return ceil_div(out, m); }

// Workspace (floats) of the non-fused algorithm, per direction. Buffers:
//   forward / backward-data (k_out output channels, c_in input channels of one group):
//     U  alpha^2 x round_up(k_out, MR) x c_in          transformed filter of one group
//     V  alpha^2 x tc x c_in                           transformed input tiles of one chunk
//     M  alpha^2 x tc x round_up(k_out, MR)            products of one chunk
//   backward-filter (k = output channels, c = input channels of one group):
//     V  alpha^2 x tc x round_up(c, NR)                transformed input tiles
//     W  alpha^2 x tc x round_up(k, MR)                transformed diff_dst tiles
//     M  alpha^2 x round_up(k, MR) x round_up(c, NR)   accumulated products
// tc = tiles per chunk (a multiple of NR).
constexpr long long workspace_floats_fwd(int m, int k_out, int c_in, int tc) {
  const long long a2 = (long long)(m + 2) * (m + 2);
  const long long kp = round_up(k_out, kMR);
  return a2 * (kp * c_in + (long long)tc * c_in + (long long)tc * kp);
}
constexpr long long workspace_floats_bwd_filter(int m, int k, int c, int tc) {
  const long long a2 = (long long)(m + 2) * (m + 2);
  const long long kp = round_up(k, kMR), cp = round_up(c, kNR);
  return a2 * ((long long)tc * cp + (long long)tc * kp + kp * cp);
}

}  // namespace convlab::winograd
