// sgemm_ukernel_12x32_avx512: C(m x n) = alpha * A_panel * B_panel + beta * C, m <= 12, n <= 32.
//
// Shapes: a = packed A panel (kc, 12), b = packed B panel (kc, 32), C row-major
// with ldc; only rows < m and columns < n are read or written (AVX-512 masks).
// Per k step: 2 zmm loads of B, 12 broadcasts of A, 24 FMAs into 24 zmm
// accumulators (2 registers of B, 4 rotating broadcast registers: 30 of 32);
// with two FMA ports that is 12 cycles of FMA against 14 loads on 2-3 load
// ports, so the kernel is FMA-bound.
// The full tile (m = 12, n > 16: nearly every call) is inline assembly
// (full_tile below); sgemm_ukernel_12x32_avx512_pack is the same tile reading
// B's row-major source and writing the packed panel as it goes (the driver's
// first row of tiles, B not transposed); _pack2 reads it from two sources
// (a panel across two images of a batch's grid) and _c2 writes the C tile in
// two places (a tile across two images); the three share one k loop
// (CL_KLOOP) and one epilogue (CL_EPILOGUE). Edge tiles run an intrinsics body
// with the row count and the number of 16-lane column vectors as template
// arguments (body<ROWS, NV>): an 8-row tail (M = 32 = 12 + 12 + 8) costs 8
// rows of FMAs, not 12, and a tail of <= 16 columns one vector, not two.
// Prefetches, issued inside the k loop so that they never come in bursts: the
// C tile (usually not in cache) from the first iterations on, so that it is
// on its way long before the stores; and the run of lines the driver hands
// the call (SgemmPrefetch: part of the next block's source, into L2), one
// line every kPrefetchSteps k steps, so that packing the next block reads L2
// and not memory.
// Single-threaded; the driver (sgemm.cpp) splits tiles across threads.
// Nothing but intrinsics and inline assembly in this file (no inline library
// templates compiled with AVX-512 flags that the linker could pick for
// baseline callers).
#include <immintrin.h>

#include <cassert>
#include <cstddef>

#include "kernels/cpu/gemm/sgemm_ukernels.hpp"

namespace convlab::cpu {

namespace {

// One line of C and one of the prefetch run every kPrefetchSteps k steps.
constexpr int kPrefetchSteps = 4;

template <int ROWS, int NV>
void body(int kc, const float* a, const float* b, float* c, int64_t ldc, float alpha, float beta, int n,
          const SgemmPrefetch* pf) {
  constexpr int MR = 12, NR = 32;
  __m512 acc[ROWS][NV];
#pragma GCC unroll 12
  for (int i = 0; i < ROWS; ++i)
#pragma GCC unroll 2
    for (int v = 0; v < NV; ++v) acc[i][v] = _mm512_setzero_ps();
  // One k step: NV loads of B, ROWS broadcasts of A, ROWS * NV FMAs.
  auto step = [&]() __attribute__((always_inline)) {
    __m512 bv[NV];
#pragma GCC unroll 2
    for (int v = 0; v < NV; ++v) bv[v] = _mm512_load_ps(b + 16 * v);
    _mm_prefetch(reinterpret_cast<const char*>(b + 8 * NR), _MM_HINT_T0);
    _mm_prefetch(reinterpret_cast<const char*>(b + 8 * NR + 16), _MM_HINT_T0);
#pragma GCC unroll 12
    for (int i = 0; i < ROWS; ++i) {
      const __m512 ai = _mm512_set1_ps(a[i]);
#pragma GCC unroll 2
      for (int v = 0; v < NV; ++v) acc[i][v] = _mm512_fmadd_ps(ai, bv[v], acc[i][v]);
    }
    a += MR;
    b += NR;
  };
  // The prefetch walks, one line of each every kPrefetchSteps k steps. C: the
  // lines of row after row (at 0, 16 and 31 floats for two vectors: a 128-byte
  // row may straddle three lines), ROWS * kLines prefetches. The run: see
  // SgemmPrefetch.
  constexpr int kLines = NV == 2 ? 3 : 2;
  constexpr int kLineOffset[3] = {0, NV == 2 ? 16 : 15, 31};
  int q = 0;
  PrefetchWalk walk(pf);
  int p = 0;
  for (; p + kPrefetchSteps <= kc; p += kPrefetchSteps) {
    if (q < ROWS * kLines) {
      const int r = q / kLines;
      _mm_prefetch(reinterpret_cast<const char*>(c + r * ldc + kLineOffset[q - r * kLines]), _MM_HINT_T0);
      ++q;
    }
    if (walk.left > 0) {
      _mm_prefetch(walk.line(), _MM_HINT_T1);
      walk.advance();
    }
#pragma GCC unroll 4
    for (int s = 0; s < kPrefetchSteps; ++s) step();
  }
  for (; p < kc; ++p) step();

  const __mmask16 m0 = n >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << n) - 1);
  const __mmask16 m1 = n >= 32 ? __mmask16(0xFFFF) : n > 16 ? __mmask16((1u << (n - 16)) - 1) : __mmask16(0);
  const __mmask16 mk[2] = {m0, m1};
  const __m512 va = _mm512_set1_ps(alpha);
  if (beta == 0.0f) {
#pragma GCC unroll 12
    for (int i = 0; i < ROWS; ++i) {
      float* ci = c + i * ldc;
#pragma GCC unroll 2
      for (int v = 0; v < NV; ++v) _mm512_mask_storeu_ps(ci + 16 * v, mk[v], _mm512_mul_ps(va, acc[i][v]));
    }
  } else {
    const __m512 vb = _mm512_set1_ps(beta);
#pragma GCC unroll 12
    for (int i = 0; i < ROWS; ++i) {
      float* ci = c + i * ldc;
#pragma GCC unroll 2
      for (int v = 0; v < NV; ++v) {
        const __m512 cv = _mm512_maskz_loadu_ps(mk[v], ci + 16 * v);
        _mm512_mask_storeu_ps(ci + 16 * v, mk[v], _mm512_fmadd_ps(vb, cv, _mm512_mul_ps(va, acc[i][v])));
      }
    }
  }
}

