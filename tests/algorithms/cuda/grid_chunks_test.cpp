// The Winograd algorithms' launches under test::LowGridLimits (grid.y <= 3,
// grid.z <= 2; tests/support/cuda_conv_check.hpp): the fused F(2x2) kernel's
// grid (channel blocks x groups, N) and the non-fused pipelines' batched SGEMM
// (batch = alpha^2 * groups) must be chunked, as they must on a GPU with
// N > 65535 (F(2x2)) or groups > 1820 (F(4x4)) / 1023 (F(6x6)).
#include <gtest/gtest.h>

#include <cfloat>
#include <cstdio>
#include <string>

#include "algorithms/cuda/direct.hpp"
#include "algorithms/cuda/winograd.hpp"
#include "kernels/cuda/winograd/winograd_f2x3.hpp"
#include "kernels/cuda/winograd/winograd_nonfused.hpp"
#include "tests/algorithms/cuda/algorithm_check.hpp"

namespace convlab::cuda {
namespace {

using test::Dir;
using test::LowGridLimits;

TEST_F(LowGridLimits, WinogradF2x3ChunksImagesAndChannelBlocks) { test::sweep(CudaWinogradF2x3(), {test::kLowGridShape}); }

// batch = 36 * groups = 144 > 2: the SGEMM launches 72 chunks.
TEST_F(LowGridLimits, WinogradF4x3ChunksItsBatchedGemm) { test::sweep(CudaWinograd(4), {test::kLowGridShape}); }

// batch = 64 * groups = 256 > 2: 128 chunks.
TEST_F(LowGridLimits, WinogradF6x3ChunksItsBatchedGemm) { test::sweep(CudaWinograd(6), {test::kLowGridShape}); }

// cuda.direct's bwd-filter: 5 * 6 * 7 = 210 positions in 7 chunks (grid.y = 7 > 3).
TEST_F(LowGridLimits, DirectBwdFilterChunksItsReductionChunks) {
  const ConvShape& sh = test::kLowGridShape;
  const CudaDirectFilterPlan pl = plan_cuda_direct_bwd_filter(sh, 7);
  ASSERT_EQ(pl.chunks, 7);
  test::check_conv(sh, Dir::bwd_filter, [&](Dir, const ConvShape& s, float* src, float* wei, float* dst) {
    simt::DeviceArray<float> ws(size_t(pl.partial_floats));
    ws.fill_bytes(0xFF);
    CudaDirect().run_bwd_filter_chunked(test::problem_of(s), ConvBuffers{src, wei, dst}, ws.get(), nullptr, 7);
  });
}

}  // namespace
}  // namespace convlab::cuda
