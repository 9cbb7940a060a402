// The NCCL half of data-parallel training. Without a GPU: one clear
// error, never a silent CPU fallback. With one (scripts/gpu-check.sh's tests
// stage runs every *Cuda* test): NCCL on one rank bootstrapped without MPI
// (solo_comm), its all-reduce on device memory, and a CUDA network trained with
// the GradSync hook (communication stream, events, NCCL groups) against the same
// network without it: with one rank the sum is the rank's own gradient, so the
// two must agree bit for bit. Two or more GPUs run under mpirun (gpu-check's dist stage).
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "core/device.hpp"
#include "core/error.hpp"
#include "dist/comm.hpp"
#include "dist/grad_sync.hpp"
#include "net/data.hpp"
#include "net/net.hpp"

namespace convlab::train {
namespace {

TEST(Nccl, WithoutADeviceOrNcclOneClearError) {
  if (cuda_info().available && nccl_unavailable_reason().empty())
    GTEST_SKIP() << "a CUDA device and NCCL exist (" << cuda_info().name << "): nothing to refuse";
  auto solo = solo_comm();
  try {
    make_nccl_comm(*solo);
    FAIL() << "an NCCL communicator was made without a device or NCCL";
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_TRUE(m.find("no CUDA device") != std::string::npos || m.find("without") != std::string::npos) << m;
  }
}

TEST(Nccl, SoloCommIsTheIdentity) {
  auto solo = solo_comm();
  EXPECT_EQ(solo->size(), 1);
  float f[3] = {1, 2, 3};
  solo->allreduce_sum(f, 3);
  EXPECT_EQ(f[2], 3.f);
  double d = 4, out = 0;
  solo->allgather(&d, 1, &out);
  EXPECT_EQ(out, 4);
  EXPECT_THROW(solo->first(2), Error);
  EXPECT_THROW(solo->broadcast(&d, sizeof d, 1), Error);
}

TEST(NcclCuda, OneRankTrainsBitIdenticalToNoCommunication) {
  if (!cuda_info().available) GTEST_SKIP() << "needs a CUDA device: " << cuda_info().reason;
  if (const std::string why = nccl_unavailable_reason(); !why.empty()) GTEST_SKIP() << why;
  auto solo = solo_comm();
  auto nccl = make_nccl_comm(*solo);
  EXPECT_NE(nccl->describe().find("NCCL"), std::string::npos);

  auto make = [] {
    NetOptions o;
    o.batch = 8;
    o.classes = 4;
    o.dropout = 0.5f;
    o.grad_batch = 8;
    o.ctx.device = DeviceKind::cuda;
    Net n = build_network("tiny", o);
    n.choose(Policy::parse("default"));
    n.init(3);
    return n;
  };
  Net plain = make(), synced = make();
  GradSync sync(*solo, synced, {.bucket_bytes = 4096, .overlap = true});
  synced.set_gradient_hook(&sync);
  auto data = make_synthetic("pattern", plain.input_shape(), 4, 5);
  const SgdOptions sgd{.lr = 0.01f, .momentum = 0.9f, .weight_decay = 5e-4f};
  for (int it = 0; it < 3; ++it) {
    Batch b;
    data->batch(it, b);
    StepTimes t;
    const double a = plain.train_step(b.images.data(), b.labels.data(), sgd, it);
    const double c = synced.train_step(b.images.data(), b.labels.data(), sgd, it, &t);
    EXPECT_EQ(a, c) << "iteration " << it;
    EXPECT_EQ(sync.last().buckets.size(), sync.buckets().size());
    EXPECT_GT(sync.last().comm(), 0) << "no all-reduce was timed";
  }
  plain.download_params();
  synced.download_params();
  auto p = plain.params(), q = synced.params();
  for (size_t i = 0; i < p.size(); ++i)
    EXPECT_EQ(std::memcmp(p[i]->value.data(), q[i]->value.data(), size_t(p[i]->value.size()) * 4), 0) << p[i]->name;
}

}  // namespace
}  // namespace convlab::train
