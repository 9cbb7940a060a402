// The GPU's rules the SIMT emulator enforces (kernels/cuda/simt/README.md):
// each test launches a small, deliberately broken kernel and checks the error
// the emulator reports (its text, not just that something threw). Plus the
// classification of real CUDA errors into sticky (DeviceFault) and not.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <climits>
#include <cmath>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "kernels/cuda/simt/memory.hpp"
#include "kernels/cuda/simt/simt.hpp"
// After simt.hpp: it defines the CUDA keywords before host_defines.h does.
#include "core/cuda_error.hpp"

namespace convlab::simt {
namespace {

__global__ void write_one(int* out) {
  if (threadIdx.x == 0) out[blockIdx.x] = 1;
}

__global__ void touch_dynamic_smem(float* out, int n) {
  float* s = dynamic_shared<float>();
  const int t = int(threadIdx.x);
  s[n - 1 - t] = float(t);
  __syncthreads();
  out[t] = s[n - 1 - t];
}
__global__ void touch_dynamic_smem_2(float* out, int n) {
  float* s = dynamic_shared<float>();
  s[n - 1] = 1.0f;
  out[0] = s[n - 1];
}

__global__ void static_16k_plus_dynamic(float* out) {
  CONVLAB_SHARED(float, tile, [4096]);  // 16 KiB
  tile[threadIdx.x] = 1.0f;
  dynamic_shared<float>()[threadIdx.x] = 2.0f;
  out[threadIdx.x] = tile[threadIdx.x];
}
__global__ void static_over_48k(float* out) {
  CONVLAB_SHARED(float, big, [12289]);  // 49156 B: nvcc rejects this at compile time too
  big[threadIdx.x] = 1.0f;
  out[threadIdx.x] = big[threadIdx.x];
}

// Reads its static shared memory before writing it: must see the poison (NaN)
// in every block, although the previous block on the same slot wrote 1.0f.
__global__ void static_smem_is_poisoned(int* seen) {
  CONVLAB_SHARED(float, tile, [64]);
  const int t = int(threadIdx.x);
  seen[blockIdx.x * 64 + t] = std::isnan(tile[t]) ? 1 : 0;
  tile[t] = 1.0f;
}

// A float4 load through a pointer one float past an aligned one.
__global__ void misaligned_float4_load(const float* in, float* out) {
  const float4 v = vload(reinterpret_cast<const float4*>(in + 1));
  out[threadIdx.x] = v.x;
}
__global__ void reads_float2(const float2* in, float* out) { out[threadIdx.x] = in[threadIdx.x].x; }

__global__ void throws_boom(int*) {
  if (threadIdx.x == 5) throw Error("boom");
}

// Block 0 waits (bounded) for block 1's flag: only possible when blocks run concurrently.
__global__ void sees_other_block(int* flag, int* seen) {
  if (threadIdx.x != 0) return;
  std::atomic_ref<int> f(*flag);
  if (blockIdx.x == 1) {
    f.store(1);
    return;
  }
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (f.load() == 0 && std::chrono::steady_clock::now() < until) std::this_thread::yield();
  *seen = f.load();
}

// Every block adds into one element without atomics: an inter-block race.
__global__ void blocks_race_on_one_element(float* out) {
  if (threadIdx.x == 0) out[0] += 1.0f;
}

// Signed overflow: undefined behaviour UBSan reports (and, built with
// -fno-sanitize-recover, aborts on).
__global__ void signed_overflow(const int* in, int* out) { out[threadIdx.x] = in[threadIdx.x] + INT_MAX; }

void expect_error(const std::function<void()>& f, const std::string& needle) {
  try {
    f();
    ADD_FAILURE() << "no error reported; expected one containing '" << needle << "'";
  } catch (const DeviceFault& e) {
    ADD_FAILURE() << "a device fault, expected a launch error: " << e.what();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}
void expect_fault(const std::function<void()>& f, const std::vector<std::string>& needles) {
  try {
    f();
    ADD_FAILURE() << "no device fault reported; expected one containing '" << needles[0] << "'";
  } catch (const DeviceFault& e) {
    for (const std::string& needle : needles)
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}
void expect_fault(const std::function<void()>& f, const std::string& needle) {
  expect_fault(f, std::vector<std::string>{needle});
}
// Tests that fault clear the emulated device for the tests after them.
struct ResetDevice {
  ~ResetDevice() { reset_device_for_tests(); }
};

TEST(SimtRules, BlockOver1024ThreadsIsAnInvalidConfiguration) {
  DeviceArray<int> d(4);
  expect_error([&] { CONVLAB_LAUNCH(write_one, dim3(1), dim3(33, 32), 0, nullptr, d.get()); },
               "kernel write_one: invalid block (33,32,1): 1056 threads > 1024 per block (cudaErrorInvalidConfiguration)");
  expect_error([&] { CONVLAB_LAUNCH(write_one, dim3(1), dim3(1, 1, 128), 0, nullptr, d.get()); },
               "kernel write_one: invalid block (1,1,128): blockDim.z = 128 > 64");
}

TEST(SimtRules, GridOverTheDeviceLimitsIsAnInvalidConfiguration) {
  DeviceArray<int> d(4);
  expect_error([&] { CONVLAB_LAUNCH(write_one, dim3(1, 65536), dim3(32), 0, nullptr, d.get()); },
               "kernel write_one: invalid grid (1,65536,1): gridDim.y > 65535 (cudaErrorInvalidConfiguration)");
  expect_error([&] { CONVLAB_LAUNCH(write_one, dim3(1, 1, 65536), dim3(32), 0, nullptr, d.get()); },
               "invalid grid (1,1,65536): gridDim.z > 65535");
  expect_error([&] { CONVLAB_LAUNCH(write_one, dim3(2147483648u), dim3(32), 0, nullptr, d.get()); },
               "invalid grid (2147483648,1,1): gridDim.x > 2147483647");
  // The lowered test limits (grid_chunks_test.cpp) are enforced the same way.
  const GridLimits saved = grid_limits();
  set_grid_limits_for_tests({saved.x, 3, 2});
  expect_error([&] { CONVLAB_LAUNCH(write_one, dim3(1, 1, 3), dim3(32), 0, nullptr, d.get()); },
               "gridDim.z > 2");
  set_grid_limits_for_tests(saved);
}

TEST(SimtRules, DynamicSharedMemoryOver48KiBNeedsTheOptIn) {
  const int n = 16384 + 1;  // 65540 B
  DeviceArray<float> out(32);
  expect_error([&] { CONVLAB_LAUNCH(touch_dynamic_smem, dim3(1), dim3(32), n * sizeof(float), nullptr, out.get(), n); },
               "kernel touch_dynamic_smem: dynamic shared memory 65540 B > 48 KiB (49152 B) without "
               "simt::set_max_dynamic_smem(kernel, bytes) (cudaFuncAttributeMaxDynamicSharedMemorySize)");
  set_max_dynamic_smem(touch_dynamic_smem, n * sizeof(float));
  CONVLAB_LAUNCH(touch_dynamic_smem, dim3(1), dim3(32), n * sizeof(float), nullptr, out.get(), n);
  EXPECT_EQ(out.download()[7], 7.0f);
  expect_error(
      [&] { CONVLAB_LAUNCH(touch_dynamic_smem, dim3(1), dim3(32), (n + 1) * sizeof(float), nullptr, out.get(), n + 1); },
      "dynamic shared memory 65544 B > 65540 B set with simt::set_max_dynamic_smem");
}

TEST(SimtRules, DynamicSharedMemoryCapIs227KiB) {
  DeviceArray<float> out(1);
  expect_error([&] { set_max_dynamic_smem(touch_dynamic_smem_2, 232448 + 4); }, "> the 227 KiB (232448 B) sm_90 limit");
  set_max_dynamic_smem(touch_dynamic_smem_2, 232448);
  CONVLAB_LAUNCH(touch_dynamic_smem_2, dim3(1), dim3(1), 232448, nullptr, out.get(), 232448 / 4);
  EXPECT_EQ(out.download()[0], 1.0f);
  expect_error([&] { CONVLAB_LAUNCH(touch_dynamic_smem_2, dim3(1), dim3(1), 232452, nullptr, out.get(), 232452 / 4); },
               "dynamic shared memory 232452 B > the 227 KiB (232448 B) sm_90 limit");
}

TEST(SimtRules, StaticPlusDynamicSharedMemoryIsLimited) {
  DeviceArray<float> out(32);
  expect_error([&] { CONVLAB_LAUNCH(static_16k_plus_dynamic, dim3(1), dim3(32), 40960, nullptr, out.get()); },
               "static + dynamic shared memory 16384 + 40960 B > 49152 B per block (without simt::set_max_dynamic_smem)");
  CONVLAB_LAUNCH(static_16k_plus_dynamic, dim3(1), dim3(32), 4096, nullptr, out.get());
  EXPECT_EQ(out.download()[3], 1.0f);
  expect_error([&] { CONVLAB_LAUNCH(static_over_48k, dim3(1), dim3(32), 0, nullptr, out.get()); },
               "kernel static_over_48k: block (0,0,0): static shared memory (CONVLAB_SHARED) 49156 B > 48 KiB");
}

TEST(SimtRules, StaticSharedMemoryIsPoisonedBeforeEveryBlock) {
  DeviceArray<int> seen(6 * 64);
  for (int launch = 0; launch < 2; ++launch) {
    seen.fill_bytes(0);
    CONVLAB_LAUNCH(static_smem_is_poisoned, dim3(6), dim3(64), 0, nullptr, seen.get());
    for (int v : seen.download()) ASSERT_EQ(v, 1) << "launch " << launch;
  }
}

TEST(SimtRules, MisalignedVectorLoadIsAStickyDeviceFault) {
  ResetDevice reset;
  DeviceArray<float> in(std::vector<float>(64, 2.0f)), out(32);
  expect_fault([&] { CONVLAB_LAUNCH(misaligned_float4_load, dim3(1), dim3(32), 0, nullptr, in.get(), out.get()); },
               {"kernel misaligned_float4_load: block (0,0,0): thread (",
                "): misaligned address (cudaErrorMisalignedAddress): 16-byte load at 0x",
                ", which is not 16-byte aligned"});
  // Sticky: every later launch and memory call reports the first fault.
  expect_fault([&] { CONVLAB_LAUNCH(write_one, dim3(1), dim3(32), 0, nullptr, nullptr); },
               "simt emulator: write_one after a device fault: kernel misaligned_float4_load: block (0,0,0)");
  expect_fault([&] { (void)out.download(); }, "copy_d2h after a device fault: kernel misaligned_float4_load");
  expect_fault([&] { DeviceArray<float> more(4); }, "device_malloc after a device fault");
  expect_fault([&] { synchronize(); }, "synchronize after a device fault");
  reset_device_for_tests();
  DeviceArray<int> ok(1);
  CONVLAB_LAUNCH(write_one, dim3(1), dim3(32), 0, nullptr, ok.get());
  EXPECT_EQ(ok.download()[0], 1);
}

TEST(SimtRules, MisalignedPointerArgumentIsADeviceFault) {
  ResetDevice reset;
  DeviceArray<float> in(std::vector<float>(64, 2.0f)), out(32);
  const float2* odd = reinterpret_cast<const float2*>(in.get() + 1);
  expect_fault([&] { CONVLAB_LAUNCH(reads_float2, dim3(1), dim3(32), 0, nullptr, odd, out.get()); },
               "kernel reads_float2: misaligned address (cudaErrorMisalignedAddress): pointer argument 0 = 0x");
  expect_fault([&] { CONVLAB_LAUNCH(write_one, dim3(1), dim3(1), 0, nullptr, nullptr); },
               "after a device fault: simt emulator: kernel reads_float2: misaligned address");
}

TEST(SimtRules, AThreadThatThrowsIsAStickyDeviceFault) {
  ResetDevice reset;
  DeviceArray<int> d(32);
  expect_fault([&] { CONVLAB_LAUNCH(throws_boom, dim3(1), dim3(32), 0, nullptr, d.get()); },
               "kernel throws_boom: block (0,0,0): thread (5,0,0) threw: boom");
  expect_fault([&] { d.fill_bytes(0); }, "memset_device after a device fault: kernel throws_boom");
}

TEST(SimtRules, LaunchErrorsAreNotSticky) {
  DeviceArray<int> d(4);
  expect_error([&] { CONVLAB_LAUNCH(write_one, dim3(1), dim3(2048), 0, nullptr, d.get()); }, "invalid block");
  CONVLAB_LAUNCH(write_one, dim3(4), dim3(32), 0, nullptr, d.get());
  EXPECT_EQ(d.download()[3], 1);
}

TEST(SimtRules, TwoBlocksRunAtATime) {
  DeviceArray<int> flag(std::vector<int>{0}), seen(std::vector<int>{0});
  CONVLAB_LAUNCH(sees_other_block, dim3(2), dim3(32), 0, nullptr, flag.get(), seen.get());
  EXPECT_EQ(seen.download()[0], 1) << "block 0 never saw block 1 run while it was running";
}

TEST(CudaErrors, StickyErrorsAreDeviceFaults) {
  for (cudaError_t e : {cudaErrorIllegalAddress, cudaErrorMisalignedAddress, cudaErrorLaunchFailure,
                        cudaErrorHardwareStackError, cudaErrorIllegalInstruction, cudaErrorInvalidAddressSpace,
                        cudaErrorInvalidPc, cudaErrorAssert, cudaErrorLaunchTimeout, cudaErrorECCUncorrectable,
                        cudaErrorUnknown, cudaErrorContextIsDestroyed})
    EXPECT_TRUE(cuda_error_is_sticky(e)) << int(e);
  for (cudaError_t e : {cudaSuccess, cudaErrorMemoryAllocation, cudaErrorInvalidConfiguration, cudaErrorInvalidValue,
                        cudaErrorInvalidDevice, cudaErrorNoDevice, cudaErrorInsufficientDriver,
                        cudaErrorLaunchOutOfResources, cudaErrorInvalidDeviceFunction, cudaErrorNotReady,
                        cudaErrorNoKernelImageForDevice, cudaErrorSharedObjectInitFailed})
    EXPECT_FALSE(cuda_error_is_sticky(e)) << int(e);
  try {
    throw_cuda_error(cudaErrorIllegalAddress, "an illegal memory access was encountered", "CUDA launch of k");
  } catch (const DeviceFault& e) {
    EXPECT_STREQ(e.what(),
                 "CUDA device fault in CUDA launch of k: an illegal memory access was encountered; the CUDA context "
                 "is unusable for the rest of this process");
  }
  try {
    throw_cuda_error(cudaErrorMemoryAllocation, "out of memory", "cudaMalloc");
  } catch (const DeviceFault&) {
    ADD_FAILURE() << "out of memory is not sticky";
  } catch (const OutOfMemory& e) {  // device_alloc adds the size to it
    EXPECT_STREQ(e.what(), "cudaMalloc: out of memory");
  }
}

// Run only by the CTest entry tsan.SimtBroken.InterBlockWriteIsADataRace, which
// expects ThreadSanitizer to report the race between two concurrent blocks.
TEST(SimtBroken, DISABLED_TwoBlocksWriteOneElementRace) {
  DeviceArray<float> d(std::vector<float>(1, 0.0f));
  for (int i = 0; i < 20; ++i) CONVLAB_LAUNCH(blocks_race_on_one_element, dim3(8), dim3(32), 0, nullptr, d.get());
  SUCCEED();
}

// Run only by the CTest entry asan.SimtBroken.UndefinedBehaviourFailsTheTest:
// UBSan must stop the test, not print and carry on.
TEST(SimtBroken, DISABLED_SignedOverflowInAKernel) {
  DeviceArray<int> in(std::vector<int>(32, 1)), out(32);
  CONVLAB_LAUNCH(signed_overflow, dim3(1), dim3(32), 0, nullptr, in.get(), out.get());
  SUCCEED();
}

}  // namespace
}  // namespace convlab::simt
