// cpu.im2col_gemm / cpu.im2col_openblas beyond the registry sweep: problems big
// enough that the column buffer is tiled over the batch (chunks of 2 images and
// a short last chunk, with and without groups), the 1x1 stride-1 paths (one GEMM
// over the batch through grids with the hand GEMM: images smaller than a
// micro-tile, channels across its K blocks, groups, 1x1 images; per image with cblas_sgemm),
// strided 1x1 layers (sampled in the hand GEMM's packing forward and
// backward-filter where that saves more than it costs; odd and even images,
// unequal strides, groups, a GEMM large enough to cross its blocks), and
// 1-thread vs 2-thread runs with determinism.
#include <gtest/gtest.h>

#include "algorithms/cpu/im2col_gemm.hpp"
#include "core/problem.hpp"
#include "convlab/testing.hpp"

namespace convlab {
namespace {

std::vector<testing::TestProblem> chunked() {
  return {
      {"chunked", parse_problem("mb3ic16ih134oc16oh134kh3ph1")},
      {"chunked_g2", parse_problem("g2mb3ic32ih134oc32oh134kh3ph1")},
      {"direct_1x1", parse_problem("mb3ic24ih9oc20oh9kh1ph0")},
      {"direct_1x1_g2", parse_problem("g2mb2ic24ih7iw5oc16oh7ow5kh1kw1ph0")},
      {"batch_1x1_7x7_blocks", parse_problem("mb5ic600ih7oc40oh7kh1ph0")},
      {"batch_1x1_wide", parse_problem("mb3ic24ih7oc700oh7kh1ph0")},
      {"batch_1x1_3x2_g3", parse_problem("g3mb7ic12ih3iw2oc9oh3ow2kh1kw1ph0")},
      {"batch_1x1_1px", parse_problem("mb9ic20ih1oc30oh1kh1ph0")},
      {"1x1_stride2", parse_problem("mb2ic8ih9oc8oh5kh1sh2ph0")},
      {"1x1_stride2_even", parse_problem("mb3ic8ih8oc8oh4kh1sh2ph0")},
      {"1x1_stride2_g2", parse_problem("g2mb2ic16ih11oc8oh6kh1sh2ph0")},
      {"1x1_stride3x4", parse_problem("mb2ic8ih10iw9oc12oh4ow3kh1kw1sh3sw4ph0")},
      {"1x1_stride2_blocks", parse_problem("mb2ic64ih28oc128oh14kh1sh2ph0")},
      // Per-thread rows (600 of 1200) make the reduction (1600 pixels) twice C's longer side for any
      // blocking: each thread's GEMM splits K and needs more scratch than the whole call would.
      {"1x1_stride2_split_k_per_thread", parse_problem("mb1ic16ih80oc1200oh40kh1sh2ph0")},
  };
}

TEST(Im2colGemmPlan, TilesTheColumnBufferOverTheBatch) {
  const ConvProblem p = parse_problem("mb3ic16ih134oc16oh134kh3ph1");
  for (Direction d : kAllDirections) {
    const Im2colGemmPlan pl = plan_im2col_gemm(p, d);
    EXPECT_EQ(pl.nb, 2);
    EXPECT_EQ(pl.chunks, 2);
    EXPECT_FALSE(pl.direct);
    EXPECT_LE((pl.col_elems + pl.buf_elems) * 4, kColumnBudget);
  }
  EXPECT_TRUE(plan_im2col_gemm(parse_problem("mb3ic24ih9oc20oh9kh1ph0"), Direction::fwd).direct);
  EXPECT_EQ(plan_im2col_gemm(parse_problem("mb3ic24ih9oc20oh9kh1ph0"), Direction::fwd).col_elems, 0);
}

// Strided 1x1: no column matrix backward-filter when the GEMM reads B through a
// grid (the hand SGEMM); forward, backward-data and cblas_sgemm keep it.
TEST(Im2colGemmPlan, Strided1x1SampledInThePacking) {
  const ConvProblem p = parse_problem("mb16ic256ih56oc512oh28kh1sh2");
  for (Direction d : {Direction::bwd_filter}) {
    const Im2colGemmPlan pl = plan_im2col_gemm(p, d, true);
    EXPECT_TRUE(pl.strided && pl.direct);
    EXPECT_EQ(pl.col_elems, 0);
    EXPECT_EQ(pl.gemm.b_grid.cols, 28);
    EXPECT_EQ(pl.gemm.b_grid.col_step, 2);
    EXPECT_EQ(pl.gemm.b_grid.row_step, 2 * 56);
    EXPECT_FALSE(plan_im2col_gemm(p, d, false).direct);
  }
  EXPECT_FALSE(plan_im2col_gemm(p, Direction::fwd, true).direct);
  EXPECT_FALSE(plan_im2col_gemm(p, Direction::bwd_data, true).direct);
  EXPECT_GT(plan_im2col_gemm(p, Direction::bwd_data, true).col_elems, 0);
  // 14x14 -> 7x7 with 2048 outputs: packing the weights per image would move more than the column matrix.
  EXPECT_FALSE(plan_im2col_gemm(parse_problem("mb16ic1024ih14oc2048oh7kh1sh2"), Direction::fwd, true).direct);
  // Padding before the image: im2col as before.
  EXPECT_FALSE(plan_im2col_gemm(parse_problem("mb2ic8ih9oc8oh6kh1sh2ph1"), Direction::fwd, true).direct);
}

// 1x1 stride 1 with the hand GEMM: one GEMM per group over the batch, the long side through grids over the
// images where they lie; cblas_sgemm keeps the per-image GEMMs.
TEST(Im2colGemmPlan, Pointwise1x1OneGemmOverTheBatch) {
  const ConvProblem p = parse_problem("g2mb16ic1024ih7oc256oh7kh1");  // Cg 512, Kg 128, H*W 49
  for (Direction d : kAllDirections) {
    const Im2colGemmPlan pl = plan_im2col_gemm(p, d, true);
    EXPECT_TRUE(pl.batched);
    EXPECT_EQ(pl.gemm_calls, 2);
    EXPECT_EQ(pl.col_elems + pl.buf_elems, 0);
    const Im2colGemmGrid src{49, 1, 1024 * 49}, dst{49, 1, 256 * 49};
    const Im2colGemmCall& g = pl.gemm;
    const auto same = [](const Im2colGemmGrid& a, const Im2colGemmGrid& b) {
      return a.cols == b.cols && a.col_step == b.col_step && a.row_step == b.row_step;
    };
    if (d == Direction::bwd_filter) {
      EXPECT_EQ(g.m, 128);
      EXPECT_EQ(g.n, 512);
      EXPECT_EQ(g.k, 16 * 49);
      EXPECT_TRUE(same(g.a_grid, dst) && same(g.b_grid, src) && !g.c_grid.on());
    } else {
      EXPECT_EQ(g.m, d == Direction::fwd ? 128 : 512);
      EXPECT_EQ(g.n, 16 * 49);
      EXPECT_EQ(g.k, d == Direction::fwd ? 512 : 128);
      EXPECT_TRUE(!g.a_grid.on() && same(g.b_grid, d == Direction::fwd ? src : dst) &&
                  same(g.c_grid, d == Direction::fwd ? dst : src));
    }
    const Im2colGemmPlan blas = plan_im2col_gemm(p, d, false);
    EXPECT_TRUE(blas.direct && !blas.batched);
    EXPECT_EQ(blas.gemm_calls, 2 * 16);
  }
}

class Im2colGemmAlgos : public ::testing::TestWithParam<const char*> {};

TEST_P(Im2colGemmAlgos, ChunkedAndDirect) {
  for (int threads : {1, 2}) {
    testing::ConvTester(GetParam()).sweep(chunked()).threads(threads).require_all_supported().check_determinism().run();
  }
}

INSTANTIATE_TEST_SUITE_P(Cpu, Im2colGemmAlgos, ::testing::Values("cpu.im2col_gemm", "cpu.im2col_openblas"),
                         [](const auto& info) { return std::string(info.param).substr(4); });

}  // namespace
}  // namespace convlab
