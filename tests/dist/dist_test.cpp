// Data-parallel training under MPI. Run by CTest as
//   OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun -np 2 --oversubscribe --bind-to none test_train_dist
// (tests/dist/CMakeLists.txt; the two variables only matter as root); every test is collective: both
// ranks run it.
//
// The target: 2 ranks with global batch 32 train like one rank with batch 32.
//  - against gradient accumulation in one process (two nets of batch 16, their
//    gradients summed, the same update): bit for bit. With 2 ranks the all-reduce
//    is one fp32 addition per element (a + b == b + a), the loss gradient is
//    divided by the global batch on both sides, every other operation is the same.
//  - against one net of batch 32: the losses within 1e-4 relative for 5 iterations,
//    the weights within a bound derived step by step: the only difference is the
//    order of the batch sums in the parameter gradients, measured each step at the
//    reference's weights (delta_t = |g_32 - g_16+16|), carried through SGD's linear
//    recurrence (dv = mu dv + delta + wd dw, dw += lr dv), times 2 for what the
//    first-order model leaves out (the changed weights' own effect on the next
//    gradients), plus 8 T fp32 rounding units of |w| for the update's own rounding.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "core/error.hpp"
#include "dist/comm.hpp"
#include "dist/grad_sync.hpp"
#include "dist/scaling.hpp"
#include "net/data.hpp"
#include "net/net.hpp"
#include "report/report_scaling.hpp"
#include "train/trainer.hpp"

