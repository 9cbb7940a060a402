// Every layer's backward against finite differences (or the analytic formula),
// on small shapes; SGD's update against its formula.
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>

#include "algorithms/registry.hpp"
#include "core/error.hpp"
#include "core/problem.hpp"
#include "net/layers.hpp"
#include "tests/net/grad_check.hpp"

namespace convlab::train {
namespace {

using testing::check_tensor;
using testing::dot;
using testing::GradCheck;
using testing::random_vec;

// Runs the generic check: dx, and every parameter's gradient.
void check_layer(Layer& layer, const Shape4& in, std::vector<float> x, const GradCheck& opt = {}, bool check_dx = true) {
  ExecContext ctx;
  ctx.threads = 2;
  const Shape4 out = layer.setup(in, ctx);
  layer.init_params(7);
  for (Param* p : layer.params())  // non-zero biases too
    for (int64_t i = 0; i < p->value.size(); ++i)
      if (!p->decay) p->value.data()[i] = 0.1f * float(i % 7) - 0.3f;
  const std::vector<float> r = random_vec(size_t(out.count()), 99);
  std::vector<float> y(size_t(out.count())), dx(x.size());
  layer.forward(x.data(), y.data(), true, 3);
  layer.backward(x.data(), y.data(), r.data(), dx.data());
  auto loss = [&] {
    std::vector<float> yy(size_t(out.count()));
    layer.forward(x.data(), yy.data(), true, 3);
    return dot(yy.data(), r);
  };
  if (check_dx) check_tensor((layer.name() + ".dx").c_str(), x.data(), x.size(), dx.data(), loss, opt);
  for (Param* p : layer.params()) {
    const std::vector<float> g(p->grad.data(), p->grad.data() + p->grad.size());
    check_tensor(p->name.c_str(), p->value.data(), size_t(p->value.size()), g.data(), loss, opt);
  }
}

TEST(Layers, ConvViaReferenceMatchesFiniteDifferences) {
  // groups 2, stride 2, padding 1, bias
  ConvProblem p = parse_problem("g2mb2ic4ih7oc6kh3sh2ph1");
  ConvLayer conv("conv", p);
  for (Direction d : kAllDirections) conv.inject(d, get_algorithm("cpu.reference"));
  AlignedBuffer<char> ws(conv.workspace_bytes());
  conv.set_workspace(ws.data(), ws.size());
  check_layer(conv, {2, 4, 7, 7}, random_vec(2 * 4 * 7 * 7, 1));
}

TEST(Layers, ConvRejectsWrongInputAndUnsupportedInjection) {
  ConvLayer conv("conv", parse_problem("mb2ic4ih7oc6kh3"));
  ExecContext ctx;
  EXPECT_THROW(conv.setup({2, 4, 8, 8}, ctx), Error);
  EXPECT_THROW(conv.forward(nullptr, nullptr, true, 0), Error);  // no algorithm chosen
}

TEST(Layers, Relu) {
  std::vector<float> x = random_vec(2 * 3 * 5 * 5, 2);
  for (float& v : x) v = v >= 0 ? v + 0.05f : v - 0.05f;  // keep clear of the kink (h = 0.01)
  ReluLayer relu("relu");
  check_layer(relu, {2, 3, 5, 5}, x);
}

TEST(Layers, LrnMatchesFiniteDifferences) {
  // Big alpha so the normalisation matters; C = 7 > size exercises the clipped windows.
  LrnLayer lrn("lrn", 5, 0.2f, 0.75f, 2.f);
  check_layer(lrn, {2, 7, 3, 4}, random_vec(2 * 7 * 3 * 4, 3, -2.f, 2.f));
}

TEST(Layers, LrnAlexNetConstantsForward) {
  // y = x / (k + alpha * sum x^2)^beta with AlexNet's constants, one channel window by hand.
  LrnLayer lrn("lrn");
  ExecContext ctx;
  lrn.setup({1, 3, 1, 1}, ctx);
  const float x[3] = {10.f, 20.f, 30.f};
  float y[3];
  lrn.forward(x, y, false, 0);
  const double s = 2.0 + 1e-4 * (100 + 400 + 900);  // all three channels are in every window of size 5
  for (int c = 0; c < 3; ++c) EXPECT_NEAR(y[c], x[c] / std::pow(s, 0.75), 1e-5 * x[c]);
}

TEST(Layers, MaxPool) {
  // Distinct values at least 0.1 apart: no ties within 2h.
  const int n = 2 * 3 * 7 * 7;
  std::vector<float> x(static_cast<size_t>(n));
  std::vector<int> perm(static_cast<size_t>(n));
  std::iota(perm.begin(), perm.end(), 0);
  for (int i = n - 1; i > 0; --i) std::swap(perm[size_t(i)], perm[size_t((i * 7919 + 13) % (i + 1))]);
  for (int i = 0; i < n; ++i) x[size_t(i)] = 0.1f * float(perm[size_t(i)]) - 10.f;
  MaxPoolLayer pool("pool", 3, 2);
  ExecContext ctx;
  EXPECT_EQ(pool.setup({2, 3, 7, 7}, ctx), (Shape4{2, 3, 3, 3}));
  MaxPoolLayer pool2("pool", 3, 2);
  check_layer(pool2, {2, 3, 7, 7}, x, GradCheck{.h = 1e-2, .rtol = 2e-3, .samples = 100});
}

TEST(Layers, MaxPoolAlexNetSizes) {
  ExecContext ctx;
  for (auto [in, out] : {std::pair{55, 27}, {27, 13}, {13, 6}}) {
    MaxPoolLayer pool("pool");
    EXPECT_EQ(pool.setup({1, 1, in, in}, ctx).h, out);
  }
}

TEST(Layers, FullyConnected) {
  FcLayer fc("fc", 5);
  check_layer(fc, {3, 2, 2, 2}, random_vec(3 * 8, 4));
}

TEST(Layers, DropoutIsItsMaskAndSeeded) {
  DropoutLayer drop("drop", 0.5f, 42);
  ExecContext ctx;
  const int n = 4000;
  drop.setup({1, n, 1, 1}, ctx);
  std::vector<float> x(n, 1.f), y1(n), y2(n), y3(n), dx(n);
  drop.forward(x.data(), y1.data(), true, 5);
  drop.forward(x.data(), y3.data(), true, 6);
  drop.forward(x.data(), y2.data(), true, 5);
  EXPECT_EQ(y1, y2);  // same iteration, same mask
  EXPECT_NE(y1, y3);  // another iteration, another mask
  int zeros = 0;
  for (float v : y1) {
    EXPECT_TRUE(v == 0.f || v == 2.f) << v;
    zeros += v == 0.f;
  }
  EXPECT_NEAR(zeros, n / 2, 200);  // ~6 sigma
  const std::vector<float> dy = random_vec(n, 5);
  drop.backward(x.data(), y2.data(), dy.data(), dx.data());
  for (int i = 0; i < n; ++i) EXPECT_EQ(dx[size_t(i)], dy[size_t(i)] * y2[size_t(i)]);
  drop.forward(x.data(), y1.data(), false, 5);  // inference: identity
  EXPECT_EQ(y1, x);
  DropoutLayer d2("drop", 0.5f, 42);
  check_layer(d2, {2, 3, 2, 2}, random_vec(24, 6));
}

TEST(Layers, SoftmaxCrossEntropyAnalyticAndFiniteDifferences) {
  const int n = 3, k = 5;
  std::vector<float> z = random_vec(n * k, 8, -3.f, 3.f), dz(n * k);
  const int labels[n] = {0, 4, 2};
  const double loss = softmax_cross_entropy(z.data(), labels, n, k, dz.data(), 1);
  double want = 0;
  for (int i = 0; i < n; ++i) {
    double s = 0;
    for (int c = 0; c < k; ++c) s += std::exp(double(z[size_t(i * k + c)]));
    want += std::log(s) - z[size_t(i * k + labels[i])];
    for (int c = 0; c < k; ++c)
      EXPECT_NEAR(dz[size_t(i * k + c)], (std::exp(double(z[size_t(i * k + c)])) / s - (c == labels[i])) / n, 1e-6);
  }
  EXPECT_NEAR(loss, want / n, 1e-6);
  check_tensor("softmax.dz", z.data(), z.size(), dz.data(),
               [&] { return softmax_cross_entropy(z.data(), labels, n, k, nullptr, 1); }, GradCheck{.h = 1e-2, .rtol = 2e-3, .samples = 100});
  // Stable for huge logits.
  std::vector<float> big = {1000.f, 0.f, -1000.f, 0.f, 0.f};
  const int l0[1] = {0};
  EXPECT_NEAR(softmax_cross_entropy(big.data(), l0, 1, 5, nullptr), 0.0, 1e-9);
  const int bad[1] = {5};
  EXPECT_THROW(softmax_cross_entropy(big.data(), bad, 1, 5, nullptr), Error);
}

TEST(Layers, SgdMomentumWeightDecay) {
  Param w("w", {3}, true), b("b", {3}, false);
  const float w0[3] = {1.f, -2.f, 0.5f}, g[3] = {0.1f, 0.2f, -0.3f};
  for (int i = 0; i < 3; ++i) {
    w.value.data()[i] = b.value.data()[i] = w0[i];
    w.grad.data()[i] = b.grad.data()[i] = g[i];
  }
  SgdOptions opt{.lr = 0.1f, .momentum = 0.9f, .weight_decay = 0.01f};
  sgd_update(w, opt);
  sgd_update(w, opt);  // second step: momentum carries the first velocity
  sgd_update(b, opt);
  for (int i = 0; i < 3; ++i) {
    const double v1 = g[i] + 0.01 * w0[i];
    const double w1 = w0[i] - 0.1 * v1;
    const double v2 = 0.9 * v1 + g[i] + 0.01 * w1;
    EXPECT_NEAR(w.value.data()[i], w1 - 0.1 * v2, 1e-6);
    EXPECT_NEAR(w.momentum.data()[i], v2, 1e-6);
    EXPECT_NEAR(b.value.data()[i], w0[i] - 0.1 * g[i], 1e-6);  // no decay on biases
  }
}

}  // namespace
}  // namespace convlab::train
