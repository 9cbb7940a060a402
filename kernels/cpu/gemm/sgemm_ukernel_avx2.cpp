// sgemm_ukernel_6x16_avx2: C(m x n) = alpha * A_panel * B_panel + beta * C, m <= 6, n <= 16.
//
// Shapes: a = packed A panel (kc, 6), b = packed B panel (kc, 16), C row-major
// with ldc; rows < m and columns < n are written. Per k step: 2 ymm loads of B,
// 6 broadcasts of A, 12 FMAs into 12 ymm accumulators (the BLIS haswell shape:
// 12 + 2 + 2 rotating broadcasts of the 16 registers; 6 cycles of FMA on two
// ports against 8 loads). An AVX2 design, not the AVX-512 one narrowed: with
// 16 registers the tile is 6 x 16, each step is half the cycles of the
// AVX-512 kernel's, so the loop runs eight steps per iteration around its
// bookkeeping, and it takes no prefetch runs from the driver (measured slower
// here) and has no packing variant.
// The full tile (6 x 16) is inline assembly (full_tile below). Edge tiles run
// an intrinsics body with the row count and the number of 8-lane column
// vectors as template arguments (body<ROWS, NV>), so a 2-row tail (M = 32 =
// 5 x 6 + 2) costs 2 rows of FMAs; a tile with a partial vector of columns
// goes through a small stack tile (AVX2 has no cheap masked stores on every
// CPU).
// Prefetches inside the k loop: the C tile from the first iterations on,
// before the stores need it (and a run, when one is handed, into L2).
// Single-threaded; the driver splits tiles across threads. Intrinsics and
// inline assembly only.
#include <immintrin.h>

#include <cassert>
#include <cstddef>

#include "kernels/cpu/gemm/sgemm_ukernels.hpp"

