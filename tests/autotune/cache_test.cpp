// The autotune cache: round trip, atomic replacement, corrupt / truncated /
// foreign files, version and device mismatches, staleness, two concurrent
// writer processes, merge, set-aside lines, the default path.
#include "tests/autotune/cache_fixture.hpp"

namespace convlab {
namespace {

using namespace testing_cache;

TEST_F(Cache, LineRoundTrip) {
  CacheEntry e = sample();
  e.workspace_limit = 123456;
  const std::string line = serialize(e);
  EXPECT_EQ(line.find('\n'), std::string::npos);
  std::string err;
  const auto back = deserialize(line, &err);
  ASSERT_TRUE(back) << err;
  expect_same(e, *back);
  e.workspace_limit = size_t(-1);  // "unlimited" is null
  const auto back2 = deserialize(serialize(e));
  ASSERT_TRUE(back2);
  EXPECT_EQ(back2->workspace_limit, size_t(-1));
}

// Found by cache_line_fuzz: the same algorithm twice in one ranked list made the
// ranking depend on input order (deserialize -> serialize was not a fixed point).
TEST_F(Cache, AnAlgorithmListedTwiceIsAMalformedLine) {
  CacheEntry e = sample();
  ASSERT_GE(e.results.size(), 2u);
  e.results[1].algo = e.results[0].algo;
  e.results[1].time = e.results[0].time;
  std::string err;
  EXPECT_FALSE(deserialize(serialize(e), &err));
  EXPECT_NE(err.find("listed twice"), std::string::npos) << err;
}

TEST_F(Cache, FileRoundTripAndAtomicReplace) {
  const std::string f = path("sub/dir/tune.jsonl");
  {
    // A folder named by the user is never created: refused with one line.
    TuneCache missing(f, false);
    missing.put(sample());
    try {
      missing.save();
      ADD_FAILURE() << "saved into a missing folder";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("does not exist"), std::string::npos) << e.what();
    }
    EXPECT_FALSE(fs::exists(path("sub")));
  }
  fs::create_directories(path("sub/dir"));
  {
    TuneCache c(f, false);
    c.load();
    EXPECT_TRUE(c.entries().empty());
    EXPECT_TRUE(c.warnings().empty());
    c.put(sample());
    c.put(sample("mb2ic4ih8oc4oh8kh3ph1", "bwd-data"));
    c.save();
  }
  const std::string first = slurp(f);
  EXPECT_EQ(std::count(first.begin(), first.end(), '\n'), 2);
  TuneCache c(f, false);
  c.load();
  EXPECT_TRUE(c.warnings().empty());
  ASSERT_EQ(c.entries().size(), 2u);
  const CacheEntry* hit = c.lookup(sample().key);
  ASSERT_NE(hit, nullptr);
  expect_same(*hit, sample());
  // Replacing an entry rewrites the file whole; no temp files are left behind.
  CacheEntry newer = sample();
  newer.tuned_at = 200;
  newer.results.resize(1);
  c.put(newer);
  c.save();
  int files = 0;
  for (const auto& de : fs::directory_iterator(fs::path(f).parent_path())) {
    const std::string n = de.path().filename().string();
    EXPECT_EQ(n.find(".tmp"), std::string::npos) << n;
    ++files;
  }
  EXPECT_EQ(files, 2);  // tune.jsonl + tune.jsonl.lock
  TuneCache again(f, false);
  again.load();
  ASSERT_EQ(again.entries().size(), 2u);
  EXPECT_EQ(again.lookup(sample().key)->results.size(), 1u);
}

TEST_F(Cache, CorruptTruncatedAndGarbageLinesAreWarnedAndIgnored) {
  const std::string f = path("bad.jsonl");
  const std::string good1 = serialize(sample()), good2 = serialize(sample("mb2ic4ih8oc4oh8kh3ph1", "bwd-filter"));
  std::string garbage = good1.substr(0, good1.size() / 2) + "\n";     // truncated line
  garbage += "this is not json\n";
  garbage += std::string("\x00\x01\xff\xfe{{{", 7) + "\n";           // binary junk
  garbage += "{\"format\":1,\"problem\":42}\n";                        // wrong types
  garbage += "[1,2,3]\n";                                              // not an object
  std::string bad_status = good1;
  bad_status.replace(bad_status.find("\"ok\""), 4, "\"great\"");
  garbage += bad_status + "\n";
  garbage += std::string(5000, '[') + "\n";                           // nesting bomb
  spit(f, good1 + "\n" + garbage + "\n   \n" + good2);                 // last line has no newline
  TuneCache c(f, false);
  ASSERT_NO_THROW(c.load());
  ASSERT_EQ(c.warnings().size(), 1u) << c.warnings()[0];
  EXPECT_NE(c.warnings()[0].find("7 of"), std::string::npos) << c.warnings()[0];
  EXPECT_NE(c.warnings()[0].find("line 2"), std::string::npos) << c.warnings()[0];
  EXPECT_EQ(c.entries().size(), 2u);
  EXPECT_NE(c.lookup(sample().key), nullptr);
  // The warning says what will happen to them; the next write does it: the bad lines, byte for byte,
  // appended to F.bad after a header naming the time and the file, and dropped from F.
  EXPECT_NE(c.warnings()[0].find("they stay in the file until its next write, which appends them to '" + f + ".bad'"),
            std::string::npos)
      << c.warnings()[0];
  c.put(sample("mb1ic1ih4oc1oh4kh1", "fwd"));
  c.save();
  const std::string bad = slurp(f + ".bad");
  ASSERT_EQ(bad.substr(0, 2), "# ");
  const std::string header = bad.substr(0, bad.find('\n') + 1);
  EXPECT_NE(header.find("7 unreadable lines of '" + f + "'"), std::string::npos) << header;
  EXPECT_EQ(bad.substr(header.size()), garbage);
  TuneCache clean(f, false);
  clean.load();
  EXPECT_TRUE(clean.warnings().empty());
  EXPECT_EQ(clean.entries().size(), 3u);
}

TEST_F(Cache, EntirelyGarbageFileIsAnEmptyCache) {
  const std::string f = path("junk.jsonl");
  std::string junk;
  for (int i = 0; i < 4096; ++i) junk += char((i * 7919) & 0xff);
  spit(f, junk);
  TuneCache c(f, false);
  ASSERT_NO_THROW(c.load());
  EXPECT_TRUE(c.entries().empty());
  EXPECT_EQ(c.warnings().size(), 1u);
  EXPECT_EQ(c.lookup(sample().key), nullptr);
}

TEST_F(Cache, ForeignVersionDeviceAndFormatAreMisses) {
  const std::string f = path("foreign.jsonl");
  CacheEntry old = sample();
  old.key.version = "0.0.1-old";
  CacheEntry other_dev = sample();
  other_dev.key.device = "Some Other CPU | avx2 | 64 threads";
  std::string future = serialize(sample("mb1ic1ih4oc1oh4kh1"));
  future.replace(future.find("\"format\":1"), 10, "\"format\":2");
  spit(f, serialize(old) + "\n" + serialize(other_dev) + "\n" + future + "\n");
  TuneCache c(f, false);
  c.load();
  EXPECT_EQ(c.lookup(sample().key), nullptr);  // neither the old version nor the other device answers
  EXPECT_EQ(c.lookup(sample("mb1ic1ih4oc1oh4kh1").key), nullptr);
  ASSERT_EQ(c.warnings().size(), 2u);  // foreign format + foreign version; another device is normal
  EXPECT_NE(c.warnings()[1].find("0.0.1-old"), std::string::npos) << c.warnings()[1];
  // Looking the old entry up by its own key still misses: only this version answers.
  EXPECT_EQ(c.lookup(old.key), nullptr);
  // Writing keeps everything it did not understand or does not own.
  c.put(sample());
  c.save();
  const std::string text = slurp(f);
  EXPECT_NE(text.find("0.0.1-old"), std::string::npos);
  EXPECT_NE(text.find("Some Other CPU"), std::string::npos);
  EXPECT_NE(text.find("\"format\":2"), std::string::npos);
  TuneCache again(f, false);
  again.load();
  EXPECT_NE(again.lookup(sample().key), nullptr);
}

TEST_F(Cache, StaleEntriesDoNotCover) {
  testing::Planted fast("cpu.fast"), wrong("cpu.wrong"), huge("cpu.huge"), added("cpu.new_algorithm");
  const CacheEntry e = sample();
  EXPECT_TRUE(entry_covers(e, {&fast, &wrong, &huge}, size_t(1) << 20));
  EXPECT_FALSE(entry_covers(e, {&fast, &wrong, &huge, &added}, size_t(1) << 20));  // a new candidate
  EXPECT_FALSE(entry_covers(e, {&fast, &wrong, &huge}, size_t(-1)));  // cpu.huge would fit now
}

TEST_F(Cache, TwoConcurrentWriterProcessesLoseNothing) {
  const std::string f = path("shared.jsonl");
  constexpr int kPerProcess = 25;
  pid_t kids[2];
  for (int k = 0; k < 2; ++k) {
    kids[k] = ::fork();
    ASSERT_GE(kids[k], 0);
    if (kids[k] == 0) {
      int rc = 0;
      try {
        for (int i = 0; i < kPerProcess; ++i) {
          TuneCache c(f, false);  // each save re-reads and merges under the lock
          c.load();
          c.put(sample("mb1ic" + std::to_string(1 + k) + "ih" + std::to_string(4 + i) + "oc1oh" + std::to_string(4 + i) + "kh1"));
          c.save();
        }
      } catch (...) {
        rc = 1;
      }
      ::_exit(rc);
    }
  }
  for (pid_t kid : kids) {
    int status = 0;
    ASSERT_EQ(::waitpid(kid, &status, 0), kid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  TuneCache c(f, false);
  c.load();
  EXPECT_TRUE(c.warnings().empty());
  EXPECT_EQ(c.entries().size(), size_t(2 * kPerProcess));
}

TEST_F(Cache, MergeTakesTheUnionAndTheNewerEntry) {
  const std::string a = path("a.jsonl"), b = path("b.jsonl"), out = path("merged/c.jsonl");
  fs::create_directories(path("merged"));
  CacheEntry old = sample(), newer = sample();
  old.tuned_at = 10;
  old.results.resize(1);
  newer.tuned_at = 20;
  spit(a, serialize(old) + "\n" + serialize(sample("mb1ic1ih4oc1oh4kh1")) + "\ngarbage\n");
  spit(b, serialize(newer) + "\n" + serialize(sample("mb1ic2ih4oc2oh4kh1", "bwd-data")) + "\n");
  EXPECT_EQ(merge_cache_files({a, b}, out, false), 3);
  TuneCache c(out, false);
  c.load();
  EXPECT_TRUE(c.warnings().empty());
  ASSERT_EQ(c.entries().size(), 3u);
  EXPECT_EQ(c.lookup(sample().key)->tuned_at, 20);
  EXPECT_EQ(c.lookup(sample().key)->results.size(), 3u);
  EXPECT_THROW(merge_cache_files({path("missing.jsonl")}, out, false), Error);
}

// Every unreadable line ever set aside is kept: a second corruption is appended to F.bad, not
// written over the first; `cache merge a b -o a` keeps a's unreadable lines in a.bad (the merged file
// cannot hold them) and its warning says exactly that.
TEST_F(Cache, SetAsideLinesAccumulateAndMergeKeepsThem) {
  const std::string a = path("a.jsonl"), b = path("b.jsonl");
  spit(a, serialize(sample()) + "\nfirst broken line\n");
  spit(b, serialize(sample("mb2ic4ih8oc4oh8kh3ph1", "bwd-data")) + "\n");
  TuneCache ca(a, false);
  ca.load();
  EXPECT_EQ(ca.bad_lines(), 1);
  EXPECT_EQ(ca.set_aside(), "first broken line\n");
  ca.put(sample("mb1ic1ih4oc1oh4kh1", "fwd"));
  ca.save();
  spit(a, slurp(a) + std::string(2000000, '{') + "\n");  // a second corruption, over-long this time
  ca.put(sample("mb1ic1ih4oc1oh4kh1", "bwd-data"));
  ca.save();
  std::string bad = slurp(a + ".bad");
  EXPECT_NE(bad.find("\nfirst broken line\n"), std::string::npos);
  EXPECT_NE(bad.find("\n" + std::string(2000000, '{') + "\n"), std::string::npos) << "the long line was cut";
  EXPECT_EQ(std::count(bad.begin(), bad.end(), '\n'), 4);  // two headers, two lines
  // merge a b -o a, with a third unreadable line in a.
  spit(a, slurp(a) + "third {broken\n");
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(merge_cache_files({a, b}, a, true), 4);
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("1 of 4 lines unreadable and ignored (first: line 4: "), std::string::npos) << err;
  EXPECT_NE(err.find("appended to '" + a + ".bad' by this merge"), std::string::npos) << err;
  bad = slurp(a + ".bad");
  EXPECT_NE(bad.find("set aside by cache merge: 1 unreadable line of '" + a + "'\nthird {broken\n"), std::string::npos)
      << bad;
  EXPECT_NE(bad.find("first broken line"), std::string::npos);
  TuneCache after(a, false);
  after.load();
  EXPECT_TRUE(after.warnings().empty());
  EXPECT_EQ(after.entries().size(), 4u);
}

// A warning quotes the file's content: control bytes, newlines and escape sequences in a cache line
// (found by the cache_line fuzz target: a result status holding them) print escaped, one line.
TEST_F(Cache, WarningsQuotingTheFileAreOnePrintableLine) {
  std::string line = serialize(sample());
  line.replace(line.find("\"status\":\"ok\""), 13, "\"status\":\"ok\\n\\u001b[2J\\r\\u202e\"");
  spit(path("c.jsonl"), line + "\n");
  TuneCache c(path("c.jsonl"), false);
  c.load();
  ASSERT_EQ(c.warnings().size(), 1u);
  const CacheCheck check = check_cache_file(path("c.jsonl"));
  ASSERT_EQ(check.warnings.size(), 1u);
  for (const std::string& w : {c.warnings()[0], check.warnings[0]}) {
    EXPECT_EQ(printable(w), w);
    EXPECT_NE(w.find("unknown status 'ok\\x0a\\x1b[2J\\x0d\\u202e'"), std::string::npos) << w;
  }
}

// Where the default cache lives, and where there is none: never the current folder, and only the
// convlab folder under HOME or XDG_CACHE_HOME is ever created.
TEST_F(Cache, DefaultPathFollowsTheEnvironmentAndRefusesWithoutAHome) {
  struct Env {
    std::string name;
    std::optional<std::string> old;
    Env(const char* n, const char* value) : name(n) {
      if (const char* v = std::getenv(n)) old = v;
      value ? ::setenv(n, value, 1) : ::unsetenv(n);
    }
    ~Env() { old ? ::setenv(name.c_str(), old->c_str(), 1) : ::unsetenv(name.c_str()); }
  };
  Env cc("CONVLAB_CACHE", nullptr), xdg("XDG_CACHE_HOME", nullptr), home("HOME", nullptr);
  const auto refused = [](const char* fragment) {
    try {
      const std::string p = TuneCache::default_path();
      ADD_FAILURE() << "a default cache at " << p;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("XDG_CACHE_HOME"), std::string::npos) << e.what();
    }
  };
  refused("HOME is not set");
  ::setenv("HOME", path("missing").c_str(), 1);
  refused("is not an existing folder");
  ::setenv("HOME", "relative", 1);
  refused("is not an absolute path");
  ::setenv("HOME", dir_.c_str(), 1);
  EXPECT_EQ(TuneCache::default_path(), path(".cache/convlab/autotune.jsonl"));
  ::setenv("XDG_CACHE_HOME", "relative", 1);  // invalid: ignored, as the XDG spec says
  EXPECT_EQ(TuneCache::default_path(), path(".cache/convlab/autotune.jsonl"));
  ::setenv("XDG_CACHE_HOME", path("xdg").c_str(), 1);
  refused("XDG_CACHE_HOME");
  fs::create_directories(path("xdg"));
  EXPECT_EQ(TuneCache::default_path(), path("xdg/convlab/autotune.jsonl"));
  // Saving the default cache creates xdg/convlab (not more); HOME=<missing> is never created.
  TuneCache c(TuneCache::default_path(), false);
  c.put(sample());
  c.save();
  EXPECT_TRUE(fs::exists(path("xdg/convlab/autotune.jsonl")));
  ::unsetenv("XDG_CACHE_HOME");
  ::setenv("HOME", path("missing").c_str(), 1);
  TuneCache named(path("named.jsonl"), false);  // a named file does not need a home
  named.put(sample());
  EXPECT_NO_THROW(named.save());
  EXPECT_FALSE(fs::exists(path("missing")));
  ::setenv("CONVLAB_CACHE", path("nofolder/c.jsonl").c_str(), 1);
  EXPECT_EQ(TuneCache::default_path(), path("nofolder/c.jsonl"));
  TuneCache env_named(TuneCache::default_path(), false);  // its folder is the user's to make
  env_named.put(sample());
  EXPECT_THROW(env_named.save(), WriteError);
  EXPECT_FALSE(fs::exists(path("nofolder")));
}

}  // namespace
}  // namespace convlab

