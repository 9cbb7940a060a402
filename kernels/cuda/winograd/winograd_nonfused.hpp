// Non-fused Winograd F(m x m, 3 x 3), m = 4 or 6: the transform kernels
// (kernels/cuda/winograd/winograd_nonfused.cu), one launch each. Between them
// cuda.winograd_f4x3 / cuda.winograd_f6x3 (algorithms/cuda/winograd.cu) run the
// hand-written SGEMM batched over the alpha^2 transformed-domain points x groups
// (alpha = m + 2: 36 or 64 points). Matrices: kernels/winograd_math.hpp's F(m).
//
// Layouts (per group g, xi = one of the alpha^2 points, T = N * tiles_h * tiles_w
// tiles of m x m outputs, t = (n * tiles_h + th) * tiles_w + tw):
//   U   (G, alpha^2, cout_g, cin_g)   transformed filters         U = G g G^T
//   V   (G, alpha^2, cin_g, T)        transformed input tiles     V = B^T d B
//   M   (G, alpha^2, cout_g, T)       products -> output tiles    Y = A^T M A
//   Y'  (G, alpha^2, cout_g, T)       transformed diff_dst tiles  Y' = A dY A^T   (bwd-filter)
//   M   (G, alpha^2, cout_g, cin_g)   products -> diff_wei        dW = G^T M G   (bwd-filter)
#pragma once

#include <cstdint>

#include "kernels/cuda/simt/simt.hpp"
#include "kernels/winograd_math.hpp"

namespace convlab::cuda {

// The emulated tests' bound per output element (tests/algorithms/cuda/winograd_test.cpp),
// for the emulator's rounding only (on a GPU the algorithms declare the transform
// form, algorithms/cuda/winograd.cu):
//   |y - ref| <= (K + winograd_nonfused_extra_eps(m)) * eps * sum|terms|
// F(m, 3)'s points (+-2, 1/2, and for m = 6 +-1/2) and the small filter
// coefficients (1/90, 1/180 ... for m = 6) amplify rounding far more than
// F(2, 3). Measured under the SIMT emulator (tests/algorithms/cuda/winograd_test.cpp),
// max |err| / sum|terms| over its sweep:
//   F(4x4) 1.84e-6 fwd (15.4 eps), 4.44e-6 bwd-data (37.2 eps), 2.41e-6 bwd-filter
//     (20.2 eps); AlexNet's 3x3 layers at batch 1 <= 8.2e-7 (6.9 eps). 64 eps is
//     1.7x the worst. (The old points 0, +-1, +-2 measured 18.4 / 16 / 11.5 eps:
//     the shared points cut max |err| / max sum|terms| to about a third,
//     algorithms/cuda/winograd.cu, but not every element's own error.)
//   F(6x6) 8.79e-6 fwd (73.7 eps), 1.17e-5 bwd-data (98.2 eps), 2.85e-6
//     bwd-filter (23.9 eps); AlexNet's 3x3 layers <= 4.4e-6 (36.9 eps); the
//     grid-chunk test's shape (tests/algorithms/cuda/grid_chunks_test.cpp: 4
//     groups of one channel, K = 9) 3.0e-5 bwd-data (251 eps: one element of
//     small sum|terms| beside the padding). 512 eps is 2x the worst, rounded up.
// F(4x4) on that shape: 27.9 eps at most. (Per element the error is data
// dependent and unbounded near elements of small sum|terms|: on the shared
// tester's shapes it reaches hundreds of eps for bwd-filter tiles of one or two
// outputs, which is why the algorithms declare the eps x max sum|terms| form.)
constexpr double winograd_nonfused_extra_eps(int m) { return m == 4 ? 64.0 : 512.0; }

// The convolution a pipeline computes: in (n, cin, ih, iw) -> out (n, cout, oh, ow),
// 3x3 filters, stride 1, m x m output tiles.
struct WinogradGeom {
  int m;  // 4 or 6
  int n, cin, ih, iw, cout, oh, ow, pad_h, pad_w, groups;
  bool rotate;  // filter read as w(i, o, 2 - r, 2 - s), wei (cin, cout / groups, 3, 3) (bwd-data)
  __host__ __device__ int alpha() const { return m + 2; }
  __host__ __device__ int tiles_h() const { return winograd_math::tiles_1d(oh, m); }
  __host__ __device__ int tiles_w() const { return winograd_math::tiles_1d(ow, m); }
  __host__ __device__ int64_t tiles() const { return int64_t(n) * tiles_h() * tiles_w(); }
};

// One thread per (g, o, i) filter, 256 per block: U from wei (K, C/g, 3, 3).
void winograd_filter_transform(const WinogradGeom& geo, const float* wei, float* u, void* stream);
// One thread per (channel, tile): V from the alpha x alpha input patches (zero padding).
void winograd_input_transform(const WinogradGeom& geo, const float* in, float* v, void* stream);
// One thread per (channel, tile): out tiles from M (cropped at the plane's edge).
void winograd_output_transform(const WinogradGeom& geo, const float* m, float* out, void* stream);
// One thread per (channel, tile): Y' from the m x m diff_dst tiles (zeros past the edge).
void winograd_grad_transform(const WinogradGeom& geo, const float* dy, float* yt, void* stream);
// One thread per (k, c): diff_wei (K, C/g, 3, 3) from M.
void winograd_weight_grad_transform(const WinogradGeom& geo, const float* m, float* diff_wei, void* stream);

}  // namespace convlab::cuda