// The full tile (12 rows, 17..32 columns), the one nearly every call runs, in
// inline assembly: GCC's register allocator spills accumulators of the
// intrinsics version once prefetch bookkeeping shares the loop. Registers:
// zmm0..23 the accumulators (row i in zmm(2i), zmm(2i+1)), zmm24/25 the B row,
// zmm26..29 the A broadcasts; k1/k2 the column masks of the two vectors.
// full_tile reads a packed B panel; full_tile_pack reads B's row-major source
// (rows ldb apart, each step's 32 floats prefetched to L1 eight rows ahead)
// and writes the packed panel as it goes, so that packing costs store slots
// beside the FMAs instead of a pass of its own.
// Row I of k step N (N = 0..3 within an unrolled iteration of four):
#define CL_ROW(N, I, C0, C1, T)                                 \
  "vbroadcastss " #N "*48+" #I "*4(%[a]), %%zmm" #T "\n\t"      \
  "vfmadd231ps %%zmm24, %%zmm" #T ", %%zmm" #C0 "\n\t"          \
  "vfmadd231ps %%zmm25, %%zmm" #T ", %%zmm" #C1 "\n\t"
#define CL_FMAS(N)                                                                                   \
  CL_ROW(N, 0, 0, 1, 26) CL_ROW(N, 1, 2, 3, 27) CL_ROW(N, 2, 4, 5, 28) CL_ROW(N, 3, 6, 7, 29)        \
  CL_ROW(N, 4, 8, 9, 26) CL_ROW(N, 5, 10, 11, 27) CL_ROW(N, 6, 12, 13, 28) CL_ROW(N, 7, 14, 15, 29)  \
  CL_ROW(N, 8, 16, 17, 26) CL_ROW(N, 9, 18, 19, 27) CL_ROW(N, 10, 20, 21, 28) CL_ROW(N, 11, 22, 23, 29)
// One k step from the packed panel (B prefetched to L1 eight steps ahead).
#define CL_STEP(N)                                     \
  "vmovaps " #N "*128(%[b]), %%zmm24\n\t"             \
  "vmovaps " #N "*128+64(%[b]), %%zmm25\n\t"          \
  "prefetcht0 " #N "*128+1024(%[b])\n\t"              \
  "prefetcht0 " #N "*128+1088(%[b])\n\t"              \
  CL_FMAS(N)
