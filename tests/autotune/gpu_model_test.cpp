// The GPU cost model: the counts CSV as simt_counts writes it, the floors and
// which one binds, the cards.
#include <gtest/gtest.h>

#include "autotune/gpu_model.hpp"
#include "core/error.hpp"

namespace convlab {
namespace {

const char* kHeader =
    "kernel,function,grid,block,blocks,sampled_blocks,global_ld_requests,global_ld_sectors,global_st_requests,"
    "global_st_sectors,global_atom_requests,global_atom_sectors,shared_ld_requests,shared_ld_wavefronts,"
    "shared_ld_conflicts,shared_st_requests,shared_st_wavefronts,shared_st_conflicts,warp_instructions,"
    "active_lanes,fma_instructions,fma_lanes,fma_useful_lanes,barriers,mma_instructions\n";

TEST(GpuModel, ParsesQuotedKernelNamesAndSumsTheCounts) {
  const std::string csv = std::string(kHeader) +
                          "\"(k<64, 64>)\",\"ns::k<64, 64, \"\"x\"\">\",1x1x1,256x1x1,1,1,1,10,1,20,0,5,1,100,0,1,"
                          "50,0,300,9999,400,0,0,1,7\n";
  const auto l = parse_launch_counts(csv);
  ASSERT_EQ(l.size(), 1u);
  EXPECT_EQ(l[0].kernel, "(k<64, 64>)");
  EXPECT_EQ(l[0].sectors, 35);         // loads + stores + atomics
  EXPECT_EQ(l[0].smem_wavefronts, 150);  // loads + stores
  EXPECT_EQ(l[0].warp, 300);
  EXPECT_EQ(l[0].fma, 400);
  EXPECT_EQ(l[0].mma, 7);
}

TEST(GpuModel, RefusesWhatIsNotACountsFile) {
  EXPECT_THROW(parse_launch_counts(""), Error);
  EXPECT_THROW(parse_launch_counts("a,b\n1,2\n"), Error);                        // columns missing
  EXPECT_THROW(parse_launch_counts(std::string(kHeader) + "x,1,2\n"), Error);    // short row
  std::string neg = std::string(kHeader) + "k,f,1,1,1,1,1,-3,1,1,0,0,1,1,0,1,1,0,1,1,1,1,1,1,0\n";
  EXPECT_THROW(parse_launch_counts(neg), Error);                                  // not a count
  EXPECT_THROW(parse_launch_counts(std::string(kHeader) + "\"k,1\n"), Error);     // open quote
}

TEST(GpuModel, TheLargestFloorOverItsEfficiencyBindsEachLaunch) {
  GpuCard card;
  card.name = "test";
  card.sms = 1;
  card.clock_hz = 1e9;  // one SM at 1 GHz: a floor of N per clock is N ns
  card.l2_bytes_per_s = 32e9;  // one sector per ns
  card.eff_fma = card.eff_sched = card.eff_smem = card.eff_l2 = 0.5;
  LaunchCounts fma{"fma", 4000, 0, 0, 0, 0};     // fma 1 us, sched 1 us (issue counts the FMAs): / 0.5
  LaunchCounts l2{"l2", 0, 0, 0, 0, 3000};       // 3 us / 0.5
  LaunchCounts smem{"smem", 0, 0, 0, 500, 0};    // 0.5 us / 0.5
  LaunchCounts tensor{"mma", 0, 0, 5000, 0, 0};  // 5 us unfitted; sched 1.25 us / 0.5
  const ModelledTime f = modelled_time({fma}, card);
  EXPECT_NEAR(f.seconds, kLaunchSeconds + 2e-6, 1e-12);
  EXPECT_EQ(f.bound, "fma");
  const ModelledTime all = modelled_time({fma, l2, smem, tensor}, card);
  EXPECT_NEAR(all.seconds, 4 * kLaunchSeconds + 2e-6 + 6e-6 + 1e-6 + 5e-6, 1e-12);
  EXPECT_EQ(all.bound, "l2");  // the longest launch's
  EXPECT_EQ(all.kernel, "l2");
  EXPECT_EQ(modelled_time({tensor}, card).bound, "tensor");
  EXPECT_EQ(modelled_time({}, card).seconds, 0);
}

TEST(GpuModel, KnowsTheCardsItWasFittedOn) {
  for (const char* name : {"h100", "h200"}) {
    const GpuCard& c = gpu_card(name);
    EXPECT_EQ(c.name, name);
    EXPECT_GT(c.sms, 0);
    for (double e : {c.eff_fma, c.eff_sched, c.eff_smem, c.eff_l2}) EXPECT_TRUE(e > 0 && e <= 1) << name;
    EXPECT_NE(c.fitted_on.find("docs/results/"), std::string_view::npos);
  }
  try {
    gpu_card("a100");
    FAIL() << "an unknown card was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("h100, h200"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace convlab
