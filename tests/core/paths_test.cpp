// check_output_path() and printable(): the two helpers every CLI error path uses.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "core/error.hpp"
#include "core/paths.hpp"

namespace convlab {
namespace {

std::string temp_dir() {
  char tmpl[] = "/tmp/convlab_paths_XXXXXX";
  const char* d = mkdtemp(tmpl);
  EXPECT_NE(d, nullptr);
  return d ? d : "/tmp";
}

TEST(Printable, PlainTextUnchanged) {
  EXPECT_EQ(printable("alexnet:conv2 ./a b.json"), "alexnet:conv2 ./a b.json");
  EXPECT_EQ(printable("r\xc3\xa9sultats"), "r\xc3\xa9sultats");  // valid UTF-8 stays
}

TEST(Printable, ControlBytesEscaped) {
  EXPECT_EQ(printable(std::string("a\x07" "b\n\x1b[31m", 9)), "a\\x07b\\x0a\\x1b[31m");
  EXPECT_EQ(printable(std::string("x\0y", 3)), "x\\x00y");
  EXPECT_EQ(printable("\x7f"), "\\x7f");
  EXPECT_EQ(printable("\xc2\x9b"), "\\xc2\\x9b");  // C1 CSI
  EXPECT_EQ(printable("\xff\xc3"), "\\xff\\xc3");  // invalid / truncated UTF-8
}

TEST(OutputPath, WritableTargets) {
  const std::string d = temp_dir();
  EXPECT_EQ(check_output_path(d + "/new.json"), "");
  { std::ofstream(d + "/old.json") << "x"; }
  EXPECT_EQ(check_output_path(d + "/old.json"), "");
}

TEST(OutputPath, Problems) {
  const std::string d = temp_dir();
  EXPECT_NE(check_output_path(d).find("is a folder"), std::string::npos);
  EXPECT_NE(check_output_path(d + "/").find("folder"), std::string::npos);
  EXPECT_NE(check_output_path(d + "/missing/x.json").find("does not exist"), std::string::npos);
  { std::ofstream(d + "/file") << "x"; }
  EXPECT_NE(check_output_path(d + "/file/x.json").find("is not a folder"), std::string::npos);
  EXPECT_NE(check_output_path("/dev/null").find("not a regular file"), std::string::npos);
  EXPECT_NE(check_output_path("").find("empty"), std::string::npos);
  ::chmod((d + "/file").c_str(), 0444);  // read-only also when the tests run as root
  EXPECT_NE(check_output_path(d + "/file").find("read-only"), std::string::npos);
  EXPECT_THROW(require_output_path(d, "--json"), Error);
}

}  // namespace
}  // namespace convlab
