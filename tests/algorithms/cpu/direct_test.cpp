// cpu.direct beyond the registry sweep: channel counts around the 16 (AVX-512)
// and 8 (AVX2) channel blocks, strides 1-4, dilation, groups and depthwise,
// the pixel-vectorised backward-data path (few input channels, wide rows),
// bit-identical results across two runs on two threads, and the whole
// algorithm on the AVX2 and portable micro-kernel tables.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "core/device.hpp"
#include "core/problem.hpp"
#include "algorithms/cpu/direct.hpp"
#include "algorithms/execute.hpp"
#include "algorithms/registry.hpp"
#include "kernels/cpu/depthwise/dw_ukernel.hpp"
#include "kernels/cpu/direct/direct_ukernel.hpp"
#include "convlab/testing.hpp"

namespace convlab {
namespace {

using testing::ConvTester;
using testing::TestProblem;

std::vector<TestProblem> channel_edges() {
  std::vector<TestProblem> v;
  for (int c : {1, 15, 16, 17, 33})
    for (int k : {1, 15, 16, 17, 33}) {
      const std::string d = "mb2ic" + std::to_string(c) + "ih6iw7oc" + std::to_string(k) + "kh3ph1";
      v.push_back({"c" + std::to_string(c) + "_k" + std::to_string(k), parse_problem(d)});
    }
  return v;
}

std::vector<TestProblem> stride_dilation_groups() {
  std::vector<TestProblem> v;
  for (int s = 1; s <= 4; ++s)
    for (int r : {1, 3, 5}) {
      const std::string d = "mb2ic17ih13iw11oc18kh" + std::to_string(r) + "sh" + std::to_string(s) + "ph" +
                            std::to_string(r / 2);
      v.push_back({"stride" + std::to_string(s) + "_r" + std::to_string(r), parse_problem(d)});
    }
  for (const char* d : {"mb1ic16ih12oc16kh3ph2dh1", "mb1ic20ih13iw15oc17kh3sh2ph2dh1dw2", "mb1ic9ih11oc33kh3ph3dh2",
                        "g2mb2ic34ih8oc36kh3ph1", "g3mb1ic48ih9oc51kh3sh2ph1", "g16mb2ic16ih9oc16kh3ph1",
                        "g32mb1ic32ih10oc64kh3sh2ph1", "g17mb1ic17ih7oc17kh5ph2", "mb1ic5ih7iw9oc6kh3kw2sh3sw2ph1pw0",
                        "mb1ic16ih3iw2oc16kh5kw5ph2pw2"})
    v.push_back({d, parse_problem(d)});
  return v;
}

// Few input channels and rows of >= 16 pixels per stride phase: the
// pixel-vectorised backward-data, with padding, stride and dilation.
std::vector<TestProblem> pixel_bwd_data() {
  std::vector<TestProblem> v;
  for (const char* d : {"mb2ic3ih11iw40oc20kh3ph1", "mb2ic3ih23iw67oc8kh11sh4", "mb1ic1ih9iw35oc5kh3sh2ph1dh1dw1",
                        "mb1ic7ih6iw33oc9kh5kw3ph2pw3", "g2mb1ic6ih8iw40oc4kh3ph1", "mb1ic4ih9iw70oc3kh7sh3ph3"})
    v.push_back({d, parse_problem(d)});
  return v;
}

// Few input channels and taps (C x R x S <= 27): backward-filter with pixels in the lanes (a first
// layer's shape at small sizes: stride 1 and 2, padding, dilation, 1-D, a 5x5 single channel, rows
// of fewer and more pixels than a vector, a band's last chunk partly filled).
std::vector<TestProblem> pixel_bwd_filter() {
  std::vector<TestProblem> v;
  for (const char* d : {"mb2ic3ih30oc32oh15kh3sh2ph1", "mb3ic3ih17oc8kh3ph1", "mb1ic1ih12iw37oc5kh5ph2",
                        "mb2ic2ih9iw21oc7kh3ph2dh1dw1", "mb1ic3iw50oc6kw3pw1", "mb2ic3ih5iw3oc4kh3ph1",
                        "mb1ic3ih40iw19oc17oh20ow7kh3kw3sh2sw3ph1pw1"})
    v.push_back({d, parse_problem(d)});
  return v;
}

// Rows too wide for one forward band (a band's tile is at most 128 KiB: 6 rows of 100 pixels at
// V = 16, 13 at V = 8): several bands and a short last one, stride 2, dilation, a triple of k-blocks.
std::vector<TestProblem> row_bands() {
  std::vector<TestProblem> v;
  for (const char* d : {"mb2ic3ih30iw200oc35kh3sh2ph1", "mb1ic17ih14iw150oc18kh3ph2dh1", "mb1ic2ih40iw300oc16kh1"})
    v.push_back({d, parse_problem(d)});
  return v;
}

TEST(CpuDirect, ForwardInRowBands) {
  ConvTester("cpu.direct").sweep(row_bands()).directions({Direction::fwd}).threads(2).check_determinism()
      .require_all_supported().run();
}

TEST(CpuDirect, PixelBackwardFilterAndTheBlockedPathOnItsShapes) {
  for (bool pixels : {true, false}) {
    set_direct_pixel_wgrad(pixels);
    ConvTester("cpu.direct").sweep(pixel_bwd_filter()).directions({Direction::bwd_filter}).threads(2).check_determinism()
        .require_all_supported().run();
  }
  set_direct_pixel_wgrad(true);
  for (const cpu::depthwise::DwUkernels* uk :
       {&cpu::depthwise::dw_ukernels_portable(), &cpu::depthwise::dw_ukernels_avx2(), &cpu::depthwise::dw_ukernels_avx512()}) {
    if (std::string(uk->isa) == "avx512" ? cpu_info().isa() != "avx512" : std::string(uk->isa) == "avx2" && !(cpu_info().avx2 && cpu_info().fma))
      continue;
    cpu::depthwise::override_dw_ukernels(uk);
    ConvTester("cpu.direct").sweep(pixel_bwd_filter()).directions({Direction::bwd_filter}).threads(2).run();
  }
  cpu::depthwise::override_dw_ukernels(nullptr);
}

TEST(CpuDirect, ChannelBlockEdges) { ConvTester("cpu.direct").sweep(channel_edges()).require_all_supported().run(); }

TEST(CpuDirect, StridesDilationGroups) {
  ConvTester("cpu.direct").sweep(stride_dilation_groups()).require_all_supported().run();
}

TEST(CpuDirect, PixelVectorisedBackwardData) {
  ConvTester("cpu.direct").sweep(pixel_bwd_data()).require_all_supported().run();
}

TEST(CpuDirect, BitIdenticalAcrossRunsOnTwoThreads) {
  auto v = channel_edges();
  for (auto& t : stride_dilation_groups()) v.push_back(t);
  for (auto& t : pixel_bwd_data()) v.push_back(t);
  ConvTester("cpu.direct").sweep(v).threads(2).check_determinism().run();
}

// Large images, few channels: backward-filter cuts the images into at least one run per thread of
// the machine (each run summed into its own copy of the gradient, the copies added in run order),
// with batches that do not divide evenly; against the reference, and bit for bit on 1, 2 and 3 threads.
TEST(CpuDirect, BackwardFilterImageRunsAnyThreadCount) {
  const std::vector<std::string> shapes = {"mb3ic16ih24oc16kh3ph1", "mb5ic8ih30iw20oc24kh3sh2ph1",
                                           "mb2ic16ih20oc8kh3ph1dh1"};
  std::vector<TestProblem> v;
  for (const std::string& d : shapes) v.push_back({d, parse_problem(d)});
  ConvTester("cpu.direct").sweep(v).directions({Direction::bwd_filter}).threads(2).require_all_supported().run();
  const Algorithm& a = get_algorithm("cpu.direct");
  for (const std::string& d : shapes) {
    const ConvProblem p = parse_problem(d);
    std::vector<float> first;
    for (int threads : {1, 2, 3}) {
      ConvData data = ConvData::random(p, 7);
      AlignedBuffer<unsigned char> ws(a.workspace_bytes(p, Direction::bwd_filter) + 64);
      a.run(p, Direction::bwd_filter, {data.src.data(), data.wei.data(), data.dst.data()}, ws.data(),
            ExecContext{DeviceKind::cpu, threads});
      const Tensor& w = data.output(Direction::bwd_filter);
      if (first.empty()) {
        first.assign(w.data(), w.data() + w.size());
        continue;
      }
      ASSERT_EQ(w.size(), first.size());
      EXPECT_EQ(std::memcmp(w.data(), first.data(), first.size() * sizeof(float)), 0) << d << ", " << threads
                                                                                     << " threads";
    }
  }
}

// conv1 (3 input channels, stride 4): pixel-vectorised backward-data, one
// image per thread.
TEST(CpuDirect, AlexNetConv1Batch2TwoThreads) {
  std::vector<TestProblem> v;
  for (auto& t : testing::alexnet_sweep(2))
    if (t.label.find("conv1") != std::string::npos) v.push_back(t);
  ASSERT_EQ(v.size(), 2u);
  ConvTester("cpu.direct").sweep(v).threads(2).check_determinism().run();
}

// The whole algorithm on the 8-wide tables (AVX2, portable): other block
// sizes, other register tiles, same answers.
void run_with(const cpu::direct::Ukernels& uk) {
  cpu::direct::override_ukernels(&uk);
  auto v = testing::edge_sweep();
  for (auto& t : channel_edges()) v.push_back(t);
  for (auto& t : pixel_bwd_data()) v.push_back(t);
  for (auto& t : row_bands()) v.push_back(t);
  ConvTester("cpu.direct").sweep(v).threads(2).check_determinism().run();
  cpu::direct::override_ukernels(nullptr);
}

TEST(CpuDirect, PortableMicroKernels) { run_with(cpu::direct::ukernels_portable()); }

TEST(CpuDirect, Avx2MicroKernels) {
  if (!(cpu_info().avx2 && cpu_info().fma)) GTEST_SKIP() << "no AVX2+FMA on this CPU";
  run_with(cpu::direct::ukernels_avx2());
}

}  // namespace
}  // namespace convlab
