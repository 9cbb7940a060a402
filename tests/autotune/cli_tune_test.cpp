// `convlab tune` and `convlab cache` as a user runs them.
#include <gtest/gtest.h>

#include "tests/support/cli_fixture.hpp"
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "algorithms/registry.hpp"
#include "autotune/build_identity.hpp"
#include "autotune/cache.hpp"
#include "core/json_value.hpp"
#include "core/device.hpp"
#include "core/problem.hpp"

namespace convlab {
namespace {

using Result = testing::CliResult;
class TuneCli : public testing::CliTest {
 protected:
  // A key as the convlab binary makes it (the test and the binary are built from the same tree).
  CacheKey binary_key(const std::string& problem, const ExecContext& ctx) const {
    return make_cache_key(parse_problem(problem), Direction::fwd, ctx);
  }
  // A result of `algo` with the versions this build's algorithm has (none for an unregistered name).
  static AlgoPerf result(const std::string& algo, double time) {
    AlgoPerf r;
    r.algo = algo;
    r.time = time;
    if (const Algorithm* a = find_algorithm(algo)) {
      const AlgorithmVersion v = algorithm_version(*a);
      r.code = v.code;
      r.libs = v.libs;
    }
    return r;
  }
  // One cache entry of this build for a 1x1 problem, with one ok result of `algo`.
  CacheEntry one_entry(const std::string& algo) const {
    CacheEntry e;
    e.key = binary_key("mb1ic1ih4oc1oh4kh1", ExecContext{});
    e.tuned_at = 5;
    e.results = {result(algo, 1e-3)};
    return e;
  }
};

TEST_F(TuneCli, Help) {
  for (const char* c : {"tune", "cache"}) {
    const Result r = run(std::string(c) + " --help");
    EXPECT_EQ(r.code, 0) << c;
    EXPECT_NE(r.out.find("usage: convlab " + std::string(c)), std::string::npos);
  }
}

TEST_F(TuneCli, JsonOutputParsesAndCacheIsWritten) {
  const std::string cache = path("t.jsonl");
  const Result r = run("tune mb1ic4ih8oc4oh8kh3ph1 --dir fwd,bwd-data --json --quiet --max-seconds 0.02 --cache " + cache);
  // Exit 1 only when some pair has no acceptable candidate (a registry of just the reference).
  EXPECT_TRUE(r.code == 0 || r.code == 1) << r.err;
  std::string err;
  const auto v = json::parse(r.out, &err);
  ASSERT_TRUE(v) << err << "\n" << r.out;
  const json::Value* pairs = v->get("pairs");
  ASSERT_TRUE(pairs && pairs->arr.size() == 2);
  EXPECT_EQ(pairs->arr[1].get("dir")->str, "bwd-data");
  EXPECT_TRUE(std::filesystem::exists(cache));
  // Second run: everything from the cache.
  const Result again = run("tune mb1ic4ih8oc4oh8kh3ph1 --dir fwd,bwd-data --json --quiet --cache " + cache);
  const auto v2 = json::parse(again.out);
  ASSERT_TRUE(v2);
  EXPECT_EQ(v2->get("cache_hits")->num, 2);
  EXPECT_EQ(v2->get("tuned")->num, 0);
}

// The vendor's own pick beside find and get, in text and JSON.
TEST_F(TuneCli, VendorPickBesideFindAndGet) {
  const std::string prob = "mb1ic8ih8oc8oh8kh3ph1 --dir fwd --quiet --max-seconds 0.02";
  const Result r = run("tune " + prob + " --json");
  EXPECT_TRUE(r.code == 0 || r.code == 1) << r.err;
  std::string err;
  const auto v = json::parse(r.out, &err);
  ASSERT_TRUE(v) << err << "\n" << r.out;
  const json::Value& pair = v->get("pairs")->arr.at(0);
  const json::Value* vendor = pair.get("vendor");
  ASSERT_TRUE(vendor && vendor->type == json::Value::Type::array) << r.out;
  ASSERT_TRUE(pair.get("vendor_status"));
  ASSERT_TRUE(v->get("vendor_summary") && v->get("vendor_summary")->is_object());
#ifdef CONVLAB_HAS_ONEDNN
  EXPECT_EQ(pair.get("vendor_status")->str, "ok");
  ASSERT_EQ(vendor->arr.size(), 1u) << r.out;
  const json::Value& c = vendor->arr[0];
  EXPECT_EQ(c.get("source")->str, "onednn_auto");
  EXPECT_EQ(c.get("algorithm")->str, "onednn.auto");
  EXPECT_FALSE(c.get("implementation")->str.empty());
  ASSERT_EQ(c.get("time_ms")->type, json::Value::Type::number) << r.out;  // our find measured it
  EXPECT_GT(c.get("time_ms")->num, 0);
  EXPECT_EQ(c.get("find_choice")->str, pair.get("find_choice")->str);
  EXPECT_EQ(v->get("vendor_summary")->get("onednn_auto")->get("pairs")->num, 1);
  const Result t = run("tune " + prob);
  EXPECT_NE(t.out.find("\n    vendor onednn_auto -> " + c.get("implementation")->str), std::string::npos) << t.out;
  EXPECT_NE(t.out.find("vendor onednn_auto  vs find over 1 pairs: same pick "), std::string::npos) << t.out;
#else
  EXPECT_TRUE(vendor->arr.empty());
  EXPECT_NE(pair.get("vendor_status")->str.find("oneDNN not built"), std::string::npos) << r.out;
#endif
}

TEST_F(TuneCli, CudaWithoutDeviceFailsWithOneLine) {
  if (cuda_info().available) GTEST_SKIP() << "a CUDA device is present; the no-device path cannot be exercised";
  expect_one_line_error("tune alexnet.conv2 --batch 4 --device cuda", "no CUDA device (");
  expect_one_line_error("tune alexnet.conv2 --batch 4 --device cuda --json --tf32", "no CUDA device (");
  expect_one_line_error("layers alexnet.conv2 --batch 4 --device cuda", "no CUDA device (");
}

TEST_F(TuneCli, CudaTuneShowsCudnnFindAndGet) {
  if (!cuda_info().available) GTEST_SKIP() << "no CUDA device: " << cuda_info().reason;
  const Result r = run("tune alexnet.conv2 --batch 4 --device cuda --json --quiet --max-seconds 0.05");
  EXPECT_EQ(r.code, 0) << r.err;
  std::string err;
  const auto v = json::parse(r.out, &err);
  ASSERT_TRUE(v) << err;
  for (const json::Value& pair : v->get("pairs")->arr) {
    std::vector<std::string> sources;
    for (const json::Value& c : pair.get("vendor")->arr) sources.push_back(c.get("source")->str);
    EXPECT_EQ(sources, (std::vector<std::string>{"cudnnFind", "cudnnGet_v7"})) << pair.get("vendor_status")->str;
  }
}

TEST_F(TuneCli, CorruptCacheWarnsOnceAndStillTunes) {
  const std::string cache = path("bad.jsonl");
  std::ofstream(cache) << "garbage\n{\"format\":1\n";
  const Result r = run("tune mb1ic2ih6oc2oh6kh3ph1 --dir fwd --quiet --max-seconds 0.02 --cache " + cache);
  EXPECT_TRUE(r.code == 0 || r.code == 1) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_NE(r.err.find("warning: autotune cache"), std::string::npos) << r.err;
  EXPECT_TRUE(std::filesystem::exists(cache + ".bad"));
  const Result check = run("cache check " + cache);
  EXPECT_EQ(check.code, 0) << check.out << check.err;
}

TEST_F(TuneCli, CacheMergeAndShow) {
  const std::string a = path("a.jsonl"), b = path("b.jsonl"), c = path("c.jsonl");
  CacheEntry e = one_entry("cpu.something");
  std::ofstream(a) << serialize(e) << "\n";
  e.key.dir = "bwd-data";
  std::ofstream(b) << serialize(e) << "\nnot json\n";
  const Result m = run("cache merge " + a + " " + b + " -o " + c);
  EXPECT_EQ(m.code, 0) << m.err;
  EXPECT_NE(m.out.find("2 entries"), std::string::npos) << m.out;
  EXPECT_EQ(std::count(m.err.begin(), m.err.end(), '\n'), 1) << m.err;  // the garbage line in b
  const Result s = run("cache show " + c);
  EXPECT_EQ(s.code, 0);
  EXPECT_NE(s.out.find("cpu.something"), std::string::npos) << s.out;
  EXPECT_EQ(run("cache check " + b).code, 1);
  EXPECT_EQ(run("cache merge " + a).code, 2);  // no -o
  EXPECT_EQ(run("cache frobnicate " + a).code, 2);
}

// Check names every unusable line and exits 1; show/check refuse what is not a cache file.
TEST_F(TuneCli, CacheCheckWarnsPerLineAndRefusesNonFiles) {
  CacheEntry e = one_entry("cpu.direct");
  const std::string good = path("good.jsonl"), bad = path("bad.jsonl");
  std::ofstream(good) << serialize(e) << "\n";
  const Result ok = run("cache check " + good);
  EXPECT_EQ(ok.code, 0) << ok.out << ok.err;
  EXPECT_NE(ok.out.find("1 entries, 1 usable here, 0 warnings"), std::string::npos) << ok.out;
  CacheEntry dev = e, mb0 = e, winner = e, empty = e;
  dev.key.device = "Another CPU | avx2 | 96 threads";
  mb0.key.problem = "mb0ic1ih4oc1oh4kh1";
  winner.key.problem = "mb1ic2ih4oc2oh4kh1";
  winner.results[0].algo = "cpu.no_such_algorithm";
  empty.key.problem = "mb1ic3ih4oc3oh4kh1";
  empty.results.clear();
  std::ofstream(bad) << serialize(e) << "\n" << serialize(dev) << "\n" << serialize(mb0) << "\n" << serialize(winner)
                     << "\n" << serialize(empty) << "\n";
  const Result c = run("cache check " + bad);
  EXPECT_EQ(c.code, 1) << c.out << c.err;
  for (const char* w : {"line 2: another device 'Another CPU", "line 3: impossible problem 'mb0ic1ih4oc1oh4kh1'",
                        "line 4: winner 'cpu.no_such_algorithm' is not a registered algorithm", "line 5: no results",
                        "5 entries, 1 usable here, 4 warnings"})
    EXPECT_NE(c.out.find(w), std::string::npos) << w << "\n" << c.out;
  // A missing file, a missing folder, a folder, a device, an oversize file: one line, exit 2.
  const std::string big = path("big.jsonl");
  std::ofstream(big) << serialize(e) << "\n";
  std::filesystem::resize_file(big, kCacheMaxFileBytes + 1);
  expect_one_line_error("cache show " + path("missing.jsonl"), "does not exist");
  expect_one_line_error("cache check " + path("missing.jsonl"), "does not exist");
  expect_one_line_error("cache check " + path("no/such/folder/c.jsonl"), "does not exist");
  expect_one_line_error("cache show " + dir_.string(), "is a folder");
  expect_one_line_error("cache check " + dir_.string(), "is a folder");
  expect_one_line_error("cache show /dev/zero", "not a regular file");  // used to hang and grow to GBs
  expect_one_line_error("cache check /dev/zero", "not a regular file");
  expect_one_line_error("cache check " + big, "over the 256 MiB limit");
}

// --cache is checked before any tuning; a read-only cache is never replaced.
TEST_F(TuneCli, CacheFileCheckedUpFront) {
  const std::string ro = path("ro.jsonl");
  std::ofstream(ro) << "";
  std::filesystem::permissions(ro, std::filesystem::perms::owner_read | std::filesystem::perms::group_read |
                                       std::filesystem::perms::others_read);
  const std::string prob = "tune mb1ic4ih8oc4oh8kh3ph1 --dir fwd --quiet --max-seconds 0.02 --cache ";
  expect_one_line_error(prob + ro, "is read-only");
  expect_one_line_error(prob + path("no/such/folder/c.jsonl"), "folder");
  expect_one_line_error(prob + dir_.string(), "is a folder");
  expect_one_line_error(prob + "/dev/zero", "not a regular file");
  EXPECT_FALSE(std::filesystem::exists(path("no")));  // never created
  expect_one_line_error("cache merge " + ro + " -o " + ro, "is read-only");
  EXPECT_EQ(slurp(ro), "");
  // train / report: the cache:F a policy writes and the get:F it reads.
  expect_one_line_error("train tiny --iters 1 --policy cache:" + path("no/c.jsonl"), "does not exist");
  expect_one_line_error("train tiny --iters 1 --policy cache:" + ro, "is read-only");
  expect_one_line_error("train tiny --iters 1 --policy get:" + path("missing.jsonl"), "does not exist");
  expect_one_line_error("report --net tiny --out " + path("rep") + " --policy cache:" + ro, "is read-only");
}

// `layers --cache` calibrates from the entries of the thread counts it runs, and says how many.
TEST_F(TuneCli, LayersSaysWhatCalibratedGet) {
  ExecContext one;
  one.threads = 1;
  CacheEntry e;
  e.key = binary_key("mb1ic4ih8oc4oh8kh3ph1", one);
  e.tuned_at = 5;
  for (const char* a : {"cpu.direct", "cpu.im2col_gemm"}) e.results.push_back(result(a, 1e-4));
  const std::string cache = path("one.jsonl");
  std::ofstream(cache) << serialize(e) << "\n";
  const std::string layers = "layers mb1ic4ih8oc4oh8kh3ph1 --dir fwd --max-seconds 0.01 --cache " + cache;
  const Result r1 = run(layers + " --threads 1");
  EXPECT_EQ(r1.code, 0) << r1.err;
  EXPECT_NE(r1.out.find("get calibrated from 2 cached measurements"), std::string::npos) << r1.out;
  // The machine probe of the thread count it runs: measured and stored in the cache file (the one
  // line layers adds to it), then loaded.
  EXPECT_NE(r1.out.find("machine probe: measured in"), std::string::npos) << r1.out;
  EXPECT_NE(run(layers + " --threads 1").out.find("machine probe: loaded from the cache"), std::string::npos);
  // Entries of another thread count only: said, not silently ignored.
  ExecContext three;
  three.threads = 3;
  e.key = binary_key("mb1ic4ih8oc4oh8kh3ph1", three);
  const std::string other = path("three.jsonl");
  std::ofstream(other) << serialize(e) << "\n";
  const Result r2 = run("layers mb1ic4ih8oc4oh8kh3ph1 --dir fwd --max-seconds 0.01 --threads 1 --cache " + other);
  EXPECT_EQ(r2.code, 0) << r2.err;
  EXPECT_NE(r2.out.find("get uncalibrated: no usable entries in " + other), std::string::npos) << r2.out;
}

// Tune says whether the machine probe was measured or loaded; --reprobe measures
// it again; a bad probe line is one warning, dropped, and reported by cache check.
TEST_F(TuneCli, MachineProbeMeasuredOnceThenLoaded) {
  const std::string cache = path("p.jsonl");
  const std::string tune = "tune mb1ic4ih8oc4oh8kh3ph1 --dir fwd --mode get --quiet --cache " + cache;
  const Result first = run(tune);
  EXPECT_EQ(first.code, 0) << first.err;
  EXPECT_NE(first.out.find("machine probe: measured in"), std::string::npos) << first.out;
  EXPECT_NE(first.out.find("stored in " + cache), std::string::npos) << first.out;
  EXPECT_EQ(first.err, "");
  const Result second = run(tune);
  EXPECT_NE(second.out.find("machine probe: loaded from the cache"), std::string::npos) << second.out;
  const Result json = run(tune + " --json");
  const auto v = json::parse(json.out);
  ASSERT_TRUE(v) << json.out;
  ASSERT_TRUE(v->get("probe") && v->get("probe")->is_object()) << json.out;
  EXPECT_EQ(v->get("probe")->get("source")->str, "cache");
  const Result again = run(tune + " --reprobe");
  EXPECT_NE(again.out.find("machine probe: measured in"), std::string::npos) << again.out;
  const Result check = run("cache check " + cache);
  EXPECT_EQ(check.code, 0) << check.out;
  EXPECT_NE(check.out.find("1 machine probe (1 usable here), 0 warnings"), std::string::npos) << check.out;
  const Result show = run("cache show " + cache);
  EXPECT_NE(show.out.find("(machine probe)"), std::string::npos) << show.out;

  // A damaged probe line: one warning, the probe is measured again, the line dropped (kept in .bad).
  std::string text = slurp(cache);
  const size_t at = text.find("\"copy_gbs\":");
  ASSERT_NE(at, std::string::npos) << text;
  text.replace(at, 11, "\"copy_gbs\":-");
  std::ofstream(cache) << text;
  const Result bad_check = run("cache check " + cache);
  EXPECT_EQ(bad_check.code, 1) << bad_check.out;
  EXPECT_NE(bad_check.out.find("line 1: unreadable: probe rate 'copy_gbs' is not a positive number"), std::string::npos)
      << bad_check.out;
  const Result bad = run(tune);
  EXPECT_EQ(bad.code, 0) << bad.err;
  EXPECT_EQ(std::count(bad.err.begin(), bad.err.end(), '\n'), 1) << bad.err;
  EXPECT_NE(bad.err.find("warning: autotune cache"), std::string::npos) << bad.err;
  EXPECT_NE(bad.out.find("machine probe: measured in"), std::string::npos) << bad.out;
  EXPECT_TRUE(std::filesystem::exists(cache + ".bad"));
  EXPECT_EQ(run("cache check " + cache).code, 0);
}

// find's results are kept in the default cache (a user find-db): a second run is answered from it;
// --no-cache reads and keeps nothing.
TEST_F(TuneCli, FindResultsKeptInTheDefaultCacheUnlessNoCache) {
  const std::string def = default_cache();  // CONVLAB_CACHE of every run here (cli_fixture.hpp)
  const std::string tune = "tune mb1ic4ih8oc4oh8kh3ph1 --dir fwd --json --quiet --max-seconds 0.02";
  const Result none = run(tune + " --no-cache");
  EXPECT_TRUE(none.code == 0 || none.code == 1) << none.err;
  const auto v0 = json::parse(none.out);
  ASSERT_TRUE(v0) << none.out;
  EXPECT_EQ(v0->get("cache")->type, json::Value::Type::null);
  EXPECT_FALSE(std::filesystem::exists(def)) << "--no-cache wrote " << def;
  EXPECT_NE(run("tune mb1ic4ih8oc4oh8kh3ph1 --dir fwd --quiet --max-seconds 0.02 --no-cache").out.find("cache: none"),
            std::string::npos);

  const Result first = run(tune);
  EXPECT_TRUE(first.code == 0 || first.code == 1) << first.err;
  const auto v1 = json::parse(first.out);
  ASSERT_TRUE(v1) << first.out;
  EXPECT_EQ(v1->get("cache")->str, def);
  EXPECT_EQ(v1->get("tuned")->num, 1);
  ASSERT_TRUE(std::filesystem::exists(def));
  EXPECT_NE(slurp(def).find("\"problem\":\"mb1ic4ih8oc4oh8kh3ph1\""), std::string::npos) << slurp(def);
  const Result second = run(tune);
  const auto v2 = json::parse(second.out);
  ASSERT_TRUE(v2) << second.out;
  EXPECT_EQ(v2->get("cache_hits")->num, 1);
  EXPECT_EQ(v2->get("tuned")->num, 0);
  expect_one_line_error(tune + " --no-cache --cache " + path("x.jsonl"), "exclude each other");
}

// --cache F follows one rule in every command that takes it: created when missing, its folder must exist.
TEST_F(TuneCli, CacheOptionCreatesAMissingFileInEveryCommand) {
  int i = 0;
  for (const std::string& cmd : {std::string("tune mb1ic4ih8oc4oh8kh3ph1 --dir fwd --quiet --max-seconds 0.01"),
                                std::string("tune mb1ic4ih8oc4oh8kh3ph1 --dir fwd --quiet --mode get"),
                                std::string("layers mb1ic4ih8oc4oh8kh3ph1 --dir fwd --max-seconds 0.01 --threads 1")}) {
    const std::string f = path("new" + std::to_string(i++) + ".jsonl");
    const Result r = run(cmd + " --cache " + f);
    EXPECT_TRUE(r.code == 0 || r.code == 1) << cmd << "\n" << r.err;
    EXPECT_TRUE(std::filesystem::exists(f)) << cmd;
    EXPECT_EQ(run("cache check " + f).code, 0) << cmd << "\n" << slurp(f);
    expect_one_line_error(cmd + " --cache " + path("no/such/folder/c.jsonl"), "does not exist");
    expect_one_line_error(cmd + " --cache " + dir_.string(), "is a folder");
    expect_one_line_error(cmd + " --cache /dev/zero", "not a regular file");
  }
  EXPECT_FALSE(std::filesystem::exists(path("no")));  // a folder is never created
}

// The machine's load around the measurements and find's ties, in tune's and layers' text and JSON.
TEST_F(TuneCli, LoadAndTiesInTuneAndLayersOutputs) {
  const std::string prob = "mb1ic4ih8oc4oh8kh3ph1 --dir fwd --max-seconds 0.02";
  const Result t = run("tune " + prob + " --quiet --list");
  EXPECT_TRUE(t.code == 0 || t.code == 1) << t.err;
  EXPECT_TRUE(t.out.find("\nmachine: quiet while measuring (") != std::string::npos ||
              t.out.find("\nmachine: DISTURBED while measuring: ") != std::string::npos)
      << t.out;
  EXPECT_NE(t.out.find("95% interval ms"), std::string::npos) << t.out;
  const Result tj = run("tune " + prob + " --quiet --json --retune");
  const auto v = json::parse(tj.out);
  ASSERT_TRUE(v) << tj.out;
  const json::Value* load = v->get("load");
  ASSERT_TRUE(load && load->is_object()) << tj.out;
  EXPECT_EQ(load->get("disturbed")->type, json::Value::Type::boolean);
  EXPECT_EQ(load->get("why")->type, json::Value::Type::string);
  EXPECT_EQ(load->get("probe_spread")->arr.size(), 2u);
  const json::Value& pair = v->get("pairs")->arr.at(0);
  ASSERT_EQ(pair.get("find_ties")->type, json::Value::Type::array) << tj.out;
  int ok = 0;
  for (const json::Value& r : pair.get("find")->arr) {
    EXPECT_EQ(r.get("tie")->type, json::Value::Type::boolean);
    if (r.get("status")->str != "ok") continue;
    ++ok;
    EXPECT_LE(r.get("lo")->num, r.get("time")->num);
    EXPECT_GE(r.get("hi")->num, r.get("time")->num);
    EXPECT_FALSE(r.get("code")->str.empty());
    // find's ties are exactly the rows marked tie (the choice too, when it has any).
    const bool listed = std::any_of(pair.get("find_ties")->arr.begin(), pair.get("find_ties")->arr.end(),
                                    [&](const json::Value& n) { return n.str == r.get("algo")->str; });
    const bool choice = r.get("algo")->str == pair.get("find_choice")->str;
    EXPECT_EQ(r.get("tie")->b, listed || (choice && !pair.get("find_ties")->arr.empty())) << r.get("algo")->str;
  }
  EXPECT_GT(ok, 0);

  const std::string lj = path("layers.json");
  const Result l = run("layers " + prob + " --threads 1 --json " + lj);
  EXPECT_EQ(l.code, 0) << l.err;
  EXPECT_TRUE(l.out.find("\nmachine: quiet while measuring (") != std::string::npos ||
              l.out.find("\nmachine: DISTURBED while measuring: ") != std::string::npos)
      << l.out;
  const auto lv = json::parse(slurp(lj));
  ASSERT_TRUE(lv);
  ASSERT_TRUE(lv->get("load") && lv->get("load")->is_object());
  EXPECT_EQ(lv->get("load")->get("disturbed")->type, json::Value::Type::boolean);
  for (const json::Value& r : lv->get("rows")->arr) {
    EXPECT_EQ(r.get("tie")->type, json::Value::Type::boolean);
    if (r.get("status")->str == "ok") {
      EXPECT_LE(r.get("time_lo_ms")->num, r.get("time_ms")->num);
    }
  }
}

}  // namespace
}  // namespace convlab
