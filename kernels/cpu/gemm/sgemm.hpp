// Hand-written single-precision GEMM, BLIS style:
//   C(m x n) = alpha * op(A)(m x k) * op(B)(k x n) + beta * C
// row- or column-major, op = identity or transpose. beta == 0 never reads C
// (NaN in C is overwritten).
//
// Structure (sgemm.cpp, portable): loops around a register-blocked MR x NR
// micro-kernel chosen at run time from CPUID (sgemm_ukernel_*.cpp):
//   for pc in K step KC:              pack op(A)[:, pc:pc+KC] into MR-row panels   (all of M)
//     for jc in N step NC:            pack op(B)[pc.., jc:jc+NC] into NR-col panels (L2)
//       for ir: for jr:               ukernel: MR x NR tile += A panel (L1) * B panel (L2)
// Threads: OpenMP; C is cut statically into one block per thread (along M or
// N, whole panels), each thread packs and computes its block alone (no
// barriers). The partition depends only on (m, n, threads), and every C
// element is summed in the same order (KC blocks, then k within the kernel)
// whatever the thread count: results are bit-identical across runs and across
// thread counts. A reduction at least twice C's longer side is cut in two
// fixed halves (split-K), each run so on half the threads and summed in a
// fixed order: the same bits for every thread count too.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "kernels/cpu/gemm/gemm_isa.hpp"
#include "kernels/cpu/gemm/sgemm_prefetch.hpp"

