// find in context (train/context_find.hpp) on the tiny network: every (layer,
// direction) gets a measured winner among find's near-best candidates, the net
// runs those winners afterwards, and the rankings carry their times.
#include <gtest/gtest.h>

#include "autotune/policy.hpp"
#include "net/data.hpp"
#include "net/net.hpp"
#include "train/context_find.hpp"
#include "train/trainer.hpp"

namespace convlab::train {
namespace {

TEST(ContextFind, EveryPairHasAnInContextWinnerAndTheNetRunsIt) {
  NetOptions o;
  o.batch = 4;
  o.classes = 4;
  o.ctx.threads = 2;
  Net net = build_network("tiny", o);
  const Policy policy = Policy::parse("find-context");
  net.choose(policy);
  net.init(1);
  auto data = make_synthetic("pattern", net.input_shape(), 4, 1);
  std::vector<Batch> batches(2);
  for (int i = 0; i < 2; ++i) data->batch(i, batches[size_t(i)]);
  ContextFindOptions opt;
  opt.factor = 100;  // every admitted candidate: the tiny net's times are all close
  opt.steps = 2;
  const int allocations = net.workspace_allocations();
  const ContextFindResult r = find_in_context(net, policy, batches, SgdOptions{}, opt);
  // One workspace for every candidate: reserved once and given back once, never reallocated by a swap
  // (a fresh buffer's first-touch page faults would land in the next step's timed layer).
  EXPECT_LE(net.workspace_allocations() - allocations, 2);

  // conv1 fwd and bwd-filter, conv2's three directions (conv1's input gradient is skipped).
  ASSERT_EQ(r.pairs.size(), 5u);
  EXPECT_GT(r.steps, 0);
  EXPECT_GT(r.seconds, 0);
  for (const ContextPair& p : r.pairs) {
    SCOPED_TRACE(p.layer + " " + std::string(to_string(p.dir)));
    ASSERT_FALSE(p.isolated.empty());
    ASSERT_FALSE(p.in_context.empty());
    // Sorted by in-context median, every candidate timed inside the steps.
    for (size_t i = 0; i < p.in_context.size(); ++i) {
      EXPECT_GT(p.in_context[i].context_s, 0) << p.in_context[i].algo;
      EXPECT_EQ(p.in_context[i].samples.size(), size_t(opt.steps)) << p.in_context[i].algo;
      if (i) {
        EXPECT_LE(p.in_context[i - 1].context_s, p.in_context[i].context_s);
      }
    }
    // Different only when the paired interval separates; a swapped order inside it is a tie.
    const bool same = p.in_context.front().algo == p.isolated.front().algo;
    EXPECT_EQ(p.agree, same || p.cost_ratio_ci.lo <= 1);
    EXPECT_EQ(p.tie, !same && p.agree);
    EXPECT_GE(p.cost_ratio, 1.0 - 1e-12);  // the winner is the fastest in context
    // The net now runs the in-context winner of this pair, or the isolated winner when they agree.
    const ConvLayer* layer = nullptr;
    for (const ConvLayer* c : net.conv_layers())
      if (c->name() == p.layer) layer = c;
    ASSERT_NE(layer, nullptr);
    EXPECT_EQ(std::string(layer->choice(p.dir).algo->name()),
              p.agree ? p.isolated.front().algo : p.in_context.front().algo);
  }
  // Every timed step is a candidate's second in a row (its first after a swap is untimed): one untimed round,
  // then two steps per candidate and round; the single-candidate pairs share steps+1 common steps.
  int expected = 0;
  bool single = false;
  for (const ContextPair& p : r.pairs) {
    if (p.isolated.size() > 1) expected += int(p.isolated.size()) * (2 * opt.steps + 1);
    else single = true;
  }
  if (single) expected += opt.steps + 1;
  EXPECT_EQ(r.steps, expected);
  // With factor 100 and a multi-candidate pair, more than one candidate was timed somewhere.
  size_t most = 0;
  for (const ContextPair& p : r.pairs) most = std::max(most, p.in_context.size());
  EXPECT_GT(most, 1u);
}

ContextPair pair_of(std::vector<double> iso, std::vector<double> other) {
  ContextPair p;
  p.layer = "conv2";
  p.isolated.push_back({"a", 1e-3, 0, {0, 0}, std::move(iso)});
  p.isolated.push_back({"b", 1.01e-3, 0, {0, 0}, std::move(other)});
  settle_pair(p);
  return p;
}

// A 1 % gap inside the rounds' spread is a tie, not a different ranking.
TEST(ContextFind, AnOrderSwappedInsideTheNoiseIsATie) {
  const ContextPair p = pair_of({7.46e-3, 7.30e-3, 7.60e-3}, {7.40e-3, 7.50e-3, 7.35e-3});
  EXPECT_EQ(p.in_context.front().algo, "b");  // b's median is the smaller
  EXPECT_TRUE(p.agree);
  EXPECT_TRUE(p.tie);
  EXPECT_LE(p.cost_ratio_ci.lo, 1.0);
}

// Every round slower by 2x: the interval lies above 1, the rankings differ.
TEST(ContextFind, RankingsDifferWhenTheIntervalSeparates) {
  const ContextPair p = pair_of({8.0e-3, 8.2e-3, 8.1e-3}, {4.0e-3, 4.1e-3, 4.05e-3});
  EXPECT_EQ(p.in_context.front().algo, "b");
  EXPECT_FALSE(p.agree);
  EXPECT_FALSE(p.tie);
  EXPECT_GT(p.cost_ratio_ci.lo, 1.0);
  EXPECT_NEAR(p.cost_ratio, 2.0, 0.05);
}

TEST(ContextFind, TheSameWinnerAgrees) {
  const ContextPair p = pair_of({4.0e-3, 4.1e-3, 4.05e-3}, {8.0e-3, 8.2e-3, 8.1e-3});
  EXPECT_TRUE(p.agree);
  EXPECT_FALSE(p.tie);
  EXPECT_EQ(p.cost_ratio_ci.lo, 1.0);
}

}  // namespace
}  // namespace convlab::train
