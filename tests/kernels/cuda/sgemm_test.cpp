// kernels/cuda/gemm/sgemm.cu under the SIMT emulator: both tile
// configurations, all four transpose combinations, ragged sizes one below /
// above the block tile and BK, batches, accumulation, aligned, realigned and
// scalar loads (odd leading dimensions: the convolution layers' 3025, 729, 169),
// K over many double-buffered slabs. Small-integer data: fp32 is exact, so the
// result must equal the fp64 loop bit for bit. Also, from the tile geometry
// (sgemm_tiles.hpp): no bank conflicts on the fragment reads and staging
// stores, and which loads stay vector for odd leading dimensions.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "kernels/cuda/gemm/sgemm.hpp"
#include "kernels/cuda/gemm/sgemm_tiles.hpp"
#include "kernels/cuda/simt/memory.hpp"
#include "tests/support/cuda_conv_check.hpp"
#include "tests/support/smem_banks.hpp"

namespace convlab::cuda {
namespace {

struct Case {
  int m, n, k, batch;
  bool ta, tb, acc;
  int pad;  // extra leading-dimension elements (1: rows start misaligned, realigned loads)
};

void check(const Case& cs, SgemmTile tile) {
  const int lda = (cs.ta ? cs.m : cs.k) + cs.pad, ldb = (cs.tb ? cs.k : cs.n) + cs.pad, ldc = cs.n + cs.pad;
  const int64_t sa = int64_t(lda) * (cs.ta ? cs.k : cs.m), sb = int64_t(ldb) * (cs.tb ? cs.n : cs.k),
                sc = int64_t(ldc) * cs.m;
  std::vector<float> a(sa * cs.batch), b(sb * cs.batch), c(sc * cs.batch);
  uint32_t x = 12345;
  auto next = [&] { x = x * 1664525u + 1013904223u; return float(int(x >> 28) - 8); };  // integers in [-8, 7]
  for (float& v : a) v = next();
  for (float& v : b) v = next();
  for (float& v : c) v = next();
  simt::DeviceArray<float> da(a), db(b), dc(c);
  SgemmArgs g;
  g.m = cs.m; g.n = cs.n; g.k = cs.k; g.batch = cs.batch; g.accumulate = cs.acc;
  g.a = da.get(); g.lda = lda; g.stride_a = sa; g.trans_a = cs.ta;
  g.b = db.get(); g.ldb = ldb; g.stride_b = sb; g.trans_b = cs.tb;
  g.c = dc.get(); g.ldc = ldc; g.stride_c = sc;
  sgemm(g, nullptr, tile);
  const std::vector<float> out = dc.download();
  int bad = 0;
  for (int z = 0; z < cs.batch; ++z)
    for (int i = 0; i < cs.m; ++i)
      for (int j = 0; j < cs.n; ++j) {
        double s = cs.acc ? c[z * sc + int64_t(i) * ldc + j] : 0.0;
        for (int kk = 0; kk < cs.k; ++kk) {
          const double av = cs.ta ? a[z * sa + int64_t(kk) * lda + i] : a[z * sa + int64_t(i) * lda + kk];
          const double bv = cs.tb ? b[z * sb + int64_t(j) * ldb + kk] : b[z * sb + int64_t(kk) * ldb + j];
          s += av * bv;
        }
        const float got = out[z * sc + int64_t(i) * ldc + j];
        if (got != float(s) && ++bad <= 5)
          ADD_FAILURE() << "tile " << to_string(tile) << " m" << cs.m << " n" << cs.n << " k" << cs.k << " ta"
                        << cs.ta << " tb" << cs.tb << " z" << z << " (" << i << "," << j << "): " << got
                        << " != " << s;
      }
  // The padding columns of C are never written.
  for (int z = 0; z < cs.batch; ++z)
    for (int i = 0; i < cs.m; ++i)
      for (int j = cs.n; j < ldc; ++j) ASSERT_EQ(out[z * sc + int64_t(i) * ldc + j], c[z * sc + int64_t(i) * ldc + j]);
}

TEST(CudaSgemm, Tile64RaggedAllTransposes) {
  for (bool ta : {false, true})
    for (bool tb : {false, true}) {
      check({65, 63, 17, 1, ta, tb, false, 0}, SgemmTile::t64x64);
      check({63, 129, 15, 2, ta, tb, true, 0}, SgemmTile::t64x64);
      check({64, 64, 16, 1, ta, tb, false, 1}, SgemmTile::t64x64);
      check({1, 5, 1, 1, ta, tb, false, 0}, SgemmTile::t64x64);
    }
}

TEST(CudaSgemm, Tile128RaggedAllTransposes) {
  for (bool ta : {false, true})
    for (bool tb : {false, true}) {
      check({129, 127, 9, 1, ta, tb, false, 0}, SgemmTile::t128x128);
      check({127, 130, 7, 2, ta, tb, true, 1}, SgemmTile::t128x128);
    }
}

// grid.y (M tiles) and grid.z (batch) over the device limits run in chunks. The
// real limits (65535) need ~65536 emulated blocks, so the emulator's limits are
// lowered to 2 here: the launcher chunks by whatever simt::grid_limits() says,
// and the emulator rejects any launch over it.
TEST(CudaSgemm, GridOverDeviceLimitsRunsInChunks) {
  const simt::GridLimits saved = simt::grid_limits();
  simt::set_grid_limits_for_tests({saved.x, 2, 2});
  for (bool ta : {false, true})
    for (bool tb : {false, true})
      for (int pad : {0, 1}) check(Case{130, 20, 9, 3, ta, tb, pad == 1, pad}, SgemmTile::t64x64);
  simt::set_grid_limits_for_tests(saved);
}

// A two-level batch as bwd-filter's slices use it: entry (b, b2) at base + b *
// stride + b2 * stride2, here b2 stepping along k (slices of 7 of a 23-column
// row: the second and third slices start misaligned), each slice's product its
// own C; every transpose that walks k contiguously in A or B.
TEST(CudaSgemm, TwoLevelBatchSlicesK) {
  const int m = 9, n = 70, ktot = 23, slice = 7, slices = 3, batch = 2;
  for (bool ta : {false, true})
    for (bool tb : {false, true}) {
      const int lda = ta ? m : ktot, ldb = tb ? ktot : n;
      const int64_t sa = int64_t(lda) * (ta ? ktot : m), sb = int64_t(ldb) * (tb ? n : ktot), sc = int64_t(m) * n;
      std::vector<float> a(sa * batch), b(sb * batch), c(sc * batch * slices, -1.0f);
      uint32_t x = 777;
      auto next = [&] { x = x * 1664525u + 1013904223u; return float(int(x >> 28) - 8); };
      for (float& v : a) v = next();
      for (float& v : b) v = next();
      simt::DeviceArray<float> da(a), db(b), dc(c);
      SgemmArgs g;
      g.m = m; g.n = n; g.k = slice; g.batch = batch; g.batch2 = slices;
      g.a = da.get(); g.lda = lda; g.stride_a = sa; g.trans_a = ta; g.stride2_a = ta ? int64_t(slice) * lda : slice;
      g.b = db.get(); g.ldb = ldb; g.stride_b = sb; g.trans_b = tb; g.stride2_b = tb ? slice : int64_t(slice) * ldb;
      g.c = dc.get(); g.ldc = n; g.stride_c = sc * slices; g.stride2_c = sc;
      sgemm(g, nullptr);
      const std::vector<float> out = dc.download();
      for (int z = 0; z < batch; ++z)
        for (int s2 = 0; s2 < slices; ++s2)
          for (int i = 0; i < m; ++i)
            for (int j = 0; j < n; ++j) {
              double acc = 0.0;
              for (int kk = s2 * slice; kk < (s2 + 1) * slice; ++kk)
                acc += double(ta ? a[z * sa + int64_t(kk) * lda + i] : a[z * sa + int64_t(i) * lda + kk]) *
                       (tb ? b[z * sb + int64_t(j) * ldb + kk] : b[z * sb + int64_t(kk) * ldb + j]);
              ASSERT_EQ(out[(int64_t(z) * slices + s2) * sc + int64_t(i) * n + j], float(acc))
                  << "ta" << ta << " tb" << tb << " z" << z << " slice " << s2 << " (" << i << "," << j << ")";
            }
    }
}

// A two-level batch larger than grid.z is refused (its entries cannot be chunked), never run wrong.
TEST(CudaSgemm, TwoLevelBatchOverGridZIsRefused) {
  const simt::GridLimits saved = simt::grid_limits();
  simt::set_grid_limits_for_tests({saved.x, saved.y, 3});
  simt::DeviceArray<float> a(size_t(64)), b(size_t(64)), c(size_t(64));
  SgemmArgs g;
  g.m = g.n = g.k = 2;
  g.a = a.get(); g.lda = 2; g.stride_a = 4; g.stride2_a = 2;
  g.b = b.get(); g.ldb = 2; g.stride_b = 4; g.stride2_b = 2;
  g.c = c.get(); g.ldc = 2; g.stride_c = 8; g.stride2_c = 4;
  g.batch = 2;
  g.batch2 = 2;
  EXPECT_THROW(sgemm(g, nullptr), Error);
  simt::set_grid_limits_for_tests(saved);
}

// The convolution layers' odd plane sizes as leading dimensions (AlexNet's
// 55 x 55, 27 x 27, 13 x 13 outputs): im2col's column matrix as B (n = P*Q) and
// as B^T / A (k = P*Q, the bwd-filter GEMM), every transpose, ragged M / N,
// K over many slabs; batches of odd strides, so the second matrix starts
// misaligned too.
TEST(CudaSgemm, OddLeadingDimensionsAllTransposes) {
  std::vector<std::pair<Case, SgemmTile>> cases;
  for (bool ta : {false, true})
    for (bool tb : {false, true}) {
      cases.push_back({{5, 3025, 11, 1, ta, tb, false, 0}, SgemmTile::t64x64});      // ld 3025 along N
      cases.push_back({{7, 13, 3025, 1, ta, tb, false, 0}, SgemmTile::t64x64});      // ld 3025 along K
      cases.push_back({{33, 729, 27, 2, ta, tb, true, 0}, SgemmTile::t64x64});       // 729, batch of odd stride
      cases.push_back({{17, 20, 729, 1, ta, tb, false, 0}, SgemmTile::t64x64});
      cases.push_back({{65, 169, 45, 2, ta, tb, false, 0}, SgemmTile::t64x64});      // 169
      cases.push_back({{130, 169, 169, 1, ta, tb, true, 0}, SgemmTile::t128x128});
      cases.push_back({{129, 131, 33, 2, ta, tb, false, 2}, SgemmTile::t128x128});  // ld = 2 mod 4
    }
  // Under the sanitizers every other one: each case still in two transposes.
  for (const auto& [cs, tile] : test::sanitized_subset(cases)) check(cs, tile);
}

// Every warp's shared-memory accesses for both tiles: the fragment reads (A's
// and B's float4s at kk * ld + row / col of the register tile) and the staging
// stores (float4s for operands contiguous along M / N; four words for those
// contiguous along K) take one wavefront, except the 64 x 64 tile's K-contiguous
// stores (x = tid / 4, kk = tid % 4 * 4: kk 0 and 8 share banks), 2-way, once
// per slab against 16 fragment reads.
template <class T>
void check_banks(int along_k_store_ways) {
  for (int warp = 0; warp < T::kThreads / 32; ++warp) {
    for (int kk = 0; kk < T::BK; ++kk) {
      for (int f = 0; f < T::TM / 4; ++f) {
        std::vector<int64_t> words;
        for (int lane = 0; lane < 32; ++lane) words.push_back(int64_t(kk) * T::kLdA + T::row(warp * 32 + lane, 4 * f));
        EXPECT_EQ(test::float4_ways(words), 1) << "A fragment, warp " << warp << " kk " << kk << " f " << f;
      }
      for (int f = 0; f < T::TN / 4; ++f) {
        std::vector<int64_t> words;
        for (int lane = 0; lane < 32; ++lane) words.push_back(int64_t(kk) * T::kLdB + T::col(warp * 32 + lane, 4 * f));
        EXPECT_EQ(test::float4_ways(words), 1) << "B fragment, warp " << warp << " kk " << kk << " f " << f;
      }
    }
    for (int ld : {T::kLdA, T::kLdB}) {
      const bool is_a = ld == T::kLdA;
      std::vector<int64_t> vec;
      std::vector<int64_t> along_k[4];
      for (int lane = 0; lane < 32; ++lane) {
        const int tid = warp * 32 + lane;
        const SgemmChunk cx = is_a ? T::template chunk<T::BM>(tid, false) : T::template chunk<T::BN>(tid, false);
        vec.push_back(int64_t(cx.kk) * ld + cx.x);
        const SgemmChunk ck = is_a ? T::template chunk<T::BM>(tid, true) : T::template chunk<T::BN>(tid, true);
        for (int e = 0; e < 4; ++e) along_k[e].push_back(int64_t(ck.kk + e) * ld + ck.x);
      }
      EXPECT_EQ(test::float4_ways(vec), 1) << (is_a ? "A" : "B") << " float4 stores, warp " << warp;
      for (int e = 0; e < 4; ++e)
        EXPECT_EQ(test::ways(along_k[e]), along_k_store_ways) << (is_a ? "A" : "B") << " stores, warp " << warp;
    }
  }
  // Every output element of the block tile belongs to exactly one thread.
  std::vector<int> owner(size_t(T::BM) * T::BN, 0);
  for (int tid = 0; tid < T::kThreads; ++tid)
    for (int i = 0; i < T::TM; ++i)
      for (int j = 0; j < T::TN; ++j) ++owner[size_t(T::row(tid, i)) * T::BN + T::col(tid, j)];
  for (int o : owner) ASSERT_EQ(o, 1);
}

TEST(CudaSgemm, SharedAccessesAreConflictFree) {
  check_banks<SgemmTile128>(1);
  check_banks<SgemmTile64>(2);
  // The register tile in groups of TN consecutive columns (tx * 8 + j), as it
  // was: a quarter-warp's float4s 32 bytes apart, lanes 0 and 4 on one bank.
  std::vector<int64_t> words;
  for (int lane = 0; lane < 32; ++lane) words.push_back((lane % 16) * 8);
  EXPECT_EQ(test::float4_ways(words), 2);
}

// Rows of an odd leading dimension start 0, 4, 8 or 12 bytes past a 16-byte
// boundary; every chunk but those at a row's two ends stays a vector load.
TEST(CudaSgemm, OddLeadingDimensionsKeepVectorLoads) {
  for (int ld : {3025, 729, 169}) {
    int vector = 0, realigned = 0, scalar = 0;
    for (int row = 0; row < 64; ++row) {
      const int r = int(int64_t(row) * ld % 4);  // from a 16-byte aligned base
      for (int col = 0; col < ld; col += 4) {
        const SgemmLoad kind = sgemm_load_kind((r + col) % 4, col, ld);
        if (kind == SgemmLoad::vector) ++vector;
        else if (kind == SgemmLoad::realigned) ++realigned;
        else ++scalar;
        if (col >= 4 && col + 8 <= ld) {
          EXPECT_NE(kind, SgemmLoad::scalar) << "ld " << ld << " row " << row << " col " << col;
        }
        if (r == 0 && col + 4 <= ld) {
          EXPECT_EQ(kind, SgemmLoad::vector) << "ld " << ld << " row " << row;
        }
      }
    }
    EXPECT_EQ(vector, 16 * (ld / 4));  // the 16 aligned rows
    EXPECT_LE(scalar, 64 * 3);         // per row: the first chunk, the last one or two
    std::printf("ld %d: %d vector, %d realigned, %d scalar chunks over 64 rows\n", ld, vector, realigned, scalar);
  }
  EXPECT_EQ(sgemm_load_kind(0, 8, 12), SgemmLoad::vector);
  EXPECT_EQ(sgemm_load_kind(1, 8, 16), SgemmLoad::realigned);  // reads 7 .. 14
  EXPECT_EQ(sgemm_load_kind(1, 8, 14), SgemmLoad::scalar);     // 15 would be past the row
  EXPECT_EQ(sgemm_load_kind(3, 0, 16), SgemmLoad::scalar);     // -3 would be before it
  EXPECT_EQ(sgemm_load_kind(0, 12, 15), SgemmLoad::scalar);
}

TEST(CudaSgemm, PickTile) {
  EXPECT_EQ(sgemm_pick_tile(64, 3025, 1), SgemmTile::t64x64);
  EXPECT_EQ(sgemm_pick_tile(1024, 1024, 1), SgemmTile::t128x128);
  EXPECT_EQ(sgemm_pick_tile(384, 169, 1), SgemmTile::t64x64);
}

}  // namespace
}  // namespace convlab::cuda
