// The CUDA algorithms on a machine without a GPU: listed, unavailable with a
// "no CUDA device" reason without opening any vendor library, and the
// vendor-library paths (cuBLAS, cuFFT) fail with one clean convlab::Error
// instead of crashing. On a GPU machine these tests skip; the registry sweep
// (tests/algorithms) runs the algorithms for real.
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "algorithms/registry.hpp"
#include "core/error.hpp"

namespace convlab {
namespace {

std::vector<const Algorithm*> cuda_algorithms() {
  std::vector<const Algorithm*> v;
  for (const Algorithm* a : registry())
    if (a->device() == DeviceKind::cuda && a->name().substr(0, 5) == "cuda.") v.push_back(a);
  return v;
}

TEST(CudaNoDevice, AlgorithmsAreListedAsUnavailable) {
#if !CONVLAB_HAS_CUDA
  GTEST_SKIP() << "built without CUDA";
#endif
  if (cuda_info().available) GTEST_SKIP() << "a CUDA device is present: " << cuda_info().name;
  ASSERT_FALSE(cuda_algorithms().empty());
  for (const Algorithm* a : cuda_algorithms()) {
    const std::string why = a->unavailable_reason();
    EXPECT_EQ(why.rfind("no CUDA device", 0), 0u) << a->name() << ": " << why;
  }
}

// The mapped files of this process that are CUDA vendor libraries.
std::set<std::string> vendor_mappings() {
  std::ifstream maps("/proc/self/maps");
  std::set<std::string> files;
  for (std::string line; std::getline(maps, line);)
    if (auto at = line.find('/'); at != std::string::npos)
      for (const char* lib : {"libcudnn", "libcublas", "libcufft", "libnccl", "libcudart.so"})
        if (line.find(lib, at) != std::string::npos) files.insert(line.substr(at));
  return files;
}
// Before main: before any test could have used a library.
const std::set<std::string> g_vendor_at_start = vendor_mappings();

// `convlab algos` on a machine without a GPU: every entry's reason and
// support answer, and no vendor library opened for them (the libraries are
// opened on first use, core/cuda_libraries.hpp).
TEST(CudaNoDevice, ListingOpensNoVendorLibrary) {
#if !CONVLAB_HAS_CUDA
  GTEST_SKIP() << "built without CUDA";
#endif
  for (const std::string& f : g_vendor_at_start) ADD_FAILURE() << "mapped at start: " << f;
  if (cuda_info().available) GTEST_SKIP() << "a CUDA device is present: " << cuda_info().name;
  const std::set<std::string> before = vendor_mappings();
  const ConvProblem p = parse_problem("mb2ic4ih8oc4oh8kh3ph1");
  for (const Algorithm* a : registry()) {
    if (a->device() != DeviceKind::cuda) continue;
    EXPECT_FALSE(a->unavailable_reason().empty()) << a->name();
    for (Direction d : kAllDirections) (void)a->supports(p, d);
  }
  const std::set<std::string> after = vendor_mappings();
  for (const std::string& f : after) EXPECT_TRUE(before.count(f)) << "opened by the listing: " << f;
}

#if CONVLAB_HAS_CUDA
// Calls run() directly (bypassing ConvRunner's availability check) with host
// buffers: the first device / library call must throw convlab::Error.
void expect_clean_error(const char* name, const char* needle) {
  if (cuda_info().available) GTEST_SKIP() << "a CUDA device is present";
  const Algorithm* a = find_algorithm(name);
  ASSERT_NE(a, nullptr) << name;
  const ConvProblem p = parse_problem("mb2ic4ih8oc4oh8kh3ph1");
  std::vector<float> src(p.src_elems()), wei(p.wei_elems()), dst(p.dst_elems());
  std::vector<unsigned char> ws(a->workspace_bytes(p, Direction::fwd) + 1);
  ExecContext ctx;
  ctx.device = DeviceKind::cuda;
  for (Direction d : kAllDirections) {
    if (!a->supports(p, d)) continue;
    try {
      a->run(p, d, ConvBuffers{src.data(), wei.data(), dst.data()}, ws.data(), ctx);
      ADD_FAILURE() << name << " ran without a device";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  }
}

TEST(CudaNoDevice, CublasPathThrowsCleanError) { expect_clean_error("cuda.im2col_cublas", "cuBLAS"); }
TEST(CudaNoDevice, CufftPathThrowsCleanError) { expect_clean_error("cuda.fft_cufft", "cuFFT"); }
TEST(CudaNoDevice, HandWrittenKernelLaunchThrowsCleanError) { expect_clean_error("cuda.im2col_gemm", "CUDA"); }
#endif

}  // namespace
}  // namespace convlab
