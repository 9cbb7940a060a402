// The experiment's rank group (train/rank_group.hpp) over a communicator
// (dist/comm.hpp): MPI between processes, NCCL between GPUs, and the gradient
// all-reduce of each net by a GradSync (dist/grad_sync.hpp).
//
// Data-parallel training (run_training with a communicator of 2+ ranks): cfg.batch
// is the global batch, split evenly (it must divide); rank r trains samples
// [r*b, (r+1)*b) of every global batch (b = batch / ranks) with the dropout masks
// of those global samples; rank 0 chooses every policy's algorithms and broadcasts
// them (only rank 0 touches a cache); every rank checks it starts from the same
// weights; gradients are all-reduced by a GradSync per net; the losses are the
// global batch's. Every rank returns the report; rank 0's times are the ones
// reported (iteration times are the maximum over ranks).
#pragma once
#include <cstddef>
#include <functional>
#include <string>

#include "dist/comm.hpp"
#include "dist/grad_sync.hpp"
#include "train/rank_group.hpp"
#include "train/trainer.hpp"

namespace convlab::train {

enum class Overlap { automatic, on, off };
struct DistOptions {
  Comm* comm = nullptr;
  GradSyncOptions sync;  // sync.overlap is set from `overlap`
  // automatic: on for CUDA (NCCL runs on its own stream); on the CPU only when a core
  // is left for the communication thread (ranks on the node x threads < cores): on a
  // node whose cores all compute, the thread's copies and sums take their cycles
  // (measured: AlexNet on 2 cores, 2 ranks, 709 ms per step without overlap, 780 with).
  Overlap overlap = Overlap::automatic;
  size_t probe_bytes = size_t(64) << 20;  // the exchange-bandwidth probe's message
};

class CommGroup final : public RankGroup {
 public:
  // `opt.comm` must be set and outlive the group.
  explicit CommGroup(const DistOptions& opt);

  int rank() const override;
  int size() const override;
  int local_size() const override;
  int default_threads() const override;
  void select_device(DeviceKind device) override;
  GroupTransport connect(DeviceKind device, int threads) override;
  void barrier() override;
  void broadcast(std::string& text) override;
  void broadcast(double& value) override;
  std::vector<double> allgather(double value) override;
  double sum(double value) override;
  double max(double value) override;
  std::unique_ptr<NetExchange> exchange(Net& net) override;

 private:
  Comm& comm_;
  DistOptions opt_;
  GradSyncOptions sync_;  // opt_.sync with the overlap connect() decided
};

// run_training (train/trainer.hpp) over dist->comm: data-parallel when it has 2+
// ranks; a 1-rank communicator only sets the threads (one rank's share of the node).
TrainReport run_training(const TrainConfig& cfg, const std::function<void(const std::string&)>& log,
                         const DistOptions* dist);

}  // namespace convlab::train
