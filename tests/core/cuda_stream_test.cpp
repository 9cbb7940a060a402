// core/cuda_stream: the sticky-error classification (pure), the no-device
// answers of every helper, and on a GPU the event timing and the pinned upload.
#include <gtest/gtest.h>

#include <cstring>
#include <numeric>
#include <vector>

#include "core/cuda_stream.hpp"
#include "core/device.hpp"
#include "core/error.hpp"
#if CONVLAB_HAS_CUDA
#include <cuda_runtime.h>
#endif

namespace convlab {
namespace {

#if CONVLAB_HAS_CUDA
TEST(CudaStream, StickyErrorsAreTheContextKillingOnes) {
  for (cudaError_t e : {cudaErrorIllegalAddress, cudaErrorMisalignedAddress, cudaErrorIllegalInstruction,
                        cudaErrorInvalidPc, cudaErrorInvalidAddressSpace, cudaErrorHardwareStackError, cudaErrorAssert,
                        cudaErrorLaunchFailure, cudaErrorLaunchTimeout, cudaErrorECCUncorrectable})
    EXPECT_TRUE(is_sticky_cuda_error(int(e))) << cudaGetErrorName(e);
  // Ordinary errors: the next call works again.
  for (cudaError_t e : {cudaSuccess, cudaErrorMemoryAllocation, cudaErrorInvalidValue, cudaErrorNoDevice,
                        cudaErrorInsufficientDriver, cudaErrorLaunchOutOfResources, cudaErrorInvalidConfiguration,
                        cudaErrorNotReady})
    EXPECT_FALSE(is_sticky_cuda_error(int(e))) << cudaGetErrorName(e);
}
#endif

TEST(CudaStream, PinnedBufferFallsBackToHostMemoryWithoutADevice) {
  PinnedBuffer b(1000);
  ASSERT_NE(b.get(), nullptr);
  EXPECT_EQ(b.bytes(), 1000u);
  EXPECT_EQ(b.pinned(), cuda_info().available);
  std::memset(b.get(), 7, 1000);  // writable host memory either way
  PinnedBuffer moved = std::move(b);
  EXPECT_EQ(b.get(), nullptr);
  EXPECT_EQ(static_cast<unsigned char*>(moved.get())[999], 7);
  PinnedBuffer empty(0);
  EXPECT_EQ(empty.get(), nullptr);
}

TEST(CudaStream, NoDeviceAnswers) {
  if (cuda_info().available) GTEST_SKIP() << "a CUDA device is present; the no-device path cannot be exercised";
  EXPECT_EQ(l2_flush_bytes(), 0u);
  EXPECT_NO_THROW(throw_if_device_fault("nothing failed"));
  try {
    (void)time_cuda([] {}, nullptr);
    ADD_FAILURE() << "time_cuda timed without a device";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no CUDA device"), std::string::npos) << e.what();
  }
  EXPECT_THROW(StagedUpload(64), Error);
}

TEST(CudaStream, EventTimingAndStagedUploadOnDevice) {
  if (!cuda_info().available) GTEST_SKIP() << "no CUDA device: " << cuda_info().reason;
  EXPECT_GE(l2_flush_bytes(), size_t(1) << 20);
  const size_t n = (size_t(20) << 20) / sizeof(float) + 3;  // ~20 MB, not a whole number of 4 MiB pieces
  std::vector<float> host(n), back(n, -1.f);
  std::iota(host.begin(), host.end(), 0.f);
  DeviceBuffer d(DeviceKind::cuda, n * sizeof(float));
  StagedUpload up(n * sizeof(float));
  EXPECT_TRUE(up.pinned());
  up.upload(d.get(), host.data(), n * sizeof(float), nullptr);
  std::vector<float> host2(n, 5.f);
  up.upload(d.get(), host2.data(), n * sizeof(float), nullptr);  // waits for the first copy before overwriting
  copy_to_host(DeviceKind::cuda, back.data(), d.get(), n * sizeof(float));
  EXPECT_EQ(back, host2);
  EXPECT_THROW(up.upload(d.get(), host.data(), n * sizeof(float) + 4, nullptr), Error);
  TimingOptions o;
  o.max_reps = 5;
  const TimingStats t = time_cuda([&] { device_fill_bytes(DeviceKind::cuda, d.get(), 0, n * sizeof(float)); },
                                  nullptr, o);
  EXPECT_GE(t.reps, 3);
  EXPECT_GT(t.median, 0);
  EXPECT_LT(t.median, 1.0);
}

}  // namespace
}  // namespace convlab
