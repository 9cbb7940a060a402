// CONVLAB_ISA from the command line: the cap shows in `algos` and
// `peak`, oneDNN's Winograd is "not available here" below AVX-512, and a level
// the CPU lacks or an unknown one is one line and exit 2 before any work.
#include <gtest/gtest.h>

#include <cstdlib>
#include <sstream>
#include <string>

#include "core/device.hpp"
#include "tests/support/cli_fixture.hpp"

namespace convlab {
namespace {

using Result = testing::CliResult;

// CONVLAB_ISA for the convlab processes this test starts (not for this one:
// its cpu_info() was fixed at its first call).
class IsaCli : public testing::CliTest {
 protected:
  void SetUp() override {
    CliTest::SetUp();
    (void)cpu_info();  // this process's, fixed now, before the tests set CONVLAB_ISA for the children
    const char* old = std::getenv("CONVLAB_ISA");
    had_ = old != nullptr;
    if (old) old_ = old;
  }
  void TearDown() override {
    if (had_) setenv("CONVLAB_ISA", old_.c_str(), 1);
    else unsetenv("CONVLAB_ISA");
    CliTest::TearDown();
  }
  Result run_with(const char* isa, const std::string& args) const {
    setenv("CONVLAB_ISA", isa, 1);
    return run(args);
  }
  // The "available here" column of one algorithm's row in `convlab algos`.
  static std::string available(const std::string& table, const std::string& algo) {
    std::istringstream in(table);
    for (std::string line; std::getline(in, line);)
      if (line.rfind(algo + " ", 0) == 0) return line.substr(62);
    return "<no row for " + algo + ">";
  }

  bool had_ = false;
  std::string old_;
};

TEST_F(IsaCli, AlgosUnderAvx2Cap) {
  const Result r = run_with("avx2", "algos");
  if (cpu_info().detected_isa == "portable") {  // a CPU without AVX2: the cap asks too much
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_NE(r.err.find("CONVLAB_ISA=avx2 but this CPU"), std::string::npos) << r.err;
    return;
  }
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("isa avx2 (CONVLAB_ISA=avx2; this CPU has " + cpu_info().detected_isa + ")"), std::string::npos)
      << r.out;
#ifdef CONVLAB_HAS_ONEDNN
  EXPECT_NE(r.out.find("| oneDNN avx2"), std::string::npos) << r.out;
  EXPECT_EQ(available(r.out, "onednn.winograd").rfind("oneDNN's Winograd needs AVX-512; this CPU has avx2", 0), 0u)
      << r.out;
  EXPECT_EQ(available(r.out, "onednn.direct"), "yes") << r.out;
  const Result j = run_with("avx2", "algos --json");
  ASSERT_EQ(j.code, 0) << j.err;
  EXPECT_NE(j.out.find("{\"name\": \"onednn.winograd\", \"device\": \"cpu\", \"family\": \"winograd\", "
                       "\"available\": false, \"reason\": \"oneDNN's Winograd needs AVX-512"),
            std::string::npos)
      << j.out;
#endif
  EXPECT_EQ(available(r.out, "cpu.direct"), "yes") << r.out;
}

// Without a cap the table says what the CPU has; oneDNN's Winograd is
// available exactly on an AVX-512 CPU.
TEST_F(IsaCli, AlgosWithoutCap) {
  unsetenv("CONVLAB_ISA");
  const Result r = run("algos");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("isa " + cpu_info().detected_isa + " (all this CPU has"), std::string::npos) << r.out;
#ifdef CONVLAB_HAS_ONEDNN
  if (cpu_info().detected_isa == "avx512") {
    EXPECT_EQ(available(r.out, "onednn.winograd"), "yes") << r.out;
  } else {
    EXPECT_NE(available(r.out, "onednn.winograd").find("needs AVX-512"), std::string::npos) << r.out;
  }
#endif
}

TEST_F(IsaCli, PeakShowsTheCappedIsa) {
  const Result r = run_with("portable", "peak --threads 1");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find(" | portable | "), std::string::npos) << r.out;  // the fingerprint
  EXPECT_NE(r.out.find("isa portable (CONVLAB_ISA=portable"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("threads  1  portable"), std::string::npos) << r.out;
}

TEST_F(IsaCli, BadCapIsOneLine) {
  setenv("CONVLAB_ISA", "avx1024", 1);
  expect_one_line_error("algos", "CONVLAB_ISA='avx1024' is not an ISA level (expected avx512, avx2 or portable)");
  expect_one_line_error("problem mb1ic4ih8oc4kh3", "CONVLAB_ISA='avx1024'");
  if (cpu_info().detected_isa != "avx512") {
    setenv("CONVLAB_ISA", "avx512", 1);
    expect_one_line_error("algos", "CONVLAB_ISA=avx512 but this CPU");
  }
}

}  // namespace
}  // namespace convlab
