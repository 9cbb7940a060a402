// The step's napkin limit (train/limit.hpp): AlexNet's FLOPs against a hand
// count from the paper's shapes, the bytes rule, and the limit's arithmetic.
#include <gtest/gtest.h>

#include "core/error.hpp"
#include "net/net.hpp"
#include "train/limit.hpp"

namespace convlab::train {
namespace {

// 2 N K (C/g) R S P Q for Krizhevsky et al.'s AlexNet (groups of 2 on conv2, 4, 5), batch 32.
double hand_conv(double k, double cg, double rs, double pq) { return 2.0 * 32 * k * cg * rs * pq; }

TEST(StepLimit, AlexNetFlopsMatchAHandCount) {
  NetOptions o;
  o.batch = 32;
  o.ctx.threads = 1;
  const Net net = build_network("alexnet", o);
  const double conv1 = hand_conv(96, 3, 121, 55 * 55), conv2 = hand_conv(256, 48, 25, 27 * 27),
               conv3 = hand_conv(384, 256, 9, 13 * 13), conv4 = hand_conv(384, 192, 9, 13 * 13),
               conv5 = hand_conv(256, 192, 9, 13 * 13);
  const double per_dir = conv1 + conv2 + conv3 + conv4 + conv5;
  const double fc = 2.0 * 32 * (9216.0 * 4096 + 4096.0 * 4096 + 4096.0 * 1000);
  const StepWork w = step_work(net);
  // conv1's input gradient is skipped: 3 directions of every layer but 2 of conv1.
  EXPECT_DOUBLE_EQ(w.conv_flops, 3 * per_dir - conv1);
  EXPECT_NEAR(w.conv_flops / 1e9, 121.1, 0.05);  // 121 GFLOP, the paper's shapes
  EXPECT_DOUBLE_EQ(w.fc_flops, 3 * fc);
  EXPECT_NEAR(w.fc_flops / 1e9, 11.26, 0.01);  // 11 GFLOP
  // At least the SGD update's 20 bytes per parameter, and the activations' passes on top.
  EXPECT_GT(w.other_bytes, 20.0 * double(net.param_count()));

  NetOptions g = o;
  g.first_layer_grad = true;
  EXPECT_DOUBLE_EQ(step_work(build_network("alexnet", g)).conv_flops, 3 * per_dir);
}

TEST(StepLimit, BytesRule) {
  NetOptions o;
  o.batch = 4;
  o.ctx.threads = 1;
  const Net net = build_network("tiny", o);
  double sum = 0;
  for (size_t i = 0; i < net.layers().size(); ++i) {
    const Layer& l = *net.layers()[i];
    const double b = layer_bytes(l, i > 0);
    if (l.kind() == "fc") {
      EXPECT_EQ(b, 0) << l.name();
    }
    if (l.kind() != "conv" && l.kind() != "fc") {
      EXPECT_DOUBLE_EQ(b, l.bytes_moved(false) + (i > 0 ? l.bytes_moved(true) : 0)) << l.name();
    }
    sum += b;
  }
  sum += 8.0 * 4 * net.classes() + 20.0 * double(net.param_count());
  EXPECT_DOUBLE_EQ(step_work(net).other_bytes, sum);
}

TEST(StepLimit, Arithmetic) {
  // One pass bound by its FLOPs (1 s at 400 GFLOP/s, 0.5 s of bytes), one by its bytes (0.1 s of FLOPs, 3 s at
  // 20 GB/s), and 2 s of other bytes.
  StepWork w{300e9, 100e9, 40e9, {{400e9, 10e9}, {40e9, 60e9}}};
  const StepLimit l = step_limit(w, 400, 20, 2);
  EXPECT_DOUBLE_EQ(l.seconds, 1.0 + 3.0 + 2.0);
  EXPECT_DOUBLE_EQ(l.compute_bound_seconds, 1.0);
  EXPECT_DOUBLE_EQ(l.memory_bound_seconds, 3.0);
  EXPECT_EQ(l.memory_bound_passes, 1);
  EXPECT_EQ(l.passes, 2);
  EXPECT_EQ(l.threads, 2);
  EXPECT_THROW(step_limit(StepWork{}, 0, 20, 1), Error);
  EXPECT_THROW(step_limit(StepWork{}, 400, -1, 1), Error);
}

// At batch 8 a fully connected layer reads its weights in every direction: fc6's 151 MB, three passes, bound by
// the bandwidth rather than its FLOPs; at the same rates a conv layer stays bound by its arithmetic.
TEST(StepLimit, SmallBatchFcIsBoundByItsWeights) {
  NetOptions o;
  o.batch = 8;
  o.ctx.threads = 1;
  const Net net = build_network("alexnet", o);
  const double peak = 200, bw = 20;  // GFLOP/s, GB/s: a two-core machine's order
  const StepLimit l = step_limit(step_work(net), peak, bw, 2);
  for (size_t i = 0; i < net.layers().size(); ++i) {
    const Layer& layer = *net.layers()[i];
    if (layer.name() == "fc6") {
      const std::vector<Pass> ps = layer_passes(layer, true);
      ASSERT_EQ(ps.size(), 3u);
      const double weights = 4.0 * 9216 * 4096;
      for (const Pass& p : ps) {
        EXPECT_GT(p.bytes, weights);
        EXPECT_LT(p.bytes, weights * 1.01);
        EXPECT_DOUBLE_EQ(p.flops, 2.0 * 8 * 9216 * 4096);
        EXPECT_DOUBLE_EQ(l.pass_seconds(p), p.bytes / (bw * 1e9));  // bytes, not FLOPs
      }
      // The bound is 2.5x what FLOPs at the peak alone would say.
      EXPECT_GT(l.layer_seconds(layer, true), 2.4 * layer_flops(layer, true) / (peak * 1e9));
    }
    if (layer.name() == "conv3") {
      for (const Pass& p : layer_passes(layer, true)) EXPECT_DOUBLE_EQ(l.pass_seconds(p), p.flops / (peak * 1e9));
    }
  }
  EXPECT_GE(l.memory_bound_passes, 9);  // fc6, fc7, fc8: every direction
  EXPECT_DOUBLE_EQ(l.seconds, l.compute_bound_seconds + l.memory_bound_seconds + l.other_bytes / (bw * 1e9));
}

}  // namespace
}  // namespace convlab::train
