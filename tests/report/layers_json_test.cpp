// layers.json read back into the Comparison it was written from: write -> read
// -> write gives the same text, and the CSV and Markdown views of what was read
// are the ones of what was written.
#include <gtest/gtest.h>

#include <cmath>

#include "autotune/compare.hpp"
#include "core/json_value.hpp"
#include "core/problem.hpp"
#include "report/layers.hpp"

namespace convlab {
namespace {

Comparison read_back(const std::string& text) {
  std::string err;
  const auto v = json::parse(text, &err);
  EXPECT_TRUE(v.has_value()) << err;
  return v ? comparison_from_json(*v) : Comparison{};
}

void expect_round_trip(const Comparison& c) {
  const std::string written = comparison_json(c);
  const Comparison back = read_back(written);
  EXPECT_EQ(comparison_json(back), written);
  EXPECT_EQ(comparison_csv(back), comparison_csv(c));
  EXPECT_EQ(comparison_markdown(back), comparison_markdown(c));
}

// Where the threads sat, per case and around the run: written, read back, written again the same.
TEST(LayersJson, RoundTripOfPlacements) {
  Comparison c;
  PlacementRow where;
  where.layer = "l, \"1\"";
  where.problem = "mb1ic3ih5oc2kh3";
  where.dir = "fwd";
  where.threads = 2;
  where.find_before_ns = 97.25;
  where.find_after_ns = 0.1 + 0.2;
  c.placements.push_back(where);  // no duel after it: its third round trip null
  where.duel_after_ns = 380.5;
  c.placements.push_back(where);
  c.load.before.round_trip_ns = 101.5;
  c.load.after.round_trip_ns = 390.25;
  expect_round_trip(c);
  const Comparison b = read_back(comparison_json(c));
  ASSERT_EQ(b.placements.size(), 2u);
  EXPECT_TRUE(std::isnan(b.placements[0].duel_after_ns));
  EXPECT_EQ(b.placements[1].duel_after_ns, 380.5);
  EXPECT_EQ(b.placements[0].threads, 2);
  EXPECT_EQ(b.load.after.round_trip_ns, 390.25);
}

// Where the threads sat, in the run's closing lines: one placement, and two kFarRatio apart.
TEST(LayersJson, PlacementText) {
  EXPECT_EQ(placement_text({}), "");
  PlacementRow a;
  a.threads = 2;
  a.find_before_ns = 100, a.find_after_ns = 120, a.duel_after_ns = 110;
  EXPECT_EQ(placement_text({a, a}),
            "threads' placement: a cache line's round trip between them 100-120 ns over 2 cases (one placement throughout)");
  PlacementRow far = a, moved = a;
  far.find_before_ns = 390, far.find_after_ns = 400, far.duel_after_ns = 380;
  moved.duel_after_ns = 395;
  const std::string t = placement_text({a, far, moved});
  EXPECT_NE(t.find("100-400 ns over 3 cases"), std::string::npos) << t;
  EXPECT_NE(t.find("2 case(s) ran at more than 2x the nearest round trip"), std::string::npos) << t;
  EXPECT_NE(t.find("1 moved within their own measurement"), std::string::npos) << t;
  EXPECT_EQ(moved.nearest(), 100);
  EXPECT_EQ(moved.farthest(), 395);
  PlacementRow none;  // one thread: nothing measured, nothing said
  EXPECT_FALSE(none.measured());
  EXPECT_EQ(placement_text({none}), "");
}

// A real run: every candidate checked and timed on one small layer, one direction.
TEST(LayersJson, RoundTripOfARealComparison) {
  CompareOptions opt;
  opt.threads = {1};
  opt.dirs = {Direction::fwd};
  opt.max_seconds = 0.002;
  opt.probe = false;
  Comparison c = compare_layers({{"tiny.conv1", parse_problem("mb2ic4ih7oc6kh3ph1"), {}}}, opt);
  c.network = "tiny";
  c.batch = 2;
  c.run_id = "20260101-000000-1";
  ASSERT_FALSE(c.rows.empty());
  expect_round_trip(c);
  const Comparison back = read_back(comparison_json(c));
  ASSERT_EQ(back.rows.size(), c.rows.size());
  for (size_t i = 0; i < c.rows.size(); ++i) {
    EXPECT_EQ(back.rows[i].algo, c.rows[i].algo);
    EXPECT_TRUE(json::same_number(back.rows[i].gflops(), c.rows[i].gflops())) << c.rows[i].algo;
  }
  // The interleaved timing of the fastest hand-written algorithm against the fastest oneDNN one.
  ASSERT_EQ(c.duels.size(), 1u);
  const DuelRow& d = c.duels[0];
  if (d.rounds == 0) {
    EXPECT_EQ(d.note, "no vendor peer ran");  // a build without oneDNN
  } else {
    EXPECT_GE(d.rounds, 9);
    EXPECT_EQ(d.own.rfind("cpu.", 0), 0u) << d.own;
    EXPECT_NE(d.own, "cpu.reference");
    EXPECT_EQ(d.peer.rfind("onednn.", 0), 0u) << d.peer;
    EXPECT_GT(d.own_ms, 0);
    EXPECT_GT(d.peer_ms, 0);
    EXPECT_NEAR(d.speed, d.peer_ms / d.own_ms, 1e-9 * d.speed);
    EXPECT_LE(d.lo, d.speed);
    EXPECT_GE(d.hi, d.speed);
  }
}

// Every kind of field a file holds: nulls, a vendor row without a choice, the probes, the load.
TEST(LayersJson, RoundTripOfEveryField) {
  Comparison c;
  c.device = DeviceKind::cuda;
  c.fingerprint = "gpu \"H\"\n1";
  c.peaks = {{123.456, 1, "avx2"}, {987.1, 4, "avx512"}};
  c.bandwidth_gbs = 17.25;
  ProbeOutcome p;
  p.source = ProbeOutcome::Source::cache;
  p.seconds = 0.93;
  p.device = "cpu x";
  c.probes = {{4, p}, {1, ProbeOutcome{}}};
  c.load.known = true;
  c.load.disturbed = true;
  c.load.why = "others ran";
  c.load.seconds = 3.5;
  c.load.after.cpus = 8;
  c.load.others_share = 0.25;
  c.load.before.loadavg1 = 1.5;
  c.load.others_runnable_after = 3;
  c.load.before.probe_reps = 5;
  c.load.before.probe_median_s = 0.000512345678;
  c.load.before.probe_spread = 0.03;
  c.load.probe_drift = 1.1;
  for (double t : {1.2345678e-3, 0.1 + 0.2, double(NAN), 7e-5}) {
    ComparisonRow r;
    r.layer = "l, \"1\"";
    r.problem = "mb1ic3ih5oc2kh3";
    r.dir = "bwd-data";
    r.algo = "cpu.a" + std::to_string(c.rows.size());
    r.family = "gemm";
    r.status = std::isfinite(t) ? "ok" : "unsupported";
    r.note = "a\tnote";
    r.threads = 4;
    r.flops = 3.3e9 / 7;
    r.bytes = 1e6 / 3;
    r.time = t;
    r.spread = 0.01;
    r.max_rel_error = 1e-6 / 3;
    r.peak_fraction = 0.4 / 3;
    r.workspace = 123456789;
    r.find_rank = int(c.rows.size()) + 1;
    r.get_rank = 2;
    r.find_choice = c.rows.empty();
    r.lo = t * 0.9;
    r.hi = t * 1.1;
    r.tie = c.rows.size() == 1;
    c.rows.push_back(r);
  }
  VendorRow none;
  none.layer = "l, \"1\"";
  none.dir = "bwd-data";
  none.threads = 4;
  none.status = "oneDNN not built in";
  c.vendor.push_back(none);
  VendorRow v = none;
  v.status = "ok";
  v.choice.source = "cudnnFind";
  v.choice.algo = "cpu.a1";
  v.choice.family = "gemm";
  v.choice.vendor_status = "ok";
  v.choice.math = "fma";
  v.choice.vendor_time = 0.7e-3 / 3;
  v.choice.workspace = 4096;
  v.choice.deterministic = false;
  v.choice.our_time = 0.1 + 0.2;
  v.find_algo = "cpu.a0";
  v.find_time = 1.2345678e-3;
  v.get_algo = "cpu.a3";
  v.get_time = 7e-5;
  c.vendor.push_back(v);
  DuelRow d;
  d.layer = "l, \"1\"";
  d.dir = "fwd";
  d.threads = 2;
  d.own = "cpu.a0";
  d.peer = "onednn.auto";
  d.rounds = 17;
  d.own_ms = 1.25;
  d.peer_ms = 0.1 + 0.2;
  d.speed = 0.3 / 1.25;
  d.lo = 0.2;
  d.hi = 0.26;
  c.duels.push_back(d);
  DuelRow lone;
  lone.layer = "l2";
  lone.note = "no vendor peer ran";
  c.duels.push_back(lone);
  expect_round_trip(c);
  const Comparison back = read_back(comparison_json(c));
  EXPECT_EQ(back.device, DeviceKind::cuda);
  EXPECT_EQ(back.probes.at(0).second.source, ProbeOutcome::Source::cache);
  EXPECT_TRUE(back.vendor.at(0).choice.source.empty());
  EXPECT_FALSE(back.vendor.at(1).choice.deterministic);
  EXPECT_EQ(back.load.why, "others ran");
  ASSERT_EQ(back.duels.size(), 2u);
  EXPECT_EQ(back.duels[0].rounds, 17);
  EXPECT_DOUBLE_EQ(back.duels[0].peer_ms, 0.1 + 0.2);
  EXPECT_TRUE(std::isnan(back.duels[1].speed));
  EXPECT_EQ(back.duels[1].note, "no vendor peer ran");
}

// A file from before some keys existed reads with them at their defaults.
TEST(LayersJson, OlderFileReadsWithDefaults) {
  const Comparison c = read_back(R"({"device": "cpu", "rows": [{"layer": "x", "algorithm": "cpu.a", "time_ms": 2}]})");
  ASSERT_EQ(c.rows.size(), 1u);
  EXPECT_DOUBLE_EQ(c.rows[0].time, 2e-3);
  EXPECT_TRUE(std::isnan(c.rows[0].lo));
  EXPECT_TRUE(c.run_id.empty());
  EXPECT_TRUE(c.vendor.empty());
  EXPECT_TRUE(c.duels.empty());
}

}  // namespace
}  // namespace convlab
