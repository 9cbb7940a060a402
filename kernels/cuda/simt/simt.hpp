// simt.hpp: the one header every hand-written CUDA kernel includes.
//
// The same kernel source builds two ways:
//   * nvcc -arch=sm_90 (the normal CONVLAB_CUDA build): this header includes
//     cuda_runtime.h and the launch helper is kernel<<<grid, block, shmem, stream>>>.
//   * g++/clang++ -std=c++20 (no __CUDACC__): the EMULATE path. CUDA's keywords
//     are macros, threadIdx/blockIdx/blockDim/gridDim are thread_local, and
//     kernels run on the CPU in a pool of real OS threads, one per GPU thread of
//     a block, blocks one at a time (kernels/cuda/simt/emulator.cpp). The
//     kernel unit tests (tests/kernels/cuda/) run this way, plain, under
//     AddressSanitizer and under ThreadSanitizer.
//
// What the emulator provides: __syncthreads (a std::barrier that records the
// call site of every arrival: divergent barriers and threads that returned
// before a barrier others reached are reported errors, never hangs),
// __syncwarp / __shfl_sync / __shfl_up_sync / __shfl_down_sync /
// __shfl_xor_sync / __ballot_sync (full-warp masks only, a per-warp barrier and
// exchange slots), atomicAdd (std::atomic_ref), __ldg, dynamic shared memory via
// simt::dynamic_shared<T>() (filled with NaN before every block), a watchdog
// that prints where every thread waits and aborts if a launch hangs.
//
// FORBIDDEN in kernels (see also kernels/cuda/simt/README.md):
//   - initialisers on __shared__ variables (constinit rejects them, as nvcc does);
//   - literal `extern __shared__` (use simt::dynamic_shared<T>());
//   - divergent __syncthreads (every thread of the block must reach the same
//     barriers; no early return before a barrier);
//   - lockstep-warp assumptions (implicit warp-synchronous code without
//     __syncwarp / shuffles): emulated threads run freely;
//   - partial-mask shuffles / ballots / __syncwarp (mask must be the full warp);
//   - inter-block synchronisation (blocks run one at a time: a spin on another
//     block's flag hangs, the watchdog reports it);
//   - inline PTX (asm), __CUDA_ARCH__ branches, tensor cores (wmma/mma,
//     cp.async): those belong in separate GPU-only kernels.
//   - CUDA math builtins other than the ones defined below (use std:: / fmaf /
//     std::min, which nvcc accepts in device code with --expt-relaxed-constexpr).
#pragma once

#include <math.h>  // fmaf, sqrtf, ... in the global namespace, as in device code

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>

#if defined(__CUDACC__)
// ============================== nvcc =======================================
#include <cuda_runtime.h>

#include <string>

#include "core/error.hpp"

#define CONVLAB_SIMT_EMULATED 0

namespace convlab::simt {

// Dynamic shared memory (the third launch parameter), 16-byte aligned.
template <typename T>
__device__ __forceinline__ T* dynamic_shared() {
  extern __shared__ __align__(16) unsigned char convlab_simt_dynamic_smem[];
  return reinterpret_cast<T*>(convlab_simt_dynamic_smem);
}

inline void check_launch(const char* kernel) {
  const cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess) fail(std::string("CUDA launch of ") + kernel + ": " + cudaGetErrorString(e));
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
#define __shared__ static constinit
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
int lane_id();
void* dynamic_shared();
// Runs body() once per GPU thread of every block of the grid; throws
// convlab::Error on a reported error (divergent barrier, early return before a
// barrier, partial-mask warp op, exception in a thread, bad launch config).
void launch(const char* name, dim3 grid, dim3 block, size_t shmem, const std::function<void()>& body);
}  // namespace emu

template <typename T>
inline T* dynamic_shared() {
  return static_cast<T*>(emu::dynamic_shared());
}

template <typename... KArgs, typename... Args>
void launch_named(const char* name, void (*kernel)(KArgs...), dim3 grid, dim3 block, size_t shmem, void* stream,
                  Args&&... args) {
  (void)stream;
  emu::launch(name, grid, block, shmem, [&] { kernel(static_cast<KArgs>(args)...); });
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
inline T atomicAdd(T* address, T val) {
  return std::atomic_ref<T>(*address).fetch_add(val);
}
template <typename T>
inline T atomicExch(T* address, T val) {
  return std::atomic_ref<T>(*address).exchange(val);
}
template <typename T>
inline T atomicMax(T* address, T val) {
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

#endif  // __CUDACC__

// The kernel's own name in launch errors and watchdog reports.
#define CONVLAB_LAUNCH(kernel, grid, block, shmem, stream, ...) \
  ::convlab::simt::launch_named(#kernel, kernel, grid, block, shmem, stream, __VA_ARGS__)
