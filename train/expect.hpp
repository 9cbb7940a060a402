// A user's own expectations of a comparison (`--expect`), checked against the
// run's data: the ratio of two policies' median iteration times against a bound,
//
//   default/find>=1.5    find's iteration at least 1.5x faster than default's
//   get/find<=1.10       get's within 10 % of find's
//
// with the paired 95 % interval of that ratio (resampled over the rounds). An
// expectation is met when the whole interval satisfies the bound, missed when
// none of it does, and unresolved when the interval holds the bound: the run
// cannot tell.
#pragma once
#include <string>
#include <vector>

#include "core/stats.hpp"

namespace convlab::train {

struct Expectation {
  std::string text;       // as given
  std::string num, den;   // policy names: the ratio is num's median time / den's
  bool at_least = true;   // >= bound (else <=)
  double bound = 1;
};

// "A/B>=X" or "A/B<=X" (policy names may hold ',' ':' and '='; the last '/' outside
// them splits). Bad text throws Error naming it.
Expectation parse_expectation(const std::string& text);

struct ExpectationResult {
  Expectation expect;
  bool ran = false;            // both policies ran
  double ratio = 0;
  stats::Interval ci{0, 0};
  std::string verdict;         // met | missed | unresolved | not run (a policy did not run: why)
};

// `seconds(name)` gives a policy's timed iterations (empty: it did not run).
ExpectationResult check_expectation(const Expectation& e, const std::vector<double>& num_seconds,
                                    const std::vector<double>& den_seconds);

}  // namespace convlab::train
