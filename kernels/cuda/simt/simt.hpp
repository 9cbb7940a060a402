// simt.hpp: the one header every hand-written CUDA kernel includes.
//
// The same kernel source builds two ways:
//   * nvcc -arch=sm_90 (the normal CONVLAB_CUDA build): this header includes
//     cuda_runtime.h and the launch helper is kernel<<<grid, block, shmem, stream>>>.
//   * g++/clang++ -std=c++20 (no __CUDACC__): the EMULATE path. CUDA's keywords
//     are macros, threadIdx/blockIdx/blockDim/gridDim are thread_local, and
//     kernels run on the CPU in a pool of real OS threads, one per GPU thread of
//     a block, two blocks at a time (CONVLAB_SIMT_CONCURRENT_BLOCKS)
//     (kernels/cuda/simt/emulator.cpp). The kernel tests (tests/kernels/cuda/) and
//     the cuda.* algorithm tests (tests/algorithms/cuda/) run this way, plain,
//     under AddressSanitizer + UBSan and under ThreadSanitizer.
//
// What the emulator provides: __syncthreads (a std::barrier that records the
// call site of every arrival: divergent barriers and threads that returned
// before a barrier others reached are reported errors, never hangs),
// __syncwarp / __shfl_sync / __shfl_up_sync / __shfl_down_sync /
// __shfl_xor_sync / __ballot_sync (full-warp masks only, a per-warp barrier and
// exchange slots), the TF32 warp MMA (simt::mma_m16n8k8_tf32) and TF32 rounding
// (simt::to_tf32), atomicAdd (std::atomic_ref), __ldg, per-block static shared
// memory via CONVLAB_SHARED and dynamic shared memory via
// simt::dynamic_shared<T>() (both filled with 0xFF bytes = NaN before every
// block), a watchdog that prints where every thread waits and aborts if a
// launch hangs.
//
// The GPU's rules the emulator enforces (what a GPU rejects, the emulator rejects):
//   - launch configuration: <= 1024 threads per block, blockDim.z <= 64,
//     gridDim.x <= 2^31-1, gridDim.y/z <= 65535 (simt::grid_limits(); launchers
//     chunk larger grids with simt::for_each_grid_chunk) -> convlab::Error naming
//     the kernel and the limit (cudaErrorInvalidConfiguration);
//   - dynamic shared memory > 48 KiB only after simt::set_max_dynamic_smem(kernel,
//     bytes) (cudaFuncAttributeMaxDynamicSharedMemorySize), never above 227 KiB
//     (sm_90), static (CONVLAB_SHARED) <= 48 KiB, static + dynamic <= 227 KiB;
//   - alignment: a kernel's pointer arguments must be aligned for their pointee
//     type, and vector accesses through reinterpret_cast pointers go through
//     simt::vload / simt::vstore, which check it: misaligned = device fault;
//   - device faults are sticky: after one (misaligned access, a thread that
//     threw) every later launch and memory call throws convlab::DeviceFault
//     naming the first fault, as a CUDA context would
//     (simt::reset_device_for_tests() clears it in tests);
//   - blocks run concurrently, so two blocks writing the same element without
//     atomics are a data race ThreadSanitizer reports.
//
// FORBIDDEN in kernels (see also kernels/cuda/simt/README.md):
//   - a literal `__shared__` (a compile error in the emulator: use
//     CONVLAB_SHARED(type, name, [dims]), which is per-block memory there);
//   - literal `extern __shared__` (use simt::dynamic_shared<T>());
//   - divergent __syncthreads (every thread of the block must reach the same
//     barriers; no early return before a barrier);
//   - lockstep-warp assumptions (implicit warp-synchronous code without
//     __syncwarp / shuffles): emulated threads run freely;
//   - partial-mask shuffles / ballots / __syncwarp (mask must be the full warp);
//   - inter-block synchronisation (an emulated block never waits for another:
//     a spin on another block's flag hangs, the watchdog reports it);
//   - reinterpret_cast vector loads / stores not through simt::vload / vstore;
//   - inline PTX (asm), __CUDA_ARCH__ branches, wmma, cp.async: those belong
//     in separate GPU-only kernels. The tensor cores are reached through
//     simt::mma_m16n8k8_tf32 and simt::to_tf32 only (PTX on nvcc, the fragment
//     layout and TF32 rounding executed by the emulator).
//   - CUDA math builtins other than the ones defined below (use std:: / fmaf /
//     std::min, which nvcc accepts in device code with --expt-relaxed-constexpr).
#pragma once

