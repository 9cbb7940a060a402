// cuDNN entries: present in the registry, honest without a GPU (every path says
// "no CUDA device" and nothing crashes), and checked against the reference when
// a GPU exists (the registry sweep runs them; here cuDNN's own Find/Get).
#include <gtest/gtest.h>

#include "algorithms/execute.hpp"
#include "algorithms/registry.hpp"
#include "core/device.hpp"
#include "core/error.hpp"
#include "core/layers.hpp"
#include "convlab/testing.hpp"
#if CONVLAB_HAS_CUDA
#include <cudnn.h>

#include "algorithms/cudnn/cudnn_conv.hpp"
#include "autotune/find.hpp"
#endif

#include <algorithm>
#include <cmath>
#include <iterator>
#include <set>

namespace convlab {
namespace {

#if CONVLAB_HAS_CUDA

const char* const kNames[] = {"cudnn.implicit_gemm",   "cudnn.implicit_precomp_gemm", "cudnn.gemm",
                              "cudnn.fft",             "cudnn.fft_tiling",            "cudnn.winograd",
                              "cudnn.winograd_nonfused", "cudnn.bwd_data_algo_0",     "cudnn.bwd_data_algo_1",
                              "cudnn.bwd_filter_algo_0", "cudnn.bwd_filter_algo_1",   "cudnn.bwd_filter_algo_3"};
const char* const kTf32Names[] = {"cudnn.implicit_precomp_gemm_tf32", "cudnn.winograd_nonfused_tf32",
                                  "cudnn.bwd_data_algo_1_tf32", "cudnn.bwd_filter_algo_1_tf32"};

TEST(Cudnn, RegistryNamesUniqueAndResolvable) {
  std::set<std::string> seen;
  for (const Algorithm* a : registry()) {
    EXPECT_TRUE(seen.insert(std::string(a->name())).second) << "duplicate " << a->name();
    EXPECT_EQ(find_algorithm(a->name()), a) << a->name();
  }
  EXPECT_EQ(registry().back()->name(), "cpu.reference");
}

TEST(Cudnn, Tf32VariantsRegisteredRightAfterTheFp32Entries) {
  const auto& reg = registry();
  auto pos = [&](std::string_view n) {
    for (size_t i = 0; i < reg.size(); ++i)
      if (reg[i]->name() == n) return i;
    return reg.size();
  };
  size_t last_fp32 = 0;
  for (const char* n : kNames) {
    EXPECT_EQ(get_algorithm(n).math(), "fp32") << n;
    last_fp32 = std::max(last_fp32, pos(n));
  }
  size_t expect = last_fp32 + 1;
  for (const char* n : kTf32Names) {
    const Algorithm& a = get_algorithm(n);
    EXPECT_EQ(pos(n), expect++) << n;
    EXPECT_EQ(a.math(), "tf32") << n;
    EXPECT_EQ(a.device(), DeviceKind::cuda);
    // Same cuDNN algorithm ids as the fp32 entry it is the variant of.
    const std::string base = std::string(n).substr(0, std::string(n).size() - 5);
    const auto& c = static_cast<const CudnnConv&>(a);
    const auto& f = static_cast<const CudnnConv&>(get_algorithm(base));
    for (Direction d : kAllDirections) EXPECT_EQ(c.id(d), f.id(d)) << n << " " << to_string(d);
    EXPECT_EQ(a.family(), f.family());
  }
  EXPECT_EQ(cudnn_tf32_algorithms().size(), std::size(kTf32Names));
}

TEST(Cudnn, Tf32ExcludedFromCandidatesUnlessAsked) {
  auto names = [](const std::vector<const Algorithm*>& v) {
    std::set<std::string> s;
    for (const Algorithm* a : v) s.insert(std::string(a->name()));
    return s;
  };
  const auto plain = names(find_candidates(DeviceKind::cuda));
  const auto asked = names(find_candidates(DeviceKind::cuda, true));
  for (const char* n : kTf32Names) {
    EXPECT_EQ(plain.count(n), 0u) << n;
    EXPECT_EQ(asked.count(n), 1u) << n;
  }
  for (const char* n : kNames) {
    EXPECT_EQ(plain.count(n), 1u) << n;
    EXPECT_EQ(asked.count(n), 1u) << n;
  }
  // A ranked list holding a TF32 entry (a cache written with --tf32): select
  // skips it unless the tf32 constraint is set.
  std::vector<AlgoPerf> ranked(2);
  ranked[0].algo = "cudnn.implicit_precomp_gemm_tf32";
  ranked[0].time = 1e-3;
  ranked[1].algo = "cudnn.implicit_precomp_gemm";
  ranked[1].time = 2e-3;
  ASSERT_NE(select(ranked, Constraints{}), nullptr);
  EXPECT_EQ(select(ranked, Constraints{})->algo, "cudnn.implicit_precomp_gemm");
  Constraints c;
  c.tf32 = true;
  EXPECT_EQ(select(ranked, c)->algo, "cudnn.implicit_precomp_gemm_tf32");
}

TEST(Cudnn, Tf32ToleranceIsTheDerivedBound) {
  const ConvProblem p = network_layer("alexnet.conv2", 4).problem;
  for (Direction d : kAllDirections) {
    const Tolerance fp32 = get_algorithm("cudnn.winograd_nonfused").tolerance(p, d);
    const Tolerance tf32 = get_algorithm("cudnn.winograd_nonfused_tf32").tolerance(p, d);
    EXPECT_GT(tf32.elem, fp32.elem);
    EXPECT_NE(tf32.basis.find("TF32"), std::string::npos) << tf32.basis;
    const double u = std::ldexp(1.0, -10);
    const double k_eps = summation_tolerance(p, d).elem;
    const Tolerance g = get_algorithm(d == Direction::fwd        ? "cudnn.implicit_precomp_gemm_tf32"
                                      : d == Direction::bwd_data ? "cudnn.bwd_data_algo_1_tf32"
                                                                 : "cudnn.bwd_filter_algo_1_tf32")
                            .tolerance(p, d);
    EXPECT_DOUBLE_EQ(g.elem, (2 * u + u * u) + k_eps * (1 + 2 * u + u * u)) << to_string(d);
    EXPECT_DOUBLE_EQ(tf32.elem, 64 * g.elem) << to_string(d);
  }
}

TEST(Cudnn, EveryAlgorithmIsRegistered) {
  for (const char* n : kNames) {
    const Algorithm* a = find_algorithm(n);
    ASSERT_NE(a, nullptr) << n;
    EXPECT_EQ(a->device(), DeviceKind::cuda);
  }
}

// Every cuDNN 9 algorithm id of the three directions (cudnn_ops.h's enums) is
// either named by a registered entry with that id, or deliberately unknown
// with a reason; ids past the enum are unknown too. Needs no device.
TEST(Cudnn, EveryCudnn9IdIsNamedOrDeliberatelyUnknown) {
  struct D { Direction dir; int count; };
  const D dirs[] = {{Direction::fwd, CUDNN_CONVOLUTION_FWD_ALGO_COUNT},
                    {Direction::bwd_data, CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT},
                    {Direction::bwd_filter, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT}};
  EXPECT_EQ(CUDNN_CONVOLUTION_FWD_ALGO_COUNT, 8);
  EXPECT_EQ(CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT, 6);
  EXPECT_EQ(CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT, 7);
  int unknown = 0;
  for (const D& d : dirs) {
    for (int id = 0; id < d.count; ++id) {
      const std::string name = cudnn_algo_name(d.dir, id);
      const std::string why = cudnn_unregistered_reason(d.dir, id);
      if (is_unknown_cudnn_algo(name)) {
        ++unknown;
        EXPECT_EQ(name, "cudnn.unknown_" + std::to_string(id));
        EXPECT_FALSE(why.empty()) << to_string(d.dir) << " id " << id << " is unnamed without a reason";
        EXPECT_EQ(find_algorithm(name), nullptr) << name;
      } else {
        EXPECT_TRUE(why.empty()) << name;
        const Algorithm* a = find_algorithm(name);
        ASSERT_NE(a, nullptr) << name;
        EXPECT_EQ(static_cast<const CudnnConv*>(a)->id(d.dir), id) << name << " " << to_string(d.dir);
        EXPECT_EQ(a->math(), "fp32") << name;
      }
    }
    EXPECT_EQ(cudnn_algo_name(d.dir, d.count), "cudnn.unknown_" + std::to_string(d.count)) << "a future id";
    EXPECT_TRUE(is_unknown_cudnn_algo(cudnn_algo_name(d.dir, 99)));
  }
  EXPECT_EQ(unknown, 2) << "forward DIRECT and backward-filter WINOGRAD only";
  EXPECT_EQ(cudnn_algo_name(Direction::fwd, CUDNN_CONVOLUTION_FWD_ALGO_DIRECT), "cudnn.unknown_3");
  EXPECT_EQ(cudnn_algo_name(Direction::bwd_filter, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_WINOGRAD), "cudnn.unknown_4");
  EXPECT_EQ(cudnn_algo_name(Direction::bwd_filter, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_FFT), "cudnn.fft");
  EXPECT_EQ(cudnn_algo_name(Direction::bwd_filter, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_FFT_TILING), "cudnn.fft_tiling");
  EXPECT_EQ(cudnn_algo_name(Direction::bwd_filter, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_WINOGRAD_NONFUSED),
            "cudnn.winograd_nonfused");
  EXPECT_EQ(cudnn_algo_name(Direction::bwd_data, CUDNN_CONVOLUTION_BWD_DATA_ALGO_WINOGRAD), "cudnn.winograd");
  // Tensor-op math names the _tf32 variant where convlab has one, the fp32 entry otherwise.
  EXPECT_EQ(cudnn_algo_name(Direction::fwd, CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM, true),
            "cudnn.implicit_precomp_gemm_tf32");
  EXPECT_EQ(cudnn_algo_name(Direction::fwd, CUDNN_CONVOLUTION_FWD_ALGO_GEMM, true), "cudnn.gemm");
  EXPECT_EQ(cudnn_algo_name(Direction::bwd_filter, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_WINOGRAD, true),
            "cudnn.unknown_4");
  EXPECT_FALSE(is_unknown_cudnn_algo("cudnn.gemm"));
}

// An entry that can run nothing fails the tester's "ran at least one case":
// no registered cuDNN entry stands for an algorithm cuDNN never implements.
TEST(Cudnn, NoEntryForAnAlgorithmCudnnNeverImplements) {
  EXPECT_EQ(find_algorithm("cudnn.direct"), nullptr);
  std::vector<const Algorithm*> all = cudnn_algorithms();
  for (const Algorithm* a : cudnn_tf32_algorithms()) all.push_back(a);
  for (const Algorithm* a : all) {
    const auto* c = static_cast<const CudnnConv*>(a);
    for (Direction d : kAllDirections) {
      if (c->id(d) >= 0) {
        EXPECT_STREQ(cudnn_unregistered_reason(d, c->id(d)), "") << a->name() << " " << to_string(d);
      }
    }
  }
}

// Never convlab's pick: an unknown id is not a candidate, and a ranked list
// (a cache line) naming one cannot make a policy choose it.
TEST(Cudnn, UnknownIdsAreNeverCandidates) {
  for (const Algorithm* a : find_candidates(DeviceKind::cuda, true)) EXPECT_FALSE(is_unknown_cudnn_algo(a->name()));
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
  std::vector<const char*> all(std::begin(kNames), std::end(kNames));
  all.insert(all.end(), std::begin(kTf32Names), std::end(kTf32Names));
  for (const char* n : all) {
    const Algorithm& a = get_algorithm(n);
    EXPECT_NE(a.unavailable_reason().find("no CUDA device"), std::string::npos) << n << ": " << a.unavailable_reason();
    for (Direction d : kAllDirections) {
      const Support s = a.supports(p, d);
      EXPECT_FALSE(s.ok) << n;
      EXPECT_FALSE(s.reason.empty()) << n;
      if (static_cast<const CudnnConv&>(a).id(d) >= 0) {
        EXPECT_NE(s.reason.find("no CUDA device"), std::string::npos) << n << " " << to_string(d) << ": " << s.reason;
      }
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
  EXPECT_THROW(cudnn_find(p, Direction::fwd, true), Error);
  try {
    cudnn_get(p, Direction::fwd, true);
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no CUDA device"), std::string::npos) << e.what();
  }
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

// cuDNN's own Find and Get_v7 on AlexNet conv2 at batch 4.
TEST(Cudnn, FindAndGetOnAlexnetConv2) {
  if (!cuda_info().available) GTEST_SKIP() << "no CUDA device: " << cuda_info().reason;
  const ConvProblem p = network_layer("alexnet.conv2", 4).problem;
  for (bool tf32 : {false, true}) {
    for (Direction d : kAllDirections) {
      const auto found = cudnn_find(p, d, tf32);
      const auto got = cudnn_get(p, d, tf32);
      ASSERT_FALSE(found.empty()) << to_string(d);
      ASSERT_FALSE(got.empty()) << to_string(d);
      double prev = 0;
      int ok = 0;
      for (const auto& f : found) {
        // Registered, or an id convlab deliberately leaves unnamed (forward DIRECT, bwd-filter WINOGRAD).
        EXPECT_EQ(f.known, !is_unknown_cudnn_algo(f.algo)) << f.algo;
        EXPECT_TRUE(find_algorithm(f.algo) != nullptr || is_unknown_cudnn_algo(f.algo)) << f.algo;
        if (!tf32 && f.known) {
          EXPECT_EQ(get_algorithm(f.algo).math(), "fp32") << f.algo << " math " << f.math;
        }
        if (f.status != "CUDNN_STATUS_SUCCESS") continue;
        ++ok;
        EXPECT_GT(f.time_ms, 0) << f.algo;
        EXPECT_GE(f.time_ms, prev) << f.algo << ": Find's list is sorted by its time";
        prev = f.time_ms;
      }
      EXPECT_GT(ok, 0) << to_string(d);
      for (const auto& g : got) {
        EXPECT_TRUE(find_algorithm(g.algo) != nullptr || is_unknown_cudnn_algo(g.algo)) << g.algo;
        EXPECT_LT(g.time_ms, 0) << "Get_v7 runs nothing";
      }
    }
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
