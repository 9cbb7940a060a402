// A results folder written as a whole (core/results_folder.hpp): every file of one run lands at
// once, files of an earlier run that this run does not write go, and an interrupted run leaves the
// previous folder exactly as it was.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "core/error.hpp"
#include "core/results_folder.hpp"

namespace convlab {
namespace {

namespace fs = std::filesystem;

class ResultsFolderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("convlab_results_folder_" + std::to_string(::getpid()));
    fs::remove_all(root_);
    fs::create_directories(root_);
  }
  void TearDown() override { fs::remove_all(root_); }
  std::string path(const std::string& name) const { return (root_ / name).string(); }
  static std::string slurp(const std::string& f) {
    std::ifstream in(f);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
  // Every entry of `dir` (hidden ones too) with its contents.
  static std::map<std::string, std::string> listing(const std::string& dir) {
    std::map<std::string, std::string> out;
    for (const auto& e : fs::directory_iterator(dir))
      out[e.path().filename().string()] = e.is_regular_file() ? slurp(e.path().string()) : "<folder>";
    return out;
  }
  const std::vector<std::string> family_ = {"report.md", "train.json", "layers.json"};
  fs::path root_;
};

TEST_F(ResultsFolderTest, CommitReplacesTheRunsFilesAndRemovesAnEarlierRunsOthers) {
  const std::string d = path("r");
  fs::create_directories(d);
  std::ofstream(d + "/train.json") << "old train";
  std::ofstream(d + "/layers.json") << "old layers";
  std::ofstream(d + "/notes.txt") << "the user's";
  {
    ResultsFolder f(d, family_, "convlab report: --out");
    f.write("train.json", "new train");
    f.write("report.md", "new report");
    // Nothing is in place before the commit.
    EXPECT_EQ(slurp(d + "/train.json"), "old train");
    EXPECT_FALSE(fs::exists(d + "/report.md"));
    EXPECT_EQ(f.commit(), std::vector<std::string>{"layers.json"});
  }
  EXPECT_EQ(listing(d), (std::map<std::string, std::string>{
                            {"train.json", "new train"}, {"report.md", "new report"}, {"notes.txt", "the user's"}}));
  EXPECT_THROW(ResultsFolder(d, family_, "x").write("other.txt", "x"), Error);
}

TEST_F(ResultsFolderTest, WithoutCommitNothingChanges) {
  const std::string d = path("r");
  fs::create_directories(d);
  std::ofstream(d + "/train.json") << "old train";
  const auto before = listing(d);
  {
    ResultsFolder f(d, family_, "convlab report: --out");
    f.write("train.json", "half a run");
  }  // an error thrown mid-run ends here
  EXPECT_EQ(listing(d), before);
  {
    ResultsFolder f(path("new"), family_, "convlab report: --out");  // created here, removed again
    f.write("report.md", "x");
  }
  EXPECT_FALSE(fs::exists(path("new")));
}

TEST_F(ResultsFolderTest, RefusedBeforeAnythingIsWritten) {
  std::ofstream(path("file")) << "x";
  EXPECT_THROW(ResultsFolder(path("file"), family_, "--out"), Error);
  EXPECT_THROW(ResultsFolder(path("no/such"), family_, "--out"), Error);
  const std::string d = path("ro");
  fs::create_directories(d);
  std::ofstream(d + "/layers.json") << "x";
  ::chmod((d + "/layers.json").c_str(), 0444);  // the user's "do not replace": also not removed
  try {
    ResultsFolder f(d, family_, "convlab report: --out");
    FAIL() << "accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("read-only"), std::string::npos) << e.what();
  }
  EXPECT_EQ(listing(d).size(), 1u);
}

// SIGINT in the middle of a run: the process ends as the signal says, the previous folder is intact
// and no staging folder is left; a new folder this run created is gone too.
TEST_F(ResultsFolderTest, AnInterruptLeavesThePreviousFolderIntact) {
  const std::string d = path("r");
  fs::create_directories(d);
  std::ofstream(d + "/train.json") << "old train";
  std::ofstream(d + "/layers.json") << "old layers";
  const auto before = listing(d);
  for (const std::string& dir : {d, path("fresh")}) {
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      ::signal(SIGINT, SIG_DFL);  // as in a terminal (a test runner may start its children ignoring it)
      ResultsFolder f(dir, family_, "convlab report: --out");
      f.write("train.json", "new train");
      f.write("report.md", "new report");
      ::raise(SIGINT);
      ::_exit(0);  // not reached
    }
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFSIGNALED(status)) << "exit " << WEXITSTATUS(status);
    EXPECT_EQ(WTERMSIG(status), SIGINT);
  }
  EXPECT_EQ(listing(d), before);
  EXPECT_FALSE(fs::exists(path("fresh")));
}

// A run killed harder (SIGKILL) leaves its staging folder; the next run on the folder removes it.
TEST_F(ResultsFolderTest, AKilledRunsStagingIsRemovedByTheNext) {
  const std::string d = path("r");
  fs::create_directories(d);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ResultsFolder f(d, family_, "convlab report: --out");
    f.write("train.json", "new train");
    ::raise(SIGKILL);
    ::_exit(0);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_EQ(listing(d).size(), 1u);  // the staging folder
  {
    ResultsFolder f(d, family_, "convlab report: --out");
    f.write("report.md", "r");
    f.commit();
  }
  EXPECT_EQ(listing(d), (std::map<std::string, std::string>{{"report.md", "r"}}));
}

TEST(RunId, FreshForEveryRun) {
  const std::string a = make_run_id(), b = make_run_id();
  EXPECT_NE(a, b);
  EXPECT_EQ(a.size(), std::string("20250101T120000Z-1a2b3c4d").size()) << a;
}

}  // namespace
}  // namespace convlab
