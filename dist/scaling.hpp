// Data-parallel scaling of the training experiment: the same
// policies, the same global batch and the same data trained on 1, 2, ... ranks
// of one MPI world, one rank count after the other (ranks outside the current
// count sleep in a barrier); its report (report/report_scaling.hpp): iteration time per policy and
// rank count, scaling efficiency against one rank, compute vs communication vs
// overlap per layer, how each policy's speedup changes with the rank count,
// the measured all-reduce against the bandwidth model, and what a multi-node
// GPU run would cost on paper from the same model (an estimate, labelled so).
//
//   mpirun -np 2 --bind-to none convlab train alexnet --batch 32 --ranks 1,2
//
// Strong scaling: the global batch is fixed, so efficiency(k) = T(1) / (k T(k)).
#pragma once
#include <string>
#include <vector>

#include "dist/comm.hpp"
#include "dist/comm_group.hpp"
#include "dist/grad_sync.hpp"
#include "train/trainer.hpp"

namespace convlab::train {

// The on-paper cluster of the estimate: `nodes` x `gpus_per_node` GPU ranks, one
// ring all-reduce over all of them whose slowest hop is min(intra, inter) (one
// NIC per GPU: each ring crosses the network at the inter-node bandwidth).
struct PaperCluster {
  int nodes = 2, gpus_per_node = 4;
  double inter_gbs = 25;   // GB/s per GPU between nodes (200 Gb/s InfiniBand per GPU)
  double intra_gbs = 450;  // GB/s per GPU inside a node (NVLink 4, one direction)
};

struct ScalingOptions {
  std::vector<int> ranks;  // ascending, each in [1, world size]
  GradSyncOptions sync;
  Overlap overlap = Overlap::automatic;
  size_t probe_bytes = size_t(64) << 20;
  PaperCluster paper;
};

struct ScalingReport {
  ScalingOptions options;
  std::string world;              // the world communicator's description
  std::vector<TrainReport> runs;  // one per rank count, in options.ranks order (complete on rank 0)
};

// Ring all-reduce time of `bytes` over `ranks` ranks at `bytes_per_s` per link
// and direction: 2 (ranks - 1) / ranks * bytes / bytes_per_s (bandwidth term only).
double ring_allreduce_seconds(double bytes, int ranks, double bytes_per_s);

// Every rank of `world` calls it; rank 0's report holds every run.
ScalingReport run_scaling(const TrainConfig& cfg, Comm& world, const ScalingOptions& opt,
                          const std::function<void(const std::string&)>& log = {});

// "2x4" -> nodes, GPUs per node; "25,450" -> inter, intra GB/s. Error on anything else.
void parse_paper_cluster(const std::string& shape, const std::string& gbs, PaperCluster& out);

}  // namespace convlab::train
