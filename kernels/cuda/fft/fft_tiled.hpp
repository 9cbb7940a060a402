// The 16x16 tile DFT and inverse DFT of overlap-save FFT convolution
// (kernels/cuda/fft/fft_tiled.cu), one kernel launch each; no cuFFT. The
// composition (tiles, spectra in the workspace, the channel reduction with
// fft_cmac, bwd-data on the rotated filter) is cuda.fft_tiled
// (algorithms/cuda/fft.cu).
#pragma once

#include <cstdint>

struct float2;  // CUDA's complex float, as in fft_conv.hpp

namespace convlab::cuda {

constexpr int kFftTile = 16;
// Complex values of one tile's half spectrum (R2C layout: T x (T/2 + 1)).
constexpr int kFftTileSpectrum = kFftTile * (kFftTile / 2 + 1);

// Where the tiles of a set of planes sit.
struct FftTileGeom {
  int rows, cols;          // plane size
  int ph, pw;              // patch size read per tile (<= 16; zeros beyond it)
  int step_h, step_w;      // tile stride
  int off_h, off_w;        // origin of tile (0, 0) (negative: padding)
  int tiles_h, tiles_w;
};

// How input plane b and tile t map to a spectrum slot.
enum class FftPlaneOrder {
  image_tiles,     // plane b = (image i, channel c) of `ch` channels -> slot (i * tiles + t) * ch + c
  filter,          // plane b as is (one tile)
  filter_rotated,  // plane b = c * kg + kl reads W(g*kg + kl, cl) rotated 180 degrees (bwd-data)
};
struct FftPlaneMap {
  FftPlaneOrder order;
  int ch;      // image_tiles: channels per image
  int cg, kg;  // filter_rotated: the layer's channels per group
};

// out (slots, 16, 9) complex: the DFT of every (plane, tile) of `planes` planes
// of in (planes, rows, cols); 16 slots per 256-thread block.
void fft_tile_dft(const float* in, int64_t planes, const FftTileGeom& tg, const FftPlaneMap& pm, float2* out,
                  void* stream);

// Output plane o of a slot group: slot = (i * tiles + t) * ch + o; each tile's
// first crop_h x crop_w values land at (tile origin + y, x) of an (rows, cols) plane.
struct FftTileOut {
  int ch;
  int rows, cols, crop_h, crop_w, step_h, step_w, tiles_h, tiles_w;
};

// out = the inverse DFT (scaled by 1/256) of `slots` spectra of in, cropped;
// 16 slots per 256-thread block (one warp per slot for crops of <= 8 rows).
void fft_tile_idft(const float2* in, int64_t slots, const FftTileOut& og, float* out, void* stream);

}  // namespace convlab::cuda
