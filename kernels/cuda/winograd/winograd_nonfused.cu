// Non-fused Winograd F(m x m, 3 x 3) transform kernels, m = 4 or 6 (layouts in
// winograd_nonfused.hpp).
//
// Each kernel: one thread per filter or per (channel, tile), 256 per block,
// computing one sandwich L X L^T in registers (winograd_transforms.hpp, the
// shared matrices) and reading or writing its alpha^2 values with stride
// (the GEMM operand layout). One template over M serves both tile sizes; the
// launchers pick the instantiation from geo.m.
#include "kernels/cuda/winograd/winograd_nonfused.hpp"

#include <string>

#include "kernels/cuda/winograd/winograd_transforms.hpp"

namespace convlab::cuda {

namespace {

constexpr int kThreads = 256;
using wino::Tf;

// Thread (g, o, i) of a per-filter kernel: filter (g * cout_g + o, i) and its
// alpha^2 values in a (G, A2, cout_g, cin_g) array at slot + xi * stride.
struct FilterThread {
  int g, o, i;
  int64_t slot, stride;
};
template <int M>
__device__ __forceinline__ bool filter_thread(const WinogradGeom& geo, FilterThread& f) {
  constexpr int A2 = (M + 2) * (M + 2);
  const int cin_g = geo.cin / geo.groups, cout_g = geo.cout / geo.groups;
  const int64_t idx = int64_t(blockIdx.x) * kThreads + threadIdx.x;
  if (idx >= int64_t(geo.groups) * cout_g * cin_g) return false;
  f.i = int(idx % cin_g), f.o = int(idx / cin_g % cout_g), f.g = int(idx / (int64_t(cin_g) * cout_g));
  f.slot = (int64_t(f.g) * A2 * cout_g + f.o) * cin_g + f.i;  // (G, A2, cout_g, cin_g)
  f.stride = int64_t(cout_g) * cin_g;
  return true;
}

// Thread (c, t) of a per-(channel, tile) kernel over `channels` channels:
// image n, tile (th, tw), and its alpha^2 values in a (G, A2, ch_g, T) array at
// slot + xi * stride.
struct TileThread {
  int c, n, th, tw;
  int64_t slot, stride;
};
template <int M>
__device__ __forceinline__ bool tile_thread(const WinogradGeom& geo, int channels, TileThread& ct) {
  constexpr int A2 = (M + 2) * (M + 2);
  const int64_t tiles = geo.tiles();
  const int64_t idx = int64_t(blockIdx.x) * kThreads + threadIdx.x;
  if (idx >= int64_t(channels) * tiles) return false;
  const int64_t t = idx % tiles;
  ct.c = int(idx / tiles);
  ct.tw = int(t % geo.tiles_w()), ct.th = int(t / geo.tiles_w() % geo.tiles_h()),
  ct.n = int(t / (int64_t(geo.tiles_w()) * geo.tiles_h()));
  const int ch_g = channels / geo.groups;
  ct.slot = (int64_t(ct.c / ch_g) * A2 * ch_g + ct.c % ch_g) * tiles + t;  // (G, A2, ch_g, T)
  ct.stride = int64_t(ch_g) * tiles;
  return true;
}

// U (G, A2, cout_g, cin_g) from the filter; one thread per (g, o, i).
template <int M>
__global__ void filter_tf_kernel(WinogradGeom geo, const float* __restrict__ wei, float* __restrict__ u) {
  constexpr int A2 = (M + 2) * (M + 2);
  FilterThread f;
  if (!filter_thread<M>(geo, f)) return;
  const int cin_g = geo.cin / geo.groups, cout_g = geo.cout / geo.groups;
  float gf[9], x[A2];
  for (int r = 0; r < 3; ++r)
    for (int s = 0; s < 3; ++s)
      gf[r * 3 + s] = geo.rotate ? wei[((int64_t(f.g * cin_g + f.i) * cout_g + f.o) * 3 + 2 - r) * 3 + 2 - s]
                                 : wei[((int64_t(f.g * cout_g + f.o) * cin_g + f.i) * 3 + r) * 3 + s];
  wino::transform<M, Tf::filter>(gf, x);
#pragma unroll
  for (int xi = 0; xi < A2; ++xi) u[f.slot + xi * f.stride] = x[xi];
}

// V (G, A2, cin_g, T) from the alpha x alpha input patches at (th*m - pad_h,
// tw*m - pad_w) (K = input: B^T d B), or Y' (G, A2, cout_g, T) from the m x m
// diff_dst tiles at (th*m, tw*m) (K = grad: A dY A^T); zeros outside the
// (rows, cols) planes of `in` (channels ch). One thread per (channel, tile).
template <int M, Tf K>
__global__ void patch_tf_kernel(WinogradGeom geo, int ch, int rows, int cols, int pad_h, int pad_w,
                                const float* __restrict__ in, float* __restrict__ out) {
  constexpr int S = K == Tf::input ? M + 2 : M, A2 = (M + 2) * (M + 2);
  TileThread ct;
  if (!tile_thread<M>(geo, ch, ct)) return;
  const int h0 = ct.th * M - pad_h, w0 = ct.tw * M - pad_w;
  const float* plane = in + (int64_t(ct.n) * ch + ct.c) * rows * cols;  // (rows, cols)
  float d[S * S], x[A2];
#pragma unroll
  for (int i = 0; i < S; ++i)
#pragma unroll
    for (int j = 0; j < S; ++j) {
      const int h = h0 + i, w = w0 + j;
      d[i * S + j] = (h >= 0 && h < rows && w >= 0 && w < cols) ? plane[int64_t(h) * cols + w] : 0.0f;
    }
  wino::transform<M, K>(d, x);
#pragma unroll
  for (int xi = 0; xi < A2; ++xi) out[ct.slot + xi * ct.stride] = x[xi];
}

// out tiles from M (G, A2, cout_g, T); one thread per (channel, tile).
template <int M>
__global__ void output_tf_kernel(WinogradGeom geo, const float* __restrict__ m, float* __restrict__ out) {
  constexpr int A2 = (M + 2) * (M + 2);
  TileThread ct;
  if (!tile_thread<M>(geo, geo.cout, ct)) return;
  float x[A2], y[M * M];
#pragma unroll
  for (int xi = 0; xi < A2; ++xi) x[xi] = m[ct.slot + xi * ct.stride];
  wino::transform<M, Tf::output>(x, y);
  float* plane = out + (int64_t(ct.n) * geo.cout + ct.c) * geo.oh * geo.ow;  // (OH, OW)
#pragma unroll
  for (int i = 0; i < M; ++i)
#pragma unroll
    for (int j = 0; j < M; ++j) {
      const int h = ct.th * M + i, w = ct.tw * M + j;
      if (h < geo.oh && w < geo.ow) plane[int64_t(h) * geo.ow + w] = y[i * M + j];
    }
}

// dW from M (G, A2, kg, cg): G^T M G; one thread per (k, c).
template <int M>
__global__ void weight_grad_tf_kernel(WinogradGeom geo, const float* __restrict__ m, float* __restrict__ diff_wei) {
  constexpr int A2 = (M + 2) * (M + 2);
  FilterThread f;
  if (!filter_thread<M>(geo, f)) return;
  float x[A2], w[9];
#pragma unroll
  for (int xi = 0; xi < A2; ++xi) x[xi] = m[f.slot + xi * f.stride];
  wino::transform<M, Tf::weight_grad>(x, w);
  float* dst = diff_wei + (int64_t(f.g * (geo.cout / geo.groups) + f.o) * (geo.cin / geo.groups) + f.i) * 9;
  for (int e = 0; e < 9; ++e) dst[e] = w[e];  // (K, Cg, 3, 3)
}

dim3 blocks(int64_t threads) { return dim3(unsigned((threads + kThreads - 1) / kThreads)); }

int64_t filters(const WinogradGeom& geo) {
  return int64_t(geo.groups) * (geo.cout / geo.groups) * (geo.cin / geo.groups);
}

// Runs f.template operator()<M>() for geo.m.
template <typename F>
void for_tile(const WinogradGeom& geo, F&& f) {
  if (geo.m == 4) f.template operator()<4>();
  else if (geo.m == 6) f.template operator()<6>();
  else fail("non-fused Winograd: no F(" + std::to_string(geo.m) + "x" + std::to_string(geo.m) + ", 3x3) kernels");
}

}  // namespace

void winograd_filter_transform(const WinogradGeom& geo, const float* wei, float* u, void* stream) {
  for_tile(geo, [&]<int M>() {
    CONVLAB_LAUNCH(filter_tf_kernel<M>, blocks(filters(geo)), dim3(kThreads), 0, stream, geo, wei, u);
  });
}

void winograd_input_transform(const WinogradGeom& geo, const float* in, float* v, void* stream) {
  for_tile(geo, [&]<int M>() {
    CONVLAB_LAUNCH((patch_tf_kernel<M, Tf::input>), blocks(geo.cin * geo.tiles()), dim3(kThreads), 0, stream, geo,
                   geo.cin, geo.ih, geo.iw, geo.pad_h, geo.pad_w, in, v);
  });
}

void winograd_output_transform(const WinogradGeom& geo, const float* m, float* out, void* stream) {
  for_tile(geo, [&]<int M>() {
    CONVLAB_LAUNCH(output_tf_kernel<M>, blocks(geo.cout * geo.tiles()), dim3(kThreads), 0, stream, geo, m, out);
  });
}

void winograd_grad_transform(const WinogradGeom& geo, const float* dy, float* yt, void* stream) {
  for_tile(geo, [&]<int M>() {
    CONVLAB_LAUNCH((patch_tf_kernel<M, Tf::grad>), blocks(geo.cout * geo.tiles()), dim3(kThreads), 0, stream, geo,
                   geo.cout, geo.oh, geo.ow, 0, 0, dy, yt);
  });
}

void winograd_weight_grad_transform(const WinogradGeom& geo, const float* m, float* diff_wei, void* stream) {
  for_tile(geo, [&]<int M>() {
    CONVLAB_LAUNCH(weight_grad_tf_kernel<M>, blocks(filters(geo)), dim3(kThreads), 0, stream, geo, m, diff_wei);
  });
}

}  // namespace convlab::cuda
