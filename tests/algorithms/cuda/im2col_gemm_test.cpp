// cuda.im2col_gemm (im2col / col2im + the hand-written sgemm, in chunks of
// images) under the SIMT emulator, every direction, against the fp64 reference.
// cuda.im2col_cublas is the same composition with cuBLAS's GEMM: it runs on a
// GPU only (the registry sweep).
#include <gtest/gtest.h>

#include "algorithms/cuda/im2col_gemm.hpp"
#include "tests/algorithms/cuda/algorithm_check.hpp"

namespace convlab::cuda {
namespace {

using test::Dir;

TEST(CudaIm2colGemm, AllDirectionsMatchReference) {
  const CudaIm2colGemm a;
  for (const ConvShape& sh : test::sanitized_subset(test::general_shapes()))
    for (Dir d : test::kDirs) test::check_conv(sh, d, test::by_algorithm(a));
}

// 1-D and asymmetric padding, the 1x1 filter with a zero row below included
// (not the identity case: its output has a row more than its input).
TEST(CudaIm2colGemm, AsymmetricPaddingAnd1dMatchReference) { test::sweep_asym_1d(CudaIm2colGemm(), 9); }

// Strided, dilated, asymmetrically padded shapes (col2im over each element's
// phase taps only), every direction.
TEST(CudaIm2colGemm, StridedMatchesReference) {
  const CudaIm2colGemm a;
  for (const ConvShape& sh : test::sanitized_subset(test::strided_shapes()))
    for (Dir d : test::kDirs) test::check_conv(sh, d, test::by_algorithm(a));
}

// The chunked composition: chunks of 1, 2 and 3 images over N = 5 (a remainder
// chunk), groups fewer and more than the chunk's images (both GEMM batchings),
// the 1x1 identity case; workspace exactly the plan's col_floats, poisoned, so
// a chunk that writes past its columns or reads stale ones fails.
TEST(CudaIm2colGemm, ChunksOfImagesMatchReference) {
  const ConvShape shapes[] = {test::shape(5, 3, 9, 11, 5, 3, 3, 1, 1, 1, 1),
                              test::shape(5, 6, 8, 7, 4, 3, 3, 1, 1, 2, 1, 1, 2),
                              test::shape(5, 4, 7, 9, 4, 3, 3, 1, 1, 1, 1, 1, 4),
                              test::shape(5, 4, 6, 5, 6, 1, 1, 0, 0, 1, 1, 1, 2)};
  const CudaIm2colGemm a;
  for (const ConvShape& sh : shapes)
    for (int chunk : {1, 2, 3, 5})
      for (Dir d : test::kDirs) {
        const CudaIm2colPlan pl = plan_cuda_im2col(sh, chunk);
        if (pl.identity) EXPECT_EQ(pl.col_floats, 0);
        else EXPECT_EQ(pl.col_floats, int64_t(std::min(chunk, sh.n)) * sh.c * sh.r * sh.s * sh.p * sh.q);
        test::check_conv(sh, d, [&](Dir dd, const ConvShape& s, float* src, float* wei, float* dst) {
          simt::DeviceArray<float> ws(size_t(std::max<int64_t>(pl.col_floats, 1)));
          ws.fill_bytes(0xFF);
          a.run_chunked(test::problem_of(s), dd, ConvBuffers{src, wei, dst}, ws.get(), nullptr, chunk);
        });
      }
}

TEST(CudaIm2colGemm, ChunkSizeFollowsTheWorkspaceBudget) {
  // AlexNet conv3 (384x256x3x3 on 13x13): 2304 x 169 columns per image.
  ConvShape conv3 = test::shape(128, 256, 13, 13, 384, 3, 3, 1, 1, 1, 1);
  const int64_t per_img = int64_t(256) * 9 * 169;
  EXPECT_EQ(plan_cuda_im2col(conv3).chunk, int(kCudaIm2colChunkFloats / per_img));
  EXPECT_LE(plan_cuda_im2col(conv3).col_floats, kCudaIm2colChunkFloats);
  EXPECT_GT(plan_cuda_im2col(conv3).chunk, 1);
  conv3.n = 3;
  EXPECT_EQ(plan_cuda_im2col(conv3).chunk, 3);
  EXPECT_EQ(plan_cuda_im2col(conv3).col_floats, 3 * per_img);
  EXPECT_EQ(CudaIm2colGemm().workspace_bytes(test::problem_of(conv3), Dir::fwd), size_t(3 * per_img) * 4);
  // One image larger than the budget: still one image per chunk.
  const ConvShape huge = test::shape(2, 512, 64, 64, 8, 7, 7, 3, 3, 1, 1);
  EXPECT_EQ(plan_cuda_im2col(huge).chunk, 1);
  EXPECT_EQ(plan_cuda_im2col(huge).col_floats, int64_t(512) * 49 * 64 * 64);
  // Identity: no columns, all images at once.
  const ConvShape identity = test::shape(7, 4, 6, 5, 6, 1, 1, 0, 0, 1, 1);
  EXPECT_EQ(plan_cuda_im2col(identity).chunk, 7);
  EXPECT_EQ(CudaIm2colGemm().workspace_bytes(test::problem_of(identity), Dir::bwd_data), 0u);
}

}  // namespace
}  // namespace convlab::cuda
