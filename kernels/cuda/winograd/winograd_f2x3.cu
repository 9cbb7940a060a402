// Fused Winograd F(2x2, 3x3) kernels and their launchers (contract in
// winograd_f2x3.hpp).
//
// filter-transform kernel: one thread per slot of U (the fused kernel's block
//   order, winograd_f2x3.hpp): U = G g G^T of filter (o, i), zeros past the
//   channel edges; the 16 values go to 16 planes of 128 floats, consecutive
//   threads to consecutive words. Run once per call, so a filter is transformed
//   once, not once per block of tiles and images that uses it.
// fwd / bwd-data kernel: one 256-thread block per (32 output tiles = 4 x 8
//   tiles = 8 x 16 pixels, 16 output channels of one group, image). Loop over
//   the group's input channels in chunks of 8:
//     thread (t = tid % 32, ci = tid / 32) loads its 4x4 input patch (zeros
//     for padding), computes V = B^T d B and stores the 16 values to shared
//     Vs[xi][ci][t]; the block copies the chunk's transformed filters,
//     Us[xi][ci][k] (2048 contiguous floats of U), as two float4s per thread;
//     then thread (t, kq) accumulates M[xi] += U[xi][ci][k] V[xi][ci][t] for
//     k = kq and kq + 8, all 16 xi, in registers.
//   Finally each thread turns its two 4x4 M into 2x2 outputs, Y = A^T M A.
//   bwd-data is the same kernels reading diff_dst as input and the filter as
//   w'(c, k, r, s) = w(k, c, 2 - r, 2 - s), with padding 2 - pad (the geometry
//   cuda.winograd_f2x3 passes, algorithms/cuda/winograd.cu).
// bwd-filter kernel: one block per (16 output channels, 16 input channels of
//   one group); loop over all (image, tile) pairs in chunks of 16: thread
//   (row, t) transforms a 2x2 diff_dst tile (A dY A^T) and a 4x4 input patch
//   (B^T d B) into shared memory, then thread (kk, cc) accumulates its 16
//   transformed-domain sums over the chunk; the end is dW = G^T M G. The shared
//   planes pad one word after every two rows (winograd_f2x3_bwd_filter_word):
//   no bank conflicts on the stores nor on the loads.
#include "kernels/cuda/winograd/winograd_f2x3.hpp"

#include <cstdint>

#include "kernels/cuda/simt/simt.hpp"
#include "kernels/cuda/winograd/winograd_transforms.hpp"

