// The sgemm driver's packing routines (sgemm.cpp only; see the notes there):
// op(A) into MR-row panels, op(B) into NR-column panels, through grids too.
#pragma once
#include <cstdint>

#include "kernels/cpu/gemm/sgemm.hpp"

namespace convlab::cpu {

// Packed A panel for rows [i0, i0 + mv) of op(A), columns [p0, p0 + kc): dst[p * MR + i], rows mv..MR-1 zero.
void pack_a(Trans ta, const float* a, int64_t lda, int64_t i0, int mv, int64_t p0, int kc, int MR, float* dst,
            const SgemmUkernel& uk);
// Packed B panel for rows [p0, p0 + kc) of op(B), columns [j0, j0 + nv): dst[p * NR + j], columns nv..NR-1 zero.
void pack_b(Trans tb, const float* b, int64_t ldb, int64_t p0, int kc, int64_t j0, int nv, int NR, float* dst,
            const SgemmUkernel& uk);
// Row-wise packing of a contiguous-row operand for a whole block of panels at once:
//   dst[panel * width * kc + p * width + j] = src[(p0 + p) * lds + j0 + panel * width + j]
void pack_rows(const float* src, int64_t lds, int64_t p0, int kc, int64_t j0, int len, int width, float* dst,
               const SgemmUkernel& uk);
// The packed B block for op(B) rows [pc, pc + kc), columns [jc, jc + nc): NR panels, the first `fused`
// of them left to the micro-kernel (uk.fn_pack); through a grid, those with grid_fused[panel] set.
void pack_b_block(Trans tb, const float* b, int64_t ldb, const SgemmGrid& grid, int pc, int kc, int jc, int nc,
                  int fused, float* bpack, const SgemmUkernel& uk, const char* grid_fused = nullptr);

}  // namespace convlab::cpu
