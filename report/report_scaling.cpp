// The data-parallel scaling report (dist/scaling.hpp's ScalingReport): Markdown and JSON.
#include "report/report_scaling.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "core/error.hpp"
#include "core/json.hpp"
#include "report/report.hpp"

namespace convlab::train {

namespace {

std::string fmt(const char* f, double v) {
  char b[64];
  std::snprintf(b, sizeof b, f, v);
  return b;
}

const PolicyResult* policy_in(const TrainReport& r, const std::string& name) {
  for (const PolicyResult& p : r.policies)
    if (p.ran && p.policy == name) return &p;
  return nullptr;
}

// The one-rank run (efficiency's reference), or null when 1 was not measured.
const TrainReport* one_rank(const ScalingReport& s) {
  for (const TrainReport& r : s.runs)
    if (r.ranks == 1) return &r;
  return nullptr;
}

double efficiency(const ScalingReport& s, const TrainReport& r, const PolicyResult& p) {
  const TrainReport* one = one_rank(s);
  const PolicyResult* q = one ? policy_in(*one, p.policy) : nullptr;
  if (!q || p.iter_median <= 0) return NAN;
  return q->iter_median / (r.ranks * p.iter_median);
}

// The largest relative difference of p's loss per iteration (warm-up included) from the
// same policy's on one rank: the same batches and weights, so it must stay within 1e-4.
double loss_diff_vs_one(const ScalingReport& s, const PolicyResult& p) {
  const TrainReport* one = one_rank(s);
  const PolicyResult* q = one ? policy_in(*one, p.policy) : nullptr;
  if (!q || q->losses.size() != p.losses.size()) return NAN;
  double worst = 0;
  for (size_t i = 0; i < p.losses.size(); ++i)
    worst = std::max(worst, std::fabs(p.losses[i] - q->losses[i]) / std::fabs(q->losses[i]));
  return worst;
}

double speedup(const TrainReport& r, const PolicyResult& p) {
  const int bi = r.baseline();
  return bi < 0 || p.iter_median <= 0 ? NAN : r.policies[size_t(bi)].iter_median / p.iter_median;
}

// The model's all-reduce for run r's gradients at its measured exchange bandwidth.
double model_seconds(const TrainReport& r) {
  return r.exchange_bytes_per_s > 0 ? ring_allreduce_seconds(r.grad_bytes, r.ranks, r.exchange_bytes_per_s) : 0;
}

// The measured all-reduce per step: the median over every policy's timed rounds
// (the gradients are the same bytes whichever algorithms computed them).
double measured_comm(const TrainReport& r) {
  std::vector<double> v;
  for (const PolicyResult& p : r.policies)
    if (p.ran) v.insert(v.end(), p.comm_seconds.begin(), p.comm_seconds.end());
  return v.empty() ? 0 : stats::median(v);
}

double paper_seconds(const PaperCluster& c, double bytes) {
  return ring_allreduce_seconds(bytes, c.nodes * c.gpus_per_node, std::min(c.inter_gbs, c.intra_gbs) * 1e9);
}

// The run: the global batch, the world, the gradients and the exchange bandwidth.
void md_setup(std::ostringstream& o, const ScalingReport& s) {
  const TrainReport& last = s.runs.back();
  const TrainConfig& c = s.runs.back().config;
  o << "# convlab train " << c.net << ": data-parallel scaling\n\n";
  o << "- global batch " << c.batch << " split evenly over the ranks (strong scaling: efficiency = T(1) / (ranks x "
       "T(ranks))); every rank count trains the same batches from the same weights; rank 0 chooses the algorithms\n";
  o << "- world: " << s.world << "\n";
  if (last.ranks > 1)
    o << "- gradients: " << fmt("%.1f", last.grad_bytes / 1e6) << " MB per step, " << last.buckets << "; "
      << last.overlap_why
      << "; exchange bandwidth ranks 0-1: " << fmt("%.2f", last.exchange_bytes_per_s / 1e9) << " GB/s (one direction, "
      << s.options.probe_bytes / (1 << 20) << " MiB both ways at once: the best of 5 in each of 3 buffer pairs, their median)\n";
}

// Iteration time per policy and rank count.
void md_iterations(std::ostringstream& o, const ScalingReport& s) {
  const TrainConfig& c = s.runs.back().config;
  o << "\n## Iteration time per policy and rank count\n\n";
  o << "iteration = the slowest rank's step, median [95 % interval]; all-reduce = every bucket's all-reduce per step; "
       "skew = the wait for the slowest rank before the first bucket (imbalance, not transfer); exposed = the step's "
       "wait after its own backward (all-reduce not hidden + skew); hidden = the share of the all-reduce that ran "
       "beside the backward; compute = iteration - exposed; loss diff = the largest relative difference of the loss, "
       "iteration by iteration, from the same policy on 1 rank (target <= 1e-4)\n\n";
  o << "| policy | ranks | batch/rank | threads/rank | iteration ms | efficiency | speedup vs baseline | all-reduce ms | "
       "skew ms | exposed ms | hidden | compute ms | loss diff |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
  for (const PolicyResult& p0 : s.runs.front().policies) {
    for (const TrainReport& r : s.runs) {
      const PolicyResult* p = policy_in(r, p0.policy);
      if (!p) {
        o << "| " << p0.policy << " | " << r.ranks << " | skipped | | | | | | | | | | |\n";
        continue;
      }
      const bool d = r.ranks > 1;
      o << "| " << p->policy << " | " << r.ranks << " | " << c.batch / r.ranks << " | " << r.rank_threads << " | "
        << fmt("%.1f", p->iter_median * 1e3) << " [" << fmt("%.1f", p->iter_ci.lo * 1e3) << ", "
        << fmt("%.1f", p->iter_ci.hi * 1e3) << "] | " << (r.ranks == 1 ? "1" : fmt("%.2f", efficiency(s, r, *p)))
        << " | " << fmt("%.2f", speedup(r, *p)) << " | " << (d ? fmt("%.1f", p->comm_median * 1e3) : "-") << " | "
        << (d ? fmt("%.1f", p->skew_median * 1e3) : "-") << " | "
        << (d ? fmt("%.1f", p->comm_exposed_median * 1e3) : "-") << " | "
        << (d && p->comm_median > 0
                ? fmt("%.0f %%", 100 * std::max(0.0, 1 - p->comm_after_backward_median / p->comm_median))
                : std::string("-"))
        << " | " << fmt("%.1f", (p->iter_median - (d ? p->comm_exposed_median : 0)) * 1e3) << " | "
        << (r.ranks == 1 ? std::string("-") : fmt("%.1e", loss_diff_vs_one(s, *p))) << " |\n";
    }
  }
}

// How each policy's speedup changes with the rank count (more than one rank count).
void md_speedup_change(std::ostringstream& o, const ScalingReport& s) {
  if (s.runs.size() > 1) {
    o << "\n## How each policy's speedup changes with the rank count\n\n";
    o << "speedup over the baseline policy of the same rank count (the baseline's communication is the same "
         "bytes: a faster convolution leaves communication a larger share of the step)\n\n| policy |";
    for (const TrainReport& r : s.runs) o << " " << r.ranks << " rank" << (r.ranks == 1 ? "" : "s") << " |";
    o << " change |\n|---|";
    for (size_t i = 0; i <= s.runs.size(); ++i) o << "---:|";
    o << "\n";
    for (const PolicyResult& p0 : s.runs.front().policies) {
      o << "| " << p0.policy << " |";
      double first = NAN, lastv = NAN;
      for (const TrainReport& r : s.runs) {
        const PolicyResult* p = policy_in(r, p0.policy);
        const double v = p ? speedup(r, *p) : NAN;
        if (std::isnan(first)) first = v;
        lastv = v;
        o << " " << (p ? fmt("%.2f", v) : std::string("-")) << " |";
      }
      o << " " << (std::isfinite(first) && std::isfinite(lastv) ? fmt("%+.2f", lastv - first) : std::string("-"))
        << " |\n";
    }
  }
}

// The measured all-reduce against the bandwidth model.
void md_comm_model(std::ostringstream& o, const ScalingReport& s) {
  o << "\n## Communication against the bandwidth model\n\n";
  o << "model = ring all-reduce, 2 (ranks - 1) / ranks x gradient bytes / the measured exchange bandwidth (the "
       "bandwidth term only); measured = the median all-reduce per step over every policy's timed rounds\n\n";
  o << "| ranks | gradient MB | exchange GB/s | model ms | measured ms | measured / model |\n|---:|---:|---:|---:|---:|---:|\n";
  for (const TrainReport& r : s.runs) {
    if (r.ranks < 2) continue;
    const double m = model_seconds(r), x = measured_comm(r);
    o << "| " << r.ranks << " | " << fmt("%.1f", r.grad_bytes / 1e6) << " | " << fmt("%.2f", r.exchange_bytes_per_s / 1e9)
      << " | " << fmt("%.1f", m * 1e3) << " | " << fmt("%.1f", x * 1e3) << " | "
      << (m > 0 ? fmt("%.2f", x / m) : std::string("-")) << " |\n";
  }
}

// Per layer at the largest rank count (the baseline policy).
void md_per_layer(std::ostringstream& o, const ScalingReport& s) {
  const TrainReport& last = s.runs.back();
  if (last.ranks > 1) {
    const int bi = last.baseline();
    if (bi >= 0) {
      const PolicyResult& p = last.policies[size_t(bi)];
      o << "\n## Per layer at " << last.ranks << " ranks (" << p.policy << ")\n\n";
      o << "compute = the layer's forward + backward on rank 0; all-reduce = its bucket's time shared by bytes; exposed "
           "= the part after the backward ended\n\n| layer | compute ms | all-reduce ms | exposed ms | hidden |\n"
           "|---|---:|---:|---:|---:|\n";
      for (const LayerResult& l : p.layers) {
        if (l.comm_seconds <= 0 && l.kind != "conv" && l.kind != "fc") continue;
        o << "| " << l.name << " | " << fmt("%.2f", l.median.total() * 1e3) << " | " << fmt("%.2f", l.comm_seconds * 1e3)
          << " | " << fmt("%.2f", l.comm_exposed_seconds * 1e3) << " | "
          << (l.comm_seconds > 0 ? fmt("%.0f %%", 100 * std::max(0.0, 1 - l.comm_exposed_seconds / l.comm_seconds))
                                 : std::string("-"))
          << " |\n";
      }
    }
  }
}

// The same model on paper for a cluster (an estimate).
void md_paper(std::ostringstream& o, const ScalingReport& s) {
  const TrainReport& last = s.runs.back();
  const TrainConfig& c = s.runs.back().config;
  const PaperCluster& pc = s.options.paper;
  const double bytes = last.grad_bytes > 0 ? last.grad_bytes : double(last.params) * 4;
  const int k = pc.nodes * pc.gpus_per_node;
  o << "\n## On paper: " << pc.nodes << " nodes x " << pc.gpus_per_node << " GPUs (an estimate, not a measurement)\n\n";
  o << "The same model for " << k << " GPU ranks in one NCCL ring whose slowest hop is min(inter-node "
    << fmt("%.0f", pc.inter_gbs) << ", intra-node " << fmt("%.0f", pc.intra_gbs)
    << ") GB/s per GPU (assumed, `--estimate-gbs`; one NIC per GPU): all-reduce of " << fmt("%.1f", bytes / 1e6)
    << " MB = 2 x " << k - 1 << "/" << k << " x " << fmt("%.1f", bytes / 1e6) << " MB / "
    << fmt("%.0f", std::min(pc.inter_gbs, pc.intra_gbs)) << " GB/s = **" << fmt("%.1f", paper_seconds(pc, bytes) * 1e3)
    << " ms per step** (latency terms left out). It hides behind the backward only where one GPU's backward after "
       "the fc layers lasts longer than that; at batch "
    << c.batch << " over " << k << " GPUs (" << fmt("%.0f", double(c.batch) / k)
    << " per GPU) a fast convolution policy makes the step communication-bound, the effect this report measures at "
       "small scale.\n\n";
}

}  // namespace

std::string scaling_markdown(const ScalingReport& s) {
  if (s.runs.empty()) return {};
  std::ostringstream o;
  md_setup(o, s);
  md_iterations(o, s);
  md_speedup_change(o, s);
  md_comm_model(o, s);
  md_per_layer(o, s);
  md_paper(o, s);
  o << "---\n\n" << report_markdown(s.runs.back());
  return o.str();
}

std::string scaling_json(const ScalingReport& s) {
  if (s.runs.empty()) return {};
  using json::number;
  using json::quote;
  std::string base = report_json(s.runs.back());
  const size_t end = base.rfind('}');
  std::ostringstream o;
  o << ",\n  \"scaling\": {\"world\": " << quote(s.world) << ", \"ranks\": [";
  for (size_t i = 0; i < s.runs.size(); ++i) o << (i ? ", " : "") << s.runs[i].ranks;
  o << "],\n    \"model\": [";
  bool first = true;
  for (const TrainReport& r : s.runs) {
    if (r.ranks < 2) continue;
    o << (first ? "" : ", ") << "{\"ranks\": " << r.ranks << ", \"grad_bytes\": " << number(r.grad_bytes)
      << ", \"exchange_bytes_per_s\": " << number(r.exchange_bytes_per_s) << ", \"model_ms\": "
      << number(model_seconds(r) * 1e3) << ", \"measured_ms\": " << number(measured_comm(r) * 1e3) << "}";
    first = false;
  }
  o << "],\n    \"policies\": [";
  first = true;
  for (const PolicyResult& p0 : s.runs.front().policies) {
    o << (first ? "" : ",") << "\n      {\"policy\": " << quote(p0.policy) << ", \"runs\": [";
    first = false;
    bool f2 = true;
    for (const TrainReport& r : s.runs) {
      const PolicyResult* p = policy_in(r, p0.policy);
      if (!p) continue;
      o << (f2 ? "" : ", ") << "{\"ranks\": " << r.ranks << ", \"rank_threads\": " << r.rank_threads
        << ", \"iter_ms\": " << number(p->iter_median * 1e3) << ", \"iter_ms_ci\": [" << number(p->iter_ci.lo * 1e3)
        << ", " << number(p->iter_ci.hi * 1e3) << "], \"efficiency\": " << number(efficiency(s, r, *p))
        << ", \"speedup\": " << number(speedup(r, *p)) << ", \"comm_ms\": " << number(p->comm_median * 1e3)
        << ", \"comm_exposed_ms\": " << number(p->comm_exposed_median * 1e3)
        << ", \"skew_ms\": " << number(p->skew_median * 1e3)
        << ", \"loss_rel_diff_vs_1_rank\": " << number(r.ranks == 1 ? 0.0 : loss_diff_vs_one(s, *p)) << ", \"final_loss\": "
        << number(p->losses.empty() ? NAN : p->losses.back()) << "}";
      f2 = false;
    }
    o << "]}";
  }
  const PaperCluster& pc = s.options.paper;
  const TrainReport& last = s.runs.back();
  const double bytes = last.grad_bytes > 0 ? last.grad_bytes : double(last.params) * 4;
  o << "],\n    \"paper_estimate\": {\"nodes\": " << pc.nodes << ", \"gpus_per_node\": " << pc.gpus_per_node
    << ", \"inter_gbs\": " << number(pc.inter_gbs) << ", \"intra_gbs\": " << number(pc.intra_gbs)
    << ", \"allreduce_ms\": " << number(paper_seconds(pc, bytes) * 1e3) << ", \"estimate\": true}}\n";
  return base.substr(0, end) + o.str().substr(0, o.str().size() - 1) + "\n}\n";
}

}  // namespace convlab::train