// One k step from the source row at s, stored to the panel.
#define CL_PSTEP(N)                                    \
  "vmovups (%[s]), %%zmm24\n\t"                       \
  "vmovups 64(%[s]), %%zmm25\n\t"                     \
  "prefetcht0 (%[s8])\n\t"                            \
  "prefetcht0 64(%[s8])\n\t"                          \
  "prefetcht0 124(%[s8])\n\t"                         \
  "vmovaps %%zmm24, " #N "*128(%[b])\n\t"             \
  "vmovaps %%zmm25, " #N "*128+64(%[b])\n\t"          \
  "add 8(%[g]), %[s]\n\t"                              \
  "add 8(%[g]), %[s8]\n\t"                             \
  CL_FMAS(N)
// The same from two sources: columns under k3 / k4 at s, the others (k5 / k6) at s + d.
#define CL_P2STEP(N)                                   \
  "vmovups (%[s]), %%zmm24%{%%k3%}%{z%}\n\t"          \
  "vmovups 64(%[s]), %%zmm25%{%%k4%}%{z%}\n\t"        \
  "vmovups (%[s],%[d]), %%zmm24%{%%k5%}\n\t"          \
  "vmovups 64(%[s],%[d]), %%zmm25%{%%k6%}\n\t"        \
  "prefetcht0 (%[s8])\n\t"                            \
  "prefetcht0 124(%[s8])\n\t"                         \
  "prefetcht0 (%[s8],%[d])\n\t"                       \
  "prefetcht0 124(%[s8],%[d])\n\t"                    \
  "vmovaps %%zmm24, " #N "*128(%[b])\n\t"             \
  "vmovaps %%zmm25, " #N "*128+64(%[b])\n\t"          \
  "add 8(%[g]), %[s]\n\t"                              \
  "add 8(%[g]), %[s8]\n\t"                             \
  CL_FMAS(N)
#define CL_ZERO                                                                                    \
  "vpxord %%zmm0, %%zmm0, %%zmm0\n\t"                                                              \
  "vmovaps %%zmm0, %%zmm1\n\t" "vmovaps %%zmm0, %%zmm2\n\t" "vmovaps %%zmm0, %%zmm3\n\t"           \
  "vmovaps %%zmm0, %%zmm4\n\t" "vmovaps %%zmm0, %%zmm5\n\t" "vmovaps %%zmm0, %%zmm6\n\t"           \
  "vmovaps %%zmm0, %%zmm7\n\t" "vmovaps %%zmm0, %%zmm8\n\t" "vmovaps %%zmm0, %%zmm9\n\t"           \
  "vmovaps %%zmm0, %%zmm10\n\t" "vmovaps %%zmm0, %%zmm11\n\t" "vmovaps %%zmm0, %%zmm12\n\t"        \
  "vmovaps %%zmm0, %%zmm13\n\t" "vmovaps %%zmm0, %%zmm14\n\t" "vmovaps %%zmm0, %%zmm15\n\t"        \
  "vmovaps %%zmm0, %%zmm16\n\t" "vmovaps %%zmm0, %%zmm17\n\t" "vmovaps %%zmm0, %%zmm18\n\t"        \
  "vmovaps %%zmm0, %%zmm19\n\t" "vmovaps %%zmm0, %%zmm20\n\t" "vmovaps %%zmm0, %%zmm21\n\t"        \
  "vmovaps %%zmm0, %%zmm22\n\t" "vmovaps %%zmm0, %%zmm23\n\t"
// Once per iteration of four steps: the lines of two C rows, until every
// row is on its way (32(%[g]) counts the pairs left), and one line of the
// run (SgemmPrefetch, into L2).
#define CL_PREFETCHES              \
  "cmpq $0, 32(%[g])\n\t"          \
  "jl 2f\n\t"                      \
  "mov (%[g]), %[t]\n\t"           \
  "prefetcht0 (%[cpf])\n\t"          \
  "prefetcht0 64(%[cpf])\n\t"          \
  "prefetcht0 124(%[cpf])\n\t"          \
  "prefetcht0 (%[cpf], %[t])\n\t"    \
  "prefetcht0 64(%[cpf], %[t])\n\t"    \
  "prefetcht0 124(%[cpf], %[t])\n\t"    \
  "add %[t], %[cpf]\n\t"           \
  "add %[t], %[cpf]\n\t"           \
  "decq 32(%[g])\n\t"              \
  "2:\n\t"                         \
  "test %[pleft], %[pleft]\n\t"    \
  "jz 3f\n\t"                      \
  "mov %[prow], %[t]\n\t"          \
  "and $-64, %[t]\n\t"             \
  "prefetcht1 (%[t], %[px])\n\t"   \
  "dec %[pleft]\n\t"               \
  "add $64, %[px]\n\t"             \
  "cmp 16(%[g]), %[px]\n\t"   \
  "jne 3f\n\t"                     \
  "xor %k[px], %k[px]\n\t"         \
  "add 24(%[g]), %[prow]\n\t"        \
  "3:\n\t"
