// Non-fused Winograd F(4x4, 3x3): transform kernels + batched SGEMM.
//
// Layouts (per group g, xi = one of the 6x6 = 36 transformed-domain points,
// T = N * tiles_h * tiles_w tiles of 4x4 outputs, t = (n * tiles_h + th) * tiles_w + tw):
//   U  (G, 36, cout_g, cin_g)   transformed filters
//   V  (G, 36, cin_g, T)        transformed input tiles
//   M  (G, 36, cout_g, T)       products, = U[g][xi] * V[g][xi]: one SGEMM, batch 36*G
// Each transform kernel: one thread per (filter) or (channel, tile), 256 per
// block, computing a 6x6 sandwich L * X * R^T in registers and writing its 36
// values with stride (the GEMM operand layout). bwd-filter builds
// Y' (G, 36, cout_g, T) from 4x4 diff_dst tiles, multiplies by V^T and maps the
// (G, 36, cout_g, cin_g) result back with G^T M G.
#include "kernels/cuda/winograd/winograd_f4x3.hpp"

#include "kernels/cuda/gemm/sgemm.hpp"
#include "kernels/cuda/simt/simt.hpp"

namespace convlab::cuda {

namespace {

constexpr int kThreads = 256;

// Transform matrices (interpolation points 0, 1, -1, 2, -2, inf).
__device__ __forceinline__ float bt(int i, int j) {  // B^T (6, 6)
  constexpr float m[6][6] = {{4, 0, -5, 0, 1, 0},  {0, -4, -4, 1, 1, 0}, {0, 4, -4, -1, 1, 0},
                             {0, -2, -1, 2, 1, 0}, {0, 2, -1, -2, 1, 0}, {0, 4, 0, -5, 0, 1}};
  return m[i][j];
}
__device__ __forceinline__ float gm(int i, int j) {  // G (6, 3)
  constexpr float m[6][3] = {{1.0f / 4, 0, 0},
                             {-1.0f / 6, -1.0f / 6, -1.0f / 6},
                             {-1.0f / 6, 1.0f / 6, -1.0f / 6},
                             {1.0f / 24, 1.0f / 12, 1.0f / 6},
                             {1.0f / 24, -1.0f / 12, 1.0f / 6},
                             {0, 0, 1}};
  return m[i][j];
}
__device__ __forceinline__ float at(int i, int j) {  // A^T (4, 6)
  constexpr float m[4][6] = {{1, 1, 1, 1, 1, 0}, {0, 1, -1, 2, -2, 0}, {0, 1, 1, 4, 4, 0}, {0, 1, -1, 8, -8, 1}};
  return m[i][j];
}

enum Mat { kBT, kG, kGT, kAT, kA };
__device__ __forceinline__ float mat(Mat m, int i, int j) {
  switch (m) {
    case kBT: return bt(i, j);
    case kG: return gm(i, j);
    case kGT: return gm(j, i);
    case kAT: return at(i, j);
    case kA: return at(j, i);
  }
  return 0.0f;
}

// out (O x O) = L (O x I) * x (I x I) * L^T
template <int O, int I>
__device__ __forceinline__ void sandwich(Mat l, const float* x, float* out) {
  float t[O * I];
  for (int i = 0; i < O; ++i)
    for (int b = 0; b < I; ++b) {
      float s = 0.0f;
      for (int a = 0; a < I; ++a) s = fmaf(mat(l, i, a), x[a * I + b], s);
      t[i * I + b] = s;
    }
  for (int i = 0; i < O; ++i)
    for (int j = 0; j < O; ++j) {
      float s = 0.0f;
      for (int b = 0; b < I; ++b) s = fmaf(t[i * I + b], mat(l, j, b), s);
      out[i * O + j] = s;
    }
}

struct Geom {  // the conv the fwd pipeline computes: in (n, cin, ih, iw) -> out (n, cout, oh, ow)
  int n, cin, ih, iw, cout, oh, ow, pad_h, pad_w, groups;
  bool rotate;  // filter read as w(i, o, 2 - r, 2 - s) (bwd-data)
  __host__ __device__ int tiles_h() const { return (oh + 3) / 4; }
  __host__ __device__ int tiles_w() const { return (ow + 3) / 4; }
  __host__ __device__ int64_t tiles() const { return int64_t(n) * tiles_h() * tiles_w(); }
};

// U (G, 36, cout_g, cin_g) from the filter; one thread per (g, o, i).
__global__ void f4x3_filter_tf(Geom geo, const float* __restrict__ wei, float* __restrict__ u) {
  const int cin_g = geo.cin / geo.groups, cout_g = geo.cout / geo.groups;
  const int64_t idx = int64_t(blockIdx.x) * kThreads + threadIdx.x;
  if (idx >= int64_t(geo.groups) * cout_g * cin_g) return;
  const int i = int(idx % cin_g), o = int(idx / cin_g % cout_g), g = int(idx / (int64_t(cin_g) * cout_g));
  float gf[9], x[36];
  for (int r = 0; r < 3; ++r)
    for (int s = 0; s < 3; ++s)
      gf[r * 3 + s] = geo.rotate ? wei[((int64_t(g * cin_g + i) * cout_g + o) * 3 + 2 - r) * 3 + 2 - s]
                                 : wei[((int64_t(g * cout_g + o) * cin_g + i) * 3 + r) * 3 + s];
  sandwich<6, 3>(kG, gf, x);
  float* dst = u + (int64_t(g) * 36 * cout_g + o) * cin_g + i;  // (G, 36, cout_g, cin_g)
  for (int xi = 0; xi < 36; ++xi) dst[int64_t(xi) * cout_g * cin_g] = x[xi];
}

// V (G, 36, cin_g, T) from 6x6 input patches; one thread per (channel, tile).
__global__ void f4x3_input_tf(Geom geo, const float* __restrict__ in, float* __restrict__ v) {
  const int64_t tiles = geo.tiles();
  const int64_t idx = int64_t(blockIdx.x) * kThreads + threadIdx.x;
  if (idx >= int64_t(geo.cin) * tiles) return;
  const int64_t t = idx % tiles;
  const int c = int(idx / tiles);
  const int tw = int(t % geo.tiles_w()), th = int(t / geo.tiles_w() % geo.tiles_h()),
            n = int(t / (int64_t(geo.tiles_w()) * geo.tiles_h()));
  const int h0 = th * 4 - geo.pad_h, w0 = tw * 4 - geo.pad_w;
  const float* plane = in + (int64_t(n) * geo.cin + c) * geo.ih * geo.iw;  // (IH, IW)
  float d[36], x[36];
  for (int i = 0; i < 6; ++i)
    for (int j = 0; j < 6; ++j) {
      const int h = h0 + i, w = w0 + j;
      d[i * 6 + j] = (h >= 0 && h < geo.ih && w >= 0 && w < geo.iw) ? plane[int64_t(h) * geo.iw + w] : 0.0f;
    }
  sandwich<6, 6>(kBT, d, x);
  const int cin_g = geo.cin / geo.groups, g = c / cin_g;
  float* dst = v + (int64_t(g) * 36 * cin_g + c % cin_g) * tiles + t;  // (G, 36, cin_g, T)
  for (int xi = 0; xi < 36; ++xi) dst[int64_t(xi) * cin_g * tiles] = x[xi];
}

// out tiles from M (G, 36, cout_g, T); one thread per (channel, tile).
__global__ void f4x3_output_tf(Geom geo, const float* __restrict__ m, float* __restrict__ out) {
  const int64_t tiles = geo.tiles();
  const int64_t idx = int64_t(blockIdx.x) * kThreads + threadIdx.x;
  if (idx >= int64_t(geo.cout) * tiles) return;
  const int64_t t = idx % tiles;
  const int o = int(idx / tiles), cout_g = geo.cout / geo.groups, g = o / cout_g;
  const int tw = int(t % geo.tiles_w()), th = int(t / geo.tiles_w() % geo.tiles_h()),
            n = int(t / (int64_t(geo.tiles_w()) * geo.tiles_h()));
  const float* src = m + (int64_t(g) * 36 * cout_g + o % cout_g) * tiles + t;
  float x[36], y[16];
  for (int xi = 0; xi < 36; ++xi) x[xi] = src[int64_t(xi) * cout_g * tiles];
  sandwich<4, 6>(kAT, x, y);
  float* plane = out + (int64_t(n) * geo.cout + o) * geo.oh * geo.ow;  // (OH, OW)
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) {
      const int h = th * 4 + i, w = tw * 4 + j;
      if (h < geo.oh && w < geo.ow) plane[int64_t(h) * geo.ow + w] = y[i * 4 + j];
    }
}

// Y' (G, 36, kg, T) from 4x4 diff_dst tiles: A dY A^T; one thread per (channel, tile).
__global__ void f4x3_grad_tf(Geom geo, const float* __restrict__ dy, float* __restrict__ yt) {
  const int64_t tiles = geo.tiles();
  const int64_t idx = int64_t(blockIdx.x) * kThreads + threadIdx.x;
  if (idx >= int64_t(geo.cout) * tiles) return;
  const int64_t t = idx % tiles;
  const int o = int(idx / tiles), cout_g = geo.cout / geo.groups, g = o / cout_g;
  const int tw = int(t % geo.tiles_w()), th = int(t / geo.tiles_w() % geo.tiles_h()),
            n = int(t / (int64_t(geo.tiles_w()) * geo.tiles_h()));
  const float* plane = dy + (int64_t(n) * geo.cout + o) * geo.oh * geo.ow;  // (P, Q)
  float d[16], x[36];
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) {
      const int h = th * 4 + i, w = tw * 4 + j;
      d[i * 4 + j] = (h < geo.oh && w < geo.ow) ? plane[int64_t(h) * geo.ow + w] : 0.0f;
    }
  sandwich<6, 4>(kA, d, x);
  float* dst = yt + (int64_t(g) * 36 * cout_g + o % cout_g) * tiles + t;
  for (int xi = 0; xi < 36; ++xi) dst[int64_t(xi) * cout_g * tiles] = x[xi];
}

