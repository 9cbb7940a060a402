// Output paths checked before the work, and messages that say what is wrong
// (each bad input is one escaped line and exit 2),
// and nothing is created or half-done.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "tests/support/cli_fixture.hpp"

namespace convlab {
namespace {

using Result = testing::CliResult;
class CliMessages : public testing::CliTest {
 protected:
  void touch(const std::string& name, mode_t mode = 0644) const {
    std::ofstream(path(name)) << "keep me\n";
    ::chmod(path(name).c_str(), mode);
  }
};

// Item 12: every output path is refused before any work (one line: no progress was printed).
TEST_F(CliMessages, OutputPathsAreCheckedBeforeTheWork) {
  touch("ro.json", 0444);
  std::filesystem::create_directories(path("folder"));
  const std::string missing = path("no/such/folder/x.json");
  for (const char* opt : {"--json", "--md", "--csv"}) {
    expect_one_line_error(std::string(kTiny) + opt + " " + missing, "does not exist");
    expect_one_line_error(std::string(kTiny) + opt + " " + path("folder"), "is a folder");
    expect_one_line_error(std::string(kTiny) + opt + " " + path("ro.json"), "read-only");
  }
  EXPECT_EQ(slurp(path("ro.json")), "keep me\n");
  for (const char* opt : {"--json", "--csv"})
    expect_one_line_error(std::string("layers mb1ic4ih8oc4kh3ph1 --dir fwd --threads 1 ") + opt + " " + missing,
                          "does not exist");
  expect_one_line_error("conv mb1ic4ih8oc4kh3ph1 --algo cpu.im2col_gemm --out " + missing, "does not exist");
  expect_one_line_error("conv mb1ic4ih8oc4kh3ph1 --algo cpu.im2col_gemm --out " + path("folder"), "is a folder");
  EXPECT_FALSE(std::filesystem::exists(path("no")));
}

// Item 12: report --out DIR may be created, one level only; parents never; every file checked first.
TEST_F(CliMessages, ReportOutFolderIsCheckedBeforeTheWork) {
  const std::string report = "report --net tiny --batch 1 --iters 1 --warmup 0 --classes 4 --threads 1 --gpu off "
                             "--policy default --out ";
  expect_one_line_error(report + path("a/b"), "does not exist");
  EXPECT_FALSE(std::filesystem::exists(path("a"))) << "a parent folder was created";
  touch("file");
  expect_one_line_error(report + path("file"), "is not a folder");
  std::filesystem::create_directories(path("res"));
  touch("res/report.md", 0444);
  expect_one_line_error(report + path("res"), "read-only");
  EXPECT_EQ(slurp(path("res/report.md")), "keep me\n");
  EXPECT_FALSE(std::filesystem::exists(path("res/train.json")));
  // A new folder whose parent exists is created, with a trailing slash too.
  const Result r = run(report + path("new/"));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(std::filesystem::exists(path("new/report.md")));
  EXPECT_TRUE(std::filesystem::exists(path("new/train.json")));
}

// Item 13: .npy inputs that are not regular files say what they are, and never hang.
TEST_F(CliMessages, NpyInputThatIsNotAFile) {
  std::filesystem::create_directories(path("x.npy"));
  expect_one_line_error("conv mb1ic4ih8oc4kh3ph1 --algo cpu.im2col_gemm --x " + path("x.npy"), "is a folder");
  ASSERT_EQ(::mkfifo(path("fifo.npy").c_str(), 0600), 0);
  expect_one_line_error("conv mb1ic4ih8oc4kh3ph1 --algo cpu.im2col_gemm --x " + path("fifo.npy"),
                        "is a FIFO (named pipe), not a regular file");
  expect_one_line_error("conv mb1ic4ih8oc4kh3ph1 --algo cpu.im2col_gemm --w /dev/zero", "is a device, not a regular file");
  expect_one_line_error(std::string(kTiny) + "--data npy --images " + path("x.npy") + " --labels " + path("x.npy"),
                        "is a folder");
}

// Item 13: report --net names the problem, before any work and before --out is created.
TEST_F(CliMessages, ReportUnknownNetworkListsTheKnownOnes) {
  const Result r = run("report --net bogus --out " + path("r"));
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("unknown network 'bogus' (trainable networks: alexnet, alexnet-owt, tiny)"), std::string::npos)
      << r.err;
  EXPECT_FALSE(std::filesystem::exists(path("r")));
  expect_one_line_error("report --net vgg16 --out " + path("r"), "'vgg16' has no training model");
  expect_one_line_error("train bogus", "unknown network 'bogus'");
}

// Item 13: user text echoed in an error has its control characters escaped: one line, no terminal codes.
TEST_F(CliMessages, EchoedUserTextIsEscaped) {
  const std::string esc = "\"$(printf 'a\\nb\\033[2J')\"";  // a, newline, b, ESC [2J
  struct Case {
    std::string args, want;
  };
  for (const Case& c : {Case{esc, "unknown command 'a\\x0ab\\x1b[2J'"},
                        Case{"train tiny --" + esc, "unknown option '--a\\x0ab\\x1b[2J'"},
                        Case{"train tiny --batch " + esc, "got 'a\\x0ab\\x1b[2J'"},
                        Case{"train tiny --data " + esc, "got 'a\\x0ab\\x1b[2J'"},
                        Case{"train " + esc, "unknown network 'a\\x0ab\\x1b[2J'"},
                        Case{"train tiny --device " + esc, "unknown device 'a\\x0ab\\x1b[2J'"},
                        Case{"conv mb1ic4ih8oc4kh3ph1 --algo " + esc, "unknown algorithm 'a\\x0ab\\x1b[2J'"},
                        Case{"conv mb1ic4ih8oc4kh3ph1 --algo cpu.im2col_gemm --x " + esc, "'a\\x0ab\\x1b[2J'"},
                        Case{"layers mb1ic4ih8oc4kh3ph1 --json " + esc + "/x", "'a\\x0ab\\x1b[2J/x'"},
                        Case{"problem mb1ic4ih8oc4kh3ph1 " + esc, "\\x1b"}}) {
    const Result r = run(c.args);
    EXPECT_EQ(r.code, 2) << c.args << " -> " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << c.args << " -> " << r.err;
    EXPECT_EQ(r.err.find('\x1b'), std::string::npos) << c.args << " -> " << r.err;
    EXPECT_NE(r.err.find(c.want), std::string::npos) << c.args << " -> " << r.err;
  }
}

}  // namespace
}  // namespace convlab
