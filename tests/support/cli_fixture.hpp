// A GoogleTest fixture that runs the freshly built convlab binary as a user
// would: a private temporary directory, the command's exit code, stdout and
// stderr. Shared by every CLI test (tools/, autotune/, train/).
#pragma once
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace convlab::testing {

struct CliResult {
  int code;  // exit status; -1 when the process did not exit normally (a crash)
  std::string out, err;
};

class CliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = std::filesystem::temp_directory_path() /
           ("convlab_" + std::string(info->test_suite_name()) + "_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
    // The default autotune cache of every run here is the test's own: `tune` keeps find's results in
    // it, and nothing another test (or the user) stored there may answer for this one.
    ::setenv("CONVLAB_CACHE", default_cache().c_str(), 1);
  }
  void TearDown() override {
    ::unsetenv("CONVLAB_CACHE");
    std::filesystem::remove_all(dir_);
  }
  std::string default_cache() const { return path("default-autotune.jsonl"); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  // `convlab train` on the tiny network at its smallest: each run is a fraction of a second.
  static constexpr const char* kTiny = "train tiny --batch 1 --iters 1 --warmup 0 --classes 4 --threads 1 ";

  static std::string slurp(const std::string& file) {
    std::ifstream in(file);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
  // Runs `convlab ARGS` (ARGS is shell text) and captures everything.
  CliResult run(const std::string& args) const {
    const std::string out = path("stdout.txt"), err = path("stderr.txt");
    // CONVLAB_BINARY_DIR in the environment overrides the build folder's path
    // compiled in: a build carried to another machine (scripts/gpu-check.sh).
    const char* moved = std::getenv("CONVLAB_BINARY_DIR");
    const std::string dir = moved && *moved ? moved : CONVLAB_BINARY_DIR;
    const std::string cmd = dir + "/convlab " + args + " >" + out + " 2>" + err;
    const int status = std::system(cmd.c_str());
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, slurp(out), slurp(err)};
  }
  // Bad input: exit code 2 (not a crash) and exactly one line on stderr containing `fragment`.
  void expect_one_line_error(const std::string& args, const std::string& fragment) const {
    const CliResult r = run(args);
    EXPECT_EQ(r.code, 2) << args << "\n" << r.err;
    EXPECT_NE(r.err.find(fragment), std::string::npos) << args << " -> " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << args << " -> " << r.err;
  }

  std::filesystem::path dir_;
};

}  // namespace convlab::testing
