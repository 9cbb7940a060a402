// Tiled FFT convolution with a hand-written 16x16 DFT (contract in fft_tiled.hpp).
//
// tile_dft: one 256-thread block per (plane, tile): the block stages the
//   ph x pw patch (zeros outside the image and beyond the patch) as a 16x16
//   real tile in shared memory; thread (y, v) does the row DFT for v <= 8
//   (complex, shared), then thread (u, v) the column DFT; the 16 x 9 half
//   spectrum (R2C layout) is written to the plane's slot. Twiddles from a
//   16-entry shared table.
// tile_idft: one block per (plane, tile): thread (y, v), v <= 8, inverts along
//   u; thread (y, x) sums the Hermitian half along v (weights 1, 2, ..., 2, 1)
//   and writes the cropped, 1/256-scaled output element.
// The channel reduction is fft_cmac (fft_conv.cu) with (image, tile) pairs as
// its batch.
#include "kernels/cuda/fft/fft_tiled.hpp"

#include <algorithm>

#include "kernels/cuda/fft/fft_conv.hpp"
#include "kernels/cuda/simt/simt.hpp"

namespace convlab::cuda {

namespace {

constexpr int T = kFftTile, TH = T / 2 + 1, SPEC = T * TH, kThreads = T * T;

struct TileGeom {     // where the tiles of a set of planes sit
  int rows, cols;     // plane size
  int ph, pw;         // patch size read per tile (<= T)
  int step_h, step_w; // tile stride
  int off_h, off_w;   // origin of tile (0, 0)
  int tiles_h, tiles_w;
};

// Source plane of destination plane b for the filter in bwd-data:
// W'(c, kl) = rot180 W(g*kg + kl, cl).
struct PlaneMap {
  int mode;  // 0: plane b is (image i, channel c) -> slot (i * tiles + t) * ch + c; 1: filter as is; 2: rotated filter
  int ch;    // channels per image (mode 0); for mode 2: cg (orig), kg (orig)
  int cg, kg;
};

__global__ void __launch_bounds__(kThreads)
    tile_dft_kernel(const float* __restrict__ in, TileGeom tg, PlaneMap pm, float2* __restrict__ out) {
  CONVLAB_SHARED(float, patch, [T][T]);
  CONVLAB_SHARED(float2, rowdft, [T][TH]);
  CONVLAB_SHARED(float, tw_cos, [T]);
  CONVLAB_SHARED(float, tw_sin, [T]);
  const int tiles = tg.tiles_h * tg.tiles_w;
  const int t = int(blockIdx.x) % tiles, b = int(blockIdx.x) / tiles;
  const int ty = int(threadIdx.x) / T, tx = int(threadIdx.x) % T;
  if (ty == 0) {
    tw_cos[tx] = cosf(6.283185307179586f * float(tx) / float(T));
    tw_sin[tx] = sinf(6.283185307179586f * float(tx) / float(T));
  }
  // source plane and output slot
  int64_t src_plane = b, slot = b;
  bool rot = false;
  if (pm.mode == 0) {
    slot = (int64_t(b / pm.ch) * tiles + t) * pm.ch + b % pm.ch;
  } else if (pm.mode == 2) {  // b = c * kg + kl over groups: c in [0, C)
    const int c = b / pm.kg, kl = b % pm.kg, g = c / pm.cg, cl = c % pm.cg;
    src_plane = int64_t(g * pm.kg + kl) * pm.cg + cl;
    rot = true;
  }
  const int r0 = tg.off_h + t / tg.tiles_w * tg.step_h, c0 = tg.off_w + t % tg.tiles_w * tg.step_w;
  {
    const int y = ty, x = tx;
    float v = 0.0f;
    if (y < tg.ph && x < tg.pw) {
      const int sy = rot ? tg.ph - 1 - y : y, sx = rot ? tg.pw - 1 - x : x;
      const int r = r0 + sy, c = c0 + sx;
      if (r >= 0 && r < tg.rows && c >= 0 && c < tg.cols) v = in[(src_plane * tg.rows + r) * tg.cols + c];
    }
    patch[y][x] = v;
  }
  __syncthreads();
  if (tx < TH) {  // row DFT: thread (y, v)
    float re = 0.0f, im = 0.0f;
    for (int x = 0; x < T; ++x) {
      const int k = (tx * x) % T;
      re = fmaf(patch[ty][x], tw_cos[k], re);
      im = fmaf(-patch[ty][x], tw_sin[k], im);
    }
    rowdft[ty][tx] = float2{re, im};
  }
  __syncthreads();
  if (tx < TH) {  // column DFT: thread (u, v)
    float re = 0.0f, im = 0.0f;
    for (int y = 0; y < T; ++y) {
      const int k = (ty * y) % T;
      const float2 z = rowdft[y][tx];
      re += z.x * tw_cos[k] + z.y * tw_sin[k];  // z * e^{-i theta}
      im += z.y * tw_cos[k] - z.x * tw_sin[k];
    }
    out[slot * SPEC + ty * TH + tx] = float2{re, im};  // (slots, T, T/2+1)
  }
}

// out plane o = slot's channel; crop rows [0, crop_h) x [0, crop_w) of every tile
// to (o, tile origin + y, x) in an (rows, cols) output plane.
struct OutGeom {
  int ch;  // output channels per (image, tile) slot group: slot = (i * tiles + t) * ch + o
  int rows, cols, crop_h, crop_w, step_h, step_w, tiles_h, tiles_w;
};

__global__ void __launch_bounds__(kThreads)
    tile_idft_kernel(const float2* __restrict__ in, OutGeom og, float* __restrict__ out) {
  CONVLAB_SHARED(float2, colinv, [T][TH]);
  CONVLAB_SHARED(float, tw_cos, [T]);
  CONVLAB_SHARED(float, tw_sin, [T]);
  const int tiles = og.tiles_h * og.tiles_w;
  const int64_t slot = blockIdx.x;
  const int o = int(slot % og.ch), t = int(slot / og.ch % tiles), img = int(slot / (int64_t(og.ch) * tiles));
  const int ty = int(threadIdx.x) / T, tx = int(threadIdx.x) % T;
  if (ty == 0) {
    tw_cos[tx] = cosf(6.283185307179586f * float(tx) / float(T));
    tw_sin[tx] = sinf(6.283185307179586f * float(tx) / float(T));
  }
  __syncthreads();
  if (tx < TH) {  // inverse along u: thread (y, v)
    float re = 0.0f, im = 0.0f;
    for (int u = 0; u < T; ++u) {
      const int k = (u * ty) % T;
      const float2 z = in[slot * SPEC + u * TH + tx];
      re += z.x * tw_cos[k] - z.y * tw_sin[k];  // z * e^{+i theta}
      im += z.x * tw_sin[k] + z.y * tw_cos[k];
    }
    colinv[ty][tx] = float2{re, im};
  }
  __syncthreads();
  const int y = ty, x = tx;
  float s = 0.0f;
  for (int v = 0; v < TH; ++v) {
    const int k = (v * x) % T;
    const float wgt = (v == 0 || v == T / 2) ? 1.0f : 2.0f;
    const float2 z = colinv[y][v];
    s += wgt * (z.x * tw_cos[k] - z.y * tw_sin[k]);
  }
  const int r = t / og.tiles_w * og.step_h + y, c = t % og.tiles_w * og.step_w + x;
  if (y < og.crop_h && x < og.crop_w && r < og.rows && c < og.cols)
    out[((int64_t(img) * og.ch + o) * og.rows + r) * og.cols + c] = s * (1.0f / float(T * T));
}

struct Plan {
  ConvShape cm;        // the shape fft_cmac sees (n = images * tiles)
  int cin, cout, in_rows, in_cols, out_rows, out_cols, pad_h, pad_w, mh, mw, tiles_h, tiles_w;
};

Plan plan_fwd_like(const ConvShape& sh, bool bwd_data) {
  Plan pl;
  pl.cin = bwd_data ? sh.k : sh.c;
  pl.cout = bwd_data ? sh.c : sh.k;
  pl.in_rows = bwd_data ? sh.p : sh.h;
  pl.in_cols = bwd_data ? sh.q : sh.w;
  pl.out_rows = bwd_data ? sh.h : sh.p;
  pl.out_cols = bwd_data ? sh.w : sh.q;
  pl.pad_h = bwd_data ? sh.r - 1 - sh.pad_h : sh.pad_h;
  pl.pad_w = bwd_data ? sh.s - 1 - sh.pad_w : sh.pad_w;
  pl.mh = T - sh.r + 1;
  pl.mw = T - sh.s + 1;
  pl.tiles_h = (pl.out_rows + pl.mh - 1) / pl.mh;
  pl.tiles_w = (pl.out_cols + pl.mw - 1) / pl.mw;
  pl.cm = sh;
  pl.cm.n = sh.n * pl.tiles_h * pl.tiles_w;
  pl.cm.c = pl.cin;
  pl.cm.k = pl.cout;
  return pl;
}

}  // namespace

const char* fft_tiled_unsupported(const ConvShape& sh) {
  if (sh.stride_h != 1 || sh.stride_w != 1) return "needs stride 1";
  if (sh.dil_h != 1 || sh.dil_w != 1) return "needs dilation 1";
  if (sh.r > T || sh.s > T) return "needs R, S <= 16 (the tile)";
  return "";
}

int64_t fft_tiled_workspace_floats(const ConvShape& sh, Direction direction) {
  const Plan pl = plan_fwd_like(sh, direction == Direction::bwd_data);
  const int64_t tiles = int64_t(sh.n) * pl.tiles_h * pl.tiles_w;
  const int64_t filt = int64_t(sh.k) * (sh.c / sh.groups);
  return int64_t(2) * SPEC * (tiles * pl.cin + filt + tiles * pl.cout);
}

void fft_tiled_conv(const ConvShape& sh, Direction direction, const float* src, const float* wei, const float* dst_in,
                    float* out, float* ws, void* stream) {
  const Plan pl = plan_fwd_like(sh, direction == Direction::bwd_data);
  const int tiles = pl.tiles_h * pl.tiles_w;
  const int64_t slots = int64_t(sh.n) * tiles;
  const int64_t nfilt = int64_t(sh.k) * (sh.c / sh.groups);
  float2* sa = reinterpret_cast<float2*>(ws);
  float2* sb = sa + slots * pl.cin * SPEC;
  float2* so = sb + nfilt * SPEC;
  const dim3 block(kThreads);
  if (direction != Direction::bwd_filter) {
    // input tiles: T x T patches at (t * m - pad)
    const TileGeom in_g{pl.in_rows, pl.in_cols, T, T, pl.mh, pl.mw, -pl.pad_h, -pl.pad_w, pl.tiles_h, pl.tiles_w};
    CONVLAB_LAUNCH(tile_dft_kernel, dim3(unsigned(int64_t(sh.n) * pl.cin * tiles)), block, 0, stream,
                   direction == Direction::fwd ? src : dst_in, in_g, (PlaneMap{0, pl.cin, 0, 0}), sa);
    const TileGeom w_g{sh.r, sh.s, sh.r, sh.s, 0, 0, 0, 0, 1, 1};
    const PlaneMap wm = direction == Direction::fwd ? PlaneMap{1, 0, 0, 0}
                                       : PlaneMap{2, 0, sh.c / sh.groups, sh.k / sh.groups};
    CONVLAB_LAUNCH(tile_dft_kernel, dim3(unsigned(nfilt)), block, 0, stream, wei, w_g, wm, sb);
    fft_cmac(pl.cm, Direction::fwd, SPEC, sa, sb, so, slots * pl.cout, stream);
    const OutGeom og{pl.cout, pl.out_rows, pl.out_cols, pl.mh, pl.mw, pl.mh, pl.mw, pl.tiles_h, pl.tiles_w};
    CONVLAB_LAUNCH(tile_idft_kernel, dim3(unsigned(slots * pl.cout)), block, 0, stream, so, og, out);
  } else {
    // x patches (T x T at t * m - pad) and diff_dst tiles (m x m at t * m), then
    // DW[k][cl] = sum over (image, tile) X conj(DY), cropped to R x S.
    const TileGeom x_g{sh.h, sh.w, T, T, pl.mh, pl.mw, -sh.pad_h, -sh.pad_w, pl.tiles_h, pl.tiles_w};
    CONVLAB_LAUNCH(tile_dft_kernel, dim3(unsigned(int64_t(sh.n) * sh.c * tiles)), block, 0, stream, src, x_g,
                   (PlaneMap{0, sh.c, 0, 0}), sa);
    float2* sdy = sb;  // reuse: (slots, K) spectra need slots * K * SPEC <= the filter + output space
    float2* sdw = sb + slots * sh.k * SPEC;
    const TileGeom dy_g{sh.p, sh.q, pl.mh, pl.mw, pl.mh, pl.mw, 0, 0, pl.tiles_h, pl.tiles_w};
    CONVLAB_LAUNCH(tile_dft_kernel, dim3(unsigned(int64_t(sh.n) * sh.k * tiles)), block, 0, stream, dst_in, dy_g,
                   (PlaneMap{0, sh.k, 0, 0}), sdy);
    fft_cmac(pl.cm, Direction::bwd_filter, SPEC, sa, sdy, sdw, nfilt, stream);
    const OutGeom og{int(nfilt), sh.r, sh.s, sh.r, sh.s, 0, 0, 1, 1};
    CONVLAB_LAUNCH(tile_idft_kernel, dim3(unsigned(nfilt)), block, 0, stream, sdw, og, out);
  }
}

}  // namespace convlab::cuda
