// The ranks of a data-parallel run as the experiment sees them (train/trainer.hpp):
// the points where ranks must agree (the algorithms rank 0 chose, the initial
// weights, each step's loss and time) and each net's gradient exchange. The
// experiment knows no transport: dist/comm_group.hpp implements the group over a
// communicator (MPI between processes, NCCL between GPUs); a single process runs
// without one.
#pragma once
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "core/device.hpp"
#include "net/net.hpp"

namespace convlab::train {

// One step's gradient exchange, in seconds.
struct ExchangeStep {
  double comm = 0;            // every bucket's all-reduce
  double skew = 0;            // the wait for the slowest rank before the first bucket (load imbalance)
  double after_backward = 0;  // the part of the all-reduces after the backward ended (not hidden)
  // Per layer of the net (net order): its share, by bytes, of the all-reduces of the
  // buckets holding its gradients, and of their part after the backward ended.
  std::vector<double> layer_comm, layer_exposed;
};

// One net's gradient exchange, installed as the net's gradient hook: after each
// step every gradient is the mean over all ranks' samples.
class NetExchange : public GradientHook {
 public:
  virtual ExchangeStep last_step() const = 0;
  virtual std::string describe() const = 0;  // the buckets
  virtual size_t bytes() const = 0;          // all gradients, once
};

// What the group's transport is and how fast it exchanges (RankGroup::connect).
struct GroupTransport {
  std::string describe;     // "MPI (Open MPI ...), 2 ranks on 1 node, ..."
  std::string overlap_why;  // whether the exchange overlaps the backward, and why
  double exchange_bytes_per_s = 0;  // one direction between ranks 0 and 1
};

class RankGroup {
 public:
  virtual ~RankGroup() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  virtual int local_size() const = 0;  // ranks on this rank's node
  // The threads a rank uses when the user gave none.
  virtual int default_threads() const = 0;
  // Before any device memory: the device this rank trains on.
  virtual void select_device(DeviceKind device) = 0;
  // Sets the transport up for nets on `device` whose ranks use `threads` threads each
  // and measures the exchange bandwidth. Collective.
  virtual GroupTransport connect(DeviceKind device, int threads) = 0;

  // Collectives: every rank calls them in the same order.
  virtual void barrier() = 0;
  virtual void broadcast(std::string& text) = 0;  // rank 0's, to every rank
  virtual void broadcast(double& value) = 0;      // rank 0's, to every rank
  virtual std::vector<double> allgather(double value) = 0;  // every rank's, rank-major
  virtual double sum(double value) = 0;
  virtual double max(double value) = 0;
  // The gradient exchange of `net` (which must outlive it).
  virtual std::unique_ptr<NetExchange> exchange(Net& net) = 0;
};

}  // namespace convlab::train
