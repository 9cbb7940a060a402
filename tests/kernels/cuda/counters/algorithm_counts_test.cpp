// The counting runtime on the real cuda.* algorithms (their emulated
// compositions): properties every correct implementation has, whatever its
// design (the kernels change; these must not), and the profile of the known
// slow paths printed for the log.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include "tests/kernels/cuda/counters/count_algorithm.hpp"

namespace convlab::cuda::counting {
namespace {

using simt::counters::Counts;
using simt::counters::LaunchCounts;
using simt::counters::Options;

ConvProblem small_problem() { return parse_problem("mb1ic3ih6iw7oc4oh6ow7kh3kw3ph1pw1"); }

// The bytes a direction must read (both inputs, every element of which
// reaches the output on this problem) and write.
std::pair<double, double> must_move(const ConvProblem& p, Direction d) {
  const double src = 4.0 * double(p.src_elems()), wei = 4.0 * double(p.wei_elems()), dst = 4.0 * double(p.dst_elems());
  switch (d) {
    case Direction::fwd:
      return {src + wei, dst};
    case Direction::bwd_data:
      return {dst + wei, src};
    case Direction::bwd_filter:
      return {src + dst, wei};
  }
  return {0, 0};
}

// The products of a convolution that multiply no padding: the useful FMAs of
// every direction (N * K * Cg per in-bounds (output pixel, tap) pair).
uint64_t useful_products(const ConvProblem& p) {
  uint64_t taps = 0;
  for (int oh = 0; oh < p.p(); ++oh)
    for (int ow = 0; ow < p.q(); ++ow)
      for (int r = 0; r < p.r; ++r)
        for (int s = 0; s < p.s; ++s) {
          const int ih = oh * p.stride_h - p.pad_h + r * p.dil_h, iw = ow * p.stride_w - p.pad_w + s * p.dil_w;
          taps += (ih >= 0 && ih < p.h && iw >= 0 && iw < p.w) ? 1 : 0;
        }
  return taps * uint64_t(p.n) * uint64_t(p.k) * uint64_t(p.c_per_group());
}

void expect_consistent(const Counts& c, const std::string& what) {
  EXPECT_GE(c.global_ld_sectors, c.global_ld_requests) << what;  // a request touches a sector at least
  EXPECT_GE(c.global_st_sectors, c.global_st_requests) << what;
  EXPECT_GE(c.global_atom_sectors, c.global_atom_requests) << what;
  EXPECT_GE(c.shared_ld_wavefronts, c.shared_ld_requests) << what;
  EXPECT_GE(c.shared_st_wavefronts, c.shared_st_requests) << what;
  EXPECT_LT(c.shared_ld_conflicts, c.shared_ld_wavefronts + 1) << what;
  EXPECT_LE(c.active_lanes, 32 * c.warp_instructions) << what;
  EXPECT_GE(c.active_lanes, c.warp_instructions) << what;
  EXPECT_LE(c.fma_useful_lanes, c.fma_lanes) << what;
  EXPECT_LE(c.fma_lanes, 32 * c.fma_instructions) << what;
  EXPECT_EQ(c.warp_instructions, c.global_ld_requests + c.global_st_requests + c.global_atom_requests +
                                     c.shared_ld_requests + c.shared_st_requests)
      << what;
}

TEST(SimtCountersAlgorithms, EveryAlgorithmReadsItsInputsAndWritesItsOutput) {
  const ConvProblem p = small_problem();
  int runs = 0;
  for (const auto& a : emulated_algorithms())
    for (Direction d : kAllDirections) {
      if (!a->supports(p, d).ok) continue;
      const std::string what = std::string(a->name()) + " " + std::string(to_string(d));
      const auto launches = count_algorithm(*a, p, d, {});
      ASSERT_FALSE(launches.empty()) << what;
      for (const LaunchCounts& l : launches) {
        EXPECT_EQ(l.sampled_blocks, l.blocks) << what;
        expect_consistent(l.counted, what + " " + l.kernel);
      }
      const Counts t = total(launches);
      const auto [in, out] = must_move(p, d);
      EXPECT_GE(32.0 * double(t.global_ld_sectors), in) << what;
      EXPECT_GE(32.0 * double(t.global_st_sectors + t.global_atom_sectors), out) << what;
      ++runs;
    }
  EXPECT_GE(runs, 12);  // implicit GEMM, direct, im2col and the FFT at least, every direction
}

// The tensor-core variant multiplies on MMAs, not fmaf: every useful product
// lies in some m16n8k8 MMA (1024 multiply-adds), and the tiles' padding wastes
// less than 4x on this problem (M = 8 or 16 in a 16-row tile, K rows to a slab of 16).
TEST(SimtCountersAlgorithms, ImplicitGemmTf32CountsItsMmas) {
  const ConvProblem p = parse_problem("mb2ic8ih24iw24oc16oh24ow24kh3kw3ph1pw1");
  const CudaImplicitGemm a(true);
  for (Direction d : kAllDirections) {
    const Counts c = total(count_algorithm(a, p, d, {}));
    EXPECT_EQ(c.fma_lanes, 0u) << to_string(d);
    EXPECT_GE(1024.0 * double(c.mma_instructions), double(useful_products(p))) << to_string(d);
    EXPECT_LT(1024.0 * double(c.mma_instructions), 4.0 * double(useful_products(p))) << to_string(d);
  }
}

// A sample of blocks (corners and seeded random ones) stands for the grid:
// its scaled counts are close to the full run's on a kernel whose blocks are
// alike but for the grid's edges.
TEST(SimtCountersAlgorithms, SampledImplicitGemmIsCloseToTheFullRun) {
  const ConvProblem p = parse_problem("mb2ic8ih24iw24oc16oh24ow24kh3kw3ph1pw1");
  const CudaImplicitGemm a;
  for (Direction d : kAllDirections) {
    const Counts full = total(count_algorithm(a, p, d, {}));
    const Counts sampled = total(count_algorithm(a, p, d, {.sample_blocks = 4, .seed = 5}));
    const auto near = [&](uint64_t s, uint64_t f, const char* what) {
      EXPECT_NEAR(double(s), double(f), 0.25 * double(f)) << what << " " << to_string(d);
    };
    near(sampled.global_ld_sectors, full.global_ld_sectors, "global load sectors");
    near(sampled.global_st_sectors + sampled.global_atom_sectors, full.global_st_sectors + full.global_atom_sectors,
         "global store sectors");
    near(sampled.warp_instructions, full.warp_instructions, "warp instructions");
    near(sampled.fma_lanes, full.fma_lanes, "lane FMAs");
    // Its multiply-adds are fmaf calls (what the runtime counts): each useful
    // product once, whatever the tiling, split or stride-phase decomposition.
    EXPECT_EQ(full.fma_useful_lanes, useful_products(p)) << to_string(d);
  }
}

// The shapes behind the known slow paths, at a small size: conv1's geometry
// (3 input channels, 11x11, stride 4) for the GEMM-like and direct kernels,
// a 3x3 layer for Winograd F(2x2, 3x3). Each direction's cost per useful
// FLOP (products that multiply no padding) is printed for the log; the
// kernels change, so what is asserted holds for any correct one.
TEST(SimtCountersAlgorithms, KnownSlowPathsAreReported) {
  const ConvProblem conv1 = parse_problem("mb1ic3ih35iw35oc8oh8ow8kh11kw11sh4sw4ph2pw2");
  const ConvProblem conv3 = parse_problem("mb1ic16ih13iw13oc16oh13ow13kh3kw3ph1pw1");
  const struct {
    std::unique_ptr<Algorithm> a;
    ConvProblem p;
  } cases[] = {{emulated_algorithm("cuda.implicit_gemm"), conv1},
               {emulated_algorithm("cuda.direct"), conv1},
               {emulated_algorithm("cuda.winograd_f2x3"), conv3}};
  for (const auto& [a, p] : cases) {
    ASSERT_TRUE(a);
    for (Direction d : kAllDirections) {
      const Counts c = total(count_algorithm(*a, p, d, {.sample_blocks = 4, .seed = 1}));
      const double useful = double(useful_products(p)), gflop = 2e-9 * useful;
      const auto per = [](uint64_t x, uint64_t n) { return double(x) / double(std::max<uint64_t>(n, 1)); };
      std::printf(
          "%s %s %-10s per useful GFLOP: %.3g global sectors, %.3g shared wavefronts; %.1f sectors/request, "
          "%.2f shared wavefronts/request; lane FMAs per useful product %.2f\n",
          std::string(a->name()).c_str(), p.key().c_str(), std::string(to_string(d)).c_str(),
          double(c.global_ld_sectors) / gflop, double(c.shared_ld_wavefronts + c.shared_st_wavefronts) / gflop,
          per(c.global_ld_sectors + c.global_st_sectors, c.global_ld_requests + c.global_st_requests),
          per(c.shared_ld_wavefronts + c.shared_st_wavefronts, c.shared_ld_requests + c.shared_st_requests),
          double(c.fma_lanes) / useful);
      expect_consistent(c, std::string(a->name()) + " " + std::string(to_string(d)));
      EXPECT_GT(c.global_ld_sectors, 0u);
    }
  }
}

// Backward-data with 3 input channels: the column-window kernel, whose every
// lane FMA multiplies inside the image (4 rows of the 4 x 128 tile did 4/3 and
// re-gathered each diff_dst value per tap), and diff_dst loads coalesced
// across the warp (about 4 sectors a request; the tile: 4.1 on the H100). With
// steps of 2 between its taps (dilation 2, stride 1) the tiles run.
TEST(SimtCountersAlgorithms, SmallChannelBwdDataRunsTheColumnWindow) {
  const auto a = emulated_algorithm("cuda.implicit_gemm");
  ASSERT_TRUE(a);
  const Options opt{.sample_blocks = 4, .seed = 1};
  const auto kernels = [&](const ConvProblem& p) {
    std::string names;
    for (const auto& l : count_algorithm(*a, p, Direction::bwd_data, opt)) names += l.kernel + ";";
    return names;
  };
  const ConvProblem conv1 = parse_problem("mb2ic3ih35iw35oc8oh8ow8kh11kw11sh4sw4ph2pw2");
  EXPECT_NE(kernels(conv1).find("window_phases_kernel"), std::string::npos) << kernels(conv1);
  EXPECT_EQ(kernels(conv1).find("implicit_gemm_phases_kernel"), std::string::npos) << kernels(conv1);
  Counts window;
  for (const auto& l : count_algorithm(*a, conv1, Direction::bwd_data, opt))
    if (l.kernel.find("window") != std::string::npos) window = l.scaled();
  EXPECT_LT(double(window.global_ld_sectors) / double(window.global_ld_requests), 6.0);
  EXPECT_GT(window.fma_useful_lanes, window.fma_lanes / 2);
  const ConvProblem dilated = parse_problem("mb1ic3ih11iw10oc4oh11ow10kh3kw3ph2pw2dh1dw1");
  EXPECT_EQ(kernels(dilated).find("window_phases_kernel"), std::string::npos) << kernels(dilated);
}

// The known pathologies, caught from counts alone: each bound sits between what the
// slow version counted and what the current kernels count (in the comments), so a kernel
// that falls back into one fails here, with no GPU.
TEST(SimtCountersAlgorithms, KnownPathologiesStayFixed) {
  const ConvProblem conv1 = parse_problem("mb1ic3ih35iw35oc8oh8ow8kh11kw11sh4sw4ph2pw2");
  const ConvProblem conv3 = parse_problem("mb1ic16ih13iw13oc16oh13ow13kh3kw3ph1pw1");
  const Options opt{.sample_blocks = 4, .seed = 1};
  const auto lanes_per_useful = [&](const char* name, const ConvProblem& p, Direction d) {
    const auto a = emulated_algorithm(name);
    EXPECT_TRUE(a);
    if (!a) return 0.0;
    return double(total(count_algorithm(*a, p, d, opt)).fma_lanes) / double(useful_products(p));
  };
  // Strided backward-data gathering every tap (zeros of the stride included): the
  // implicit GEMM did 472 lane FMAs per useful product there against 8.9 forward (now
  // 2.9 and 4.5); the direct kernel walked all 121 taps with a sixteenth valid (now 4.6
  // against 2.2 forward).
  for (const char* name : {"cuda.implicit_gemm", "cuda.direct"}) {
    const double fwd = lanes_per_useful(name, conv1, Direction::fwd);
    const double bwd = lanes_per_useful(name, conv1, Direction::bwd_data);
    EXPECT_LT(bwd, 4 * fwd) << name << " conv1 backward-data does " << bwd << " lane FMAs per useful product, forward "
                            << fwd << ": the strided gather is back";
  }
  // F(2x2,3x3) backward-filter's shared planes: 4.5 wavefronts per request with the 8-way
  // bank conflict, 1.0 without.
  {
    const auto a = emulated_algorithm("cuda.winograd_f2x3");
    ASSERT_TRUE(a);
    const Counts c = total(count_algorithm(*a, conv3, Direction::bwd_filter, opt));
    const double per_request = double(c.shared_ld_wavefronts + c.shared_st_wavefronts) /
                               double(std::max<uint64_t>(c.shared_ld_requests + c.shared_st_requests, 1));
    EXPECT_LT(per_request, 1.5) << "cuda.winograd_f2x3 backward-filter: " << per_request
                                << " shared wavefronts per request: a bank conflict is back";
  }
  // im2col backward-filter as one GEMM per image: 8 images must take fewer GEMM launches.
  {
    const auto a = emulated_algorithm("cuda.im2col_gemm");
    ASSERT_TRUE(a);
    const ConvProblem p = parse_problem("mb8ic16ih13iw13oc16oh13ow13kh3kw3ph1pw1");
    int gemms = 0;
    for (const auto& l : count_algorithm(*a, p, Direction::bwd_filter, opt))
      gemms += l.kernel.find("sgemm") != std::string::npos;
    EXPECT_GT(gemms, 0);
    EXPECT_LT(gemms, 8) << "cuda.im2col_gemm backward-filter runs one GEMM per image again";
  }
}

}  // namespace
}  // namespace convlab::cuda::counting
