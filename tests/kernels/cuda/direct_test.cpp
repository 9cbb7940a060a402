// kernels/cuda/direct under the SIMT emulator, every direction, against the
// fp64 reference (small ragged shapes: tiles of 8 x 16 pixels, 8 channels).
#include <gtest/gtest.h>

#include "kernels/cuda/direct/direct.hpp"
#include "tests/kernels/cuda/conv_check.hpp"

namespace convlab::cuda {
namespace {

using test::Dir;

void run_direct(Dir d, const ConvShape& sh, float* src, float* wei, float* dst) {
  if (d == Dir::fwd) direct_conv_fwd(sh, src, wei, dst, nullptr);
  if (d == Dir::bwd_data) direct_conv_bwd_data(sh, dst, wei, src, nullptr);
  if (d == Dir::bwd_filter) direct_conv_bwd_filter(sh, src, dst, wei, nullptr);
}

std::vector<ConvShape> direct_shapes() {
  std::vector<ConvShape> v = test::general_shapes();
  v.pop_back();  // keep the emulated run short: drop the widest-channel case ...
  v.pop_back();
  v.push_back(test::shape(1, 2, 6, 6, 3, 4, 4, 0, 3, 4, 1));        // ... but keep stride 4
  v.push_back(test::shape(1, 3, 17, 18, 9, 3, 3, 1, 1, 1, 1));      // 9 channels: 2 channel blocks, 3x2 tiles
  v.push_back(test::shape(1, 9, 9, 17, 2, 3, 3, 0, 0, 1, 1));       // 9 input channels (bwd-data blocks)
  v.push_back(test::shape(1, 1, 23, 27, 1, 11, 11, 2, 2, 4, 4));    // AlexNet conv1-like
  return v;
}

TEST(CudaDirect, FwdMatchesReference) {
  for (const ConvShape& sh : test::sanitized_subset(direct_shapes())) test::check_conv(sh, Dir::fwd, run_direct);
}
TEST(CudaDirect, BwdDataMatchesReference) {
  for (const ConvShape& sh : test::sanitized_subset(direct_shapes())) test::check_conv(sh, Dir::bwd_data, run_direct);
}
TEST(CudaDirect, BwdFilterMatchesReference) {
  for (const ConvShape& sh : test::sanitized_subset(direct_shapes())) test::check_conv(sh, Dir::bwd_filter, run_direct);
}

// A dilated 3 x 3 filter whose input window needs ~70 KB of shared memory: more
// than the 48 KiB a kernel gets without opting in, so the launchers must call
// simt::set_max_dynamic_smem (the emulator rejects the launch otherwise).
TEST(CudaDirect, WindowOver48KiBOptsIn) {
  const ConvShape sh = test::shape(1, 1, 128, 128, 1, 3, 3, 0, 0, 1, 1, 60);
  ASSERT_GT(direct_fwd_smem_bytes(sh), simt::kDefaultMaxDynamicSmem);
  ASSERT_GT(direct_bwd_data_smem_bytes(sh), simt::kDefaultMaxDynamicSmem);
  test::check_conv(sh, Dir::fwd, run_direct);
  test::check_conv(sh, Dir::bwd_data, run_direct);
}

}  // namespace
}  // namespace convlab::cuda
