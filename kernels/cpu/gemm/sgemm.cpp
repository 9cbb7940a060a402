// sgemm: the portable half of the hand-written SGEMM (see sgemm.hpp): the
// blocking loops and the threading (the packing routines: sgemm_pack.cpp; the
// micro-kernel table: sgemm_isa.cpp). Never names an ISA except through that table.
//
// Blocking (blocking(), from this core's L1d and L2 as CPUID reports them):
//   KC: one packed A micro-panel (MR x KC) stays in L1 while the kernel sweeps
//       the B panels (12 x 408 x 4 B = 19 KiB of a 48 KiB L1d);
//   NC: the packed B block (KC x NC) stays in L2 (3/8 of it: 408 x 480 x 4 B
//       of 2 MiB) and is re-read once per A micro-panel; a shorter K block
//       gets a wider one of the same area (block_nc);
//   K is cut into equal blocks of at most KC (balanced_kc);
//   A is packed for all of the block's M once per KC block, B once per
//   (KC, NC) block: per thread, each operand is packed exactly once.
// Loops: for pc (KC): pack A; for jc (NC): pack B; for ir (MR): for jr (NR):
// micro-kernel. Packing: operands whose k-rows are contiguous (A transposed,
// B not) are dealt out row by row across all panels, or, for B on a kernel
// with a packing variant (uk.fn_pack), written by the first row of tiles'
// calls while they compute (through a batch's grid too: panels in one image,
// or in two with uk.fn_pack2); the strided sides use register transposes
// (16 x 16 AVX-512, 8 x 8 AVX2). While a block computes, its calls prefetch
// the source of the block packed next into L2 (PrefetchPlan; B not transposed,
// kernels that take runs).
// Threads: C is cut into one block per thread (whole MR panels along M or whole
// NR panels along N, see partition()); each thread packs what its block needs
// into its own slice of the workspace and runs the loops alone: one fork/join
// per call and no barriers. The operand shared by the blocks is packed once
// per thread (the price of no synchronisation). Long reductions: split-K
// (sgemm_split_k below).
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
#include "kernels/cpu/gemm/sgemm_grid.hpp"
#include "kernels/cpu/gemm/sgemm_pack.hpp"
#include "kernels/cpu/gemm/sgemm_prefetch_plan.hpp"
#include "kernels/cpu/gemm/sgemm_ukernels.hpp"

