// Winograd F(m x m, 3 x 3) tile transforms in device code, written once over m
// for the fused F(2x2) kernel (winograd_f2x3.cu) and the non-fused F(4x4) /
// F(6x6) transform kernels (winograd_nonfused.cu).
//
// The matrices are winograd_math::make_matrices(M) (kernels/winograd_math.hpp, the
// one definition the CPU kernels and the tests use too: same interpolation
// points), converted to float at compile time into a constexpr local (nvcc:
// --expt-relaxed-constexpr). The loops are fully unrolled, so every coefficient
// is a constant: zero coefficients vanish, 1 and -1 become adds and subtracts,
// and each output row's sum starts from its first term (no 0 + x).
//
//   input        V  = BT d B       d (alpha x alpha) -> (alpha x alpha)
//   filter       U  = G g GT       g (3 x 3)         -> (alpha x alpha)
//   output       Y  = AT M A       M (alpha x alpha) -> (m x m)
//   grad         Y' = A dy AT      dy (m x m)        -> (alpha x alpha)   (bwd-filter)
//   weight_grad  dW = GT M G       M (alpha x alpha) -> (3 x 3)           (bwd-filter)
// Matrices are row-major arrays, x[i * cols + j].
#pragma once

#include "kernels/cuda/simt/simt.hpp"
#include "kernels/winograd_math.hpp"

namespace convlab::cuda::wino {

template <int M>
struct FloatMatrices {
  static constexpr int kAlpha = M + winograd_math::kR - 1;
  float AT[M][kAlpha];
  float G[kAlpha][winograd_math::kR];
  float BT[kAlpha][kAlpha];
};

template <int M>
__host__ __device__ constexpr FloatMatrices<M> float_matrices() {
  static_assert(winograd_math::supported_tile(M), "F(m x m, 3 x 3) for m = 2, 4, 6");
  const winograd_math::Matrices W = winograd_math::make_matrices(M);
  FloatMatrices<M> f{};
  for (int i = 0; i < FloatMatrices<M>::kAlpha; ++i) {
    for (int j = 0; j < M; ++j) f.AT[j][i] = float(W.AT[j][i]);
    for (int k = 0; k < winograd_math::kR; ++k) f.G[i][k] = float(W.G[i][k]);
    for (int j = 0; j < FloatMatrices<M>::kAlpha; ++j) f.BT[i][j] = float(W.BT[i][j]);
  }
  return f;
}

enum class Tf { input, filter, output, grad, weight_grad };

// L of a transform (out = L x L^T): rows x cols.
template <int M, Tf K>
struct Side {
  static constexpr int A = M + winograd_math::kR - 1, R = winograd_math::kR;
  static constexpr int rows = K == Tf::output ? M : K == Tf::weight_grad ? R : A;
  static constexpr int cols = K == Tf::filter ? R : K == Tf::grad ? M : A;
  __host__ __device__ static constexpr float at(const FloatMatrices<M>& f, int i, int k) {
    return K == Tf::input ? f.BT[i][k]
           : K == Tf::filter ? f.G[i][k]
           : K == Tf::output ? f.AT[i][k]
           : K == Tf::grad   ? f.AT[k][i]
                             : f.G[k][i];
  }
};

// sum_a L(row, a) * x[a * stride], the zero terms left out.
template <int M, Tf K>
__device__ __forceinline__ float dot_row(const FloatMatrices<M>& f, int row, const float* x, int stride) {
  float s = 0.0f;
  bool first = true;
#pragma unroll
  for (int a = 0; a < Side<M, K>::cols; ++a) {
    const float c = Side<M, K>::at(f, row, a);
    if (c == 0.0f) continue;
    s = first ? c * x[a * stride] : fmaf(c, x[a * stride], s);
    first = false;
  }
  return s;
}

// out (rows x rows) = L x L^T, x (cols x cols).
template <int M, Tf K>
__device__ __forceinline__ void transform(const float* x, float* out) {
  constexpr FloatMatrices<M> f = float_matrices<M>();
  constexpr int O = Side<M, K>::rows, I = Side<M, K>::cols;
  float t[O * I];  // L x
#pragma unroll
  for (int i = 0; i < O; ++i)
#pragma unroll
    for (int b = 0; b < I; ++b) t[i * I + b] = dot_row<M, K>(f, i, x + b, I);
#pragma unroll
  for (int i = 0; i < O; ++i)
#pragma unroll
    for (int j = 0; j < O; ++j) out[i * O + j] = dot_row<M, K>(f, j, t + i * I, 1);
}

}  // namespace convlab::cuda::wino
