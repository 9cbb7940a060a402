// kernels/cuda/fft/fft_tiled.cu's inverse tile DFT under the SIMT emulator:
// crops of <= 8 rows run one warp per slot, larger ones one block per slot;
// both must give the fp64 inverse of the half spectrum (Hermitian weights
// 1, 2, ..., 2, 1 along v, scaled 1/256), cropped and placed per tile, over a
// slot count that leaves the last block's warps partly idle.
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/cuda/fft/fft_tiled.hpp"
#include "kernels/cuda/simt/memory.hpp"
#include "kernels/cuda/simt/simt.hpp"

namespace convlab::cuda {
namespace {

void check_idft(const FftTileOut& og, int images) {
  SCOPED_TRACE("crop " + std::to_string(og.crop_h) + " x " + std::to_string(og.crop_w));
  constexpr int T = kFftTile, TH = T / 2 + 1;
  const int tiles = og.tiles_h * og.tiles_w;
  const int64_t slots = int64_t(images) * tiles * og.ch;
  std::vector<float2> spec(size_t(slots * kFftTileSpectrum));
  uint32_t x = 777;
  auto next = [&] { x = x * 1664525u + 1013904223u; return float(int(x >> 24) - 128) / 64.0f; };
  for (float2& z : spec) z = float2{next(), next()};
  const float sentinel = -4242.0f;
  const size_t out_size = size_t(images) * og.ch * og.rows * og.cols;
  simt::DeviceArray<float2> din(spec);
  simt::DeviceArray<float> dout(std::vector<float>(out_size, sentinel));
  fft_tile_idft(din.get(), slots, og, dout.get(), nullptr);
  const std::vector<float> got = dout.download();
  std::vector<char> written(out_size, 0);
  int bad = 0;
  for (int64_t slot = 0; slot < slots; ++slot) {
    const int o = int(slot % og.ch), t = int(slot / og.ch % tiles), img = int(slot / (int64_t(og.ch) * tiles));
    for (int y = 0; y < og.crop_h; ++y)
      for (int xx = 0; xx < og.crop_w; ++xx) {
        const int r = t / og.tiles_w * og.step_h + y, c = t % og.tiles_w * og.step_w + xx;
        if (r >= og.rows || c >= og.cols) continue;
        double s = 0, mag = 0;
        for (int u = 0; u < T; ++u)
          for (int v = 0; v < TH; ++v) {
            const float2 z = spec[size_t(slot * kFftTileSpectrum + u * TH + v)];
            const double wgt = (v == 0 || v == T / 2) ? 1.0 : 2.0;
            s += wgt * (std::complex<double>(z.x, z.y) * std::polar(1.0, 2 * M_PI * double(u * y + v * xx) / T)).real();
            mag += wgt * std::abs(std::complex<double>(z.x, z.y));
          }
        s /= T * T;
        mag /= T * T;
        const size_t i = size_t(((int64_t(img) * og.ch + o) * og.rows + r) * og.cols + c);
        written[i] = 1;
        if (std::abs(got[i] - s) > 64 * 1.2e-7 * mag && bad++ < 5)
          ADD_FAILURE() << "slot " << slot << " (" << y << ", " << xx << "): got " << got[i] << " want " << s;
      }
  }
  for (size_t i = 0; i < out_size; ++i)
    if (!written[i] && got[i] != sentinel && bad++ < 5) ADD_FAILURE() << "wrote " << i << " outside every crop";
  EXPECT_EQ(bad, 0);
}

TEST(FftTileIdft, SmallAndFullCropsMatchTheInverseDft) {
  // bwd-filter: 3 x 3 and 5 x 2 filters, one tile, 11 slots (the last block of 8 warps partly idle)
  check_idft(FftTileOut{11, 3, 3, 3, 3, 0, 0, 1, 1}, 1);
  check_idft(FftTileOut{5, 5, 2, 5, 2, 0, 0, 1, 1}, 2);
  // fwd with R = 11: 6 x 6 crops of 2 x 3 tiles over a ragged 11 x 14 plane
  check_idft(FftTileOut{2, 11, 14, 6, 6, 6, 6, 2, 3}, 1);
  // crops of more than 8 rows: the block-per-slot kernel
  check_idft(FftTileOut{2, 20, 13, 14, 14, 14, 14, 2, 1}, 1);
  check_idft(FftTileOut{3, 9, 16, 9, 16, 0, 0, 1, 1}, 1);
}

}  // namespace
}  // namespace convlab::cuda
