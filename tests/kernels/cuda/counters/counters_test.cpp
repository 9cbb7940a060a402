// The counting runtime (kernels/cuda/simt/counters.hpp) on kernels written for
// the test, whose counts are known exactly: coalescing, strided sectors, bank
// conflicts and padding, 8- and 16-byte shared accesses, masked lanes,
// barriers, atomics, and sampling that scales exactly on a uniform grid.
// This file is compiled with the counting build's instrumentation.
#include "kernels/cuda/simt/counters.hpp"

#include <gtest/gtest.h>

#include <vector>

#include "kernels/cuda/simt/memory.hpp"
#include "kernels/cuda/simt/simt.hpp"

namespace convlab::simt {
namespace {

using counters::Counts;
using counters::LaunchCounts;

__global__ void copy_kernel(const float* in, float* out, int stride) {
  const int i = int(blockIdx.x * blockDim.x + threadIdx.x);
  out[i] = in[int64_t(i) * stride];
}

// Two adjacent scalar stores per thread: two requests (a GPU thread issues
// them as written; the CPU compiler must not merge them into one 8-byte store).
__global__ void pair_store_kernel(const float* in, float* out) {
  const int i = int(blockIdx.x * blockDim.x + threadIdx.x);
  const float v = in[i];
  out[2 * i] = v;
  out[2 * i + 1] = v + 1.0f;
}

__global__ void half_warp_copy_kernel(const float* in, float* out) {
  const int i = int(blockIdx.x * blockDim.x + threadIdx.x);
  if (threadIdx.x % 32 < 16) out[i] = in[i];
}

// One warp: rows written conflict-free, then each lane sums its own row
// (a column walk across lanes: lane l reads word l * LD + c).
template <int LD>
__global__ void row_sum_kernel(const float* in, float* out) {
  CONVLAB_SHARED(float, tile, [32 * LD]);
  const int lane = int(threadIdx.x);
  for (int r = 0; r < 32; ++r) tile[r * LD + lane] = in[r * 32 + lane];
  __syncthreads();
  float s = 0;
  for (int c = 0; c < 32; ++c) s += tile[lane * LD + c];
  out[lane] = s;
}

// One warp, vector shared accesses to a 64-element float2 / float4 array: lane l
// stores elements l and l + 32 (two stores of 32 consecutive elements, each
// conflict-free: 2 / 4 wavefronts), then reads, by kRead,
//   1: element l + 1 (consecutive: conflict-free, 2 / 4 wavefronts);
//   0: element l / 16, one per half-warp (a broadcast: 1 wavefront a half-warp);
//   2: element 2l + 1 (float4: each bank holds 4 of a half-warp's 64 words, 4
//      wavefronts where 2 would do).
template <typename V, int kRead = 1>
__global__ void vector_shared_kernel(float* out) {
  CONVLAB_SHARED(V, v, [64]);
  const int lane = int(threadIdx.x);
  V x{};
  x.x = float(lane);
  v[lane] = x, v[lane + 32] = x;
  __syncthreads();
  const V y = v[kRead == 0 ? lane / 16 : (kRead * lane + 1) % 64];
  out[lane] = y.x;
}

__global__ void barriers_kernel(float* out) {
  __syncthreads();
  __syncthreads();
  out[blockIdx.x * blockDim.x + threadIdx.x] = 1.0f;
}

__global__ void atomic_kernel(float* out) { atomicAdd(&out[blockIdx.x], 1.0f); }

// Lanes 0..23 of each warp compute, lanes 0..7 of them multiplying by zero;
// lane l then makes l % 4 + 1 more calls at one site (4 warp instructions).
__global__ void fma_kernel(const float* in, float* out) {
  const int i = int(blockIdx.x * blockDim.x + threadIdx.x), lane = int(threadIdx.x % 32);
  float acc = 1.0f;
  if (lane < 24) acc = fmaf(in[i], lane < 8 ? 0.0f : 2.0f, acc);
  for (int k = 0; k <= lane % 4; ++k) acc = fmaf(acc, 0.5f, 1.0f);
  out[i] = acc;
}

__global__ void long_loop_kernel(const float* in, float* out, int n) {
  float s = 0;
  for (int i = 0; i < n; ++i) s += in[i];
  out[threadIdx.x] = s;
}

template <typename F>
std::vector<LaunchCounts> counted(F&& launch, counters::Options o = {}) {
  counters::start(o);
  launch();
  return counters::stop();
}

TEST(SimtCounters, CoalescedFloatLoadIsFourSectorsPerRequest) {
  DeviceArray<float> in(1024), out(1024);
  const auto r = counted([&] { CONVLAB_LAUNCH(copy_kernel, dim3(4), dim3(256), 0, nullptr, in.get(), out.get(), 1); });
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].kernel, "copy_kernel");
  EXPECT_EQ(r[0].blocks, 4u);
  EXPECT_EQ(r[0].sampled_blocks, 4u);
  const Counts& c = r[0].counted;
  EXPECT_EQ(c.global_ld_requests, 32u);  // 4 blocks x 8 warps
  EXPECT_EQ(c.global_ld_sectors, 128u);  // 128 B per warp = 4 sectors
  EXPECT_EQ(c.global_st_requests, 32u);
  EXPECT_EQ(c.global_st_sectors, 128u);
  EXPECT_EQ(c.warp_instructions, 64u);
  EXPECT_EQ(c.active_lanes, 64u * 32);
  EXPECT_EQ(c.shared_ld_requests + c.shared_st_requests, 0u);
  EXPECT_EQ(c.barriers, 0u);
}

