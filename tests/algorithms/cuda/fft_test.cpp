// cuda.fft_cufft and cuda.fft_tiled under the SIMT emulator, every direction, against
// the fp64 reference. cuda.fft_cufft's composition (pad / crop / pointwise complex
// GEMM kernels, workspace carving) runs with a host fp64 DFT
// standing in for cuFFT (device memory is host memory under emulation);
// cuda.fft_tiled (no cuFFT) runs through its class.
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <cstdio>

#include "algorithms/cuda/fft.hpp"
#include "tests/algorithms/cuda/algorithm_check.hpp"

namespace convlab::cuda {
namespace {

using test::Dir;

// Naive 2-D DFT in fp64 with cuFFT's R2C / C2R layouts (fh x (fw/2+1) half spectrum).
CudaFftTransforms host_dft(FftSize fs) {
  CudaFftTransforms f;
  const int wh = fs.fw / 2 + 1;
  f.r2c = [fs, wh](const float* in, float2* out, int planes) {
    for (int pl = 0; pl < planes; ++pl)
      for (int u = 0; u < fs.fh; ++u)
        for (int v = 0; v < wh; ++v) {
          std::complex<double> s = 0;
          for (int y = 0; y < fs.fh; ++y)
            for (int x = 0; x < fs.fw; ++x) {
              const double ang = -2 * M_PI * (double(u) * y / fs.fh + double(v) * x / fs.fw);
              s += double(in[(int64_t(pl) * fs.fh + y) * fs.fw + x]) * std::polar(1.0, ang);
            }
          out[(int64_t(pl) * fs.fh + u) * wh + v] = float2{float(s.real()), float(s.imag())};
        }
  };
  f.c2r = [fs, wh](const float2* in, float* out, int planes) {
    for (int pl = 0; pl < planes; ++pl)
      for (int y = 0; y < fs.fh; ++y)
        for (int x = 0; x < fs.fw; ++x) {
          double s = 0;
          for (int u = 0; u < fs.fh; ++u)
            for (int v = 0; v < fs.fw; ++v) {  // the full spectrum from Hermitian symmetry
              const bool stored = v < wh;
              const int uu = stored ? u : (fs.fh - u) % fs.fh, vv = stored ? v : fs.fw - v;
              const float2 c = in[(int64_t(pl) * fs.fh + uu) * wh + vv];
              const std::complex<double> z(c.x, stored ? c.y : -c.y);
              s += (z * std::polar(1.0, 2 * M_PI * (double(u) * y / fs.fh + double(v) * x / fs.fw))).real();
            }
          out[(int64_t(pl) * fs.fh + y) * fs.fw + x] = float(s);
        }
  };
  return f;
}

// cuda.fft_cufft's declared tolerance (the class itself, in fft_cufft.cu, needs cuFFT).
void check_fft(const ConvShape& sh, Dir d, double* worst = nullptr);

void run_fft(Dir d, const ConvShape& sh, float* src, float* wei, float* dst) {
  simt::DeviceArray<float> ws(size_t(cuda_fft_workspace_floats(sh, d)));
  ws.fill_bytes(0xFF);
  cuda_fft_conv(sh, d, ConvBuffers{src, wei, dst}, ws.get(), nullptr, host_dft(cuda_fft_size(sh)));
}

void check_fft(const ConvShape& sh, Dir d, double* worst) {
  const Tolerance t = cuda_fft_tolerance(test::problem_of(sh), d, "");
  const double w = test::check_conv(sh, d, run_fft, t.elem, t.global);
  if (worst) *worst = std::max(*worst, w);
}

TEST(CudaFft, GoodSizes) {
  EXPECT_EQ(fft_good_size(11), 12);
  EXPECT_EQ(fft_good_size(13), 14);
  EXPECT_EQ(fft_good_size(17), 18);
  EXPECT_EQ(fft_good_size(31), 32);
  EXPECT_EQ(fft_good_size(1), 1);
}

// 15 x 15 planes (a good size itself) times an odd plane count (K * Cg = 3):
// the spectra after the real planes started at an odd float, a misaligned
// float2 (8-byte) access on a GPU that the emulator reports as a device fault.
// Every complex array must start 16-byte aligned whatever the counts.
TEST(CudaFft, SpectraAreAlignedAfterOddRealPlanes) {
  const ConvShape sh = test::shape(1, 1, 15, 15, 3, 3, 3, 0, 0, 1, 1);
  ASSERT_EQ(cuda_fft_size(sh).fh, 15);
  for (Dir d : test::kDirs) {
    EXPECT_EQ(cuda_fft_workspace_floats(sh, d) % 4, 0);
    check_fft(sh, d);
  }
}

TEST(CudaFft, AllDirectionsMatchReference) {
  using test::shape;
  const std::vector<ConvShape> shapes = {
      shape(2, 3, 7, 6, 4, 3, 3, 1, 1, 1, 1),       shape(1, 4, 9, 11, 3, 5, 5, 2, 2, 1, 1),
      shape(2, 4, 6, 5, 6, 3, 2, 0, 1, 1, 1, 1, 2), shape(1, 2, 5, 5, 2, 1, 1, 0, 0, 1, 1),
      shape(1, 3, 8, 7, 2, 4, 3, 0, 0, 1, 1),
  };
  for (Dir d : test::kDirs) {
    double worst = 0;
    for (const ConvShape& sh : test::sanitized_subset(shapes))
      check_fft(sh, d, &worst);
    std::printf("cuda fft (host fp64 DFT) %s: max |err|/sum|terms| = %.3g\n", test::name(d), worst);
  }
}

// 1-D and asymmetric padding through the whole-plane composition: the plane
// must hold pad + in + max(pad, end) so a window past its end wraps into zeros
// (in + 2 pad is short when the end padding is the larger).
TEST(CudaFft, AsymmetricPaddingAnd1dMatchReference) {
  int checked = 0;
  for (const ConvShape& sh : test::shapes_of(testing::asym_1d_sweep())) {
    if (sh.stride_h != 1 || sh.stride_w != 1 || sh.dil_h != 1 || sh.dil_w != 1) continue;
    for (Dir d : test::kDirs) check_fft(sh, d);
    ++checked;
  }
  EXPECT_EQ(checked, 9);
}

// The shared tester's emulated sweep (1-D and asymmetric padding included).
TEST(CudaFftTiled, MatchesReferenceOnTheEmulatedSweep) { testing::ConvTester(CudaFftTiled()).emulated().run(); }

// Output sizes around the tile's m = 16 - R + 1, filters 1x1 .. 11x11, padding
// beyond R-1 (negative bwd-data padding), groups.
TEST(CudaFftTiled, AllDirectionsMatchReference) {
  using test::shape;
  const std::vector<ConvShape> shapes = {
      shape(2, 3, 16, 17, 4, 3, 3, 1, 1, 1, 1),      shape(1, 2, 13, 12, 3, 3, 3, 0, 0, 1, 1),
      shape(1, 3, 9, 20, 2, 5, 5, 2, 2, 1, 1),       shape(2, 4, 7, 6, 6, 3, 2, 0, 1, 1, 1, 1, 2),
      shape(1, 2, 5, 5, 2, 1, 1, 1, 1, 1, 1),        shape(1, 1, 23, 21, 2, 11, 11, 2, 2, 1, 1),
  };
  test::sweep(CudaFftTiled(), shapes);
}

}  // namespace
}  // namespace convlab::cuda
