// counters.hpp: what a profiler (Nsight Compute) would count for each kernel
// launch, computed by the SIMT emulator without a GPU. Only in the counting
// build (convlab_emulated_count, tests/support/emulated_cuda.cmake), whose
// kernel translation units are compiled with ThreadSanitizer's instrumentation
// (-fsanitize=thread) but linked without its runtime: counters.cpp and
// counters_tsan.cpp receive every load and store a kernel thread makes.
//
// A warp instruction is one instruction site executed by the lanes of one
// warp: the accesses of the lanes of (block, warp) at the same code address
// and the same per-thread occurrence of that address are one request, however
// freely the emulated threads ran. Accesses are classified by address: shared
// memory (the block's static and dynamic shared memory), global memory (what
// simt::device_malloc / DeviceArray allocated), anything else (the stack,
// kernel arguments) is not counted.
//   global: requests (one per warp instruction) and the distinct 32-byte
//           sectors the request touches (l1tex__t_requests / sectors
//           _pipe_lsu_mem_global_op_ld / _st / _atom);
//   shared: wavefronts per request: 32 banks of 4 bytes; an access of <= 4
//           bytes per lane takes, over the 32 lanes, the most distinct 4-byte
//           words any one bank holds; 8- and 16-byte accesses are two
//           half-warp phases, each priced the same way (summed): 16 lanes
//           reading 16 consecutive float4s take 2, the same float4 1 (ncu on
//           an H100 agreed on every SGEMM and implicit-GEMM launch; quarter-warp
//           phases had priced a float4 broadcast at 4); bank conflicts =
//           wavefronts - the fewest the data needs (per phase with an active
//           lane, one per 32 distinct words);
//   warp_instructions / active_lanes: the counted memory instructions and the
//           lanes that took part in them (32 per instruction when none idle);
//   fma_*:  the kernels' fmaf calls (their arithmetic: the counting runtime
//           stands in for libm's fmaf): warp FMA instructions (per code
//           address, the most calls any lane of the warp made there between
//           reconvergence points), lane FMAs, and the lane FMAs whose
//           multiplicands are both non-zero (useful when the inputs hold no
//           zeros: padding, masked tile rows and stride holes multiply zeros);
//   mma:    warp-level tensor-core MMAs (simt::mma_m16n8k8_tf32), one per call
//           of the warp (smsp__inst_executed_pipe_tensor);
//   barriers: __syncthreads completed, per block, summed over blocks.
// Sampling (Options::sample_blocks) runs only that many blocks of each launch
// (the corners of the grid, then a seeded random set) at the full problem
// size; LaunchCounts::scaled() multiplies by blocks / sampled_blocks. The
// launches' outputs are then wrong: counting mode only, never for results.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace convlab::simt::counters {

struct Counts {
  uint64_t global_ld_requests = 0, global_ld_sectors = 0;
  uint64_t global_st_requests = 0, global_st_sectors = 0;
  uint64_t global_atom_requests = 0, global_atom_sectors = 0;
  uint64_t shared_ld_requests = 0, shared_ld_wavefronts = 0, shared_ld_conflicts = 0;
  uint64_t shared_st_requests = 0, shared_st_wavefronts = 0, shared_st_conflicts = 0;
  uint64_t warp_instructions = 0, active_lanes = 0;  // the memory requests above
  uint64_t fma_instructions = 0, fma_lanes = 0, fma_useful_lanes = 0;
  uint64_t mma_instructions = 0;  // warp-level MMAs (simt::mma_m16n8k8_tf32), one per warp call
  uint64_t barriers = 0;

  Counts& operator+=(const Counts& o);
  bool operator==(const Counts&) const = default;
};

struct LaunchCounts {
  std::string kernel;    // as CONVLAB_LAUNCH spelt it ("implicit_gemm_kernel<Op>")
  std::string function;  // the instantiation, from the symbol table ("ns::implicit_gemm_kernel<ns::FwdOp>"), or
  unsigned grid[3] = {1, 1, 1}, block[3] = {1, 1, 1};
  uint64_t dynamic_smem = 0;
  uint64_t blocks = 0;          // blocks in the grid
  uint64_t sampled_blocks = 0;  // blocks run and counted
  Counts counted;               // over the sampled blocks

  // counted * blocks / sampled_blocks, each count rounded to the nearest integer.
  Counts scaled() const;
};

struct Options {
  uint64_t sample_blocks = 0;  // 0: every block; else at most this many per launch (>= 1)
  uint64_t seed = 1;           // the random part of the sample
  // The memory the recorded accesses of a launch may take (each thread's,
  // until its block's next __syncthreads or end); 0: half of what is
  // available. A launch that would need more fails with a reported error.
  uint64_t max_access_bytes = 0;
};

// Starts counting every later launch of this process (forgets earlier records).
void start(const Options& options = {});
// Stops counting; returns one record per launch since start(), in launch order.
std::vector<LaunchCounts> stop();

// The blocks a launch of grid (gx, gy, gz) runs under `options` (linear
// indices x + gx * (y + gy * z), ascending): every block when sample_blocks is
// 0 or >= the grid, else the grid's corners first, then seeded random blocks.
std::vector<uint64_t> sample_of(unsigned gx, unsigned gy, unsigned gz, const Options& options);

// One line per launch, scaled: kernel (its instantiation when known), grid,
// block, the counts and ratios.
std::string format_line(const LaunchCounts& c);
// CSV: header, then one row per launch (scaled counts).
std::string csv_header();
std::string csv_row(const LaunchCounts& c);

}  // namespace convlab::simt::counters