// dW from M (G, 36, kg, cg): G^T M G; one thread per (k, c).
__global__ void f4x3_weight_grad_tf(Geom geo, const float* __restrict__ m, float* __restrict__ diff_wei) {
  const int cin_g = geo.cin / geo.groups, cout_g = geo.cout / geo.groups;
  const int64_t idx = int64_t(blockIdx.x) * kThreads + threadIdx.x;
  if (idx >= int64_t(geo.groups) * cout_g * cin_g) return;
  const int i = int(idx % cin_g), o = int(idx / cin_g % cout_g), g = int(idx / (int64_t(cin_g) * cout_g));
  const float* src = m + (int64_t(g) * 36 * cout_g + o) * cin_g + i;
  float x[36], w[9];
  for (int xi = 0; xi < 36; ++xi) x[xi] = src[int64_t(xi) * cout_g * cin_g];
  sandwich<3, 6>(kGT, x, w);
  float* dst = diff_wei + (int64_t(g * cout_g + o) * cin_g + i) * 9;  // (K, Cg, 3, 3)
  for (int e = 0; e < 9; ++e) dst[e] = w[e];
}

unsigned blocks(int64_t n) { return unsigned((n + kThreads - 1) / kThreads); }

Geom fwd_geom(const ConvShape& sh) {
  return Geom{sh.n, sh.c, sh.h, sh.w, sh.k, sh.p, sh.q, sh.pad_h, sh.pad_w, sh.groups, false};
}
Geom bwd_data_geom(const ConvShape& sh) {
  return Geom{sh.n, sh.k, sh.p, sh.q, sh.c, sh.h, sh.w, 2 - sh.pad_h, 2 - sh.pad_w, sh.groups, true};
}

