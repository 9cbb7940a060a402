// B's packing through a 2-D grid (SgemmGrid, sgemm.hpp): the strided 1x1
// convolution's subsampled image read where it lies (scalar gathers: B is
// packed once per (KC, NC) block and reused by every MR row panel, so the
// gather is a small part of a GEMM with more than a few rows), and a batch's
// images one after another (col_step 1: copied run by run).
#pragma once
#include <algorithm>
#include <cstdint>

#include "kernels/cpu/gemm/sgemm.hpp"

namespace convlab::cpu {

// B not transposed: panels of `width` columns for op(B) rows [p0, p0 + kc) and
// columns [j0, j0 + len), columns past len zero:
//   dst[panel * width * kc + p * width + j] = b[(p0 + p) * ldb + g.at(j0 + panel * width + j)]
// skip (col_step 1 only; nullptr: none): panels q with skip[q] are left alone (the micro-kernel packs them).
// uk (col_step 1 only; nullptr: none): its row packer packs the panels that lie whole in one run.
void pack_rows_grid(const float* b, int64_t ldb, const SgemmGrid& g, int64_t p0, int kc, int64_t j0, int len,
                    int width, float* dst, const char* skip = nullptr, const SgemmUkernel* uk = nullptr);

// B transposed: one NR panel for op(B) rows [p0, p0 + kc) and columns [j0, j0 + nv), columns past nv zero:
//   dst[p * NR + j] = b[(j0 + j) * ldb + g.at(p0 + p)]
void pack_cols_grid(const float* b, int64_t ldb, const SgemmGrid& g, int64_t p0, int kc, int64_t j0, int nv, int NR,
                    float* dst);

// The grids of one call (SgemmConfig), each starting at its thread block.
struct Grids {
  SgemmGrid a, b, c;
};

// f(p, off, len) for each run of the indices [p0, p0 + kc) that lie one after
// another through g: indices p0 + p .. p0 + p + len - 1 at off .. off + len - 1.
template <class F>
void for_runs(const SgemmGrid& g, int64_t p0, int kc, F&& f) {
  for (int p = 0; p < kc;) {
    const int len = int(std::min<int64_t>(kc - p, g.run(p0 + p)));
    f(p, g.at(p0 + p), len);
    p += len;
  }
}

// One micro-kernel call (uk.fn) on the C tile at rows [0, mv) of crow, columns
// [j0, j0 + nv) through the grid cg: in place where they lie one after another
// (one image's pixels), otherwise through a tile on the stack gathered from C
// (beta != 0 only) and scattered back, run by run.
void ukernel_grid_c(const SgemmUkernel& uk, int kc, const float* ap, const float* bp, float* crow, int64_t ldc,
                    const SgemmGrid& cg, int64_t j0, float alpha, float beta, int mv, int nv, const SgemmPrefetch* pf);

// Whether the micro-kernel can pack B's full panel at column j0 through the grid g (col_step 1)
// while it computes: 1 its columns lie in one image (uk.fn_pack), 2 in two (uk.fn_pack2), 0 not.
int fused_panel(const SgemmUkernel& uk, const SgemmGrid& g, int64_t j0);
// The packing micro-kernel call for that panel (fused_panel != 0): B's columns from j0 on through g
// in the rows from b_rows (b at the block's first k row), the packed panel written to bp, the full
// MR x NR C tile at column cj of crow through cg (dense when off: crow + cj).
void ukernel_pack_grid(const SgemmUkernel& uk, int kc, const float* ap, const float* b_rows, int64_t ldb,
                       const SgemmGrid& g, int64_t j0, float* bp, float* crow, int64_t ldc, const SgemmGrid& cg,
                       int64_t cj, float alpha, float beta, const SgemmPrefetch* pf);
// C = beta * C (beta 0: zeros) for C's m x n elements through the grid cg (dense when off).
void scale_c_grid(int m, int n, float beta, float* c, int64_t ldc, const SgemmGrid& cg);

}  // namespace convlab::cpu
