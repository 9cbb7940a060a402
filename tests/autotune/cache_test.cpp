// The autotune cache: round trip, atomic replacement, corrupt / truncated /
// foreign files, version and device mismatches, staleness, two concurrent
// writer processes, merge.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include "autotune/build_identity.hpp"
#include "autotune/cache.hpp"
#include "autotune/json_value.hpp"
#include "core/build_id.hpp"
#include "core/problem.hpp"
#include "tests/autotune/planted.hpp"

namespace convlab {
namespace {

namespace fs = std::filesystem;

class Cache : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("convlab_cache_" + std::to_string(::getpid()) + "_" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& n) const { return (dir_ / n).string(); }
  static std::string slurp(const std::string& f) {
    std::ifstream in(f, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
  static void spit(const std::string& f, const std::string& s) {
    std::ofstream(f, std::ios::binary) << s;
  }
  fs::path dir_;
};

CacheEntry sample(const std::string& problem = "mb2ic4ih8oc4oh8kh3ph1", const std::string& dir = "fwd", double at = 100) {
  CacheEntry e;
  e.key = make_cache_key(parse_problem(problem), parse_direction(dir), ExecContext{});
  e.tuned_at = at;
  AlgoPerf a;
  a.algo = "cpu.fast";
  a.time = 1.25e-3;
  a.spread = 0.031;
  a.reps = 9;
  a.workspace = 4096;
  a.max_rel_error = 3.5e-7;
  a.err_ratio = 0.02;
  a.note = "quote \" backslash \\ newline \n tab \t";
  AlgoPerf b;
  b.algo = "cpu.wrong";
  b.status = PerfStatus::inaccurate;
  b.max_rel_error = 0.5;
  b.err_ratio = 1e6;
  b.deterministic = false;
  AlgoPerf c;
  c.algo = "cpu.huge";
  c.status = PerfStatus::over_workspace;
  c.workspace = size_t(1) << 40;
  a.lo = 1.2e-3;
  a.hi = 1.3e-3;
  // Measured by this build: the version a planted (unregistered) algorithm has.
  for (AlgoPerf* r : {&a, &b, &c}) r->code = algorithm_version(testing::Planted(r->algo)).code;
  e.results = {a, b, c};
  return e;
}

void expect_same(const CacheEntry& x, const CacheEntry& y) {
  EXPECT_EQ(x.key, y.key);
  EXPECT_EQ(x.tuned_at, y.tuned_at);
  EXPECT_EQ(x.workspace_limit, y.workspace_limit);
  ASSERT_EQ(x.results.size(), y.results.size());
  for (size_t i = 0; i < x.results.size(); ++i) {
    const AlgoPerf &a = x.results[i], &b = y.results[i];
    EXPECT_EQ(a.algo, b.algo);
    EXPECT_EQ(a.status, b.status);
    EXPECT_TRUE(a.time == b.time || (std::isnan(a.time) && std::isnan(b.time)));
    EXPECT_EQ(a.spread, b.spread);
    EXPECT_EQ(a.reps, b.reps);
    EXPECT_EQ(a.workspace, b.workspace);
    EXPECT_TRUE(a.max_rel_error == b.max_rel_error || (std::isnan(a.max_rel_error) && std::isnan(b.max_rel_error)));
    EXPECT_TRUE(a.err_ratio == b.err_ratio || (std::isnan(a.err_ratio) && std::isnan(b.err_ratio)));
    EXPECT_EQ(a.deterministic, b.deterministic);
    EXPECT_EQ(a.note, b.note);
    EXPECT_TRUE(a.lo == b.lo || (std::isnan(a.lo) && std::isnan(b.lo)));
    EXPECT_TRUE(a.hi == b.hi || (std::isnan(a.hi) && std::isnan(b.hi)));
    EXPECT_EQ(a.code, b.code);
    EXPECT_EQ(a.libs, b.libs);
  }
}

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

}  // namespace
}  // namespace convlab