namespace convlab::cuda {

namespace {

constexpr int TT = 32, TROWS = 4, TCOLS = 8, KB = 16, CB = 8, kThreads = 256;
constexpr int UCHUNK = 16 * CB * KB;          // floats of U per (channel block, input chunk)
constexpr int FT = 16, FKB = 16, FCB = 16;  // bwd-filter: tiles per chunk, channel blocks
static_assert(FT == 16 && FKB == 16 && FCB == 16, "winograd_f2x3_bwd_filter_word's layout");

// Channel blocks of U (winograd_f2x3.hpp): ceil(cout_g / KB) x ceil(cin_g / CB).
__host__ __device__ inline int u_kblocks(const WinogradFusedGeom& geo) {
  return (geo.cout / geo.groups + KB - 1) / KB;
}
__host__ __device__ inline int u_cchunks(const WinogradFusedGeom& geo) {
  return (geo.cin / geo.groups + CB - 1) / CB;
}

// The transforms, from the shared F(2x2, 3x3) matrices (winograd_transforms.hpp).
using wino::Tf;
__device__ __forceinline__ void input_tf(const float d[16], float v[16]) { wino::transform<2, Tf::input>(d, v); }
__device__ __forceinline__ void filter_tf(const float g[9], float u[16]) { wino::transform<2, Tf::filter>(g, u); }
__device__ __forceinline__ void output_tf(const float m[16], float y[4]) { wino::transform<2, Tf::output>(m, y); }
__device__ __forceinline__ void grad_tf(const float dy[4], float a[16]) { wino::transform<2, Tf::grad>(dy, a); }
__device__ __forceinline__ void weight_grad_tf(const float m[16], float w[9]) {
  wino::transform<2, Tf::weight_grad>(m, w);
}

__global__ void __launch_bounds__(kThreads)
    winograd_f2x3_fused_kernel(WinogradFusedGeom geo, const float* __restrict__ in, const float* __restrict__ u,
                               float* __restrict__ out, unsigned y0, unsigned z0) {
  CONVLAB_SHARED(float, vs, [16][CB][TT]);       // transformed input tiles
  CONVLAB_SHARED(float4, us4, [16][CB][KB / 4]);  // transformed filters, (16, CB, KB) floats
  const float(*us)[CB][KB] = reinterpret_cast<const float(*)[CB][KB]>(&us4[0][0][0]);
  const int tid = int(threadIdx.x);
  const int cin_g = geo.cin / geo.groups, cout_g = geo.cout / geo.groups;
  const int tiles_w = (geo.ow + 1) / 2, tiles_h = (geo.oh + 1) / 2;
  const int bw = (tiles_w + TCOLS - 1) / TCOLS;
  const int tr0 = int(blockIdx.x) / bw * TROWS, tc0 = int(blockIdx.x) % bw * TCOLS;
  const int kblocks = (cout_g + KB - 1) / KB;
  const int by = int(blockIdx.y + y0);  // grid chunks: (groups * kblocks, N) = (y0 + blockIdx.y, z0 + blockIdx.z)
  const int g = by / kblocks, o0 = by % kblocks * KB;  // o0: within the group
  const int n = int(blockIdx.z + z0);
  // This block's chunks of U: (UCHUNK floats) x ceil(cin_g / CB), from (g, o0 / KB).
  const float4* u4 = reinterpret_cast<const float4*>(u + (int64_t(g) * kblocks + o0 / KB) * u_cchunks(geo) * UCHUNK);

  const int t = tid % TT, kq = tid / TT;  // compute role: tile t, output channels kq, kq + 8
  const int my_tr = tr0 + t / TCOLS, my_tc = tc0 + t % TCOLS;
  float acc[2][16];
  for (int j = 0; j < 2; ++j)
    for (int x = 0; x < 16; ++x) acc[j][x] = 0.0f;

  for (int c0 = 0; c0 < cin_g; c0 += CB) {
    {  // input transform: thread (t, ci)
      const int ci = tid / TT, c = c0 + ci;
      float d[16];
      const int h0 = my_tr * 2 - geo.pad_h, w0 = my_tc * 2 - geo.pad_w;
      const float* plane = in + (int64_t(n) * geo.cin + g * cin_g + c) * geo.ih * geo.iw;  // (IH, IW)
      for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 4; ++j) {
          const int h = h0 + i, w = w0 + j;
          d[i * 4 + j] = (c < cin_g && my_tr < tiles_h && my_tc < tiles_w && h >= 0 && h < geo.ih && w >= 0 &&
                          w < geo.iw)
                             ? plane[int64_t(h) * geo.iw + w]
                             : 0.0f;
        }
      float v[16];
      input_tf(d, v);
      for (int x = 0; x < 16; ++x) vs[x][ci][t] = v[x];
    }
    {  // the chunk's transformed filters: UCHUNK / 4 float4s, two per thread
      const float4* src4 = u4 + int64_t(c0 / CB) * (UCHUNK / 4);
      float4* dst4 = &us4[0][0][0];
      for (int e = tid; e < UCHUNK / 4; e += kThreads) simt::vstore(dst4 + e, simt::vload(src4 + e));
    }
    __syncthreads();
    for (int x = 0; x < 16; ++x)
      for (int ci = 0; ci < CB; ++ci) {
        const float v = vs[x][ci][t];
        acc[0][x] = fmaf(us[x][ci][kq], v, acc[0][x]);
        acc[1][x] = fmaf(us[x][ci][kq + 8], v, acc[1][x]);
      }
    __syncthreads();
  }
#pragma unroll  // acc[j] stays in registers
  for (int j = 0; j < 2; ++j) {
    const int o = o0 + kq + 8 * j;
    if (o >= cout_g || my_tr >= tiles_h || my_tc >= tiles_w) continue;
    float y[4];
    output_tf(acc[j], y);
    float* plane = out + (int64_t(n) * geo.cout + g * cout_g + o) * geo.oh * geo.ow;  // (OH, OW)
    for (int i = 0; i < 2; ++i)
      for (int jj = 0; jj < 2; ++jj) {
        const int h = my_tr * 2 + i, w = my_tc * 2 + jj;
        if (h < geo.oh && w < geo.ow) plane[int64_t(h) * geo.ow + w] = y[i * 2 + jj];
      }
  }
}

// U (groups, kblocks, cchunks, 16, CB, KB) from the filter; one thread per
// (g, kb, cc, ci, kk) slot, kk fastest.
__global__ void __launch_bounds__(kThreads)
    winograd_f2x3_filter_kernel(WinogradFusedGeom geo, const float* __restrict__ wei, float* __restrict__ u) {
  const int cin_g = geo.cin / geo.groups, cout_g = geo.cout / geo.groups;
  const int kblocks = u_kblocks(geo), cchunks = u_cchunks(geo);
  const int64_t idx = int64_t(blockIdx.x) * kThreads + threadIdx.x;
  if (idx >= int64_t(geo.groups) * kblocks * cchunks * (CB * KB)) return;
  const int kk = int(idx % KB), ci = int(idx / KB % CB);
  const int64_t chunk = idx / (CB * KB);  // (g * kblocks + kb) * cchunks + cc
  const int cc = int(chunk % cchunks), kb = int(chunk / cchunks % kblocks), g = int(chunk / cchunks / kblocks);
  const int o = kb * KB + kk, i = cc * CB + ci;
  float gf[9];
  for (int r = 0; r < 3; ++r)
    for (int s = 0; s < 3; ++s) {
      float v = 0.0f;
      if (o < cout_g && i < cin_g) {
        if (!geo.rotate)  // wei (cout, cin_g, 3, 3)
          v = wei[((int64_t(g * cout_g + o) * cin_g + i) * 3 + r) * 3 + s];
        else  // wei (K = cin, C/g = cout_g, 3, 3), rotated
          v = wei[((int64_t(g * cin_g + i) * cout_g + o) * 3 + (2 - r)) * 3 + (2 - s)];
      }
      gf[r * 3 + s] = v;
    }
  float x[16];
  filter_tf(gf, x);
  float* slot = u + chunk * UCHUNK + ci * KB + kk;  // (16, CB, KB) of this chunk
  for (int xi = 0; xi < 16; ++xi) slot[xi * (CB * KB)] = x[xi];
}

__global__ void __launch_bounds__(kThreads)
    winograd_f2x3_bwd_filter_kernel(ConvShape sh, const float* __restrict__ src, const float* __restrict__ diff_dst,
                                    float* __restrict__ diff_wei, unsigned y0) {
  // Transformed diff_dst tiles and input patches, (16, rows, FT) with one pad
  // word after every two rows: word winograd_f2x3_bwd_filter_word(row, t).
  CONVLAB_SHARED(float, ys, [16][kWinogradF2x3BwdFilterPlaneWords]);
  CONVLAB_SHARED(float, xs, [16][kWinogradF2x3BwdFilterPlaneWords]);
  const int tid = int(threadIdx.x);
  const int cg = sh.c / sh.groups, kg = sh.k / sh.groups;
  const int kblocks = (kg + FKB - 1) / FKB;
  const int by = int(blockIdx.y + y0);  // grid chunks along y
  const int g = by / kblocks, k0 = by % kblocks * FKB, c0 = int(blockIdx.x) * FCB;
  const int tiles_w = (sh.q + 1) / 2, tiles_h = (sh.p + 1) / 2, tiles = tiles_h * tiles_w;
  const int64_t total = int64_t(sh.n) * tiles;
  const int my_k = tid / FCB, my_c = tid % FCB;  // accumulate role
  float acc[16];
  for (int x = 0; x < 16; ++x) acc[x] = 0.0f;

  for (int64_t t0 = 0; t0 < total; t0 += FT) {
    {  // transform role: tile t of the chunk, channel row tid / FT
      const int t = tid % FT, row = tid / FT;
      const int64_t tt = t0 + t;
      const bool valid = tt < total;
      const int n = valid ? int(tt / tiles) : 0, tile = valid ? int(tt % tiles) : 0;
      const int p0 = tile / tiles_w * 2, q0 = tile % tiles_w * 2;
      const int k = g * kg + k0 + row;  // diff_dst tile of output channel k
      float dy[4];
      for (int i = 0; i < 2; ++i)
        for (int j = 0; j < 2; ++j) {
          const int p = p0 + i, q = q0 + j;
          dy[i * 2 + j] = (valid && k0 + row < kg && p < sh.p && q < sh.q)
                              ? diff_dst[((int64_t(n) * sh.k + k) * sh.p + p) * sh.q + q]
                              : 0.0f;
        }
      float a[16];
      grad_tf(dy, a);
      const int word = winograd_f2x3_bwd_filter_word(row, t);
      for (int x = 0; x < 16; ++x) ys[x][word] = a[x];
      const int c = g * cg + c0 + row;  // input patch of channel c
      float d[16];
      for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 4; ++j) {
          const int h = p0 - sh.pad_h + i, w = q0 - sh.pad_w + j;
          d[i * 4 + j] = (valid && c0 + row < cg && h >= 0 && h < sh.h && w >= 0 && w < sh.w)
                             ? src[((int64_t(n) * sh.c + c) * sh.h + h) * sh.w + w]
                             : 0.0f;
        }
      float v[16];
      input_tf(d, v);
      for (int x = 0; x < 16; ++x) xs[x][word] = v[x];
    }
    __syncthreads();
    const int yk = winograd_f2x3_bwd_filter_word(my_k, 0), xc = winograd_f2x3_bwd_filter_word(my_c, 0);
    for (int x = 0; x < 16; ++x)
      for (int t = 0; t < FT; ++t) acc[x] = fmaf(ys[x][yk + t], xs[x][xc + t], acc[x]);
    __syncthreads();
  }
  if (k0 + my_k < kg && c0 + my_c < cg) {
    float w[9];
    weight_grad_tf(acc, w);
    float* dst = diff_wei + (int64_t(g * kg + k0 + my_k) * cg + c0 + my_c) * 9;  // (K, Cg, 3, 3)
    for (int i = 0; i < 9; ++i) dst[i] = w[i];
  }
}

}  // namespace

