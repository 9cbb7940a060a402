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

// The shared tester's emulated sweep, every direction: edges, the tile shapes,
// 1-D and asymmetric padding (the 1x1 filter with a zero row below included: not
// the identity case, its output has a row more than its input), strided,
// dilated and asymmetrically padded shapes (col2im over each element's phase
// taps only).
TEST(CudaIm2colGemm, MatchesReferenceOnTheEmulatedSweep) { testing::ConvTester(CudaIm2colGemm()).emulated().run(); }

TEST(CudaIm2colGemm, SupportsEvery1dAndAsymmetricPaddingProblem) {
  EXPECT_EQ(test::supported_in_every_direction(CudaIm2colGemm(), testing::asym_1d_sweep()),
            testing::asym_1d_sweep().size());
}

// The chunked composition: chunks of 1, 2 and 3 images over N = 5 (a remainder
// chunk), groups fewer and more than the chunk's images (both GEMM batchings),
// the 1x1 identity case; workspace exactly the plan's workspace_floats(), poisoned, so
// a chunk that writes past its columns or reads stale ones fails. bwd-filter
// also in runs of 1 (one accumulating GEMM per image), 2 (a run boundary inside
// a chunk of 3 or 5) and the budget's (the whole chunk) partial results.
TEST(CudaIm2colGemm, ChunksOfImagesMatchReference) {
  const ConvShape shapes[] = {test::shape(5, 3, 9, 11, 5, 3, 3, 1, 1, 1, 1),
                              test::shape(5, 6, 8, 7, 4, 3, 3, 1, 1, 2, 1, 1, 2),
                              test::shape(5, 4, 7, 9, 4, 3, 3, 1, 1, 1, 1, 1, 4),
                              test::shape(5, 4, 6, 5, 6, 1, 1, 0, 0, 1, 1, 1, 2)};
  const CudaIm2colGemm a;
  for (const ConvShape& sh : shapes)
    for (int chunk : {1, 2, 3, 5})
      for (Dir d : test::kDirs)
        for (int partial : d == Dir::bwd_filter ? std::vector<int>{1, 2, 0} : std::vector<int>{0}) {
          const CudaIm2colPlan pl = plan_cuda_im2col(sh, d, chunk, partial);
          const int images = std::min(chunk, sh.n);
          if (partial > 0 && partial > images) continue;  // the same run as the chunk's (partial 0)
          if (partial == 0 && d == Dir::bwd_filter && images <= 2) continue;  // the same as partial = images
          if (pl.identity) EXPECT_EQ(pl.col_floats, 0);
          else EXPECT_EQ(pl.col_floats, int64_t(images) * sh.c * sh.r * sh.s * sh.p * sh.q);
          const int runs = d != Dir::bwd_filter ? 1 : partial > 0 ? std::min(partial, images) : images;
          EXPECT_EQ(pl.partial, runs);
          EXPECT_EQ(pl.partial_floats, runs > 1 ? int64_t(runs) * sh.k * (sh.c / sh.groups) * sh.r * sh.s : 0);
          test::check_conv(sh, d, [&](Dir dd, const ConvShape& s, float* src, float* wei, float* dst) {
            simt::DeviceArray<float> ws(size_t(std::max<int64_t>(pl.workspace_floats(), 1)));
            ws.fill_bytes(0xFF);
            a.run_chunked(test::problem_of(s), dd, ConvBuffers{src, wei, dst}, ws.get(), nullptr, chunk, partial);
          });
        }
}

