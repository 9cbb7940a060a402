// How a comparison is laid out before it runs (train/plan.hpp): the round order
// (a Williams Latin square: balanced positions and balanced predecessors) and
// the memory plan's one-line refusal.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "autotune/policy.hpp"
#include "core/error.hpp"
#include "net/net.hpp"
#include "tests/support/memory_limit.hpp"
#include "train/plan.hpp"
#include "train/trainer.hpp"

namespace convlab::train {
namespace {

// Over R consecutive rounds (R = P even, 2P odd) every policy runs in every
// position equally often and directly after every other policy equally often.
TEST(RoundOrder, BalancedPositionsAndPredecessors) {
  for (int P = 1; P <= 9; ++P) {
    const int R = P % 2 ? 2 * P : P;
    std::vector<std::vector<int>> position(size_t(P), std::vector<int>(size_t(P), 0));
    std::vector<std::vector<int>> after(size_t(P), std::vector<int>(size_t(P), 0));
    for (int start : {0, 7 * R}) {  // any window of R rounds that starts a cycle
      for (auto& v : position) std::fill(v.begin(), v.end(), 0);
      for (auto& v : after) std::fill(v.begin(), v.end(), 0);
      for (int r = start; r < start + R; ++r) {
        const std::vector<int> o = round_order(P, r);
        ASSERT_EQ(o.size(), size_t(P));
        EXPECT_EQ(std::set<int>(o.begin(), o.end()).size(), size_t(P)) << "round " << r << " is not a permutation";
        for (int k = 0; k < P; ++k) {
          ++position[size_t(o[size_t(k)])][size_t(k)];
          if (k) ++after[size_t(o[size_t(k)])][size_t(o[size_t(k - 1)])];
        }
      }
      const int per_position = R / P;               // 1 (even P) or 2 (odd P)
      const int per_pair = P > 1 ? R * (P - 1) / (P * (P - 1)) : 0;
      for (int a = 0; a < P; ++a)
        for (int b = 0; b < P; ++b) {
          EXPECT_EQ(position[size_t(a)][size_t(b)], per_position) << "P " << P << " policy " << a << " position " << b;
          if (a != b) {
            EXPECT_EQ(after[size_t(a)][size_t(b)], per_pair) << "P " << P << ": " << a << " after " << b;
          }
        }
    }
  }
  // The rounds cycle with period R, and round 0 of two policies is the given order.
  EXPECT_EQ(round_order(4, 1), round_order(4, 5));
  EXPECT_EQ(round_order(3, 0), round_order(3, 6));
  EXPECT_EQ(round_order(2, 0), (std::vector<int>{0, 1}));
  EXPECT_EQ(round_order(2, 1), (std::vector<int>{1, 0}));
  EXPECT_THROW(round_order(0, 0), Error);
  EXPECT_THROW(round_order(3, -1), Error);
}

TEST(MemoryPlan, SumsOneNetPerRunnablePolicyAndChecksTheAvailableMemory) {
  NetOptions o;
  o.batch = 4;
  o.ctx.threads = 1;
  const Net probe = build_network("tiny", o);
  const std::vector<Policy> policies = {Policy::parse("default"), Policy::parse("fixed:cpu.direct"),
                                        Policy::parse("find")};
  const MemoryPlan m = plan_memory(probe, policies, {true, false, true}, read_available_memory(DeviceKind::cpu), 1000);
  ASSERT_EQ(m.per_net.size(), 3u);
  EXPECT_GT(m.per_net[0], 0u);
  EXPECT_EQ(m.per_net[1], 0u);  // not runnable: no net
  EXPECT_GE(m.per_net[2], m.per_net[0] - probe.memory().workspace);  // find may need any candidate's workspace
  EXPECT_EQ(m.data, 1000u);
  EXPECT_GT(m.find_host, 0u);  // find runs: what it holds at once on the largest layer counts too
  EXPECT_EQ(m.host_total, m.per_net[0] + m.per_net[2] + m.data + m.find_host);
  EXPECT_TRUE(m.refusal.empty()) << m.refusal;  // a few MiB fit on any machine that runs this test
  EXPECT_GT(m.host_available, 0u) << "no MemAvailable or cgroup figure could be read";
  // Without a measuring policy find holds nothing.
  EXPECT_EQ(plan_memory(probe, {Policy::parse("default")}, {true}, read_available_memory(DeviceKind::cpu)).find_host, 0u);
}

// The plan compares with what was available before the probe was allocated, as given, and adds
// nothing for the probe: an allocated but untouched net is still in MemAvailable (counting it
// again was the double count that accepted runs the kernel then killed). Refused just above 80 %.
TEST(MemoryPlan, ComparesWithTheMemoryReadBeforeTheProbeAtEightyPercent) {
  NetOptions o;
  o.batch = 4;
  o.ctx.threads = 1;
  const Net probe = build_network("tiny", o);
  const std::vector<Policy> one = {Policy::parse("default")};
  const size_t need = plan_memory(probe, one, {true}, AvailableMemory{}).host_total;
  ASSERT_GT(need, 0u);
  AvailableMemory a;
  a.host_source = "test figure";
  a.host = size_t(double(need) / 0.8) + 16;  // need is just under 80 %
  MemoryPlan m = plan_memory(probe, one, {true}, a);
  EXPECT_EQ(m.host_available, a.host);
  EXPECT_TRUE(m.refusal.empty()) << m.refusal;
  a.host = size_t(double(need) / 0.8) - 16;  // just over
  m = plan_memory(probe, one, {true}, a);
  EXPECT_EQ(m.host_available, a.host) << "the probe's own bytes were added to the available memory";
  EXPECT_NE(m.refusal.find("1 network (one per policy) of tiny at batch 4 needs "), std::string::npos) << m.refusal;
  EXPECT_NE(m.refusal.find("(test figure; runs over 80 % of it are refused)"), std::string::npos) << m.refusal;
}

// Under an address-space limit (`ulimit -v`) the nets a run would build are refused by the plan,
// naming their sizes, before any of them but the probe is allocated: here 4 AlexNets at batch 32
// (about 1 GiB each) with 2 GiB of room. The limit also keeps a broken plan from allocating more.
TEST(MemoryPlan, TheAddressSpaceLimitIsPartOfTheAvailableMemory) {
  TrainConfig cfg;
  cfg.net = "alexnet";
  cfg.policies = {"default", "fixed:cpu.direct", "fixed:cpu.im2col_gemm", "get"};
  cfg.batch = 32;
  cfg.threads = 1;
  std::string why;
  {
    testing::ScopedAddressSpaceLimit limit(size_t(2) << 30);
    ASSERT_TRUE(limit.ok());
    why = why_nets_do_not_fit(cfg);
  }
  EXPECT_NE(why.find("4 networks (one per policy) of alexnet at batch 32, the batches ("), std::string::npos) << why;
  EXPECT_NE(why.find("ulimit -v"), std::string::npos) << why;
  EXPECT_EQ(why.find('\n'), std::string::npos) << why;
}

// A net that cannot even be allocated says which net, which buffer and how big.
TEST(MemoryPlan, AProbeThatCannotBeAllocatedNamesTheNetAndTheBuffer) {
  TrainConfig cfg;
  cfg.net = "alexnet";
  cfg.policies = {"default"};
  cfg.batch = 64;
  cfg.threads = 1;
  testing::ScopedAddressSpaceLimit limit(size_t(128) << 20);  // AlexNet's parameters alone are 700 MiB
  ASSERT_TRUE(limit.ok());
  try {
    (void)why_nets_do_not_fit(cfg);
    ADD_FAILURE() << "AlexNet allocated in 128 MiB";
  } catch (const OutOfMemory& e) {
    const std::string m = e.what();
    EXPECT_EQ(m.rfind("alexnet at batch 64: ", 0), 0u) << m;
    EXPECT_NE(m.find(": cannot allocate "), std::string::npos) << m;
    EXPECT_NE(m.find(" bytes) of host memory"), std::string::npos) << m;
  }
}

// A run that would not fit is refused with one line (the trainer throws it
// before building any net but the probe): 400 policies' AlexNets at batch 32,
// about 1 GiB each, exceed any machine this runs on; two fit.
TEST(MemoryPlan, RefusesWhatDoesNotFitInOneLine) {
  TrainConfig cfg;
  cfg.net = "alexnet";
  cfg.policies = {"default", "fixed:cpu.direct"};
  cfg.batch = 32;
  const std::string fits = why_nets_do_not_fit(cfg);
  EXPECT_TRUE(fits.empty()) << fits;
  NetOptions o;
  o.batch = 32;
  o.ctx.threads = 1;
  const Net probe = build_network("alexnet", o);
  std::vector<Policy> many;
  for (int i = 0; i < 400; ++i) many.push_back(Policy::parse("default"));  // 400 nets x ~1 GiB
  const MemoryPlan m =
      plan_memory(probe, many, std::vector<bool>(many.size(), true), read_available_memory(DeviceKind::cpu));
  ASSERT_FALSE(m.refusal.empty()) << "400 AlexNets at batch 32 fit in " << m.host_available << " bytes?";
  EXPECT_EQ(m.refusal.find('\n'), std::string::npos) << m.refusal;
  EXPECT_NE(m.refusal.find("400 networks"), std::string::npos) << m.refusal;
  EXPECT_NE(m.refusal.find("run fewer policies or a smaller batch"), std::string::npos) << m.refusal;
}

}  // namespace
}  // namespace convlab::train
