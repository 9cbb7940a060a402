// The sgemm driver's packing routines (sgemm_pack.hpp).
#include "kernels/cpu/gemm/sgemm_pack.hpp"

#include <algorithm>

#include "kernels/cpu/gemm/sgemm_grid.hpp"

namespace convlab::cpu {

namespace {

// Bound on the leading dimension the transposing packs are used for (keeps
// their 16-row address arithmetic far from overflow).
constexpr int64_t kGatherMaxLd = (int64_t(1) << 31) / 16;

}  // namespace

// Packed A panel for rows [i0, i0 + mv) of op(A), columns [p0, p0 + kc):
// dst[p * MR + i], rows mv..MR-1 zero. // (kc, MR)
void pack_a(Trans ta, const float* a, int64_t lda, int64_t i0, int mv, int64_t p0, int kc, int MR, float* dst,
            const SgemmUkernel& uk) {
  if (ta == Trans::no && uk.pack_t && MR <= uk.pack_lanes && lda < kGatherMaxLd) {
    uk.pack_t(a + i0 * lda + p0, lda, mv, kc, dst, MR, MR);
  } else if (ta == Trans::no) {
    const float* rows[32];
    for (int i = 0; i < mv; ++i) rows[i] = a + (i0 + i) * lda + p0;
    for (int p = 0; p < kc; ++p) {
      float* d = dst + int64_t(p) * MR;
      for (int i = 0; i < mv; ++i) d[i] = rows[i][p];
      for (int i = mv; i < MR; ++i) d[i] = 0.0f;
    }
  } else {
    for (int p = 0; p < kc; ++p) {
      const float* s = a + (p0 + p) * lda + i0;
      float* d = dst + int64_t(p) * MR;
      for (int i = 0; i < mv; ++i) d[i] = s[i];
      for (int i = mv; i < MR; ++i) d[i] = 0.0f;
    }
  }
}

// Packed B panel for rows [p0, p0 + kc) of op(B), columns [j0, j0 + nv):
// dst[p * NR + j], columns nv..NR-1 zero. // (kc, NR)
void pack_b(Trans tb, const float* b, int64_t ldb, int64_t p0, int kc, int64_t j0, int nv, int NR, float* dst,
            const SgemmUkernel& uk) {
  const int L = uk.pack_lanes;
  if (tb == Trans::yes && uk.pack_t && NR % L == 0 && ldb < kGatherMaxLd) {
    for (int jb = 0; jb < NR; jb += L) {
      const int nj = std::max(std::min(nv - jb, L), 0);
      uk.pack_t(nj > 0 ? b + (j0 + jb) * ldb + p0 : b, ldb, nj, kc, dst + jb, NR, L);
    }
  } else if (tb == Trans::no) {
    for (int p = 0; p < kc; ++p) {
      const float* s = b + (p0 + p) * ldb + j0;
      float* d = dst + int64_t(p) * NR;
      for (int j = 0; j < nv; ++j) d[j] = s[j];
      for (int j = nv; j < NR; ++j) d[j] = 0.0f;
    }
  } else {
    // Transposed: 8 columns of op(B) (8 rows of b) at a time, so the writes of
    // one row of the panel stay in one cache line.
    for (int j = nv; j < NR; ++j)
      for (int p = 0; p < kc; ++p) dst[int64_t(p) * NR + j] = 0.0f;
    for (int jb = 0; jb < nv; jb += 8) {
      const int je = jb + 8 < nv ? jb + 8 : nv;
      for (int p = 0; p < kc; ++p) {
        float* d = dst + int64_t(p) * NR;
        for (int j = jb; j < je; ++j) d[j] = b[(j0 + j) * ldb + p0 + p];
      }
    }
  }
}

// Row-wise packing of a contiguous-row operand (op(A) transposed: rows of a
// are k; op(B) not transposed: rows of b are k) for a whole block of panels at
// once: each source row is read once, left to right, and dealt out to the
// panels (a long sequential read the prefetcher follows, instead of one short
// read per row and panel, a new page each time).
//   dst[panel * width * kc + p * width + j] = src[(p0 + p) * lds + j0 + panel * width + j]
void pack_rows(const float* src, int64_t lds, int64_t p0, int kc, int64_t j0, int len, int width, float* dst,
               const SgemmUkernel& uk) {
  // Whole vectors only (12-wide masked stores straddle lines: scalar is faster).
  if (uk.pack_rows && width % uk.pack_lanes == 0 && width <= 2 * uk.pack_lanes) {
    uk.pack_rows(src + p0 * lds + j0, lds, kc, len, width, dst);
    return;
  }
  const int panels = (len + width - 1) / width;
  for (int p = 0; p < kc; ++p) {
    const float* s = src + (p0 + p) * lds + j0;
    for (int q = 0; q < panels; ++q) {
      const int v = len - q * width < width ? len - q * width : width;
      float* d = dst + int64_t(q) * width * kc + int64_t(p) * width;
      const float* sq = s + int64_t(q) * width;
      for (int j = 0; j < v; ++j) d[j] = sq[j];
      for (int j = v; j < width; ++j) d[j] = 0.0f;
    }
  }
}


// The packed B block for op(B) rows [pc, pc + kc), columns [jc, jc + nc): NR
// panels, the first `fused` of them left to the micro-kernel (uk.fn_pack).
// Through a grid, the panels with fused[panel] set are left to the micro-kernel.
void pack_b_block(Trans tb, const float* b, int64_t ldb, const SgemmGrid& grid, int pc, int kc, int jc, int nc,
                  int fused, float* bpack, const SgemmUkernel& uk, const char* grid_fused) {
  const int NR = uk.nr, np = (nc + NR - 1) / NR;
  if (grid.on()) {  // B read through its grid (sgemm_grid.hpp)
    if (tb == Trans::no)
      pack_rows_grid(b, ldb, grid, pc, kc, jc, nc, NR, bpack, grid_fused, &uk);
    else if (grid.col_step == 1)  // runs of consecutive k: dense transposing packs
      for (int jr = 0; jr < np; ++jr) {
        const int nv = std::min(nc - jr * NR, NR);
        float* dst = bpack + int64_t(jr) * NR * kc;
        for_runs(grid, pc, kc, [&](int p, int64_t off, int len) {
          pack_b(Trans::yes, b + off, ldb, 0, len, int64_t(jc) + int64_t(jr) * NR, nv, NR, dst + int64_t(p) * NR, uk);
        });
      }
    else
      for (int jr = 0; jr < np; ++jr)
        pack_cols_grid(b, ldb, grid, pc, kc, int64_t(jc) + int64_t(jr) * NR, std::min(nc - jr * NR, NR), NR,
                       bpack + int64_t(jr) * NR * kc);
  } else if (tb == Trans::no) {
    if (fused < np)
      pack_rows(b, ldb, pc, kc, int64_t(jc) + int64_t(fused) * NR, nc - fused * NR, NR,
                bpack + int64_t(fused) * NR * kc, uk);
  } else {
    for (int jr = 0; jr < np; ++jr) {
      const int nv = nc - jr * NR < NR ? nc - jr * NR : NR;
      pack_b(tb, b, ldb, pc, kc, int64_t(jc) + int64_t(jr) * NR, nv, NR, bpack + int64_t(jr) * NR * kc, uk);
    }
  }
}

}  // namespace convlab::cpu