TEST(SimtCounters, Stride32LoadIsThirtyTwoSectorsPerRequest) {
  DeviceArray<float> in(256 * 32), out(256);
  const auto r = counted([&] { CONVLAB_LAUNCH(copy_kernel, dim3(1), dim3(256), 0, nullptr, in.get(), out.get(), 32); });
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].counted.global_ld_requests, 8u);
  EXPECT_EQ(r[0].counted.global_ld_sectors, 8u * 32);
  EXPECT_EQ(r[0].counted.global_st_sectors, 8u * 4);
}

TEST(SimtCounters, AdjacentScalarStoresStayTwoRequests) {
  DeviceArray<float> in(64), out(128);
  const auto r =
      counted([&] { CONVLAB_LAUNCH(pair_store_kernel, dim3(1), dim3(64), 0, nullptr, in.get(), out.get()); });
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].counted.global_st_requests, 4u);     // 2 warps x 2 stores
  EXPECT_EQ(r[0].counted.global_st_sectors, 4u * 8);  // every other float of 256 B
}

TEST(SimtCounters, HalfMaskedBranchHasSixteenActiveLanes) {
  DeviceArray<float> in(512), out(512);
  const auto r =
      counted([&] { CONVLAB_LAUNCH(half_warp_copy_kernel, dim3(2), dim3(256), 0, nullptr, in.get(), out.get()); });
  ASSERT_EQ(r.size(), 1u);
  const Counts& c = r[0].counted;
  EXPECT_EQ(c.global_ld_requests, 16u);
  EXPECT_EQ(c.global_ld_sectors, 16u * 2);  // 16 floats = 64 B = 2 sectors
  EXPECT_EQ(c.warp_instructions, 32u);
  EXPECT_EQ(c.active_lanes, 32u * 16);
}

TEST(SimtCounters, RowStride32IsA32WayBankConflictAndPadding33IsFree) {
  DeviceArray<float> in(1024), out(32);
  const auto r = counted([&] {
    CONVLAB_LAUNCH(row_sum_kernel<32>, dim3(1), dim3(32), 0, nullptr, in.get(), out.get());
    CONVLAB_LAUNCH(row_sum_kernel<33>, dim3(1), dim3(32), 0, nullptr, in.get(), out.get());
  });
  ASSERT_EQ(r.size(), 2u);
  for (const LaunchCounts& l : r) {
    EXPECT_EQ(l.counted.shared_st_requests, 32u) << l.kernel;
    EXPECT_EQ(l.counted.shared_st_wavefronts, 32u) << l.kernel;  // rows: conflict-free
    EXPECT_EQ(l.counted.shared_st_conflicts, 0u) << l.kernel;
    EXPECT_EQ(l.counted.shared_ld_requests, 32u) << l.kernel;
    EXPECT_EQ(l.counted.barriers, 1u) << l.kernel;
  }
  EXPECT_EQ(r[0].kernel, "row_sum_kernel<32>");
  EXPECT_EQ(r[0].function, "convlab::simt::(anonymous namespace)::row_sum_kernel<32>");
  EXPECT_EQ(r[1].function, "convlab::simt::(anonymous namespace)::row_sum_kernel<33>");
  EXPECT_EQ(r[0].counted.shared_ld_wavefronts, 32u * 32);  // every lane in one bank
  EXPECT_EQ(r[0].counted.shared_ld_conflicts, 32u * 31);
  EXPECT_EQ(r[1].counted.shared_ld_wavefronts, 32u);
  EXPECT_EQ(r[1].counted.shared_ld_conflicts, 0u);
}

