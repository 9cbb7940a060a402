// Every training layer on the GPU against the same layer on the CPU at
// AlexNet's sizes (batch 8): millions of elements, so the kernels' grid-stride
// loops wrap and their 64-bit index paths are not what is tested under the
// emulator (tests/kernels/cuda/layers_test.cpp covers the small ragged cases).
// Needs a CUDA device; skips without one.
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <tuple>
#include <memory>
#include <vector>

#include "core/device.hpp"
#include "net/layers.hpp"

namespace convlab::train {
namespace {

std::vector<float> random_vec(int64_t n, uint64_t seed) {
  std::vector<float> v(static_cast<size_t>(n));
  uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
  for (auto& x : v) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    x = float(int64_t(s >> 40) - (1 << 23)) / float(1 << 23);  // [-1, 1)
  }
  return v;
}

struct Dev {
  DeviceBuffer buf;
  explicit Dev(const std::vector<float>& host) : buf(DeviceKind::cuda, host.size() * sizeof(float)) {
    copy_to_device(DeviceKind::cuda, buf.get(), host.data(), buf.bytes());
  }
  explicit Dev(size_t n) : buf(DeviceKind::cuda, n * sizeof(float)) {}
  float* p() const { return buf.f32(); }
  std::vector<float> host() const {
    std::vector<float> h(buf.bytes() / sizeof(float));
    device_synchronize(ExecContext{DeviceKind::cuda});
    copy_to_host(DeviceKind::cuda, h.data(), buf.get(), buf.bytes());
    return h;
  }
};

// Max |a - b| / max(max|b|, tiny), and a count of exact mismatches.
struct Diff {
  double rel = 0;
  int64_t mismatches = 0;
};
Diff diff(const std::vector<float>& a, const std::vector<float>& b) {
  double m = 0, d = 0;
  Diff r;
  for (size_t i = 0; i < b.size(); ++i) {
    m = std::max(m, double(std::fabs(b[i])));
    d = std::max(d, double(std::fabs(a[i] - b[i])));
    r.mismatches += a[i] != b[i];
  }
  r.rel = d / std::max(m, 1e-30);
  return r;
}

// Runs `make()`'s layer forward and backward on both devices from the same
// input and output gradient; returns (y, dx) differences.
template <typename Make>
std::pair<Diff, Diff> cpu_vs_gpu(Make make, const Shape4& in, bool training = true) {
  auto cpu = make(), gpu = make();
  ExecContext cc;
  cc.threads = 0;
  ExecContext gc;
  gc.device = DeviceKind::cuda;
  const Shape4 out = cpu->setup(in, cc);
  EXPECT_EQ(gpu->setup(in, gc), out);
  cpu->init_params(3);
  gpu->init_params(3);
  const auto x = random_vec(in.count(), 1), dy = random_vec(out.count(), 2);
  std::vector<float> y(size_t(out.count())), dx(size_t(in.count()));
  cpu->forward(x.data(), y.data(), training, 5);
  cpu->backward(x.data(), y.data(), dy.data(), dx.data());
  Dev gx(x), gdy(dy), gy(size_t(out.count())), gdx(size_t(in.count()));
  gpu->forward(gx.p(), gy.p(), training, 5);
  gpu->backward(gx.p(), gy.p(), gdy.p(), gdx.p());
  const auto pc = cpu->params(), pg = gpu->params();
  for (size_t i = 0; i < pc.size(); ++i) {
    device_synchronize(gc);
    pg[i]->download();
    const std::vector<float> a(pg[i]->grad.data(), pg[i]->grad.data() + pg[i]->grad.size());
    const std::vector<float> b(pc[i]->grad.data(), pc[i]->grad.data() + pc[i]->grad.size());
    // Parameter gradients are sums over the batch in different orders: K*eps bounds.
    EXPECT_LT(diff(a, b).rel, 1e-4) << pc[i]->name;
  }
  return {diff(gy.host(), y), diff(gdx.host(), dx)};
}

#define SKIP_WITHOUT_GPU() \
  if (!cuda_info().available) GTEST_SKIP() << "needs a CUDA device: " << cuda_info().reason

const Shape4 kRelu1{8, 96, 55, 55};  // AlexNet conv1's output at batch 8: 2.3M elements

TEST(LayersCuda, ReluMaxPoolDropoutAreBitIdenticalToTheCpu) {
  SKIP_WITHOUT_GPU();
  // One comparison, one rounding or a pure selection per element: the same bits.
  auto [y, dx] = cpu_vs_gpu([] { return std::make_unique<ReluLayer>("relu1"); }, kRelu1);
  EXPECT_EQ(y.mismatches, 0);
  EXPECT_EQ(dx.mismatches, 0);
  std::tie(y, dx) = cpu_vs_gpu([] { return std::make_unique<MaxPoolLayer>("pool1"); }, kRelu1);
  EXPECT_EQ(y.mismatches, 0);
  EXPECT_EQ(dx.mismatches, 0);  // the gather sums in the CPU's order
  std::tie(y, dx) = cpu_vs_gpu([] { return std::make_unique<DropoutLayer>("drop6", 0.5f, 1); }, kRelu1);
  EXPECT_EQ(y.mismatches, 0);
  EXPECT_EQ(dx.mismatches, 0);
}

TEST(LayersCuda, LrnMatchesTheCpu) {
  SKIP_WITHOUT_GPU();
  // Both accumulate the window in double and round once; pow / sqrt may differ in the last bit.
  auto [y, dx] = cpu_vs_gpu([] { return std::make_unique<LrnLayer>("norm1"); }, kRelu1);
  EXPECT_LT(y.rel, 4 * FLT_EPSILON);
  EXPECT_LT(dx.rel, 16 * FLT_EPSILON);
}

TEST(LayersCuda, FullyConnectedMatchesTheCpu) {
  SKIP_WITHOUT_GPU();
  // fc6: (8, 9216) -> 4096. cuBLAS and OpenBLAS sum K = 9216 products in
  // different orders: |error| <= K*eps*sum|terms| per element, far below 1e-4
  // relative to the largest output for these uniform inputs.
  auto [y, dx] = cpu_vs_gpu([] { return std::make_unique<FcLayer>("fc6", 4096); }, Shape4{8, 256, 6, 6});
  EXPECT_LT(y.rel, 1e-4);
  EXPECT_LT(dx.rel, 1e-4);
}

TEST(LayersCuda, SoftmaxAndSgdMatchTheCpu) {
  SKIP_WITHOUT_GPU();
  const int n = 8, classes = 1000;
  const auto z = random_vec(int64_t(n) * classes, 4);
  std::vector<int> labels(n);
  for (int i = 0; i < n; ++i) labels[size_t(i)] = (i * 337) % classes;
  std::vector<float> dz(z.size());
  const double lc = softmax_cross_entropy(z.data(), labels.data(), n, classes, dz.data());
  ExecContext gc;
  gc.device = DeviceKind::cuda;
  Dev gz(z), gdz(z.size());
  DeviceBuffer glabels(DeviceKind::cuda, size_t(n) * sizeof(int)), gloss(DeviceKind::cuda, size_t(n) * sizeof(double));
  copy_to_device(DeviceKind::cuda, glabels.get(), labels.data(), glabels.bytes());
  const double lg = softmax_cross_entropy(gc, gz.p(), labels.data(), static_cast<const int*>(glabels.get()), n, classes,
                                          gdz.p(), static_cast<double*>(gloss.get()));
  EXPECT_NEAR(lg, lc, 1e-12 * std::fabs(lc));  // double accumulation on both sides
  EXPECT_LT(diff(gdz.host(), dz).rel, 4 * FLT_EPSILON);

  Param pc("w", {1 << 21}), pg("w", {1 << 21});
  const auto w = random_vec(1 << 21, 5), g = random_vec(1 << 21, 6);
  for (auto* p : {&pc, &pg}) {
    std::copy(w.begin(), w.end(), p->value.data());
    std::copy(g.begin(), g.end(), p->grad.data());
  }
  pg.place(DeviceKind::cuda);
  pg.upload();
  const SgdOptions opt{.lr = 0.1f, .momentum = 0.9f, .weight_decay = 0.01f};
  for (int step = 0; step < 2; ++step) {
    sgd_update(pc, opt);
    sgd_update(pg, opt, gc);
  }
  device_synchronize(gc);
  pg.download();
  // Same three fp32 operations per element; the GPU may contract them into FMAs: a few ulps.
  const std::vector<float> a(pg.value.data(), pg.value.data() + pg.value.size());
  const std::vector<float> b(pc.value.data(), pc.value.data() + pc.value.size());
  EXPECT_LT(diff(a, b).rel, 8 * FLT_EPSILON);
}

}  // namespace
}  // namespace convlab::train
