// The built-in network tables against the architectures they claim: every
// convolution counted once per occurrence, the multiply-adds the model zoos
// publish, and the shapes chained as the networks are built.
#include <gtest/gtest.h>

#include <set>
#include <utility>

#include "core/layers.hpp"

namespace convlab {
namespace {

int conv_count(const std::vector<NetLayer>& layers) {
  int n = 0;
  for (const auto& l : layers) n += l.count;
  return n;
}

double conv_macs(const std::vector<NetLayer>& layers) {
  double m = 0;
  for (const auto& l : layers) m += l.count * l.problem.flops() / 2;
  return m;
}

TEST(Layers, EveryNetworkHasItsConvolutionCount) {
  EXPECT_EQ(conv_count(network_layers("alexnet", 1)), 5);
  EXPECT_EQ(conv_count(network_layers("alexnet-owt", 1)), 5);
  EXPECT_EQ(conv_count(network_layers("vgg16", 1)), 13);
  EXPECT_EQ(conv_count(network_layers("resnet50", 1)), 53);  // 49 + 4 projection shortcuts
  EXPECT_EQ(conv_count(network_layers("mobilenet_v2", 1)), 52);
  EXPECT_EQ(conv_count(network_layers("densenet121", 1)), 120);
}

// torchvision's published GFLOPS (multiply-adds at 224x224, batch 1, the classifier included) to
// their printed digits: the convolutions plus the fully connected layers' in x out.
TEST(Layers, MultiplyAddsAreThePublishedOnes) {
  const std::pair<const char*, std::pair<double, double>> nets[] = {
      {"vgg16", {15.47e9, 25088.0 * 4096 + 4096.0 * 4096 + 4096.0 * 1000}},
      {"resnet50", {4.09e9, 2048.0 * 1000}},
      {"mobilenet_v2", {0.30e9, 1280.0 * 1000}},
      {"densenet121", {2.83e9, 1024.0 * 1000}},
  };
  for (const auto& [net, want] : nets) {
    const double got = conv_macs(network_layers(net, 1)) + want.second;
    EXPECT_NEAR(got, want.first, want.first * 0.005) << net;
  }
}

TEST(Layers, IdsAreUniqueAndBatchApplies) {
  for (const auto& net : network_names()) {
    std::set<std::string> ids;
    for (const auto& l : network_layers(net, 3)) {
      EXPECT_TRUE(ids.insert(l.id).second) << l.id;
      EXPECT_EQ(l.problem.n, 3) << l.id;
      EXPECT_GE(l.count, 1) << l.id;
    }
  }
}

// MobileNetV2 has no pooling between its convolutions: every layer reads what another one (or the
// image) produced; depthwise layers have one channel per group; each block expands 6x (1x in s1).
TEST(Layers, MobileNetV2IsChained) {
  const auto layers = network_layers("mobilenet_v2", 1);
  std::set<std::pair<int, int>> produced{{3, 224}};
  for (const auto& l : layers) produced.insert({l.problem.k, int(l.problem.p())});
  int depthwise = 0, strided = 0;
  for (const auto& l : layers) {
    const ConvProblem& p = l.problem;
    EXPECT_TRUE(produced.count({p.c, int(p.h)})) << l.id << " reads " << p.c << " channels at " << p.h;
    EXPECT_EQ(p.h, p.w) << l.id;
    if (p.groups > 1) {
      EXPECT_EQ(p.groups, p.c) << l.id;
      EXPECT_EQ(p.k, p.c) << l.id;
      EXPECT_EQ(p.r, 3) << l.id;
      depthwise += l.count;
      // The stage's expansion: a depthwise layer runs on 6x the channels of some projection's output.
      if (p.c != 32) {
        EXPECT_TRUE(p.c % 6 == 0 && produced.count({p.c / 6, int(p.h)})) << l.id;
      }
    }
    if (p.stride_h == 2) strided += l.count;
  }
  EXPECT_EQ(depthwise, 17);  // one per inverted-residual block
  EXPECT_EQ(strided, 5);     // the stem and four stages' first blocks: 224 -> 7
  EXPECT_EQ(layers.back().problem.k, 1280);
  EXPECT_EQ(layers.back().problem.p(), 7);
}

// DenseNet-121 from its definition: growth 32, bottleneck 4 x 32, blocks of 6, 12, 24, 16 layers,
// transitions halving channels and size.
TEST(Layers, DenseNet121FollowsItsDefinition) {
  const auto layers = network_layers("densenet121", 1);
  ASSERT_FALSE(layers.empty());
  EXPECT_EQ(layers[0].problem.r, 7);
  EXPECT_EQ(layers[0].problem.p(), 112);
  size_t i = 1;
  int channels = layers[0].problem.k, size = int(layers[0].problem.p()) / 2;  // after the max pool
  const int blocks[] = {6, 12, 24, 16};
  for (int b = 0; b < 4; ++b) {
    for (int j = 0; j < blocks[b]; ++j) {
      ASSERT_LT(i, layers.size());
      const ConvProblem& p = layers[i].problem;
      EXPECT_EQ(p.r, 1) << layers[i].id;
      EXPECT_EQ(p.c, channels + 32 * j) << layers[i].id;
      EXPECT_EQ(p.k, 128) << layers[i].id;
      EXPECT_EQ(p.h, size) << layers[i].id;
      ++i;
      if (j == 0) {  // the block's 3x3, one row for all of them
        const ConvProblem& q = layers[i].problem;
        EXPECT_EQ(q.r, 3) << layers[i].id;
        EXPECT_EQ(q.c, 128) << layers[i].id;
        EXPECT_EQ(q.k, 32) << layers[i].id;
        EXPECT_EQ(q.p(), size) << layers[i].id;
        EXPECT_EQ(layers[i].count, blocks[b]) << layers[i].id;
        ++i;
      }
    }
    channels += 32 * blocks[b];
    if (b == 3) break;
    ASSERT_LT(i, layers.size());
    const ConvProblem& t = layers[i].problem;
    EXPECT_EQ(t.c, channels) << layers[i].id;
    EXPECT_EQ(t.k, channels / 2) << layers[i].id;
    EXPECT_EQ(t.h, size) << layers[i].id;
    channels /= 2, size /= 2, ++i;
  }
  EXPECT_EQ(i, layers.size());
  EXPECT_EQ(channels, 1024);
  EXPECT_EQ(size, 7);
}

}  // namespace
}  // namespace convlab