// The k loop around a step macro: four steps an iteration, then the remainder one at a time.
#define CL_KLOOP(STEP)                                                                    \
  "test %[k4], %[k4]\n\tjz 5f\n\t1:\n\t" CL_PREFETCHES STEP(0) STEP(1) STEP(2) STEP(3)          \
  "add $192, %[a]\n\tadd $512, %[b]\n\tdec %[k4]\n\tjnz 1b\n\t5:\n\t"                         \
  "test %[krem], %[krem]\n\tjz 7f\n\t6:\n\t" STEP(0)                                         \
  "add $48, %[a]\n\tadd $128, %[b]\n\tdec %[krem]\n\tjnz 6b\n\t7:\n\t"
// Epilogue of one row (accumulators C0, C1): C = alpha * acc (+ beta * C); the columns under k1 / k2
// at c, and with a second destination (TileArgs::second_destination) those under k3 / k4 at c + t.
#define CL_PUT1(C0, C1)                                          \
  "vmovups %%zmm" #C0 ", (%[c])%{%%k1%}\n\t"                      \
  "vmovups %%zmm" #C1 ", 64(%[c])%{%%k2%}\n\t"                    \
  "add (%[g]), %[c]\n\t"
#define CL_PUT2(C0, C1)                                          \
  "vmovups %%zmm" #C0 ", (%[c],%[t])%{%%k3%}\n\t"                 \
  "vmovups %%zmm" #C1 ", 64(%[c],%[t])%{%%k4%}\n\t"               \
  CL_PUT1(C0, C1)
#define CL_SCALE(C0, C1)                                         \
  "vmulps %%zmm24, %%zmm" #C0 ", %%zmm" #C0 "\n\t"                \
  "vmulps %%zmm24, %%zmm" #C1 ", %%zmm" #C1 "\n\t"
#define CL_LOAD1                                                 \
  "vmovups (%[c]), %%zmm26%{%%k1%}%{z%}\n\t"                      \
  "vmovups 64(%[c]), %%zmm27%{%%k2%}%{z%}\n\t"
#define CL_LOAD2 CL_LOAD1 "vmovups (%[c],%[t]), %%zmm26%{%%k3%}\n\tvmovups 64(%[c],%[t]), %%zmm27%{%%k4%}\n\t"
#define CL_BETA(C0, C1)                                          \
  "vfmadd231ps %%zmm25, %%zmm26, %%zmm" #C0 "\n\t"                \
  "vfmadd231ps %%zmm25, %%zmm27, %%zmm" #C1 "\n\t"
#define CL_STORE01(C0, C1) CL_SCALE(C0, C1) CL_PUT1(C0, C1)
#define CL_STORE11(C0, C1) CL_SCALE(C0, C1) CL_LOAD1 CL_BETA(C0, C1) CL_PUT1(C0, C1)
#define CL_STORE02(C0, C1) CL_SCALE(C0, C1) CL_PUT2(C0, C1)
#define CL_STORE12(C0, C1) CL_SCALE(C0, C1) CL_LOAD2 CL_BETA(C0, C1) CL_PUT2(C0, C1)
#define CL_ROWS(X) X(0, 1) X(2, 3) X(4, 5) X(6, 7) X(8, 9) X(10, 11) X(12, 13) X(14, 15) X(16, 17) X(18, 19) X(20, 21) X(22, 23)
// By mode (56(%[g])): 0 C = acc, 1 alpha acc, 2 alpha acc + beta C; one destination (k3 | k4 empty) or two.
#define CL_EPILOGUE                       \
  "kmovw 48(%[g]), %%k1\n\t"              \
  "kmovw 52(%[g]), %%k2\n\t"              \
  "kmovw 68(%[g]), %%k3\n\t"              \
  "kmovw 72(%[g]), %%k4\n\t"              \
  "vbroadcastss 40(%[g]), %%zmm24\n\t"    \
  "vbroadcastss 44(%[g]), %%zmm25\n\t"    \
  "kortestw %%k3, %%k4\n\t"               \
  "jnz 20f\n\t"                           \
  "cmpl $1, 56(%[g])\n\t"                 \
  "je 8f\n\t"                             \
  "jg 10f\n\t"                            \
  CL_ROWS(CL_PUT1)                     \
  "jmp 9f\n\t"                            \
  "8:\n\t"                                \
  CL_ROWS(CL_STORE01)                     \
  "jmp 9f\n\t"                            \
  "10:\n\t"                               \
  CL_ROWS(CL_STORE11)                     \
  "jmp 9f\n\t"                            \
  "20:\n\t"                               \
  "mov 80(%[g]), %[t]\n\t"                \
  "cmpl $1, 56(%[g])\n\t"                 \
  "je 21f\n\t"                            \
  "jg 22f\n\t"                            \
  CL_ROWS(CL_PUT2)                     \
  "jmp 9f\n\t"                            \
  "21:\n\t"                               \
  CL_ROWS(CL_STORE02)                     \
  "jmp 9f\n\t"                            \
  "22:\n\t"                               \
  CL_ROWS(CL_STORE12)                     \
  "9:\n\t"
