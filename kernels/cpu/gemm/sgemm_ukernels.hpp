// The micro-kernels sgemm.cpp binds at run time (one per ISA file). Internal to
// kernels/cpu/gemm: callers use sgemm() or sgemm_ukernel(isa).
#pragma once
#include <cstdint>

#include "kernels/cpu/gemm/sgemm_prefetch.hpp"

namespace convlab::cpu {

// 12 x 32 tile: 24 zmm accumulators, 2 zmm of B, A broadcast from memory.
void sgemm_ukernel_12x32_avx512(int kc, const float* a, const float* b, float* c, int64_t ldc, float alpha,
                                float beta, int m, int n, const SgemmPrefetch* pf);
// The full-tile variant that packs B as it goes (SgemmUkernelPackFn, sgemm.hpp).
void sgemm_ukernel_12x32_avx512_pack(int kc, const float* a, const float* src, int64_t ldb, float* b, float* c,
                                     int64_t ldc, float alpha, float beta, const SgemmPrefetch* pf,
                                     const SgemmCTwo* ct);
// The full tile from a packed panel with C's columns in two places (SgemmUkernelC2Fn, sgemm.hpp).
void sgemm_ukernel_12x32_avx512_c2(int kc, const float* a, const float* b, float* c, int64_t ldc, float alpha,
                                   float beta, int n, const SgemmCTwo* ct, const SgemmPrefetch* pf);
// The same reading B's columns [0, split) from src0 and [split, 32) from src1 (column j at
// src1 + j - split), both rows ldb apart: a panel that straddles two images of a batch's grid
// (SgemmUkernelPack2Fn, sgemm.hpp).
void sgemm_ukernel_12x32_avx512_pack2(int kc, const float* a, const float* src0, const float* src1, int split,
                                      int64_t ldb, float* b, float* c, int64_t ldc, float alpha, float beta,
                                      const SgemmPrefetch* pf, const SgemmCTwo* ct);
// 6 x 16 tile: 12 ymm accumulators (the BLIS haswell shape).
void sgemm_ukernel_6x16_avx2(int kc, const float* a, const float* b, float* c, int64_t ldc, float alpha,
                             float beta, int m, int n, const SgemmPrefetch* pf);
// 4 x 16 tile in plain C++ (baseline x86-64: SSE2 auto-vectorised).
void sgemm_ukernel_4x16_portable(int kc, const float* a, const float* b, float* c, int64_t ldc, float alpha,
                                 float beta, int m, int n, const SgemmPrefetch* pf);

}  // namespace convlab::cpu

namespace convlab::cpu {

// Transposing pack with AVX-512 16x16 register transposes (the strided side of packing: op(A)
// rows for A not transposed, op(B) columns for B transposed):
//   dst[p * ldd + j] = src[j * lds + p]  for p < kc, j < nj (nj <= 16)
//   dst[p * ldd + j] = 0                 for nj <= j < width (width <= 16)
// The 16 source rows are each read sequentially, 16 floats at a time.
void sgemm_pack_transpose_avx512(const float* src, int64_t lds, int nj, int kc, float* dst, int64_t ldd, int width);

}  // namespace convlab::cpu

namespace convlab::cpu {

// Row-wise pack with AVX-512 (see pack_rows in sgemm.cpp), width <= 32:
//   dst[q * width * kc + p * width + j] = src[p * lds + q * width + j]  (j < width, q*width + j < len), else 0
void sgemm_pack_rows_avx512(const float* src, int64_t lds, int kc, int len, int width, float* dst);

}  // namespace convlab::cpu

namespace convlab::cpu {

// The AVX2 packs (sgemm_pack_avx2.cpp): the same contracts with 8 x 8
// transposes (nj, width <= 8) and row panels of width 8 or 16.
void sgemm_pack_transpose_avx2(const float* src, int64_t lds, int nj, int kc, float* dst, int64_t ldd, int width);
void sgemm_pack_rows_avx2(const float* src, int64_t lds, int kc, int len, int width, float* dst);

}  // namespace convlab::cpu
