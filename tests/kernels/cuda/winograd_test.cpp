// kernels/cuda/winograd under the SIMT emulator, every direction, against the
// fp64 reference. Output sizes around the 2x2 tile and the 8x16-pixel block,
// channel counts around the 8 / 16 channel blocks, padding 0..2, groups.
// Prints the measured error per unit of sum|terms| (the basis of the
// algorithms' declared tolerances).
#include <gtest/gtest.h>

#include <cstdio>

#include "kernels/cuda/winograd/winograd_f2x3.hpp"
#include "kernels/cuda/winograd/winograd_f4x3.hpp"
#include "tests/kernels/cuda/conv_check.hpp"

namespace convlab::cuda {
namespace {

using test::Dir;

std::vector<ConvShape> winograd_shapes() {
  using test::shape;
  return {
      shape(2, 3, 5, 6, 4, 3, 3, 1, 1, 1, 1),    shape(1, 9, 11, 19, 17, 3, 3, 1, 1, 1, 1),
      shape(2, 4, 10, 18, 5, 3, 3, 0, 0, 1, 1),  shape(1, 5, 7, 9, 3, 3, 3, 2, 2, 1, 1),
      shape(2, 6, 9, 8, 4, 3, 3, 1, 1, 1, 1, 1, 2), shape(1, 1, 3, 3, 1, 3, 3, 0, 0, 1, 1),
      shape(1, 17, 13, 13, 18, 3, 3, 1, 0, 1, 1),
  };
}


void run_f2x3(Dir d, const ConvShape& sh, float* src, float* wei, float* dst) {
  if (d == Dir::fwd) winograd_f2x3_fwd(sh, src, wei, dst, nullptr);
  if (d == Dir::bwd_data) winograd_f2x3_bwd_data(sh, dst, wei, src, nullptr);
  if (d == Dir::bwd_filter) winograd_f2x3_bwd_filter(sh, src, dst, wei, nullptr);
}

void run_f4x3(Dir d, const ConvShape& sh, float* src, float* wei, float* dst) {
  simt::DeviceArray<float> ws(size_t(winograd_f4x3_workspace_floats(sh, d)));
  ws.fill_bytes(0xFF);
  if (d == Dir::fwd) winograd_f4x3_fwd(sh, src, wei, dst, ws.get(), nullptr);
  if (d == Dir::bwd_data) winograd_f4x3_bwd_data(sh, dst, wei, src, ws.get(), nullptr);
  if (d == Dir::bwd_filter) winograd_f4x3_bwd_filter(sh, src, dst, wei, ws.get(), nullptr);
}

// F(4x4,3x3) has no channel blocking of its own (the SGEMM's tiles are tested in
// sgemm_test.cpp): the tile-edge shapes only, to keep the emulated run short.
std::vector<ConvShape> f4x3_shapes() {
  std::vector<ConvShape> v = winograd_shapes();
  v.pop_back();             // 17 -> 18 channels
  v.erase(v.begin() + 1);   // 9 -> 17 channels
  return v;
}

TEST(CudaWinogradF4x3, AllDirectionsMatchReference) {
  for (Dir d : test::kDirs) {
    double worst = 0;
    for (const ConvShape& sh : test::sanitized_subset(f4x3_shapes())) {
      ASSERT_STREQ(winograd_f4x3_unsupported(sh), "") << test::label(sh);
      const double k = double(test::reduction(sh, d));
      worst = std::max(worst, test::check_conv(sh, d, run_f4x3, (k + kWinogradF4x3ExtraEps) * FLT_EPSILON));
    }
    std::printf("cuda winograd f4x3 %s: max |err|/sum|terms| = %.3g (= %.3g eps)\n", test::name(d), worst,
                worst / FLT_EPSILON);
  }
}

TEST(CudaWinogradF2x3, AllDirectionsMatchReference) {
  for (Dir d : test::kDirs) {
    double worst = 0, worst_k = 0;
    for (const ConvShape& sh : test::sanitized_subset(winograd_shapes())) {
      ASSERT_STREQ(winograd_f2x3_unsupported(sh), "") << test::label(sh);
      const double k = double(test::reduction(sh, d));
      const double w = test::check_conv(sh, d, run_f2x3, (k + kWinogradF2x3ExtraEps) * FLT_EPSILON);
      worst = std::max(worst, w);
      worst_k = std::max(worst_k, w / (k * FLT_EPSILON));
    }
    std::printf("cuda winograd f2x3 %s: max |err|/sum|terms| = %.3g (= %.3g K*eps)\n", test::name(d), worst, worst_k);
  }
}

}  // namespace
}  // namespace convlab::cuda

namespace convlab::cuda {
namespace {

// The measurement behind kWinogradF2x3ExtraEps: AlexNet's 3x3 layers at batch 1.
// ~4 minutes emulated, so run on demand:
//   ./build/tests/kernels/cuda/test_kernels_cuda --gtest_also_run_disabled_tests --gtest_filter='*AlexNet*'
TEST(CudaWinogradF2x3, DISABLED_AlexNetLayersErrorMeasurement) {
  if (test::kSanitized) GTEST_SKIP() << "AlexNet-size emulation runs in the plain build only";
  for (const auto& [id, sh] : test::alexnet_3x3_layers())
    for (Dir d : test::kDirs) {
      const double k = double(test::reduction(sh, d));
      const double w = test::check_conv(sh, d, run_f2x3, (k + kWinogradF2x3ExtraEps) * FLT_EPSILON);
      std::printf("cuda winograd f2x3 %s %s: max |err|/sum|terms| = %.3g (= %.3g K*eps, K=%.0f)\n", id.c_str(),
                  test::name(d), w, w / (k * FLT_EPSILON), k);
      const double w4 = test::check_conv(sh, d, run_f4x3, (k + kWinogradF4x3ExtraEps) * FLT_EPSILON);
      std::printf("cuda winograd f4x3 %s %s: max |err|/sum|terms| = %.3g (= %.3g eps)\n", id.c_str(), test::name(d),
                  w4, w4 / FLT_EPSILON);
    }
}

}  // namespace
}  // namespace convlab::cuda
