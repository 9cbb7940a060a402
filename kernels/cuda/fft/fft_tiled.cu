// The hand-written 16x16 tile DFT and inverse of tiled FFT convolution
// (contract in fft_tiled.hpp; the composition is cuda.fft_tiled,
// algorithms/cuda/fft.cu).
//
// tile_dft: one 256-thread block per (plane, tile): the block stages the
//   ph x pw patch (zeros outside the image and beyond the patch) as a 16x16
//   real tile in shared memory; thread (y, v) does the row DFT for v <= 8
//   (complex, shared), then thread (u, v) the column DFT; the 16 x 9 half
//   spectrum (R2C layout) is written to the plane's slot. Twiddles from a
//   16-entry shared table.
// tile_idft: one block per (plane, tile): thread (y, v), v <= 8, inverts along
//   u; thread (y, x) sums the Hermitian half along v (weights 1, 2, ..., 2, 1)
//   and writes the cropped, 1/256-scaled output element. Crops of <= 8 rows
//   (bwd-filter's R x S) take one warp per slot instead (tile_idft_small_kernel):
//   a block per slot would leave most of its 256 threads computing rows the
//   crop drops.
#include "kernels/cuda/fft/fft_tiled.hpp"

#include "kernels/cuda/simt/simt.hpp"

namespace convlab::cuda {

namespace {

constexpr int T = kFftTile, TH = T / 2 + 1, SPEC = T * TH, kThreads = T * T;

__global__ void __launch_bounds__(kThreads)
    tile_dft_kernel(const float* __restrict__ in, FftTileGeom tg, FftPlaneMap pm, float2* __restrict__ out) {
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
  if (pm.order == FftPlaneOrder::image_tiles) {
    slot = (int64_t(b / pm.ch) * tiles + t) * pm.ch + b % pm.ch;
  } else if (pm.order == FftPlaneOrder::filter_rotated) {  // b = c * kg + kl over groups: c in [0, C)
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

__global__ void __launch_bounds__(kThreads)
    tile_idft_kernel(const float2* __restrict__ in, FftTileOut og, float* __restrict__ out) {
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

// Small crops (crop_h <= 8: bwd-filter's R x S, fwd's 16 - R + 1 for R >= 9):
// one warp per slot, kSlotsPerBlock slots per block. Lane l does the
// inverse along u for the pairs (y < crop_h, v) l, l + 32, ... and then the
// Hermitian sum for the outputs (y, x) l, l + 32, ...; the same sums in the
// same order as tile_idft_kernel, over only the rows the crop keeps.
constexpr int kSlotsPerBlock = kThreads / 32, kSmallCropRows = 8;

__global__ void __launch_bounds__(kThreads)
    tile_idft_small_kernel(const float2* __restrict__ in, int64_t slots, FftTileOut og, float* __restrict__ out) {
  CONVLAB_SHARED(float2, colinv, [kSlotsPerBlock][kSmallCropRows][TH]);
  CONVLAB_SHARED(float, tw_cos, [T]);
  CONVLAB_SHARED(float, tw_sin, [T]);
  const int tid = int(threadIdx.x), w = tid / 32, lane = tid % 32;
  if (tid < T) {
    tw_cos[tid] = cosf(6.283185307179586f * float(tid) / float(T));
    tw_sin[tid] = sinf(6.283185307179586f * float(tid) / float(T));
  }
  __syncthreads();
  const int64_t slot = int64_t(blockIdx.x) * kSlotsPerBlock + w;
  const bool live = slot < slots;
  if (live) {
    for (int i = lane; i < og.crop_h * TH; i += 32) {  // inverse along u: pair (y, v)
      const int y = i / TH, v = i % TH;
      float re = 0.0f, im = 0.0f;
      for (int u = 0; u < T; ++u) {
        const int k = (u * y) % T;
        const float2 z = in[slot * SPEC + u * TH + v];
        re += z.x * tw_cos[k] - z.y * tw_sin[k];  // z * e^{+i theta}
        im += z.x * tw_sin[k] + z.y * tw_cos[k];
      }
      colinv[w][y][v] = float2{re, im};
    }
  }
  __syncthreads();
  if (!live) return;
  const int tiles = og.tiles_h * og.tiles_w;
  const int o = int(slot % og.ch), t = int(slot / og.ch % tiles), img = int(slot / (int64_t(og.ch) * tiles));
  for (int i = lane; i < og.crop_h * og.crop_w; i += 32) {  // Hermitian sum along v: output (y, x)
    const int y = i / og.crop_w, x = i % og.crop_w;
    float s = 0.0f;
    for (int v = 0; v < TH; ++v) {
      const int k = (v * x) % T;
      const float wgt = (v == 0 || v == T / 2) ? 1.0f : 2.0f;
      const float2 z = colinv[w][y][v];
      s += wgt * (z.x * tw_cos[k] - z.y * tw_sin[k]);
    }
    const int r = t / og.tiles_w * og.step_h + y, c = t % og.tiles_w * og.step_w + x;
    if (r < og.rows && c < og.cols)
      out[((int64_t(img) * og.ch + o) * og.rows + r) * og.cols + c] = s * (1.0f / float(T * T));
  }
}

}  // namespace

void fft_tile_dft(const float* in, int64_t planes, const FftTileGeom& tg, const FftPlaneMap& pm, float2* out,
                  void* stream) {
  const int64_t blocks = planes * tg.tiles_h * tg.tiles_w;
  CONVLAB_LAUNCH(tile_dft_kernel, dim3(unsigned(blocks)), dim3(kThreads), 0, stream, in, tg, pm, out);
}

void fft_tile_idft(const float2* in, int64_t slots, const FftTileOut& og, float* out, void* stream) {
  if (og.crop_h <= kSmallCropRows) {
    const int64_t blocks = (slots + kSlotsPerBlock - 1) / kSlotsPerBlock;
    CONVLAB_LAUNCH(tile_idft_small_kernel, dim3(unsigned(blocks)), dim3(kThreads), 0, stream, in, slots, og, out);
  } else {
    CONVLAB_LAUNCH(tile_idft_kernel, dim3(unsigned(slots)), dim3(kThreads), 0, stream, in, og, out);
  }
}

}  // namespace convlab::cuda
