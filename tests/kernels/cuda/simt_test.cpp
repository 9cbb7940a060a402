// Tests of the SIMT emulation layer itself (kernels/cuda/simt/): built-in
// variables, shared memory, barriers, warp intrinsics, atomics, dynamic shared
// memory, and the errors it must report instead of hanging or passing silently.
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>
#include <string>
#include <vector>

#include "kernels/cuda/simt/memory.hpp"
#include "kernels/cuda/simt/simt.hpp"

namespace convlab::simt {
namespace {

// Each block reverses its slice of `data` through shared memory.
__global__ void reverse_block(float* data, int n) {
  CONVLAB_SHARED(float, tile, [256]);
  const int t = int(threadIdx.x), base = int(blockIdx.x * blockDim.x);
  const int i = base + t;
  tile[t] = i < n ? data[i] : 0.0f;
  __syncthreads();
  const int j = int(blockDim.x) - 1 - t;
  if (i < n) data[i] = tile[j];
}

// Every thread writes its linear global id at its global position.
__global__ void write_ids(int* out) {
  const int tx = int(blockIdx.x * blockDim.x + threadIdx.x);
  const int ty = int(blockIdx.y * blockDim.y + threadIdx.y);
  const int tz = int(blockIdx.z * blockDim.z + threadIdx.z);
  const int nx = int(gridDim.x * blockDim.x), ny = int(gridDim.y * blockDim.y);
  const int id = (tz * ny + ty) * nx + tx;
  out[id] = id;
}

// Warp sums with __shfl_down_sync, then a block sum through shared memory.
__global__ void block_sum(const float* in, float* out, int n) {
  CONVLAB_SHARED(float, partial, [32]);
  const int t = int(threadIdx.x), i = int(blockIdx.x * blockDim.x) + t;
  float v = i < n ? in[i] : 0.0f;
  for (int d = 16; d > 0; d >>= 1) v += __shfl_down_sync(0xffffffffu, v, d);
  if (t % 32 == 0) partial[t / 32] = v;
  __syncthreads();
  if (t == 0) {
    float s = 0;
    for (int w = 0; w < int(blockDim.x + 31) / 32; ++w) s += partial[w];
    out[blockIdx.x] = s;
  }
}

// xor butterfly (every lane gets the warp max), shfl_up inclusive scan, ballot.
__global__ void warp_ops(const int* in, int* max_out, int* scan_out, unsigned* ballot_out) {
  const int t = int(threadIdx.x);
  int m = in[t];
  for (int d = 16; d > 0; d >>= 1) m = std::max(m, __shfl_xor_sync(0xffffffffu, m, d));
  max_out[t] = m;
  int s = in[t];
  for (int d = 1; d < 32; d <<= 1) {
    const int up = __shfl_up_sync(0xffffffffu, s, d);
    if (t % 32 >= d) s += up;
  }
  scan_out[t] = s;
  const unsigned b = __ballot_sync(0xffffffffu, in[t] % 2);
  __syncwarp();
  if (t % 32 == 0) ballot_out[t / 32] = b;
  const float bcast = __shfl_sync(0xffffffffu, float(in[t]), 3);
  if (t % 32 == 5) max_out[t] = int(bcast);
}

__global__ void count_atomic(float* sum, int* count) {
  atomicAdd(sum, 0.5f);
  atomicAdd(count, 1);
}

// Reads dynamic shared memory before writing it: must see NaN in every block.
__global__ void dynamic_smem_is_poisoned(int* nan_seen, int n) {
  float* s = dynamic_shared<float>();
  const int t = int(threadIdx.x);
  nan_seen[blockIdx.x * blockDim.x + t] = std::isnan(s[t]) && std::isnan(s[n - 1 - t]) ? 1 : 0;
  __syncthreads();
  s[t] = 1.0f;
}

__global__ void early_return_before_barrier(float* data) {
  CONVLAB_SHARED(float, tile, [64]);
  const int t = int(threadIdx.x);
  data += blockIdx.x * 64;  // each block its own slice: blocks run concurrently
  if (t == 7) return;  // BUG: thread 7 never reaches the barrier
  tile[t] = data[t];
  __syncthreads();
  data[t] = tile[63 - t];
}

__global__ void divergent_barriers(float* data) {
  const int t = int(threadIdx.x);
  if (t < 16) {
    data[t] = 1;
    __syncthreads();  // BUG: two different barriers
  } else {
    data[t] = 2;
    __syncthreads();
  }
}

__global__ void partial_mask_shuffle(int* data) {
  const int t = int(threadIdx.x);
  data[t] = __shfl_sync(0x0000ffffu, data[t], 0);  // BUG: mask is not the whole warp
}

__global__ void throws_in_thread(int* data) {
  if (threadIdx.x == 3) throw std::runtime_error("boom");
  data[threadIdx.x] = 1;
}

__global__ void missing_syncthreads(float* data) {
  CONVLAB_SHARED(float, tile, [128]);
  const int t = int(threadIdx.x);
  tile[t] = data[t] + 1.0f;
  // BUG: no __syncthreads() here
  data[t] = tile[(t + 1) % 128];
}

TEST(Simt, SharedMemoryIsSharedByTheBlock) {
  const int n = 3 * 100 - 17;  // ragged last block
  std::vector<float> h(n);
  std::iota(h.begin(), h.end(), 0.0f);
  DeviceArray<float> d(h);
  CONVLAB_LAUNCH(reverse_block, dim3(3), dim3(100), 0, nullptr, d.get(), n);
  const std::vector<float> out = d.download();
  for (int b = 0; b < 3; ++b)
    for (int t = 0; t < 100; ++t) {
      const int i = b * 100 + t, j = b * 100 + 99 - t;
      if (i < n) {
        EXPECT_EQ(out[i], j < n ? float(j) : 0.0f) << i;
      }
    }
}

TEST(Simt, BuiltinVariablesCoverA3dGrid) {
  const dim3 grid(3, 2, 2), block(5, 4, 3);
  const int total = 3 * 5 * 2 * 4 * 2 * 3;
  DeviceArray<int> d(total);
  d.fill_bytes(0xFF);
  CONVLAB_LAUNCH(write_ids, grid, block, 0, nullptr, d.get());
  const std::vector<int> out = d.download();
  for (int i = 0; i < total; ++i) ASSERT_EQ(out[i], i);
}

TEST(Simt, WarpShuffleBlockSum) {
  const int n = 2 * 96 + 50;  // three blocks of 96 threads, the last warp of each partial
  std::vector<float> h(n);
  for (int i = 0; i < n; ++i) h[i] = float(i % 7) - 2.0f;
  DeviceArray<float> in(h), out(3);
  CONVLAB_LAUNCH(block_sum, dim3(3), dim3(96), 0, nullptr, in.get(), out.get(), n);
  const std::vector<float> s = out.download();
  for (int b = 0; b < 3; ++b) {
    float want = 0;
    for (int i = b * 96; i < std::min(n, (b + 1) * 96); ++i) want += h[i];
    EXPECT_EQ(s[b], want) << b;
  }
}

TEST(Simt, WarpXorUpBallotBroadcast) {
  const int n = 64;
  std::vector<int> h(n);
  for (int i = 0; i < n; ++i) h[i] = (i * 37) % 101;
  DeviceArray<int> in(h), mx(n), scan(n);
  DeviceArray<unsigned> ballot(2);
  CONVLAB_LAUNCH(warp_ops, dim3(1), dim3(n), 0, nullptr, in.get(), mx.get(), scan.get(), ballot.get());
  const auto m = mx.download(), s = scan.download();
  const auto b = ballot.download();
  for (int w = 0; w < 2; ++w) {
    int want_max = 0, run = 0;
    unsigned want_ballot = 0;
    for (int l = 0; l < 32; ++l) {
      want_max = std::max(want_max, h[w * 32 + l]);
      if (h[w * 32 + l] % 2) want_ballot |= 1u << l;
    }
    for (int l = 0; l < 32; ++l) {
      run += h[w * 32 + l];
      EXPECT_EQ(s[w * 32 + l], run);
      EXPECT_EQ(m[w * 32 + l], l == 5 ? h[w * 32 + 3] : want_max);
    }
    EXPECT_EQ(b[w], want_ballot);
  }
}

TEST(Simt, AtomicAdd) {
  DeviceArray<float> sum(std::vector<float>{0.0f});
  DeviceArray<int> count(std::vector<int>{0});
  CONVLAB_LAUNCH(count_atomic, dim3(4), dim3(200), 0, nullptr, sum.get(), count.get());
  EXPECT_EQ(count.download()[0], 800);
  EXPECT_EQ(sum.download()[0], 400.0f);
}

TEST(Simt, DynamicSharedMemoryIsNaNBeforeEveryBlock) {
  const int threads = 64;
  DeviceArray<int> seen(2 * threads);
  CONVLAB_LAUNCH(dynamic_smem_is_poisoned, dim3(2), dim3(threads), threads * sizeof(float), nullptr, seen.get(),
                 threads);
  for (int v : seen.download()) EXPECT_EQ(v, 1);
}

void expect_error(const std::function<void()>& f, const std::string& needle) {
  try {
    f();
    ADD_FAILURE() << "no error reported; expected one containing '" << needle << "'";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

TEST(Simt, EarlyReturnBeforeBarrierIsAReportedError) {
  DeviceArray<float> d(std::vector<float>(128, 1.0f));
  expect_error([&] { CONVLAB_LAUNCH(early_return_before_barrier, dim3(2), dim3(64), 0, nullptr, d.get()); },
               "thread (7,0,0) returned before the __syncthreads");
}

TEST(Simt, DivergentBarriersAreAReportedError) {
  DeviceArray<float> d(32);
  expect_error([&] { CONVLAB_LAUNCH(divergent_barriers, dim3(1), dim3(32), 0, nullptr, d.get()); },
               "divergent __syncthreads");
}

TEST(Simt, PartialMaskShuffleIsAReportedError) {
  DeviceArray<int> d(std::vector<int>(32, 3));
  expect_error([&] { CONVLAB_LAUNCH(partial_mask_shuffle, dim3(1), dim3(32), 0, nullptr, d.get()); },
               "partial-mask");
}

TEST(Simt, ExceptionInAThreadIsReported) {
  DeviceArray<int> d(32);
  expect_error([&] { CONVLAB_LAUNCH(throws_in_thread, dim3(1), dim3(32), 0, nullptr, d.get()); },
               "thread (3,0,0) threw: boom");
  reset_device_for_tests();  // a thread that throws is a device fault (simt_rules_test.cpp)
}

TEST(Simt, InvalidLaunchConfigurationIsReported) {
  DeviceArray<int> d(32);
  expect_error([&] { CONVLAB_LAUNCH(write_ids, dim3(1), dim3(2048), 0, nullptr, d.get()); }, "invalid block");
  expect_error([&] { CONVLAB_LAUNCH(write_ids, dim3(0), dim3(32), 0, nullptr, d.get()); }, "invalid grid");
}

TEST(Simt, KeepsWorkingAfterAnError) {
  DeviceArray<float> d(std::vector<float>(64, 1.0f));
  expect_error([&] { CONVLAB_LAUNCH(early_return_before_barrier, dim3(1), dim3(64), 0, nullptr, d.get()); },
               "returned before");
  std::vector<float> h(128);
  std::iota(h.begin(), h.end(), 0.0f);
  DeviceArray<float> e(h);
  CONVLAB_LAUNCH(reverse_block, dim3(1), dim3(128), 0, nullptr, e.get(), 128);
  EXPECT_EQ(e.download()[0], 127.0f);
}

// Run only by the CTest entry tsan.SimtBroken.MissingSyncthreadsIsADataRace,
// which expects ThreadSanitizer to report the race.
TEST(SimtBroken, DISABLED_MissingSyncthreadsRaces) {
  DeviceArray<float> d(std::vector<float>(128, 1.0f));
  CONVLAB_LAUNCH(missing_syncthreads, dim3(2), dim3(128), 0, nullptr, d.get());
  SUCCEED();
}

}  // namespace
}  // namespace convlab::simt
