#include "dist/scaling.hpp"

#include <cstdio>

#include "core/error.hpp"

namespace convlab::train {

double ring_allreduce_seconds(double bytes, int ranks, double bytes_per_s) {
  if (ranks < 2) return 0;
  if (!(bytes_per_s > 0)) fail("ring_allreduce_seconds: the bandwidth must be positive");
  return 2.0 * (ranks - 1) / ranks * bytes / bytes_per_s;
}

void parse_paper_cluster(const std::string& shape, const std::string& gbs, PaperCluster& out) {
  int n = 0, g = 0;
  char tail = 0;
  if (std::sscanf(shape.c_str(), "%dx%d%c", &n, &g, &tail) != 2 || n < 1 || g < 1 || n * g < 2 || n > 4096 || g > 64)
    fail("--estimate expects NODESxGPUS with at least 2 GPUs in all (e.g. 2x4), got '" + printable(shape) + "'");
  double inter = 0, intra = 0;
  if (std::sscanf(gbs.c_str(), "%lf,%lf%c", &inter, &intra, &tail) != 2 || !(inter > 0) || !(intra > 0) ||
      inter > 1e5 || intra > 1e5)
    fail("--estimate-gbs expects INTER,INTRA in GB/s per GPU (e.g. 25,450), got '" + printable(gbs) + "'");
  out = {n, g, inter, intra};
}

ScalingReport run_scaling(const TrainConfig& cfg, Comm& world, const ScalingOptions& opt,
                          const std::function<void(const std::string&)>& log) {
  ScalingReport s;
  s.options = opt;
  s.world = world.describe();
  for (int k : opt.ranks) {
    if (k < 1 || k > world.size())
      fail("--ranks " + std::to_string(k) + " is outside [1, " + std::to_string(world.size()) + "] (the MPI world)");
    if (cfg.batch % k)
      fail("--batch " + std::to_string(cfg.batch) + " does not split evenly over " + std::to_string(k) + " ranks");
  }
  for (int k : opt.ranks) {
    std::unique_ptr<Comm> sub = world.first(k);  // collective
    if (sub) {
      if (log && world.rank() == 0) log("--- " + std::to_string(k) + " rank" + (k == 1 ? "" : "s") + " ---");
      DistOptions d;
      d.comm = sub.get();
      d.sync = opt.sync;
      d.overlap = opt.overlap;
      d.probe_bytes = opt.probe_bytes;
      TrainReport r = run_training(cfg, log, &d);
      if (world.rank() == 0) s.runs.push_back(std::move(r));
    }
    world.barrier();  // ranks outside this count sleep here
  }
  return s;
}

}  // namespace convlab::train
