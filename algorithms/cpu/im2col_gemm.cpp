#include "algorithms/cpu/im2col_gemm.hpp"

#include <algorithm>
#include <cstring>
#include <vector>

#include <omp.h>

#include "core/stage_profile.hpp"
#include "kernels/cpu/gemm/sgemm.hpp"
#include "kernels/cpu/im2col/im2col.hpp"

namespace convlab {

namespace {

int64_t align16(int64_t elems) { return (elems + 15) / 16 * 16; }  // keeps every sub-buffer 64-byte aligned

bool is_direct(const ConvProblem& p) {
  return p.r == 1 && p.s == 1 && p.stride_h == 1 && p.stride_w == 1 && p.pad_h == 0 && p.pad_w == 0 &&
         p.symmetric_padding();
}

// 1x1 with a stride, no padding before the image, every sampled pixel inside it (no end padding read).
bool is_strided_1x1(const ConvProblem& p) {
  return p.r == 1 && p.s == 1 && (p.stride_h > 1 || p.stride_w > 1) && p.pad_h == 0 && p.pad_w == 0 &&
         int64_t(p.p() - 1) * p.stride_h < p.h && int64_t(p.q() - 1) * p.stride_w < p.w;
}

// dyc (Kg x nb*PQ) <- diff_dst[n0 + i][g*Kg + k][:] (or the reverse, for fwd's tmp -> dst).
void gather_dy(const ConvShape& sh, int n0, int nb, int g, const float* dy, float* dyc, int threads) {
  const int64_t pq = int64_t(sh.p) * sh.q, ld = nb * pq;
#pragma omp parallel for collapse(2) schedule(static) num_threads(threads) if (threads > 1)
  for (int k = 0; k < sh.kg(); ++k)
    for (int i = 0; i < nb; ++i)
      std::memcpy(dyc + k * ld + i * pq, dy + ((int64_t(n0) + i) * sh.k + int64_t(g) * sh.kg() + k) * pq,
                  sizeof(float) * size_t(pq));
}
void scatter_dst(const ConvShape& sh, int n0, int nb, int g, const float* tmp, float* dst, int threads) {
  const int64_t pq = int64_t(sh.p) * sh.q, ld = nb * pq;
#pragma omp parallel for collapse(2) schedule(static) num_threads(threads) if (threads > 1)
  for (int k = 0; k < sh.kg(); ++k)
    for (int i = 0; i < nb; ++i)
      std::memcpy(dst + ((int64_t(n0) + i) * sh.k + int64_t(g) * sh.kg() + k) * pq, tmp + k * ld + i * pq,
                  sizeof(float) * size_t(pq));
}

// The GEMM of one group over L = nb*P*Q columns. Every matrix with an L-long
// side has leading dimension L: col (CRS, L), tmp/dyc (Kg, L), and with
// nb == 1 dst / diff_dst themselves; in the direct case src is the column
// matrix (Cg, H*W) with H*W = P*Q = L.
// Strided (bwd-filter): one image's GEMM on src as it lies, (Cg, H*W) read through the grid.
Im2colGemmCall gemm_call(const ConvProblem& p, Direction dir, int64_t L, bool strided = false) {
  const int64_t crs = int64_t(p.c_per_group()) * p.r * p.s;
  const int kg = p.k_per_group();
  if (strided) {
    const int64_t hw = int64_t(p.h) * p.w;
    Im2colGemmCall g = Im2colGemmCall::dense(false, true, kg, int(crs), int(L), L, hw, crs);  // bwd-filter: dW_g (+)= dy * src^T
    g.b_grid = {p.q(), p.stride_w, int64_t(p.stride_h) * p.w};
    return g;
  }
  switch (dir) {
    case Direction::fwd:  // C(Kg x L) = W_g(Kg x CRS) * col(CRS x L)
      return Im2colGemmCall::dense(false, false, kg, int(L), int(crs), crs, L, L);
    case Direction::bwd_data:  // col(CRS x L) = W_g^T * dyc(Kg x L)
      return Im2colGemmCall::dense(true, false, int(crs), int(L), kg, crs, L, L);
    case Direction::bwd_filter:  // dW_g(Kg x CRS) (+)= dyc(Kg x L) * col^T
      return Im2colGemmCall::dense(false, true, kg, int(crs), int(L), L, L, crs);
  }
  return {};
}

// The batched 1x1 GEMM of one group (plan.batched): the long side X = N*H*W runs over (image, pixel); an
// image's plane of a channel lies H*W floats after the last one's, its next channel's plane H*W further, and
// the next image's C*H*W (K*P*Q for dst) from its start.
//   fwd        dst_g (Kg x X) = W_g (Kg x Cg) * src_g (Cg x X)          B and C through grids
//   bwd-data   src_g (Cg x X) = W_g^T (Cg x Kg) * dst_g (Kg x X)        B and C through grids
//   bwd-filter dW_g (Kg x Cg) = dst_g (Kg x X) * src_g^T               A's and B^T's k through grids
Im2colGemmCall batched_call(const ConvProblem& p, Direction dir) {
  const int64_t hw = int64_t(p.h) * p.w;  // == P*Q
  const int cg = p.c_per_group(), kg = p.k_per_group();
  const int x = int(p.n * hw);
  const Im2colGemmGrid src{int(hw), 1, int64_t(p.c) * hw}, dst{int(hw), 1, int64_t(p.k) * hw};
  Im2colGemmCall g;
  switch (dir) {
    case Direction::fwd:
      g = Im2colGemmCall::dense(false, false, kg, x, cg, cg, hw, hw);
      g.b_grid = src, g.c_grid = dst;
      break;
    case Direction::bwd_data:
      g = Im2colGemmCall::dense(true, false, cg, x, kg, cg, hw, hw);
      g.b_grid = dst, g.c_grid = src;
      break;
    case Direction::bwd_filter:
      g = Im2colGemmCall::dense(false, true, kg, cg, x, hw, hw, cg);
      g.a_grid = dst, g.b_grid = src;
      break;
  }
  return g;
}

}  // namespace

Im2colGemmPlan plan_im2col_gemm(const ConvProblem& p, Direction dir, bool grid_gemm) {
  Im2colGemmPlan pl;
  const int64_t pq = int64_t(p.p()) * p.q();
  const int64_t crs = int64_t(p.c_per_group()) * p.r * p.s;
  const int kg = p.k_per_group();
  // Per-image GEMMs pack the weights (Kg x Cg) once per image instead of once per chunk: taken where the
  // column matrix they save (Cg x P*Q floats per image, written and read back) moves more.
  pl.strided = grid_gemm && dir == Direction::bwd_filter && is_strided_1x1(p) && 2 * pq >= kg;
  if (grid_gemm && is_direct(p) && int64_t(p.n) * pq <= INT32_MAX) {
    pl.batched = true;
    pl.nb = p.n;
    pl.gemm = batched_call(p, dir);
    pl.gemm_calls = p.groups;
    return pl;
  }
  pl.direct = is_direct(p) || pl.strided;
  if (pl.direct) {
    pl.nb = 1;
    pl.chunks = p.n;
  } else {
    const int64_t per_image = (crs + kg) * pq * int64_t(sizeof(float));
    const int nb_max = int(std::clamp<int64_t>(kColumnBudget / std::max<int64_t>(per_image, 1), 1, p.n));
    pl.chunks = (p.n + nb_max - 1) / nb_max;
    pl.nb = (p.n + pl.chunks - 1) / pl.chunks;  // balanced chunks
  }
  const int64_t L = pl.nb * pq;
  if (!pl.direct) {
    pl.col_elems = crs * L;
    pl.buf_elems = pl.nb > 1 ? kg * L : 0;
  }
  pl.gemm = gemm_call(p, dir, L, pl.strided);
  pl.gemm_calls = int64_t(p.groups) * pl.chunks;
  return pl;
}

Support Im2colGemmBase::supports(const ConvProblem& p, Direction dir) const {
  (void)dir;
  const int64_t pq = int64_t(p.p()) * p.q();
  const int64_t crs = int64_t(p.c_per_group()) * p.r * p.s;
  if (crs > INT32_MAX || pq > INT32_MAX / 2)
    return Support::no("GEMM dimensions exceed 32-bit ints (C/g*R*S = " + std::to_string(crs) + ")");
  return Support::yes();
}

size_t Im2colGemmBase::workspace_bytes(const ConvProblem& p, Direction dir) const {
  const Im2colGemmPlan pl = plan_im2col_gemm(p, dir, gemm_reads_grid());
  // The GEMM's scratch for the full chunk and for the short last one.
  const int64_t pq = int64_t(p.p()) * p.q();
  const int last = p.n - (pl.chunks - 1) * pl.nb;
  size_t gws = 0;
  if (pl.strided)  // one-thread GEMMs, one scratch per thread (run_strided)
    return strided_workspace_per_thread(pl) * size_t(cpu_info().hardware_threads);
  for (int t = 1; t <= cpu_info().hardware_threads; ++t)  // any thread count run() may use
    gws = std::max({gws, gemm_workspace_bytes(pl.gemm, t),
                    pl.batched ? 0 : gemm_workspace_bytes(gemm_call(p, dir, last * pq, pl.strided), t)});
  return size_t(align16(pl.col_elems) + align16(pl.buf_elems)) * sizeof(float) + gws;
}

void Im2colGemmBase::run(const ConvProblem& p, Direction dir, const ConvBuffers& buf, void* workspace,
                         const ExecContext& ctx) const {
  const ConvShape sh = to_shape(p);
  const Im2colGemmPlan pl = plan_im2col_gemm(p, dir, gemm_reads_grid());
  const int T = ctx.resolved_threads();
  const int TG = std::min(T, cpu_info().hardware_threads);  // the GEMM scratch is sized for this many
  if (pl.batched) {  // one GEMM per group over the batch, the tensors read and written where they lie
    run_batched(p, dir, pl, buf, workspace, TG, ctx);
    return;
  }
  float* col = static_cast<float*>(workspace);                // (CRS, L)
  float* tmp = col + align16(pl.col_elems);                    // (Kg, L): fwd output / gathered dy
  void* gws = tmp + align16(pl.buf_elems);                     // the GEMM's packing space
  if (pl.strided) {  // every image's GEMM, in one stage
    StageClock clock(ctx.profile);
    run_strided(p, pl, buf, workspace, TG);
    const Im2colGemmCall& g = pl.gemm;
    clock.lap("GEMM", StageKind::compute, 2.0 * g.m * g.n * double(g.k) * p.n * p.groups,
              4.0 * (double(g.m) * g.k + double(g.k) * g.n + double(g.m) * g.n) * p.n * p.groups);
    return;
  }
  const int64_t pq = int64_t(sh.p) * sh.q, hw = int64_t(sh.h) * sh.w;
  const int64_t crs = int64_t(sh.cg()) * sh.r * sh.s;
  const int kg = sh.kg();
  // Stage accounting (core/stage_profile.hpp): im2col reads the chunk's images
  // of the group and writes the column matrix; col2im the reverse; the GEMM's
  // flops are 2 M N K and its bytes its three matrices once; the dst / diff_dst
  // copies through tmp move Kg x L floats each way.
  StageClock clock(ctx.profile);
  const double img_bytes = 4.0 * double(sh.cg()) * hw;

  for (int chunk = 0; chunk < pl.chunks; ++chunk) {
    const int n0 = chunk * pl.nb;
    const int nb = std::min(pl.nb, sh.n - n0);
    const int L = int(nb * pq);
    const Im2colGemmCall g = gemm_call(p, dir, L, pl.strided);  // this chunk's shape (the last chunk may be short)
    for (int grp = 0; grp < sh.groups; ++grp) {
      const float* wg = buf.wei + int64_t(grp) * kg * crs;  // (Kg, CRS)
      float* dwg = buf.wei + int64_t(grp) * kg * crs;
      const float* x = pl.direct ? buf.src + (int64_t(n0) * sh.c + int64_t(grp) * sh.cg()) * hw : col;  // (CRS, L)
      float* dx = pl.direct ? buf.src + (int64_t(n0) * sh.c + int64_t(grp) * sh.cg()) * hw : col;
      float* y_at = buf.dst + (int64_t(n0) * sh.k + int64_t(grp) * kg) * pq;  // (Kg, PQ) of image n0
      const bool packed_y = nb > 1;  // dst/diff_dst go through tmp (Kg, L); never when direct (nb = 1)
      const double col_bytes = 4.0 * double(crs) * L, y_bytes = 4.0 * double(kg) * L, images = double(nb) * img_bytes;
      const double gemm_flops = 2.0 * double(g.m) * g.n * g.k;
      const double gemm_bytes = 4.0 * (double(g.m) * g.k + double(g.k) * g.n + double(g.m) * g.n);
      switch (dir) {
        case Direction::fwd:
          if (!pl.direct) {
            cpu::im2col(sh, nb, grp, buf.src + int64_t(n0) * sh.c * hw, col, L, T);
            clock.lap("im2col", StageKind::memory, 0, images + col_bytes);
          }
          gemm(g, 1.0f, wg, x, 0.0f, packed_y ? tmp : y_at, TG, gws);
          clock.lap("GEMM", StageKind::compute, gemm_flops, gemm_bytes);
          if (packed_y) {
            scatter_dst(sh, n0, nb, grp, tmp, buf.dst, T);
            clock.lap("dst scatter", StageKind::memory, 0, 2 * y_bytes);
          }
          break;
        case Direction::bwd_data:
          if (packed_y) {
            gather_dy(sh, n0, nb, grp, buf.dst, tmp, T);
            clock.lap("diff_dst gather", StageKind::memory, 0, 2 * y_bytes);
          }
          gemm(g, 1.0f, wg, packed_y ? tmp : y_at, 0.0f, dx, TG, gws);
          clock.lap("GEMM", StageKind::compute, gemm_flops, gemm_bytes);
          if (!pl.direct) {
            cpu::col2im(sh, nb, grp, col, L, buf.src + int64_t(n0) * sh.c * hw, T);
            clock.lap("col2im", StageKind::memory, 0, col_bytes + images);
          }
          break;
        case Direction::bwd_filter:
          if (!pl.direct) {
            cpu::im2col(sh, nb, grp, buf.src + int64_t(n0) * sh.c * hw, col, L, T);
            clock.lap("im2col", StageKind::memory, 0, images + col_bytes);
          }
          if (packed_y) {
            gather_dy(sh, n0, nb, grp, buf.dst, tmp, T);
            clock.lap("diff_dst gather", StageKind::memory, 0, 2 * y_bytes);
          }
          gemm(g, 1.0f, packed_y ? tmp : y_at, x, chunk == 0 ? 0.0f : 1.0f, dwg, TG, gws);
          clock.lap("GEMM", StageKind::compute, gemm_flops, gemm_bytes);
          break;
      }
    }
  }
}

void Im2colGemmBase::run_batched(const ConvProblem& p, Direction dir, const Im2colGemmPlan& pl,
                                 const ConvBuffers& buf, void* gemm_ws, int threads, const ExecContext& ctx) const {
  StageClock clock(ctx.profile);
  const Im2colGemmCall& g = pl.gemm;
  const int64_t hw = int64_t(p.h) * p.w;
  const int cg = p.c_per_group(), kg = p.k_per_group();
  for (int grp = 0; grp < p.groups; ++grp) {
    float* x = buf.src + int64_t(grp) * cg * hw;  // image 0's plane of the group's first channel
    float* y = buf.dst + int64_t(grp) * kg * hw;
    float* w = buf.wei + int64_t(grp) * kg * cg;
    switch (dir) {
      case Direction::fwd: gemm(g, 1.0f, w, x, 0.0f, y, threads, gemm_ws); break;
      case Direction::bwd_data: gemm(g, 1.0f, w, y, 0.0f, x, threads, gemm_ws); break;
      case Direction::bwd_filter: gemm(g, 1.0f, y, x, 0.0f, w, threads, gemm_ws); break;
    }
  }
  clock.lap("GEMM", StageKind::compute, g.flops() * p.groups,
            4.0 * (double(g.m) * g.k + double(g.k) * g.n + double(g.m) * g.n) * p.groups);
}

std::pair<int, int> Im2colGemmBase::strided_rows(int m, int t, int parts) {
  constexpr int kRowBlock = 24;  // whole micro-kernel rows: a multiple of MR 4, 6 and 12
  const int blocks = (m + kRowBlock - 1) / kRowBlock;
  return {std::min(m, blocks * t / parts * kRowBlock), std::min(m, blocks * (t + 1) / parts * kRowBlock)};
}

// Each thread's GEMM is the plan's call cut to its rows [m0, m1): a shorter M can change the GEMM's own
// plan (a reduction twice the longer side is split in two, with a second C), so the scratch is the most
// any thread's rows need for any thread count run_strided may use, not the whole call's.
size_t Im2colGemmBase::strided_workspace_per_thread(const Im2colGemmPlan& pl) const {
  const int kg = pl.gemm.m;
  const int most_parts = std::max(1, std::min(cpu_info().hardware_threads, (kg + 23) / 24));
  std::vector<int> rows;
  for (int parts = 1; parts <= most_parts; ++parts)
    for (int t = 0; t < parts; ++t) {
      const auto [m0, m1] = strided_rows(kg, t, parts);
      if (m1 > m0) rows.push_back(m1 - m0);
    }
  std::sort(rows.begin(), rows.end());
  rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
  size_t most = 0;
  for (int m : rows) {
    Im2colGemmCall g = pl.gemm;
    g.m = m;
    most = std::max(most, gemm_workspace_bytes(g, 1));
  }
  return size_t(align16(int64_t(most + 3) / 4)) * sizeof(float);
}

void Im2colGemmBase::run_strided(const ConvProblem& p, const Im2colGemmPlan& pl,
                                 const ConvBuffers& buf, void* gemm_ws, int parts) const {
  const int64_t pq = int64_t(p.p()) * p.q(), hw = int64_t(p.h) * p.w;
  const int64_t cg = p.c_per_group();
  const int kg = p.k_per_group();
  parts = std::max(1, std::min(parts, (kg + 23) / 24));  // <= strided_workspace_per_thread's most_parts
  const size_t per_thread = strided_workspace_per_thread(pl);
#pragma omp parallel num_threads(parts) if (parts > 1)
  {
    const int t = omp_get_thread_num();
    const auto [m0, m1] = strided_rows(kg, t, omp_get_num_threads());
    Im2colGemmCall g = pl.gemm;
    g.m = m1 - m0;
    void* ws = static_cast<char*>(gemm_ws) + size_t(t) * per_thread;
    for (int grp = 0; grp < p.groups && g.m > 0; ++grp)
      for (int n = 0; n < p.n; ++n) {
        const float* x = buf.src + (int64_t(n) * p.c + grp * cg) * hw;           // (Cg, H*W), read through the grid
        const float* dy = buf.dst + (int64_t(n) * p.k + int64_t(grp) * kg + m0) * pq;  // (m1 - m0, P*Q) of image n
        // diff_wei rows (+)= dy rows * sampled src^T, images in order
        gemm(g, 1.0f, dy, x, n == 0 ? 0.0f : 1.0f, buf.wei + (int64_t(grp) * kg + m0) * cg, 1, ws);
      }
  }
}

namespace {
cpu::SgemmConfig sgemm_config(const Im2colGemmCall& g, int threads) {
  cpu::SgemmConfig cfg;
  cfg.threads = threads;
  const auto grid = [](const Im2colGemmGrid& q) { return cpu::SgemmGrid{q.cols, q.col_step, q.row_step, 0}; };
  cfg.a_grid = grid(g.a_grid);
  cfg.b_grid = grid(g.b_grid);
  cfg.c_grid = grid(g.c_grid);
  return cfg;
}
}  // namespace

size_t CpuIm2colGemm::gemm_workspace_bytes(const Im2colGemmCall& g, int threads) const {
  return cpu::sgemm_workspace_bytes(g.m, g.n, g.k, sgemm_config(g, threads));
}

void CpuIm2colGemm::gemm(const Im2colGemmCall& g, float alpha, const float* a, const float* b, float beta, float* c,
                         int threads, void* workspace) const {
  const cpu::SgemmConfig cfg = sgemm_config(g, threads);
  cpu::sgemm(cpu::Layout::row_major, g.trans_a ? cpu::Trans::yes : cpu::Trans::no,
             g.trans_b ? cpu::Trans::yes : cpu::Trans::no, g.m, g.n, g.k, alpha, a, g.lda, b, g.ldb, beta, c, g.ldc,
             cfg, workspace);
}

}  // namespace convlab
