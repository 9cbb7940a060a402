// The GPU training path: without a device it is one clear error; with one, the
// tiny network trained on CUDA (hand-written layer kernels, cuBLAS fully
// connected layers, CUDA convolution algorithms) matches the same network
// trained on the CPU: same initial weights, same batches, same dropout masks.
// The layer kernels themselves are checked under the SIMT emulator
// (tests/kernels/cuda/layers_test.cpp); these tests need a GPU and skip without one.
#include <gtest/gtest.h>

#include <cmath>

#include "algorithms/registry.hpp"
#include "core/device.hpp"
#include "core/error.hpp"
#include "net/data.hpp"
#include "net/net.hpp"
#include "train/trainer.hpp"

namespace convlab::train {
namespace {

Net tiny_on(DeviceKind device, float dropout) {
  NetOptions o;
  o.batch = 8;
  o.classes = 4;
  o.dropout = dropout;
  o.ctx.device = device;
  o.ctx.threads = 2;
  return build_network("tiny", o);
}

#define SKIP_WITHOUT_GPU() \
  if (!cuda_info().available) GTEST_SKIP() << "needs a CUDA device: " << cuda_info().reason

TEST(NetCuda, WithoutADeviceOneClearError) {
  if (cuda_info().available) GTEST_SKIP() << "a CUDA device exists (" << cuda_info().name << "): nothing to refuse";
  try {
    tiny_on(DeviceKind::cuda, 0.f);
    FAIL() << "a CUDA network was built without a CUDA device";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no CUDA device"), std::string::npos) << e.what();
  }
  TrainConfig cfg;
  cfg.net = "tiny";
  cfg.device = DeviceKind::cuda;
  cfg.iters = 1;
  EXPECT_THROW(run_training(cfg), Error);
}

TEST(NetCuda, ACpuNetRefusesCudaAlgorithms) {
  NetOptions o;
  o.batch = 2;
  o.classes = 4;
  Net cpu = build_network("tiny", o);
  int tried = 0;
  for (const Algorithm* a : registry())
    if (a->device() == DeviceKind::cuda) {
      ++tried;
      try {
        cpu.inject_all(*a);
        ADD_FAILURE() << a->name() << " was injected into a CPU network";
      } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("runs on cuda"), std::string::npos) << e.what();
      }
    }
  if (!tried) GTEST_SKIP() << "built without CUDA: no CUDA algorithm to refuse";
}

TEST(NetCuda, ACudaNetRefusesCpuAlgorithms) {
  SKIP_WITHOUT_GPU();
  Net gpu = tiny_on(DeviceKind::cuda, 0.f);
  EXPECT_THROW(gpu.inject_all(get_algorithm("cpu.reference")), Error);
}

TEST(NetCuda, DefaultPoliciesChooseAmongTheDevicesAlgorithms) {
  for (const auto& p : default_policies(DeviceKind::cuda))
    EXPECT_EQ(p.find("fixed:cpu."), std::string::npos) << p;
  for (const auto& p : default_policies(DeviceKind::cpu)) {
    EXPECT_EQ(p.find("fixed:cuda."), std::string::npos) << p;
    EXPECT_EQ(p.find("fixed:cudnn."), std::string::npos) << p;
  }
}

// Relative L2 distance of two vectors.
double rel_l2(const float* a, const float* b, int64_t n) {
  double d = 0, s = 0;
  for (int64_t i = 0; i < n; ++i) {
    d += (double(a[i]) - b[i]) * (double(a[i]) - b[i]);
    s += double(b[i]) * b[i];
  }
  return std::sqrt(d / std::max(s, 1e-300));
}

