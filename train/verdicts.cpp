// The verdicts of a training run (train/trainer.hpp): every policy's speedup over
// the baseline and the equivalence margin, the loss's expected fp32 drift and each
// policy's loss against it, the break-even of find's tuning and the stopped line.
#include "train/verdicts.hpp"

#include <algorithm>
#include <cfloat>
#include <cmath>

namespace convlab::train {

double DriftBound::at(int iteration) const { return bound0 * std::pow(growth, iteration); }

bool TrainReport::expectations_met() const {
  for (const ExpectationResult& e : expectations)
    if (e.verdict != "met") return false;
  return true;
}

int TrainReport::baseline() const {
  if (!baseline_policy.empty())
    for (size_t i = 0; i < policies.size(); ++i)
      if (policies[i].ran && policies[i].policy == baseline_policy) return int(i);
  for (size_t i = 0; i < policies.size(); ++i)
    if (policies[i].ran && policies[i].policy == "default") return int(i);
  for (size_t i = 0; i < policies.size(); ++i)
    if (policies[i].ran) return int(i);
  return -1;
}

namespace {

// The control of the drift bound: the baseline's net again from its initial weights, each moved by 2^-22
// relative (sign from a hash of its index), trained on the same batches; its relative loss difference per
// iteration against the baseline's recorded losses.
std::vector<double> drift_control(Net& net, const std::vector<Batch>& batches, const TrainConfig& cfg,
                                  const std::vector<double>& base_losses) {
  net.init(cfg.seed);
  uint64_t h = 0x9e3779b97f4a7c15ull;
  for (Param* p : net.params()) {
    float* v = p->value.data();
    for (int64_t i = 0; i < p->value.size(); ++i) {
      h ^= h >> 31, h *= 0xbf58476d1ce4e5b9ull, h ^= h >> 29;
      v[i] *= (h & 1) ? 1.0f + 0x1p-22f : 1.0f - 0x1p-22f;
    }
    p->upload();
  }
  std::vector<double> out;
  for (size_t it = 0; it < base_losses.size() && it < batches.size(); ++it) {
    const Batch& b = batches[it];
    const double loss = net.train_step(b.images.data(), b.labels.data(), cfg.sgd, int64_t(it), nullptr);
    out.push_back(std::fabs(loss - base_losses[it]) / std::max(std::fabs(base_losses[it]), 1e-30));
  }
  return out;
}

}  // namespace

void judge_losses(TrainReport& rep) {
  const int bi = rep.baseline();
  if (bi < 0) return;
  const PolicyResult& base = rep.policies[size_t(bi)];
  const DriftBound& d = rep.drift;
  for (PolicyResult& p : rep.policies) {
    if (!p.ran) continue;
    p.loss_rel_diffs.clear();
    p.loss_exceeds_at = -1;
    for (size_t t = 0; t < p.losses.size() && t < base.losses.size(); ++t) {
      const double rd = std::fabs(p.losses[t] - base.losses[t]) / std::max(std::fabs(base.losses[t]), 1e-30);
      p.loss_rel_diffs.push_back(rd);
      if (p.loss_exceeds_at < 0 && rd > d.at(int(t))) p.loss_exceeds_at = int(t);
    }
    p.loss_agrees = p.loss_exceeds_at < 0;
  }
}

// Every policy's speedup over the baseline, with its interval over paired rounds.
void add_speedups(TrainReport& rep) {
  const int bi = rep.baseline();
  if (bi < 0) return;
  const PolicyResult& base = rep.policies[size_t(bi)];
  for (size_t i = 0; i < rep.policies.size(); ++i) {
    PolicyResult& p = rep.policies[i];
    if (!p.ran || int(i) == bi) continue;
    p.speedup = base.iter_median / p.iter_median;
    p.speedup_ci = stats::median_ratio_ci(base.iter_seconds, p.iter_seconds);
  }
  // The equivalence margin, from the first policy that ran exactly the baseline's algorithms.
  auto same_code = [&](const PolicyResult& p) {
    if (p.layers.size() != base.layers.size()) return false;
    for (size_t li = 0; li < p.layers.size(); ++li)
      for (int d = 0; d < 3; ++d)
        if (p.layers[li].algo[d] != base.layers[li].algo[d]) return false;
    return true;
  };
  for (size_t i = 0; i < rep.policies.size() && rep.margin_pair.empty(); ++i) {
    const PolicyResult& p = rep.policies[i];
    if (!p.ran || int(i) == bi || !same_code(p)) continue;
    // Symmetric in the ratio: a pair 1.05x apart either way is the same margin.
    rep.margin = std::max({p.speedup - 1, 1 / p.speedup - 1, p.speedup_ci.hi - 1, 1 / p.speedup_ci.lo - 1, 0.0});
    rep.margin_pair = p.policy;
  }
  for (size_t i = 0; i < rep.policies.size(); ++i) {
    PolicyResult& p = rep.policies[i];
    if (!p.ran) continue;
    p.verdict = int(i) == bi ? "baseline" : speedup_verdict(p.speedup_ci, rep.margin);
    p.significant = p.verdict == "faster" || p.verdict == "slower";
  }
}


// The drift bound (DriftBound) and every policy's loss against it.
void add_drift(TrainReport& rep, Net* base_net, const std::vector<Batch>& batches, const TrainConfig& cfg,
               const Net& any) {
  DriftBound& d = rep.drift;
  for (const ConvLayer* c : any.conv_layers())
    d.reduction = std::max(d.reduction, int(c->problem().c_per_group() * c->problem().r * c->problem().s));
  d.bound0 = d.reduction * double(FLT_EPSILON);
  const int bi = rep.baseline();
  if (bi < 0) return;
  const PolicyResult& base = rep.policies[size_t(bi)];
  d.growth = cfg.assumed_drift_growth;
  if (base_net) {
    d.control = drift_control(*base_net, batches, cfg, base.losses);
    double g = 1;  // the fastest average growth from iteration 0
    for (size_t t = 1; t < d.control.size(); ++t)
      if (d.control[0] > 0 && d.control[t] > 0) g = std::max(g, std::pow(d.control[t] / d.control[0], 1.0 / double(t)));
    if (d.control.size() > 1 && d.control[0] > 0) {
      d.growth = g;
      d.measured = true;
    }
  }
  judge_losses(rep);
}


std::string speedup_verdict(const stats::Interval& ci, double m) {
  if (ci.lo > 1 + m) return "faster";
  if (ci.hi < 1 / (1 + m)) return "slower";
  if (m > 0 && ci.lo >= 1 / (1 + m) && ci.hi <= 1 + m) return "same";
  return "not significant";
}

std::string stopped_line(const TrainReport& rep) {
  int n = 0;
  const PolicyResult* first = nullptr;
  for (const PolicyResult& p : rep.policies)
    if (p.stopped && !n++) first = &p;
  if (!first) return {};
  return "policy " + first->policy + " stopped: " + first->skipped +
         (n > 1 ? " (" + std::to_string(n) + " policies stopped; see the report)" : "");
}

double break_even_iterations(const PolicyResult& find, const PolicyResult& other) {
  const double saved = other.iter_median - find.iter_median;
  if (saved <= 0) return -1;
  return std::max(0.0, find.choose_seconds - other.choose_seconds) / saved;
}

}  // namespace convlab::train
