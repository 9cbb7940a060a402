// kernels/cuda/winograd/winograd_f2x3.cu's pieces below the algorithm: the
// filter transform's output (U in the fused kernel's block order, zeros past
// the channel edges, rotated for bwd-data, groups) against G g G^T in fp64 on
// small-integer filters (exact in fp32: G's entries are 1 and +-1/2), and the
// bwd-filter kernel's shared-memory layout free of bank conflicts for every
// warp's stores and loads. (The fused and bwd-filter kernels' results: every
// direction against the fp64 reference in tests/algorithms/cuda/winograd_test.cpp.)
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "kernels/cuda/simt/memory.hpp"
#include "kernels/cuda/winograd/winograd_f2x3.hpp"
#include "kernels/winograd_math.hpp"
#include "tests/support/smem_banks.hpp"

namespace convlab::cuda {
namespace {

// U (groups, ceil(cout_g / 16), ceil(cin_g / 8), 16, 8, 16) for geo, from the
// kernel, against the fp64 transform of each filter; every padding slot 0.
void check_filter_transform(const WinogradFusedGeom& geo) {
  const int cin_g = geo.cin / geo.groups, cout_g = geo.cout / geo.groups;
  const int kblocks = (cout_g + 15) / 16, cchunks = (cin_g + 7) / 8;
  ASSERT_EQ(winograd_f2x3_filter_floats(geo), int64_t(geo.groups) * kblocks * cchunks * 2048);
  // wei as the convolution stores it: (cout, cin_g, 3, 3), or for rotate (cin, cout_g, 3, 3).
  std::vector<float> wei(size_t(geo.cout) * cin_g * 9);
  uint32_t x = 2024;
  for (float& v : wei) {
    x = x * 1664525u + 1013904223u;
    v = float(int(x >> 28) - 8);
  }
  simt::DeviceArray<float> dw(wei), du(size_t(winograd_f2x3_filter_floats(geo)));
  du.fill_bytes(0xFF);  // NaN: a slot left unwritten fails
  winograd_f2x3_filter_transform(geo, dw.get(), du.get(), nullptr);
  const std::vector<float> u = du.download();
  const winograd_math::Matrices W = winograd_math::make_matrices(2);
  int64_t checked = 0;
  for (int g = 0; g < geo.groups; ++g)
    for (int kb = 0; kb < kblocks; ++kb)
      for (int cc = 0; cc < cchunks; ++cc)
        for (int xi = 0; xi < 16; ++xi)
          for (int ci = 0; ci < 8; ++ci)
            for (int kk = 0; kk < 16; ++kk) {
              const int o = kb * 16 + kk, i = cc * 8 + ci;
              const int64_t slot = ((((int64_t(g) * kblocks + kb) * cchunks + cc) * 16 + xi) * 8 + ci) * 16 + kk;
              double want = 0;
              if (o < cout_g && i < cin_g) {
                const int a = xi / 4, b = xi % 4;
                for (int r = 0; r < 3; ++r)
                  for (int s = 0; s < 3; ++s) {
                    const float w = geo.rotate ? wei[((size_t(g) * cin_g + i) * cout_g + o) * 9 + (2 - r) * 3 + (2 - s)]
                                               : wei[((size_t(g) * cout_g + o) * cin_g + i) * 9 + r * 3 + s];
                    want += W.G[a][r] * w * W.G[b][s];
                  }
              }
              ASSERT_EQ(double(u[size_t(slot)]), want)
                  << "g " << g << " o " << o << " i " << i << " xi " << xi << (geo.rotate ? " rotated" : "");
              ++checked;
            }
  EXPECT_EQ(checked, winograd_f2x3_filter_floats(geo));
}

// Output channels one above the 16-channel block, input channels one above
// the 8-channel chunk, two groups; as fwd reads the filter and as bwd-data does.
TEST(CudaWinogradF2x3Kernels, FilterTransformInBlockOrder) {
  // n, cin, ih, iw, cout, oh, ow, pad_h, pad_w, groups, rotate (only the channels matter here)
  check_filter_transform({1, 2 * 9, 4, 4, 2 * 17, 4, 4, 1, 1, 2, false});
  check_filter_transform({1, 2 * 17, 4, 4, 2 * 9, 4, 4, 1, 1, 2, true});
  check_filter_transform({1, 16, 4, 4, 8, 4, 4, 1, 1, 1, false});  // exact multiples: no padding slots
  check_filter_transform({1, 1, 4, 4, 1, 4, 4, 1, 1, 1, true});
}

// The bwd-filter kernel: 256 threads; stores by (row = tid / 16, t = tid % 16),
// loads of the input-patch plane by (row = tid % 16, t) and of the diff_dst
// plane by (row = tid / 16, t) for t = 0..15. Each warp access: one wavefront.
TEST(CudaWinogradF2x3Kernels, BwdFilterSharedLayoutHasNoBankConflicts) {
  for (int warp = 0; warp < 8; ++warp) {
    std::vector<int64_t> stores;
    for (int lane = 0; lane < 32; ++lane) {
      const int tid = warp * 32 + lane;
      stores.push_back(winograd_f2x3_bwd_filter_word(tid / 16, tid % 16));
    }
    EXPECT_EQ(test::ways(stores), 1) << "stores, warp " << warp;
    for (int t = 0; t < 16; ++t) {
      std::vector<int64_t> xs_loads, ys_loads;
      for (int lane = 0; lane < 32; ++lane) {
        const int tid = warp * 32 + lane;
        xs_loads.push_back(winograd_f2x3_bwd_filter_word(tid % 16, t));
        ys_loads.push_back(winograd_f2x3_bwd_filter_word(tid / 16, t));
      }
      EXPECT_EQ(test::ways(xs_loads), 1) << "input-patch loads, warp " << warp << " t " << t;
      EXPECT_EQ(test::ways(ys_loads), 1) << "diff_dst loads, warp " << warp << " t " << t;
    }
  }
  // Every word inside the plane, no two (row, t) on one word.
  std::vector<int> seen(kWinogradF2x3BwdFilterPlaneWords, 0);
  for (int row = 0; row < 16; ++row)
    for (int t = 0; t < 16; ++t) {
      const int w = winograd_f2x3_bwd_filter_word(row, t);
      ASSERT_GE(w, 0);
      ASSERT_LT(w, kWinogradF2x3BwdFilterPlaneWords);
      EXPECT_EQ(seen[size_t(w)]++, 0) << "row " << row << " t " << t;
    }
}

// The counting itself: rows of 16 words without padding (row * 16 + t) put the
// 16 rows a warp loads at one t in 2 banks, 8 words each.
TEST(CudaWinogradF2x3Kernels, UnpaddedRowsWouldConflictEightWays) {
  std::vector<int64_t> loads;
  for (int lane = 0; lane < 32; ++lane) loads.push_back((lane % 16) * 16 + 3);
  EXPECT_EQ(test::ways(loads), 8);
  std::vector<int64_t> broadcast(32, 5);
  EXPECT_EQ(test::ways(broadcast), 1);
}

}  // namespace
}  // namespace convlab::cuda
