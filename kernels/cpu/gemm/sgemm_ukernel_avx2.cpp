// sgemm_ukernel_6x16_avx2: C(m x n) = alpha * A_panel * B_panel + beta * C, m <= 6, n <= 16.
//
// Shapes: a = packed A panel (kc, 6), b = packed B panel (kc, 16), C row-major
// with ldc; rows < m and columns < n are written. Per k step: 2 ymm loads of B,
// 6 broadcasts of A, 12 FMAs into 12 ymm accumulators (the BLIS haswell shape:
// 12 + 2 + 2 rotating broadcasts of the 16 registers; 6 cycles of FMA on two
// ports against 8 loads).
// Edge tiles run the same body with the row count and the number of 8-lane
// column vectors as template arguments (body<ROWS, NV>), so a 2-row tail costs
// 2 rows of FMAs; a tile with a partial vector of columns goes through a small
// stack tile (AVX2 has no cheap masked stores on every CPU).
// Prefetches inside the k loop, one line of each every other k step: the C
// tile (before the stores need it) and the strip of the next block's source
// that the driver asks for (SgemmPrefetch, into L2).
// Single-threaded; the driver splits tiles across threads. Intrinsics only.
#include <immintrin.h>

#include <cassert>

#include "kernels/cpu/gemm/sgemm_ukernels.hpp"