void fwd_pipeline(const Geom& geo, const float* in, const float* wei, float* out, float* ws, void* stream) {
  const int cin_g = geo.cin / geo.groups, cout_g = geo.cout / geo.groups;
  const int64_t tiles = geo.tiles();
  float* u = ws;
  float* v = u + int64_t(36) * geo.groups * cout_g * cin_g;
  float* m = v + int64_t(36) * geo.cin * tiles;
  CONVLAB_LAUNCH(f4x3_filter_tf, dim3(blocks(int64_t(geo.groups) * cout_g * cin_g)), dim3(kThreads), 0, stream, geo,
                 wei, u);
  CONVLAB_LAUNCH(f4x3_input_tf, dim3(blocks(geo.cin * tiles)), dim3(kThreads), 0, stream, geo, in, v);
  SgemmArgs a;
  a.m = cout_g; a.n = int(tiles); a.k = cin_g; a.batch = 36 * geo.groups;
  a.a = u; a.lda = cin_g; a.stride_a = int64_t(cout_g) * cin_g;
  a.b = v; a.ldb = int(tiles); a.stride_b = int64_t(cin_g) * tiles;
  a.c = m; a.ldc = int(tiles); a.stride_c = int64_t(cout_g) * tiles;
  sgemm(a, stream);
  CONVLAB_LAUNCH(f4x3_output_tf, dim3(blocks(geo.cout * tiles)), dim3(kThreads), 0, stream, geo, m, out);
}

}  // namespace