#include <math.h>  // fmaf, sqrtf, ... in the global namespace, as in device code

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/error.hpp"

namespace convlab::simt {
// sm_90 limits (CUDA C Programming Guide, "Technical Specifications per
// Compute Capability").
inline constexpr size_t kDefaultMaxDynamicSmem = 48 * 1024;  // without the opt-in
inline constexpr size_t kMaxDynamicSmemOptIn = 232448;       // 227 KiB per block, with it
inline constexpr size_t kMaxStaticSmem = 48 * 1024;          // __shared__ variables of a kernel
struct GridLimits {
  uint64_t x, y, z;
};
inline constexpr GridLimits kGridLimits{2147483647u, 65535u, 65535u};
}  // namespace convlab::simt

#if defined(__CUDACC__)
// ============================== nvcc =======================================
#include <cuda_runtime.h>

#include <string>

#include "core/cuda_error.hpp"
#include "core/error.hpp"

#define CONVLAB_SIMT_EMULATED 0
// A static shared array: __shared__ T name dims; (per block, as on every GPU).
#define CONVLAB_SHARED(T, name, dims) __shared__ T name dims

namespace convlab::simt {

// Dynamic shared memory (the third launch parameter), 16-byte aligned.
template <typename T>
__device__ __forceinline__ T* dynamic_shared() {
  extern __shared__ __align__(16) unsigned char convlab_simt_dynamic_smem[];
  return reinterpret_cast<T*>(convlab_simt_dynamic_smem);
}

// Every error a caller handled was cleared where it was handled (check_cuda),
// so what cudaGetLastError returns here is this launch's own.
inline void check_launch(const char* kernel) {
  check_cuda(cudaGetLastError(), std::string("CUDA launch of ") + kernel);
}

inline GridLimits grid_limits() { return kGridLimits; }

// Allows `kernel` up to `bytes` of dynamic shared memory (needed above 48 KiB).
template <typename... KArgs>
void set_max_dynamic_smem(void (*kernel)(KArgs...), size_t bytes) {
  if (bytes > kMaxDynamicSmemOptIn)
    fail("dynamic shared memory " + std::to_string(bytes) + " B > the 227 KiB (232448 B) sm_90 limit");
  check_cuda(cudaFuncSetAttribute(reinterpret_cast<const void*>(kernel), cudaFuncAttributeMaxDynamicSharedMemorySize,
                                  int(bytes)),
             "cudaFuncSetAttribute(MaxDynamicSharedMemorySize)");
}

// Vector access through a reinterpret_cast pointer (must be aligned to sizeof(T)).
template <typename T>
__device__ __forceinline__ T vload(const T* p) {
  return *p;
}
template <typename T>
__device__ __forceinline__ void vstore(T* p, const T& v) {
  *p = v;
}

// x rounded to TF32 (10 mantissa bits, to nearest, ties away from zero): cvt.rna.tf32.f32.
__device__ __forceinline__ float to_tf32(float x) {
  uint32_t u;
  asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(u) : "f"(x));
  return __uint_as_float(u);
}

// d += A * B on the tensor cores, one warp: mma.sync.aligned.m16n8k8.row.col
// .f32.tf32.tf32.f32 with PTX's fragment layout (the emulator's mma_m16n8k8_tf32
// spells it out). Every lane of the warp must call it.
__device__ __forceinline__ void mma_m16n8k8_tf32(float (&d)[4], const float (&a)[4], const float (&b)[2]) {
  asm volatile(
      "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(__float_as_uint(a[0])), "r"(__float_as_uint(a[1])), "r"(__float_as_uint(a[2])),
        "r"(__float_as_uint(a[3])), "r"(__float_as_uint(b[0])), "r"(__float_as_uint(b[1])));
}

