// `convlab train` / `convlab report` as a user runs them (tiny network, fast).
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace {

struct Result {
  int code;
  std::string out, err;
};

class TrainCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("convlab_train_cli_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string path(const std::string& n) const { return (dir_ / n).string(); }
  static std::string slurp(const std::string& f) {
    std::ifstream in(f);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
  Result run(const std::string& args) const {
    const std::string out = path("stdout.txt"), err = path("stderr.txt");
    const std::string cmd = std::string(CONVLAB_BINARY_DIR) + "/convlab " + args + " >" + out + " 2>" + err;
    const int status = std::system(cmd.c_str());
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, slurp(out), slurp(err)};
  }
  std::filesystem::path dir_;
};

TEST_F(TrainCli, Help) {
  for (const char* c : {"train", "report"}) {
    const Result r = run(std::string(c) + " --help");
    EXPECT_EQ(r.code, 0);
    EXPECT_NE(r.out.find(std::string("usage: convlab ") + c), std::string::npos);
  }
  EXPECT_NE(run("train --help").out.find("--first-layer-grad"), std::string::npos);
}

TEST_F(TrainCli, BadArgumentsAreOneLineErrors) {
  for (const char* a : {"train", "train vgg16", "train tiny --batch 0", "train tiny --policy nope",
                        "train tiny --data npy", "train tiny --lr x", "train tiny --policy fixed:cpu.reference",
                        "train tiny --data npy --images /nonexistent.npy --labels /nonexistent.npy"}) {
    const Result r = run(a);
    EXPECT_EQ(r.code, 2) << a << "\n" << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << a << " -> " << r.err;
  }
}

TEST_F(TrainCli, TinyRunWritesJsonAndReport) {
  const Result r = run("train tiny --batch 2 --iters 2 --warmup 1 --classes 4 --threads 2 --policy default,find --json " +
                       path("t.json") + " --md " + path("t.md"));
  if (r.code == 1) {
    // No algorithm for the default policy yet (only the reference is registered): said so, and skipped.
    EXPECT_NE(r.out.find("skipped"), std::string::npos) << r.out;
    GTEST_SKIP() << "no policy can run here yet";
  }
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("## Iteration time per policy"), std::string::npos);
  EXPECT_NE(r.out.find("| default |"), std::string::npos);
  const std::string j = slurp(path("t.json"));
  EXPECT_NE(j.find("\"policy\": \"default\""), std::string::npos);
  EXPECT_NE(j.find("\"losses\""), std::string::npos);
  EXPECT_EQ(slurp(path("t.md")), r.out);
}

}  // namespace
