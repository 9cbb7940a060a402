// find: ranking, the planted wrong / broken algorithms it must reject, the
// workspace limit, determinism, and that the reference is never a candidate.
#include <gtest/gtest.h>

#include <memory>

#include "algorithms/registry.hpp"
#include "autotune/find.hpp"
#include "core/error.hpp"
#include "core/problem.hpp"
#include "tests/autotune/planted.hpp"
#include "tests/support/memory_limit.hpp"

namespace convlab {
namespace {

using testing::Planted;

const ConvProblem kSmall = parse_problem("mb2ic4ih8oc4oh8kh3ph1");

// One thread: on a shared 2-core machine an OpenMP barrier alone can cost
// milliseconds; the planted delays below must dominate the timings.
ExecContext one_thread() {
  ExecContext c;
  c.threads = 1;
  return c;
}

FindOptions quick() {
  FindOptions o;
  o.max_seconds = 0.05;
  o.max_reps = 7;
  return o;
}

const AlgoPerf& entry(const std::vector<AlgoPerf>& l, const std::string& name) {
  for (const auto& r : l)
    if (r.algo == name) return r;
  throw std::runtime_error("no entry " + name);
}

TEST(Find, RanksByTimeAndRejectsEveryBrokenCandidate) {
  Planted fast("test.fast"), slow("test.slow"), wrong("test.fast_but_wrong"), thrower("test.thrower"),
      overrun("test.overrun"), liar("test.claims_deterministic"), unsupported("test.unsupported");
  fast.delay_ms = 2;
  slow.delay_ms = 15;
  wrong.perturb = 0.05f;  // fastest of all, and wrong
  thrower.throws = true;
  overrun.overrun = true;
  liar.drift = true;
  unsupported.support_reason = "needs a 5x5 filter";
  std::vector<const Algorithm*> cands = {&slow, &wrong, &get_algorithm("cpu.reference"), &thrower, &fast,
                                         &overrun, &liar, &unsupported};
  const auto ranked = find(kSmall, Direction::fwd, one_thread(), quick(), cands);

  ASSERT_EQ(ranked.size(), 7u) << "the reference must not be a candidate";
  for (const auto& r : ranked) EXPECT_NE(r.algo, "cpu.reference");
  EXPECT_EQ(ranked[0].algo, "test.fast");
  EXPECT_EQ(ranked[0].status, PerfStatus::ok);
  EXPECT_EQ(ranked[1].algo, "test.slow");
  EXPECT_LT(ranked[0].time, ranked[1].time);
  EXPECT_GE(ranked[0].reps, 3);
  EXPECT_LE(ranked[0].max_rel_error, 1e-6);
  EXPECT_LE(ranked[0].err_ratio, 1.0);
  for (size_t i = 2; i < ranked.size(); ++i) EXPECT_NE(ranked[i].status, PerfStatus::ok) << ranked[i].algo;

  EXPECT_EQ(entry(ranked, "test.fast_but_wrong").status, PerfStatus::inaccurate);
  EXPECT_GT(entry(ranked, "test.fast_but_wrong").err_ratio, 1.0);
  EXPECT_EQ(entry(ranked, "test.thrower").status, PerfStatus::failed);
  EXPECT_NE(entry(ranked, "test.thrower").note.find("planted failure"), std::string::npos);
  EXPECT_EQ(entry(ranked, "test.overrun").status, PerfStatus::failed);
  EXPECT_NE(entry(ranked, "test.overrun").note.find("workspace"), std::string::npos);
  EXPECT_EQ(entry(ranked, "test.claims_deterministic").status, PerfStatus::failed);
  EXPECT_EQ(entry(ranked, "test.unsupported").status, PerfStatus::unsupported);
  EXPECT_EQ(entry(ranked, "test.unsupported").note, "needs a 5x5 filter");
  EXPECT_EQ(unsupported.runs.load(), 0);
  // A wrong answer is never timed, never selected.
  EXPECT_TRUE(std::isnan(entry(ranked, "test.fast_but_wrong").time));
  const AlgoPerf* pick = select(ranked, {});
  ASSERT_NE(pick, nullptr);
  EXPECT_EQ(pick->algo, "test.fast");
}

// A sticky device fault is nobody's verdict but the device's: find stops at it
// with one line (naming the candidate, the problem and what was not run)
// instead of marking every later candidate failed. A plain Error before it
// still marks only its own candidate.
TEST(Find, DeviceFaultStopsFindWithOneLine) {
  Planted thrower("test.thrower"), faulty("test.faulty"), after("test.after_the_fault");
  thrower.throws = true;
  faulty.device_fault = true;
  try {
    (void)find(kSmall, Direction::fwd, one_thread(), quick(), {&thrower, &faulty, &after});
    ADD_FAILURE() << "find went on after a DeviceFault";
  } catch (const DeviceFault& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("test.faulty"), std::string::npos) << m;
    EXPECT_NE(m.find("planted sticky fault"), std::string::npos) << m;
    EXPECT_NE(m.find(kSmall.key()), std::string::npos) << m;
    EXPECT_NE(m.find("1 candidate not run"), std::string::npos) << m;
    EXPECT_EQ(m.find('\n'), std::string::npos) << "one line: " << m;
    EXPECT_EQ(m.find("planted sticky fault"), m.rfind("planted sticky fault")) << "the fault is reported once: " << m;
  }
  EXPECT_GE(thrower.runs.load(), 1) << "a plain Error before the fault is that candidate's failure, find went on";
  EXPECT_EQ(faulty.runs.load(), 1) << "the faulting candidate is not retried";
  EXPECT_EQ(after.runs.load(), 0) << "nothing runs after the fault";
}

TEST(Find, WrongEverywhereMeansNoChoice) {
  Planted wrong("test.wrong");
  wrong.perturb = 1.0f;
  for (Direction d : kAllDirections) {
    const auto ranked = find(kSmall, d, one_thread(), quick(), {&wrong});
    ASSERT_EQ(ranked.size(), 1u);
    EXPECT_EQ(ranked[0].status, PerfStatus::inaccurate) << to_string(d);
    EXPECT_EQ(select(ranked, {}), nullptr);
  }
}

TEST(Find, WorkspaceLimitSkipsWithoutRunning) {
  Planted small("test.small_ws"), big("test.big_ws");
  big.extra_workspace = 1 << 20;
  big.delay_ms = 0;
  small.delay_ms = 10;  // slower, but the only one that fits
  FindOptions o = quick();
  o.workspace_limit = small.workspace_bytes(kSmall, Direction::bwd_data) + 1024;
  const auto ranked = find(kSmall, Direction::bwd_data, one_thread(), o, {&big, &small});
  EXPECT_EQ(ranked[0].algo, "test.small_ws");
  EXPECT_EQ(entry(ranked, "test.big_ws").status, PerfStatus::over_workspace);
  EXPECT_EQ(entry(ranked, "test.big_ws").workspace, big.workspace_bytes(kSmall, Direction::bwd_data));
  EXPECT_EQ(big.runs.load(), 0);
  // Without the limit the big one wins.
  const auto unlimited = find(kSmall, Direction::bwd_data, one_thread(), quick(), {&big, &small});
  EXPECT_EQ(unlimited[0].algo, "test.big_ws") << unlimited[0].time << " vs " << unlimited[1].time;
}

TEST(Find, HonestNondeterminismIsOkButFilteredOnRequest) {
  Planted nondet("test.atomic_like"), det("test.det");
  nondet.drift = true;
  nondet.claims_deterministic = false;
  det.delay_ms = 10;  // slower
  const auto ranked = find(kSmall, Direction::bwd_filter, one_thread(), quick(), {&det, &nondet});
  ASSERT_EQ(ranked.size(), 2u);
  EXPECT_EQ(ranked[0].algo, "test.atomic_like");
  EXPECT_EQ(ranked[0].status, PerfStatus::ok);
  EXPECT_FALSE(ranked[0].deterministic);
  Constraints c;
  EXPECT_EQ(select(ranked, c)->algo, "test.atomic_like");
  c.deterministic = true;
  EXPECT_EQ(select(ranked, c)->algo, "test.det");
}

TEST(Find, AccuracyBudgetUsesMeasuredError) {
  Planted exact("test.exact"), rough("test.rough");
  exact.delay_ms = 10;
  rough.perturb = 2e-6f;  // inside K*eps-style bounds for values ~1, but a measurable relative error
  const auto ranked = find(kSmall, Direction::fwd, one_thread(), quick(), {&exact, &rough});
  const AlgoPerf& r = entry(ranked, "test.rough");
  ASSERT_EQ(r.status, PerfStatus::ok) << r.note;
  EXPECT_GT(r.max_rel_error, 1e-7);
  Constraints c;
  EXPECT_EQ(select(ranked, c)->algo, "test.rough");
  c.max_error = 1e-7;
  EXPECT_EQ(select(ranked, c)->algo, "test.exact");
}

// find counts what it will hold (the check slice and its fp64 reference, a candidate's buffers and
// output copies, the full-size buffers and inputs it times) and refuses before allocating any of
// it when that is over 80 % of the available memory: one OutOfMemory line naming the problem and
// the sizes. The limit keeps a broken check from allocating past 64 MiB.
TEST(Find, RefusesWhatDoesNotFitBeforeAllocating) {
  const ConvProblem big = parse_problem("mb1ic1ih4096iw4096oc8kh1");  // dst alone is 512 MiB
  Planted fast("test.fast");
  const std::vector<const Algorithm*> cands = {&fast};
  const MemoryNeed need = find_memory(big, Direction::fwd, one_thread(), quick(), cands);
  // The check slice is the whole problem here (mb1): its tensors, the reference (16 bytes per dst
  // element), then timing: the runner's buffers and a second set of inputs.
  EXPECT_GE(need.host, data_bytes(big) + reference_bytes(big, Direction::fwd) + 2 * data_bytes(big));
  EXPECT_EQ(need.device, 0u);
  testing::ScopedAddressSpaceLimit limit(size_t(64) << 20);
  ASSERT_TRUE(limit.ok());
  try {
    (void)find(big, Direction::fwd, one_thread(), quick(), cands);
    ADD_FAILURE() << "find ran a problem of " << need.host << " bytes under a 64 MiB limit";
  } catch (const OutOfMemory& e) {
    const std::string m = e.what();
    EXPECT_EQ(m.rfind("find on mb1ic1ih4096oc8oh4096kh1 fwd needs ", 0), 0u) << m;
    EXPECT_NE(m.find("ulimit -v"), std::string::npos) << m;
    EXPECT_EQ(m.find('\n'), std::string::npos) << m;
  }
  EXPECT_EQ(fast.runs.load(), 0);
}

TEST(Find, RegistryCandidatesExcludeTheReference) {
  for (const Algorithm* a : find_candidates(DeviceKind::cpu)) EXPECT_NE(a->family(), "reference");
  const auto ranked = find(kSmall, Direction::fwd, one_thread(), quick());
  for (const auto& r : ranked) EXPECT_NE(r.algo, "cpu.reference");
}

// One disturbed rep must not prune: a candidate whose warm-up and first timed
// rep are both 100x slower than it really is (another process had the core),
// behind a faster candidate, is timed in full and ranked by its median.
TEST(Find, OneOutlierRepDoesNotPrune) {
  Planted fast("test.fast"), noisy("test.noisy_first_rep");
  fast.delay_ms = 2;
  noisy.delay_ms = 3;
  noisy.outlier_first = 3;  // the warm-up ...
  noisy.outlier_last = 4;   // ... and the first timed rep
  noisy.outlier_ms = 300;
  const auto ranked = find(kSmall, Direction::fwd, one_thread(), quick(), {&fast, &noisy});
  const AlgoPerf& r = entry(ranked, "test.noisy_first_rep");
  EXPECT_EQ(r.status, PerfStatus::ok);
  EXPECT_GE(r.reps, 3) << r.note;
  EXPECT_EQ(r.note.find("pruned"), std::string::npos) << r.note;
  EXPECT_LT(r.time, 0.1) << "the median of its reps, not the outlier";
  EXPECT_LE(r.lo, r.time);
  EXPECT_GE(r.hi, r.time);
  EXPECT_GE(noisy.runs.load(), 2 + 1 + 3);  // check (2), warm-up, at least 3 timed reps
}

// A candidate slower than the cutoff in every rep is pruned -- after 3 timed reps, not 1.
TEST(Find, ConsistentlySlowCandidateIsPrunedAfterThreeReps) {
  Planted fast("test.fast"), slow("test.slow");
  fast.delay_ms = 2;
  slow.delay_ms = 100;  // 50x: beyond the 3x cutoff in every rep, even on a busy machine
  FindOptions o = quick();
  o.max_seconds = 5;  // without pruning it would keep timing
  const auto ranked = find(kSmall, Direction::fwd, one_thread(), o, {&fast, &slow});
  const AlgoPerf& r = entry(ranked, "test.slow");
  EXPECT_EQ(r.status, PerfStatus::ok);
  EXPECT_EQ(r.reps, 3) << r.note;
  EXPECT_NE(r.note.find("pruned after 3 timed reps"), std::string::npos) << r.note;
  EXPECT_EQ(ranked[0].algo, "test.fast");
  // A cutoff from a best time known before find starts (cached results) prunes the same way.
  FindOptions known = o;
  known.best_so_far = 0.002;
  const auto alone = find(kSmall, Direction::fwd, one_thread(), known, {&slow});
  EXPECT_EQ(entry(alone, "test.slow").reps, 3) << entry(alone, "test.slow").note;
}

// Every result says what produced it: its algorithm's code and library versions.
TEST(Find, ResultsCarryTheirAlgorithmVersion) {
  const Algorithm& direct = get_algorithm("cpu.direct");
  const auto ranked = find(kSmall, Direction::fwd, one_thread(), quick(), {&direct});
  ASSERT_EQ(ranked.size(), 1u);
  EXPECT_EQ(ranked[0].code.rfind("cpu/direct ", 0), 0u) << ranked[0].code;
  EXPECT_TRUE(std::isfinite(ranked[0].lo) && std::isfinite(ranked[0].hi));
}

}  // namespace
}  // namespace convlab
