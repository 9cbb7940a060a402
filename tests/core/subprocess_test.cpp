// run_process: both streams captured in full, the exit status, the timeout, a
// program that cannot start.
#include <gtest/gtest.h>

#include "core/error.hpp"
#include "core/subprocess.hpp"
#include "core/timing.hpp"

namespace convlab {
namespace {

TEST(Subprocess, CapturesBothStreamsAndTheExitStatus) {
  // 200 KB on each stream, more than a pipe holds: neither may block the other.
  const ProcessResult r = run_process(
      {"/bin/sh", "-c", "head -c 200000 /dev/zero | tr '\\0' a; head -c 200000 /dev/zero | tr '\\0' b >&2; exit 3"},
      60);
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_EQ(r.out, std::string(200000, 'a'));
  EXPECT_EQ(r.err, std::string(200000, 'b'));
}

TEST(Subprocess, KillsWhatRunsPastItsTimeout) {
  const double t0 = now_seconds();
  const ProcessResult r = run_process({"/bin/sh", "-c", "echo started; exec sleep 30"}, 0.5);
  EXPECT_TRUE(r.timed_out);
  EXPECT_EQ(r.exit_code, -1);
  EXPECT_EQ(r.out, "started\n");
  EXPECT_LT(now_seconds() - t0, 10);
}

TEST(Subprocess, AProgramThatCannotStartIsOneError) {
  EXPECT_THROW(run_process({"/nonexistent/convlab-helper"}, 5), Error);
  EXPECT_THROW(run_process({}, 5), Error);
  EXPECT_FALSE(executable_dir().empty());
}

}  // namespace
}  // namespace convlab
