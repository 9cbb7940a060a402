// cuda.winograd_f2x3 / f4x3 / f6x3 under the SIMT emulator, every direction,
// against the fp64 reference. Output sizes around the tiles and the fused
// kernel's 8x16-pixel block, channel counts around its 8 / 16 channel blocks,
// padding 0..2, groups. Prints the measured error in both forms: per unit of
// the element's own sum|terms| (the emulated per-element bounds in
// kernels/cuda/winograd/*.hpp) and per unit of the largest sum|terms| (the
// transform bound form the algorithms' tolerance() declares,
// algorithms/cuda/winograd.cu).
#include <gtest/gtest.h>

#include <cstdio>

#include "algorithms/cuda/winograd.hpp"
#include "kernels/cuda/winograd/winograd_f2x3.hpp"
#include "kernels/cuda/winograd/winograd_nonfused.hpp"
#include "tests/algorithms/cuda/algorithm_check.hpp"

namespace convlab::cuda {
namespace {

using test::Dir;

std::vector<ConvShape> winograd_shapes() {
  using test::shape;
  return {
      shape(2, 3, 5, 6, 4, 3, 3, 1, 1, 1, 1),    shape(1, 9, 11, 19, 17, 3, 3, 1, 1, 1, 1),
      shape(2, 4, 10, 18, 5, 3, 3, 0, 0, 1, 1),  shape(1, 5, 7, 9, 3, 3, 3, 2, 2, 1, 1),
      shape(2, 6, 9, 8, 4, 3, 3, 1, 1, 1, 1, 1, 2), shape(1, 1, 3, 3, 1, 3, 3, 0, 0, 1, 1),
      shape(1, 17, 13, 13, 18, 3, 3, 1, 0, 1, 1),
  };
}

// The non-fused pipelines have no channel blocking of their own (the SGEMM's
// tiles are tested in tests/kernels/cuda/sgemm_test.cpp): the tile-edge shapes
// only, to keep the emulated run short, plus output sizes one below, at and one
// above the F(6x6) tile.
std::vector<ConvShape> nonfused_shapes(int m) {
  std::vector<ConvShape> v = winograd_shapes();
  v.pop_back();             // 17 -> 18 channels
  v.erase(v.begin() + 1);   // 9 -> 17 channels
  if (m == 6) {
    v.push_back(test::shape(1, 2, 7, 8, 3, 3, 3, 1, 1, 1, 1));    // 7 x 8: one tile and one row / two columns over
    v.push_back(test::shape(2, 3, 12, 13, 2, 3, 3, 2, 0, 1, 1));  // 14 x 11 outputs
  }
  return v;
}

double extra_eps(int m) { return m == 2 ? kWinogradF2x3ExtraEps : winograd_nonfused_extra_eps(m); }

// The shared tester's emulated sweep (the 3x3 stride-1 problems of it: edges,
// tiles around 2, 4, 6, 1-D and asymmetric padding), then the family's own
// shapes, within the tolerance each declares (the tester prints the measured
// error in that eps x max sum|terms| form).
TEST(CudaWinogradF2x3, MatchesReferenceOnTheEmulatedSweep) { testing::ConvTester(CudaWinogradF2x3()).emulated().run(); }
TEST(CudaWinogradF4x3, MatchesReferenceOnTheEmulatedSweep) { testing::ConvTester(CudaWinograd(4)).emulated().run(); }
TEST(CudaWinogradF6x3, MatchesReferenceOnTheEmulatedSweep) { testing::ConvTester(CudaWinograd(6)).emulated().run(); }

TEST(CudaWinogradF2x3, AllDirectionsMatchReference) { test::sweep(CudaWinogradF2x3(), winograd_shapes()); }
// The filters are transformed once per call into the workspace (fwd, bwd-data;
// bwd-filter needs none): it is declared, and the run, on a NaN-poisoned
// workspace, matches the reference with groups whose channels cross the fused
// kernel's 16-output / 8-input channel blocks (17 and 9 per group, both roles:
// bwd-data swaps them).
TEST(CudaWinogradF2x3, FiltersTransformedOnceIntoTheWorkspace) {
  const CudaWinogradF2x3 a;
  const ConvShape sh = test::shape(1, 2 * 9, 6, 7, 2 * 17, 3, 3, 1, 1, 1, 1, 1, 2);
  const ConvProblem p = test::problem_of(sh);
  // groups x ceil(cout_g / 16) x ceil(cin_g / 8) chunks of 16 points x 8 x 16 floats
  EXPECT_EQ(a.workspace_bytes(p, Dir::fwd), size_t(2 * 2 * 2 * 2048 * 4));
  EXPECT_EQ(a.workspace_bytes(p, Dir::bwd_data), size_t(2 * 1 * 3 * 2048 * 4));
  EXPECT_EQ(a.workspace_bytes(p, Dir::bwd_filter), 0u);
  test::sweep(a, {sh});
}

TEST(CudaWinogradF4x3, AllDirectionsMatchReference) { test::sweep(CudaWinograd(4), nonfused_shapes(4)); }
TEST(CudaWinogradF6x3, AllDirectionsMatchReference) { test::sweep(CudaWinograd(6), nonfused_shapes(6)); }

// 1-D and asymmetric padding (run in the emulated sweep): the 3x3 stride-1
// problems with top / left padding <= 2 are supported (0 left and 4 right, 1
// above and 4 below, 1 above and 2 below), the others refused with a reason.
// The declared bound is eps x max sum|terms|: outputs whose window lies wholly
// in the bottom padding have no terms, so no per-element bound holds for them
// (a transform spreads its neighbours' rounding there).
TEST(CudaWinograd, SupportsThe3x3AsymmetricPaddingProblems) {
  const CudaWinogradF2x3 f2;
  const CudaWinograd f4(4), f6(6);
  for (const Algorithm* a : {static_cast<const Algorithm*>(&f2), static_cast<const Algorithm*>(&f4),
                             static_cast<const Algorithm*>(&f6)})
    EXPECT_EQ(test::supported_in_every_direction(*a, testing::asym_1d_sweep()), 3u) << a->name();
}

// The shapes cuda.winograd_* decline, with their reasons.
TEST(CudaWinograd, UnsupportedShapesSayWhy) {
  const CudaWinogradF2x3 f2;
  const CudaWinograd f4(4), f6(6);
  const std::pair<ConvShape, const char*> cases[] = {
      {test::shape(1, 2, 8, 8, 2, 5, 5, 2, 2, 1, 1), "needs a 3x3 filter"},
      {test::shape(1, 2, 8, 8, 2, 3, 3, 1, 1, 2, 2), "needs stride 1"},
      {test::shape(1, 2, 8, 8, 2, 3, 3, 2, 2, 1, 1, 2), "needs dilation 1"},
      {test::shape(1, 2, 8, 8, 2, 3, 3, 3, 3, 1, 1), "needs padding <= 2"},
  };
  for (const Algorithm* a : {static_cast<const Algorithm*>(&f2), static_cast<const Algorithm*>(&f4),
                             static_cast<const Algorithm*>(&f6)})
    for (const auto& [sh, why] : cases)
      for (Dir d : test::kDirs) {
        const Support s = a->supports(test::problem_of(sh), d);
        EXPECT_FALSE(s.ok) << a->name() << " " << test::label(sh);
        EXPECT_EQ(s.reason, why) << a->name() << " " << test::label(sh);
      }
  EXPECT_EQ(f4.name(), "cuda.winograd_f4x3");
  EXPECT_EQ(f6.name(), "cuda.winograd_f6x3");
}

// The measurement behind the emulated bounds on larger layers: AlexNet's 3x3
// layers at batch 1. Minutes emulated, so run on demand:
//   ./build/tests/algorithms/cuda/test_algorithms_cuda --gtest_also_run_disabled_tests --gtest_filter='*AlexNet*'
TEST(CudaWinogradF2x3, DISABLED_AlexNetLayersErrorMeasurement) {
  if (test::kSanitized) GTEST_SKIP() << "AlexNet-size emulation runs in the plain build only";
  const CudaWinogradF2x3 f2;
  const CudaWinograd f4(4), f6(6);
  for (const auto& [id, sh] : test::alexnet_3x3_layers())
    for (Dir d : test::kDirs) {
      const double k = double(test::reduction(sh, d));
      for (const auto& [a, m] : {std::pair<const Algorithm*, int>{&f2, 2}, {&f4, 4}, {&f6, 6}}) {
        double global = 0;
        const double w =
            test::check_conv(sh, d, test::by_algorithm(*a), (k + extra_eps(m)) * FLT_EPSILON, 0, &global);
        std::printf("%s %s %s: max |err|/sum|terms| = %.3g (= %.3g K*eps, K=%.0f); max |err| / max sum|terms| = "
                    "%.3g eps\n",
                    std::string(a->name()).c_str(), id.c_str(), test::name(d), w, w / (k * FLT_EPSILON), k,
                    global / FLT_EPSILON);
      }
    }
}

}  // namespace
}  // namespace convlab::cuda
