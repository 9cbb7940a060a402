// kernels/cuda/im2col's im2col kernel under the SIMT emulator: the column
// matrix, exactly. (col2im and the composition with the sgemm in every
// direction: cuda.im2col_gemm, tests/algorithms/cuda/im2col_gemm_test.cpp.)
#include <gtest/gtest.h>

#include "kernels/cuda/im2col/im2col.hpp"
#include "tests/support/cuda_conv_check.hpp"

namespace convlab::cuda {
namespace {

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

// Every (column entry, input element) pair the im2col definition links, over sh.n
// images: f(column index, input index) for each tap that reads inside the image.
template <typename F>
void for_each_tap(const ConvShape& sh, F&& f) {
  const size_t pq = size_t(sh.p) * sh.q, crs = size_t(sh.c) * sh.r * sh.s;
  for (int n = 0; n < sh.n; ++n)
    for (int c = 0; c < sh.c; ++c)
      for (int r = 0; r < sh.r; ++r)
        for (int s = 0; s < sh.s; ++s)
          for (int p = 0; p < sh.p; ++p)
            for (int q = 0; q < sh.q; ++q) {
              const int ih = p * sh.stride_h - sh.pad_h + r * sh.dil_h, iw = q * sh.stride_w - sh.pad_w + s * sh.dil_w;
              if (ih < 0 || ih >= sh.h || iw < 0 || iw >= sh.w) continue;
              f(size_t(n) * crs * pq + ((size_t(c) * sh.r + r) * sh.s + s) * pq + size_t(p) * sh.q + q,
                ((size_t(n) * sh.c + c) * sh.h + ih) * sh.w + iw);
            }
}

// col2im against a scatter of every column entry to the input element it was
// copied from, exactly (small integers): strided, dilated, asymmetrically padded
// shapes, where it gathers only the taps of each element's stride phase.
TEST(CudaIm2col, Col2imIsTheExactScatter) {
  for (const ConvShape& sh : test::strided_shapes()) {
    const int64_t pq = int64_t(sh.p) * sh.q, crs = int64_t(sh.c) * sh.r * sh.s;
    std::vector<float> col(size_t(sh.n * crs * pq));
    for (size_t i = 0; i < col.size(); ++i) col[i] = float(int(i * 7 % 13) - 6);
    std::vector<float> want(size_t(sh.n) * sh.c * sh.h * sh.w, 0.0f);
    for_each_tap(sh, [&](size_t e, size_t x) { want[x] += col[e]; });
    simt::DeviceArray<float> dcol(col), dsrc(want.size());
    dsrc.fill_bytes(0xFF);
    col2im(sh, dcol.get(), dsrc.get(), nullptr, sh.n);
    ASSERT_EQ(dsrc.download(), want) << test::label(sh);
  }
}

// Rows and planes in thread groups of 32 to 256 (output planes of 4 x 5, 10 x 10,
// 15 x 20 pixels: eight, two and one row a block, 9 and 5 rows or planes that do
// not fill the last block), several images, and the grid's y / z limits lowered
// to 2 so the launches run in chunks: im2col against the definition, col2im
// against the scatter, exactly.
TEST(CudaIm2col, RowGroupsAndGridChunksAreExact) {
  const simt::GridLimits saved = simt::grid_limits();
  simt::set_grid_limits_for_tests({saved.x, 2, 2});
  for (const ConvShape& sh : {test::shape(3, 1, 4, 5, 1, 3, 3, 1, 1, 1, 1), test::shape(3, 5, 10, 10, 1, 1, 1, 0, 0, 1, 1),
                              test::shape(2, 1, 30, 40, 1, 3, 3, 1, 1, 2, 2)}) {
    const int64_t pq = int64_t(sh.p) * sh.q, crs = int64_t(sh.c) * sh.r * sh.s, hw = int64_t(sh.h) * sh.w;
    std::vector<float> src(size_t(sh.n * sh.c * hw)), col(size_t(sh.n * crs * pq));
    for (size_t i = 0; i < src.size(); ++i) src[i] = float(int(i * 5 % 11) - 5);
    for (size_t i = 0; i < col.size(); ++i) col[i] = float(int(i * 7 % 13) - 6);
    std::vector<float> want_col(col.size(), 0.0f), want_src(src.size(), 0.0f);
    for_each_tap(sh, [&](size_t e, size_t x) {
      want_col[e] = src[x];
      want_src[x] += col[e];
    });
    simt::DeviceArray<float> dsrc(src), dcol(col), gcol(col.size()), gsrc(src.size());
    gcol.fill_bytes(0xFF);
    gsrc.fill_bytes(0xFF);
    im2col(sh, dsrc.get(), gcol.get(), nullptr, sh.n);
    col2im(sh, dcol.get(), gsrc.get(), nullptr, sh.n);
    EXPECT_EQ(gcol.download(), want_col) << test::label(sh);
    EXPECT_EQ(gsrc.download(), want_src) << test::label(sh);
  }
  simt::set_grid_limits_for_tests(saved);
}

}  // namespace
}  // namespace convlab::cuda
