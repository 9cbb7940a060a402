// Launchers whose grid grows with N or groups (direct: grid.z = N; implicit
// GEMM: grid.z = groups) must split a grid over the device's limits into
// launches that fit: under test::LowGridLimits (grid.y <= 3, grid.z <= 2) a
// launcher that forgets to chunk fails here exactly as it would on a GPU with
// N > 65535. (The Winograd algorithms' launches, fused and batched-SGEMM:
// tests/algorithms/cuda/grid_chunks_test.cpp.)
#include <gtest/gtest.h>

#include <algorithm>

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

// The implicit GEMM's entry points with their row-table workspace (poisoned).
test::ConvRun implicit_gemm_run() {
  return [](Dir d, const ConvShape& sh, float* src, float* wei, float* dst) {
    simt::DeviceArray<float> ws(std::max<size_t>(implicit_gemm_workspace_bytes(sh, d) / sizeof(float), 1));
    ws.fill_bytes(0xFF);
    if (d == Dir::fwd) implicit_gemm_conv_fwd(sh, src, wei, dst, ws.get(), nullptr);
    if (d == Dir::bwd_data) implicit_gemm_conv_bwd_data(sh, dst, wei, src, ws.get(), nullptr);
    if (d == Dir::bwd_filter) implicit_gemm_conv_bwd_filter(sh, src, dst, wei, ws.get(), nullptr);
  };
}

TEST_F(LowGridLimits, ImplicitGemmChunksGroups) {
  for (Dir d : test::kDirs) test::check_conv(test::kLowGridShape, d, implicit_gemm_run());
}

// Strided backward-data runs one GEMM per stride phase: each phase's launch
// chunks its grid too (groups 4 > grid.z 2; 2x2 phases).
TEST_F(LowGridLimits, ImplicitGemmChunksEveryStridePhase) {
  test::check_conv(test::shape(5, 4, 7, 6, 4, 3, 3, 1, 1, 2, 2, 1, 4), Dir::bwd_data, implicit_gemm_run());
}

// A 1x1 filter at stride 2: the zero fill, then the one live phase's gather of
// wei^T and its GEMM, chunked (groups 4 > grid.z 2).
TEST_F(LowGridLimits, ImplicitGemmChunksTheLivePhaseOfAPointwiseStride) {
  test::check_conv(test::shape(3, 8, 9, 7, 4, 1, 1, 0, 0, 2, 2, 1, 4), Dir::bwd_data, implicit_gemm_run());
}

// Stride phases in one launch with more M tiles than grid.y (200 channels:
// 4 tiles of 64 > 3) and groups x phases on grid.z (2 x 4 > 2).
TEST_F(LowGridLimits, ImplicitGemmChunksBatchedPhasesByMTilesAndZ) {
  test::check_conv(test::shape(1, 400, 5, 4, 4, 3, 3, 1, 1, 2, 2, 1, 2), Dir::bwd_data, implicit_gemm_run());
}

// Backward-filter's split K puts groups x splits on grid.z (2 groups x 3 splits > 2).
TEST_F(LowGridLimits, ImplicitGemmChunksGroupsTimesSplits) {
  test::check_conv(test::shape(4, 2, 20, 20, 2, 3, 3, 1, 1, 1, 1, 1, 2), Dir::bwd_filter, implicit_gemm_run());
}

}  // namespace
}  // namespace convlab::cuda
