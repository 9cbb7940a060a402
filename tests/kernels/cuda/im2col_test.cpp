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
