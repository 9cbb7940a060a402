#include "dist/comm_group.hpp"

#include <unistd.h>

#include <algorithm>

#include "core/error.hpp"

namespace convlab::train {

CommGroup::CommGroup(const DistOptions& opt) : comm_(*opt.comm), opt_(opt), sync_(opt.sync) {}

int CommGroup::rank() const { return comm_.rank(); }
int CommGroup::size() const { return comm_.size(); }
int CommGroup::local_size() const { return comm_.local_size(); }

// A rank bound to its own cores (its affinity mask smaller than the node) uses
// them; unbound ranks share the node's cores evenly.
int CommGroup::default_threads() const {
  const int mine = cpu_info().hardware_threads;  // the affinity mask
  const long online = sysconf(_SC_NPROCESSORS_ONLN);
  if (online > 0 && mine < online) return mine;
  return std::max(1, mine / std::max(1, comm_.local_size()));
}

void CommGroup::select_device(DeviceKind device) {
  if (device == DeviceKind::cuda) select_rank_gpu(comm_);
}

GroupTransport CommGroup::connect(DeviceKind device, int threads) {
  GroupTransport t;
  const long cores = sysconf(_SC_NPROCESSORS_ONLN);
  const int busy = comm_.local_size() * threads;
  if (opt_.overlap != Overlap::automatic) {
    sync_.overlap = opt_.overlap == Overlap::on;
    t.overlap_why = std::string("overlap ") + (sync_.overlap ? "on" : "off") + " (asked)";
  } else if (device != DeviceKind::cpu) {
    sync_.overlap = true;
    t.overlap_why = "overlap on (auto: NCCL runs on its own stream)";
  } else {
    sync_.overlap = busy < cores;
    t.overlap_why = "overlap " + std::string(sync_.overlap ? "on" : "off") + " (auto: " +
                    std::to_string(comm_.local_size()) + " ranks x " + std::to_string(threads) + " threads on " +
                    std::to_string(cores) + " cores: " +
                    (sync_.overlap ? "a core is left for the communication thread"
                                   : "no core is left for a communication thread") + ")";
  }
  t.describe = device == DeviceKind::cpu ? comm_.describe() : "NCCL over " + comm_.describe();
  t.exchange_bytes_per_s = comm_.exchange_bandwidth(opt_.probe_bytes, 5);
  return t;
}

void CommGroup::barrier() { comm_.barrier(); }

void CommGroup::broadcast(std::string& text) {
  uint64_t n = text.size();
  comm_.broadcast(&n, sizeof n, 0);
  text.resize(size_t(n));
  if (n) comm_.broadcast(text.data(), size_t(n), 0);
}

void CommGroup::broadcast(double& value) { comm_.broadcast(&value, sizeof value, 0); }

std::vector<double> CommGroup::allgather(double value) {
  std::vector<double> all(static_cast<size_t>(comm_.size()), 0.0);
  comm_.allgather(&value, 1, all.data());
  return all;
}

double CommGroup::sum(double value) {
  comm_.allreduce_sum(&value, 1);
  return value;
}

double CommGroup::max(double value) {
  comm_.allreduce_max(&value, 1);
  return value;
}

std::unique_ptr<NetExchange> CommGroup::exchange(Net& net) { return std::make_unique<GradSync>(comm_, net, sync_); }

TrainReport run_training(const TrainConfig& cfg, const std::function<void(const std::string&)>& log,
                         const DistOptions* dist) {
  if (!dist || !dist->comm) return run_training(cfg, log, static_cast<RankGroup*>(nullptr));
  CommGroup group(*dist);
  return run_training(cfg, log, &group);
}

}  // namespace convlab::train
