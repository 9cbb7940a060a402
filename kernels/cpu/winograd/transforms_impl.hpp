// Tile transforms of F(m x m, 3 x 3), written once over 16 lanes (one tile per
// lane) and compiled per ISA: winograd_avx512.cpp, winograd_avx2.cpp and
// winograd_portable.cpp include this file inside their own namespace, so the
// compiler vectorises the lane loops for that ISA (the coefficients are
// compile-time constants: the loops over alpha are fully unrolled).
//
// Per call: one 16-tile group x a channel range. Gather (scalar, with the
// zero padding of image edges, tiles past the end and channels past the end),
// two small matrix products over the lanes, store through a PackLayout (16
// contiguous floats when the layout has the tile index innermost).
// Included only by the ISA files; not a public header.
#include <cstring>

#include "kernels/cpu/winograd/winograd_kernels.hpp"

namespace convlab::winograd {
namespace {  // one private copy per ISA translation unit (no ODR merging across ISAs)

constexpr int L = kLanes;

#define CL_UNROLL _Pragma("GCC unroll 8")
#define CL_SIMD _Pragma("omp simd")

// Per-lane tile geometry of one 16-tile group.
struct LaneTiles {
  int64_t base[L];  // offset of the patch origin (may be outside the image) from channel 0, image n
  int y0[L], x0[L];
  bool valid[L], interior[L];
};

template <int A>
inline void tile_geometry(const TiledImage& img, int m, int64_t t_first, int t0, int span, LaneTiles& g) {
  const int64_t per_img = int64_t(img.tiles_h) * img.tiles_w;
  for (int l = 0; l < L; ++l) {
    const int64_t t = t_first + t0 + l;
    g.valid[l] = t < img.tiles_total;
    if (!g.valid[l]) { g.base[l] = 0; g.y0[l] = g.x0[l] = 0; g.interior[l] = false; continue; }
    const int64_t n = t / per_img;
    const int rem = int(t % per_img);
    const int ty = rem / img.tiles_w, tx = rem % img.tiles_w;
    g.y0[l] = ty * m - img.pad_h;
    g.x0[l] = tx * m - img.pad_w;
    g.base[l] = n * img.n_stride + int64_t(g.y0[l]) * img.w + g.x0[l];
    g.interior[l] = g.y0[l] >= 0 && g.x0[l] >= 0 && g.y0[l] + span <= img.h && g.x0[l] + span <= img.w;
  }
  (void)A;
}

// Gathers a span x span patch per lane into d[i][j][lane] (zeros outside).
template <int S>
inline void gather(const TiledImage& img, const LaneTiles& g, const float* chan, bool chan_valid, float (*d)[S][L]) {
  if (!chan_valid) {
    std::memset(d, 0, sizeof(float) * S * S * L);
    return;
  }
  for (int l = 0; l < L; ++l) {
    if (g.interior[l]) {
      const float* p = chan + g.base[l];
      CL_UNROLL for (int i = 0; i < S; ++i) {
        CL_UNROLL for (int j = 0; j < S; ++j) d[i][j][l] = p[int64_t(i) * img.w + j];
      }
    } else if (!g.valid[l]) {
      for (int i = 0; i < S; ++i)
        for (int j = 0; j < S; ++j) d[i][j][l] = 0.f;
    } else {
      const float* p = chan + g.base[l];
      for (int i = 0; i < S; ++i) {
        const int y = g.y0[l] + i;
        const bool row_ok = y >= 0 && y < img.h;
        for (int j = 0; j < S; ++j) {
          const int x = g.x0[l] + j;
          d[i][j][l] = (row_ok && x >= 0 && x < img.w) ? p[int64_t(i) * img.w + j] : 0.f;
        }
      }
    }
  }
}

template <int A>
inline void store(const float (*o)[A][L], float* v, const PackLayout& lay, int c, int t0) {
  if (lay.t_stride == 1 && lay.tb % L == 0) {
    float* dst = v + lay.offset(c, t0);
    CL_UNROLL for (int i = 0; i < A; ++i) {
      CL_UNROLL for (int j = 0; j < A; ++j) {
        float* p = dst + (i * A + j) * lay.e_stride;
        CL_SIMD for (int l = 0; l < L; ++l) p[l] = o[i][j][l];
      }
    }
  } else {
    for (int l = 0; l < L; ++l) {
      float* dst = v + lay.offset(c, t0 + l);
      for (int i = 0; i < A; ++i)
        for (int j = 0; j < A; ++j) dst[(i * A + j) * lay.e_stride] = o[i][j][l];
    }
  }
}

template <int M>
void input_transform_t(const TiledImage& img, int64_t t_first, int t0, int c0, int c1, float* v,
                       const PackLayout& lay) {
  constexpr int A = M + 2;
  constexpr Matrices W = make_matrices(M);
  LaneTiles g;
  tile_geometry<A>(img, M, t_first, t0, A, g);
  alignas(64) float d[A][A][L];
  alignas(64) float t[A][A][L];
  alignas(64) float o[A][A][L];
  const int64_t plane = int64_t(img.h) * img.w;
  for (int c = c0; c < c1; ++c) {
    const bool cv = c < img.channels;
    gather<A>(img, g, img.data + (cv ? c : 0) * plane, cv, d);
    // t = BT d
    CL_UNROLL for (int i = 0; i < A; ++i) {
      CL_UNROLL for (int j = 0; j < A; ++j) {
        float acc[L] = {};
        CL_UNROLL for (int k = 0; k < A; ++k) {
          const float b = float(W.BT[i][k]);
          if (b == 0.f) continue;
          CL_SIMD for (int l = 0; l < L; ++l) acc[l] += b * d[k][j][l];
        }
        CL_SIMD for (int l = 0; l < L; ++l) t[i][j][l] = acc[l];
      }
    }
    // o = t B  (o[i][j] = sum_k t[i][k] BT[j][k])
    CL_UNROLL for (int i = 0; i < A; ++i) {
      CL_UNROLL for (int j = 0; j < A; ++j) {
        float acc[L] = {};
        CL_UNROLL for (int k = 0; k < A; ++k) {
          const float b = float(W.BT[j][k]);
          if (b == 0.f) continue;
          CL_SIMD for (int l = 0; l < L; ++l) acc[l] += b * t[i][k][l];
        }
        CL_SIMD for (int l = 0; l < L; ++l) o[i][j][l] = acc[l];
      }
    }
    store<A>(o, v, lay, c, t0);
  }
}

template <int M>
void output_transform_t(const float* mbuf, const PackLayout& lay, const TiledImage& img, int64_t t_first, int t0,
                        int k0, int k1) {
  constexpr int A = M + 2;
  constexpr Matrices W = make_matrices(M);
  LaneTiles g;
  // Output tiles: origin (ty*m, tx*m), no padding on the output side.
  TiledImage oi = img;
  oi.pad_h = oi.pad_w = 0;
  tile_geometry<A>(oi, M, t_first, t0, M, g);
  alignas(64) float x[A][A][L];
  alignas(64) float t[M][A][L];
  alignas(64) float o[M][M][L];
  const int64_t plane = int64_t(img.h) * img.w;
  const bool contiguous = lay.t_stride == 1 && lay.tb % L == 0;
  for (int k = k0; k < k1; ++k) {
    if (contiguous) {
      const float* src = mbuf + lay.offset(k, t0);
      CL_UNROLL for (int i = 0; i < A; ++i) {
        CL_UNROLL for (int j = 0; j < A; ++j) {
          const float* p = src + (i * A + j) * lay.e_stride;
          CL_SIMD for (int l = 0; l < L; ++l) x[i][j][l] = p[l];
        }
      }
    } else {
      for (int l = 0; l < L; ++l) {
        const float* src = mbuf + lay.offset(k, t0 + l);
        for (int i = 0; i < A; ++i)
          for (int j = 0; j < A; ++j) x[i][j][l] = src[(i * A + j) * lay.e_stride];
      }
    }
    // t = AT x  (M x A)
    CL_UNROLL for (int i = 0; i < M; ++i) {
      CL_UNROLL for (int j = 0; j < A; ++j) {
        float acc[L] = {};
        CL_UNROLL for (int a = 0; a < A; ++a) {
          const float c = float(W.AT[i][a]);
          if (c == 0.f) continue;
          CL_SIMD for (int l = 0; l < L; ++l) acc[l] += c * x[a][j][l];
        }
        CL_SIMD for (int l = 0; l < L; ++l) t[i][j][l] = acc[l];
      }
    }
    // o = t A  (o[i][j] = sum_b t[i][b] AT[j][b])
    CL_UNROLL for (int i = 0; i < M; ++i) {
      CL_UNROLL for (int j = 0; j < M; ++j) {
        float acc[L] = {};
        CL_UNROLL for (int b = 0; b < A; ++b) {
          const float c = float(W.AT[j][b]);
          if (c == 0.f) continue;
          CL_SIMD for (int l = 0; l < L; ++l) acc[l] += c * t[i][b][l];
        }
        CL_SIMD for (int l = 0; l < L; ++l) o[i][j][l] = acc[l];
      }
    }
    float* chan = img.out + int64_t(k) * plane;
    for (int l = 0; l < L; ++l) {
      if (!g.valid[l]) continue;
      float* p = chan + g.base[l];
      if (g.interior[l]) {
        CL_UNROLL for (int i = 0; i < M; ++i) {
          CL_UNROLL for (int j = 0; j < M; ++j) p[int64_t(i) * img.w + j] = o[i][j][l];
        }
      } else {
        const int hi = img.h - g.y0[l] < M ? img.h - g.y0[l] : M;
        const int wj = img.w - g.x0[l] < M ? img.w - g.x0[l] : M;
        for (int i = 0; i < hi; ++i)
          for (int j = 0; j < wj; ++j) p[int64_t(i) * img.w + j] = o[i][j][l];
      }
    }
  }
}

template <int M>
void dst_transform_t(const TiledImage& img, int64_t t_first, int t0, int k0, int k1, float* w,
                     const PackLayout& lay) {
  constexpr int A = M + 2;
  constexpr Matrices W = make_matrices(M);
  TiledImage oi = img;
  oi.pad_h = oi.pad_w = 0;
  LaneTiles g;
  tile_geometry<A>(oi, M, t_first, t0, M, g);
  alignas(64) float d[M][M][L];
  alignas(64) float t[A][M][L];
  alignas(64) float o[A][A][L];
  const int64_t plane = int64_t(img.h) * img.w;
  for (int k = k0; k < k1; ++k) {
    const bool kv = k < img.channels;
    gather<M>(oi, g, img.data + (kv ? k : 0) * plane, kv, d);
    // t = A d  (t[a][j] = sum_i AT[i][a] d[i][j])
    CL_UNROLL for (int a = 0; a < A; ++a) {
      CL_UNROLL for (int j = 0; j < M; ++j) {
        float acc[L] = {};
        CL_UNROLL for (int i = 0; i < M; ++i) {
          const float c = float(W.AT[i][a]);
          if (c == 0.f) continue;
          CL_SIMD for (int l = 0; l < L; ++l) acc[l] += c * d[i][j][l];
        }
        CL_SIMD for (int l = 0; l < L; ++l) t[a][j][l] = acc[l];
      }
    }
    // o = t AT  (o[a][b] = sum_j t[a][j] AT[j][b])
    CL_UNROLL for (int a = 0; a < A; ++a) {
      CL_UNROLL for (int b = 0; b < A; ++b) {
        float acc[L] = {};
        CL_UNROLL for (int j = 0; j < M; ++j) {
          const float c = float(W.AT[j][b]);
          if (c == 0.f) continue;
          CL_SIMD for (int l = 0; l < L; ++l) acc[l] += c * t[a][j][l];
        }
        CL_SIMD for (int l = 0; l < L; ++l) o[a][b][l] = acc[l];
      }
    }
    store<A>(o, w, lay, k, t0);
  }
}

inline void input_transform(int m, const TiledImage& img, int64_t t_first, int t0, int c0, int c1, float* v,
                            const PackLayout& lay) {
  if (m == 2) input_transform_t<2>(img, t_first, t0, c0, c1, v, lay);
  else if (m == 4) input_transform_t<4>(img, t_first, t0, c0, c1, v, lay);
  else input_transform_t<6>(img, t_first, t0, c0, c1, v, lay);
}
inline void output_transform(int m, const float* mbuf, const PackLayout& lay, const TiledImage& img,
                             int64_t t_first, int t0, int k0, int k1) {
  if (m == 2) output_transform_t<2>(mbuf, lay, img, t_first, t0, k0, k1);
  else if (m == 4) output_transform_t<4>(mbuf, lay, img, t_first, t0, k0, k1);
  else output_transform_t<6>(mbuf, lay, img, t_first, t0, k0, k1);
}
inline void dst_transform(int m, const TiledImage& img, int64_t t_first, int t0, int k0, int k1, float* w,
                          const PackLayout& lay) {
  if (m == 2) dst_transform_t<2>(img, t_first, t0, k0, k1, w, lay);
  else if (m == 4) dst_transform_t<4>(img, t_first, t0, k0, k1, w, lay);
  else dst_transform_t<6>(img, t_first, t0, k0, k1, w, lay);
}

// Portable reference micro-kernel (also the AVX2/portable fallback body).
inline void gemm_ukernel_generic(int kc, const float* a, const float* b, float* c, int64_t ldc, bool accumulate) {
  alignas(64) float acc[kMR][kNR];
  for (int i = 0; i < kMR; ++i)
    for (int j = 0; j < kNR; ++j) acc[i][j] = accumulate ? c[i * ldc + j] : 0.f;
  for (int p = 0; p < kc; ++p) {
    const float* ap = a + int64_t(p) * kMR;
    const float* bp = b + int64_t(p) * kNR;
    for (int i = 0; i < kMR; ++i) {
      const float ai = ap[i];
      CL_SIMD for (int j = 0; j < kNR; ++j) acc[i][j] += ai * bp[j];
    }
  }
  for (int i = 0; i < kMR; ++i)
    for (int j = 0; j < kNR; ++j) c[i * ldc + j] = acc[i][j];
}

#undef CL_UNROLL
#undef CL_SIMD

}  // namespace
}  // namespace convlab::winograd
