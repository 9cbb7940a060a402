// The autotune cache file refused or read with care (folders, special and oversize files, overlong
// lines, read-only files, dead writers' temporaries), entries keyed on older builds and other algorithm
// versions, the check's per-line warnings; the JSON value reader.
#include <set>

#include "tests/autotune/cache_fixture.hpp"

namespace convlab {
namespace {

using namespace testing_cache;

// What is read is bounded; nothing that is not a regular file is opened.
TEST_F(Cache, RefusesFoldersSpecialFilesAndOversizeFilesWithOneLine) {
  auto refused = [](const std::string& f, const std::string& fragment) {
    TuneCache c(f, false);
    try {
      c.load();
      ADD_FAILURE() << f << " was read";
    } catch (const Error& e) {
      const std::string m = e.what();
      EXPECT_NE(m.find(fragment), std::string::npos) << m;
      EXPECT_EQ(m.find('\n'), std::string::npos) << m;
    }
  };
  refused(dir_.string(), "is a folder");
  refused("/dev/zero", "not a regular file");  // used to read forever, growing to GBs
  const std::string fifo = path("fifo");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  refused(fifo, "not a regular file");  // never opened, so never waited on
  const std::string big = path("big.jsonl");
  spit(big, serialize(sample()) + "\n");
  fs::resize_file(big, kCacheMaxFileBytes + 1);  // sparse: nothing is written
  refused(big, "over the 256 MiB limit");
  // A missing file is an empty cache (tune creates it).
  TuneCache missing(path("missing.jsonl"), false);
  EXPECT_NO_THROW(missing.load());
  EXPECT_TRUE(missing.entries().empty());
}

TEST_F(Cache, OverlongLineIsAnUnreadableLineNotAnEntry) {
  const std::string f = path("long.jsonl");
  spit(f, serialize(sample()) + "\n{\"format\":1," + std::string(kCacheMaxLineBytes + 10, ' ') + "\n" +
              serialize(sample("mb1ic1ih4oc1oh4kh1")) + "\n");
  TuneCache c(f, false);
  ASSERT_NO_THROW(c.load());
  EXPECT_EQ(c.entries().size(), 2u);
  ASSERT_EQ(c.warnings().size(), 1u);
  EXPECT_NE(c.warnings()[0].find("line 2: line longer than 1 MiB"), std::string::npos) << c.warnings()[0];
}

// A read-only cache is refused, never replaced.
TEST_F(Cache, ReadOnlyFileIsRefusedNotReplaced) {
  const std::string f = path("ro.jsonl");
  spit(f, serialize(sample()) + "\n");
  ASSERT_EQ(::chmod(f.c_str(), 0444), 0);
  const std::string before = slurp(f);
  TuneCache c(f, false);
  c.load();
  c.put(sample("mb1ic1ih4oc1oh4kh1"));
  try {
    c.save();
    ADD_FAILURE() << "a read-only cache was written";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("read-only"), std::string::npos) << e.what();
  }
  struct stat st {};
  ASSERT_EQ(::stat(f.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0444u);
  EXPECT_EQ(slurp(f), before);
  for (const auto& de : fs::directory_iterator(dir_))
    EXPECT_EQ(de.path().filename().string().find(".tmp"), std::string::npos) << de.path();
}

// Temp files of writers that were killed are removed under the lock; a live one's are not.
TEST_F(Cache, TempFilesOfDeadWritersAreRemoved) {
  const pid_t dead = ::fork();
  ASSERT_GE(dead, 0);
  if (dead == 0) ::_exit(0);
  int status = 0;
  ASSERT_EQ(::waitpid(dead, &status, 0), dead);  // reaped: that pid no longer exists
  const std::string f = path("c.jsonl"), d = std::to_string(dead), live = std::to_string(::getpid());
  for (const std::string& n : {"c.jsonl.tmp." + d + ".17", "c.jsonl.bad.tmp." + d + ".3", "c.jsonl.tmp." + live + ".5",
                               "other.jsonl.tmp." + d + ".1", std::string("c.jsonl.tmp.notapid")})
    spit(path(n), "half-written");
  TuneCache c(f, false);
  c.load();
  c.put(sample());
  c.save();
  EXPECT_FALSE(fs::exists(path("c.jsonl.tmp." + d + ".17")));
  EXPECT_FALSE(fs::exists(path("c.jsonl.bad.tmp." + d + ".3")));
  EXPECT_TRUE(fs::exists(path("c.jsonl.tmp." + live + ".5")));  // a live process: never touched
  EXPECT_TRUE(fs::exists(path("other.jsonl.tmp." + d + ".1")));  // another file's
  EXPECT_TRUE(fs::exists(path("c.jsonl.tmp.notapid")));
  TuneCache again(f, false);
  again.load();
  EXPECT_NE(again.lookup(sample().key), nullptr);
}

// Lines keyed on a whole build (written before each result kept its algorithm's version) still load:
// they are entries of another key, never used, kept in the file; older lines without any build are
// entries of this key whose results are all stale.
TEST_F(Cache, OldBuildKeyedLinesLoadButNeverMatch) {
  EXPECT_FALSE(build_id().empty());
  const std::string& id = build_identity(DeviceKind::cpu);
  EXPECT_EQ(id.rfind(std::string("convlab ") + CONVLAB_VERSION + " " + std::string(build_id()), 0), 0u) << id;
  EXPECT_NE(id.find("OpenBLAS"), std::string::npos) << id;
  EXPECT_NE(id.find("FFTW"), std::string::npos) << id;
#ifdef CONVLAB_HAS_ONEDNN
  EXPECT_NE(id.find("oneDNN "), std::string::npos) << id;
#endif
  const CacheEntry e = sample();
  EXPECT_EQ(e.key.build, "");  // this format keys no build
  EXPECT_TRUE(is_current_key(e.key));
  EXPECT_EQ(serialize(e).find("\"build\""), std::string::npos);
  CacheEntry old = sample("mb1ic1ih4oc1oh4kh1");
  old.key.build = "convlab " CONVLAB_VERSION " 0123456789ab | oneDNN 2.6.2 | OpenBLAS 0.3.20 | FFTW fftw-3.3.8";
  EXPECT_FALSE(is_current_key(old.key));
  // A line written before builds were recorded: no "build", no versions in its results.
  std::string oldest = serialize(sample("mb1ic2ih4oc2oh4kh1"));
  for (size_t at; (at = oldest.find(",\"code\":")) != std::string::npos;)
    oldest.erase(at, oldest.find(",\"libs\":\"\"", at) + 10 - at);
  ASSERT_EQ(oldest.find("code"), std::string::npos) << oldest;
  const std::string f = path("builds.jsonl");
  spit(f, serialize(e) + "\n" + serialize(old) + "\n" + oldest + "\n");
  TuneCache c(f, false);
  ASSERT_NO_THROW(c.load());
  EXPECT_EQ(c.entries().size(), 3u);
  EXPECT_NE(c.lookup(e.key), nullptr);
  EXPECT_EQ(c.lookup(old.key), nullptr);  // another key: never used
  CacheKey here = old.key;
  here.build.clear();
  EXPECT_EQ(c.lookup(here), nullptr);     // and not found under this build's key either: re-tuned
  ASSERT_EQ(c.warnings().size(), 1u);
  EXPECT_NE(c.warnings()[0].find("1 entries of another convlab version, or written before each result kept its "
                                 "algorithm's version, ignored"),
            std::string::npos)
      << c.warnings()[0];
  // The oldest line is found, but answers for nobody: every result is stale.
  const CacheEntry* o = c.lookup(sample("mb1ic2ih4oc2oh4kh1").key);
  ASSERT_NE(o, nullptr);
  testing::Planted fast("cpu.fast"), wrong("cpu.wrong"), huge("cpu.huge");
  EXPECT_FALSE(entry_covers(*o, {&fast, &wrong, &huge}, size_t(1) << 20));
  EXPECT_EQ(uncovered(*o, {&fast, &wrong, &huge}, size_t(1) << 20).size(), 3u);
  EXPECT_NE(stale_reason(o->results[0], fast).find("no algorithm version recorded"), std::string::npos);
  // Saving keeps the old lines (the build that wrote them may still use them).
  c.put(sample("mb1ic3ih4oc3oh4kh1"));
  c.save();
  const std::string text = slurp(f);
  EXPECT_NE(text.find("0123456789ab"), std::string::npos);
  EXPECT_NE(text.find("mb1ic2ih4oc2oh4kh1"), std::string::npos);
}

// A result measured by another version of its algorithm's code is a miss: only that candidate is
// timed again, the others' results stay hits (not re-run, their times kept).
TEST_F(Cache, AnotherAlgorithmVersionIsAMissOthersStayHits) {
  testing::Planted kept("test.kept"), changed("test.changed");
  kept.delay_ms = changed.delay_ms = 1;
  const ConvProblem p = parse_problem("mb1ic2ih6oc2oh6kh3ph1");
  ExecContext ctx;
  ctx.threads = 1;
  FindOptions fo;
  fo.max_seconds = 0.02;
  const std::string f = path("versions.jsonl");
  {
    TuneCache c(f, false);
    c.load();
    const Tuned first = cache_or_find(&c, p, Direction::fwd, ctx, fo, {&kept, &changed});
    EXPECT_FALSE(first.from_cache);
    EXPECT_EQ(first.reused, 0);
    // As if test.changed had been measured by an older version of its code, test.kept long ago.
    CacheEntry e = *c.lookup(make_cache_key(p, Direction::fwd, ctx));
    for (AlgoPerf& r : e.results) {
      if (r.algo == "test.changed") r.code = "cpu/changed 000000000000";
      if (r.algo == "test.kept") r.time = 0.5;  // a time no 1 ms run would measure
    }
    EXPECT_EQ(uncovered(e, {&kept, &changed}, size_t(-1)), (std::vector<const Algorithm*>{&changed}));
    EXPECT_NE(stale_reason(e.results[0].algo == "test.changed" ? e.results[0] : e.results[1], changed)
                  .find("code 'cpu/changed 000000000000', this build has '"),
              std::string::npos);
    c.put(e);
    c.save();
  }
  TuneCache c(f, false);
  c.load();
  const int kept_runs = kept.runs, changed_runs = changed.runs;
  const Tuned second = cache_or_find(&c, p, Direction::fwd, ctx, fo, {&kept, &changed});
  EXPECT_FALSE(second.from_cache);
  EXPECT_EQ(second.reused, 1);
  EXPECT_EQ(kept.runs, kept_runs);       // a hit: not run
  EXPECT_GT(changed.runs, changed_runs);  // a miss: measured again
  ASSERT_EQ(second.results.size(), 2u);
  for (const AlgoPerf& r : second.results) {
    EXPECT_EQ(r.code, algorithm_version(r.algo == "test.kept" ? kept : changed).code) << r.algo;
    if (r.algo == "test.kept") {
      EXPECT_EQ(r.time, 0.5);
    } else {
      EXPECT_LT(r.time, 0.5);
    }
  }
  EXPECT_EQ(second.results[0].algo, "test.changed");  // ranked together
  // Stored: the next lookup is a hit for both.
  TuneCache again(f, false);
  again.load();
  const int runs = kept.runs + changed.runs;
  const Tuned third = cache_or_find(&again, p, Direction::fwd, ctx, fo, {&kept, &changed});
  EXPECT_TRUE(third.from_cache);
  EXPECT_EQ(kept.runs + changed.runs, runs);
}

// Registered algorithms: what differs is named (the code, the libraries).
TEST_F(Cache, StaleReasonNamesCodeOrLibraries) {
  const Algorithm& blas = get_algorithm("cpu.im2col_openblas");
  const AlgorithmVersion v = algorithm_version(blas);
  AlgoPerf r;
  r.algo = "cpu.im2col_openblas";
  r.code = v.code;
  r.libs = v.libs;
  EXPECT_EQ(stale_reason(r), "");
  r.libs = "OpenBLAS 0.0.1";
  EXPECT_EQ(stale_reason(r), "libraries 'OpenBLAS 0.0.1', this build calls '" + v.libs + "'");
  r.libs = v.libs;
  r.code = "cpu/im2col_gemm 000000000000";
  EXPECT_EQ(stale_reason(r), "code 'cpu/im2col_gemm 000000000000', this build has '" + v.code + "'");
  r.algo = "cpu.no_such_algorithm";
  EXPECT_EQ(stale_reason(r), "not a registered algorithm");
}

// Check names every line this build on this machine would not use.
TEST_F(Cache, CheckWarnsPerUnusableLineWithItsNumber) {
  const CacheEntry good = sample();
  CacheEntry other_dev = sample("mb1ic1ih4oc1oh4kh1");
  other_dev.key.device = "Some Other CPU | avx2 | 64 threads";
  CacheEntry empty = sample("mb1ic2ih4oc2oh4kh1");
  empty.results.clear();
  CacheEntry stale = sample("mb1ic3ih4oc3oh4kh1");
  stale.key.build = "convlab 0.0.9 feedface";
  CacheEntry unknown = sample("mb1ic4ih4oc4oh4kh1");  // sample()'s algorithms are test names, not registered
  std::string impossible = serialize(sample("mb1ic5ih4oc5oh4kh1"));
  impossible.replace(impossible.find("mb1ic5"), 6, "mb0ic5");
  std::string noncanonical = serialize(sample("mb1ic6ih4oc6oh4kh1"));
  noncanonical.replace(noncanonical.find("mb1ic6ih4oc6oh4kh1"), 18, "ic6ih4oc6oh4kh1mb1");
  CacheEntry registered = sample("mb1ic7ih4oc7oh4kh1");
  registered.results.resize(1);
  registered.results[0].algo = "cpu.direct";
  registered.results[0].code = algorithm_version(get_algorithm("cpu.direct")).code;
  // A result of an older cpu.direct, beside a current cpu.fft: the stale one is named, with what differs.
  CacheEntry older = registered;
  older.key.problem = "mb1ic8ih4oc8oh4kh1";
  older.results[0].code = "cpu/direct 000000000000";
  older.results.push_back(registered.results[0]);
  older.results[1].algo = "cpu.fft";
  older.results[1].code = algorithm_version(get_algorithm("cpu.fft")).code;
  older.results[1].libs = algorithm_version(get_algorithm("cpu.fft")).libs;
  const std::string f = path("check.jsonl");
  spit(f, serialize(registered) + "\n" + serialize(other_dev) + "\n" + impossible + "\n" + serialize(unknown) + "\n\n" +
              serialize(empty) + "\n" + serialize(stale) + "\n" + noncanonical + "\nnot json\n" + serialize(older) + "\n");
  (void)good;
  const CacheCheck r = check_cache_file(f);
  EXPECT_EQ(r.lines, 9);
  EXPECT_EQ(r.entries, 8);
  EXPECT_EQ(r.usable, 1);
  ASSERT_EQ(r.warnings.size(), 8u);
  auto has = [&](size_t i, const std::string& a, const std::string& b) {
    EXPECT_EQ(r.warnings[i].rfind(a, 0), 0u) << r.warnings[i];
    EXPECT_NE(r.warnings[i].find(b), std::string::npos) << r.warnings[i];
  };
  has(0, "line 2: ", "another device 'Some Other CPU");
  has(1, "line 3: ", "impossible problem 'mb0ic5");
  has(2, "line 4: ", "winner 'cpu.fast' is not a registered algorithm");
  has(3, "line 6: ", "no results");
  has(4, "line 7: ", "stale: keyed on the whole build 'convlab 0.0.9 feedface'");
  has(5, "line 8: ", "is not canonical");
  has(6, "line 9: ", "unreadable");
  has(7, "line 10: ", "stale results, re-timed on use: cpu.direct (code 'cpu/direct 000000000000', this build has '" +
                          algorithm_version(get_algorithm("cpu.direct")).code + "')");
  EXPECT_EQ(r.warnings[7].find("cpu.fft"), std::string::npos) << r.warnings[7];  // current: not named
  EXPECT_THROW(check_cache_file(path("missing.jsonl")), Error);
  EXPECT_THROW(check_cache_file(dir_.string()), Error);
}

TEST(JsonValue, ParsesAndRejects) {
  auto v = json::parse(R"( {"a": [1, -2.5e3, true, false, null, "x\u00e9\n"], "b": {}} )");
  ASSERT_TRUE(v);
  ASSERT_TRUE(v->is_object());
  const json::Value* a = v->get("a");
  ASSERT_TRUE(a && a->arr.size() == 6);
  EXPECT_EQ(a->arr[1].num, -2500);
  EXPECT_EQ(a->arr[5].str, "x\xc3\xa9\n");
  for (const char* bad : {"", "{", "{\"a\":}", "[1,]", "01x", "\"abc", "{\"a\":1} x", "nul", "1e999", "\"\\q\"", "-"}) {
    std::string err;
    EXPECT_FALSE(json::parse(bad, &err)) << bad;
    EXPECT_FALSE(err.empty()) << bad;
  }
}

// A line written before an algorithm was renamed (cpu.onednn_auto, now onednn.auto) reads as the name it goes
// by now, so the entry still answers for it; a line naming both is one algorithm listed twice.
TEST(CacheLineNames, OlderAlgorithmNamesReadAsTheCurrentOnes) {
  auto result = [](const char* algo) {
    return std::string("{\"algo\":\"") + algo +
           "\",\"status\":\"ok\",\"time\":1e-06,\"spread\":0,\"reps\":3,\"workspace\":0,"
           "\"max_rel_error\":1e-07,\"err_ratio\":0.1,\"deterministic\":true,\"note\":\"\"}";
  };
  const std::string head = "{\"format\":1,\"problem\":\"mb1ic1ih4oc1oh2kh3\",\"dir\":\"fwd\",\"dtype\":\"f32\","
                           "\"device\":\"Example x86-64 CPU | avx2 | 4 threads\",\"version\":\"0.1.0\","
                           "\"tuned_at\":1795416697,\"workspace_limit\":null,\"results\":[";
  const CacheLine one = parse_cache_line(head + result("cpu.onednn_auto") + "," + result("cpu.direct") + "]}");
  ASSERT_TRUE(one.entry) << one.error;
  ASSERT_EQ(one.entry->results.size(), 2u);
  std::set<std::string> names;
  for (const AlgoPerf& r : one.entry->results) names.insert(r.algo);
  EXPECT_EQ(names, (std::set<std::string>{"cpu.direct", "onednn.auto"}));
  const CacheLine both = parse_cache_line(head + result("cpu.onednn_auto") + "," + result("onednn.auto") + "]}");
  EXPECT_FALSE(both.entry);
  EXPECT_NE(both.error.find("listed twice"), std::string::npos) << both.error;
}

}  // namespace
}  // namespace convlab

