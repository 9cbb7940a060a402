// Data-parallel gradient all-reduce in buckets, overlapped with the backward
// pass. The net calls backward_done(layer) as each layer's parameter
// gradients become final (backward runs fc8 first: the classifier's ~95 % of
// AlexNet's parameters are ready first) and wait() before the SGD update.
//
//   GradSync sync(comm, net, {.bucket_bytes = 25 << 20});
//   net.set_gradient_hook(&sync);
//   net.train_step(...);              // every gradient = the mean over all ranks' samples
//   sync.last().exposed()             // what the step waited for communication
//
// Buckets: parameters in backward order, packed until a bucket holds at least
// bucket_bytes; a tensor that large is a bucket alone, reduced in place (AlexNet
// at 25 MiB: fc8 + biases packed, fc7's and fc6's weights alone, the convolutions packed).
// A bucket is reduced as soon as its earliest layer's backward is done:
//   CPU (MPI)   a communication thread runs each bucket's all-reduce (in place
//               for one tensor, through a packed buffer for several) while the
//               main thread goes on with the next layers; it waits between
//               progress polls without spinning (a shared core is the compute's).
//               Each rank's loss gradient is divided by the global batch
//               (NetOptions::grad_batch), so the plain sum over ranks is the
//               global mean: no scaling pass over the gradients.
//   CUDA (NCCL) a communication stream waits on an event recorded after the
//               layer's backward and runs ncclAllReduce(ncclSum) on each tensor
//               of the bucket inside one NCCL group; the compute stream waits on
//               the communication stream's last event before the update.
// Without overlap every bucket is reduced in wait(), after the whole backward.
#pragma once
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "dist/comm.hpp"
#include "net/net.hpp"
#include "train/rank_group.hpp"

namespace convlab::train {

struct GradSyncOptions {
  size_t bucket_bytes = size_t(25) << 20;
  bool overlap = true;
};

struct GradBucket {
  std::vector<Param*> params;
  std::vector<size_t> layers;  // net indices of the layers whose parameters it holds
  size_t ready_after = 0;      // the layer whose backward completes it (the lowest index)
  size_t floats = 0;
};

// One step's communication, in seconds.
struct SyncStep {
  struct Bucket {
    double start = 0, end = 0;  // the all-reduce, on the step's clock (0 = the first backward_done)
  };
  std::vector<Bucket> buckets;
  double backward_end = 0;  // when wait() was called, same clock
  // CPU: the time a one-number all-reduce took before the first bucket: the wait for
  // the slowest rank to finish its part of the backward up to there (imbalance, not
  // transfer: the buckets' times then hold the transfers alone). 0 on NCCL.
  double skew = 0;
  double wait = 0;          // seconds wait() blocked: communication not hidden behind the backward
  double comm() const;      // sum of the buckets' all-reduce times
  // Part of bucket b after backward_end (exposed); the rest ran beside the backward.
  double exposed(size_t b) const;
};

class GradSync final : public NetExchange {
 public:
  // CPU nets reduce over `comm` (MPI); CUDA nets over NCCL, created here from `comm`.
  // One rank is allowed (the transport runs; the sum is the rank's own gradient).
  GradSync(Comm& comm, Net& net, GradSyncOptions opt = {});
  ~GradSync() override;
  GradSync(const GradSync&) = delete;
  GradSync& operator=(const GradSync&) = delete;

  void backward_done(size_t layer) override;
  void wait() override;

  const std::vector<GradBucket>& buckets() const { return buckets_; }
  const SyncStep& last() const { return last_; }
  // last() summed, and shared among the net's layers by bytes (train/rank_group.hpp).
  ExchangeStep last_step() const override;
  size_t bytes() const override;  // all gradients, once
  std::string describe() const override;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  const Net* net_ = nullptr;
  std::vector<GradBucket> buckets_;
  SyncStep last_;
};

}  // namespace convlab::train
