// kernels/cuda/direct's launchers under the SIMT emulator: a window over the
// 48 KiB a kernel gets without opting in. (Every direction of cuda.direct
// against the reference: tests/algorithms/cuda/direct_test.cpp.)
#include <gtest/gtest.h>

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

}  // namespace
}  // namespace convlab::cuda
