// sgemm: the portable half of the hand-written SGEMM (see sgemm.hpp): the
// blocking loops, the packing routines and the threading. Never names an ISA
// except through the micro-kernel table.
//
// Blocking (AVX-512, 12x32 kernel, Skylake-SP: 32 KiB L1d, 1 MiB L2 per core):
//   KC = 256: one packed A micro-panel (12 x 256 x 4 B = 12 KiB) stays in L1
//             while the kernel sweeps B panels;
//   NC = 512: the packed B block (256 x 512 x 4 B = 512 KiB) stays in L2 and is
//             re-read once per A micro-panel (2 x 64 B per 12 FMA cycles);
//   A is packed for all of the block's M once per KC block, B once per
//   (KC, NC) block: per thread, each operand is packed exactly once.
// Threads: C is cut into one block per thread (whole MR panels along M or whole
// NR panels along N, see partition()); each thread packs what its block needs
// into its own slice of the workspace and runs the loops alone: one fork/join
// per call and no barriers. The operand shared by the blocks is packed once
// per thread (the price of no synchronisation).
#include "kernels/cpu/gemm/sgemm.hpp"

#include <omp.h>

#include <cassert>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>
#include <algorithm>

#include "core/device.hpp"
#include "core/error.hpp"
#include "kernels/cpu/gemm/sgemm_ukernels.hpp"

