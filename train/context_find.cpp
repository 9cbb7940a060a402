#include "train/context_find.hpp"

#include <algorithm>
#include <cstdio>

#include "algorithms/registry.hpp"
#include "core/error.hpp"
#include "core/timing.hpp"

namespace convlab::train {

namespace {

double component(const LayerTime& t, Direction d) {
  return d == Direction::fwd ? t.fwd : d == Direction::bwd_data ? t.bwd_data : t.bwd_filter;
}

struct Pending {
  size_t layer = 0;  // index into net.layers()
  ConvLayer* conv = nullptr;
  ContextPair pair;
};

void summarise(ContextCandidate& c) {
  c.context_s = stats::median(c.samples);
  c.context_ci = stats::median_ci(c.samples);
}

// Training steps on the run's batches, in turn; st holds the last step's times.
struct Stepper {
  Net& net;
  const std::vector<Batch>& batches;
  const SgdOptions& sgd;
  int64_t iteration = 0;
  StepTimes st{};
  void operator()() {
    const Batch& b = batches[size_t(iteration) % batches.size()];
    net.train_step(b.images.data(), b.labels.data(), sgd, iteration, &st);
    ++iteration;
  }
};

// Every pair, its candidates within the factor (the isolated winner first).
std::vector<Pending> pending_pairs(Net& net, const Policy& policy, const ContextFindOptions& opt) {
  std::vector<Pending> pending;
  const auto& layers = net.layers();
  for (size_t li = 0; li < layers.size(); ++li) {
    auto* conv = dynamic_cast<ConvLayer*>(layers[li].get());
    if (!conv) continue;
    for (Direction d : kAllDirections) {
      if (d == Direction::bwd_data && li == 0 && !net.options().first_layer_grad) continue;
      const std::string winner(conv->choice(d).algo->name());
      const std::vector<AlgoPerf> ranked = find_ranking(policy, conv->problem(), d, net.options().ctx);
      double best = ranked.front().time;
      for (const AlgoPerf& r : ranked) best = std::min(best, r.time);
      Pending p{li, conv, {}};
      p.pair.layer = conv->name();
      p.pair.dir = d;
      p.pair.isolated.push_back({winner, 0, 0, {0, 0}, {}});
      for (const AlgoPerf& r : ranked) {
        if (r.algo == winner) p.pair.isolated.front().isolated_s = r.time;
        else if (r.time <= opt.factor * best) p.pair.isolated.push_back({r.algo, r.time, 0, {0, 0}, {}});
      }
      pending.push_back(std::move(p));
    }
  }
  return pending;
}

// A pair of several candidates: each timed in rotation inside training steps, then the
// isolated winner put back.
void time_candidates(Pending& p, Stepper& step, const ContextFindOptions& opt,
                     const std::function<void(const std::string&)>& say) {
  std::vector<ContextCandidate>& cands = p.pair.isolated;
  const size_t n = cands.size();
  const Direction d = p.pair.dir;
  char line[200];
  std::snprintf(line, sizeof line, "find-context: %s %s: %zu candidates within %.2fx of the isolated best, %d x %zu steps",
                p.pair.layer.c_str(), std::string(to_string(d)).c_str(), n, opt.factor, 2 * opt.steps + 1, n);
  say(line);
  for (int q = 0; q <= opt.steps; ++q)
    for (size_t k = 0; k < n; ++k) {
      ContextCandidate& c = cands[(k + size_t(q)) % n];
      p.conv->inject(d, get_algorithm(c.algo), "find-context candidate");
      step.net.allocate_workspace();
      // A timed step is the candidate's second in a row: the first run after another algorithm ran in its
      // place is slower (measured: +15 % median on AlexNet's layers), and training never swaps.
      if (q > 0) step();
      step();
      if (q > 0) c.samples.push_back(component(step.st.layers[p.layer], d));
    }
  p.conv->inject(d, get_algorithm(cands.front().algo), "find-context: isolated winner restored");
  step.net.allocate_workspace();
}

}  // namespace

void settle_pair(ContextPair& pair) {
  for (ContextCandidate& c : pair.isolated) summarise(c);
  pair.in_context = pair.isolated;
  std::stable_sort(pair.in_context.begin(), pair.in_context.end(),
                   [](const ContextCandidate& a, const ContextCandidate& b) { return a.context_s < b.context_s; });
  const ContextCandidate &iso = pair.isolated.front(), &ctx = pair.in_context.front();
  const bool same = iso.algo == ctx.algo;
  pair.cost_ratio = iso.context_s / ctx.context_s;
  pair.cost_ratio_ci = same ? stats::Interval{1, 1} : stats::median_ratio_ci(iso.samples, ctx.samples);
  pair.agree = same || !(pair.cost_ratio_ci.lo > 1);  // different only when the interval separates from 1
  pair.tie = !same && pair.agree;
}

ContextFindResult find_in_context(Net& net, const Policy& policy, const std::vector<Batch>& batches,
                                  const SgdOptions& sgd, const ContextFindOptions& opt,
                                  const std::function<void(const std::string&)>& log) {
  if (batches.empty()) fail("find-context: no batches to train on");
  if (opt.steps < 1 || !(opt.factor >= 1)) fail("find-context: needs at least one step and a factor >= 1");
  auto say = [&](const std::string& s) {
    if (log) log(s);
  };
  ContextFindResult res;
  res.options = opt;
  const double t0 = now_seconds();
  Stepper step{net, batches, sgd};
  std::vector<Pending> pending = pending_pairs(net, policy, opt);

  // One workspace for every candidate: no swap reallocates it.
  size_t reserve = net.workspace_bytes();
  for (const Pending& p : pending)
    for (const ContextCandidate& c : p.pair.isolated)
      reserve = std::max(reserve, get_algorithm(c.algo).workspace_bytes(p.conv->problem(), p.pair.dir));
  net.reserve_workspace(reserve);

  // The isolated winners of single-candidate pairs: timed in common steps, every isolated choice in place.
  if (std::any_of(pending.begin(), pending.end(), [](const Pending& p) { return p.pair.isolated.size() == 1; })) {
    say("find-context: " + std::to_string(opt.steps) + " steps with every isolated choice");
    for (int q = 0; q <= opt.steps; ++q) {
      step();
      if (q == 0) continue;
      for (Pending& p : pending)
        if (p.pair.isolated.size() == 1)
          p.pair.isolated.front().samples.push_back(component(step.st.layers[p.layer], p.pair.dir));
    }
  }

  for (Pending& p : pending) {
    const size_t n = p.pair.isolated.size();
    const Direction d = p.pair.dir;
    if (n > 1) time_candidates(p, step, opt, say);
    settle_pair(p.pair);
    const ContextCandidate &iso = p.pair.isolated.front(), &ctx = p.pair.in_context.front();
    if (n > 1) {
      char line[300];
      std::snprintf(line, sizeof line, "find-context: %s %s: alone %s, in context %s (%.2fx [%.2f, %.2f]%s)",
                    p.pair.layer.c_str(), std::string(to_string(d)).c_str(), iso.algo.c_str(), ctx.algo.c_str(),
                    p.pair.cost_ratio, p.pair.cost_ratio_ci.lo, p.pair.cost_ratio_ci.hi,
                    p.pair.tie ? ": a tie, the isolated winner stays" : "");
      say(line);
    }
  }

  // Every pair runs its in-context winner (agreeing pairs keep the isolated choice and its record).
  for (Pending& p : pending) {
    if (p.pair.agree) continue;
    p.conv->inject(p.pair.dir, get_algorithm(p.pair.in_context.front().algo),
                   "in context: fastest of " + std::to_string(p.pair.isolated.size()) + " inside training steps (alone: " +
                       p.pair.isolated.front().algo + ")");
  }
  net.reserve_workspace(0);
  for (Pending& p : pending) res.pairs.push_back(std::move(p.pair));
  res.steps = int(step.iteration);
  res.seconds = now_seconds() - t0;
  return res;
}

}  // namespace convlab::train
