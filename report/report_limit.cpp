// The training report's limit sections (report/report_sections.hpp): the step's
// napkin limit on this machine (train/limit.hpp), every policy as a multiple of
// it, and every layer against its own bound.
#include "core/json.hpp"
#include "core/json_value.hpp"
#include "report/report_sections.hpp"
#include "train/trainer.hpp"

namespace convlab::train::report_detail {

double x_limit(const TrainReport& r, const PolicyResult& p) {
  return r.limit.seconds > 0 && p.ran ? p.iter_median / r.limit.seconds : 0;
}

double pct_of_bound(const LayerResult& l) {
  const double t = l.median.total();
  return l.bound_seconds > 0 && t > 0 ? 100 * l.bound_seconds / t : 0;
}

void md_limit(Out& o, const TrainReport& r, const PolicyResult& base) {
  o << "\n## The step's limit on this machine\n\n";
  if (r.limit.seconds <= 0) {
    o << "Not measured: " << (r.limit_skipped.empty() ? std::string("no measurement") : r.limit_skipped) << ".\n";
    return;
  }
  const StepLimit& l = r.limit;
  o << "Every convolution and fully connected direction at the slower of its direct FLOPs at the measured FMA peak ("
    << fmt("%.0f", l.peak_gflops) << " GFLOP/s, " << l.threads
    << " threads) and its three tensors' bytes at the measured bandwidth (" << fmt("%.1f", l.bandwidth_gbs)
    << " GB/s): " << (l.passes - l.memory_bound_passes) << " passes bound by FLOPs, " << ms(l.compute_bound_seconds)
    << " ms; " << l.memory_bound_passes << " bound by bytes, " << ms(l.memory_bound_seconds)
    << " ms (conv " << fmt("%.4g", l.conv_flops * 1e-9) << " GFLOP, fc " << fmt("%.4g", l.fc_flops * 1e-9)
    << " GFLOP in all); plus every other pass's " << fmt("%.4g", l.other_bytes * 1e-9)
    << " GB (layers, fused conv epilogues, loss, SGD update) at the bandwidth: **" << ms(l.seconds)
    << " ms** per iteration (train/limit.hpp). It counts the direct algorithms' arithmetic: Winograd and FFT do "
       "less, so a step may go below it.\n\n";
  o << "| policy | iteration ms | x limit |\n|---|---:|---:|\n";
  for (auto& p : r.policies)
    if (p.ran) o << "| " << p.policy << " | " << ms(p.iter_median) << " | " << fmt("%.2f", x_limit(r, p)) << " |\n";
  o << "\nPer layer (" << base.policy
    << "): its time against its own bound (conv and fc: per direction the slower of FLOPs at the peak and tensor bytes at "
       "the bandwidth, plus a conv's fused bias/ReLU pass at the bandwidth; the others: Layer::bytes_moved at the "
       "bandwidth); % = bound / time.\n\n"
       "| layer | kind | ms | bound ms | % of bound |\n|---|---|---:|---:|---:|\n";
  for (const LayerResult& x : base.layers)
    o << "| " << x.name << " | " << x.kind << " | " << ms(x.median.total()) << " | " << ms(x.bound_seconds) << " | "
      << fmt("%.0f", pct_of_bound(x)) << " % |\n";
}

void json_limit(Out& o, const TrainReport& r) {
  using json::number;
  const StepLimit& l = r.limit;
  o << ",\n  \"limit\": ";
  if (l.seconds <= 0) {
    o << "{\"skipped\": " << json::quote(r.limit_skipped) << "}";
    return;
  }
  o << "{\"seconds\": " << number(l.seconds) << ", \"conv_flops\": " << number(l.conv_flops)
    << ", \"fc_flops\": " << number(l.fc_flops) << ", \"other_bytes\": " << number(l.other_bytes)
    << ", \"peak_gflops\": " << number(l.peak_gflops) << ", \"bandwidth_gbs\": " << number(l.bandwidth_gbs)
    << ", \"threads\": " << l.threads << ", \"compute_bound_seconds\": " << number(l.compute_bound_seconds)
    << ", \"memory_bound_seconds\": " << number(l.memory_bound_seconds)
    << ", \"memory_bound_passes\": " << l.memory_bound_passes << ", \"passes\": " << l.passes << "}";
}

void limit_from_json(const json::Value& v, TrainReport& r) {
  const json::Value* l = v.get("limit");
  if (!l || !l->is_object()) return;
  r.limit_skipped = json::text_or(*l, "skipped");
  StepLimit& s = r.limit;
  s.seconds = json::number_or(*l, "seconds", 0);
  s.conv_flops = json::number_or(*l, "conv_flops", 0);
  s.fc_flops = json::number_or(*l, "fc_flops", 0);
  s.other_bytes = json::number_or(*l, "other_bytes", 0);
  s.peak_gflops = json::number_or(*l, "peak_gflops", 0);
  s.bandwidth_gbs = json::number_or(*l, "bandwidth_gbs", 0);
  s.threads = int(json::number_or(*l, "threads", 0));
  s.compute_bound_seconds = json::number_or(*l, "compute_bound_seconds", 0);
  s.memory_bound_seconds = json::number_or(*l, "memory_bound_seconds", 0);
  s.memory_bound_passes = int(json::number_or(*l, "memory_bound_passes", 0));
  s.passes = int(json::number_or(*l, "passes", 0));
}

}  // namespace convlab::train::report_detail
