// Every algorithm in the registry, every direction, over the standard sweep:
// adding an algorithm to algorithms/registry.cpp adds it here.
#include <gtest/gtest.h>

#include <set>

#include "algorithms/registry.hpp"
#include "tests/support/conv_tester.hpp"

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

TEST(Registry, NamesAreUniqueDottedAndPrefixedByDevice) {
  std::set<std::string> seen;
  for (const Algorithm* a : registry()) {
    const std::string n(a->name());
    EXPECT_TRUE(seen.insert(n).second) << "duplicate " << n;
    const auto dot = n.find('.');
    ASSERT_NE(dot, std::string::npos) << n;
    const std::string prefix = n.substr(0, dot);
    if (a->device() == DeviceKind::cpu) {
      EXPECT_EQ(prefix, "cpu") << n;
    } else {
      EXPECT_TRUE(prefix == "cuda" || prefix == "cudnn") << n;
    }
    EXPECT_FALSE(a->description().empty()) << n;
  }
  EXPECT_NE(find_algorithm("cpu.reference"), nullptr);
  EXPECT_EQ(find_algorithm("cpu.nope"), nullptr);
  EXPECT_EQ(registry().back()->name(), "cpu.reference") << "the reference comes last";
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

}  // namespace
}  // namespace convlab
