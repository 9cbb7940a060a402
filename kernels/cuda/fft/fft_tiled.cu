// The hand-written 16x16 tile DFT and inverse of tiled FFT convolution
// (contract in fft_tiled.hpp; the composition is cuda.fft_tiled,
// algorithms/cuda/fft.cu).
//
// tile_dft: 16 consecutive slots (plane, tile) a 256-thread block: the block
//   stages each ph x pw patch (zeros outside the image and beyond the patch) as
//   a 16x16 real tile in shared memory; thread (tile, y) transforms its row, a
//   16-point radix-4 FFT in registers (9 coefficients kept: the Hermitian
//   half), then thread (tile, v), v <= 8, its column; the block's 16 x (16 x 9)
//   half spectra (R2C layout), contiguous in the output, are written together.
// tile_idft: 16 consecutive slots a block: thread (tile, v), v <= 8, inverts
//   along u, thread (tile, y) along v (the Hermitian half extended: weights
//   1, 2, ..., 2, 1), both 16-point FFTs, and writes the cropped, 1/256-scaled
//   row. Crops of <= 8 rows (bwd-filter's R x S) take one warp per slot
//   instead (tile_idft_small_kernel), over only the rows the crop keeps.
#include "kernels/cuda/fft/fft_tiled.hpp"

#include "kernels/cuda/simt/simt.hpp"