namespace convlab::cpu {

namespace {

const SgemmUkernel kAvx512{12, 32, sgemm_ukernel_12x32_avx512, "sgemm_ukernel_12x32_avx512",
                           sgemm_pack_transpose_avx512};
const SgemmUkernel kAvx2{6, 16, sgemm_ukernel_6x16_avx2, "sgemm_ukernel_6x16_avx2"};
const SgemmUkernel kPortable{4, 16, sgemm_ukernel_4x16_portable, "sgemm_ukernel_4x16_portable"};

struct Blocking {
  int kc, nc;
};

Blocking blocking(GemmIsa isa, const SgemmConfig& cfg) {
  Blocking b{256, 512};
  if (isa == GemmIsa::avx2) b = {256, 384};
  if (isa == GemmIsa::portable) b = {128, 256};
  if (cfg.kc > 0) b.kc = cfg.kc;
  if (cfg.nc > 0) b.nc = cfg.nc;
  return b;
}

int64_t round_up(int64_t x, int64_t m) { return (x + m - 1) / m * m; }

// The gather packs index 16 rows with 32-bit offsets.
constexpr int64_t kGatherMaxLd = (int64_t(1) << 31) / 16;

// Packed A panel for rows [i0, i0 + mv) of op(A), columns [p0, p0 + kc):
// dst[p * MR + i], rows mv..MR-1 zero. // (kc, MR)
void pack_a(Trans ta, const float* a, int64_t lda, int64_t i0, int mv, int64_t p0, int kc, int MR, float* dst,
            SgemmPackTransposeFn pack_t) {
  if (ta == Trans::no && pack_t && MR <= 16 && lda < kGatherMaxLd) {
    pack_t(a + i0 * lda + p0, lda, mv, kc, dst, MR, MR);
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
            SgemmPackTransposeFn pack_t) {
  if (tb == Trans::yes && pack_t && NR % 16 == 0 && ldb < kGatherMaxLd) {
    for (int jb = 0; jb < NR; jb += 16) {
      const int nj = nv - jb < 16 ? nv - jb : 16;
      pack_t(nj > 0 ? b + (j0 + jb) * ldb + p0 : b, ldb, nj, kc, dst + jb, NR, 16);
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

void scale_c(int m, int n, float beta, float* c, int64_t ldc) {
  for (int i = 0; i < m; ++i) {
    float* ci = c + int64_t(i) * ldc;
    if (beta == 0.0f) {
      for (int j = 0; j < n; ++j) ci[j] = 0.0f;
    } else {
      for (int j = 0; j < n; ++j) ci[j] *= beta;
    }
  }
}

// One thread's GEMM: the blocking loops around the micro-kernel. workspace:
// serial_workspace_floats(m, n, k) floats, 64-byte aligned.
int64_t serial_workspace_floats(int m, int n, int k, const SgemmUkernel& uk, const Blocking& bl) {
  if (m <= 0 || n <= 0 || k <= 0) return 0;
  const int64_t kc = k < bl.kc ? k : bl.kc;
  const int64_t NC = round_up(bl.nc, uk.nr);
  const int64_t nc = round_up(n < NC ? n : NC, uk.nr);
  return round_up(round_up(m, uk.mr) * kc, 16) + round_up(nc * kc, 16);
}

void serial_gemm(Trans ta, Trans tb, int m, int n, int k, float alpha, const float* a, int64_t lda, const float* b,
                 int64_t ldb, float beta, float* c, int64_t ldc, const SgemmUkernel& uk, const Blocking& bl,
                 float* workspace) {
  const int MR = uk.mr, NR = uk.nr;
  const int KC = bl.kc, NC = int(round_up(bl.nc, NR));
  const int kc_max = k < KC ? k : KC;
  const int mp = (m + MR - 1) / MR;
  float* apack = workspace;                                          // (mp, kc, MR)
  float* bpack = apack + round_up(int64_t(mp) * MR * kc_max, 16);     // (nc/NR, kc, NR)
  for (int pc = 0; pc < k; pc += KC) {
    const int kc = k - pc < KC ? k - pc : KC;
    const float beta_pc = pc == 0 ? beta : 1.0f;
    for (int ir = 0; ir < mp; ++ir) {
      const int mv = m - ir * MR < MR ? m - ir * MR : MR;
      pack_a(ta, a, lda, int64_t(ir) * MR, mv, pc, kc, MR, apack + int64_t(ir) * MR * kc, uk.pack_t);
    }
    for (int jc = 0; jc < n; jc += NC) {
      const int nc = n - jc < NC ? n - jc : NC;
      const int np = (nc + NR - 1) / NR;
      for (int jr = 0; jr < np; ++jr) {
        const int nv = nc - jr * NR < NR ? nc - jr * NR : NR;
        pack_b(tb, b, ldb, pc, kc, int64_t(jc) + int64_t(jr) * NR, nv, NR, bpack + int64_t(jr) * NR * kc, uk.pack_t);
      }
      for (int ir = 0; ir < mp; ++ir) {
        const int mv = m - ir * MR < MR ? m - ir * MR : MR;
        const float* ap = apack + int64_t(ir) * MR * kc;
        float* crow = c + int64_t(ir) * MR * ldc + jc;
        for (int jr = 0; jr < np; ++jr) {
          const int nv = nc - jr * NR < NR ? nc - jr * NR : NR;
          uk.fn(kc, ap, bpack + int64_t(jr) * NR * kc, crow + int64_t(jr) * NR, ldc, alpha, beta_pc, mv, nv);
        }
      }
    }
  }
}

// The thread partition: C split into `threads` blocks along M (whole MR
// panels) or along N (whole NR panels). Each thread packs the whole of the
// operand the split does not cut, so the choice weighs the largest block's
// micro-kernel cycles (MR*NR/32 per k step: two 16-lane FMA ports) against the
// elements it packs (~kPackCycles each, memory-bound). Depends only on
// (m, n, threads, MR, NR).
struct Part {
  int i0, m, j0, n;
};
constexpr int64_t kPackCycles = 3;
std::vector<Part> partition(int m, int n, int threads, int MR, int NR) {
  const int64_t mp = (m + MR - 1) / MR, np = (n + NR - 1) / NR;
  const int64_t T = threads, tile = std::max<int64_t>(MR * NR / 32, 1);
  const int64_t mpt = (mp + T - 1) / T, npt = (np + T - 1) / T;
  const int64_t cost_m = mpt * np * tile + kPackCycles * (mpt * MR + n);  // per k step
  const int64_t cost_n = mp * npt * tile + kPackCycles * (m + npt * NR);
  const bool split_m = cost_m < cost_n || (cost_m == cost_n && m >= n);
  std::vector<Part> parts;
  const int64_t panels = split_m ? mp : np;
  const int step = split_m ? MR : NR, len = split_m ? m : n;
  for (int64_t t = 0; t < T; ++t) {
    const int64_t lo = panels * t / T, hi = panels * (t + 1) / T;
    const int a0 = int(lo * step), a1 = int(std::min<int64_t>(hi * step, len));
    if (a1 <= a0) continue;
    parts.push_back(split_m ? Part{a0, a1 - a0, 0, n} : Part{0, m, a0, a1 - a0});
  }
  return parts;
}

void sgemm_row_major(Trans ta, Trans tb, int m, int n, int k, float alpha, const float* a, int64_t lda,
                     const float* b, int64_t ldb, float beta, float* c, int64_t ldc, const SgemmConfig& cfg,
                     void* workspace) {
  if (m <= 0 || n <= 0) return;
  if (k <= 0 || alpha == 0.0f) {
    scale_c(m, n, beta, c, ldc);
    return;
  }
  const GemmIsa isa = sgemm_resolve_isa(cfg.isa);
  const SgemmUkernel& uk = sgemm_ukernel(isa);
  const Blocking bl = blocking(isa, cfg);
  const std::vector<Part> parts = partition(m, n, cfg.threads > 0 ? cfg.threads : 1, uk.mr, uk.nr);

  std::unique_ptr<void, decltype(&std::free)> owned(nullptr, &std::free);
  if (!workspace) {
    const size_t bytes = round_up(int64_t(sgemm_workspace_bytes(m, n, k, cfg)), 64);
    owned.reset(std::aligned_alloc(64, bytes));
    if (!owned) fail("sgemm: out of memory for packing buffers");
    workspace = owned.get();
  }
  std::vector<float*> ws(parts.size());
  float* next = static_cast<float*>(workspace);
  for (size_t t = 0; t < parts.size(); ++t) {
    ws[t] = next;
    next += serial_workspace_floats(parts[t].m, parts[t].n, k, uk, bl);
  }
  const int nparts = int(parts.size());
  // One fork and one join per call: no barriers inside the blocking loops (a
  // barrier on a busy shared machine can cost a scheduler time slice).
#pragma omp parallel for schedule(static, 1) num_threads(nparts) if (nparts > 1)
  for (int t = 0; t < nparts; ++t) {
    const Part& pt = parts[size_t(t)];
    const float* at = ta == Trans::no ? a + int64_t(pt.i0) * lda : a + pt.i0;
    const float* bt = tb == Trans::no ? b + pt.j0 : b + int64_t(pt.j0) * ldb;
    serial_gemm(ta, tb, pt.m, pt.n, k, alpha, at, lda, bt, ldb, beta, c + int64_t(pt.i0) * ldc + pt.j0, ldc, uk, bl,
                ws[size_t(t)]);
  }
}

}  // namespace

std::string_view to_string(GemmIsa isa) {
  switch (isa) {
    case GemmIsa::auto_: return "auto";
    case GemmIsa::avx512: return "avx512";
    case GemmIsa::avx2: return "avx2";
    case GemmIsa::portable: return "portable";
  }
  return "?";
}

bool sgemm_isa_supported(GemmIsa isa) {
  const CpuInfo& ci = cpu_info();
  switch (isa) {
    case GemmIsa::avx512: return ci.avx512f && ci.avx2 && ci.fma;
    case GemmIsa::avx2: return ci.avx2 && ci.fma;
    default: return true;
  }
}

GemmIsa sgemm_resolve_isa(GemmIsa isa) {
  if (isa == GemmIsa::auto_) {
    if (sgemm_isa_supported(GemmIsa::avx512)) return GemmIsa::avx512;
    if (sgemm_isa_supported(GemmIsa::avx2)) return GemmIsa::avx2;
    return GemmIsa::portable;
  }
  if (!sgemm_isa_supported(isa)) fail("sgemm: this CPU does not support " + std::string(to_string(isa)));
  return isa;
}

const SgemmUkernel& sgemm_ukernel(GemmIsa isa) {
  switch (sgemm_resolve_isa(isa)) {
    case GemmIsa::avx512: return kAvx512;
    case GemmIsa::avx2: return kAvx2;
    default: return kPortable;
  }
}

size_t sgemm_workspace_bytes(int m, int n, int k, const SgemmConfig& cfg) {
  if (m <= 0 || n <= 0 || k <= 0) return 0;
  const GemmIsa isa = sgemm_resolve_isa(cfg.isa);
  const SgemmUkernel& uk = sgemm_ukernel(isa);
  const Blocking bl = blocking(isa, cfg);
  // Column-major calls run as the transposed row-major problem: cover both.
  int64_t most = 0;
  for (int flip = 0; flip < 2; ++flip) {
    const int mm = flip ? n : m, nn = flip ? m : n;
    int64_t floats = 0;
    for (const Part& pt : partition(mm, nn, cfg.threads > 0 ? cfg.threads : 1, uk.mr, uk.nr))
      floats += serial_workspace_floats(pt.m, pt.n, k, uk, bl);
    most = std::max(most, floats);
  }
  return size_t(most) * sizeof(float);
}

void sgemm(Layout layout, Trans trans_a, Trans trans_b, int m, int n, int k, float alpha, const float* a,
           int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc, const SgemmConfig& cfg,
           void* workspace) {
  assert(m >= 0 && n >= 0 && k >= 0);
  if (layout == Layout::row_major) {
    assert(ldc >= n);
    assert(lda >= (trans_a == Trans::no ? k : m));
    assert(ldb >= (trans_b == Trans::no ? n : k));
    sgemm_row_major(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, cfg, workspace);
  } else {
    // Column-major C is row-major C^T = op(B)^T op(A)^T; a column-major matrix
    // read row-major is its transpose, so the transposes carry over unchanged.
    assert(ldc >= m);
    sgemm_row_major(trans_b, trans_a, n, m, k, alpha, b, ldb, a, lda, beta, c, ldc, cfg, workspace);
  }
}

}  // namespace convlab::cpu