#define CL_CLOBBERS                                                                                                 \
  "zmm0", "zmm1", "zmm2", "zmm3", "zmm4", "zmm5", "zmm6", "zmm7", "zmm8", "zmm9", "zmm10", "zmm11", "zmm12", "zmm13", \
      "zmm14", "zmm15", "zmm16", "zmm17", "zmm18", "zmm19", "zmm20", "zmm21", "zmm22", "zmm23", "zmm24", "zmm25",     \
      "zmm26", "zmm27", "zmm28", "zmm29", "k1", "k2", "k3", "k4", "cc", "memory"

// The operands both share: loop counts, the prefetch cursors, the epilogue's.
struct TileArgs {
  TileArgs(int kc, const float* c, int64_t ldc, float alpha, float beta, int n, const SgemmPrefetch* pf)
      : k4(kc / 4), krem(kc % 4), cpf(c) {
    mem.ldc_bytes = ldc * int64_t(sizeof(float));
    mem.alpha = alpha;
    mem.beta = beta;
    const PrefetchWalk walk(pf);
    prow = walk.row;
    px = int64_t(walk.x) * 64;
    pleft = walk.left;
    mem.prow_bytes = int64_t(walk.row_lines) * 64;
    mem.pld = walk.ld_bytes;
    mem.m0 = n >= 16 ? 0xFFFFu : (1u << n) - 1;
    mem.m1 = n >= 32 ? 0xFFFFu : (1u << (n - 16)) - 1;
    mem.mode = beta != 0.0f ? 2 : alpha != 1.0f ? 1 : 0;
  }
  int64_t k4, krem;
  const float* cpf;
  const char* prow;
  int64_t px, pleft;
  // What the assembly reads from memory, at fixed offsets from %[g]:
  // 0 ldc, 8 ldb (bytes), 16 bytes of lines per run row, 24 the run's row
  // step (bytes), 32 pairs of C rows still to prefetch, less one, 40 alpha, 44 beta, 48 and 52 the column masks, 56 the epilogue.
  struct Mem {
    int64_t ldc_bytes, ldb_bytes = 0, prow_bytes, pld, crow = 5;
    float alpha, beta;
    uint32_t m0 = 0, m1 = 0;   // 48, 52: the column masks (AVX-512)
    int32_t mode;              // 56: the epilogue (see CL_EPILOGUE)
    uint32_t s0 = 0, s1 = 0;   // 60, 64: the columns of the first source (full_tile_pack2)
    uint32_t e0 = 0, e1 = 0;   // 68, 72: the columns of the second destination (none: 0)
    int64_t cdelta = 0;        // 80: its offset from the first, in bytes (column j >= split at c + cdelta + 4 j)
  } mem;
  // C's columns [split, n) at c2 + (j - split) instead (SgemmCTwo).
  void second_destination(const float* c, const SgemmCTwo* ct, int n) {
    if (!ct) return;
    const uint64_t all = n >= 32 ? ~uint64_t(0) : (uint64_t(1) << n) - 1;
    const uint64_t first = all & ((uint64_t(1) << ct->split) - 1), second = all & ~first;
    mem.m0 = uint32_t(first & 0xFFFFu), mem.m1 = uint32_t((first >> 16) & 0xFFFFu);
    mem.e0 = uint32_t(second & 0xFFFFu), mem.e1 = uint32_t((second >> 16) & 0xFFFFu);
    mem.cdelta = (reinterpret_cast<intptr_t>(ct->c2) - reinterpret_cast<intptr_t>(c)) - int64_t(ct->split) * 4;
  }
};
static_assert(offsetof(TileArgs::Mem, ldb_bytes) == 8 && offsetof(TileArgs::Mem, prow_bytes) == 16 &&
              offsetof(TileArgs::Mem, pld) == 24 && offsetof(TileArgs::Mem, crow) == 32 &&
              offsetof(TileArgs::Mem, alpha) == 40 && offsetof(TileArgs::Mem, beta) == 44 &&
              offsetof(TileArgs::Mem, m0) == 48 && offsetof(TileArgs::Mem, m1) == 52 &&
              offsetof(TileArgs::Mem, mode) == 56 && offsetof(TileArgs::Mem, s0) == 60 &&
              offsetof(TileArgs::Mem, s1) == 64 && offsetof(TileArgs::Mem, e0) == 68 &&
              offsetof(TileArgs::Mem, e1) == 72 && offsetof(TileArgs::Mem, cdelta) == 80);

