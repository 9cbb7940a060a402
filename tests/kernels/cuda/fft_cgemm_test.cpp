// kernels/cuda/fft/fft_conv.cu's pointwise stage under the SIMT emulator: the
// batched complex GEMM over frequencies (fft_cgemm) against an fp64 complex
// matmul, with ragged sizes around its 32 x 32 tile, 8-deep slabs and groups of
// 4 frequencies, every conj combination and plane layout; and fft_cmac's three
// directions (groups, images just over one tile) against their formulas.
// Small-integer data: fp32 is exact, so results must equal the fp64 sums bit
// for bit; planes the GEMM does not own must stay untouched. Also, from the
// tile geometry (fft_cgemm_tiles.hpp): every value of a block's tile owned
// once, every slab value staged once, fragment reads without bank conflicts.
#include <gtest/gtest.h>

#include <complex>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "kernels/cuda/fft/fft_cgemm_tiles.hpp"
#include "kernels/cuda/fft/fft_conv.hpp"
#include "kernels/cuda/simt/memory.hpp"
#include "kernels/cuda/simt/simt.hpp"
#include "tests/support/smem_banks.hpp"

namespace convlab::cuda {
namespace {

using cd = std::complex<double>;

std::vector<float2> random_spectra(int64_t values, uint32_t seed) {
  std::vector<float2> v(static_cast<size_t>(values));
  uint32_t x = seed;
  auto next = [&] { x = x * 1664525u + 1013904223u; return float(int(x >> 28) - 8); };  // integers in [-8, 7]
  for (float2& z : v) z = float2{next(), next()};
  return v;
}

cd at(const std::vector<float2>& v, int64_t i) { return cd(v[size_t(i)].x, v[size_t(i)].y); }

bool same_bits(float2 a, float2 b) { return std::memcmp(&a, &b, sizeof a) == 0; }

// Runs fft_cgemm on operands of a_planes / b_planes planes into an output of
// o_planes planes prefilled with a sentinel; checks every (g, m, n, f) against
// the fp64 sum and every other value against the sentinel.
void check_gemm(const FftCgemm& g, int64_t a_planes, int64_t b_planes, int64_t o_planes, const std::string& what) {
  SCOPED_TRACE(what);
  const std::vector<float2> a = random_spectra(a_planes * g.spec, 11), b = random_spectra(b_planes * g.spec, 29);
  const float2 sentinel{-1234.5f, 6789.25f};
  std::vector<float2> o(size_t(o_planes * g.spec), sentinel);
  simt::DeviceArray<float2> da(a), db(b), dout(o);
  fft_cgemm(g, da.get(), db.get(), dout.get(), nullptr);
  const std::vector<float2> got = dout.download();
  std::vector<char> owned(o.size(), 0);
  int bad = 0;
  for (int grp = 0; grp < g.groups; ++grp)
    for (int m = 0; m < g.m; ++m)
      for (int n = 0; n < g.n; ++n)
        for (int64_t f = 0; f < g.spec; ++f) {
          cd s = 0;
          for (int k = 0; k < g.k; ++k) {
            cd x = at(a, (grp * g.a_g + m * g.a_m + k * g.a_k) * g.spec + f);
            cd y = at(b, (grp * g.b_g + k * g.b_k + n * g.b_n) * g.spec + f);
            s += (g.conj_a ? std::conj(x) : x) * (g.conj_b ? std::conj(y) : y);
          }
          const int64_t i = (grp * g.o_g + m * g.o_m + n * g.o_n) * g.spec + f;
          owned[size_t(i)] = 1;
          const float2 want{float(s.real()), float(s.imag())};
          if (!same_bits(got[size_t(i)], want) && bad++ < 5)
            ADD_FAILURE() << "g " << grp << " m " << m << " n " << n << " f " << f << ": got (" << got[size_t(i)].x
                          << ", " << got[size_t(i)].y << ") want (" << want.x << ", " << want.y << ")";
        }
  for (size_t i = 0; i < got.size(); ++i)
    if (!owned[i] && !same_bits(got[i], sentinel) && bad++ < 5)
      ADD_FAILURE() << "wrote value " << i << " it does not own";
  EXPECT_EQ(bad, 0);
}

// Row-major planes: A (groups, m, k), B (groups, k, n), out (groups, m, n), or
// transposed per operand; the conj flags as given.
FftCgemm dense(int m, int n, int k, int groups, int64_t spec, bool ta, bool tb, bool conj_a, bool conj_b) {
  FftCgemm g{};
  g.m = m; g.n = n; g.k = k; g.groups = groups; g.spec = spec;
  g.a_m = ta ? 1 : k; g.a_k = ta ? m : 1; g.a_g = int64_t(m) * k;
  g.b_k = tb ? 1 : n; g.b_n = tb ? k : 1; g.b_g = int64_t(k) * n;
  g.o_m = n; g.o_n = 1; g.o_g = int64_t(m) * n;
  g.conj_a = conj_a; g.conj_b = conj_b;
  return g;
}

TEST(FftCgemm, MatchesComplexMatmulAtRaggedSizes) {
  struct Size { int m, n, k, groups; int64_t spec; };
  // one below / above the 32 x 32 tile and the 8-deep slab; spectra that are
  // not a multiple of the 4-frequency group; a single value; groups
  const Size sizes[] = {{37, 35, 19, 2, 7}, {31, 33, 8, 1, 4}, {1, 1, 1, 1, 1}, {33, 5, 17, 3, 9}, {3, 40, 9, 1, 13}};
  for (const Size& z : sizes)
    for (int variant = 0; variant < 4; ++variant) {
      const bool ta = variant & 1, tb = variant & 2, ca = variant == 1 || variant == 2, cb = variant >= 2;
      const FftCgemm g = dense(z.m, z.n, z.k, z.groups, z.spec, ta, tb, ca, cb);
      check_gemm(g, int64_t(z.groups) * z.m * z.k, int64_t(z.groups) * z.k * z.n, int64_t(z.groups) * z.m * z.n,
                 "m " + std::to_string(z.m) + " n " + std::to_string(z.n) + " k " + std::to_string(z.k) + " groups " +
                     std::to_string(z.groups) + " spec " + std::to_string(z.spec) + " variant " +
                     std::to_string(variant));
    }
}

// The output's planes interleaved with planes it does not own (o_n = 2): those stay untouched.
TEST(FftCgemm, WritesOnlyItsOwnPlanes) {
  FftCgemm g = dense(34, 9, 10, 2, 6, false, false, false, true);
  g.o_m = 2 * 9 + 1; g.o_n = 2; g.o_g = 34 * g.o_m;
  check_gemm(g, 2 * 34 * 10, 2 * 10 * 9, 2 * 34 * g.o_m, "interleaved output planes");
}

TEST(FftCgemm, TileGeometryOwnsEachValueOnceWithoutBankConflicts) {
  std::vector<int> owner(kCgemmBM * kCgemmBN * kCgemmF, 0), staged(kCgemmBK * kCgemmBM * kCgemmF, 0);
  for (int tid = 0; tid < kCgemmThreads; ++tid) {
    for (int i = 0; i < kCgemmTM; ++i)
      for (int j = 0; j < kCgemmTN; ++j)
        ++owner[size_t(((cgemm_tm(tid) + 8 * i) * kCgemmBN + cgemm_tn(tid) + 8 * j) * kCgemmF + cgemm_f(tid))];
    for (int i = 0; i < 4; ++i)
      ++staged[size_t(cgemm_slab_index(cgemm_stage_kk(tid) + 2 * i, cgemm_stage_row(tid), cgemm_f(tid)))];
  }
  for (int c : owner) EXPECT_EQ(c, 1);
  for (int c : staged) EXPECT_EQ(c, 1);
  // A float2 is two 32-bit words; a warp's fragment read of one k: rows tm + 8i (A), columns tn + 8j (B).
  auto words = [](int warp, int kk, int i, bool a) {
    std::vector<int64_t> w;
    for (int lane = 0; lane < 32; ++lane) {
      const int tid = warp * 32 + lane, x = (a ? cgemm_tm(tid) : cgemm_tn(tid)) + 8 * i;
      const int64_t idx = cgemm_slab_index(kk, x, cgemm_f(tid));
      w.push_back(2 * idx);
      w.push_back(2 * idx + 1);
    }
    return w;
  };
  for (int warp = 0; warp < kCgemmThreads / 32; ++warp)
    for (int kk = 0; kk < kCgemmBK; ++kk)
      for (int i = 0; i < 4; ++i) {
        EXPECT_EQ(test::ways(words(warp, kk, i, true)), 1) << "A fragment, warp " << warp << " kk " << kk;
        EXPECT_EQ(test::ways(words(warp, kk, i, false)), 1) << "B fragment, warp " << warp << " kk " << kk;
      }
  // staging stores: a warp writes 32 consecutive float2 (256 bytes: two wavefronts, the least possible)
  for (int warp = 0; warp < kCgemmThreads / 32; ++warp)
    for (int i = 0; i < 4; ++i) {
      std::vector<int64_t> w;
      for (int lane = 0; lane < 32; ++lane) {
        const int tid = warp * 32 + lane;
        const int64_t idx = cgemm_slab_index(cgemm_stage_kk(tid) + 2 * i, cgemm_stage_row(tid), cgemm_f(tid));
        w.push_back(2 * idx);
        w.push_back(2 * idx + 1);
      }
      EXPECT_EQ(test::ways(w), 2) << "staging stores, warp " << warp;
    }
}

// fft_cmac per direction against the formulas of fft_conv.hpp, read from the
// tensors' own plane orders: X (n, c), W (k, c / groups), DY (n, k).
TEST(FftCmac, EveryDirectionMatchesItsFormula) {
  ConvShape sh{};
  sh.n = 34; sh.c = 2 * 9; sh.k = 2 * 11; sh.groups = 2;
  const int64_t spec = 7;
  const int cg = sh.c / sh.groups, kg = sh.k / sh.groups;
  const int64_t nx = int64_t(sh.n) * sh.c, nw = int64_t(sh.k) * cg, ny = int64_t(sh.n) * sh.k;
  const std::vector<float2> x = random_spectra(nx * spec, 3), w = random_spectra(nw * spec, 5),
                            dy = random_spectra(ny * spec, 7);
  simt::DeviceArray<float2> dx(x), dw(w), ddy(dy);
  for (Direction d : {Direction::fwd, Direction::bwd_data, Direction::bwd_filter}) {
    SCOPED_TRACE(int(d));
    const int64_t planes = d == Direction::fwd ? ny : d == Direction::bwd_data ? nx : nw;
    simt::DeviceArray<float2> out(size_t(planes * spec));
    out.fill_bytes(0xFF);
    const float2* a = d == Direction::bwd_data ? ddy.get() : dx.get();
    const float2* b = d == Direction::bwd_filter ? ddy.get() : dw.get();
    fft_cmac(sh, d, spec, a, b, out.get(), nullptr);
    const std::vector<float2> got = out.download();
    int bad = 0;
    for (int64_t pl = 0; pl < planes; ++pl)
      for (int64_t f = 0; f < spec; ++f) {
        cd s = 0;
        if (d == Direction::fwd) {  // pl = (n, k): sum_cl X(n, g cg + cl) conj W(k, cl)
          const int64_t n = pl / sh.k, k = pl % sh.k, g = k / kg;
          for (int cl = 0; cl < cg; ++cl)
            s += at(x, (n * sh.c + g * cg + cl) * spec + f) * std::conj(at(w, (k * cg + cl) * spec + f));
        } else if (d == Direction::bwd_data) {  // pl = (n, c): sum_kl DY(n, g kg + kl) W(g kg + kl, cl)
          const int64_t n = pl / sh.c, c = pl % sh.c, g = c / cg, cl = c % cg;
          for (int kl = 0; kl < kg; ++kl)
            s += at(dy, (n * sh.k + g * kg + kl) * spec + f) * at(w, ((g * kg + kl) * cg + cl) * spec + f);
        } else {  // pl = (k, cl): sum_n X(n, g cg + cl) conj DY(n, k)
          const int64_t k = pl / cg, cl = pl % cg, g = k / kg;
          for (int n = 0; n < sh.n; ++n)
            s += at(x, (n * sh.c + g * cg + cl) * spec + f) * std::conj(at(dy, (n * sh.k + k) * spec + f));
        }
        const float2 want{float(s.real()), float(s.imag())}, v = got[size_t(pl * spec + f)];
        if (!same_bits(v, want) && bad++ < 5)
          ADD_FAILURE() << "plane " << pl << " f " << f << ": got (" << v.x << ", " << v.y << ") want (" << want.x
                        << ", " << want.y << ")";
      }
    EXPECT_EQ(bad, 0);
  }
}

}  // namespace
}  // namespace convlab::cuda
