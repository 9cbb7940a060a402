// cuda.direct under the SIMT emulator, every direction, against the fp64
// reference (small ragged shapes: tiles of 8 x 16 pixels, 8 channels).
#include <gtest/gtest.h>

#include "algorithms/cuda/direct.hpp"
#include "tests/algorithms/cuda/algorithm_check.hpp"

namespace convlab::cuda {
namespace {

using test::Dir;

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

using test::sweep;

TEST(CudaDirect, FwdMatchesReference) { sweep(CudaDirect(), direct_shapes(), Dir::fwd); }
TEST(CudaDirect, BwdDataMatchesReference) { sweep(CudaDirect(), direct_shapes(), Dir::bwd_data); }
TEST(CudaDirect, BwdFilterMatchesReference) { sweep(CudaDirect(), direct_shapes(), Dir::bwd_filter); }

// Strided backward data, one block per stride phase (fwd and bwd-filter too: the
// same shapes).
TEST(CudaDirect, StridedMatchesReference) {
  for (Dir d : test::kDirs) sweep(CudaDirect(), test::strided_shapes(), d);
}

// 1-D and asymmetric padding: every shape, every direction.
TEST(CudaDirect, AsymmetricPaddingAnd1dMatchReference) { test::sweep_asym_1d(CudaDirect(), 9); }

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

}  // namespace
}  // namespace convlab::cuda