void full_tile_ct(int kc, const float* a, const float* b, float* c, int64_t ldc, float alpha, float beta, int n,
                  const SgemmPrefetch* pf, const SgemmCTwo* ct) {
  TileArgs g(kc, c, ldc, alpha, beta, n, pf);
  g.second_destination(c, ct, n);
  int64_t t;
  __asm__ volatile(
      CL_ZERO
      CL_KLOOP(CL_STEP)
      CL_EPILOGUE
      : [a] "+r"(a), [b] "+r"(b), [c] "+r"(c), [k4] "+r"(g.k4), [krem] "+r"(g.krem), [cpf] "+r"(g.cpf),
        [prow] "+r"(g.prow), [px] "+r"(g.px), [pleft] "+r"(g.pleft), [t] "=&r"(t)
      : [g] "r"(&g.mem)
      : CL_CLOBBERS);
}

void full_tile(int kc, const float* a, const float* b, float* c, int64_t ldc, float alpha, float beta, int n,
               const SgemmPrefetch* pf) {
  full_tile_ct(kc, a, b, c, ldc, alpha, beta, n, pf, nullptr);
}

void full_tile_pack(int kc, const float* a, const float* src, int64_t ldb, float* b, float* c, int64_t ldc,
                    float alpha, float beta, int n, const SgemmPrefetch* pf, const SgemmCTwo* ct) {
  TileArgs g(kc, c, ldc, alpha, beta, n, pf);
  g.second_destination(c, ct, n);
  g.mem.ldb_bytes = ldb * int64_t(sizeof(float));
  const float* s8 = src + 8 * ldb;
  int64_t t;
  __asm__ volatile(
      CL_ZERO
      CL_KLOOP(CL_PSTEP)
      CL_EPILOGUE
      : [a] "+r"(a), [b] "+r"(b), [c] "+r"(c), [s] "+r"(src), [s8] "+r"(s8), [k4] "+r"(g.k4),
        [krem] "+r"(g.krem), [cpf] "+r"(g.cpf), [prow] "+r"(g.prow), [px] "+r"(g.px),
        [pleft] "+r"(g.pleft), [t] "=&r"(t)
      : [g] "r"(&g.mem)
      : CL_CLOBBERS);
}

