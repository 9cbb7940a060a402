// The training report says only what its own data holds: a speedup's verdict
// against the equivalence margin, the loss against the expected fp32 drift, the
// in-context find's saving against find-context's own iterations, and the
// user's --expect against the paired interval.
#include <gtest/gtest.h>

#include <cmath>

#include "core/error.hpp"
#include "report/report.hpp"
#include "report/report_sections.hpp"
#include "train/trainer.hpp"

namespace convlab::train {
namespace {

TEST(SpeedupVerdict, TheMarginDecides) {
  // Two identical policies 1 % apart in this run: margin 1.2 %.
  EXPECT_EQ(speedup_verdict({1.002, 1.012}, 0.012), "same");      // was "faster": the interval excludes 1.0
  EXPECT_EQ(speedup_verdict({1.05, 1.10}, 0.012), "faster");
  EXPECT_EQ(speedup_verdict({0.80, 0.85}, 0.012), "slower");
  EXPECT_EQ(speedup_verdict({1.005, 1.05}, 0.012), "not significant");  // straddles the margin's edge
  EXPECT_EQ(speedup_verdict({0.97, 1.03}, 0.0), "not significant");     // no margin measured: excludes-1 rule
  EXPECT_EQ(speedup_verdict({1.01, 1.03}, 0.0), "faster");
}

PolicyResult ran(const std::string& name, std::vector<double> iters, std::vector<double> losses) {
  PolicyResult p;
  p.policy = name;
  p.ran = true;
  p.iter_seconds = std::move(iters);
  p.iter_median = stats::median(p.iter_seconds);
  p.losses = std::move(losses);
  return p;
}

// The losses of two correct policies drift apart ~10x per step; a wrong backward jumps at iteration 1.
TEST(LossDrift, FlagsOnlyWhatLeavesTheExpectedDrift) {
  TrainReport r;
  r.drift.bound0 = 2304 * 1.1920929e-7;  // AlexNet conv3: K = 256 x 3 x 3
  r.drift.growth = 10;
  r.policies.push_back(ran("default", {1}, {6.900000, 7.100000, 7.300000, 7.340000, 7.338000, 8.000000, 8.195000}));
  // Winograd F(2x2): 1e-7 at iteration 0, 1.4e-3 by the last (the run a fixed 1e-3 called "disagrees").
  r.policies.push_back(ran("fixed:cpu.winograd_f2x3", {1},
                           {6.9000007, 7.1000010, 7.300010, 7.340100, 7.339000, 8.003000, 8.206500}));
  // A backward that computes something else: the same forward, 2 % off after the first update.
  r.policies.push_back(ran("fixed:broken", {1}, {6.900000, 7.240000, 7.500000, 7.600000, 7.700000, 8.300000, 8.400000}));
  judge_losses(r);
  EXPECT_TRUE(r.policies[1].loss_agrees);
  EXPECT_NEAR(r.policies[1].loss_rel_diffs.back(), 1.4e-3, 1e-4);
  EXPECT_FALSE(r.policies[2].loss_agrees);
  EXPECT_EQ(r.policies[2].loss_exceeds_at, 1);
  // A forward that differs beyond two summation orders fails at iteration 0.
  r.policies[2].losses[0] = 6.91;
  judge_losses(r);
  EXPECT_EQ(r.policies[2].loss_exceeds_at, 0);
}

// find vs find-context, whose in-context pairs claim a saving of `claim_ms` per iteration.
TrainReport context_run(double claim_ms, std::vector<double> find_s, std::vector<double> fc_s) {
  TrainReport r;
  r.policies.push_back(ran("find", std::move(find_s), {1}));
  PolicyResult fc = ran("find-context", std::move(fc_s), {1});
  fc.has_context = true;
  ContextPair differ;
  differ.layer = "conv1";
  differ.agree = false;
  differ.isolated = {{"cpu.direct", 4e-3, 4e-3 + claim_ms * 1e-3, {0, 0}, {}}, {"cpu.fft", 5e-3, 4e-3, {0, 0}, {}}};
  differ.in_context = {differ.isolated[1], differ.isolated[0]};
  ContextPair tie;
  tie.layer = "conv2";
  tie.agree = true;
  tie.tie = true;
  tie.isolated = {{"cpu.fft", 7.40e-3, 7.46e-3, {0, 0}, {}}, {"cpu.fft_tiled", 7.45e-3, 7.40e-3, {0, 0}, {}}};
  tie.in_context = {tie.isolated[1], tie.isolated[0]};
  fc.context.pairs = {differ, tie};
  r.policies.push_back(std::move(fc));
  return r;
}

TEST(ContextClaim, ASavingTheIterationsDoNotShowIsInconclusive) {
  // The per-layer times claim 15 ms; the iterations are the same within a few ms.
  const TrainReport r = context_run(15, {0.1137, 0.1100, 0.1209, 0.1150, 0.1120}, {0.1151, 0.1129, 0.1188, 0.1140, 0.1135});
  const report_detail::ContextClaim c = report_detail::context_claim(r);
  EXPECT_EQ(c.differ, 1);
  EXPECT_EQ(c.ties, 1);
  EXPECT_NEAR(c.claimed_s, 15e-3, 1e-9);  // the tie adds nothing
  ASSERT_NE(c.find, nullptr);
  EXPECT_FALSE(c.consistent);
  report_detail::Out o;
  report_detail::md_in_context(o, r);
  EXPECT_NE(o.str().find("**Inconclusive:**"), std::string::npos) << o.str();
  EXPECT_EQ(o.str().find("Checked:"), std::string::npos) << o.str();
}

TEST(ContextClaim, ASavingTheIterationsShowIsChecked) {
  const TrainReport r = context_run(15, {0.130, 0.128, 0.133, 0.131, 0.129}, {0.115, 0.114, 0.117, 0.116, 0.113});
  const report_detail::ContextClaim c = report_detail::context_claim(r);
  EXPECT_TRUE(c.consistent) << c.measured_ci.lo << " " << c.measured_ci.hi;
  report_detail::Out o;
  report_detail::md_in_context(o, r);
  EXPECT_NE(o.str().find("Checked:"), std::string::npos) << o.str();
}

TEST(ContextClaim, WithoutFindItIsNotChecked) {
  TrainReport r = context_run(15, {0.13}, {0.115});
  r.policies.erase(r.policies.begin());
  const report_detail::ContextClaim c = report_detail::context_claim(r);
  EXPECT_EQ(c.find, nullptr);
  report_detail::Out o;
  report_detail::md_in_context(o, r);
  EXPECT_NE(o.str().find("Not checked"), std::string::npos) << o.str();
}

TEST(Expect, ParsedAndCheckedAgainstTheInterval) {
  const Expectation e = parse_expectation("default/find>=1.5");
  EXPECT_EQ(e.num, "default");
  EXPECT_EQ(e.den, "find");
  EXPECT_TRUE(e.at_least);
  EXPECT_DOUBLE_EQ(e.bound, 1.5);
  EXPECT_EQ(parse_expectation("get,max-error=1e-3/find<=1.1").num, "get,max-error=1e-3");
  for (const char* bad : {"default/find", "default>=1.5", "/find>=1", "find/find>=1", "default/find>=x", "a/b>=-1"})
    EXPECT_THROW(parse_expectation(bad), Error) << bad;
  const std::vector<double> def = {0.20, 0.21, 0.19, 0.20, 0.205}, fnd = {0.10, 0.11, 0.10, 0.105, 0.10};
  EXPECT_EQ(check_expectation(e, def, fnd).verdict, "met");
  EXPECT_EQ(check_expectation(parse_expectation("default/find>=2.5"), def, fnd).verdict, "missed");
  EXPECT_EQ(check_expectation(parse_expectation("default/find>=1.95"), def, fnd).verdict, "unresolved");
  EXPECT_EQ(check_expectation(e, def, {}).verdict.rfind("not run", 0), 0u);
}

}  // namespace
}  // namespace convlab::train
