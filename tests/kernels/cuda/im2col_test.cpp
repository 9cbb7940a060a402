// kernels/cuda/im2col (im2col, col2im and the im2col + sgemm drivers) under the
// SIMT emulator, every direction, against the fp64 reference.
#include <gtest/gtest.h>

#include "kernels/cuda/im2col/im2col.hpp"
#include "tests/kernels/cuda/conv_check.hpp"

namespace convlab::cuda {
namespace {

using test::Dir;

void run_im2col_gemm(Dir d, const ConvShape& sh, float* src, float* wei, float* dst) {
  simt::DeviceArray<float> ws(size_t(std::max<int64_t>(im2col_workspace_floats(sh), 1)));
  ws.fill_bytes(0xFF);
  const GemmFn gemm = default_gemm();
  if (d == Dir::fwd) im2col_conv_fwd(sh, src, wei, dst, ws.get(), nullptr, gemm);
  if (d == Dir::bwd_data) im2col_conv_bwd_data(sh, dst, wei, src, ws.get(), nullptr, gemm);
  if (d == Dir::bwd_filter) im2col_conv_bwd_filter(sh, src, dst, wei, ws.get(), nullptr, gemm);
}

TEST(CudaIm2colGemm, AllDirectionsMatchReference) {
  for (const ConvShape& sh : test::sanitized_subset(test::general_shapes()))
    for (Dir d : test::kDirs) test::check_conv(sh, d, run_im2col_gemm);
}

// The chunked drivers: chunks of 1, 2 and 3 images over N = 5 (a remainder
// chunk), groups fewer and more than the chunk's images (both GEMM batchings),
// the 1x1 identity case; workspace exactly im2col_workspace_floats(sh, chunk),
// poisoned, so a chunk that writes past its columns or reads stale ones fails.
TEST(CudaIm2colGemm, ChunksOfImagesMatchReference) {
  const ConvShape shapes[] = {test::shape(5, 3, 9, 11, 5, 3, 3, 1, 1, 1, 1),
                              test::shape(5, 6, 8, 7, 4, 3, 3, 1, 1, 2, 1, 1, 2),
                              test::shape(5, 4, 7, 9, 4, 3, 3, 1, 1, 1, 1, 1, 4),
                              test::shape(5, 4, 6, 5, 6, 1, 1, 0, 0, 1, 1, 1, 2)};
  for (const ConvShape& sh : shapes)
    for (int chunk : {1, 2, 3, 5})
      for (Dir d : test::kDirs) {
        const int64_t floats = im2col_workspace_floats(sh, chunk);
        if (im2col_is_identity(sh)) EXPECT_EQ(floats, 0);
        else EXPECT_EQ(floats, int64_t(std::min(chunk, sh.n)) * sh.c * sh.r * sh.s * sh.p * sh.q);
        test::check_conv(sh, d, [&](Dir dd, const ConvShape& s, float* src, float* wei, float* dst) {
          simt::DeviceArray<float> ws(size_t(std::max<int64_t>(floats, 1)));
          ws.fill_bytes(0xFF);
          const GemmFn gemm = default_gemm();
          if (dd == Dir::fwd) im2col_conv_fwd(s, src, wei, dst, ws.get(), nullptr, gemm, chunk);
          if (dd == Dir::bwd_data) im2col_conv_bwd_data(s, dst, wei, src, ws.get(), nullptr, gemm, chunk);
          if (dd == Dir::bwd_filter) im2col_conv_bwd_filter(s, src, dst, wei, ws.get(), nullptr, gemm, chunk);
        });
      }
}

TEST(CudaIm2colGemm, ChunkSizeFollowsTheWorkspaceBudget) {
  // AlexNet conv3 (384x256x3x3 on 13x13): 2304 x 169 columns per image.
  ConvShape conv3 = test::shape(128, 256, 13, 13, 384, 3, 3, 1, 1, 1, 1);
  const int64_t per_img = int64_t(256) * 9 * 169;
  EXPECT_EQ(im2col_chunk_images(conv3), int(kIm2colChunkFloats / per_img));
  EXPECT_LE(im2col_workspace_floats(conv3), kIm2colChunkFloats);
  EXPECT_GT(im2col_chunk_images(conv3), 1);
  conv3.n = 3;
  EXPECT_EQ(im2col_chunk_images(conv3), 3);
  EXPECT_EQ(im2col_workspace_floats(conv3), 3 * per_img);
  // One image larger than the budget: still one image per chunk.
  const ConvShape huge = test::shape(2, 512, 64, 64, 8, 7, 7, 3, 3, 1, 1);
  EXPECT_EQ(im2col_chunk_images(huge), 1);
  EXPECT_EQ(im2col_workspace_floats(huge), int64_t(512) * 49 * 64 * 64);
  // Identity: no columns, all images at once.
  EXPECT_EQ(im2col_chunk_images(test::shape(7, 4, 6, 5, 6, 1, 1, 0, 0, 1, 1)), 7);
}

TEST(CudaIm2col, ColumnMatrixIsExact) {
  const ConvShape sh = test::shape(1, 3, 7, 5, 1, 3, 2, 1, 1, 2, 1, 2);
  std::vector<float> src(3 * 7 * 5);
  for (size_t i = 0; i < src.size(); ++i) src[i] = float(i + 1);
  simt::DeviceArray<float> dsrc(src), col(size_t(3 * 3 * 2 * sh.p * sh.q));
  im2col(sh, dsrc.get(), col.get(), nullptr);
  const auto c = col.download();
  for (int ch = 0; ch < 3; ++ch)
    for (int r = 0; r < 3; ++r)
      for (int s = 0; s < 2; ++s)
        for (int p = 0; p < sh.p; ++p)
          for (int q = 0; q < sh.q; ++q) {
            const int ih = p * 2 - 1 + r * 2, iw = q - 1 + s * 2;
            const float want = (ih >= 0 && ih < 7 && iw >= 0 && iw < 5) ? src[(ch * 7 + ih) * 5 + iw] : 0.0f;
            ASSERT_EQ(c[((ch * 3 + r) * 2 + s) * sh.p * sh.q + p * sh.q + q], want);
          }
}

}  // namespace
}  // namespace convlab::cuda
