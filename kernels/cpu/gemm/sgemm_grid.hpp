// B's packing through a 2-D grid (SgemmGrid, sgemm.hpp): the strided 1x1
// convolution's subsampled image read where it lies. Scalar gathers: B is
// packed once per (KC, NC) block and reused by every MR row panel, so the
// gather is a small part of a GEMM with more than a few rows.
#pragma once
#include <cstdint>

#include "kernels/cpu/gemm/sgemm.hpp"

namespace convlab::cpu {

// B not transposed: panels of `width` columns for op(B) rows [p0, p0 + kc) and
// columns [j0, j0 + len), columns past len zero:
//   dst[panel * width * kc + p * width + j] = b[(p0 + p) * ldb + g.at(j0 + panel * width + j)]
void pack_rows_grid(const float* b, int64_t ldb, const SgemmGrid& g, int64_t p0, int kc, int64_t j0, int len,
                    int width, float* dst);

// B transposed: one NR panel for op(B) rows [p0, p0 + kc) and columns [j0, j0 + nv), columns past nv zero:
//   dst[p * NR + j] = b[(j0 + j) * ldb + g.at(p0 + p)]
void pack_cols_grid(const float* b, int64_t ldb, const SgemmGrid& g, int64_t p0, int kc, int64_t j0, int nv, int NR,
                    float* dst);

}  // namespace convlab::cpu
