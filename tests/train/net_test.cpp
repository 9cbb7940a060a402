// Whole networks: the loss falls on the learnable task, runs are reproducible,
// every registered CPU algorithm trains the same network as the reference, the
// first layer's input gradient is optional, AlexNet's shapes line up.
#include <gtest/gtest.h>

#include <cmath>

#include "algorithms/registry.hpp"
#include "core/error.hpp"
#include "net/data.hpp"
#include "net/net.hpp"
#include "report/report.hpp"
#include "train/trainer.hpp"

namespace convlab::train {
namespace {

Net tiny(int batch = 8, int classes = 4, bool first_layer_grad = false, float dropout = 0.f, bool fuse = true) {
  NetOptions o;
  o.fuse_conv_relu = fuse;
  o.batch = batch;
  o.classes = classes;
  o.dropout = dropout;
  o.first_layer_grad = first_layer_grad;
  o.ctx.threads = 2;
  return build_network("tiny", o);
}

std::vector<double> train_losses(Net& net, DataSource& data, int iters, const SgdOptions& sgd) {
  std::vector<double> losses;
  Batch b;
  for (int i = 0; i < iters; ++i) {
    data.batch(i, b);
    losses.push_back(net.train_step(b.images.data(), b.labels.data(), sgd, i));
  }
  return losses;
}

TEST(Net, LossFallsOnThePatternTask) {
  Net net = tiny(16, 4, false, 0.5f);
  net.inject_all(get_algorithm("cpu.reference"));
  net.init(1);
  auto data = make_synthetic("pattern", net.input_shape(), 4, 1);
  Batch held;
  data->batch(1000, held);  // a batch never trained on
  const double before = net.eval_loss(held.images.data(), held.labels.data());
  const auto losses = train_losses(net, *data, 30, SgdOptions{.lr = 0.02f, .momentum = 0.9f, .weight_decay = 5e-4f});
  const double after = net.eval_loss(held.images.data(), held.labels.data());
  EXPECT_LT(after, 0.5 * before) << "held-out loss " << before << " -> " << after;
  double first3 = (losses[0] + losses[1] + losses[2]) / 3, last3 = (losses[27] + losses[28] + losses[29]) / 3;
  EXPECT_LT(last3, 0.5 * first3);
}

TEST(Net, ReproducibleAndFirstLayerGradDoesNotChangeTraining) {
  auto data = make_synthetic("pattern", {8, 3, 16, 16}, 4, 3);
  const SgdOptions sgd;
  std::vector<double> runs[3];
  for (int r = 0; r < 3; ++r) {
    Net net = tiny(8, 4, r == 2, 0.5f);
    net.inject_all(get_algorithm("cpu.reference"));
    net.init(5);
    runs[r] = train_losses(net, *data, 3, sgd);
  }
  EXPECT_EQ(runs[0], runs[1]);  // bit-identical for a fixed thread count
  EXPECT_EQ(runs[0], runs[2]);  // dL/dimage is an extra output, nothing depends on it
}

// A ReLU after a convolution runs in the conv's output pass (forward: bias and
// ReLU in one pass over y; backward: dy masked and the bias gradient summed in
// one pass). The kernels promise the same bits as the separate passes, so the
// fused net trains to the same losses and parameters bit for bit, and it has
// fewer layers (each fused ReLU is gone from the list, named by its conv).
TEST(Net, FusedConvReluTrainsBitIdenticallyToSeparateLayers) {
  auto data = make_synthetic("pattern", {8, 3, 16, 16}, 4, 3);
  std::vector<double> losses[2];
  std::vector<std::vector<float>> params[2];
  size_t layers[2] = {0, 0};
  int fused = 0;
  for (int f = 0; f < 2; ++f) {
    Net net = tiny(8, 4, true, 0.5f, f == 1);
    net.inject_all(get_algorithm("cpu.direct"));
    net.init(5);
    losses[f] = train_losses(net, *data, 3, SgdOptions{});
    for (Param* p : net.params()) params[f].emplace_back(p->value.buf.begin(), p->value.buf.end());
    layers[f] = net.layers().size();
    if (f == 1)
      for (ConvLayer* c : net.conv_layers()) fused += !c->fused_relu().empty();
  }
  EXPECT_GT(fused, 0);
  EXPECT_EQ(layers[1] + size_t(fused), layers[0]);
  EXPECT_EQ(losses[0], losses[1]);
  EXPECT_EQ(params[0], params[1]);
}

// A conv layer's fused epilogue is timed apart: a part of its forward and of its
// backward-filter, so fwd - epilogue_fwd is the convolution call alone.
TEST(Net, FusedEpilogueIsTimedAsAPartOfItsDirections) {
  auto data = make_synthetic("pattern", {8, 3, 16, 16}, 4, 3);
  for (bool fuse : {false, true}) {
    Net net = tiny(8, 4, true, 0.f, fuse);
    net.inject_all(get_algorithm("cpu.direct"));
    net.init(5);
    Batch b;
    data->batch(0, b);
    StepTimes st;
    net.train_step(b.images.data(), b.labels.data(), SgdOptions{}, 0, &st);
    int convs = 0;
    for (size_t i = 0; i < net.layers().size(); ++i) {
      const LayerTime& t = st.layers[i];
      if (net.layers()[i]->kind() != "conv") {
        EXPECT_EQ(t.epilogue_fwd, 0);
        EXPECT_EQ(t.epilogue_bwd, 0);
        continue;
      }
      ++convs;
      // tiny's convolutions have a bias: an epilogue with or without the fused ReLU.
      EXPECT_GT(t.epilogue_fwd, 0);
      EXPECT_GT(t.epilogue_bwd, 0);
      EXPECT_LT(t.epilogue_fwd, t.fwd);
      EXPECT_LT(t.epilogue_bwd, t.bwd_filter);
    }
    EXPECT_GT(convs, 0);
  }
}

// Every registered, available CPU algorithm (as `fixed:` policy) trains the tiny
// network to the same losses as the reference, within 1e-3 relative.
TEST(Net, EveryCpuAlgorithmTrainsLikeTheReference) {
  auto data = make_synthetic("pattern", {4, 3, 16, 16}, 4, 2);
  Net ref = tiny(4);
  ref.inject_all(get_algorithm("cpu.reference"));
  ref.init(9);
  const auto want = train_losses(ref, *data, 3, SgdOptions{});
  int tried = 0;
  for (const Algorithm* a : registry()) {
    if (a->device() != DeviceKind::cpu || a->family() == "reference" || !a->unavailable_reason().empty()) continue;
    Net net = tiny(4);
    net.choose(Policy::parse("fixed:" + std::string(a->name())));
    net.init(9);
    const auto got = train_losses(net, *data, 3, SgdOptions{});
    ++tried;
    for (size_t i = 0; i < want.size(); ++i)
      EXPECT_NEAR(got[i], want[i], 1e-3 * std::fabs(want[i])) << a->name() << " iteration " << i;
  }
  if (tried == 0) GTEST_SKIP() << "no non-reference CPU algorithm is registered yet";
}

// One timed round of the tiny net at batch 2 under `policies`.
TrainConfig tiny_run(int threads, std::vector<std::string> policies) {
  TrainConfig cfg;
  cfg.net = "tiny";
  cfg.batch = 2;
  cfg.iters = 1;
  cfg.warmup = 0;
  cfg.classes = 4;
  cfg.threads = threads;
  cfg.policies = std::move(policies);
  return cfg;
}

TEST(Net, PoliciesThatCannotRunAreSkippedWithTheirReason) {
  TrainConfig cfg = tiny_run(2, {"default", "get"});  // get: cheap (no timing), skipped before the autotuner lands
  const TrainReport r = run_training(cfg);
  ASSERT_EQ(r.policies.size(), 2u);
  for (const auto& p : r.policies)
    if (!p.ran) {
      EXPECT_FALSE(p.skipped.empty()) << p.policy;
    }
  // The report renders whatever ran.
  EXPECT_NE(report_markdown(r).find("# convlab train tiny"), std::string::npos);
  EXPECT_NE(report_json(r).find("\"policies\""), std::string::npos);
  cfg.policies = {"no-such-policy"};
  EXPECT_THROW(run_training(cfg), Error);
}

// A policy whose loss went non-finite is reported as stopped (where and why), never as agreeing:
// the report of a real two-policy run with the second marked stopped the way the trainer marks it.
TEST(Net, AStoppedPolicyIsNeverCountedAsAgreeing) {
  const TrainConfig cfg = tiny_run(1, {"default", "fixed:cpu.direct"});
  TrainReport r = run_training(cfg);
  ASSERT_TRUE(r.policies[0].ran && r.policies[1].ran);
  EXPECT_EQ(stopped_line(r), "");
  PolicyResult& p = r.policies[1];
  p.ran = false;
  p.stopped = true;
  p.skipped = "the loss is not finite (nan) at iteration 0; the first layer whose output is not finite: conv1's output";
  p.losses.back() = NAN;
  EXPECT_EQ(stopped_line(r), "policy fixed:cpu.direct stopped: " + p.skipped);
  const std::string md = report_markdown(r);
  EXPECT_NE(md.find("| fixed:cpu.direct | stopped: the loss is not finite (nan) at iteration 0;"), std::string::npos)
      << md;
  size_t agreeing = 0;
  for (size_t at = md.find("| yes |"); at != std::string::npos; at = md.find("| yes |", at + 1)) ++agreeing;
  EXPECT_EQ(agreeing, 1u) << "only default (the baseline) agrees with itself:\n" << md;
  const std::string j = report_json(r);
  EXPECT_NE(j.find("{\"policy\": \"fixed:cpu.direct\", \"ran\": false, \"skipped\": \"the loss is not finite (nan)"),
            std::string::npos)
      << j;
  EXPECT_NE(j.find("\"stopped\": true, \"losses\": [null]"), std::string::npos) << j;
}

TEST(Net, UnknownNetworkAndBadOptions) {
  NetOptions o;
  EXPECT_THROW(build_network("vgg16", o), Error);
  o.classes = 1;
  EXPECT_THROW(build_network("tiny", o), Error);
}

TEST(Net, AlexNetShapesAndOneStep) {
  for (const char* name : {"alexnet", "alexnet-owt"}) {
    NetOptions o;
    o.batch = 1;
    o.ctx.threads = 2;
    Net net = build_network(name, o);
    EXPECT_EQ(net.conv_layers().size(), 5u);
    EXPECT_EQ(net.classes(), 1000);
    const auto& layers = net.layers();
    // pool5 output feeds fc6: 256 x 6 x 6
    for (size_t i = 0; i + 1 < layers.size(); ++i)
      if (layers[i]->name() == "pool5") {
        EXPECT_EQ(layers[i]->out_shape(), (Shape4{1, 256, 6, 6}));
      }
  }
  // One training step of the original AlexNet at batch 1 under the default policy
  // (the fp64 reference would take most of a minute: not here).
  NetOptions o;
  o.batch = 1;
  o.ctx.threads = 2;
  Net net = build_network("alexnet", o);
  try {
    net.choose(Policy::parse("default"));
  } catch (const Error& e) {
    GTEST_SKIP() << "no CPU algorithm for the default policy yet: " << e.what();
  }
  net.init(1);
  auto data = make_synthetic("pattern", net.input_shape(), 1000, 1);
  Batch b;
  data->batch(0, b);
  const double loss = net.train_step(b.images.data(), b.labels.data(), SgdOptions{}, 0);
  EXPECT_TRUE(std::isfinite(loss));
  EXPECT_GT(loss, 1.0);  // ~ln(1000) = 6.9 for an untrained net, give or take
  EXPECT_LT(loss, 50.0);
}

}  // namespace
}  // namespace convlab::train
