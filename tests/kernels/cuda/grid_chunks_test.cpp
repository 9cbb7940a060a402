// Launchers whose grid grows with N or groups (direct, winograd F(2x2,3x3)
// fused and bwd-filter, F(4x4,3x3)'s batched SGEMM with batch = 36 * groups,
// implicit GEMM with grid.z = groups) must split a grid over the device's
// limits (grid.y, grid.z <= 65535) into launches that fit. Emulating 65536
// blocks is slow, so these tests lower the emulator's limits to 3 (y) and 2 (z)
// with simt::set_grid_limits_for_tests: every launcher chunks by
// simt::grid_limits(), and the emulator rejects any launch over them, so a
// launcher that forgets to chunk fails here exactly as it would on a GPU with
// N > 65535 (direct, F(2x2)) or groups > 1820 (F(4x4)).
#include <gtest/gtest.h>

#include <cfloat>

#include "kernels/cuda/direct/direct.hpp"
#include "kernels/cuda/implicit_gemm/implicit_gemm.hpp"
#include "kernels/cuda/simt/simt.hpp"
#include "kernels/cuda/winograd/winograd_f2x3.hpp"
#include "kernels/cuda/winograd/winograd_f4x3.hpp"
#include "tests/kernels/cuda/conv_check.hpp"

namespace convlab::cuda {
namespace {

using test::Dir;

class LowGridLimits : public ::testing::Test {
 protected:
  void SetUp() override {
    saved_ = simt::grid_limits();
    simt::set_grid_limits_for_tests({saved_.x, 3, 2});
  }
  void TearDown() override { simt::set_grid_limits_for_tests(saved_); }
  simt::GridLimits saved_{};
};

// N = 5 images (grid.z 5 > 2), 4 groups of one channel block (grid.y 4 > 3).
const ConvShape kShape = test::shape(5, 4, 6, 7, 4, 3, 3, 1, 1, 1, 1, 1, 4);

TEST_F(LowGridLimits, DirectChunksImagesAndChannelBlocks) {
  const test::ConvRun run = test::by_direction(direct_conv_fwd, direct_conv_bwd_data, direct_conv_bwd_filter);
  for (Dir d : test::kDirs) test::check_conv(kShape, d, run);
}

TEST_F(LowGridLimits, WinogradF2x3ChunksImagesAndChannelBlocks) {
  const test::ConvRun run = test::by_direction(winograd_f2x3_fwd, winograd_f2x3_bwd_data, winograd_f2x3_bwd_filter);
  for (Dir d : test::kDirs) {
    const double k = double(test::reduction(kShape, d));
    test::check_conv(kShape, d, run, (k + kWinogradF2x3ExtraEps) * FLT_EPSILON);
  }
}

TEST_F(LowGridLimits, WinogradF4x3ChunksItsBatchedGemm) {
  // batch = 36 * groups = 144 > 2: the SGEMM launches 72 chunks.
  const auto run = [](Dir d, const ConvShape& sh, float* src, float* wei, float* dst) {
    simt::DeviceArray<float> ws(size_t(winograd_f4x3_workspace_floats(sh, d)));
    ws.fill_bytes(0xFF);
    if (d == Dir::fwd) winograd_f4x3_fwd(sh, src, wei, dst, ws.get(), nullptr);
    if (d == Dir::bwd_data) winograd_f4x3_bwd_data(sh, dst, wei, src, ws.get(), nullptr);
    if (d == Dir::bwd_filter) winograd_f4x3_bwd_filter(sh, src, dst, wei, ws.get(), nullptr);
  };
  for (Dir d : test::kDirs) {
    const double k = double(test::reduction(kShape, d));
    test::check_conv(kShape, d, run, (k + kWinogradF4x3ExtraEps) * FLT_EPSILON);
  }
}

TEST_F(LowGridLimits, ImplicitGemmChunksGroups) {
  const test::ConvRun run = test::by_direction(implicit_gemm_conv_fwd, implicit_gemm_conv_bwd_data, implicit_gemm_conv_bwd_filter);
  for (Dir d : test::kDirs) test::check_conv(kShape, d, run);
}

}  // namespace
}  // namespace convlab::cuda