// launch(kernel, grid, block, shmem, stream, args...) == kernel<<<grid, block, shmem, stream>>>(args...)
// followed by a launch-error check that throws convlab::Error.
template <typename... KArgs, typename... Args>
void launch_named(const char* name, void (*kernel)(KArgs...), dim3 grid, dim3 block, size_t shmem, void* stream,
                  Args&&... args) {
  kernel<<<grid, block, shmem, static_cast<cudaStream_t>(stream)>>>(static_cast<KArgs>(args)...);
  check_launch(name);
}

}  // namespace convlab::simt

#else
// ============================== EMULATE ====================================
// The keywords first: CUDA's host_defines.h (pulled in by vector_types.h) only
// defines them when they are not defined yet; included first it would turn
// __shared__ into nothing and every thread would get a private array.
#define CONVLAB_SIMT_EMULATED 1
#define __global__
#define __device__
#define __host__
// A literal __shared__ would be one static shared by every concurrently
// emulated block: refuse it (use CONVLAB_SHARED).
#define __shared__ static_assert(false, "use CONVLAB_SHARED(type, name, [dims]) for static shared memory");
#define __forceinline__ inline __attribute__((always_inline))
#define __launch_bounds__(...)
#define __grid_constant__

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wattributes"
#include <vector_types.h>  // dim3, uint3, float2, float4, ... (plain structs)
#pragma GCC diagnostic pop

#include <atomic>
#include <cstring>
#include <functional>
#include <source_location>
#include <type_traits>

// The built-in variables, per emulated GPU thread.
inline thread_local uint3 threadIdx;
inline thread_local uint3 blockIdx;
inline thread_local dim3 blockDim;
inline thread_local dim3 gridDim;
inline constexpr int warpSize = 32;