namespace convlab::train {
namespace {

Comm& world() { return mpi_world(); }

#define NEED_TWO_RANKS()                                                                         \
  if (world().size() < 2) GTEST_SKIP() << "needs 2 MPI ranks: run under mpirun -np 2 (CTest does)"

constexpr int kGlobal = 32, kClasses = 10, kIters = 5;
const SgdOptions kSgd{.lr = 0.01f, .momentum = 0.9f, .weight_decay = 5e-4f};

Net make_net(int batch, int64_t offset, int grad_batch) {
  NetOptions o;
  o.batch = batch;
  o.classes = kClasses;
  o.dropout = 0.5f;
  o.sample_offset = offset;
  o.grad_batch = grad_batch;
  o.ctx.threads = 1;
  Net n = build_network("tiny", o);
  n.choose(Policy::parse("default"));
  n.init(7);
  return n;
}

std::vector<Batch> global_batches() {
  auto data = make_synthetic("pattern", {kGlobal, 3, 16, 16}, kClasses, 11);
  std::vector<Batch> out(kIters);
  for (int i = 0; i < kIters; ++i) data->batch(i, out[size_t(i)]);
  return out;
}

Batch slice(const Batch& g, int first, int n) {
  Batch b;
  const int64_t per = g.images.size() / int64_t(g.labels.size());
  b.images = Tensor({n, g.images.shape[1], g.images.shape[2], g.images.shape[3]});
  std::memcpy(b.images.data(), g.images.data() + first * per, size_t(n * per) * sizeof(float));
  b.labels.assign(g.labels.begin() + first, g.labels.begin() + first + n);
  return b;
}

void copy_weights(Net& from, Net& to) {
  auto a = from.params(), b = to.params();
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i)
    std::memcpy(b[i]->value.data(), a[i]->value.data(), size_t(a[i]->value.size()) * sizeof(float));
}

// Gradient accumulation in one process: nets a (samples 0..15) and b (16..31) from
// a's weights; the gradients summed into a's. Returns the global loss.
double accumulate(Net& a, Net& b, const Batch& g, int64_t it) {
  copy_weights(a, b);
  const Batch sa = slice(g, 0, kGlobal / 2), sb = slice(g, kGlobal / 2, kGlobal / 2);
  const double la = a.forward_backward(sa.images.data(), sa.labels.data(), it);
  const double lb = b.forward_backward(sb.images.data(), sb.labels.data(), it);
  auto pa = a.params(), pb = b.params();
  for (size_t i = 0; i < pa.size(); ++i)
    for (int64_t j = 0; j < pa[i]->grad.size(); ++j) pa[i]->grad.data()[j] += pb[i]->grad.data()[j];
  return (la + lb) / 2;
}

TEST(Comm, Collectives) {
  NEED_TWO_RANKS();
  Comm& w = world();
  const int r = w.rank(), n = w.size();
  // Crosses the 1 MiB pieces of the all-reduce: every element exact (small integers).
  std::vector<float> f(size_t(3) << 18 | 5);
  for (size_t i = 0; i < f.size(); ++i) f[i] = float((i % 7) + r);
  w.allreduce_sum(f.data(), f.size());
  for (size_t i = 0; i < f.size(); i += 997) ASSERT_EQ(f[i], float(n * (i % 7) + n * (n - 1) / 2)) << i;
  double d[2] = {double(r), -double(r)};
  w.allreduce_max(d, 2);
  EXPECT_EQ(d[0], n - 1);
  EXPECT_EQ(d[1], 0);
  std::string s = r == 0 ? "from rank 0" : "xxxxxxxxxxx";
  w.broadcast(s.data(), s.size(), 0);
  EXPECT_EQ(s, "from rank 0");
  std::vector<double> all(static_cast<size_t>(n), 0.0);
  const double mine = 10.0 + r;
  w.allgather(&mine, 1, all.data());
  for (int k = 0; k < n; ++k) EXPECT_EQ(all[size_t(k)], 10.0 + k);
  std::unique_ptr<Comm> one = w.first(1);
  EXPECT_EQ(one != nullptr, r == 0);
  if (one) {
    EXPECT_EQ(one->size(), 1);
  }
  EXPECT_GT(w.exchange_bandwidth(size_t(1) << 20, 3), 0);
  EXPECT_NE(w.describe().find("2 ranks"), std::string::npos) << w.describe();
  w.barrier();
}

TEST(GradSync, BucketsHoldEveryTensorOnceInBackwardOrder) {
  NEED_TWO_RANKS();
  Net net = make_net(16, 0, kGlobal);
  GradSync sync(world(), net, {.bucket_bytes = 4096, .overlap = true});
  std::vector<Param*> seen;
  size_t last_ready = size_t(-1);
  for (const GradBucket& b : sync.buckets()) {
    EXPECT_LE(b.ready_after, last_ready) << "buckets out of backward order";
    last_ready = b.ready_after;
    size_t floats = 0;
    for (Param* p : b.params) {
      seen.push_back(p);
      floats += size_t(p->value.size());
    }
    EXPECT_EQ(floats, b.floats);
    // A bucket under the size holds no tensor that could be alone, and one tensor of that size is alone.
    for (Param* p : b.params)
      if (size_t(p->value.size()) * 4 >= 4096) {
        EXPECT_EQ(b.params.size(), 1u) << p->name;
      }
  }
  auto all = net.params();
  EXPECT_EQ(seen.size(), all.size());
  for (Param* p : all) EXPECT_EQ(std::count(seen.begin(), seen.end(), p), 1) << p->name;
  // The wrong loss divisor is refused: the sum would not be the global mean.
  Net local = make_net(16, 0, 0);
  EXPECT_THROW(GradSync(world(), local, {}), Error);
}

TEST(GradSync, EveryGradientBecomesTheSumOverRanks) {
  NEED_TWO_RANKS();
  for (bool overlap : {true, false}) {
    Net net = make_net(16, 16 * world().rank(), kGlobal);
    GradSync sync(world(), net, {.bucket_bytes = 2048, .overlap = overlap});
    for (Param* p : net.params())
      for (int64_t i = 0; i < p->grad.size(); ++i) p->grad.data()[i] = float((i % 5) + 1) * float(world().rank() + 1);
    for (size_t l = net.layers().size(); l-- > 0;) sync.backward_done(l);
    sync.wait();
    for (Param* p : net.params())
      for (int64_t i = 0; i < p->grad.size(); i += 13) ASSERT_EQ(p->grad.data()[i], float((i % 5) + 1) * 3.f) << p->name;
    EXPECT_EQ(sync.last().buckets.size(), sync.buckets().size());
    EXPECT_GE(sync.last().comm(), 0);
    // What the trainer reads (train/rank_group.hpp): each bucket's time shared among its layers
    // by bytes, so the layers' shares add up to the step's all-reduce and its exposed part;
    // a layer without parameters has no share.
    const ExchangeStep st = sync.last_step();
    ASSERT_EQ(st.layer_comm.size(), net.layers().size());
    ASSERT_EQ(st.layer_exposed.size(), net.layers().size());
    double comm = 0, exposed = 0, after = 0;
    for (size_t l = 0; l < net.layers().size(); ++l) {
      comm += st.layer_comm[l];
      exposed += st.layer_exposed[l];
      if (net.layers()[l]->params().empty()) {
        EXPECT_EQ(st.layer_comm[l], 0) << net.layers()[l]->name();
      }
    }
    for (size_t b = 0; b < sync.last().buckets.size(); ++b) after += sync.last().exposed(b);
    EXPECT_EQ(st.comm, sync.last().comm());
    EXPECT_EQ(st.skew, sync.last().skew);
    EXPECT_EQ(st.after_backward, after);
    EXPECT_NEAR(comm, st.comm, 1e-9 + 1e-9 * st.comm);
    EXPECT_NEAR(exposed, st.after_backward, 1e-9 + 1e-9 * st.after_backward);
  }
}

TEST(DataParallel, TwoRanksTrainLikeOneRankOfTheGlobalBatch) {
  NEED_TWO_RANKS();
  std::unique_ptr<Comm> two = world().first(2);
  if (!two) {
    world().barrier();
    GTEST_SKIP() << "rank outside the first two";
  }
  const int r = two->rank();
  const std::vector<Batch> data = global_batches();

  // 2 ranks, batch 16 each.
  Net dist = make_net(kGlobal / 2, int64_t(r) * (kGlobal / 2), kGlobal);
  GradSync sync(*two, dist, {.bucket_bytes = 8192, .overlap = true});
  dist.set_gradient_hook(&sync);
  std::vector<double> dist_loss;
  for (int it = 0; it < kIters; ++it) {
    const Batch mine = slice(data[size_t(it)], r * (kGlobal / 2), kGlobal / 2);
    double l = dist.train_step(mine.images.data(), mine.labels.data(), kSgd, it);
    two->allreduce_sum(&l, 1);
    dist_loss.push_back(l / 2);
  }

  // One process: accumulation (a, b) and the batch-32 reference, with the helper pair
  // (ha, hb) measuring the reordering at the reference's weights every step.
  Net a = make_net(kGlobal / 2, 0, kGlobal), b = make_net(kGlobal / 2, kGlobal / 2, kGlobal);
  Net ref = make_net(kGlobal, 0, 0);
  Net ha = make_net(kGlobal / 2, 0, kGlobal), hb = make_net(kGlobal / 2, kGlobal / 2, kGlobal);
  ExecContext ctx;
  ctx.threads = 1;
  const auto pr = ref.params(), ph = ha.params();
  std::vector<std::vector<double>> ev(pr.size()), ew(pr.size());
  for (size_t i = 0; i < pr.size(); ++i) ev[i].assign(size_t(pr[i]->value.size()), 0), ew[i] = ev[i];
  std::vector<double> acc_loss, ref_loss;
  for (int it = 0; it < kIters; ++it) {
    const Batch& g = data[size_t(it)];
    acc_loss.push_back(accumulate(a, b, g, it));
    sgd_update(a.params(), kSgd, ctx);
    copy_weights(ref, ha);
    accumulate(ha, hb, g, it);
    ref_loss.push_back(ref.forward_backward(g.images.data(), g.labels.data(), it));
    for (size_t i = 0; i < pr.size(); ++i) {
      const float wd = pr[i]->decay ? kSgd.weight_decay : 0.f;
      for (size_t j = 0; j < ev[i].size(); ++j) {
        const double delta = std::fabs(double(pr[i]->grad.data()[j]) - double(ph[i]->grad.data()[j]));
        ev[i][j] = kSgd.momentum * ev[i][j] + delta + wd * ew[i][j];
        ew[i][j] += kSgd.lr * ev[i][j];
      }
    }
    sgd_update(ref.params(), kSgd, ctx);
  }

  // Bit for bit against accumulation, on both ranks.
  const auto pd = dist.params(), pa = a.params();
  for (int it = 0; it < kIters; ++it) EXPECT_EQ(dist_loss[size_t(it)], acc_loss[size_t(it)]) << "iteration " << it;
  for (size_t i = 0; i < pd.size(); ++i)
    EXPECT_EQ(std::memcmp(pd[i]->value.data(), pa[i]->value.data(), size_t(pd[i]->value.size()) * 4), 0)
        << pd[i]->name << " differs from gradient accumulation";

  // Against one rank of batch 32: losses within 1e-4, weights within the derived bound.
  for (int it = 0; it < kIters; ++it)
    EXPECT_LE(std::fabs(dist_loss[size_t(it)] - ref_loss[size_t(it)]), 1e-4 * std::fabs(ref_loss[size_t(it)]))
        << "iteration " << it << ": " << dist_loss[size_t(it)] << " vs " << ref_loss[size_t(it)];
  // The first-order part per tensor in the max norm (the reordering perturbs some
  // elements' gradients; the changed weights spread it to others through the next
  // steps' gradients), the rounding part per element (each update rounds w - lr v to
  // fp32: a perturbed v may round the other way, at most 8 units per step here).
  double worst = 0;
  bool moved = false;
  for (size_t i = 0; i < pd.size(); ++i) {
    double e = 0, tensor_worst = 0, tensor_diff = 0;
    for (size_t j = 0; j < ew[i].size(); ++j) e = std::max(e, ew[i][j]);
    for (size_t j = 0; j < ew[i].size(); ++j) {
      const double w = pr[i]->value.data()[j], diff = std::fabs(double(pd[i]->value.data()[j]) - w);
      const double bound = 2 * e + 8 * kIters * 0x1p-24 * std::fabs(w);
      tensor_worst = std::max(tensor_worst, bound > 0 ? diff / bound : (diff > 0 ? INFINITY : 0));
      tensor_diff = std::max(tensor_diff, diff);
    }
    if (world().rank() == 0)
      std::printf("%-10s max |w_2ranks - w_32| %.3g; first-order bound %.3g; worst diff / bound %.3f\n",
                  pd[i]->name.c_str(), tensor_diff, 2 * e, tensor_worst);
    worst = std::max(worst, tensor_worst);
    moved |= tensor_diff > 0;
  }
  EXPECT_LE(worst, 1.0) << "a weight left its bound (worst diff / bound " << worst << ")";
  EXPECT_TRUE(moved) << "batch 32 and 16+16 gave bit-identical weights: the comparison checked nothing";
  RecordProperty("worst_weight_diff_over_bound", std::to_string(worst));
}

TrainConfig tiny_config(int batch, int iters, int warmup, std::vector<std::string> policies) {
  TrainConfig cfg;
  cfg.net = "tiny";
  cfg.batch = batch;
  cfg.iters = iters;
  cfg.warmup = warmup;
  cfg.classes = kClasses;
  cfg.policies = std::move(policies);
  return cfg;
}

// run_training over the first two ranks of the world.
TrainReport train_on_two(const TrainConfig& cfg) {
  std::unique_ptr<Comm> two = world().first(2);
  DistOptions d;
  d.comm = two.get();
  d.probe_bytes = size_t(1) << 20;
  return run_training(cfg, {}, &d);
}

TEST(DataParallel, RankZeroChoosesAndEveryRankCountTrainsTheSameNetwork) {
  NEED_TWO_RANKS();
  const TrainConfig cfg = tiny_config(32, 2, 1, {"find", "default"});
  ScalingOptions opt;
  opt.ranks = {1, 2};
  opt.probe_bytes = size_t(1) << 20;
  const ScalingReport s = run_scaling(cfg, world(), opt);
  if (world().rank() != 0) {
    EXPECT_TRUE(s.runs.empty());
    return;
  }
  ASSERT_EQ(s.runs.size(), 2u);
  EXPECT_EQ(s.runs[0].ranks, 1);
  EXPECT_EQ(s.runs[1].ranks, 2);
  EXPECT_GT(s.runs[1].grad_bytes, 0);
  EXPECT_GT(s.runs[1].exchange_bytes_per_s, 0);
  for (size_t p = 0; p < s.runs[0].policies.size(); ++p) {
    const PolicyResult &one = s.runs[0].policies[p], &two = s.runs[1].policies[p];
    ASSERT_TRUE(one.ran && two.ran) << one.policy;
    ASSERT_EQ(one.losses.size(), two.losses.size());
    for (size_t i = 0; i < one.losses.size(); ++i)
      EXPECT_LE(std::fabs(one.losses[i] - two.losses[i]), 1e-4 * std::fabs(one.losses[i])) << one.policy << " " << i;
    EXPECT_EQ(two.comm_seconds.size(), size_t(cfg.iters));
    EXPECT_GT(two.comm_median, 0);
  }
  const std::string md = scaling_markdown(s), js = scaling_json(s);
  for (const char* want : {"Iteration time per policy and rank count", "against the bandwidth model", "On paper",
                           "an estimate, not a measurement"})
    EXPECT_NE(md.find(want), std::string::npos) << want;
  EXPECT_NE(js.find("\"scaling\""), std::string::npos);
  EXPECT_NE(js.find("\"paper_estimate\""), std::string::npos);
}

TEST(DataParallel, OtherRanksRunRankZerosChoices) {
  NEED_TWO_RANKS();
  const TrainReport rep = train_on_two(tiny_config(16, 1, 0, {"find"}));
  ASSERT_TRUE(rep.policies[0].ran);
  const int rank = world().rank();
  std::string mine;
  for (const LayerResult& l : rep.policies[0].layers)
    if (l.kind == "conv")
      for (int k = 0; k < 3; ++k) {
        mine += l.algo[k] + ";";
        if (rank != 0) {
          EXPECT_EQ(l.why[k].rfind("rank 0's choice", 0), 0u) << l.why[k];
        }
      }
  std::string root = mine;
  uint64_t n = root.size();
  world().broadcast(&n, sizeof n, 0);
  root.resize(size_t(n));
  world().broadcast(root.data(), root.size(), 0);
  EXPECT_EQ(mine, root);
}

TEST(DataParallel, AnUnevenSplitIsRefusedOnEveryRank) {
  NEED_TWO_RANKS();
  try {
    train_on_two(tiny_config(15, 1, 0, {"default"}));
    FAIL() << "batch 15 over 2 ranks was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("does not split evenly"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace convlab::train

// Every rank runs every test; the exit status is the worst rank's, so mpirun fails when any rank failed.
int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  convlab::train::Comm& w = convlab::train::mpi_world();
  if (w.rank() != 0) ::testing::GTEST_FLAG(brief) = true;
  const int rc = RUN_ALL_TESTS();
  double worst = rc;
  w.allreduce_max(&worst, 1);
  return worst != 0 ? 1 : 0;
}
