// kernels/cuda/direct's launchers under the SIMT emulator: a window over the
// 48 KiB a kernel gets without opting in. (Every direction of cuda.direct
// against the reference: tests/algorithms/cuda/direct_test.cpp.)
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <vector>

#include "core/error.hpp"
#include "kernels/cuda/direct/direct.hpp"
#include "tests/support/cuda_conv_check.hpp"

namespace convlab::cuda {
namespace {

using test::Dir;

// A dilated 3 x 3 filter whose input window needs ~70 KB of shared memory: more
// than the 48 KiB a kernel gets without opting in, so the launchers must call
// simt::set_max_dynamic_smem (the emulator rejects the launch otherwise).
TEST(CudaDirect, WindowOver48KiBOptsIn) {
  const ConvShape sh = test::shape(1, 1, 128, 128, 1, 3, 3, 0, 0, 1, 1, 60);
  ASSERT_GT(direct_fwd_smem_bytes(sh), simt::kDefaultMaxDynamicSmem);
  ASSERT_GT(direct_bwd_data_smem_bytes(sh), simt::kDefaultMaxDynamicSmem);
  const test::ConvRun run = test::by_direction(direct_conv_fwd, direct_conv_bwd_data, direct_conv_bwd_filter);
  test::check_conv(sh, Dir::fwd, run);
  test::check_conv(sh, Dir::bwd_data, run);
}

// bwd-filter's chunked launcher: chunk i's slice of the output, (chunks, K, Cg,
// R, S), holds the sums over its own positions [i*len, (i+1)*len) of the N*P*Q
// alone, the last chunk shorter, chunks ending inside an image (35 positions
// per image, 48 per chunk); chunks that do not cover N*P*Q are refused.
TEST(CudaDirect, BwdFilterChunkSlicesHoldTheirPositionsSums) {
  const ConvShape sh = test::shape(3, 4, 7, 9, 6, 3, 3, 1, 1, 1, 2, 1, 2);
  ASSERT_EQ(sh.p * sh.q, 35);
  const int chunks = 3, len = 48, total = sh.n * sh.p * sh.q;
  const int cg = sh.c / sh.groups, kg = sh.k / sh.groups, crs = cg * sh.r * sh.s;
  std::vector<float> src(size_t(sh.n) * sh.c * sh.h * sh.w), dy(size_t(sh.n) * sh.k * sh.p * sh.q);
  for (size_t i = 0; i < src.size(); ++i) src[i] = float(int(i * 37 % 101) - 50) / 17.0f;
  for (size_t i = 0; i < dy.size(); ++i) dy[i] = float(int(i * 53 % 97) - 48) / 13.0f;
  simt::DeviceArray<float> dsrc(src), ddy(dy), out(size_t(chunks) * sh.k * crs);
  out.fill_bytes(0xFF);
  direct_conv_bwd_filter_chunks(sh, dsrc.get(), ddy.get(), out.get(), chunks, len, nullptr);
  const std::vector<float> got = out.download();
  int bad = 0;
  for (int i = 0; i < chunks; ++i)
    for (int k = 0; k < sh.k; ++k)
      for (int w = 0; w < crs; ++w) {
        const int cl = w / (sh.r * sh.s), r = w / sh.s % sh.r, s = w % sh.s, c = k / kg * cg + cl;
        double ref = 0, mag = 0;
        for (int j = i * len; j < std::min(total, (i + 1) * len); ++j) {
          const int n = j / (sh.p * sh.q), p = j / sh.q % sh.p, q = j % sh.q;
          const int ih = p * sh.stride_h - sh.pad_h + r * sh.dil_h, iw = q * sh.stride_w - sh.pad_w + s * sh.dil_w;
          if (ih < 0 || ih >= sh.h || iw < 0 || iw >= sh.w) continue;
          const double t = double(dy[((size_t(n) * sh.k + k) * sh.p + p) * sh.q + q]) *
                           src[((size_t(n) * sh.c + c) * sh.h + ih) * sh.w + iw];
          ref += t;
          mag += std::fabs(t);
        }
        const float g = got[(size_t(i) * sh.k + k) * crs + w];
        if (!(std::fabs(g - ref) <= len * FLT_EPSILON * mag) && ++bad <= 3)
          ADD_FAILURE() << "chunk " << i << " k " << k << " weight " << w << ": " << g << " vs " << ref;
      }
  EXPECT_EQ(bad, 0);
  EXPECT_THROW(direct_conv_bwd_filter_chunks(sh, dsrc.get(), ddy.get(), out.get(), 2, len, nullptr), Error);
}

}  // namespace
}  // namespace convlab::cuda