int64_t winograd_f2x3_filter_floats(const WinogradFusedGeom& geo) {
  return int64_t(geo.groups) * u_kblocks(geo) * u_cchunks(geo) * UCHUNK;
}

void winograd_f2x3_filter_transform(const WinogradFusedGeom& geo, const float* wei, float* u, void* stream) {
  const int64_t slots = winograd_f2x3_filter_floats(geo) / 16;
  CONVLAB_LAUNCH(winograd_f2x3_filter_kernel, dim3(unsigned((slots + kThreads - 1) / kThreads)), dim3(kThreads), 0,
                 stream, geo, wei, u);
}

void winograd_f2x3_fused(const WinogradFusedGeom& geo, const float* in, const float* u, float* out, void* stream) {
  const int tiles_h = (geo.oh + 1) / 2, tiles_w = (geo.ow + 1) / 2;
  const int cout_g = geo.cout / geo.groups;
  simt::for_each_grid_chunk(uint64_t(((tiles_h + TROWS - 1) / TROWS) * ((tiles_w + TCOLS - 1) / TCOLS)),
                            uint64_t(geo.groups) * ((cout_g + KB - 1) / KB), uint64_t(geo.n),
                            [&](dim3 grid, unsigned y0, unsigned z0) {
                              CONVLAB_LAUNCH(winograd_f2x3_fused_kernel, grid, dim3(kThreads), 0, stream, geo, in,
                                             u, out, y0, z0);
                            });
}

void winograd_f2x3_bwd_filter(const ConvShape& sh, const float* src, const float* diff_dst, float* diff_wei,
                              void* stream) {
  const int cg = sh.c / sh.groups, kg = sh.k / sh.groups;
  simt::for_each_grid_chunk(uint64_t((cg + FCB - 1) / FCB), uint64_t(sh.groups) * ((kg + FKB - 1) / FKB), 1,
                            [&](dim3 grid, unsigned y0, unsigned) {
                              CONVLAB_LAUNCH(winograd_f2x3_bwd_filter_kernel, grid, dim3(kThreads), 0, stream, sh,
                                             src, diff_dst, diff_wei, y0);
                            });
}

}  // namespace convlab::cuda
