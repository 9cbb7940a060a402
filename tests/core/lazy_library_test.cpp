// core/lazy_library and core/cuda_libraries: a library is opened on its first
// use and says why in one line when it cannot be; the CUDA vendor libraries
// (cuDNN, cuBLAS, cuFFT, NCCL) are not in the process at start, nor after the
// device query on a machine without a GPU.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "core/device.hpp"
#include "core/error.hpp"
#include "core/lazy_library.hpp"
#if CONVLAB_HAS_CUDA
#include "core/cuda_libraries.hpp"
#endif

namespace convlab {
namespace {

// The files of this process's mappings whose name contains `part`.
std::vector<std::string> mapped(const std::string& part) {
  std::ifstream maps("/proc/self/maps");
  std::vector<std::string> files;
  for (std::string line; std::getline(maps, line);)
    if (auto at = line.find('/'); at != std::string::npos && line.find(part, at) != std::string::npos)
      files.push_back(line.substr(at));
  return files;
}

TEST(LazyLibrary, MissingFileSaysWhyInOneLine) {
  const LazyLibrary lib("Nothing", {"libconvlab_no_such_library.so.7", "/nonexistent/libconvlab_no_such_library.so.7"});
  const std::string why = lib.unavailable_reason();
  EXPECT_FALSE(lib.available());
  EXPECT_EQ(why.rfind("Nothing not loaded: libconvlab_no_such_library.so.7: cannot open shared object file", 0), 0u)
      << why;
  EXPECT_EQ(why.find('\n'), std::string::npos) << why;
  try {
    (void)lib.address("anything");
    FAIL() << "a symbol of a library that is not there";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), why);
  }
}

TEST(LazyLibrary, LaterNameThatExistsGivesTheReasonWhenTheFirstIsNotFound) {
  // /proc/self/status exists but is no ELF file: its error, not "No such file", is the reason.
  const LazyLibrary lib("Odd", {"libconvlab_no_such_library.so.7", "/proc/self/status"});
  const std::string why = lib.unavailable_reason();
  EXPECT_EQ(why.rfind("Odd not loaded: /proc/self/status", 0), 0u) << why;
}

TEST(LazyLibrary, OpensOnFirstUseAndBindsTypedEntryPoints) {
  const LazyLibrary lib("libm", {"libconvlab_no_such_library.so.7", "libm.so.6"});
  EXPECT_TRUE(lib.available()) << lib.unavailable_reason();
  decltype(&::cos) cosine = nullptr;
  lazy_bind(lib, cosine, "cos");
  ASSERT_NE(cosine, nullptr);
  EXPECT_EQ(cosine(0.0), 1.0);
  try {
    (void)lib.address("convlab_no_such_symbol");
    FAIL() << "a missing symbol was found";
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_EQ(m.rfind("libm not loaded: ", 0), 0u) << m;
    EXPECT_NE(m.find("convlab_no_such_symbol"), std::string::npos) << m;
  }
}

TEST(LazyLibrary, ManyThreadsOpenItOnce) {
  const LazyLibrary lib("libm", {"libm.so.6"});
  std::vector<std::thread> threads;
  std::vector<void*> seen(8);
  for (size_t i = 0; i < seen.size(); ++i) threads.emplace_back([&, i] { seen[i] = lib.address("sin"); });
  for (auto& t : threads) t.join();
  for (void* p : seen) EXPECT_EQ(p, seen[0]);
}

#if CONVLAB_HAS_CUDA
// The vendor libraries' mappings in this process.
std::vector<std::string> vendor_mappings() {
  std::vector<std::string> all;
  for (const char* lib : {"libcudnn", "libcublas", "libcufft", "libnccl", "libcudart.so"})
    for (std::string& f : mapped(lib)) all.push_back(std::move(f));
  return all;
}
// Before main: before any test could have used a library.
const std::vector<std::string> g_vendor_at_start = vendor_mappings();

TEST(CudaLibraries, NoneIsInTheProcessAtStart) {
  EXPECT_TRUE(g_vendor_at_start.empty()) << g_vendor_at_start.size() << " mappings, first " << g_vendor_at_start[0];
}

TEST(CudaLibraries, TheDeviceQueryOpensNoneWithoutADevice) {
  const CudaInfo& info = cuda_info();
  if (info.available) GTEST_SKIP() << "a CUDA device is present (" << info.name << "): the query opens cuDNN";
  const std::vector<std::string> now = vendor_mappings();
  EXPECT_TRUE(now.empty()) << now.size() << " mappings, first " << now[0];
}

// Run by the ctest lazy_libs.without_vendor_libraries with the folders holding
// the libraries hidden (CONVLAB_TEST_CUDA_LIBS_HIDDEN=1): each says why.
TEST(CudaLibraries, HiddenLibrariesSayWhy) {
  const char* hidden = std::getenv("CONVLAB_TEST_CUDA_LIBS_HIDDEN");
  if (!hidden || std::string(hidden) != "1")
    GTEST_SKIP() << "runs in lazy_libs.without_vendor_libraries, where the libraries' folders are hidden";
  const std::pair<CudaLibrary, const char*> libs[] = {
      {CudaLibrary::cudnn, "cuDNN not loaded: libcudnn"},
      {CudaLibrary::cublas, "cuBLAS not loaded: libcublas"},
      {CudaLibrary::cufft, "cuFFT not loaded: libcufft"}};
  for (const auto& [which, start] : libs) {
    const std::string why = cuda_library(which).unavailable_reason();
    EXPECT_EQ(why.rfind(start, 0), 0u) << why;
    EXPECT_NE(why.find("cannot open shared object file"), std::string::npos) << why;
  }
}
#endif

}  // namespace
}  // namespace convlab