TEST(CudaIm2colGemm, ChunkSizeFollowsTheWorkspaceBudget) {
  // AlexNet conv3 (384x256x3x3 on 13x13): 2304 x 169 columns per image.
  ConvShape conv3 = test::shape(128, 256, 13, 13, 384, 3, 3, 1, 1, 1, 1);
  const int64_t per_img = int64_t(256) * 9 * 169;
  EXPECT_EQ(plan_cuda_im2col(conv3, Dir::fwd).chunk, int(kCudaIm2colChunkFloats / per_img));
  EXPECT_LE(plan_cuda_im2col(conv3, Dir::fwd).col_floats, kCudaIm2colChunkFloats);
  EXPECT_GT(plan_cuda_im2col(conv3, Dir::fwd).chunk, 1);
  // bwd-filter: 384 x 2304 partial weights per image, 4 of them in the partial budget.
  const int64_t per_part = int64_t(384) * 2304;
  const CudaIm2colPlan conv3_bf = plan_cuda_im2col(conv3, Dir::bwd_filter);
  EXPECT_EQ(conv3_bf.partial, int(kCudaIm2colPartialFloats / per_part));
  EXPECT_EQ(conv3_bf.partial, 4);
  EXPECT_EQ(conv3_bf.partial_floats, 4 * per_part);
  EXPECT_EQ(conv3_bf.workspace_floats(), conv3_bf.col_floats + 4 * per_part);
  conv3.n = 3;
  EXPECT_EQ(plan_cuda_im2col(conv3, Dir::fwd).chunk, 3);
  EXPECT_EQ(plan_cuda_im2col(conv3, Dir::fwd).col_floats, 3 * per_img);
  EXPECT_EQ(plan_cuda_im2col(conv3, Dir::fwd).partial_floats, 0);
  EXPECT_EQ(CudaIm2colGemm().workspace_bytes(test::problem_of(conv3), Dir::fwd), size_t(3 * per_img) * 4);
  EXPECT_EQ(CudaIm2colGemm().workspace_bytes(test::problem_of(conv3), Dir::bwd_data), size_t(3 * per_img) * 4);
  EXPECT_EQ(CudaIm2colGemm().workspace_bytes(test::problem_of(conv3), Dir::bwd_filter),
            size_t(3 * per_img + 3 * per_part) * 4);
  // AlexNet conv1 at batch 32: 15 images of 363 x 3025 columns per chunk, and
  // the chunk's 15 partial 64 x 363 weights at once: 6 64x64 blocks an image,
  // 90 a run, so each image's 3025 columns go in 6 slices of 505 (the last 500).
  const ConvShape conv1 = test::shape(32, 3, 224, 224, 64, 11, 11, 2, 2, 4, 4);
  const CudaIm2colPlan conv1_bf = plan_cuda_im2col(conv1, Dir::bwd_filter);
  EXPECT_EQ(conv1_bf.chunk, 15);
  EXPECT_EQ(conv1_bf.partial, 15);
  EXPECT_EQ(conv1_bf.splits, 6);
  EXPECT_EQ(conv1_bf.slice, 505);
  EXPECT_EQ(conv1_bf.partial_floats, 15 * 6 * 64 * 363);
  EXPECT_EQ(conv3_bf.splits, 1);  // 4 x 216 blocks: enough without slices
  EXPECT_EQ(conv3_bf.slice, 169);
  // ResNet-50's first layer (64 x 147 weights, 112 x 112 outputs): 3 blocks an image,
  // 27 a run of 9; 20 slices of 628 columns make 540.
  const ConvShape stem = test::shape(32, 3, 224, 224, 64, 7, 7, 3, 3, 2, 2);
  const CudaIm2colPlan stem_bf = plan_cuda_im2col(stem, Dir::bwd_filter);
  EXPECT_EQ(stem_bf.chunk, 9);
  EXPECT_EQ(stem_bf.splits, 20);
  EXPECT_EQ(stem_bf.slice, 628);
  EXPECT_EQ(stem_bf.partial, 9);
  EXPECT_LE(stem_bf.partial_floats, kCudaIm2colPartialFloats);
  // One image larger than the budget: still one image per chunk, and per run.
  const ConvShape huge = test::shape(2, 512, 64, 64, 8, 7, 7, 3, 3, 1, 1);
  EXPECT_EQ(plan_cuda_im2col(huge, Dir::fwd).chunk, 1);
  EXPECT_EQ(plan_cuda_im2col(huge, Dir::fwd).col_floats, int64_t(512) * 49 * 64 * 64);
  EXPECT_EQ(plan_cuda_im2col(huge, Dir::bwd_filter).partial, 1);
  EXPECT_EQ(plan_cuda_im2col(huge, Dir::bwd_filter).partial_floats, 0);
  // Identity: no columns, all images at once.
  const ConvShape identity = test::shape(7, 4, 6, 5, 6, 1, 1, 0, 0, 1, 1);
  EXPECT_EQ(plan_cuda_im2col(identity, Dir::fwd).chunk, 7);
  EXPECT_EQ(CudaIm2colGemm().workspace_bytes(test::problem_of(identity), Dir::bwd_data), 0u);
  EXPECT_EQ(CudaIm2colGemm().workspace_bytes(test::problem_of(identity), Dir::bwd_filter), size_t(7 * 6 * 4) * 4);
}