TEST(SimtCounters, VectorSharedAccessesAreSplitIntoHalfWarps) {
  DeviceArray<float> out(32);
  const auto r = counted([&] {
    CONVLAB_LAUNCH(vector_shared_kernel<float2>, dim3(1), dim3(32), 0, nullptr, out.get());
    CONVLAB_LAUNCH(vector_shared_kernel<float4>, dim3(1), dim3(32), 0, nullptr, out.get());
  });
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].counted.shared_ld_requests, 1u);
  EXPECT_EQ(r[0].counted.shared_ld_wavefronts, 2u);
  EXPECT_EQ(r[0].counted.shared_ld_conflicts, 0u);
  EXPECT_EQ(r[1].counted.shared_ld_requests, 1u);
  EXPECT_EQ(r[1].counted.shared_ld_wavefronts, 4u);
  EXPECT_EQ(r[1].counted.shared_ld_conflicts, 0u);
  EXPECT_EQ(r[1].counted.shared_st_wavefronts, 8u);  // two stores of 32 consecutive float4s
  EXPECT_EQ(r[1].counted.shared_st_conflicts, 0u);
}

// 16-byte reads as two half-warp phases: a broadcast per half-warp is 2
// wavefronts (quarter-warp phases would say 4: ncu on an H100 saw the former on
// the SGEMM's and implicit GEMM's A fragments), and a stride of two float4s 8,
// 4 of them conflicts.
TEST(SimtCounters, Float4BroadcastAndStridedReadsArePricedPerHalfWarp) {
  DeviceArray<float> out(32);
  const auto r = counted([&] {
    CONVLAB_LAUNCH((vector_shared_kernel<float4, 0>), dim3(1), dim3(32), 0, nullptr, out.get());
    CONVLAB_LAUNCH((vector_shared_kernel<float4, 2>), dim3(1), dim3(32), 0, nullptr, out.get());
  });
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].counted.shared_ld_requests, 1u);
  EXPECT_EQ(r[0].counted.shared_ld_wavefronts, 2u);
  EXPECT_EQ(r[0].counted.shared_ld_conflicts, 0u);
  EXPECT_EQ(r[1].counted.shared_ld_wavefronts, 8u);
  EXPECT_EQ(r[1].counted.shared_ld_conflicts, 4u);
  EXPECT_EQ(r[1].counted.shared_st_wavefronts, 8u);  // two stores of 32 consecutive float4s
  EXPECT_EQ(r[1].counted.shared_st_conflicts, 0u);
}

TEST(SimtCounters, BarriersAndAtomicsAreCounted) {
  DeviceArray<float> out(3 * 64);
  const auto r = counted([&] {
    CONVLAB_LAUNCH(barriers_kernel, dim3(3), dim3(64), 0, nullptr, out.get());
    CONVLAB_LAUNCH(atomic_kernel, dim3(3), dim3(64), 0, nullptr, out.get());
  });
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].counted.barriers, 6u);
  EXPECT_EQ(r[1].counted.global_atom_requests, 6u);  // one per warp
  EXPECT_EQ(r[1].counted.global_atom_sectors, 6u);   // every lane on one float
  EXPECT_EQ(r[1].counted.active_lanes, 6u * 32);
}

