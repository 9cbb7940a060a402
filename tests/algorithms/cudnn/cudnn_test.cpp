// cuDNN entries: present in the registry, honest without a GPU (every path says
// "no CUDA device" and nothing crashes), and checked against the reference when
// a GPU exists (the registry sweep runs them; here cuDNN's own Find/Get).
#include <gtest/gtest.h>

#include "algorithms/execute.hpp"
#include "algorithms/registry.hpp"
#include "core/device.hpp"
#include "core/error.hpp"
#include "tests/support/conv_tester.hpp"
#if CONVLAB_HAS_CUDA
#include "algorithms/cudnn/cudnn_conv.hpp"
#endif

namespace convlab {
namespace {

#if CONVLAB_HAS_CUDA

const char* const kNames[] = {"cudnn.implicit_gemm",    "cudnn.implicit_precomp_gemm", "cudnn.gemm",
                              "cudnn.direct",           "cudnn.fft",                   "cudnn.fft_tiling",
                              "cudnn.winograd",         "cudnn.winograd_nonfused",     "cudnn.bwd_data_algo_0",
                              "cudnn.bwd_data_algo_1",  "cudnn.bwd_filter_algo_0",     "cudnn.bwd_filter_algo_1",
                              "cudnn.bwd_filter_algo_3"};

TEST(Cudnn, EveryAlgorithmIsRegistered) {
  for (const char* n : kNames) {
    const Algorithm* a = find_algorithm(n);
    ASSERT_NE(a, nullptr) << n;
    EXPECT_EQ(a->device(), DeviceKind::cuda);
  }
}

TEST(Cudnn, DirectionsCudnnLacksAreUnsupportedWithReason) {
  const ConvProblem p = parse_problem("mb2ic4ih8oc4kh3ph1");
  const Support s = get_algorithm("cudnn.implicit_gemm").supports(p, Direction::bwd_data);
  EXPECT_FALSE(s.ok);
  EXPECT_NE(s.reason.find("cuDNN has no"), std::string::npos) << s.reason;
  EXPECT_FALSE(get_algorithm("cudnn.winograd").supports(p, Direction::bwd_filter).ok);
  EXPECT_FALSE(get_algorithm("cudnn.bwd_filter_algo_1").supports(p, Direction::fwd).ok);
}

TEST(Cudnn, NoDevicePathIsClean) {
  if (cuda_info().available) GTEST_SKIP() << "a CUDA device is present; the no-device path cannot be exercised";
  const ConvProblem p = parse_problem("mb2ic4ih8oc4kh3ph1");
  for (const char* n : kNames) {
    const Algorithm& a = get_algorithm(n);
    EXPECT_NE(a.unavailable_reason().find("no CUDA device"), std::string::npos) << n << ": " << a.unavailable_reason();
    for (Direction d : kAllDirections) {
      const Support s = a.supports(p, d);
      EXPECT_FALSE(s.ok) << n;
      EXPECT_FALSE(s.reason.empty()) << n;
      EXPECT_EQ(a.workspace_bytes(p, d), 0u);
    }
    try {
      ConvRunner r(a, p, Direction::fwd, ExecContext{});
      ADD_FAILURE() << n << ": ConvRunner accepted an algorithm without a device";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("no CUDA device"), std::string::npos) << e.what();
    }
    EXPECT_THROW(a.run(p, Direction::fwd, ConvBuffers{}, nullptr, ExecContext{}), Error) << n;
  }
  EXPECT_THROW(cudnn_find(p, Direction::fwd), Error);
  EXPECT_THROW(cudnn_get(p, Direction::bwd_filter), Error);
  EXPECT_THROW(device_alloc(DeviceKind::cuda, 16), Error);
}

TEST(Cudnn, FindAndGetOnDevice) {
  if (!cuda_info().available) GTEST_SKIP() << "no CUDA device: " << cuda_info().reason;
  const ConvProblem p = parse_problem("g2mb4ic16ih13oc32kh3ph1");
  for (Direction d : kAllDirections) {
    const auto found = cudnn_find(p, d);
    const auto got = cudnn_get(p, d);
    ASSERT_FALSE(found.empty()) << to_string(d);
    ASSERT_FALSE(got.empty()) << to_string(d);
    EXPECT_GE(found.front().time_ms, 0) << found.front().algo << " " << found.front().status;
    for (const auto& f : found) EXPECT_EQ(f.algo.rfind("cudnn.", 0), 0u) << f.algo;
  }
}

TEST(Cudnn, SweepOnDevice) {
  if (!cuda_info().available) GTEST_SKIP() << "no CUDA device: " << cuda_info().reason;
  for (const char* n : kNames) testing::ConvTester(n).sweep(testing::edge_sweep()).run();
}

#else

TEST(Cudnn, BuiltWithoutCuda) { GTEST_SKIP() << "built with CONVLAB_CUDA=OFF: cuDNN is not compiled"; }

#endif

}  // namespace
}  // namespace convlab