namespace convlab::simt {

namespace emu {
using Site = std::source_location;
void syncthreads(const Site& site);
void syncwarp(unsigned mask, const Site& site);
// Every lane of the warp publishes `value`; returns the value of lane `src`
// (the caller's own value when src is outside the warp).
uint64_t exchange(unsigned mask, uint64_t value, int src, const Site& site);
unsigned ballot(unsigned mask, bool pred, const Site& site);
// One warp's mma.sync m16n8k8 TF32 (every lane of a full warp calls it).
void mma_m16n8k8_tf32(float (&d)[4], const float (&a)[4], const float (&b)[2], const Site& site);
int lane_id();
void* dynamic_shared();
// One CONVLAB_SHARED declaration: its offset in the block's static shared
// memory for the current launch (assigned when a thread first passes it).
struct SharedDecl {
  std::atomic<uint64_t> tag{0};  // launch id << 32 | offset
};
void* static_shared(SharedDecl& decl, size_t bytes, size_t align);
// Runs body() once per GPU thread of every block of the grid; throws
// convlab::Error on a reported error (divergent barrier, early return before a
// barrier, partial-mask warp op, bad launch config) and convlab::DeviceFault on
// a modelled device fault (exception in a thread, misaligned access), after
// which every launch and memory call throws DeviceFault until reset.
void launch(const char* name, const void* kernel, dim3 grid, dim3 block, size_t shmem,
            const std::function<void()>& body);
void set_max_dynamic_smem(const void* kernel, size_t bytes);
// Throws DeviceFault when an earlier fault is pending (`what`: the call).
void check_device(const char* what);
// A device fault at an access of `bytes` bytes through `p` that is not aligned
// to `align` (called inside a kernel: records the fault, throws).
[[noreturn]] void misaligned(const void* p, size_t bytes, size_t align, const char* what);
// A kernel argument `index` (a pointer to T, alignof(T) = align) that is not aligned.
[[noreturn]] void misaligned_argument(const char* name, int index, const void* p, size_t align);
GridLimits grid_limits();
// device_malloc / device_free's ranges: the counting build (counters.hpp)
// classifies an access as global memory by them.
void note_allocation(const void* p, size_t bytes);
void note_free(const void* p);
// An atomic read-modify-write of `bytes` bytes at p (counted as one lane of a
// global atomic request in the counting build; a no-op otherwise).
void note_atomic(const void* p, size_t bytes);
}  // namespace emu

inline GridLimits grid_limits() { return emu::grid_limits(); }
// Test hooks: lower the grid limits the emulator enforces (and launchers chunk
// by) so chunking is testable without 65536 emulated blocks; forget a device
// fault so later tests can launch again.
void set_grid_limits_for_tests(GridLimits limits);
void reset_device_for_tests();

template <typename... KArgs>
void set_max_dynamic_smem(void (*kernel)(KArgs...), size_t bytes) {
  emu::set_max_dynamic_smem(reinterpret_cast<const void*>(kernel), bytes);
}

template <typename T>
inline T vload(const T* p) {
  if (reinterpret_cast<uintptr_t>(p) % sizeof(T)) emu::misaligned(p, sizeof(T), sizeof(T), "load");
  return *p;
}
template <typename T>
inline void vstore(T* p, const T& v) {
  if (reinterpret_cast<uintptr_t>(p) % sizeof(T)) emu::misaligned(p, sizeof(T), sizeof(T), "store");
  *p = v;
}

template <typename A>
inline A& static_shared(emu::SharedDecl& decl) {
  return *static_cast<A*>(emu::static_shared(decl, sizeof(A), std::max<size_t>(alignof(A), 16)));
}

// Pointer arguments must be aligned for their pointee (a GPU faults on the access).
template <typename K, typename A>
inline void check_argument(const char* name, int index, const A& arg) {
  if constexpr (std::is_pointer_v<K>) {
    using T = std::remove_cv_t<std::remove_pointer_t<K>>;
    if constexpr (!std::is_void_v<T> && !std::is_function_v<T>) {
      const K p = static_cast<K>(arg);
      if (reinterpret_cast<uintptr_t>(p) % alignof(T)) emu::misaligned_argument(name, index, p, alignof(T));
    }
  }
}

template <typename T>
inline T* dynamic_shared() {
  return static_cast<T*>(emu::dynamic_shared());
}

template <typename... KArgs, typename... Args>
void launch_named(const char* name, void (*kernel)(KArgs...), dim3 grid, dim3 block, size_t shmem, void* stream,
                  Args&&... args) {
  (void)stream;
  emu::check_device(name);
  int index = 0;
  (check_argument<KArgs>(name, index++, args), ...);
  emu::launch(name, reinterpret_cast<const void*>(kernel), grid, block, shmem,
              [&] { kernel(static_cast<KArgs>(args)...); });
}

// x rounded to TF32 as cvt.rna.tf32.f32 does: to nearest on the 10-bit mantissa,
// ties away from zero (adding half of the dropped part's unit to the magnitude
// carries into the kept bits exactly when the dropped part is >= half); Inf and
// NaN pass through.
inline float to_tf32(float x) {
  uint32_t u;
  std::memcpy(&u, &x, 4);
  if ((u & 0x7f800000u) != 0x7f800000u) u = (u + 0x1000u) & 0xffffe000u;
  std::memcpy(&x, &u, 4);
  return x;
}

// d += A * B, PTX's mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 on one
// warp (fragment layout in emulator_threads.cpp).
inline void mma_m16n8k8_tf32(float (&d)[4], const float (&a)[4], const float (&b)[2],
                             const std::source_location& site = std::source_location::current()) {
  emu::mma_m16n8k8_tf32(d, a, b, site);
}

template <typename T>
inline uint64_t to_bits(T v) {
  static_assert(sizeof(T) <= 8 && std::is_trivially_copyable_v<T>, "shuffle of a type wider than 64 bits");
  uint64_t b = 0;
  std::memcpy(&b, &v, sizeof(T));
  return b;
}
template <typename T>
inline T from_bits(uint64_t b) {
  T v;
  std::memcpy(&v, &b, sizeof(T));
  return v;
}

}  // namespace convlab::simt

