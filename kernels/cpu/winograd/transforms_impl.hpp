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
#if defined(__AVX512F__)
#include <immintrin.h>
#endif

#include "kernels/cpu/winograd/winograd_kernels.hpp"

namespace convlab::winograd {
namespace {  // one private copy per ISA translation unit (no ODR merging across ISAs)

constexpr int L = kLanes;

#define CL_UNROLL _Pragma("GCC unroll 8")
#define CL_SIMD _Pragma("omp simd")

// Per-lane tile geometry of one 16-tile group: where the patch starts and the
// rectangle [i0, i1) x [j0, j1) of it that lies inside the image (the rest is
// zero for every channel, so it is zeroed once per group, not per channel).
struct LaneTiles {
  int64_t base[L];  // offset of the patch origin (may be outside the image) from channel 0, image n
  int y0[L], x0[L];
  int i0[L], i1[L], j0[L], j1[L];
  bool valid[L];
  // For the AVX-512 masked gather: 32-bit lane offsets and, per patch row i /
  // column j, the lanes whose (i, j) lies inside the image.
  alignas(64) int32_t off32[L];
  uint16_t rowmask[kMaxAlpha], colmask[kMaxAlpha];
  bool fits32;
};

inline void tile_geometry(const TiledImage& img, int m, int64_t t_first, int t0, int span, LaneTiles& g) {
  const int64_t per_img = int64_t(img.tiles_h) * img.tiles_w;
  for (int l = 0; l < L; ++l) {
    const int64_t t = t_first + t0 + l;
    g.valid[l] = t < img.tiles_total;
    if (!g.valid[l]) {
      g.base[l] = 0;
      g.y0[l] = g.x0[l] = 0;
      g.i0[l] = g.i1[l] = g.j0[l] = g.j1[l] = 0;
      continue;
    }
    const int64_t n = t / per_img;
    const int rem = int(t % per_img);
    const int ty = rem / img.tiles_w, tx = rem % img.tiles_w;
    const int y0 = ty * m - img.pad_h, x0 = tx * m - img.pad_w;
    g.y0[l] = y0;
    g.x0[l] = x0;
    g.base[l] = n * img.n_stride + int64_t(y0) * img.w + x0;
    g.i0[l] = y0 < 0 ? -y0 : 0;
    g.j0[l] = x0 < 0 ? -x0 : 0;
    g.i1[l] = img.h - y0 < span ? img.h - y0 : span;
    g.j1[l] = img.w - x0 < span ? img.w - x0 : span;
    if (g.i1[l] < g.i0[l]) g.i1[l] = g.i0[l];
    if (g.j1[l] < g.j0[l]) g.j1[l] = g.j0[l];
  }
  g.fits32 = true;
  for (int i = 0; i < span; ++i) {
    g.rowmask[i] = g.colmask[i] = 0;
    for (int l = 0; l < L; ++l) {
      if (i >= g.i0[l] && i < g.i1[l]) g.rowmask[i] |= uint16_t(1u << l);
      if (i >= g.j0[l] && i < g.j1[l]) g.colmask[i] |= uint16_t(1u << l);
    }
  }
  for (int l = 0; l < L; ++l) {
    const int64_t lo = g.base[l], hi = g.base[l] + int64_t(span) * (img.w + 1);
    if (lo < -(int64_t(1) << 30) || hi > (int64_t(1) << 30)) g.fits32 = false;
    g.off32[l] = int32_t(g.fits32 ? g.base[l] : 0);
  }
}

// Copies the in-image part of each lane's S x S patch into d[i][j][lane]; the
// out-of-image part must already be zero (zeroed once per group).
template <int S>
inline void gather(const TiledImage& img, const LaneTiles& g, const float* chan, float (*d)[S][L]) {
#if defined(__AVX512F__)
  if (g.fits32) {  // one masked 16-lane gather per patch element
    const __m512i off = _mm512_load_si512(g.off32);
    CL_UNROLL for (int i = 0; i < S; ++i) {
      CL_UNROLL for (int j = 0; j < S; ++j) {
        const __mmask16 k = __mmask16(g.rowmask[i] & g.colmask[j]);
        const __m512i idx = _mm512_add_epi32(off, _mm512_set1_epi32(i * img.w + j));
        _mm512_store_ps(d[i][j], _mm512_mask_i32gather_ps(_mm512_setzero_ps(), k, idx, chan, 4));
      }
    }
    return;
  }
#endif
  for (int l = 0; l < L; ++l) {
    const float* p = chan + g.base[l];
    if (g.i0[l] == 0 && g.j0[l] == 0 && g.i1[l] == S && g.j1[l] == S) {
      CL_UNROLL for (int i = 0; i < S; ++i) {
        CL_UNROLL for (int j = 0; j < S; ++j) d[i][j][l] = p[int64_t(i) * img.w + j];
      }
    } else {
      for (int i = g.i0[l]; i < g.i1[l]; ++i)
        for (int j = g.j0[l]; j < g.j1[l]; ++j) d[i][j][l] = p[int64_t(i) * img.w + j];
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
  } else if (lay.tb == 1 && lay.t_stride == 0) {
    // Tile index outermost (the backward-filter GEMM layouts): lane l lands
    // tb_stride floats after lane l-1, for every element.
    float* dst = v + lay.offset(c, t0);
    const int64_t ts = lay.tb_stride;
    CL_UNROLL for (int i = 0; i < A; ++i) {
      CL_UNROLL for (int j = 0; j < A; ++j) {
        float* p = dst + (i * A + j) * lay.e_stride;
        for (int l = 0; l < L; ++l) p[l * ts] = o[i][j][l];
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
  tile_geometry(img, M, t_first, t0, A, g);
  alignas(64) float d[A][A][L];
  alignas(64) float t[A][A][L];
  alignas(64) float o[A][A][L];
  std::memset(d, 0, sizeof d);
  const int64_t plane = int64_t(img.h) * img.w;
  for (int c = c0; c < c1; ++c) {
    if (c == img.channels) std::memset(d, 0, sizeof d);  // channels past the end: zeros
    if (c < img.channels) gather<A>(img, g, img.data + c * plane, d);
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
  tile_geometry(oi, M, t_first, t0, M, g);
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
      if (g.i1[l] == M && g.j1[l] == M) {
        CL_UNROLL for (int i = 0; i < M; ++i) {
          CL_UNROLL for (int j = 0; j < M; ++j) p[int64_t(i) * img.w + j] = o[i][j][l];
        }
      } else {
        for (int i = 0; i < g.i1[l]; ++i)
          for (int j = 0; j < g.j1[l]; ++j) p[int64_t(i) * img.w + j] = o[i][j][l];
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
  tile_geometry(oi, M, t_first, t0, M, g);
  alignas(64) float d[M][M][L];
  alignas(64) float t[A][M][L];
  alignas(64) float o[A][A][L];
  std::memset(d, 0, sizeof d);
  const int64_t plane = int64_t(img.h) * img.w;
  for (int k = k0; k < k1; ++k) {
    if (k == img.channels) std::memset(d, 0, sizeof d);  // channels past the end: zeros
    if (k < img.channels) gather<M>(oi, g, img.data + k * plane, d);
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

// U = G g GT for the k-blocks [kb0, kb1) of one group, fp64 over Q blocks of
// MR filters at a time (one lane per output channel, MR * Q lanes: a 6-wide
// block alone fills vectors badly), one rounding to fp32, stored as alpha^2
// contiguous rows of MR per block (layout (alpha^2, KB, c_in, MR), the A
// panels of the MR x NR micro-kernel). MR and Q are template arguments so that
// the lane loops and the row stores have a fixed length.
template <int M, int MR, int Q>
void filter_transform_t(const float* wei_group, int kg, int cg, bool bwd_data, float* u, int kb0, int kb1) {
  constexpr int A = M + 2, LN = MR * Q;
  constexpr Matrices W = make_matrices(M);
  const int k_out = bwd_data ? cg : kg;
  const int c_in = bwd_data ? kg : cg;
  const int64_t e_stride = int64_t(ceil_div(k_out, MR)) * c_in * MR;
  for (int kb = kb0; kb < kb1; kb += Q) {
    const int nq = kb1 - kb < Q ? kb1 - kb : Q;  // blocks stored
    const int rows = k_out - kb * MR < LN ? k_out - kb * MR : LN;
    for (int c = 0; c < c_in; ++c) {
      double g[3][3][LN];
      if (rows < LN) std::memset(g, 0, sizeof g);  // padded rows: zeros
      for (int i = 0; i < rows; ++i) {
        const int ko = kb * MR + i;
        for (int r = 0; r < 3; ++r)
          for (int s = 0; s < 3; ++s)
            g[r][s][i] = bwd_data ? wei_group[(int64_t(c) * cg + ko) * 9 + (2 - r) * 3 + (2 - s)]  // (Kg, Cg, 3, 3)
                                  : wei_group[(int64_t(ko) * cg + c) * 9 + r * 3 + s];
      }
      double t[A][3][LN];  // G g
      CL_UNROLL for (int a = 0; a < A; ++a) {
        CL_UNROLL for (int s = 0; s < 3; ++s) {
          CL_SIMD for (int i = 0; i < LN; ++i)
            t[a][s][i] = W.G[a][0] * g[0][s][i] + W.G[a][1] * g[1][s][i] + W.G[a][2] * g[2][s][i];
        }
      }
      float* dst = u + (int64_t(kb) * c_in + c) * MR;
      const int64_t q_stride = int64_t(c_in) * MR;  // next block
      CL_UNROLL for (int a = 0; a < A; ++a) {
        CL_UNROLL for (int b = 0; b < A; ++b) {
          float o[LN];
          CL_SIMD for (int i = 0; i < LN; ++i)
            o[i] = float(t[a][0][i] * W.G[b][0] + t[a][1][i] * W.G[b][1] + t[a][2][i] * W.G[b][2]);
          float* p = dst + (a * A + b) * e_stride;
          for (int q = 0; q < nq; ++q) {
            CL_SIMD for (int i = 0; i < MR; ++i) p[q * q_stride + i] = o[q * MR + i];
          }
        }
      }
    }
  }
}

template <int MR, int Q>
void filter_transform_mr(int m, const float* wei_group, int kg, int cg, bool bwd_data, float* u, int kb0, int kb1) {
  if (m == 2) filter_transform_t<2, MR, Q>(wei_group, kg, cg, bwd_data, u, kb0, kb1);
  else if (m == 4) filter_transform_t<4, MR, Q>(wei_group, kg, cg, bwd_data, u, kb0, kb1);
  else filter_transform_t<6, MR, Q>(wei_group, kg, cg, bwd_data, u, kb0, kb1);
}

// The MRs of kernels/cpu/gemm's micro-kernels (filter_transform_supports_mr):
// a new micro-kernel tile adds its line here.
inline void filter_transform_block(int m, const float* wei_group, int kg, int cg, bool bwd_data, int mr, float* u,
                                   int kb0, int kb1) {
  if (mr == 12) filter_transform_mr<12, 1>(m, wei_group, kg, cg, bwd_data, u, kb0, kb1);
  else if (mr == 6) filter_transform_mr<6, 2>(m, wei_group, kg, cg, bwd_data, u, kb0, kb1);
  else filter_transform_mr<4, 4>(m, wei_group, kg, cg, bwd_data, u, kb0, kb1);
}

// GT M G for output channel k and the 16 input channels [c0, c0 + 16) (one
// lane each): the alpha^2 rows of M (alpha^2, kp, cp) are read 16 contiguous
// floats at a time (cp is a multiple of 16), fp64 over the lanes.
template <int Mt>
void filter_grad_block_t(const float* mbuf, int cg, int kp, int cp, int k, int c0, float* diff_wei_group) {
  constexpr int A = Mt + 2;
  constexpr Matrices W = make_matrices(Mt);
  const int64_t e_stride = int64_t(kp) * cp;
  const float* src = mbuf + int64_t(k) * cp + c0;
  double t[3][A][L];  // GT M
  for (int r = 0; r < 3; ++r)
    for (int b = 0; b < A; ++b)
      for (int l = 0; l < L; ++l) t[r][b][l] = 0;
  CL_UNROLL for (int a = 0; a < A; ++a) {
    CL_UNROLL for (int b = 0; b < A; ++b) {
      const float* row = src + (a * A + b) * e_stride;
      CL_UNROLL for (int r = 0; r < 3; ++r) {
        const double g = W.G[a][r];
        if (g == 0) continue;
        CL_SIMD for (int l = 0; l < L; ++l) t[r][b][l] += g * double(row[l]);
      }
    }
  }
  const int lanes = cg - c0 < L ? cg - c0 : L;
  for (int r = 0; r < 3; ++r)
    for (int s = 0; s < 3; ++s) {
      double acc[L] = {};
      CL_UNROLL for (int b = 0; b < A; ++b) {
        const double g = W.G[b][s];
        if (g == 0) continue;
        CL_SIMD for (int l = 0; l < L; ++l) acc[l] += t[r][b][l] * g;
      }
      for (int l = 0; l < lanes; ++l) diff_wei_group[((int64_t(k) * cg + c0 + l) * 3 + r) * 3 + s] = float(acc[l]);
    }
}

inline void filter_grad_block(int m, const float* mbuf, int cg, int kp, int cp, int k, int c0, float* diff_wei_group) {
  if (m == 2) filter_grad_block_t<2>(mbuf, cg, kp, cp, k, c0, diff_wei_group);
  else if (m == 4) filter_grad_block_t<4>(mbuf, cg, kp, cp, k, c0, diff_wei_group);
  else filter_grad_block_t<6>(mbuf, cg, kp, cp, k, c0, diff_wei_group);
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

#undef CL_UNROLL
#undef CL_SIMD

}  // namespace
}  // namespace convlab::winograd