namespace convlab::cuda {

namespace {

constexpr int T = kFftTile, TH = T / 2 + 1, SPEC = T * TH, kThreads = T * T;

// e^{sign 2 pi i k / 16} a, k in [0, 16): constant folded where k is (the radix-4 steps below).
template <int SIGN>
__device__ __forceinline__ float2 twiddle16(float2 a, int k) {
  constexpr float c1 = 0.92387953251128674f, s1 = 0.38268343236508978f, h = 0.70710678118654752f;
  float c = 1.0f, s = 0.0f;  // cos, sin of 2 pi k / 16
  switch (k & 15) {
    case 0: c = 1.0f; s = 0.0f; break;
    case 1: c = c1; s = s1; break;
    case 2: c = h; s = h; break;
    case 3: c = s1; s = c1; break;
    case 4: c = 0.0f; s = 1.0f; break;
    case 5: c = -s1; s = c1; break;
    case 6: c = -h; s = h; break;
    case 7: c = -c1; s = s1; break;
    case 8: c = -1.0f; s = 0.0f; break;
    case 9: c = -c1; s = -s1; break;
    default: c = -h; s = -h; break;  // 10 and above do not occur (k = y2 * u1 <= 9)
  }
  s = SIGN > 0 ? s : -s;
  return float2{a.x * c - a.y * s, a.x * s + a.y * c};
}

// X[u] = sum_y z[y] e^{sign 2 pi i u y / 16}: radix 4 x 4 (y = 4 y1 + y2, u = u1 + 4 u2): a 4-point
// DFT over y1 per y2, the twiddle e^{sign 2 pi i y2 u1 / 16}, a 4-point DFT over y2 per u1.
template <int SIGN>
__device__ __forceinline__ void dft16(const float2 (&z)[T], float2 (&x)[T]) {
  float2 a[4][4];  // [y2][u1]
  for (int y2 = 0; y2 < 4; ++y2) {
    const float2 w0 = z[y2], w1 = z[4 + y2], w2 = z[8 + y2], w3 = z[12 + y2];
    const float2 t0{w0.x + w2.x, w0.y + w2.y}, t1{w0.x - w2.x, w0.y - w2.y};
    const float2 t2{w1.x + w3.x, w1.y + w3.y}, t3{w1.x - w3.x, w1.y - w3.y};
    // e^{sign i pi / 2} t3: sign -1: (t3.y, -t3.x); sign +1: (-t3.y, t3.x)
    const float2 r3 = SIGN > 0 ? float2{-t3.y, t3.x} : float2{t3.y, -t3.x};
    a[y2][0] = float2{t0.x + t2.x, t0.y + t2.y};
    a[y2][1] = twiddle16<SIGN>(float2{t1.x + r3.x, t1.y + r3.y}, y2);
    a[y2][2] = twiddle16<SIGN>(float2{t0.x - t2.x, t0.y - t2.y}, 2 * y2);
    a[y2][3] = twiddle16<SIGN>(float2{t1.x - r3.x, t1.y - r3.y}, 3 * y2);
  }
  for (int u1 = 0; u1 < 4; ++u1) {
    const float2 w0 = a[0][u1], w1 = a[1][u1], w2 = a[2][u1], w3 = a[3][u1];
    const float2 t0{w0.x + w2.x, w0.y + w2.y}, t1{w0.x - w2.x, w0.y - w2.y};
    const float2 t2{w1.x + w3.x, w1.y + w3.y}, t3{w1.x - w3.x, w1.y - w3.y};
    const float2 r3 = SIGN > 0 ? float2{-t3.y, t3.x} : float2{t3.y, -t3.x};
    x[u1] = float2{t0.x + t2.x, t0.y + t2.y};
    x[u1 + 4] = float2{t1.x + r3.x, t1.y + r3.y};
    x[u1 + 8] = float2{t0.x - t2.x, t0.y - t2.y};
    x[u1 + 12] = float2{t1.x - r3.x, t1.y - r3.y};
  }
}

// tile_dft: kTilesPerBlock consecutive slots a block (their spectra are contiguous in `out`).
// Shared patches: a row of 17 floats and a tile of 304, so that the 32 threads of a warp reading
// their rows (two tiles' 16 rows) hit 32 distinct banks; after the row DFTs the same memory
// stages the block's spectra for one coalesced write.
constexpr int kTilesPerBlock = 16, kPatchRow = T + 1, kPatchTile = 304;
static_assert(kTilesPerBlock * T == kThreads, "a thread per (tile, row)");
static_assert(kPatchTile % 32 == 16 && kPatchTile >= T * kPatchRow, "two tiles' rows on disjoint banks");
static_assert(kTilesPerBlock * kPatchTile >= 2 * kTilesPerBlock * SPEC, "the spectra fit the patches' memory");

__global__ void __launch_bounds__(kThreads)
    tile_dft_kernel(const float* __restrict__ in, int64_t slots, FftTileGeom tg, FftPlaneMap pm,
                    float2* __restrict__ out) {
  CONVLAB_SHARED(float2, patch2, [kTilesPerBlock * kPatchTile / 2]);  // patches, then the spectra
  CONVLAB_SHARED(float2, rowdft, [kTilesPerBlock][T][TH]);
  CONVLAB_SHARED(int64_t, src_of, [kTilesPerBlock]);  // the tile's source plane, -1: past the last slot
  CONVLAB_SHARED(int, r0_of, [kTilesPerBlock]);
  CONVLAB_SHARED(int, c0_of, [kTilesPerBlock]);
  CONVLAB_SHARED(int, rot_of, [kTilesPerBlock]);
  float* patch = reinterpret_cast<float*>(&patch2[0]);
  const int tid = int(threadIdx.x);
  const int64_t slot0 = int64_t(blockIdx.x) * kTilesPerBlock;
  if (tid < kTilesPerBlock) {  // slot -> source plane and tile origin, once per tile
    const int64_t slot = slot0 + tid;
    int64_t src = slot;
    int t = 0, rot = 0;
    if (slot >= slots) {
      src = -1;
    } else if (pm.order == FftPlaneOrder::image_tiles) {  // slot = (image * tiles + t) * ch + c
      const int tiles = tg.tiles_h * tg.tiles_w;
      const int64_t it = slot / pm.ch;
      t = int(it % tiles);
      src = it / tiles * pm.ch + slot % pm.ch;
    } else if (pm.order == FftPlaneOrder::filter_rotated) {  // slot = c * kg + kl over groups: c in [0, C)
      const int c = int(slot / pm.kg), kl = int(slot % pm.kg), g = c / pm.cg, cl = c % pm.cg;
      src = int64_t(g * pm.kg + kl) * pm.cg + cl;
      rot = 1;
    }
    src_of[tid] = src;
    r0_of[tid] = tg.off_h + t / tg.tiles_w * tg.step_h;
    c0_of[tid] = tg.off_w + t % tg.tiles_w * tg.step_w;
    rot_of[tid] = rot;
  }
  __syncthreads();
  {  // stage: element (y, x) = (tid / 16, tid % 16) of every tile
    const int y = tid / T, x = tid % T;
    for (int j = 0; j < kTilesPerBlock; ++j) {
      float v = 0.0f;
      if (src_of[j] >= 0 && y < tg.ph && x < tg.pw) {
        const int sy = rot_of[j] ? tg.ph - 1 - y : y, sx = rot_of[j] ? tg.pw - 1 - x : x;
        const int r = r0_of[j] + sy, c = c0_of[j] + sx;
        if (r >= 0 && r < tg.rows && c >= 0 && c < tg.cols) v = in[(src_of[j] * tg.rows + r) * tg.cols + c];
      }
      patch[j * kPatchTile + y * kPatchRow + x] = v;
    }
  }
  __syncthreads();
  {  // row DFT: thread (tile j, row y), the row's 9 Hermitian-half coefficients
    const int j = tid / T, y = tid % T;
    float2 z[T], f[T];
    for (int x = 0; x < T; ++x) z[x] = float2{patch[j * kPatchTile + y * kPatchRow + x], 0.0f};
    dft16<-1>(z, f);
    for (int v = 0; v < TH; ++v) rowdft[j][y][v] = f[v];
  }
  __syncthreads();
  float2* spec = patch2;  // (tile, u, v): the block's spectra, as `out` holds them
  {  // column DFT: thread (tile j, column v), v <= 8
    const int j = tid / T, v = tid % T;
    if (v < TH) {
      float2 z[T], f[T];
      for (int y = 0; y < T; ++y) z[y] = rowdft[j][y][v];
      dft16<-1>(z, f);
      for (int u = 0; u < T; ++u) spec[(j * T + u) * TH + v] = f[u];
    }
  }
  __syncthreads();
  const int live = int(slots - slot0 < kTilesPerBlock ? slots - slot0 : kTilesPerBlock);
  for (int e = tid; e < live * SPEC; e += kThreads) out[slot0 * SPEC + e] = spec[e];  // (slots, T, T/2+1)
}

// tile_idft: kTilesPerBlock consecutive slots a block, read together (contiguous); thread (tile, v),
// v <= 8, inverts its column along u (a 16-point FFT), then thread (tile, y) its row: the Hermitian
// half extended (c[16 - v] = conj c[v]) and inverted, whose real part is the sum of tile_idft_small's
// weights 1, 2, ..., 2, 1; the cropped row is written, scaled by 1/256.
__global__ void __launch_bounds__(kThreads)
    tile_idft_kernel(const float2* __restrict__ in, int64_t slots, FftTileOut og, float* __restrict__ out) {
  CONVLAB_SHARED(float2, spec, [kTilesPerBlock * SPEC]);    // the block's spectra (tile, u, v)
  CONVLAB_SHARED(float2, colinv, [kTilesPerBlock][T][TH]);  // after the inverse along u: (tile, y, v)
  const int tid = int(threadIdx.x);
  const int64_t slot0 = int64_t(blockIdx.x) * kTilesPerBlock;
  const int live = int(slots - slot0 < kTilesPerBlock ? slots - slot0 : kTilesPerBlock);
  for (int e = tid; e < kTilesPerBlock * SPEC; e += kThreads)
    spec[e] = e < live * SPEC ? in[slot0 * SPEC + e] : float2{0.0f, 0.0f};
  __syncthreads();
  {  // inverse along u: thread (tile j, column v)
    const int j = tid / T, v = tid % T;
    if (v < TH) {
      float2 z[T], f[T];
      for (int u = 0; u < T; ++u) z[u] = spec[(j * T + u) * TH + v];
      dft16<+1>(z, f);
      for (int y = 0; y < T; ++y) colinv[j][y][v] = f[y];
    }
  }
  __syncthreads();
  const int j = tid / T, y = tid % T;
  const int64_t slot = slot0 + j;
  if (j >= live || y >= og.crop_h) return;  // no barrier follows
  float2 c[T], f[T];
  for (int v = 0; v < TH; ++v) c[v] = colinv[j][y][v];
  for (int v = TH; v < T; ++v) c[v] = float2{c[T - v].x, -c[T - v].y};
  dft16<+1>(c, f);
  const int tiles = og.tiles_h * og.tiles_w;
  const int o = int(slot % og.ch), t = int(slot / og.ch % tiles);
  const int64_t img = slot / (int64_t(og.ch) * tiles);
  const int r = t / og.tiles_w * og.step_h + y, c0 = t % og.tiles_w * og.step_w;
  if (r >= og.rows) return;
  float* row = out + ((img * og.ch + o) * og.rows + r) * og.cols + c0;
#pragma unroll
  for (int x = 0; x < T; ++x)  // unrolled: f stays in registers
    if (x < og.crop_w && c0 + x < og.cols) row[x] = f[x].x * (1.0f / float(T * T));
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
  const int64_t slots = planes * tg.tiles_h * tg.tiles_w;
  const int64_t blocks = (slots + kTilesPerBlock - 1) / kTilesPerBlock;
  CONVLAB_LAUNCH(tile_dft_kernel, dim3(unsigned(blocks)), dim3(kThreads), 0, stream, in, slots, tg, pm, out);
}

void fft_tile_idft(const float2* in, int64_t slots, const FftTileOut& og, float* out, void* stream) {
  if (og.crop_h <= kSmallCropRows) {
    const int64_t blocks = (slots + kSlotsPerBlock - 1) / kSlotsPerBlock;
    CONVLAB_LAUNCH(tile_idft_small_kernel, dim3(unsigned(blocks)), dim3(kThreads), 0, stream, in, slots, og, out);
  } else {
    const int64_t blocks = (slots + kTilesPerBlock - 1) / kTilesPerBlock;
    CONVLAB_LAUNCH(tile_idft_kernel, dim3(unsigned(blocks)), dim3(kThreads), 0, stream, in, slots, og, out);
  }
}

}  // namespace convlab::cuda