// full_tile_pack with the panel's columns from two sources (sgemm_ukernel_12x32_avx512_pack2).
void full_tile_pack2(int kc, const float* a, const float* src0, const float* src1, int split, int64_t ldb, float* b,
                     float* c, int64_t ldc, float alpha, float beta, const SgemmPrefetch* pf,
                     const SgemmCTwo* ct) {
  TileArgs g(kc, c, ldc, alpha, beta, 32, pf);
  g.second_destination(c, ct, 32);
  g.mem.ldb_bytes = ldb * int64_t(sizeof(float));
  const uint64_t first = split >= 32 ? ~uint64_t(0) : (uint64_t(1) << split) - 1;
  g.mem.s0 = uint32_t(first & 0xFFFFu);
  g.mem.s1 = uint32_t((first >> 16) & 0xFFFFu);
  // Column j >= split lies at src1 + (j - split): the second source's offset from the first, in bytes.
  int64_t d = (reinterpret_cast<intptr_t>(src1) - reinterpret_cast<intptr_t>(src0)) - int64_t(split) * 4;
  const float* s = src0;
  const float* s8 = src0 + 8 * ldb;
  int64_t t;
  __asm__ volatile(
      "kmovw 60(%[g]), %%k3\n\t"
      "kmovw 64(%[g]), %%k4\n\t"
      "knotw %%k3, %%k5\n\t"
      "knotw %%k4, %%k6\n\t"
      CL_ZERO
      CL_KLOOP(CL_P2STEP)
      CL_EPILOGUE
      : [a] "+r"(a), [b] "+r"(b), [c] "+r"(c), [s] "+r"(s), [s8] "+r"(s8), [k4] "+r"(g.k4),
        [krem] "+r"(g.krem), [cpf] "+r"(g.cpf), [prow] "+r"(g.prow), [px] "+r"(g.px),
        [pleft] "+r"(g.pleft), [t] "=&r"(t), [d] "+r"(d)
      : [g] "r"(&g.mem)
      : CL_CLOBBERS, "k5", "k6");
}

#undef CL_P2STEP
#undef CL_ROW
#undef CL_FMAS
#undef CL_STEP
#undef CL_PSTEP
#undef CL_ZERO
#undef CL_PREFETCHES
#undef CL_KLOOP
#undef CL_PUT1
#undef CL_PUT2
#undef CL_SCALE
#undef CL_LOAD1
#undef CL_LOAD2
#undef CL_BETA
#undef CL_STORE01
#undef CL_STORE11
#undef CL_STORE02
#undef CL_STORE12
#undef CL_ROWS
#undef CL_EPILOGUE
#undef CL_CLOBBERS

using Body = void (*)(int, const float*, const float*, float*, int64_t, float, float, int, const SgemmPrefetch*);
// [n > 16][m - 1]
constexpr Body kBodies[2][12] = {
    {body<1, 1>, body<2, 1>, body<3, 1>, body<4, 1>, body<5, 1>, body<6, 1>, body<7, 1>, body<8, 1>, body<9, 1>,
     body<10, 1>, body<11, 1>, body<12, 1>},
    {body<1, 2>, body<2, 2>, body<3, 2>, body<4, 2>, body<5, 2>, body<6, 2>, body<7, 2>, body<8, 2>, body<9, 2>,
     body<10, 2>, body<11, 2>, full_tile}};

}  // namespace

void sgemm_ukernel_12x32_avx512(int kc, const float* a, const float* b, float* c, int64_t ldc, float alpha,
                                float beta, int m, int n, const SgemmPrefetch* pf) {
  assert(m >= 1 && m <= 12 && n >= 1 && n <= 32);
  kBodies[n > 16][m - 1](kc, a, b, c, ldc, alpha, beta, n, pf);
}

void sgemm_ukernel_12x32_avx512_pack(int kc, const float* a, const float* src, int64_t ldb, float* b, float* c,
                                     int64_t ldc, float alpha, float beta, const SgemmPrefetch* pf,
                                     const SgemmCTwo* ct) {
  full_tile_pack(kc, a, src, ldb, b, c, ldc, alpha, beta, 32, pf, ct);
}

void sgemm_ukernel_12x32_avx512_c2(int kc, const float* a, const float* b, float* c, int64_t ldc, float alpha,
                                   float beta, int n, const SgemmCTwo* ct, const SgemmPrefetch* pf) {
  assert(n > 16 && n <= 32 && ct && ct->split >= 1 && ct->split < n);
  full_tile_ct(kc, a, b, c, ldc, alpha, beta, n, pf, ct);
}

void sgemm_ukernel_12x32_avx512_pack2(int kc, const float* a, const float* src0, const float* src1, int split,
                                      int64_t ldb, float* b, float* c, int64_t ldc, float alpha, float beta,
                                      const SgemmPrefetch* pf, const SgemmCTwo* ct) {
  assert(split >= 1 && split < 32);
  full_tile_pack2(kc, a, src0, src1, split, ldb, b, c, ldc, alpha, beta, pf, ct);
}

}  // namespace convlab::cpu
