// Launchers whose grid grows with N or groups (direct: grid.z = N; implicit
// GEMM: grid.z = groups) must split a grid over the device's limits into
// launches that fit: under test::LowGridLimits (grid.y <= 3, grid.z <= 2) a
// launcher that forgets to chunk fails here exactly as it would on a GPU with
// N > 65535. (The Winograd algorithms' launches, fused and batched-SGEMM:
// tests/algorithms/cuda/grid_chunks_test.cpp.)
#include <gtest/gtest.h>

#include "kernels/cuda/direct/direct.hpp"
#include "kernels/cuda/implicit_gemm/implicit_gemm.hpp"
#include "tests/support/cuda_conv_check.hpp"

namespace convlab::cuda {
namespace {

using test::Dir;
using test::LowGridLimits;

TEST_F(LowGridLimits, DirectChunksImagesAndChannelBlocks) {
  const test::ConvRun run = test::by_direction(direct_conv_fwd, direct_conv_bwd_data, direct_conv_bwd_filter);
  for (Dir d : test::kDirs) test::check_conv(test::kLowGridShape, d, run);
}

TEST_F(LowGridLimits, ImplicitGemmChunksGroups) {
  const test::ConvRun run =
      test::by_direction(implicit_gemm_conv_fwd, implicit_gemm_conv_bwd_data, implicit_gemm_conv_bwd_filter);
  for (Dir d : test::kDirs) test::check_conv(test::kLowGridShape, d, run);
}

}  // namespace
}  // namespace convlab::cuda
