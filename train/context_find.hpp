// find in context (the policy `find-context`): each candidate of a (layer,
// direction) timed inside real training steps instead of alone.
//
// The isolated find (autotune/find.hpp) times every candidate on its own, with
// warm caches and nothing else running. Inside a training step a convolution
// runs after other layers evicted its data, and an algorithm that keeps its own
// layout pays reorders the isolated timing never saw. So, on a net whose every
// choice is the isolated find's:
//
//   the shared workspace is reserved once at the largest any candidate needs,
//   its pages touched, so that no swap reallocates it (a fresh buffer's
//   first-touch page faults would land in the timed layer of the next step);
//
//   for every conv layer and direction (in net order; conv1's skipped input
//   gradient excluded):
//     candidates = find's admitted ranking (autotune find_ranking) within
//                  `factor` x the isolated best -- the budget: the rest would
//                  have to be > factor x faster in context than alone to win
//     when there are two or more:
//       one round untimed (each candidate's first step pays its one-time set-up),
//       then `steps` rounds; a round runs two training steps per candidate, the
//       candidates rotated by one position every round; only this pair's choice
//       is swapped, every other layer and direction keeps the isolated choice;
//       the time recorded is this layer-direction's own time inside the second
//       step: an algorithm's first run after another ran in its place is slower
//       (its own data cold; +15 % median over AlexNet's pairs at batch 8 on a
//       2-core Zen 3), and training runs the same algorithm step after step
//     the in-context winner is the candidate with the smallest median; it
//     differs from the isolated winner only when the paired interval of their
//     ratio (resampled over the rounds) lies above 1 -- an order swapped
//     inside the noise is a tie and keeps the isolated winner
//   the isolated winners' in-context times of every pair, single-candidate
//   pairs included, also come from `steps` common steps with every isolated
//   choice in place (one untimed step first).
//
// At the end every pair whose rankings differ runs its in-context winner and the
// workspace reserve is given up. The steps train the net
// (SGD updates), so the caller re-initialises its weights before the timed
// rounds. The cost (steps, seconds) is reported.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "core/stats.hpp"
#include "net/data.hpp"
#include "net/net.hpp"

namespace convlab::train {

struct ContextFindOptions {
  double factor = 1.5;  // candidates within this factor of the isolated best
  int steps = 3;        // timed steps per candidate (each after an untimed one; one more untimed first)
};

struct ContextCandidate {
  std::string algo;
  double isolated_s = 0;                  // find's median, alone
  double context_s = 0;                   // median of this layer-direction's time inside the steps (0: not timed)
  stats::Interval context_ci{0, 0};       // bootstrap 95 % of that median
  std::vector<double> samples;            // seconds, per timed step
};

struct ContextPair {
  std::string layer;
  Direction dir = Direction::fwd;
  std::vector<ContextCandidate> isolated;    // find's order (fastest alone first)
  std::vector<ContextCandidate> in_context;  // the same, fastest in context first (the isolated winner only,
                                             // when it was the one candidate within the factor)
  bool agree = true;        // no candidate is faster in context than the isolated winner beyond the noise
  bool tie = false;         // agree, although another candidate's in-context median is the smallest
  double cost_ratio = 1;    // isolated winner's in-context median / the fastest in-context median
  stats::Interval cost_ratio_ci{1, 1};  // paired over the interleaved rounds ({1, 1}: the same candidate)
};

struct ContextFindResult {
  ContextFindOptions options;
  std::vector<ContextPair> pairs;
  int steps = 0;          // training steps run, untimed ones included
  double seconds = 0;     // wall time of those steps and the swaps
};

// Ranks one pair from its candidates' samples (pair.isolated, the isolated winner
// first, samples paired by round): medians and intervals, the in-context order,
// and whether the rankings differ beyond the noise (see above).
void settle_pair(ContextPair& pair);

// `net` has chosen with `policy` (find-context: find's choices); `batches` are
// cycled through. Swaps in each pair's in-context winner and returns what was
// measured. Progress lines go to `log`.
ContextFindResult find_in_context(Net& net, const Policy& policy, const std::vector<Batch>& batches,
                                  const SgdOptions& sgd, const ContextFindOptions& opt,
                                  const std::function<void(const std::string&)>& log = {});

}  // namespace convlab::train