namespace convlab::cpu {

namespace {

// One line of C and one of the prefetch run every kPrefetchSteps k steps.
constexpr int kPrefetchSteps = 8;

template <int ROWS, int NV>
void body(int kc, const float* a, const float* b, float* c, int64_t ldc, float alpha, float beta, int n,
          const SgemmPrefetch* pf) {
  constexpr int MR = 6, NR = 16;
  __m256 acc[ROWS][NV];
#pragma GCC unroll 6
  for (int i = 0; i < ROWS; ++i)
#pragma GCC unroll 2
    for (int v = 0; v < NV; ++v) acc[i][v] = _mm256_setzero_ps();
  auto step = [&]() __attribute__((always_inline)) {
    __m256 bv[NV];
#pragma GCC unroll 2
    for (int v = 0; v < NV; ++v) bv[v] = _mm256_load_ps(b + 8 * v);
#pragma GCC unroll 6
    for (int i = 0; i < ROWS; ++i) {
      const __m256 ai = _mm256_broadcast_ss(a + i);
#pragma GCC unroll 2
      for (int v = 0; v < NV; ++v) acc[i][v] = _mm256_fmadd_ps(ai, bv[v], acc[i][v]);
    }
    a += MR;
    b += NR;
  };
  // C: the first and last float of each row (a 64-byte row straddles at most
  // two lines), row after row; the run: see SgemmPrefetch.
  constexpr int kLast = 8 * NV - 1;
  int q = 0;
  PrefetchWalk walk(pf);
  int p = 0;
  for (; p + kPrefetchSteps <= kc; p += kPrefetchSteps) {
    if (q < 2 * ROWS) {
      _mm_prefetch(reinterpret_cast<const char*>(c + (q >> 1) * ldc + (q & 1) * kLast), _MM_HINT_T0);
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

  const __m256 va = _mm256_set1_ps(alpha);
  if (n == 8 * NV) {
    const __m256 vb = _mm256_set1_ps(beta);
#pragma GCC unroll 6
    for (int i = 0; i < ROWS; ++i) {
      float* ci = c + i * ldc;
#pragma GCC unroll 2
      for (int v = 0; v < NV; ++v) {
        __m256 r = _mm256_mul_ps(va, acc[i][v]);
        if (beta != 0.0f) r = _mm256_fmadd_ps(vb, _mm256_loadu_ps(ci + 8 * v), r);
        _mm256_storeu_ps(ci + 8 * v, r);
      }
    }
    return;
  }
  alignas(32) float tile[ROWS][8 * NV];
#pragma GCC unroll 6
  for (int i = 0; i < ROWS; ++i)
#pragma GCC unroll 2
    for (int v = 0; v < NV; ++v) _mm256_store_ps(tile[i] + 8 * v, _mm256_mul_ps(va, acc[i][v]));
  for (int i = 0; i < ROWS; ++i) {
    float* ci = c + i * ldc;
    if (beta == 0.0f) {
      for (int j = 0; j < n; ++j) ci[j] = tile[i][j];
    } else {
      for (int j = 0; j < n; ++j) ci[j] = tile[i][j] + beta * ci[j];
    }
  }
}

// The full tile (6 x 16), the one nearly every call runs, in inline assembly:
// with 16 registers GCC's allocator spills an accumulator of the intrinsics
// version per k step. Registers: ymm0..11 the accumulators (row i in ymm(2i),
// ymm(2i+1)), ymm12/13 the B row, ymm14/15 the A broadcasts.
// Eight k steps per loop iteration (one step is 6 cycles of FMA: the
// prefetch bookkeeping runs once per 48 cycles, as the AVX-512 kernel's does).
// (AVX2 has no packing variant of the full tile: reading B's source beside the
// FMAs measured no faster than packing first, and slower on the fully
// connected GEMMs, whose B comes from memory.)
// Row I of k step N (N = 0..7 within an unrolled iteration of eight):
#define CL_ROW(N, I, C0, C1, T)                                 \
  "vbroadcastss " #N "*24+" #I "*4(%[a]), %%ymm" #T "\n\t"      \
  "vfmadd231ps %%ymm12, %%ymm" #T ", %%ymm" #C0 "\n\t"          \
  "vfmadd231ps %%ymm13, %%ymm" #T ", %%ymm" #C1 "\n\t"
#define CL_FMAS(N)                                                                              \
  CL_ROW(N, 0, 0, 1, 14) CL_ROW(N, 1, 2, 3, 15) CL_ROW(N, 2, 4, 5, 14) CL_ROW(N, 3, 6, 7, 15)   \
  CL_ROW(N, 4, 8, 9, 14) CL_ROW(N, 5, 10, 11, 15)
// One k step from the packed panel (B prefetched to L1 eight steps ahead).
#define CL_STEP(N)                                \
  "vmovaps " #N "*64(%[b]), %%ymm12\n\t"         \
  "vmovaps " #N "*64+32(%[b]), %%ymm13\n\t"      \
  "prefetcht0 " #N "*64+512(%[b])\n\t"           \
  CL_FMAS(N)
#define CL_ZERO                                                                                 \
  "vxorps %%ymm0, %%ymm0, %%ymm0\n\t"                                                           \
  "vmovaps %%ymm0, %%ymm1\n\t" "vmovaps %%ymm0, %%ymm2\n\t" "vmovaps %%ymm0, %%ymm3\n\t"        \
  "vmovaps %%ymm0, %%ymm4\n\t" "vmovaps %%ymm0, %%ymm5\n\t" "vmovaps %%ymm0, %%ymm6\n\t"        \
  "vmovaps %%ymm0, %%ymm7\n\t" "vmovaps %%ymm0, %%ymm8\n\t" "vmovaps %%ymm0, %%ymm9\n\t"        \
  "vmovaps %%ymm0, %%ymm10\n\t" "vmovaps %%ymm0, %%ymm11\n\t"
// Once per iteration of eight steps: the lines of two C rows, until every
// row is on its way (32(%[g]) counts the pairs left), and one line of the
// run (SgemmPrefetch, into L2).
#define CL_PREFETCHES              \
  "cmpq $0, 32(%[g])\n\t"          \
  "jl 2f\n\t"                      \
  "mov (%[g]), %[t]\n\t"           \
  "prefetcht0 (%[cpf])\n\t"          \
  "prefetcht0 60(%[cpf])\n\t"          \
  "prefetcht0 (%[cpf], %[t])\n\t"    \
  "prefetcht0 60(%[cpf], %[t])\n\t"    \
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
// Epilogue of one row (accumulators C0, C1): C = alpha * acc (+ beta * C).
#define CL_STOREP(C0, C1)                                        \
  "vmovups %%ymm" #C0 ", (%[c])\n\t"                              \
  "vmovups %%ymm" #C1 ", 32(%[c])\n\t"                            \
  "add (%[g]), %[c]\n\t"
#define CL_STORE0(C0, C1)                                        \
  "vmulps %%ymm12, %%ymm" #C0 ", %%ymm" #C0 "\n\t"                \
  "vmulps %%ymm12, %%ymm" #C1 ", %%ymm" #C1 "\n\t"                \
  "vmovups %%ymm" #C0 ", (%[c])\n\t"                              \
  "vmovups %%ymm" #C1 ", 32(%[c])\n\t"                            \
  "add (%[g]), %[c]\n\t"
#define CL_STORE1(C0, C1)                                        \
  "vmulps %%ymm12, %%ymm" #C0 ", %%ymm" #C0 "\n\t"                \
  "vmulps %%ymm12, %%ymm" #C1 ", %%ymm" #C1 "\n\t"                \
  "vfmadd231ps (%[c]), %%ymm13, %%ymm" #C0 "\n\t"                 \
  "vfmadd231ps 32(%[c]), %%ymm13, %%ymm" #C1 "\n\t"               \
  "vmovups %%ymm" #C0 ", (%[c])\n\t"                              \
  "vmovups %%ymm" #C1 ", 32(%[c])\n\t"                            \
  "add (%[g]), %[c]\n\t"
#define CL_ROWS(X) X(0, 1) X(2, 3) X(4, 5) X(6, 7) X(8, 9) X(10, 11)
// Epilogue by mode (56(%[g])): 0 C = acc, 1 C = alpha * acc, 2 C = alpha * acc + beta * C.
#define CL_EPILOGUE                       \
  "vbroadcastss 40(%[g]), %%ymm12\n\t"    \
  "cmpl $1, 56(%[g])\n\t"                 \
  "je 8f\n\t"                             \
  "jg 10f\n\t"                            \
  CL_ROWS(CL_STOREP)                      \
  "jmp 9f\n\t"                            \
  "8:\n\t"                                \
  CL_ROWS(CL_STORE0)                      \
  "jmp 9f\n\t"                            \
  "10:\n\t"                               \
  "vbroadcastss 44(%[g]), %%ymm13\n\t"    \
  CL_ROWS(CL_STORE1)                      \
  "9:\n\t"
#define CL_CLOBBERS                                                                                         \
  "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", "xmm11", "xmm12", \
      "xmm13", "xmm14", "xmm15", "cc", "memory"

// The operands both share: loop counts, the prefetch cursors, the epilogue's.
struct TileArgs {
  TileArgs(int kc, const float* c, int64_t ldc, float alpha, float beta, const SgemmPrefetch* pf)
      : k8(kc / 8), krem(kc % 8), cpf(c) {
    mem.ldc_bytes = ldc * int64_t(sizeof(float));
    mem.alpha = alpha;
    mem.beta = beta;
    const PrefetchWalk walk(pf);
    prow = walk.row;
    px = int64_t(walk.x) * 64;
    pleft = walk.left;
    mem.prow_bytes = int64_t(walk.row_lines) * 64;
    mem.pld = walk.ld_bytes;
    mem.mode = beta != 0.0f ? 2 : alpha != 1.0f ? 1 : 0;
  }
  int64_t k8, krem;
  const float* cpf;
  const char* prow;
  int64_t px, pleft;
  // What the assembly reads from memory, at fixed offsets from %[g]:
  // 0 ldc, 8 ldb (bytes), 16 bytes of lines per run row, 24 the run's row
  // step (bytes), 32 pairs of C rows still to prefetch, less one, 40 alpha, 44 beta, 48 and 52 the column masks, 56 the epilogue.
  struct Mem {
    int64_t ldc_bytes, ldb_bytes = 0, prow_bytes, pld, crow = 2;
    float alpha, beta;
    uint32_t m0 = 0, m1 = 0;   // 48, 52: the column masks (AVX-512)
    int32_t mode;              // 56: the epilogue (see CL_EPILOGUE)
  } mem;
};
static_assert(offsetof(TileArgs::Mem, ldb_bytes) == 8 && offsetof(TileArgs::Mem, prow_bytes) == 16 &&
              offsetof(TileArgs::Mem, pld) == 24 && offsetof(TileArgs::Mem, crow) == 32 &&
              offsetof(TileArgs::Mem, alpha) == 40 && offsetof(TileArgs::Mem, beta) == 44 &&
              offsetof(TileArgs::Mem, m0) == 48 && offsetof(TileArgs::Mem, m1) == 52 &&
              offsetof(TileArgs::Mem, mode) == 56);

void full_tile(int kc, const float* a, const float* b, float* c, int64_t ldc, float alpha, float beta, int,
               const SgemmPrefetch* pf) {
  TileArgs g(kc, c, ldc, alpha, beta, pf);
  int64_t t;
  __asm__ volatile(
      CL_ZERO
      "test %[k8], %[k8]\n\t"
      "jz 5f\n\t"
      "1:\n\t"
      CL_PREFETCHES
      CL_STEP(0) CL_STEP(1) CL_STEP(2) CL_STEP(3) CL_STEP(4) CL_STEP(5) CL_STEP(6) CL_STEP(7)
      "add $192, %[a]\n\t"
      "add $512, %[b]\n\t"
      "dec %[k8]\n\t"
      "jnz 1b\n\t"
      "5:\n\t"
      "test %[krem], %[krem]\n\t"
      "jz 7f\n\t"
      "6:\n\t"
      CL_STEP(0)
      "add $24, %[a]\n\t"
      "add $64, %[b]\n\t"
      "dec %[krem]\n\t"
      "jnz 6b\n\t"
      "7:\n\t"
      CL_EPILOGUE
      : [a] "+r"(a), [b] "+r"(b), [c] "+r"(c), [k8] "+r"(g.k8), [krem] "+r"(g.krem), [cpf] "+r"(g.cpf),
        [prow] "+r"(g.prow), [px] "+r"(g.px), [pleft] "+r"(g.pleft), [t] "=&r"(t)
      : [g] "r"(&g.mem)
      : CL_CLOBBERS);
}

#undef CL_ROW
#undef CL_FMAS
#undef CL_STEP
#undef CL_ZERO
#undef CL_PREFETCHES
#undef CL_STOREP
#undef CL_STORE0
#undef CL_STORE1
#undef CL_ROWS
#undef CL_EPILOGUE
#undef CL_CLOBBERS

using Body = void (*)(int, const float*, const float*, float*, int64_t, float, float, int, const SgemmPrefetch*);
// [n > 8][m - 1]
constexpr Body kBodies[2][6] = {{body<1, 1>, body<2, 1>, body<3, 1>, body<4, 1>, body<5, 1>, body<6, 1>},
                                {body<1, 2>, body<2, 2>, body<3, 2>, body<4, 2>, body<5, 2>, body<6, 2>}};

}  // namespace

void sgemm_ukernel_6x16_avx2(int kc, const float* a, const float* b, float* c, int64_t ldc, float alpha,
                             float beta, int m, int n, const SgemmPrefetch* pf) {
  assert(m >= 1 && m <= 6 && n >= 1 && n <= 16);
  if (m == 6 && n == 16) return full_tile(kc, a, b, c, ldc, alpha, beta, n, pf);
  kBodies[n > 8][m - 1](kc, a, b, c, ldc, alpha, beta, n, pf);
}


}  // namespace convlab::cpu