const char* winograd_f4x3_unsupported(const ConvShape& sh) {
  if (sh.r != 3 || sh.s != 3) return "needs a 3x3 filter";
  if (sh.stride_h != 1 || sh.stride_w != 1) return "needs stride 1";
  if (sh.dil_h != 1 || sh.dil_w != 1) return "needs dilation 1";
  if (sh.pad_h > 2 || sh.pad_w > 2) return "needs padding <= 2";
  return "";
}

int64_t winograd_f4x3_workspace_floats(const ConvShape& sh, Direction direction) {
  const Geom geo = direction == Direction::bwd_data ? bwd_data_geom(sh) : fwd_geom(sh);
  const int64_t filt = int64_t(36) * geo.groups * (geo.cout / geo.groups) * (geo.cin / geo.groups);
  const int64_t tiles = geo.tiles();
  if (direction == Direction::bwd_filter) return int64_t(36) * (geo.cout + geo.cin) * tiles + filt;  // Y', V, M
  return filt + int64_t(36) * (geo.cin + geo.cout) * tiles;                      // U, V, M
}

void winograd_f4x3_fwd(const ConvShape& sh, const float* src, const float* wei, float* dst, float* ws, void* stream) {
  fwd_pipeline(fwd_geom(sh), src, wei, dst, ws, stream);
}

void winograd_f4x3_bwd_data(const ConvShape& sh, const float* diff_dst, const float* wei, float* diff_src, float* ws,
                            void* stream) {
  fwd_pipeline(bwd_data_geom(sh), diff_dst, wei, diff_src, ws, stream);
}

void winograd_f4x3_bwd_filter(const ConvShape& sh, const float* src, const float* diff_dst, float* diff_wei,
                              float* ws, void* stream) {
  const Geom geo = fwd_geom(sh);
  const int cin_g = geo.cin / geo.groups, cout_g = geo.cout / geo.groups;
  const int64_t tiles = geo.tiles();
  float* yt = ws;
  float* v = yt + int64_t(36) * geo.cout * tiles;
  float* m = v + int64_t(36) * geo.cin * tiles;
  CONVLAB_LAUNCH(f4x3_grad_tf, dim3(blocks(geo.cout * tiles)), dim3(kThreads), 0, stream, geo, diff_dst, yt);
  CONVLAB_LAUNCH(f4x3_input_tf, dim3(blocks(geo.cin * tiles)), dim3(kThreads), 0, stream, geo, src, v);
  SgemmArgs a;  // M[g][xi] (cout_g, cin_g) = Y'[g][xi] (cout_g, T) * V[g][xi]^T (T, cin_g)
  a.m = cout_g; a.n = cin_g; a.k = int(tiles); a.batch = 36 * geo.groups;
  a.a = yt; a.lda = int(tiles); a.stride_a = int64_t(cout_g) * tiles;
  a.b = v; a.ldb = int(tiles); a.stride_b = int64_t(cin_g) * tiles; a.trans_b = true;
  a.c = m; a.ldc = cin_g; a.stride_c = int64_t(cout_g) * cin_g;
  sgemm(a, stream);
  CONVLAB_LAUNCH(f4x3_weight_grad_tf, dim3(blocks(int64_t(geo.groups) * cout_g * cin_g)), dim3(kThreads), 0, stream,
                 geo, m, diff_wei);
}

}  // namespace convlab::cuda
