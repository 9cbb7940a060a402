// cuda.implicit_gemm under the SIMT emulator, every direction, against the
// fp64 reference: the general sweep; strided backward-data split by stride
// phase (stride 2, 3, 4, unequal strides, with padding and dilation, phases
// no tap reaches, images smaller than the stride; 1x1 filters at stride 2, 3); GEMMs with fewer rows than
// the smallest tile (C or K = 1, 3) and at each tile choice's edges (4 / 16 /
// 32 rows); groups; the row table's size. cuda.implicit_gemm_tf32 (the same
// plan on the emulated tensor cores) over the same sweeps, under its derived
// TF32 bound.
#include <gtest/gtest.h>

#include "algorithms/cuda/implicit_gemm.hpp"
#include "tests/algorithms/cuda/algorithm_check.hpp"

namespace convlab::cuda {
namespace {

using test::Dir;
using test::shape;
using test::sweep;

// The shared tester's emulated sweep: edges, tiles, 1-D and asymmetric padding,
// strided, every direction.
TEST(CudaImplicitGemm, MatchesReferenceOnTheEmulatedSweep) { testing::ConvTester(CudaImplicitGemm()).emulated().run(); }
TEST(CudaImplicitGemm, SupportsEvery1dAndAsymmetricPaddingProblem) {
  EXPECT_EQ(test::supported_in_every_direction(CudaImplicitGemm(), testing::asym_1d_sweep()),
            testing::asym_1d_sweep().size());
}

// shape(n, c, h, w, k, r, s, pad_h, pad_w, stride_h, stride_w, dil, groups)
std::vector<ConvShape> strided_shapes() {
  return {
      shape(2, 3, 11, 10, 5, 3, 3, 1, 1, 2, 2),        // stride 2: every phase has taps
      shape(1, 4, 12, 13, 6, 3, 3, 2, 1, 2, 2, 2),     // stride 2, dilation 2: odd phases get no tap
      shape(2, 3, 13, 14, 4, 5, 4, 2, 1, 3, 3),        // stride 3, unequal filter
      shape(1, 2, 16, 15, 5, 4, 5, 3, 2, 3, 3, 2),     // stride 3, dilation 2 (coprime: taps spread over phases)
      shape(2, 3, 23, 21, 8, 11, 11, 2, 2, 4, 4),      // stride 4: AlexNet conv1's pattern, small
      shape(1, 3, 19, 18, 4, 5, 5, 3, 1, 4, 4, 2),     // stride 4, dilation 2: half the phases get no tap
      shape(2, 5, 11, 13, 6, 3, 4, 1, 2, 2, 3),        // unequal strides
      shape(2, 4, 3, 2, 6, 3, 3, 1, 1, 4, 4),          // image smaller than the stride: phases without pixels
      shape(2, 6, 10, 11, 4, 3, 3, 1, 1, 2, 2, 1, 2),  // groups
      shape(1, 40, 9, 9, 6, 3, 3, 1, 1, 3, 3, 1, 1),   // 40 input channels: the 64-row tile
  };
}

// Strided backward-data runs its live phases as one launch of at most 16
// GEMMs: 25 and 20 phases take two launches, phases of unequal widths (odd
// images) end their columns before the widest one's, groups on grid z.
std::vector<ConvShape> many_phase_shapes() {
  return {
      shape(1, 3, 17, 16, 4, 5, 5, 2, 2, 5, 5),        // 25 phases, one tap each: 16 + 9
      shape(2, 2, 13, 19, 4, 6, 5, 1, 2, 5, 4, 1, 2),  // 20 phases, groups 2, unequal widths
      shape(1, 20, 11, 9, 5, 3, 3, 1, 1, 3, 2),        // 6 phases, the 32-row tile
  };
}

TEST(CudaImplicitGemm, StridedBwdDataManyPhasesInBatchedLaunchesMatchReference) {
  sweep(CudaImplicitGemm(), many_phase_shapes(), {Dir::bwd_data});
}

TEST(CudaImplicitGemm, StridedBwdDataMatchesReferenceInEveryPhase) {
  sweep(CudaImplicitGemm(), strided_shapes(), {Dir::bwd_data});
}

// 1x1 filters at stride 2 and 3 (ResNet's projections): one stride phase has
// the tap, the others are zeros (filled once; the NaN-prefilled output proves
// every zero written); groups, odd images, padding and end padding, every
// phase without its tap (an image smaller than the live phase), the 64-row tile.
std::vector<ConvShape> pointwise_strided_shapes() {
  return {
      shape(2, 6, 13, 11, 8, 1, 1, 0, 0, 2, 2, 1, 2),                  // stride 2, groups 2, odd image
      shape(2, 6, 10, 14, 9, 1, 1, 0, 0, 3, 3, 1, 3),                  // stride 3: 8 of 9 phases zeros, groups 3
      shape(1, 5, 9, 8, 4, 1, 1, 1, 0, 2, 2),                          // padding: the live phase is h odd
      test::with_end_padding(shape(2, 4, 7, 9, 6, 1, 1, 0, 1, 2, 2), 1, 0),  // end padding
      shape(1, 3, 1, 5, 4, 1, 1, 1, 0, 2, 2),                          // H = 1 < the live phase 1: all zeros
      shape(2, 40, 9, 7, 70, 1, 1, 0, 0, 2, 3),                        // 40 channels (64-row tile), unequal strides
  };
}

TEST(CudaImplicitGemm, PointwiseStridedBwdDataZeroPhasesAndLivePhaseMatchReference) {
  sweep(CudaImplicitGemm(), pointwise_strided_shapes(), {Dir::bwd_data});
}

TEST(CudaImplicitGemm, PointwiseStridedShapesMatchReferenceFwdAndBwdFilter) {
  sweep(CudaImplicitGemm(), pointwise_strided_shapes(), {Dir::fwd, Dir::bwd_filter});
}

TEST(CudaImplicitGemm, StridedShapesMatchReferenceFwdAndBwdFilter) {
  sweep(CudaImplicitGemm(), strided_shapes(), {Dir::fwd, Dir::bwd_filter});
}

// M = Cg (bwd-data) or Kg (fwd, bwd-filter): 1 and 3 (inside the 4-row tile),
// 4 / 5, 16 / 17 and 32 / 33 (each tile choice's edge), 65 (64-row tiles plus
// one); GEMM columns (N*P*Q, N*H*W, Cg*R*S) not multiples of any tile; groups.
std::vector<ConvShape> tile_edge_shapes() {
  return {
      shape(2, 1, 9, 7, 1, 3, 3, 1, 1, 1, 1),    shape(1, 3, 10, 9, 3, 3, 3, 1, 1, 1, 1),
      shape(1, 4, 7, 8, 4, 3, 3, 1, 1, 1, 1),    shape(1, 5, 8, 7, 5, 3, 3, 1, 1, 1, 1),
      shape(1, 16, 7, 6, 16, 3, 3, 1, 1, 1, 1),  shape(1, 17, 6, 7, 17, 3, 3, 1, 1, 1, 1),
      shape(1, 32, 5, 6, 32, 3, 3, 1, 1, 1, 1),  shape(1, 33, 6, 5, 33, 3, 3, 0, 1, 1, 1),
      shape(1, 65, 5, 5, 65, 1, 3, 0, 1, 1, 1),  shape(2, 6, 7, 9, 6, 3, 3, 1, 1, 1, 1, 1, 3),
      shape(1, 34, 6, 6, 66, 3, 3, 1, 1, 2, 2, 1, 2),
  };
}

TEST(CudaImplicitGemm, TileEdgesMatchReferenceInEveryDirection) {
  sweep(CudaImplicitGemm(), tile_edge_shapes());
}

// AlexNet's conv1 (11x11, stride 4, pad 2, C = 3: a 3-row GEMM per phase) at
// batch 1; its bwd-filter (64 x 363 over 3025 rows) splits K.
TEST(CudaImplicitGemm, AlexNetConv1BwdDataAndBwdFilterMatchReference) {
  if (test::kSanitized) GTEST_SKIP() << "AlexNet-size emulation is too slow under the sanitizers";
  const ConvShape conv1 = shape(1, 3, 224, 224, 64, 11, 11, 2, 2, 4, 4);
  sweep(CudaImplicitGemm(), {conv1}, {Dir::bwd_data, Dir::bwd_filter});
}

// Backward-data with at most 4 input channels per group runs the column-window
// kernel (window.cuh) where the phase's taps along h are one diff_dst row apart
// and at most 8; else the tiles. Its edges: 1, 2 and 4 channels; 8 taps along h
// (the largest window) and 9 (the tiles); dilation 2 at stride 2 (unit steps)
// and at stride 1 (steps of 2: the tiles); depthwise groups (Cg = 1); output
// channels past one shared-memory chunk of A (70 x 9 > 512 rows); columns past
// a 128-thread block and rows past one thread's 8, with padding.
std::vector<ConvShape> window_shapes() {
  return {
      shape(2, 1, 13, 37, 5, 3, 3, 1, 1, 1, 1),        // C = 1, stride 1, 2 y-chunks, 37 columns
      shape(1, 2, 19, 9, 3, 8, 3, 3, 1, 1, 1),         // 8 taps along h: the largest window
      shape(1, 2, 12, 9, 3, 9, 3, 4, 1, 1, 1),         // 9 taps along h: the tiles
      shape(1, 4, 17, 15, 6, 5, 5, 4, 4, 2, 2, 2),     // dilation 2, stride 2: unit steps
      shape(1, 3, 11, 10, 4, 3, 3, 2, 2, 1, 1, 2),     // dilation 2, stride 1: the tiles
      shape(2, 4, 10, 11, 4, 3, 3, 1, 1, 2, 2, 1, 4),  // depthwise: 4 groups of one channel
      shape(1, 3, 9, 11, 70, 3, 3, 1, 1, 1, 1),        // 70 output channels: two chunks of A
      shape(2, 3, 70, 150, 4, 7, 7, 3, 3, 2, 2),       // ResNet's stem pattern: 4 and 3 taps a phase
  };
}

TEST(CudaImplicitGemm, SmallChannelBwdDataColumnWindowMatchesReference) {
  sweep(CudaImplicitGemm(), window_shapes(), {Dir::bwd_data});
}

// Backward-filter with a small GEMM over a long reduction splits K into partial
// sums in the workspace (after the row table), reduced in a fixed order.
std::vector<ConvShape> split_k_shapes() {
  return {
      shape(4, 3, 40, 40, 8, 3, 3, 1, 1, 1, 1),        // 8 x 27 over 6400 rows: 12 splits
      shape(2, 4, 30, 30, 6, 3, 3, 1, 1, 1, 1, 1, 2),  // groups: 3 x 18 over 1800 rows each
      shape(3, 5, 37, 29, 3, 5, 3, 2, 1, 2, 1, 2),     // strided, dilated, uneven last split
  };
}

TEST(CudaImplicitGemm, BwdFilterSplitKMatchesReference) {
  sweep(CudaImplicitGemm(), split_k_shapes(), {Dir::bwd_filter});
}

TEST(CudaImplicitGemm, BwdFilterSplitKWorkspaceHoldsTheTableAndEverySplit) {
  const CudaImplicitGemm a;
  for (const ConvShape& sh : split_k_shapes()) {
    const size_t table = 16 * size_t(sh.n * sh.p * sh.q), wei = sizeof(float) * size_t(sh.k * sh.cg() * sh.r * sh.s);
    const size_t ws = a.workspace_bytes(test::problem_of(sh), Direction::bwd_filter);
    EXPECT_GT(ws, table + wei) << test::label(sh);  // at least two splits of partial sums
    EXPECT_EQ((ws - table) % wei, 0u) << test::label(sh);
  }
}

// Taps of one filter axis whose input phase ((t*dil - pad) mod stride) has pixels (< extent).
int64_t taps_with_pixels(int taps, int dil, int pad, int stride, int extent) {
  int64_t n = 0;
  for (int t = 0; t < taps; ++t) n += ((t * dil - pad) % stride + stride) % stride < extent;
  return n;
}

// The row table holds each reduction row once: bwd-data's phases split the
// Kg*R*S rows (every tap reaches exactly one phase; taps whose phase has no
// pixel, in an image smaller than the stride, are left out), no more; bwd-data
// adds each phase's dense A (wei^T over its rows: groups x Cg floats a row).
TEST(CudaImplicitGemm, RowTableHoldsEachReductionRowOnce) {
  const CudaImplicitGemm a;
  std::vector<ConvShape> shapes = strided_shapes();
  for (const ConvShape& sh : pointwise_strided_shapes()) shapes.push_back(sh);
  for (const ConvShape& sh : shapes) {
    const ConvProblem p = test::problem_of(sh);
    const size_t row = 16, dense_row = sizeof(float) * size_t(sh.groups * sh.cg());
    const int64_t taps = taps_with_pixels(sh.r, sh.dil_h, sh.pad_h, sh.stride_h, sh.h) *
                         taps_with_pixels(sh.s, sh.dil_w, sh.pad_w, sh.stride_w, sh.w);
    EXPECT_EQ(a.workspace_bytes(p, Direction::fwd), row * size_t(sh.cg() * sh.r * sh.s)) << test::label(sh);
    EXPECT_EQ(a.workspace_bytes(p, Direction::bwd_data), (row + dense_row) * size_t(sh.kg() * taps))
        << test::label(sh);
    EXPECT_EQ(a.workspace_bytes(p, Direction::bwd_filter), row * size_t(sh.n * sh.p * sh.q)) << test::label(sh);
  }
  const ConvShape odd = shape(2, 4, 3, 2, 6, 3, 3, 1, 1, 4, 4);  // some taps reach no pixel
  EXPECT_LT(a.workspace_bytes(test::problem_of(odd), Direction::bwd_data), 16u * size_t(odd.kg() * odd.r * odd.s));
}

// ---- cuda.implicit_gemm_tf32: the MMA tiles (16 x 128 for 5 <= M <= 16, 32 x 64, 64 x 64),
// stride phases and split K on the emulated tensor cores (M <= 4 keeps the FMA tile).
const CudaImplicitGemm& tf32() {
  static const CudaImplicitGemm a(true);
  return a;
}

TEST(CudaImplicitGemmTf32, IsTheTensorCoreVariant) {
  EXPECT_EQ(tf32().name(), "cuda.implicit_gemm_tf32");
  EXPECT_EQ(tf32().math(), "tf32");
  EXPECT_EQ(CudaImplicitGemm().math(), "fp32");
  const ConvProblem p = test::problem_of(shape(2, 8, 9, 9, 16, 3, 3, 1, 1, 1, 1));
  // the TF32 rounding term (2u + u^2, u = 2^-11) on top of the fp32 summation bound
  EXPECT_GT(tf32().tolerance(p, Direction::fwd).elem, CudaImplicitGemm().tolerance(p, Direction::fwd).elem + 9e-4);
  EXPECT_LT(tf32().tolerance(p, Direction::fwd).elem, 1.1e-3);
}

TEST(CudaImplicitGemmTf32, MatchesReferenceOnTheEmulatedSweep) { testing::ConvTester(tf32()).emulated().run(); }

TEST(CudaImplicitGemmTf32, TileEdgesMatchReferenceInEveryDirection) { sweep(tf32(), tile_edge_shapes()); }

TEST(CudaImplicitGemmTf32, StridedBwdDataPhasesMatchReference) {
  sweep(tf32(), many_phase_shapes(), {Dir::bwd_data});
  sweep(tf32(), pointwise_strided_shapes(), {Dir::bwd_data});
}

TEST(CudaImplicitGemmTf32, SmallChannelBwdDataColumnWindowMatchesReference) {
  sweep(tf32(), window_shapes(), {Dir::bwd_data});
}

TEST(CudaImplicitGemmTf32, BwdFilterSplitKMatchesReference) { sweep(tf32(), split_k_shapes(), {Dir::bwd_filter}); }

// Both variants run the same plan: the same tables, phases and splits.
TEST(CudaImplicitGemmTf32, WorkspaceMatchesThePlanOfTheFp32Variant) {
  for (const ConvShape& sh : strided_shapes()) {
    const ConvProblem p = test::problem_of(sh);
    for (Direction d : {Direction::fwd, Direction::bwd_data})
      EXPECT_EQ(tf32().workspace_bytes(p, d), CudaImplicitGemm().workspace_bytes(p, d)) << test::label(sh);
  }
}

}  // namespace
}  // namespace convlab::cuda