TEST(SimtCounters, FmaInstructionsLanesAndUsefulLanes) {
  std::vector<float> host(128, 3.0f);
  DeviceArray<float> in(host), out(128);
  const auto r = counted([&] { CONVLAB_LAUNCH(fma_kernel, dim3(2), dim3(64), 0, nullptr, in.get(), out.get()); });
  ASSERT_EQ(r.size(), 1u);
  const Counts& c = r[0].counted;
  EXPECT_EQ(c.fma_instructions, 4u * (1 + 4));                     // 4 warps: the masked call, 4 loop calls
  EXPECT_EQ(c.fma_lanes, 4u * (24 + 8 * (1 + 2 + 3 + 4)));         // 24 lanes, then 1..4 calls per lane
  EXPECT_EQ(c.fma_useful_lanes, 4u * (16 + 8 * (1 + 2 + 3 + 4)));  // 8 lanes multiplied by zero
  std::vector<float> got = out.download();
  EXPECT_FLOAT_EQ(got[8], fmaf(fmaf(3.0f, 2.0f, 1.0f), 0.5f, 1.0f));  // libm's fmaf still computes
}

TEST(SimtCounters, SamplingScalesExactlyOnAUniformGrid) {
  DeviceArray<float> in(64 * 128), out(64 * 128);
  const auto launch = [&] { CONVLAB_LAUNCH(copy_kernel, dim3(16, 4), dim3(128), 0, nullptr, in.get(), out.get(), 1); };
  const auto full = counted(launch);
  const auto sampled = counted(launch, {.sample_blocks = 9, .seed = 7});
  ASSERT_EQ(full.size(), 1u);
  ASSERT_EQ(sampled.size(), 1u);
  EXPECT_EQ(full[0].sampled_blocks, 64u);
  EXPECT_EQ(sampled[0].blocks, 64u);
  EXPECT_EQ(sampled[0].sampled_blocks, 9u);
  EXPECT_EQ(sampled[0].counted.global_ld_requests, 9u * 4);
  EXPECT_EQ(sampled[0].scaled(), full[0].counted);
}

TEST(SimtCounters, SampleHoldsTheCornersAndIsSeeded) {
  const counters::Options o{.sample_blocks = 16, .seed = 3};
  const std::vector<uint64_t> s = counters::sample_of(10, 7, 3, o);
  ASSERT_EQ(s.size(), 16u);
  EXPECT_TRUE(std::is_sorted(s.begin(), s.end()));
  EXPECT_EQ(std::adjacent_find(s.begin(), s.end()), s.end());
  for (unsigned z : {0u, 2u})
    for (unsigned y : {0u, 6u})
      for (unsigned x : {0u, 9u}) EXPECT_TRUE(std::binary_search(s.begin(), s.end(), x + 10u * (y + 7u * z)));
  EXPECT_EQ(counters::sample_of(10, 7, 3, o), s);
  EXPECT_NE(counters::sample_of(10, 7, 3, {.sample_blocks = 16, .seed = 4}), s);
  EXPECT_EQ(counters::sample_of(2, 2, 1, o).size(), 4u);  // the whole grid
}

TEST(SimtCounters, AccessesBeyondTheMemoryBudgetAreAReportedError) {
  DeviceArray<float> in(4096), out(64);
  const auto launch = [&] {
    CONVLAB_LAUNCH(long_loop_kernel, dim3(1), dim3(64), 0, nullptr, in.get(), out.get(), 4096);
  };
  counters::start({.max_access_bytes = 1 << 20});  // 64 threads x 4096 loads need ~6 MiB
  try {
    launch();
    ADD_FAILURE() << "the launch ran past its budget";
  } catch (const DeviceFault& e) {
    ADD_FAILURE() << "a budget is not a device fault: " << e.what();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("count a smaller problem"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(counters::stop().empty());
  const auto r = counted(launch);  // the device still works; with room, it counts
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].counted.global_ld_requests, 2u * 4096);
}

TEST(SimtCounters, NothingIsCountedOutsideStartAndStop) {
  DeviceArray<float> in(256), out(256);
  CONVLAB_LAUNCH(copy_kernel, dim3(1), dim3(256), 0, nullptr, in.get(), out.get(), 1);
  counters::start();
  EXPECT_TRUE(counters::stop().empty());
}

}  // namespace
}  // namespace convlab::simt