namespace convlab::cpu {

namespace {

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
  // two lines), row after row; next block: pf->lines lines pf->ld floats apart.
  constexpr int kLast = 8 * NV - 1;
  int q = 0;
  PrefetchWalk walk(pf);
  int p = 0;
  for (; p + kSgemmPrefetchSteps <= kc; p += kSgemmPrefetchSteps) {
    if (q < 2 * ROWS) {
      _mm_prefetch(reinterpret_cast<const char*>(c + (q >> 1) * ldc + (q & 1) * kLast), _MM_HINT_T0);
      ++q;
    }
    if (walk.left > 0) {
      _mm_prefetch(walk.line(), _MM_HINT_T1);
      walk.advance();
    }
#pragma GCC unroll 4
    for (int s = 0; s < kSgemmPrefetchSteps; ++s) step();
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
// One k step (N = 0..3 within an unrolled iteration of four):
#define CL_ROW(N, I, C0, C1, T)                                 \
  "vbroadcastss " #N "*24+" #I "*4(%[a]), %%ymm" #T "\n\t"      \
  "vfmadd231ps %%ymm12, %%ymm" #T ", %%ymm" #C0 "\n\t"          \
  "vfmadd231ps %%ymm13, %%ymm" #T ", %%ymm" #C1 "\n\t"
#define CL_STEP(N)                                                                   \
  "vmovaps " #N "*64(%[b]), %%ymm12\n\t"                                            \
  "vmovaps " #N "*64+32(%[b]), %%ymm13\n\t"                                         \
  "prefetcht0 " #N "*64+512(%[b])\n\t"                                              \
  CL_ROW(N, 0, 0, 1, 14) CL_ROW(N, 1, 2, 3, 15) CL_ROW(N, 2, 4, 5, 14) CL_ROW(N, 3, 6, 7, 15) \
  CL_ROW(N, 4, 8, 9, 14) CL_ROW(N, 5, 10, 11, 15)
// Epilogue of one row (accumulators C0, C1): C = alpha * acc (+ beta * C).
#define CL_STORE0(C0, C1)                                        \
  "vmulps %%ymm12, %%ymm" #C0 ", %%ymm" #C0 "\n\t"                \
  "vmulps %%ymm12, %%ymm" #C1 ", %%ymm" #C1 "\n\t"                \
  "vmovups %%ymm" #C0 ", (%[c])\n\t"                              \
  "vmovups %%ymm" #C1 ", 32(%[c])\n\t"                            \
  "add %[ldc], %[c]\n\t"
#define CL_STORE1(C0, C1)                                        \
  "vmulps %%ymm12, %%ymm" #C0 ", %%ymm" #C0 "\n\t"                \
  "vmulps %%ymm12, %%ymm" #C1 ", %%ymm" #C1 "\n\t"                \
  "vfmadd231ps (%[c]), %%ymm13, %%ymm" #C0 "\n\t"                 \
  "vfmadd231ps 32(%[c]), %%ymm13, %%ymm" #C1 "\n\t"               \
  "vmovups %%ymm" #C0 ", (%[c])\n\t"                              \
  "vmovups %%ymm" #C1 ", 32(%[c])\n\t"                            \
  "add %[ldc], %[c]\n\t"
#define CL_ROWS(X) X(0, 1) X(2, 3) X(4, 5) X(6, 7) X(8, 9) X(10, 11)

void full_tile(int kc, const float* a, const float* b, float* c, int64_t ldc, float alpha, float beta, int,
               const SgemmPrefetch* pf) {
  PrefetchWalk walk(pf);
  int64_t k4 = kc / 4, krem = kc % 4, ldc_bytes = ldc * int64_t(sizeof(float));
  int64_t crow = 5;  // C rows still to step to (the prefetch stays on the last one)
  const float* cpf = c;
  const char* prow = walk.row;
  int64_t px = int64_t(walk.x) * 64, pleft = walk.left;
  const int64_t prow_bytes = int64_t(walk.row_lines) * 64, pld = walk.ld_bytes;
  const int64_t beta_nonzero = beta != 0.0f;
  int64_t t;
  __asm__ volatile(
      "vxorps %%ymm0, %%ymm0, %%ymm0\n\t"
      "vmovaps %%ymm0, %%ymm1\n\t" "vmovaps %%ymm0, %%ymm2\n\t" "vmovaps %%ymm0, %%ymm3\n\t"
      "vmovaps %%ymm0, %%ymm4\n\t" "vmovaps %%ymm0, %%ymm5\n\t" "vmovaps %%ymm0, %%ymm6\n\t"
      "vmovaps %%ymm0, %%ymm7\n\t" "vmovaps %%ymm0, %%ymm8\n\t" "vmovaps %%ymm0, %%ymm9\n\t"
      "vmovaps %%ymm0, %%ymm10\n\t" "vmovaps %%ymm0, %%ymm11\n\t"
      "test %[k4], %[k4]\n\t"
      "jz 5f\n\t"
      // Four k steps per iteration, with one C row and one line of the run.
      "1:\n\t"
      "prefetcht0 (%[cpf])\n\t"
      "prefetcht0 60(%[cpf])\n\t"
      "test %[crow], %[crow]\n\t"
      "jz 2f\n\t"
      "add %[ldc], %[cpf]\n\t"
      "dec %[crow]\n\t"
      "2:\n\t"
      "test %[pleft], %[pleft]\n\t"
      "jz 3f\n\t"
      "mov %[prow], %[t]\n\t"
      "and $-64, %[t]\n\t"
      "prefetcht1 (%[t], %[px])\n\t"
      "dec %[pleft]\n\t"
      "add $64, %[px]\n\t"
      "cmp %[prow_bytes], %[px]\n\t"
      "jne 3f\n\t"
      "xor %k[px], %k[px]\n\t"
      "add %[pld], %[prow]\n\t"
      "3:\n\t"
      CL_STEP(0) CL_STEP(1) CL_STEP(2) CL_STEP(3)
      "add $96, %[a]\n\t"
      "add $256, %[b]\n\t"
      "dec %[k4]\n\t"
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
      "vbroadcastss %[alpha], %%ymm12\n\t"
      "test %[beta_nonzero], %[beta_nonzero]\n\t"
      "jnz 8f\n\t"
      CL_ROWS(CL_STORE0)
      "jmp 9f\n\t"
      "8:\n\t"
      "vbroadcastss %[beta], %%ymm13\n\t"
      CL_ROWS(CL_STORE1)
      "9:\n\t"
      : [a] "+r"(a), [b] "+r"(b), [c] "+r"(c), [k4] "+r"(k4), [krem] "+r"(krem), [cpf] "+r"(cpf),
        [crow] "+r"(crow), [prow] "+r"(prow), [px] "+r"(px), [pleft] "+r"(pleft), [t] "=&r"(t)
      : [ldc] "r"(ldc_bytes), [prow_bytes] "m"(prow_bytes), [pld] "m"(pld), [alpha] "m"(alpha), [beta] "m"(beta),
        [beta_nonzero] "r"(beta_nonzero)
      : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", "xmm11", "xmm12",
        "xmm13", "xmm14", "xmm15", "cc", "memory");
}

#undef CL_ROW
#undef CL_STEP
#undef CL_STORE0
#undef CL_STORE1
#undef CL_ROWS

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
