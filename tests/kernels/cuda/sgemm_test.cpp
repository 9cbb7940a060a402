// kernels/cuda/gemm/sgemm.cu under the SIMT emulator: both tile
// configurations, all four transpose combinations, ragged sizes one below /
// above the block tile and BK, batches, accumulation, vectorised and scalar
// (misaligned leading dimension) loads. Small-integer data: fp32 is exact, so
// the result must equal the fp64 loop bit for bit.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/cuda/gemm/sgemm.hpp"
#include "kernels/cuda/simt/memory.hpp"

namespace convlab::cuda {
namespace {

struct Case {
  int m, n, k, batch;
  bool ta, tb, acc;
  int pad;  // extra leading-dimension elements (1 disables float4 loads)
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

TEST(CudaSgemm, PickTile) {
  EXPECT_EQ(sgemm_pick_tile(64, 3025, 1), SgemmTile::t64x64);
  EXPECT_EQ(sgemm_pick_tile(1024, 1024, 1), SgemmTile::t128x128);
  EXPECT_EQ(sgemm_pick_tile(384, 169, 1), SgemmTile::t64x64);
}

}  // namespace
}  // namespace convlab::cuda
