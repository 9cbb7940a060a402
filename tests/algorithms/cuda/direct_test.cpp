// cuda.direct under the SIMT emulator, every direction, against the fp64
// reference (small ragged shapes: tiles of 8 x 16 pixels, 8 channels).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "algorithms/cuda/direct.hpp"
#include "kernels/cuda/direct/direct.hpp"
#include "tests/algorithms/cuda/algorithm_check.hpp"

namespace convlab::cuda {
namespace {

using test::Dir;

// The shared tester's emulated sweep: edges, 1-D and asymmetric padding, the
// tile and strided shapes (one block per stride phase), every direction.
TEST(CudaDirect, MatchesReferenceOnTheEmulatedSweep) { testing::ConvTester(CudaDirect()).emulated().run(); }

// Its own tiles: 8 x 16 pixels, 8 channels.
TEST(CudaDirect, TilesMatchReference) {
  test::sweep(CudaDirect(), {test::shape(1, 3, 17, 18, 9, 3, 3, 1, 1, 1, 1),       // 9 channels: 2 channel blocks, 3x2 tiles
                             test::shape(1, 9, 9, 17, 2, 3, 3, 0, 0, 1, 1),        // 9 input channels (bwd-data blocks)
                             test::shape(1, 1, 23, 27, 1, 11, 11, 2, 2, 4, 4)});   // AlexNet conv1-like
}

TEST(CudaDirect, SupportsEvery1dAndAsymmetricPaddingProblem) {
  EXPECT_EQ(test::supported_in_every_direction(CudaDirect(), testing::asym_1d_sweep()), testing::asym_1d_sweep().size());
}

// A window over 48 KiB of shared memory is the launchers' to opt into
// (tests/kernels/cuda/direct_test.cpp); cuda.direct declines it with the reason.
TEST(CudaDirect, WindowOver48KiBIsUnsupportedWithReason) {
  const ConvProblem p = test::problem_of(test::shape(1, 1, 128, 128, 1, 3, 3, 0, 0, 1, 1, 60));
  for (Dir d : {Dir::fwd, Dir::bwd_data}) {
    const Support s = CudaDirect().supports(p, d);
    EXPECT_FALSE(s.ok) << test::name(d);
    EXPECT_NE(s.reason.find("KiB of shared memory"), std::string::npos) << s.reason;
  }
  EXPECT_TRUE(CudaDirect().supports(p, Dir::bwd_filter).ok);
}

// bwd-filter with its reduction in `chunks` chunks (plan_cuda_direct_bwd_filter),
// the workspace exactly the plan's partial sums, poisoned.
test::ConvRun chunked_bwd_filter(int chunks) {
  return [chunks](Dir d, const ConvShape& sh, float* src, float* wei, float* dst) {
    ASSERT_EQ(d, Dir::bwd_filter);
    const CudaDirectFilterPlan pl = plan_cuda_direct_bwd_filter(sh, chunks);
    simt::DeviceArray<float> ws(size_t(std::max<int64_t>(pl.partial_floats, 1)));
    ws.fill_bytes(0xFF);
    CudaDirect().run_bwd_filter_chunked(test::problem_of(sh), ConvBuffers{src, wei, dst}, ws.get(), nullptr, chunks);
  };
}

// Shapes whose N*P*Q positions split into chunks that end inside an image:
// several images, groups, depthwise, stride, dilation, asymmetric padding, and
// more than one 64 x 64 tile of output channels and weights (65 channels and 72
// weights per group).
std::vector<ConvShape> chunk_shapes() {
  return {test::shape(3, 3, 9, 11, 5, 3, 3, 1, 1, 1, 1),
          test::shape(2, 6, 8, 7, 4, 3, 3, 1, 1, 1, 1, 1, 2),
          test::shape(3, 4, 7, 9, 4, 3, 3, 1, 1, 1, 1, 1, 4),
          test::shape(2, 3, 21, 19, 4, 5, 5, 2, 2, 3, 2),
          test::shape(2, 3, 10, 9, 4, 3, 3, 1, 1, 1, 1, 2),
          test::with_end_padding(test::shape(2, 3, 11, 8, 4, 3, 3, 1, 2, 2, 3), -1, 3),
          test::shape(2, 16, 5, 6, 130, 3, 3, 1, 1, 1, 1, 1, 2)};
}

TEST(CudaDirect, BwdFilterChunksMatchReference) {
  for (const ConvShape& sh : test::sanitized_subset(chunk_shapes()))
    for (int chunks : {2, 3, 7}) {
      const CudaDirectFilterPlan pl = plan_cuda_direct_bwd_filter(sh, chunks);
      const int64_t len = int64_t(sh.n) * sh.p * sh.q, pq = int64_t(sh.p) * sh.q;
      ASSERT_GT(pl.chunks, 1) << test::label(sh);
      EXPECT_LE(pl.chunks, chunks) << test::label(sh);
      EXPECT_EQ(pl.chunk_len % kDirectFilterStep, 0) << test::label(sh);
      EXPECT_GE(int64_t(pl.chunks) * pl.chunk_len, len) << test::label(sh);
      EXPECT_LT(int64_t(pl.chunks - 1) * pl.chunk_len, len) << test::label(sh);
      EXPECT_NE(pl.chunk_len % pq, 0) << test::label(sh) << ": a chunk should end inside an image";
      EXPECT_EQ(pl.partial_floats, int64_t(pl.chunks) * sh.k * (sh.c / sh.groups) * sh.r * sh.s);
      test::check_conv(sh, Dir::bwd_filter, chunked_bwd_filter(chunks));
    }
}

// The plan: a small layer's few weight tiles are repeated over enough chunks to
// fill a 132-SM GPU several times over; a small reduction is not split.
TEST(CudaDirect, BwdFilterPlanFillsTheGpu) {
  // AlexNet conv1 at batch 32: 2 x 6 tiles of 96 x 363 weights, 32 * 55 * 55 positions.
  const ConvShape conv1 = test::shape(32, 3, 227, 227, 96, 11, 11, 0, 0, 4, 4);
  EXPECT_EQ(direct_bwd_filter_blocks(conv1), 12);
  const CudaDirectFilterPlan c1 = plan_cuda_direct_bwd_filter(conv1);
  EXPECT_EQ(c1.chunks, 88);
  EXPECT_EQ(c1.chunk_len, 1104);
  EXPECT_EQ(c1.partial_floats, 88 * 96 * 363);
  EXPECT_EQ(CudaDirect().workspace_bytes(test::problem_of(conv1), Dir::bwd_filter), size_t(88 * 96 * 363) * 4);
  EXPECT_EQ(CudaDirect().workspace_bytes(test::problem_of(conv1), Dir::fwd), 0u);
  EXPECT_EQ(CudaDirect().workspace_bytes(test::problem_of(conv1), Dir::bwd_data), 0u);
  // AlexNet conv3: 6 x 36 tiles, 5 chunks of 32 * 13 * 13 positions.
  const ConvShape conv3 = test::shape(32, 256, 13, 13, 384, 3, 3, 1, 1, 1, 1);
  EXPECT_EQ(direct_bwd_filter_blocks(conv3), 216);
  EXPECT_EQ(plan_cuda_direct_bwd_filter(conv3).chunks, 5);
  for (const ConvShape& sh : {conv1, conv3})
    EXPECT_GE(plan_cuda_direct_bwd_filter(sh).chunks * direct_bwd_filter_blocks(sh),
              kCudaDirectFillBlocks - direct_bwd_filter_blocks(sh));
  // A reduction under two chunks' minimum: one chunk, no workspace.
  const ConvShape small = test::shape(2, 3, 9, 11, 5, 3, 3, 1, 1, 1, 1);
  EXPECT_EQ(plan_cuda_direct_bwd_filter(small).chunks, 1);
  EXPECT_EQ(CudaDirect().workspace_bytes(test::problem_of(small), Dir::bwd_filter), 0u);
  // Enough weight tiles to fill the GPU alone: one chunk.
  const ConvShape wide = test::shape(32, 2048, 7, 7, 4096, 1, 1, 0, 0, 1, 1);  // 64 x 32 tiles
  EXPECT_EQ(plan_cuda_direct_bwd_filter(wide).chunks, 1);
}

// Two runs give the same bits (no atomics; the chunks' partial sums are added in
// chunk order), chunked by the plan and by hand.
TEST(CudaDirect, BwdFilterIsBitIdenticalRunToRun) {
  const ConvShape sh = test::shape(4, 4, 13, 14, 6, 3, 3, 1, 1, 1, 1, 1, 2);  // 4 * 13 * 14 = 728 positions
  ASSERT_GT(plan_cuda_direct_bwd_filter(sh).chunks, 1);
  const int64_t ns = int64_t(sh.n) * sh.c * sh.h * sh.w, nd = int64_t(sh.n) * sh.k * sh.p * sh.q;
  const int64_t nw = int64_t(sh.k) * (sh.c / sh.groups) * sh.r * sh.s;
  std::vector<float> src(ns), dst(nd);
  for (int64_t i = 0; i < ns; ++i) src[i] = float((i * 37 % 101) - 50) / 17.0f;
  for (int64_t i = 0; i < nd; ++i) dst[i] = float((i * 53 % 97) - 48) / 13.0f;
  simt::DeviceArray<float> dsrc(src), ddst(dst);
  const CudaDirect a;
  const ConvProblem p = test::problem_of(sh);
  for (int chunks : {0, 3}) {
    std::vector<float> first;
    for (int run = 0; run < 2; ++run) {
      const CudaDirectFilterPlan pl = plan_cuda_direct_bwd_filter(sh, chunks);
      simt::DeviceArray<float> ws(size_t(std::max<int64_t>(pl.partial_floats, 1))), wei{size_t(nw)};
      ws.fill_bytes(run == 0 ? 0xFF : 0x7F);
      wei.fill_bytes(0xFF);
      a.run_bwd_filter_chunked(p, ConvBuffers{dsrc.get(), wei.get(), ddst.get()}, ws.get(), nullptr, chunks);
      const std::vector<float> got = wei.download();
      if (run == 0) first = got;
      else
        EXPECT_EQ(std::memcmp(got.data(), first.data(), got.size() * sizeof(float)), 0) << "chunks " << chunks;
    }
  }
}

}  // namespace
}  // namespace convlab::cuda
