// The hand-written SGEMM against an exact fp64 reference on small-integer data
// (every product and partial sum is exact in fp32, so results must be equal):
// sizes one below / equal / one above MR, NR, KC and NC (with shrunken KC/NC so
// every blocking loop runs more than once), both layouts, all four transposes,
// alpha/beta (beta = 0 over a NaN-filled C), padded leading dimensions with
// guard values that must survive, thread counts 1 and 2, and every micro-kernel
// the CPU can run; B read through a grid (a strided 1x1 convolution's input).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "kernels/cpu/gemm/sgemm.hpp"

namespace convlab::cpu {
namespace {

struct Mat {
  std::vector<float> v;
  int64_t ld;
};

// A rows x cols logical matrix stored per layout with ld = minimal + 3, random
// integers in [-3, 3] (padding filled with a guard value).
Mat random_mat(std::mt19937& rng, Layout lay, int rows, int cols) {
  const int64_t inner = lay == Layout::row_major ? cols : rows;
  const int64_t outer = lay == Layout::row_major ? rows : cols;
  Mat m{std::vector<float>(size_t(std::max<int64_t>(outer, 1) * (inner + 3)), 777.0f), inner + 3};
  std::uniform_int_distribution<int> d(-3, 3);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) m.v[size_t(o * m.ld + i)] = float(d(rng));
  return m;
}

float at(const Mat& m, Layout lay, int64_t r, int64_t c) {
  return lay == Layout::row_major ? m.v[size_t(r * m.ld + c)] : m.v[size_t(c * m.ld + r)];
}

struct Case {
  Layout lay;
  Trans ta, tb;
  int m, n, k;
  float alpha, beta;
};

std::string describe(const Case& c, const SgemmConfig& cfg) {
  return std::string(c.lay == Layout::row_major ? "row" : "col") + (c.ta == Trans::yes ? " T" : " N") +
         (c.tb == Trans::yes ? "T" : "N") + " m=" + std::to_string(c.m) + " n=" + std::to_string(c.n) +
         " k=" + std::to_string(c.k) + " alpha=" + std::to_string(c.alpha) + " beta=" + std::to_string(c.beta) +
         " isa=" + std::string(to_string(cfg.isa)) + " threads=" + std::to_string(cfg.threads) +
         " kc=" + std::to_string(cfg.kc) + " nc=" + std::to_string(cfg.nc);
}

// Returns the number of mismatching elements (0 = pass).
int check(const Case& cs, const SgemmConfig& cfg, uint32_t seed) {
  std::mt19937 rng(seed);
  const Layout L = cs.lay;
  // op(A) is m x k: A stored as m x k (no) or k x m (yes).
  const Mat A = cs.ta == Trans::no ? random_mat(rng, L, cs.m, cs.k) : random_mat(rng, L, cs.k, cs.m);
  const Mat B = cs.tb == Trans::no ? random_mat(rng, L, cs.k, cs.n) : random_mat(rng, L, cs.n, cs.k);
  Mat C = random_mat(rng, L, cs.m, cs.n);
  const Mat C0 = C;
  if (cs.beta == 0.0f) {
    for (int i = 0; i < cs.m; ++i)
      for (int j = 0; j < cs.n; ++j) {
        const int64_t idx = L == Layout::row_major ? i * C.ld + j : j * C.ld + i;
        C.v[size_t(idx)] = std::nanf("");
      }
  }
  sgemm(L, cs.ta, cs.tb, cs.m, cs.n, cs.k, cs.alpha, A.v.data(), A.ld, B.v.data(), B.ld, cs.beta, C.v.data(), C.ld,
        cfg);
  int bad = 0;
  for (size_t idx = 0; idx < C.v.size(); ++idx) {
    const int64_t outer = int64_t(idx) / C.ld, inner = int64_t(idx) % C.ld;
    const int64_t i = L == Layout::row_major ? outer : inner, j = L == Layout::row_major ? inner : outer;
    double want;
    if (i < cs.m && j < cs.n) {
      double acc = 0;
      for (int p = 0; p < cs.k; ++p) {
        const double a = cs.ta == Trans::no ? at(A, L, i, p) : at(A, L, p, i);
        const double b = cs.tb == Trans::no ? at(B, L, p, j) : at(B, L, j, p);
        acc += a * b;
      }
      want = cs.alpha * acc + (cs.beta == 0.0f ? 0.0 : cs.beta * double(C0.v[idx]));
    } else {
      want = C0.v[idx];  // padding / guard: untouched
    }
    if (!(double(C.v[idx]) == want)) {
      if (bad < 3)
        ADD_FAILURE() << describe(cs, cfg) << ": C(" << i << "," << j << ") = " << C.v[idx] << ", want " << want;
      ++bad;
    }
  }
  return bad;
}

struct Param {
  GemmIsa isa;
  int threads;
};

class SgemmTest : public ::testing::TestWithParam<Param> {
 protected:
  void SetUp() override {
    if (!sgemm_isa_supported(GetParam().isa)) GTEST_SKIP() << "CPU lacks " << to_string(GetParam().isa);
  }
};

// Every edge of every blocking loop, with KC and NC shrunk so that small
// problems cross them.
TEST_P(SgemmTest, EdgesExact) {
  SgemmConfig cfg;
  cfg.isa = GetParam().isa;
  cfg.threads = GetParam().threads;
  const SgemmUkernel& uk = sgemm_ukernel(cfg.isa);
  cfg.kc = 8;
  cfg.nc = 2 * uk.nr;
  const int MR = uk.mr, NR = uk.nr, KC = cfg.kc;
  const int ms[] = {1, MR - 1, MR, MR + 1, 2 * MR + 1};
  const int ns[] = {1, NR - 1, NR, NR + 1, 2 * NR + 3};
  const int ks[] = {0, 1, KC - 1, KC, KC + 1, 2 * KC + 3};
  const float ab[][2] = {{1, 0}, {2, -1}, {-1, 3}};
  // The thread partition is independent of layout (column-major is a swap) and
  // of alpha/beta: with threads the sweep drops those to keep the test quick on
  // a loaded two-core machine.
  const bool threaded = cfg.threads > 1;
  const int n_ab = threaded ? 2 : 3;
  uint32_t seed = 1;
  int failures = 0;
  for (Layout lay : {Layout::row_major, Layout::col_major})
    if (!(threaded && lay == Layout::col_major))
    for (Trans ta : {Trans::no, Trans::yes})
      for (Trans tb : {Trans::no, Trans::yes})
        for (int m : ms)
          for (int n : ns)
            for (int k : ks)
              for (int s = 0; s < n_ab; ++s) {
                failures += check({lay, ta, tb, m, n, k, ab[s][0], ab[s][1]}, cfg, seed++) != 0;
                ASSERT_LT(failures, 5) << "stopping after 5 failing cases";
              }
}

// Every tile the micro-kernels specialise: each row count 1..MR (and MR + 1,
// a full tile and a 1-row one), column counts one below / at / one above a
// vector and the tile width, reduction lengths 1..9 (every remainder of the
// four-step loop) and one past the C-row prefetches; default blocking, so
// that the first row of tiles packs B itself (B not transposed) and the
// prefetch runs are handed out.
TEST_P(SgemmTest, EveryEdgeTileExact) {
  SgemmConfig cfg;
  cfg.isa = GetParam().isa;
  cfg.threads = GetParam().threads;
  const SgemmUkernel& uk = sgemm_ukernel(cfg.isa);
  const int MR = uk.mr, NR = uk.nr, V = NR / 2;
  const int ns[] = {1, V - 1, V, V + 1, NR - 1, NR, NR + 1, 2 * NR + V + 1};
  const int ks[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 4 * MR + 7};
  uint32_t seed = 500;
  int failures = 0;
  for (Trans ta : {Trans::no, Trans::yes})
    for (Trans tb : {Trans::no, Trans::yes})
      for (int m = 1; m <= MR + 1; ++m)
        for (int n : ns)
          for (int k : ks) {
            // C = acc, alpha * acc, alpha * acc + beta * C: the three epilogues.
            const float ab[3][2] = {{1, 0}, {2, 0}, {2, -1}};
            const int e = (m + n + k) % 3;
            failures += check({Layout::row_major, ta, tb, m, n, k, ab[e][0], ab[e][1]}, cfg, seed++) != 0;
            ASSERT_LT(failures, 5) << "stopping after 5 failing cases";
          }
}

// Default blocking: sizes around the real KC and NC, a few shapes.
TEST_P(SgemmTest, DefaultBlockingExact) {
  SgemmConfig cfg;
  cfg.isa = GetParam().isa;
  cfg.threads = GetParam().threads;
  const SgemmUkernel& uk = sgemm_ukernel(cfg.isa);
  const Case cases[] = {
      {Layout::row_major, Trans::no, Trans::no, 3 * uk.mr + 5, 517, 257, 1, 0},
      {Layout::row_major, Trans::yes, Trans::no, 2 * uk.mr, 511, 255, 1, 1},
      {Layout::row_major, Trans::no, Trans::yes, 37, 3 * uk.nr + 1, 513, 1, 0},
      {Layout::col_major, Trans::yes, Trans::yes, 29, 1100, 256, 2, -2},
  };
  uint32_t seed = 1000;
  for (const Case& c : cases) EXPECT_EQ(check(c, cfg, seed++), 0);
}

// Same inputs, different thread counts: bit-identical (the summation order of
// every element is independent of the partition).
TEST_P(SgemmTest, ThreadCountDoesNotChangeBits) {
  for (const int k : {600, 4000}) {  // 4000: a reduction split in two halves (split-K)
    const int m = 77, n = k > 1000 ? 45 : 301;
    std::mt19937 rng(5);
    std::uniform_real_distribution<float> d(-1, 1);
    std::vector<float> a(size_t(m) * k), b(size_t(k) * n), c1(size_t(m) * n), c3(size_t(m) * n);
    for (auto& x : a) x = d(rng);
    for (auto& x : b) x = d(rng);
    SgemmConfig cfg;
    cfg.isa = GetParam().isa;
    cfg.threads = 1;
    sgemm(Layout::row_major, Trans::no, Trans::no, m, n, k, 1, a.data(), k, b.data(), n, 0, c1.data(), n, cfg);
    cfg.threads = GetParam().threads + 1;
    sgemm(Layout::row_major, Trans::no, Trans::no, m, n, k, 1, a.data(), k, b.data(), n, 0, c3.data(), n, cfg);
    EXPECT_EQ(c1, c3) << "k = " << k;
  }
}

// B read through a grid (SgemmGrid): each row of the stored b an H x W image
// (plus padding with guard values), op(B)'s grid index x = (y, z) at
// y * row_step + z * col_step: a strided 1x1 convolution's subsampled input,
// as B (forward: x is op(B)'s column) and as B^T (backward-filter: x is its
// row). Shrunk KC / NC so the grid's rows cross the blocks and the threads'
// column blocks start inside a grid row.
TEST_P(SgemmTest, GridBExact) {
  SgemmConfig cfg;
  cfg.isa = GetParam().isa;
  cfg.threads = GetParam().threads;
  const SgemmUkernel& uk = sgemm_ukernel(cfg.isa);
  cfg.kc = 8;
  cfg.nc = 2 * uk.nr;
  struct Geo { int h, w, sh, sw; };
  const Geo geos[] = {{9, 9, 2, 2}, {7, 12, 2, 3}, {5, 4, 1, 2}, {11, 6, 3, 1}, {23, 17, 2, 2}};
  std::mt19937 rng(77);
  std::uniform_int_distribution<int> d(-3, 3);
  for (const Geo& g : geos)
    for (Trans tb : {Trans::no, Trans::yes})
      for (int m : {1, uk.mr + 1, 2 * uk.mr + 3}) {
        const int P = (g.h - 1) / g.sh + 1, Q = (g.w - 1) / g.sw + 1, G = P * Q, rows = 2 * 8 + 3;
        cfg.b_grid = SgemmGrid{Q, g.sw, int64_t(g.sh) * g.w, 0};
        const int n = tb == Trans::no ? G : rows, k = tb == Trans::no ? rows : G;
        const int64_t ldb = int64_t(g.h) * g.w + 5;
        std::vector<float> a(size_t(m) * k), b(size_t(rows) * ldb, 777.0f), c(size_t(m) * n, std::nanf(""));
        for (auto& x : a) x = float(d(rng));
        for (int r = 0; r < rows; ++r)
          for (int64_t i = 0; i < int64_t(g.h) * g.w; ++i) b[size_t(r * ldb + i)] = float(d(rng));
        sgemm(Layout::row_major, Trans::no, tb, m, n, k, 1.0f, a.data(), k, b.data(), ldb, 0.0f, c.data(), n, cfg);
        int bad = 0;
        for (int i = 0; i < m; ++i)
          for (int j = 0; j < n; ++j) {
            double want = 0;
            for (int p = 0; p < k; ++p) {
              const int x = tb == Trans::no ? j : p, row = tb == Trans::no ? p : j;
              want += double(a[size_t(i * k + p)]) * b[size_t(row * ldb + (x / Q) * g.sh * g.w + (x % Q) * g.sw)];
            }
            if (double(c[size_t(i * n + j)]) != want && bad++ < 3)
              ADD_FAILURE() << "grid " << g.h << "x" << g.w << " stride " << g.sh << "x" << g.sw
                            << (tb == Trans::no ? " N" : " T") << " m=" << m << ": C(" << i << "," << j
                            << ") = " << c[size_t(i * n + j)] << ", want " << want;
          }
        ASSERT_EQ(bad, 0);
      }
}

// A batch of images as the GEMM's long side (col_step 1 grids): each operand's
// x-th column (image x / hw, pixel x % hw) lies row_step apart per image, so
// runs break at image edges inside packed panels and on their edges, inside C tiles (written
// through the stack tile, beta != 0 read back) and across thread blocks.
// Forward-like (B and C through grids, A plain or transposed) and
// backward-filter-like (A and B^T through grids along k). Guard values
// between the images must survive.
TEST_P(SgemmTest, GridBatchExact) {
  const SgemmUkernel& uk = sgemm_ukernel(GetParam().isa);
  std::mt19937 rng(91);
  std::uniform_int_distribution<int> d(-3, 3);
  constexpr float kGuard = 555.0f;
  struct Batch {
    int rows, hw, images;
    int64_t ld() const { return hw; }
    int64_t row_step() const { return int64_t(rows) * hw + 3; }  // 3 guard floats after each image
    SgemmGrid grid() const { return SgemmGrid{hw, 1, row_step(), 0}; }
    size_t size() const { return size_t(row_step()) * images; }
    size_t at(int r, int64_t x) const { return size_t(x / hw * row_step() + r * int64_t(hw) + x % hw); }
  };
  for (int blocks : {0, 1})
    for (int hw : {1, 5, uk.nr - 1, uk.nr + 3, 2 * uk.nr, 49})  // 2 NR: image edges on panel edges
      for (int images : {1, 3, 60}) {  // 60: long reductions, split in two halves (split-K)
        SgemmConfig cfg;
        cfg.isa = GetParam().isa;
        cfg.threads = GetParam().threads;
        if (blocks) cfg.kc = 8, cfg.nc = uk.nr;  // blocks that cross images
        const int x = hw * images;  // the long side
        for (int m : {1, uk.mr + 1, 2 * uk.mr + 3}) {
          // Forward-like: C(m x X) = op(A)(m x kk) * B(kk x X), B and C through grids.
          for (Trans ta : {Trans::no, Trans::yes}) {
            const int kk = images == 60 ? 300 : 13;
            const Batch bb{kk, hw, images}, cb{m, hw, images};
            std::vector<float> a(size_t(m) * kk), b(bb.size(), kGuard), c(cb.size(), kGuard);
            for (auto& v : a) v = float(d(rng));
            for (int r = 0; r < kk; ++r)
              for (int64_t j = 0; j < x; ++j) b[bb.at(r, j)] = float(d(rng));
            for (int i = 0; i < m; ++i)
              for (int64_t j = 0; j < x; ++j) c[cb.at(i, j)] = float(d(rng));
            const std::vector<float> c0 = c;
            cfg.a_grid = {};
            cfg.b_grid = bb.grid();
            cfg.c_grid = cb.grid();
            const float alpha = 2, beta = (m + hw + blocks) % 2 ? -1.0f : 0.0f;  // both, on every tile
            sgemm(Layout::row_major, ta, Trans::no, m, x, kk, alpha, a.data(), ta == Trans::no ? kk : m, b.data(),
                  bb.ld(), beta, c.data(), cb.ld(), cfg);
            int bad = 0;
            for (size_t e = 0; e < c.size(); ++e)
              if (c0[e] == kGuard && c[e] != kGuard && bad++ < 3) ADD_FAILURE() << "guard overwritten at " << e;
            for (int i = 0; i < m; ++i)
              for (int64_t j = 0; j < x; ++j) {
                double want = beta * double(c0[cb.at(i, j)]);
                for (int p = 0; p < kk; ++p)
                  want += alpha * double(ta == Trans::no ? a[size_t(i * kk + p)] : a[size_t(p * m + i)]) *
                          b[bb.at(p, j)];
                if (double(c[cb.at(i, j)]) != want && bad++ < 3)
                  ADD_FAILURE() << "fwd-like hw=" << hw << " images=" << images << " m=" << m << " C(" << i << ","
                                << j << ") = " << c[cb.at(i, j)] << ", want " << want;
              }
            ASSERT_EQ(bad, 0);
          }
          // Backward-filter-like: C(m x nn) = A(m x X) * B^T, A's k and B^T's k through grids.
          const int nn = 2 * uk.nr + 1;
          const Batch ab{m, hw, images}, bb{nn, hw, images};
          std::vector<float> a(ab.size(), kGuard), b(bb.size(), kGuard), c(size_t(m) * nn, std::nanf(""));
          for (int i = 0; i < m; ++i)
            for (int64_t j = 0; j < x; ++j) a[ab.at(i, j)] = float(d(rng));
          for (int r = 0; r < nn; ++r)
            for (int64_t j = 0; j < x; ++j) b[bb.at(r, j)] = float(d(rng));
          cfg.a_grid = ab.grid();
          cfg.b_grid = bb.grid();
          cfg.c_grid = {};
          sgemm(Layout::row_major, Trans::no, Trans::yes, m, nn, x, 1.0f, a.data(), ab.ld(), b.data(), bb.ld(), 0.0f,
                c.data(), nn, cfg);
          int bad = 0;
          for (int i = 0; i < m; ++i)
            for (int j = 0; j < nn; ++j) {
              double want = 0;
              for (int64_t p = 0; p < x; ++p) want += double(a[ab.at(i, p)]) * b[bb.at(j, p)];
              if (double(c[size_t(i * nn + j)]) != want && bad++ < 3)
                ADD_FAILURE() << "bwd-filter-like hw=" << hw << " images=" << images << " m=" << m << " C(" << i
                              << "," << j << ") = " << c[size_t(i * nn + j)] << ", want " << want;
            }
          ASSERT_EQ(bad, 0);
        }
      }
}

std::string param_name(const ::testing::TestParamInfo<Param>& info) {
  return std::string(to_string(info.param.isa)) + "_t" + std::to_string(info.param.threads);
}

INSTANTIATE_TEST_SUITE_P(Isa, SgemmTest,
                         ::testing::Values(Param{GemmIsa::avx512, 1}, Param{GemmIsa::avx512, 2},
                                           Param{GemmIsa::avx2, 1}, Param{GemmIsa::avx2, 2},
                                           Param{GemmIsa::portable, 1}, Param{GemmIsa::portable, 2}),
                         param_name);

TEST(Sgemm, AutoPicksASupportedIsa) {
  const GemmIsa isa = sgemm_resolve_isa(GemmIsa::auto_);
  EXPECT_NE(isa, GemmIsa::auto_);
  EXPECT_TRUE(sgemm_isa_supported(isa));
}

}  // namespace
}  // namespace convlab::cpu