inline void __syncthreads(const std::source_location& site = std::source_location::current()) {
  convlab::simt::emu::syncthreads(site);
}
inline void __syncwarp(unsigned mask = 0xffffffffu, const std::source_location& site = std::source_location::current()) {
  convlab::simt::emu::syncwarp(mask, site);
}
template <typename T>
inline T __shfl_sync(unsigned mask, T var, int src_lane, int width = warpSize,
                     const std::source_location& site = std::source_location::current()) {
  const int lane = convlab::simt::emu::lane_id();
  const int src = (lane & ~(width - 1)) + (src_lane & (width - 1));
  return convlab::simt::from_bits<T>(convlab::simt::emu::exchange(mask, convlab::simt::to_bits(var), src, site));
}
template <typename T>
inline T __shfl_up_sync(unsigned mask, T var, unsigned delta, int width = warpSize,
                        const std::source_location& site = std::source_location::current()) {
  const int lane = convlab::simt::emu::lane_id();
  const int seg = lane & ~(width - 1);
  const int src = (lane - int(delta) >= seg) ? lane - int(delta) : lane;
  return convlab::simt::from_bits<T>(convlab::simt::emu::exchange(mask, convlab::simt::to_bits(var), src, site));
}
template <typename T>
inline T __shfl_down_sync(unsigned mask, T var, unsigned delta, int width = warpSize,
                          const std::source_location& site = std::source_location::current()) {
  const int lane = convlab::simt::emu::lane_id();
  const int seg = lane & ~(width - 1);
  const int src = (lane + int(delta) < seg + width) ? lane + int(delta) : lane;
  return convlab::simt::from_bits<T>(convlab::simt::emu::exchange(mask, convlab::simt::to_bits(var), src, site));
}
template <typename T>
inline T __shfl_xor_sync(unsigned mask, T var, int lane_mask, int width = warpSize,
                         const std::source_location& site = std::source_location::current()) {
  const int lane = convlab::simt::emu::lane_id();
  const int seg = lane & ~(width - 1);
  const int other = lane ^ lane_mask;
  const int src = (other >= seg && other < seg + width) ? other : lane;
  return convlab::simt::from_bits<T>(convlab::simt::emu::exchange(mask, convlab::simt::to_bits(var), src, site));
}
inline unsigned __ballot_sync(unsigned mask, int pred,
                              const std::source_location& site = std::source_location::current()) {
  return convlab::simt::emu::ballot(mask, pred != 0, site);
}

template <typename T>
__forceinline__ T atomicAdd(T* address, T val) {
  convlab::simt::emu::note_atomic(address, sizeof(T));
  return std::atomic_ref<T>(*address).fetch_add(val);
}
template <typename T>
__forceinline__ T atomicExch(T* address, T val) {
  convlab::simt::emu::note_atomic(address, sizeof(T));
  return std::atomic_ref<T>(*address).exchange(val);
}
template <typename T>
__forceinline__ T atomicMax(T* address, T val) {
  convlab::simt::emu::note_atomic(address, sizeof(T));
  std::atomic_ref<T> a(*address);
  T old = a.load();
  while (old < val && !a.compare_exchange_weak(old, val)) {
  }
  return old;
}
template <typename T>
inline T __ldg(const T* p) {
  return *p;
}

// A static shared array, per emulated block: a reference into the block's
// static shared memory (poisoned with 0xFF bytes before every block).
#define CONVLAB_SHARED(T, name, dims)                                                \
  static constinit ::convlab::simt::emu::SharedDecl convlab_shared_decl_##name;      \
  T(&name) dims = ::convlab::simt::static_shared<T dims>(convlab_shared_decl_##name)

#endif  // __CUDACC__

namespace convlab::simt {
// Launches a gx x gy x gz grid as chunks that fit the device's grid limits:
// launch(dim3 grid, unsigned y0, unsigned z0) runs one chunk whose blocks stand
// for (blockIdx.y + y0, blockIdx.z + z0). gx must fit as it is.
template <typename F>
void for_each_grid_chunk(uint64_t gx, uint64_t gy, uint64_t gz, F&& launch) {
  const GridLimits lim = grid_limits();
  if (gx > lim.x) fail("grid.x = " + std::to_string(gx) + " > " + std::to_string(lim.x));
  for (uint64_t z0 = 0; z0 < gz; z0 += lim.z)
    for (uint64_t y0 = 0; y0 < gy; y0 += lim.y)
      launch(dim3(unsigned(gx), unsigned(std::min(lim.y, gy - y0)), unsigned(std::min(lim.z, gz - z0))),
             unsigned(y0), unsigned(z0));
}
}  // namespace convlab::simt

// The kernel's own name in launch errors and watchdog reports.
#define CONVLAB_LAUNCH(kernel, grid, block, shmem, stream, ...) \
  ::convlab::simt::launch_named(#kernel, kernel, grid, block, shmem, stream, __VA_ARGS__)