// Both devices compute every reduction in fp32 with different orders and
// different convolution algorithms, each within its K*eps bound of the exact
// result (K <= 72 here, eps 2^-24: ~4e-6 per element); one forward/backward
// compounds a handful of such layers, so 1e-4 relative L2 leaves a wide margin
// while a wrong kernel (a missed element, a wrong index) is off by O(1).
TEST(NetCuda, TinyGradientsAndLossesMatchTheCpu) {
  SKIP_WITHOUT_GPU();
  Net cpu = tiny_on(DeviceKind::cpu, 0.5f), gpu = tiny_on(DeviceKind::cuda, 0.5f);
  cpu.choose(Policy{});
  gpu.choose(Policy{});
  for (ConvLayer* c : gpu.conv_layers())
    for (Direction d : kAllDirections) EXPECT_EQ(c->choice(d).algo->device(), DeviceKind::cuda);
  cpu.init(7);
  gpu.init(7);
  auto data = make_synthetic("pattern", cpu.input_shape(), 4, 3);
  Batch b;
  data->batch(0, b);
  const double lc = cpu.forward_backward(b.images.data(), b.labels.data(), 0);
  const double lg = gpu.forward_backward(b.images.data(), b.labels.data(), 0);
  EXPECT_NEAR(lg, lc, 1e-4 * std::fabs(lc));
  const std::vector<float> oc = cpu.output(), og = gpu.output();
  ASSERT_EQ(oc.size(), og.size());
  EXPECT_LT(rel_l2(og.data(), oc.data(), int64_t(oc.size())), 1e-4);
  gpu.download_params();
  const auto pc = cpu.params(), pg = gpu.params();
  ASSERT_EQ(pc.size(), pg.size());
  for (size_t i = 0; i < pc.size(); ++i)
    EXPECT_LT(rel_l2(pg[i]->grad.data(), pc[i]->grad.data(), pc[i]->grad.size()), 1e-4) << pc[i]->name;

  // Training steps: same losses (the trainer's 1e-3 agreement, see trainer.cpp).
  const SgdOptions sgd{.lr = 0.02f, .momentum = 0.9f, .weight_decay = 5e-4f};
  for (int it = 1; it <= 5; ++it) {
    data->batch(it, b);
    StepTimes t;
    const double a = cpu.train_step(b.images.data(), b.labels.data(), sgd, it);
    const double g = gpu.train_step(b.images.data(), b.labels.data(), sgd, it, &t);
    EXPECT_NEAR(g, a, 1e-3 * std::fabs(a)) << "iteration " << it;
    EXPECT_GT(t.total, 0);
    ASSERT_EQ(t.layers.size(), gpu.layers().size());
    for (size_t li = 0; li < t.layers.size(); ++li) {
      EXPECT_GT(t.layers[li].fwd, 0) << gpu.layers()[li]->name();
      if (li > 0) {
        EXPECT_GT(t.layers[li].bwd_data, 0) << gpu.layers()[li]->name();
      }
    }
  }
  gpu.download_params();
  for (size_t i = 0; i < pc.size(); ++i)
    EXPECT_LT(rel_l2(pg[i]->value.data(), pc[i]->value.data(), pc[i]->value.size()), 1e-3) << pc[i]->name;
}

TEST(NetCuda, TwoRunsGiveTheSameBits) {
  SKIP_WITHOUT_GPU();
  auto data = make_synthetic("pattern", {8, 3, 16, 16}, 4, 3);
  std::vector<double> runs[2];
  for (auto& losses : runs) {
    Net net = tiny_on(DeviceKind::cuda, 0.5f);
    net.choose(Policy::parse("default,deterministic"));
    net.init(5);
    Batch b;
    for (int i = 0; i < 3; ++i) {
      data->batch(i, b);
      losses.push_back(net.train_step(b.images.data(), b.labels.data(), SgdOptions{}, i));
    }
  }
  EXPECT_EQ(runs[0], runs[1]);
}

TEST(NetCuda, TrainerRunsEveryDefaultPolicy) {
  SKIP_WITHOUT_GPU();
  TrainConfig cfg;
  cfg.net = "tiny";
  cfg.device = DeviceKind::cuda;
  cfg.batch = 4;
  cfg.classes = 4;
  cfg.iters = 2;
  cfg.warmup = 1;
  const TrainReport rep = run_training(cfg);
  ASSERT_GE(rep.baseline(), 0);
  EXPECT_NE(rep.device.find(cuda_info().name), std::string::npos) << rep.device;
  const PolicyResult& base = rep.policies[size_t(rep.baseline())];
  for (const auto& p : rep.policies) {
    EXPECT_TRUE(p.ran) << p.policy << ": " << p.skipped;
    if (!p.ran) continue;
    EXPECT_TRUE(p.loss_agrees) << p.policy << ": left the expected drift at iteration " << p.loss_exceeds_at;
    EXPECT_LE(std::fabs(p.losses.front() - base.losses.front()), rep.drift.bound0 * std::fabs(base.losses.front()))
        << p.policy;
    for (const auto& l : p.layers)
      for (const auto& a : l.algo) {
        if (!a.empty()) {
          EXPECT_TRUE(a.rfind("cuda.", 0) == 0 || a.rfind("cudnn.", 0) == 0) << p.policy << " " << a;
        }
      }
  }
}

}  // namespace
}  // namespace convlab::train