namespace convlab::cpu {

namespace {

struct Blocking {
  int kc, nc;
  bool nc_fixed = false;  // cfg.nc given: no widening for short K blocks
};

// Cache blocking from this core's caches (cpu_info(): CPUID; 32 KiB L1d and
// 1 MiB L2 where the CPU does not say):
//   KC: the A micro-panel (MR x KC) takes at most 40 % of L1d, the rest is the
//       B lines streaming through and the C tile: 12 x 408 x 4 B = 19 KiB of
//       48 KiB, 12 x 272 x 4 B of 32 KiB; at most 512 (per-call overhead is
//       amortised by then, and the B block must still fit L2).
//   NC: the packed B block (KC x NC) takes at most 3/8 of L2: while the kernel
//       reads it, the source of the next block (as large) is prefetched beside
//       it, and the rest holds C lines and A panels passing through.
// Portable: 128 x 256 (the scalar kernel is far from any of this).
Blocking blocking(GemmIsa isa, const SgemmUkernel& uk, const SgemmConfig& cfg) {
  const CpuInfo& ci = cpu_info();
  const int64_t l1 = ci.l1d_bytes > 0 ? ci.l1d_bytes : 32 << 10, l2 = ci.l2_bytes > 0 ? ci.l2_bytes : 1 << 20;
  Blocking b{128, 256};
  if (isa != GemmIsa::portable) {
    b.kc = int(std::clamp<int64_t>(l1 * 2 / 5 / (uk.mr * int64_t(sizeof(float))) / 8 * 8, 128, 512));
    b.nc = int(std::max<int64_t>(l2 * 3 / 8 / (b.kc * int64_t(sizeof(float))) / uk.nr * uk.nr, uk.nr));
  }
  if (cfg.kc > 0) b.kc = cfg.kc;
  if (cfg.nc > 0) b.nc = cfg.nc, b.nc_fixed = true;
  return b;
}

int64_t round_up(int64_t x, int64_t m) { return (x + m - 1) / m * m; }

int balanced_kc(int k, int kc) {
  const int blocks = (k + kc - 1) / kc;
  return blocks <= 1 ? kc : (k + blocks - 1) / blocks;
}

// NC for K blocks of kc < KC: the B block keeps its area KC x NC (its share
// of L2), so a short K (the backward-data GEMMs, K = 96..192, and the fully
// connected backward-filter ones, K = 32) gets wider blocks: fewer sweeps of
// the A panels through L2 per C.
int block_nc(const Blocking& bl, int kc, int NR) {
  const int64_t nc = round_up(bl.nc, NR);
  if (bl.nc_fixed || kc >= bl.kc) return int(nc);
  return int(std::max<int64_t>(nc, int64_t(bl.kc) * bl.nc / kc / NR * NR));
}

// One thread's GEMM: the blocking loops around the micro-kernel. workspace:
// serial_workspace_floats(m, n, k) floats, 64-byte aligned.
int64_t serial_workspace_floats(int m, int n, int k, const SgemmUkernel& uk, const Blocking& bl) {
  if (m <= 0 || n <= 0 || k <= 0) return 0;
  const int KC = balanced_kc(k, bl.kc);
  const int64_t kc = k < KC ? k : KC;
  const int64_t NC = block_nc(bl, int(kc), uk.nr);
  const int64_t nc = round_up(n < NC ? n : NC, uk.nr);
  return round_up(round_up(m, uk.mr) * kc, 16) + round_up(nc * kc, 16);
}

void serial_gemm(Trans ta, Trans tb, int m, int n, int k, float alpha, const float* a, int64_t lda, const float* b,
                 int64_t ldb, float beta, float* c, int64_t ldc, const SgemmUkernel& uk, const Blocking& bl,
                 const Grids& grids, float* workspace) {
  const SgemmGrid& grid = grids.b;
  const int MR = uk.mr, NR = uk.nr;
  // K is cut into equal blocks of at most bl.kc (363 -> 182 + 181, not
  // 256 + 107: a short last block pays the C update for few FMAs).
  const int KC = balanced_kc(k, bl.kc), NC = block_nc(bl, k < KC ? k : KC, NR);
  const int kc_max = k < KC ? k : KC;
  const int mp = (m + MR - 1) / MR;
  float* apack = workspace;                                          // (mp, kc, MR)
  float* bpack = apack + round_up(int64_t(mp) * MR * kc_max, 16);     // (nc/NR, kc, NR)
  // A is prefetched for the next KC block only when it is small beside the B
  // block (small M: the forward and backward-filter GEMMs); a large A streams
  // through packing in long rows the hardware prefetcher follows.
  const bool prefetch_a = int64_t(m) * KC <= int64_t(KC) * NC / 2;
  std::vector<char> grid_fused;  // per panel of a block through a grid: packed by the micro-kernel
  for (int pc = 0; pc < k; pc += KC) {
    const int kc = k - pc < KC ? k - pc : KC;
    const float beta_pc = pc == 0 ? beta : 1.0f;
    if (ta == Trans::yes) {
      pack_rows(a, lda, pc, kc, 0, m, MR, apack, uk);
    } else if (grids.a.on()) {  // A's k index through its grid: each contiguous run packed as a dense one
      for (int ir = 0; ir < mp; ++ir) {
        const int mv = m - ir * MR < MR ? m - ir * MR : MR;
        float* dst = apack + int64_t(ir) * MR * kc;
        for_runs(grids.a, pc, kc, [&](int p, int64_t off, int len) {
          pack_a(Trans::no, a + off, lda, int64_t(ir) * MR, mv, 0, len, MR, dst + int64_t(p) * MR, uk);
        });
      }
    } else {
      for (int ir = 0; ir < mp; ++ir) {
        const int mv = m - ir * MR < MR ? m - ir * MR : MR;
        pack_a(ta, a, lda, int64_t(ir) * MR, mv, pc, kc, MR, apack + int64_t(ir) * MR * kc, uk);
      }
    }
    for (int jc = 0; jc < n; jc += NC) {
      const int nc = n - jc < NC ? n - jc : NC;
      const int np = (nc + NR - 1) / NR;
      // B not transposed: the full panels are packed by the first row of
      // tiles' calls themselves (uk.fn_pack), the last partial one here.
      // Through a batch's grids (col_step 1), the full panels whose columns lie in one or two images
      // (fused_panel); their C tiles in place, in two places or through the stack tile (with_c_tile).
      const bool fuse = tb == Trans::no && uk.fn_pack && m >= MR && !grid.on() && !grids.c.on();
      const int fused = fuse ? nc / NR : 0;
      const bool fuse_grid = tb == Trans::no && uk.fn_pack && m >= MR && grid.on() && grid.col_step == 1 &&
                             (!grids.c.on() || grids.c.col_step == 1);
      if (fuse_grid) {
        grid_fused.assign(size_t(np), 0);
        for (int jr = 0; jr < nc / NR; ++jr)
          grid_fused[size_t(jr)] = char(fused_panel(uk, grid, int64_t(jc) + int64_t(jr) * NR));
      }
      pack_b_block(tb, b, ldb, grid, pc, kc, jc, nc, fused, bpack, uk, fuse_grid ? grid_fused.data() : nullptr);
      // What is packed after this block: B at (pc, jc + NC), or A and B at
      // (pc + KC, 0), prefetched by this block's calls. Only for B not
      // transposed (its source is kc short row segments far apart, the
      // packing the hardware prefetcher follows worst) and kernels that take
      // runs: measured, prefetching the transposed B of the NT shapes or on
      // the AVX2 kernel (half the cycles per k step) cost more than it saved.
      PrefetchPlan plan;
      const int jn = jc + NC < n ? jc + NC : 0, pn = jc + NC < n ? pc : pc + KC;
      if (pn < k && tb == Trans::no && uk.prefetch_steps > 0 && !grid.on() && !grids.a.on()) {
        plan.set_run(kc / uk.prefetch_steps);
        const int kcn = k - pn < KC ? k - pn : KC, ncn = n - jn < NC ? n - jn : NC;
        if (pn != pc && prefetch_a) {
          if (ta == Trans::no) plan.add(a + pn, lda, m, int64_t(kcn) * 4);
          else plan.add(a + int64_t(pn) * lda, lda, kcn, int64_t(m) * 4);
        }
        plan.add(b + int64_t(pn) * ldb + jn, ldb, kcn, int64_t(ncn) * 4);
      }
      SgemmPrefetch pf;
      for (int ir = 0; ir < mp; ++ir) {
        const int mv = m - ir * MR < MR ? m - ir * MR : MR;
        const float* ap = apack + int64_t(ir) * MR * kc;
        float* crow = c + int64_t(ir) * MR * ldc + (grids.c.on() ? 0 : jc);
        for (int jr = 0; jr < np; ++jr) {
          const int nv = nc - jr * NR < NR ? nc - jr * NR : NR;
          if (ir == 0 && fuse_grid && grid_fused[size_t(jr)]) {
            const int64_t j = int64_t(jc) + int64_t(jr) * NR;
            ukernel_pack_grid(uk, kc, ap, b + int64_t(pc) * ldb, ldb, grid, j, bpack + int64_t(jr) * NR * kc, crow,
                              ldc, grids.c, grids.c.on() ? j : int64_t(jr) * NR, alpha, beta_pc, plan.next(pf));
          } else if (grids.c.on()) {
            ukernel_grid_c(uk, kc, ap, bpack + int64_t(jr) * NR * kc, crow, ldc, grids.c, int64_t(jc) + int64_t(jr) * NR,
                           alpha, beta_pc, mv, nv, plan.next(pf));
          } else if (ir == 0 && jr < fused) {
            uk.fn_pack(kc, ap, b + int64_t(pc) * ldb + jc + int64_t(jr) * NR, ldb, bpack + int64_t(jr) * NR * kc,
                       crow + int64_t(jr) * NR, ldc, alpha, beta_pc, plan.next(pf), nullptr);
          } else {
            uk.fn(kc, ap, bpack + int64_t(jr) * NR * kc, crow + int64_t(jr) * NR, ldc, alpha, beta_pc, mv, nv,
                  plan.next(pf));
          }
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

// Split-K: a reduction at least twice C's longer side (a convolution's backward-filter GEMM, K = the
// batch's pixels) is cut in two halves, each a GEMM of its own on half the threads (T = 1: one after the other)
// into C and a buffer, then summed: C = (alpha A0 B0 + beta C) + alpha A1 B1, whatever the thread count.
// Every thread packs only its half's operands: with C split along M or N instead, each thread packs the
// whole of one operand, and C's 19 panels (DenseNet's 608 channels) go 10 : 9 to two threads.
// Depends only on (m, n, k) and the blocking, so results stay bit-identical across thread counts. At 2x
// rather than 4x (2 threads, Zen 5): DenseNet's block3.l20 1x1 backward-filter (K 3136, C 800) 1.60 -> 1.47 ms,
// ResNet-50's res4.proj 8.53 -> 8.27; none slower.
bool split_k(int m, int n, int k, const Blocking& bl) {
  return int64_t(k) >= 2 * int64_t(std::max(m, n)) && k >= 2 * bl.kc;
}
struct KJob {
  int half;
  Part pt;
};
std::vector<KJob> split_k_jobs(int m, int n, int threads, const SgemmUkernel& uk) {
  std::vector<KJob> jobs;
  const int t1 = std::max(threads / 2, 1), t0 = std::max(threads - t1, 1);
  for (const Part& pt : partition(m, n, t0, uk.mr, uk.nr)) jobs.push_back({0, pt});
  for (const Part& pt : partition(m, n, t1, uk.mr, uk.nr)) jobs.push_back({1, pt});
  return jobs;
}
int64_t split_k_workspace_floats(int m, int n, int k, int threads, const SgemmUkernel& uk, const Blocking& bl) {
  int64_t floats = round_up(int64_t(m) * n, 16);  // the second half's C
  for (const KJob& j : split_k_jobs(m, n, threads, uk))
    floats += serial_workspace_floats(j.pt.m, j.pt.n, j.half ? k - k / 2 : k / 2, uk, bl);
  return floats;
}

void sgemm_split_k(Trans ta, Trans tb, int m, int n, int k, float alpha, const float* a, int64_t lda,
                   const float* b, int64_t ldb, float beta, float* c, int64_t ldc, const SgemmConfig& cfg,
                   const SgemmUkernel& uk, const Blocking& bl, float* workspace) {
  const int T = cfg.threads > 0 ? cfg.threads : 1, k0 = k / 2;
  const std::vector<KJob> jobs = split_k_jobs(m, n, T, uk);
  float* c1 = workspace;  // (m, n): alpha A1 B1
  std::vector<float*> ws(jobs.size());
  float* next = c1 + round_up(int64_t(m) * n, 16);
  for (size_t j = 0; j < jobs.size(); ++j) {
    ws[j] = next;
    next += serial_workspace_floats(jobs[j].pt.m, jobs[j].pt.n, jobs[j].half ? k - k0 : k0, uk, bl);
  }
  const int njobs = int(jobs.size());
#pragma omp parallel for schedule(static, 1) num_threads(std::min(T, njobs)) if (T > 1)
  for (int j = 0; j < njobs; ++j) {
    const Part& pt = jobs[size_t(j)].pt;
    const bool second = jobs[size_t(j)].half == 1;
    const int koff = second ? k0 : 0, kk = second ? k - k0 : k0;
    Grids grids{cfg.a_grid, cfg.b_grid, second ? SgemmGrid{} : cfg.c_grid};
    // A's and B's k index from koff on (through their grids along k where they have one).
    if (grids.a.on()) grids.a.first += koff;
    const float* at = ta == Trans::no ? a + int64_t(pt.i0) * lda + (grids.a.on() ? 0 : koff)
                                      : a + int64_t(koff) * lda + pt.i0;
    const float* bt;
    if (tb == Trans::no) {
      if (grids.b.on()) grids.b.first += pt.j0;
      bt = b + int64_t(koff) * ldb + (grids.b.on() ? 0 : pt.j0);
    } else {
      if (grids.b.on()) grids.b.first += koff;
      bt = b + int64_t(pt.j0) * ldb + (grids.b.on() ? 0 : koff);
    }
    if (grids.c.on()) grids.c.first += pt.j0;
    float* ct = second ? c1 + int64_t(pt.i0) * n + pt.j0 : c + int64_t(pt.i0) * ldc + (grids.c.on() ? 0 : pt.j0);
    serial_gemm(ta, tb, pt.m, pt.n, kk, alpha, at, lda, bt, ldb, second ? 0.0f : beta, ct, second ? n : ldc, uk, bl,
                grids, ws[size_t(j)]);
  }
#pragma omp parallel for schedule(static) num_threads(T) if (T > 1)
  for (int i = 0; i < m; ++i) {
    float* ci = c + int64_t(i) * ldc;
    const float* di = c1 + int64_t(i) * n;
    for_runs(cfg.c_grid, 0, n, [&](int j, int64_t off, int len) {
      for (int x = 0; x < len; ++x) ci[off + x] += di[j + x];
    });
  }
}

void sgemm_row_major(Trans ta, Trans tb, int m, int n, int k, float alpha, const float* a, int64_t lda,
                     const float* b, int64_t ldb, float beta, float* c, int64_t ldc, const SgemmConfig& cfg,
                     void* workspace) {
  if (m <= 0 || n <= 0) return;
  if (k <= 0 || alpha == 0.0f) {
    scale_c_grid(m, n, beta, c, ldc, cfg.c_grid);
    return;
  }
  const GemmIsa isa = sgemm_resolve_isa(cfg.isa);
  const SgemmUkernel& uk = sgemm_ukernel(isa);
  const Blocking bl = blocking(isa, uk, cfg);
  const std::vector<Part> parts = partition(m, n, cfg.threads > 0 ? cfg.threads : 1, uk.mr, uk.nr);

  std::unique_ptr<void, decltype(&std::free)> owned(nullptr, &std::free);
  if (!workspace) {
    const size_t bytes = round_up(int64_t(sgemm_workspace_bytes(m, n, k, cfg)), 64);
    owned.reset(std::aligned_alloc(64, bytes));
    if (!owned) fail("sgemm: out of memory for packing buffers");
    workspace = owned.get();
  }
  if (split_k(m, n, k, bl)) {
    sgemm_split_k(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, cfg, uk, bl, static_cast<float*>(workspace));
    return;
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
    // Columns indexed through a grid (B not transposed, C) start at the block's column pt.j0 on the grid.
    Grids grids{cfg.a_grid, cfg.b_grid, cfg.c_grid};
    if (grids.b.on() && tb == Trans::no) grids.b.first += pt.j0;
    if (grids.c.on()) grids.c.first += pt.j0;
    const float* bt = tb == Trans::no ? (grids.b.on() ? b : b + pt.j0) : b + int64_t(pt.j0) * ldb;
    float* ct = c + int64_t(pt.i0) * ldc + (grids.c.on() ? 0 : pt.j0);
    serial_gemm(ta, tb, pt.m, pt.n, k, alpha, at, lda, bt, ldb, beta, ct, ldc, uk, bl, grids, ws[size_t(t)]);
  }
}

}  // namespace

size_t sgemm_workspace_bytes(int m, int n, int k, const SgemmConfig& cfg) {
  if (m <= 0 || n <= 0 || k <= 0) return 0;
  const GemmIsa isa = sgemm_resolve_isa(cfg.isa);
  const SgemmUkernel& uk = sgemm_ukernel(isa);
  const Blocking bl = blocking(isa, uk, cfg);
  // Column-major calls run as the transposed row-major problem: cover both (a call with a grid is row-major).
  const bool row_major = cfg.a_grid.on() || cfg.b_grid.on() || cfg.c_grid.on();
  int64_t most = 0;
  for (int flip = 0; flip < (row_major ? 1 : 2); ++flip) {
    const int mm = flip ? n : m, nn = flip ? m : n;
    int64_t floats = 0;
    const int threads = cfg.threads > 0 ? cfg.threads : 1;
    if (split_k(mm, nn, k, bl))
      floats = split_k_workspace_floats(mm, nn, k, threads, uk, bl);
    else
      for (const Part& pt : partition(mm, nn, threads, uk.mr, uk.nr))
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
    assert(cfg.c_grid.on() || ldc >= n);
    assert(cfg.a_grid.on() || lda >= (trans_a == Trans::no ? k : m));
    assert(cfg.b_grid.on() || ldb >= (trans_b == Trans::no ? n : k));
    if (cfg.a_grid.on() && trans_a == Trans::yes) fail("sgemm: an A grid is for A not transposed only");
    sgemm_row_major(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, cfg, workspace);
  } else {
    // Column-major C is row-major C^T = op(B)^T op(A)^T; a column-major matrix
    // read row-major is its transpose, so the transposes carry over unchanged.
    assert(ldc >= m);
    if (cfg.a_grid.on() || cfg.b_grid.on() || cfg.c_grid.on()) fail("sgemm: grids are for row-major calls only");
    sgemm_row_major(trans_b, trans_a, n, m, k, alpha, b, ldb, a, lda, beta, c, ldc, cfg, workspace);
  }
}

}  // namespace convlab::cpu