namespace convlab::cpu {

enum class Layout { row_major, col_major };
enum class Trans { no, yes };

std::string_view to_string(GemmIsa isa);
bool sgemm_isa_supported(GemmIsa isa);  // auto_ and portable: always
GemmIsa sgemm_resolve_isa(GemmIsa isa);  // auto_ -> the widest supported; throws Error if unsupported

// The micro-kernel contract (one signature for every ISA):
//   a: packed A panel, kc x MR, a[p * MR + i]; b: packed B panel, kc x NR, b[p * NR + j]
//   C tile (row-major, ldc) rows [0, m), cols [0, n), 1 <= m <= MR, 1 <= n <= NR:
//   C = alpha * (a * b) + beta * C; beta == 0 does not read C.
//   b 64-byte aligned (B rows are read with aligned vector loads).
//   Edge tiles cost what they compute: the kernels run m rows, not MR.
//   pf (may be nullptr): lines the kernel prefetches into L2 while it computes,
//   one every uk.prefetch_steps k steps (at most kc / prefetch_steps are issued): the driver hands each
//   call a strip of the source of the block it packs next.
// Used by sgemm() and, with its own packing (the transforms write the panels),
// by the CPU Winograd's batched GEMM (beta 0 for the first reduction block, 1 after).
using SgemmUkernelFn = void (*)(int kc, const float* a, const float* b, float* c, int64_t ldc, float alpha,
                                float beta, int m, int n, const SgemmPrefetch* pf);
// Optional: the full MR x NR tile of the same kernel reading B from its
// row-major source (row p of the panel at src + p * ldb) instead of a packed
// panel, and writing the packed panel b (kc x NR, 64-byte aligned) as it goes,
// for the next calls on the same panel to read.
// ct (may be nullptr): C's columns from ct->split on written at ct->c2 instead (SgemmCTwo).
using SgemmUkernelPackFn = void (*)(int kc, const float* a, const float* src, int64_t ldb, float* b, float* c,
                                    int64_t ldc, float alpha, float beta, const SgemmPrefetch* pf,
                                    const SgemmCTwo* ct);
// Optional: the same with B's panel from two sources, columns [0, split) at src0 + j and
// [split, NR) at src1 + (j - split), rows ldb apart in both (a panel across two images of a grid).
using SgemmUkernelPack2Fn = void (*)(int kc, const float* a, const float* src0, const float* src1, int split,
                                     int64_t ldb, float* b, float* c, int64_t ldc, float alpha, float beta,
                                     const SgemmPrefetch* pf, const SgemmCTwo* ct);
// Optional: the full-row tile (m = MR, n > NR / 2) from a packed panel with C in two places (SgemmCTwo).
using SgemmUkernelC2Fn = void (*)(int kc, const float* a, const float* b, float* c, int64_t ldc, float alpha,
                                  float beta, int n, const SgemmCTwo* ct, const SgemmPrefetch* pf);
// Optional transposing pack (see sgemm_ukernels.hpp); nullptr = scalar loops.
using SgemmPackTransposeFn = void (*)(const float* src, int64_t lds, int nj, int kc, float* dst, int64_t ldd,
                                      int width);
struct SgemmUkernel {
  int mr, nr;
  SgemmUkernelFn fn;
  const char* name;  // sgemm_ukernel_12x32_avx512 ...
  // Optional packing routines of the same ISA (see sgemm_ukernels.hpp), nullptr = scalar loops.
  // pack_t transposes blocks of up to pack_lanes rows (width <= pack_lanes);
  // pack_rows deals rows out to panels of pack_lanes or 2 * pack_lanes floats.
  SgemmPackTransposeFn pack_t = nullptr;
  void (*pack_rows)(const float* src, int64_t lds, int kc, int len, int width, float* dst) = nullptr;
  int pack_lanes = 16;
  SgemmUkernelPackFn fn_pack = nullptr;
  // fn issues one line of its SgemmPrefetch run every prefetch_steps k steps;
  // 0: the driver hands it no runs.
  int prefetch_steps = 0;
  SgemmUkernelPack2Fn fn_pack2 = nullptr;
  SgemmUkernelC2Fn fn_c2 = nullptr;
};
const SgemmUkernel& sgemm_ukernel(GemmIsa isa);  // resolved isa

// An operand read or written through a 2-D grid (row-major calls only): the
// x-th element along one side of the stored matrix lies at grid.at(x) from its
// row's start instead of x. Two uses:
//  - a strided 1x1 convolution's subsampled image is B as it lies: cols = Q,
//    col_step = stride_w, row_step = stride_h * W (sampling happens in B's
//    packing; no column matrix is written);
//  - a 1x1 convolution over a whole NCHW batch: the GEMM's long side runs over
//    (image, pixel), cols = H * W, col_step = 1, row_step = C * H * W (each
//    image's plane of a channel follows the last: one GEMM for the batch, no copies).
// cols == 0: dense (at(x) == x).
struct SgemmGrid {
  int cols = 0;
  int64_t col_step = 1, row_step = 0;
  int64_t first = 0;  // the grid index of x = 0 (the driver's thread blocks start there)
  bool on() const { return cols > 0; }
  int64_t at(int64_t x) const {
    if (!on()) return x;
    const int64_t g = first + x;
    return g / cols * row_step + g % cols * col_step;
  }
  // How many indices from x on lie one after another in memory (at(x + i) == at(x) + i).
  int64_t run(int64_t x) const {
    if (!on()) return INT64_MAX;
    if (col_step != 1) return 1;
    return cols - (first + x) % cols;
  }
};

struct SgemmConfig {
  GemmIsa isa = GemmIsa::auto_;
  int threads = 1;
  int kc = 0, nc = 0;  // cache blocking; 0 = the defaults for the ISA (tests shrink them to hit edges)
  // Grids (row-major calls only; a leading dimension is then the distance between the matrix's rows):
  SgemmGrid a_grid;  // A not transposed: op(A)'s column p (its k index) at a_grid.at(p) in its row
  SgemmGrid b_grid;  // B: op(B)'s column j (B not transposed) or row p (transposed) at b_grid.at(.) in b's row
  SgemmGrid c_grid;  // C's column j at c_grid.at(j) in its row
};

// Packing space sgemm() needs for this shape and cfg.threads (either layout).
size_t sgemm_workspace_bytes(int m, int n, int k, const SgemmConfig& cfg = {});

// workspace: at least sgemm_workspace_bytes() bytes, 64-byte aligned; nullptr
// allocates (and frees) internally.
void sgemm(Layout layout, Trans trans_a, Trans trans_b, int m, int n, int k, float alpha, const float* a,
           int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc,
           const SgemmConfig& cfg = {}, void* workspace = nullptr);

}  // namespace convlab::cpu
