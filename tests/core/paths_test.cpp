// check_output_path(), InputFile, same_file() and printable(): the helpers every
// CLI input, output and error path uses.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <future>
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

TEST(Printable, BidiControlsAndLineSeparatorsEscaped) {
  // A right-to-left override would make the rest of a message read backwards on a terminal.
  EXPECT_EQ(printable("ab\xe2\x80\xae" "cd"), "ab\\u202ecd");
  EXPECT_EQ(printable("\xe2\x81\xa6x\xe2\x81\xa9"), "\\u2066x\\u2069");
  EXPECT_EQ(printable("a\xe2\x80\xa8" "b"), "a\\u2028b");
  EXPECT_EQ(printable("\xd8\x9c"), "\\u061c");
  // Other format characters and ordinary non-ASCII text are kept.
  EXPECT_EQ(printable("\xe2\x80\x8b"), "\xe2\x80\x8b");
  EXPECT_EQ(printable("\xe6\x97\xa5\xe6\x9c\xac"), "\xe6\x97\xa5\xe6\x9c\xac");
}

TEST(Printable, VisibleCharacters) {
  EXPECT_TRUE(has_visible_character("conv2"));
  EXPECT_TRUE(has_visible_character(" a "));
  EXPECT_TRUE(has_visible_character("\xc3\xa9"));
  EXPECT_FALSE(has_visible_character(""));
  EXPECT_FALSE(has_visible_character("   \t"));
  EXPECT_FALSE(has_visible_character("\xe2\x80\x8b\xe2\x80\x8d\xef\xbb\xbf"));  // ZWSP, ZWJ, BOM
  EXPECT_FALSE(has_visible_character("\xc2\xa0\xe3\x80\x80\xe2\x81\xa0"));      // NBSP, ideographic space, WJ
}

// Every special file is refused before it is opened: a FIFO without a writer would block open()
// forever, /dev/zero would never end. Each refusal is one line naming the file and what it is.
TEST(InputFile, RefusesEverythingButARegularFile) {
  const std::string d = temp_dir();
  const std::string fifo = d + "/fifo", sock = d + "/sock", loop = d + "/loop";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  const int s = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, sock.c_str(), sizeof addr.sun_path - 1);
  ASSERT_EQ(::bind(s, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(::symlink(loop.c_str(), loop.c_str()), 0);
  const auto refused = [&fifo](const std::string& p, const char* fragment) {
    // In a thread with a deadline: a blocked open() is a failure, not a stuck test run (a writer
    // opening the FIFO releases it).
    auto f = std::async(std::launch::async, [p] {
      try {
        InputFile in(p, "problem file");
        return std::string("opened");
      } catch (const Error& e) {
        return std::string(e.what());
      }
    });
    if (f.wait_for(std::chrono::seconds(10)) != std::future_status::ready) {
      ADD_FAILURE() << p << ": open blocked";
      const int w = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK);
      if (w >= 0) ::close(w);
    }
    const std::string m = f.get();
    EXPECT_NE(m.find(fragment), std::string::npos) << m;
    EXPECT_NE(m.find("problem file '" + p + "'"), std::string::npos) << m;
    EXPECT_EQ(m.find('\n'), std::string::npos) << m;
  };
  refused(fifo, "is a FIFO (named pipe), not a regular file");
  refused(sock, "is a socket, not a regular file");
  refused("/dev/zero", "is a device, not a regular file");
  refused(d, "is a folder");
  refused(loop, "cannot open: Too many levels of symbolic links");
  refused(d + "/missing", "cannot open: No such file");
  ::close(s);
  // missing_ok: a missing file is no error; a FIFO still is.
  EXPECT_FALSE(InputFile(d + "/missing", "cache", true).exists());
  EXPECT_THROW(InputFile(fifo, "cache", true), Error);
}

TEST(InputFile, ReadsARegularFileWithinItsLimit) {
  const std::string d = temp_dir();
  { std::ofstream(d + "/f") << "0123456789"; }
  ASSERT_EQ(::symlink((d + "/f").c_str(), (d + "/link").c_str()), 0);
  EXPECT_EQ(InputFile(d + "/link", "list").read_all(10), "0123456789");
  try {
    InputFile(d + "/f", "list").read_all(9);
    FAIL() << "read past the limit";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("is larger than 9 bytes"), std::string::npos) << e.what();
  }
}

// Two outputs that would end up as one file: refused, whatever the spelling.
TEST(OutputPath, SameFileThroughDifferentSpellings) {
  const std::string d = temp_dir();
  ASSERT_EQ(::mkdir((d + "/sub").c_str(), 0755), 0);
  EXPECT_TRUE(same_file(d + "/x.json", d + "/x.json"));
  EXPECT_TRUE(same_file(d + "/x.json", d + "/./x.json"));          // not there yet: by canonical folder
  EXPECT_TRUE(same_file(d + "/x.json", d + "/sub/../x.json"));
  ASSERT_EQ(::symlink((d + "/sub").c_str(), (d + "/alias").c_str()), 0);
  EXPECT_TRUE(same_file(d + "/sub/x.json", d + "/alias/x.json"));  // a symlinked folder
  { std::ofstream(d + "/x.json") << "x"; }
  ASSERT_EQ(::symlink((d + "/x.json").c_str(), (d + "/l.json").c_str()), 0);
  EXPECT_TRUE(same_file(d + "/x.json", d + "/l.json"));            // existing: by inode
  EXPECT_FALSE(same_file(d + "/x.json", d + "/y.json"));
  EXPECT_FALSE(same_file(d + "/x.json", d + "/sub/x.json"));
  try {
    require_distinct_outputs({{"--json", d + "/a"}, {"--md", d + "/b"}, {"--csv", d + "/./a"}}, "convlab train");
    FAIL() << "accepted";
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("--json"), std::string::npos) << m;
    EXPECT_NE(m.find("--csv"), std::string::npos) << m;
    EXPECT_NE(m.find("name the same file"), std::string::npos) << m;
  }
  EXPECT_NO_THROW(require_distinct_outputs({{"--json", d + "/a"}, {"--md", d + "/b"}}, "convlab train"));
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
