// The default policies of a training comparison: the four tuning policies, one
// fixed: algorithm per family that runs here, then the baselines the algorithms
// declare (comparison_baseline()), in registry order, each once.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "algorithms/registry.hpp"
#include "train/run_setup.hpp"

namespace convlab::train {
namespace {

TEST(DefaultPolicies, TuningPoliciesOneFixedPerFamilyThenTheBaselines) {
  const std::vector<std::string> p = default_policies(DeviceKind::cpu);
  ASSERT_GE(p.size(), 4u);
  EXPECT_EQ(std::vector<std::string>(p.begin(), p.begin() + 4),
            (std::vector<std::string>{"default", "get", "find", "find-context"}));
  std::set<std::string> families, seen;
  std::vector<std::string> baselines;
  for (size_t i = 4; i < p.size(); ++i) {
    ASSERT_EQ(p[i].rfind("fixed:", 0), 0u) << p[i];
    EXPECT_TRUE(seen.insert(p[i]).second) << p[i] << " listed twice";
    const Algorithm& a = get_algorithm(p[i].substr(6));
    EXPECT_EQ(a.device(), DeviceKind::cpu);
    EXPECT_FALSE(a.is_oracle());
    if (!families.insert(std::string(a.family())).second) {
      EXPECT_TRUE(a.comparison_baseline()) << p[i] << ": a second algorithm of its family that is no baseline";
      baselines.push_back(p[i]);
    }
  }
  // Every CPU baseline is there (whether or not its family was already listed).
  for (const Algorithm* a : registry()) {
    if (a->device() == DeviceKind::cpu && a->comparison_baseline()) {
      EXPECT_TRUE(seen.count("fixed:" + std::string(a->name()))) << a->name();
    }
  }
  // The CPU build declares the classic im2col + BLAS path and oneDNN's own choice.
  EXPECT_TRUE(seen.count("fixed:cpu.im2col_openblas"));
  EXPECT_TRUE(seen.count("fixed:onednn.auto"));
}

}  // namespace
}  // namespace convlab::train
