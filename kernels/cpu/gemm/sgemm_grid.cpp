#include "kernels/cpu/gemm/sgemm_grid.hpp"

#include <algorithm>
#include <cassert>
#include <cstring>
#include <vector>

#include "kernels/cpu/gemm/sgemm_pack.hpp"

namespace convlab::cpu {

namespace {

// col_step 1 (a batch's images one after another): the block's columns are a
// few contiguous runs (one per image it touches). Consecutive panels that lie
// whole in one run are packed together by pack_rows (the ISA's row packer, vector
// copies); the panels a run boundary cuts are copied segment by segment. (Every
// panel by segments -- a memcpy call per row of at most `width` floats -- took 37 %
// of a 1x1 forward with 32 output channels on AVX2, more than its micro-kernel.)
void pack_rows_runs(const float* b, int64_t ldb, const SgemmGrid& g, int64_t p0, int kc, int64_t j0, int len,
                    int width, float* dst, const char* skip, const SgemmUkernel* uk) {
  const int panels = (len + width - 1) / width;
  auto whole = [&](int q) {  // panel q packed by pack_rows: not skipped, in one run
    const int v = std::min(width, len - q * width);
    return uk && !(skip && skip[q]) && g.run(j0 + int64_t(q) * width) >= v;
  };
  for (int q = 0; q < panels;) {
    if (!whole(q)) {
      ++q;
      continue;
    }
    int e = q + 1;  // panels [q, e): whole, each starting where the last one ends
    while (e < panels && whole(e) && g.at(j0 + int64_t(e) * width) == g.at(j0 + int64_t(e - 1) * width) + width) ++e;
    const int n = std::min(len, e * width) - q * width;
    pack_rows(b, ldb, p0, kc, g.at(j0 + int64_t(q) * width), n, width, dst + int64_t(q) * width * kc, *uk);
    q = e;
  }
  struct Seg {
    int64_t src, dst;  // offset in b's row; offset in the packed block (panel * width * kc + column)
    int n;
  };
  std::vector<Seg> segs;
  for (int j = 0; j < len;) {
    const int in_panel = width - j % width;
    const int n = int(std::min<int64_t>({int64_t(len - j), int64_t(in_panel), g.run(j0 + j)}));
    const int q = j / width;
    if (!(skip && skip[q]) && !whole(q)) segs.push_back({g.at(j0 + j), int64_t(q) * width * kc + j % width, n});
    j += n;
  }
  if (segs.empty()) return;
  const int last_q = len / width;
  const int tail = len % width && !(skip && skip[last_q]) && !whole(last_q) ? len % width : 0;  // its zero columns
  float* last = dst + int64_t(last_q) * width * kc;
  for (int p = 0; p < kc; ++p) {
    const float* s = b + (p0 + p) * ldb;
    const int64_t row = int64_t(p) * width;
    for (const Seg& sg : segs) {
      std::memcpy(dst + sg.dst + row, s + sg.src, sizeof(float) * size_t(sg.n));
    }
    if (tail)
      for (int j = tail; j < width; ++j) last[row + j] = 0.0f;
  }
}

}  // namespace

void pack_rows_grid(const float* b, int64_t ldb, const SgemmGrid& g, int64_t p0, int kc, int64_t j0, int len,
                    int width, float* dst, const char* skip, const SgemmUkernel* uk) {
  if (g.col_step == 1) {
    pack_rows_runs(b, ldb, g, p0, kc, j0, len, width, dst, skip, uk);
    return;
  }
  const int panels = (len + width - 1) / width;
  std::vector<int64_t> off(size_t(panels) * size_t(width), 0);  // the row offsets of the block's columns
  for (int j = 0; j < len; ++j) off[size_t(j)] = g.at(j0 + j);
  for (int p = 0; p < kc; ++p) {
    const float* s = b + (p0 + p) * ldb;
    for (int q = 0; q < panels; ++q) {
      const int v = len - q * width < width ? len - q * width : width;
      float* d = dst + int64_t(q) * width * kc + int64_t(p) * width;
      const int64_t* o = off.data() + int64_t(q) * width;
      for (int j = 0; j < v; ++j) d[j] = s[o[j]];
      for (int j = v; j < width; ++j) d[j] = 0.0f;
    }
  }
}

void pack_cols_grid(const float* b, int64_t ldb, const SgemmGrid& g, int64_t p0, int kc, int64_t j0, int nv, int NR,
                    float* dst) {
  std::vector<int64_t> off(static_cast<size_t>(kc), 0);  // the row offsets of the block's k indices
  for (int p = 0; p < kc; ++p) off[size_t(p)] = g.at(p0 + p);
  for (int p = 0; p < kc; ++p) {
    float* d = dst + int64_t(p) * NR;
    for (int j = nv; j < NR; ++j) d[j] = 0.0f;
  }
  // 8 columns of op(B) (8 rows of b) at a time, so the writes of one panel row stay in one cache line.
  for (int jb = 0; jb < nv; jb += 8) {
    const int je = jb + 8 < nv ? jb + 8 : nv;
    for (int p = 0; p < kc; ++p) {
      float* d = dst + int64_t(p) * NR;
      for (int j = jb; j < je; ++j) d[j] = b[(j0 + j) * ldb + off[size_t(p)]];
    }
  }
}

namespace {

// call(c, ldc, ct) on the C tile at rows [0, mv), columns [j0, j0 + nv) of crow through cg: in place
// where they lie one after another (ct nullptr); in two places where they lie in two images and the
// call can write them so (two: SgemmCTwo); otherwise through a tile on the stack gathered from C
// (beta != 0 only) and scattered back, run by run.
template <class Call>
void with_c_tile(const SgemmUkernel& uk, float* crow, int64_t ldc, const SgemmGrid& cg, int64_t j0, float beta,
                 int mv, int nv, bool two, Call&& call) {
  const int64_t first = cg.run(j0);
  if (first >= nv) {
    call(crow + cg.at(j0), ldc, nullptr);
    return;
  }
  if (two && cg.run(j0 + first) >= nv - first) {
    const SgemmCTwo ct{crow + cg.at(j0 + first), int(first)};
    call(crow + cg.at(j0), ldc, &ct);
    return;
  }
  alignas(64) float tile[12 * 32];
  const int NR = uk.nr;
  assert(uk.mr * NR <= 12 * 32);
  // The tile's columns as runs: [j, j + len) at off .. off + len - 1 in each row (one per image touched).
  struct Run {
    int j, len;
    int64_t off;
  } runs[32];
  int nruns = 0;
  for_runs(cg, j0, nv, [&](int j, int64_t off, int len) { runs[nruns++] = {j, len, off}; });
  if (beta != 0.0f)
    for (int i = 0; i < mv; ++i)
      for (int r = 0; r < nruns; ++r)
        std::memcpy(tile + i * NR + runs[r].j, crow + int64_t(i) * ldc + runs[r].off, sizeof(float) * runs[r].len);
  call(tile, int64_t(NR), nullptr);
  for (int i = 0; i < mv; ++i)
    for (int r = 0; r < nruns; ++r)
      std::memcpy(crow + int64_t(i) * ldc + runs[r].off, tile + i * NR + runs[r].j, sizeof(float) * runs[r].len);
}

}  // namespace

void ukernel_grid_c(const SgemmUkernel& uk, int kc, const float* ap, const float* bp, float* crow, int64_t ldc,
                    const SgemmGrid& cg, int64_t j0, float alpha, float beta, int mv, int nv, const SgemmPrefetch* pf) {
  const bool two = uk.fn_c2 && mv == uk.mr && nv > uk.nr / 2;
  with_c_tile(uk, crow, ldc, cg, j0, beta, mv, nv, two, [&](float* c, int64_t ld, const SgemmCTwo* ct) {
    if (ct)
      uk.fn_c2(kc, ap, bp, c, ld, alpha, beta, nv, ct, pf);
    else
      uk.fn(kc, ap, bp, c, ld, alpha, beta, mv, nv, pf);
  });
}

int fused_panel(const SgemmUkernel& uk, const SgemmGrid& g, int64_t j0) {
  const int64_t first = g.run(j0);
  if (first >= uk.nr) return uk.fn_pack ? 1 : 0;
  return uk.fn_pack2 && g.run(j0 + first) >= uk.nr - first ? 2 : 0;
}

void ukernel_pack_grid(const SgemmUkernel& uk, int kc, const float* ap, const float* b_rows, int64_t ldb,
                       const SgemmGrid& g, int64_t j0, float* bp, float* crow, int64_t ldc, const SgemmGrid& cg,
                       int64_t cj, float alpha, float beta, const SgemmPrefetch* pf) {
  const int split = int(std::min<int64_t>(g.run(j0), uk.nr));
  const float* src0 = b_rows + g.at(j0);
  with_c_tile(uk, crow, ldc, cg, cj, beta, uk.mr, uk.nr, true, [&](float* c, int64_t ld, const SgemmCTwo* ct) {
    if (split >= uk.nr)
      uk.fn_pack(kc, ap, src0, ldb, bp, c, ld, alpha, beta, pf, ct);
    else
      uk.fn_pack2(kc, ap, src0, b_rows + g.at(j0 + split), split, ldb, bp, c, ld, alpha, beta, pf, ct);
  });
}

void scale_c_grid(int m, int n, float beta, float* c, int64_t ldc, const SgemmGrid& cg) {
  for (int i = 0; i < m; ++i) {
    float* ci = c + int64_t(i) * ldc;
    for (int j = 0; j < n; ++j) {
      float& x = ci[cg.at(j)];
      x = beta == 0.0f ? 0.0f : x * beta;
    }
  }
}

}  // namespace convlab::cpu
