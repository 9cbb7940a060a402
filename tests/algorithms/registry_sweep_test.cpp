// Every algorithm in the registry, every direction, over the standard sweep:
// adding an algorithm to algorithms/registry.cpp adds it here.
#include <gtest/gtest.h>

#include <set>

#include "algorithms/registry.hpp"
#include "convlab/testing.hpp"

namespace convlab {
namespace {

std::vector<std::string> names() {
  std::vector<std::string> v;
  for (const Algorithm* a : registry()) v.emplace_back(a->name());
  return v;
}

class RegistrySweep : public ::testing::TestWithParam<std::string> {};

TEST_P(RegistrySweep, MatchesReference) {
  testing::ConvTester(GetParam()).check_determinism(find_algorithm(GetParam())->deterministic()).run();
}

std::string test_name(const ::testing::TestParamInfo<std::string>& info) {
  std::string s = info.param;
  for (char& c : s)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return s;
}

INSTANTIATE_TEST_SUITE_P(All, RegistrySweep, ::testing::ValuesIn(names()), test_name);

// <provider>.<family>[_variant][_library] (docs/algorithms.md): the provider is
// the device for convlab's own compositions, the library for a vendor's own
// convolution.
TEST(Registry, NamesAreUniqueDottedAndPrefixedByProvider) {
  std::set<std::string> seen;
  for (const Algorithm* a : registry()) {
    const std::string n(a->name());
    EXPECT_TRUE(seen.insert(n).second) << "duplicate " << n;
    const auto dot = n.find('.');
    ASSERT_NE(dot, std::string::npos) << n;
    const std::string prefix = n.substr(0, dot);
    if (a->device() == DeviceKind::cpu) {
      EXPECT_TRUE(prefix == "cpu" || prefix == "onednn") << n;
    } else {
      EXPECT_TRUE(prefix == "cuda" || prefix == "cudnn") << n;
    }
    EXPECT_EQ(a->vendor_peer(), prefix == "onednn" || prefix == "cudnn") << n;
    EXPECT_FALSE(a->description().empty()) << n;
  }
  EXPECT_NE(find_algorithm("cpu.reference"), nullptr);
  EXPECT_EQ(find_algorithm("cpu.nope"), nullptr);
  EXPECT_EQ(registry().back()->name(), "cpu.reference") << "the reference comes last";
}

// Names an older convlab gave still find the algorithm (caches, policies, --algo).
TEST(Registry, OlderNamesFindTheAlgorithmTheyNowName) {
  for (const auto& [old_name, now] : {std::pair<const char*, const char*>{"cpu.onednn_direct", "onednn.direct"},
                                      {"cpu.onednn_winograd", "onednn.winograd"},
                                      {"cpu.onednn_auto", "onednn.auto"},
                                      {"cuda.fft", "cuda.fft_cufft"}}) {
    EXPECT_EQ(canonical_algorithm_name(old_name), now);
    EXPECT_EQ(find_algorithm(old_name), find_algorithm(now)) << old_name;
  }
  EXPECT_EQ(canonical_algorithm_name("cpu.direct"), "cpu.direct");
  EXPECT_EQ(canonical_algorithm_name("cuda.fft_tiled"), "cuda.fft_tiled");
  EXPECT_EQ(get_algorithm("cpu.onednn_auto").name(), "onednn.auto");
}

TEST(Registry, UnsupportedAlwaysHasAReason) {
  for (const Algorithm* a : registry())
    for (const auto& tp : testing::standard_sweep())
      for (Direction d : kAllDirections) {
        const Support s = a->supports(tp.problem, d);
        if (!s) {
          EXPECT_FALSE(s.reason.empty()) << a->name() << " " << tp.label;
        }
      }
}

// 1-D and asymmetric padding (the sweep above checks every claim against the
// reference): the algorithms that index the input per output position support
// all of it; cuDNN's descriptor pads both sides alike and says so; every other
// refusal has a reason.
TEST(Registry, AsymmetricPaddingAnd1dAreRunOrRefusedWithReason) {
  int refused_for_symmetry = 0;
  for (const Algorithm* a : registry()) {
    const std::string n(a->name());
    const bool vendor_gpu = n.rfind("cudnn.", 0) == 0;
    const std::string fam(a->family());
    const bool indexed = !vendor_gpu && a->unavailable_reason().empty() &&
                         (fam == "reference" || fam == "gemm" || fam == "direct" || fam == "implicit_gemm");
    for (const auto& tp : testing::asym_1d_sweep())
      for (Direction d : kAllDirections) {
        const Support s = a->supports(tp.problem, d);
        if (!s) {
          EXPECT_FALSE(s.reason.empty()) << n << " " << tp.label;
        }
        if (indexed) {  // a depthwise-only kernel: the problem's depthwise form (groups = K = C)
          ConvProblem dw = tp.problem;
          dw.k = dw.groups = dw.c;
          const Support sd = s ? s : a->supports(dw, d);
          EXPECT_TRUE(sd.ok) << n << " " << tp.label << " " << to_string(d) << ": " << s.reason << " / " << sd.reason;
        }
        if (vendor_gpu && !tp.problem.symmetric_padding()) {
          EXPECT_FALSE(s.ok) << n << " " << tp.label;
          EXPECT_TRUE(s.reason.find("needs symmetric padding") != std::string::npos ||
                      s.reason.find("cuDNN has no") != std::string::npos)
              << n << " " << tp.label << ": " << s.reason;
          refused_for_symmetry += s.reason.find("needs symmetric padding") != std::string::npos;
        }
      }
  }
#if CONVLAB_HAS_CUDA
  EXPECT_GT(refused_for_symmetry, 0);
#endif
}

}  // namespace
}  // namespace convlab