// bwd-filter with each image's columns in slices (2, 3 and 7 of 400 columns: even,
// a short last slice, slices of 58), runs of 2 and the budget's, chunks of 2 and 5
// over N = 5, groups; workspace exactly the plan's, poisoned.
TEST(CudaIm2colGemm, SlicedBwdFilterMatchesReference) {
  const CudaIm2colGemm a;
  for (const ConvShape& sh : {test::shape(5, 3, 20, 20, 4, 3, 3, 1, 1, 1, 1),
                              test::shape(5, 4, 20, 20, 6, 3, 3, 1, 1, 1, 1, 1, 2)})
    for (int chunk : {2, 5})
      for (int partial : {2, 0})
        for (int splits : {2, 3, 7}) {
          const CudaIm2colPlan pl = plan_cuda_im2col(sh, Dir::bwd_filter, chunk, partial, splits);
          const int pq = sh.p * sh.q;
          EXPECT_EQ(pl.splits, splits);
          EXPECT_EQ(pl.slice, (pq + splits - 1) / splits);
          EXPECT_EQ(pl.partial_floats, int64_t(pl.partial) * splits * sh.k * (sh.c / sh.groups) * 9);
          test::check_conv(sh, Dir::bwd_filter, [&](Dir dd, const ConvShape& s, float* src, float* wei, float* dst) {
            simt::DeviceArray<float> ws(size_t(pl.workspace_floats()));
            ws.fill_bytes(0xFF);
            a.run_chunked(test::problem_of(s), dd, ConvBuffers{src, wei, dst}, ws.get(), nullptr, chunk, partial,
                          splits);
          });
        }
}

// bwd-filter's sum over images is the same whatever the chunk and the run of
// partial results: bit for bit, with chunk and run boundaries inside the batch
// and groups (batched over images, or over groups where they outnumber the run).
TEST(CudaIm2colGemm, BwdFilterDoesNotDependOnChunkOrRun) {
  for (const ConvShape& sh : {test::shape(7, 6, 9, 8, 4, 3, 3, 1, 1, 2, 2, 1, 2),
                              test::shape(7, 4, 7, 9, 4, 3, 3, 1, 1, 1, 1, 1, 4)}) {
    const int64_t ns = int64_t(sh.n) * sh.c * sh.h * sh.w, nd = int64_t(sh.n) * sh.k * sh.p * sh.q;
    const int64_t nw = int64_t(sh.k) * (sh.c / sh.groups) * sh.r * sh.s;
    std::vector<float> src(ns), dst(nd);
    for (int64_t i = 0; i < ns; ++i) src[i] = float((i * 37 % 101) - 50) / 17.0f;
    for (int64_t i = 0; i < nd; ++i) dst[i] = float((i * 53 % 97) - 48) / 13.0f;
    simt::DeviceArray<float> dsrc(src), ddst(dst);
    const CudaIm2colGemm a;
    std::vector<float> first;
    for (const auto& [chunk, partial] : std::vector<std::pair<int, int>>{{1, 1}, {7, 7}, {3, 2}, {5, 3}}) {
      const CudaIm2colPlan pl = plan_cuda_im2col(sh, Dir::bwd_filter, chunk, partial, 1);
      simt::DeviceArray<float> ws(size_t(std::max<int64_t>(pl.workspace_floats(), 1)));
      simt::DeviceArray<float> wei{size_t(nw)};
      ws.fill_bytes(0xFF);
      wei.fill_bytes(0xFF);
      a.run_chunked(test::problem_of(sh), Dir::bwd_filter, ConvBuffers{dsrc.get(), wei.get(), ddst.get()}, ws.get(),
                    nullptr, chunk, partial, 1);
      const std::vector<float> got = wei.download();
      if (first.empty()) first = got;
      else EXPECT_EQ(got, first) << test::label(sh) << " chunk " << chunk << " run " << partial;
    }
  }
}

}  // namespace
}  // namespace convlab::cuda
