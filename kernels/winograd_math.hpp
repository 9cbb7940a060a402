// Winograd F(m x m, 3 x 3) transform math, the one definition used by the CPU
// kernels (kernels/cpu/winograd), the CUDA kernels (kernels/cuda/winograd) and
// the tests: interpolation points, the transform matrices, tile counts. Plain
// constexpr C++ (no std::, no host-only calls), so nvcc evaluates it at compile
// time in device code too (--expt-relaxed-constexpr).
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

namespace convlab::winograd_math {

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

// Tiles of an output P x Q covered by m x m tiles.
constexpr int tiles_1d(int out, int m) { return ceil_div(out, m); }

}  // namespace convlab::winograd_math
