#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "core/error.hpp"
#include "core/npy.hpp"

namespace convlab {
namespace {

class Npy : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("convlab_npy_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  void write_raw(const std::string& name, const std::string& bytes) const {
    std::ofstream(path(name), std::ios::binary) << bytes;
  }
  static std::string header_v1(const std::string& dict) {
    std::string h = dict;
    const size_t total = 10 + h.size() + 1;
    h.append((64 - total % 64) % 64, ' ');
    h += '\n';
    std::string out = "\x93NUMPY";
    out += char(1);
    out += char(0);
    out += char(h.size() & 0xff);
    out += char(h.size() >> 8);
    return out + h;
  }
  void expect_error(const std::string& name, const char* fragment) const {
    try {
      read_npy(path(name));
      ADD_FAILURE() << name << " was accepted";
    } catch (const Error& e) {
      const std::string msg = e.what();
      EXPECT_NE(msg.find(fragment), std::string::npos) << msg;
      EXPECT_NE(msg.find(name), std::string::npos) << "message should name the file: " << msg;
      EXPECT_EQ(msg.find('\n'), std::string::npos);
    }
  }
  std::filesystem::path dir_;
};

TEST_F(Npy, RoundTrip) {
  Tensor t({2, 3, 4, 5});
  for (int64_t i = 0; i < t.size(); ++i) t.data()[i] = float(i) * 0.5f - 7.f;
  write_npy(path("a.npy"), t);
  const Tensor u = read_npy(path("a.npy"));
  EXPECT_EQ(u.shape, t.shape);
  for (int64_t i = 0; i < t.size(); ++i) ASSERT_EQ(u.data()[i], t.data()[i]);
  // data starts on a 64-byte boundary
  EXPECT_EQ(std::filesystem::file_size(path("a.npy")) % 64, (size_t(t.size()) * 4) % 64);
}

TEST_F(Npy, OneDimensionalAndScalarShapes) {
  Tensor t({7});
  for (int i = 0; i < 7; ++i) t.data()[i] = float(i);
  write_npy(path("v.npy"), t);
  EXPECT_EQ(read_npy(path("v.npy")).shape, std::vector<int64_t>{7});
}

TEST_F(Npy, ReadsNumpyWrittenHeader) {
  // What numpy 1.x writes for np.zeros((2, 3), np.float32).
  std::string bytes = header_v1("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }");
  bytes.append(24, '\0');
  write_raw("np.npy", bytes);
  const Tensor t = read_npy(path("np.npy"));
  EXPECT_EQ(t.shape, (std::vector<int64_t>{2, 3}));
}

TEST_F(Npy, RejectsWrongDtype) {
  std::string bytes = header_v1("{'descr': '<f8', 'fortran_order': False, 'shape': (2,), }");
  bytes.append(16, '\0');
  write_raw("f8.npy", bytes);
  expect_error("f8.npy", "dtype '<f8'");
  bytes = header_v1("{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }");
  bytes.append(8, '\0');
  write_raw("be.npy", bytes);
  expect_error("be.npy", "dtype '>f4'");
}

TEST_F(Npy, RejectsFortranOrder) {
  std::string bytes = header_v1("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }");
  bytes.append(16, '\0');
  write_raw("f.npy", bytes);
  expect_error("f.npy", "Fortran");
}

TEST_F(Npy, RejectsTruncatedAndLyingFiles) {
  std::string bytes = header_v1("{'descr': '<f4', 'fortran_order': False, 'shape': (4, 4), }");
  write_raw("trunc.npy", bytes + std::string(60, '\0'));
  expect_error("trunc.npy", "truncated");
  write_raw("long.npy", bytes + std::string(68, '\0'));
  expect_error("long.npy", "disagrees with the file size");
  write_raw("short.npy", std::string("\x93NUM", 4));
  expect_error("short.npy", "truncated");
  write_raw("magic.npy", std::string("NOTNUMPY12345678"));
  expect_error("magic.npy", "bad magic");
  write_raw("hdr.npy", bytes.substr(0, 30));
  expect_error("hdr.npy", "truncated header");
  std::string v9 = bytes;
  v9[6] = 9;
  write_raw("v9.npy", v9);
  expect_error("v9.npy", "version 9");
  write_raw("shape.npy", header_v1("{'descr': '<f4', 'fortran_order': False, 'shape': (2, x), }"));
  expect_error("shape.npy", "bad shape entry");
  expect_error("missing.npy", "cannot open");
}

// NumPy reads the header as a Python dict, where a repeated key keeps its last value: a reader taking
// the first would see another array. Repeated and unknown keys are refused.
TEST_F(Npy, HeaderKeysAreExactlyNumpys) {
  const std::string data(16 * 4, '\0');
  write_raw("dup.npy", header_v1("{'descr': '<f4', 'fortran_order': False, 'shape': (4, 4), 'shape': (2, 8), }") + data);
  expect_error("dup.npy", "header names 'shape' twice");
  write_raw("dup2.npy", header_v1("{'descr': '<f4', \"descr\": '<f8', 'fortran_order': False, 'shape': (16,), }") + data);
  expect_error("dup2.npy", "header names 'descr' twice");
  write_raw("extra.npy", header_v1("{'descr': '<f4', 'fortran_order': False, 'shape': (16,), 'align': True, }") + data);
  expect_error("extra.npy", "unexpected key 'align'");
  write_raw("nokey.npy", header_v1("{'descr': '<f4', 'shape': (16,), }") + data);
  expect_error("nokey.npy", "no 'fortran_order' entry");
  write_raw("after.npy", header_v1("{'descr': '<f4', 'fortran_order': False, 'shape': (16,), } x") + data);
  expect_error("after.npy", "after the closing '}'");
  // Key order and quotes as NumPy may write them.
  write_raw("ok.npy", header_v1("{\"shape\": (4, 4), \"fortran_order\": False, \"descr\": \"<f4\"}") + data);
  EXPECT_EQ(read_npy(path("ok.npy")).shape, (std::vector<int64_t>{4, 4}));
}

TEST_F(Npy, SpecialFilesAreRefusedBeforeOpening) {
  const std::string fifo = path("fifo.npy");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  expect_error("fifo.npy", "is a FIFO (named pipe), not a regular file");  // open() would wait for a writer
  std::filesystem::create_directories(path("dir.npy"));
  expect_error("dir.npy", "is a folder");
  try {
    read_npy("/dev/zero");
    ADD_FAILURE() << "/dev/zero accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("is a device, not a regular file"), std::string::npos) << e.what();
  }
}

// A write that fails after the work -- here a file-size limit, as a full disk would -- is a WriteError
// naming the file and the system's reason, and leaves no temp file.
TEST_F(Npy, WriteFailureNamesTheFileAndTheReason) {
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::signal(SIGXFSZ, SIG_IGN);
    struct rlimit lim {1024, 1024};
    ::setrlimit(RLIMIT_FSIZE, &lim);
    try {
      write_file_atomic(path("big.txt"), std::string(4096, 'x'));
      ::_exit(10);
    } catch (const WriteError& e) {
      const std::string m = e.what();
      ::_exit(m.find("cannot write '" + path("big.txt") + "': File too large") == std::string::npos ? 11 : 0);
    } catch (...) {
      ::_exit(12);
    }
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status)) << "the write killed the process (signal " << WTERMSIG(status) << ")";
  EXPECT_EQ(WEXITSTATUS(status), 0) << "10: no error, 11: wrong message, 12: not a WriteError";
  for (const auto& e : std::filesystem::directory_iterator(dir_))
    EXPECT_EQ(e.path().string().find(".tmp."), std::string::npos) << "temporary file left behind: " << e.path();
}

TEST_F(Npy, FailedWriteLeavesOldFileIntact) {
  Tensor t({3});
  t.data()[0] = 1;
  t.data()[1] = 2;
  t.data()[2] = 3;
  write_npy(path("keep.npy"), t);
  EXPECT_THROW(write_npy((dir_ / "no_such_dir" / "x.npy").string(), t), Error);
  EXPECT_EQ(read_npy(path("keep.npy")).data()[2], 3.f);
  for (const auto& e : std::filesystem::directory_iterator(dir_))
    EXPECT_EQ(e.path().string().find(".tmp."), std::string::npos) << "temporary file left behind: " << e.path();
}

}  // namespace
}  // namespace convlab
