#include "train/expect.hpp"

#include <cmath>
#include <cstdlib>

#include "core/error.hpp"

namespace convlab::train {

Expectation parse_expectation(const std::string& text) {
  auto bad = [&](const std::string& why) -> Expectation {
    fail("--expect '" + printable(text) + "': " + why + " (write NUM/DEN>=X or NUM/DEN<=X, e.g. 'default/find>=1.5': "
         "the ratio of the two policies' median iteration times)");
  };
  Expectation e;
  e.text = text;
  size_t op = text.find(">=");
  e.at_least = op != std::string::npos;
  if (!e.at_least) op = text.find("<=");
  if (op == std::string::npos) return bad("no >= or <=");
  const std::string ratio = text.substr(0, op), bound = text.substr(op + 2);
  const size_t slash = ratio.rfind('/');
  if (slash == std::string::npos) return bad("no '/' between two policies");
  e.num = ratio.substr(0, slash);
  e.den = ratio.substr(slash + 1);
  if (e.num.empty() || e.den.empty()) return bad("a policy name is empty");
  if (e.num == e.den) return bad("the two policies are the same");
  char* end = nullptr;
  e.bound = std::strtod(bound.c_str(), &end);
  if (bound.empty() || *end || !std::isfinite(e.bound) || !(e.bound > 0)) return bad("the bound must be a positive number");
  return e;
}

ExpectationResult check_expectation(const Expectation& e, const std::vector<double>& num_seconds,
                                    const std::vector<double>& den_seconds) {
  ExpectationResult r;
  r.expect = e;
  if (num_seconds.empty() || den_seconds.empty()) {
    r.verdict = "not run (" + (num_seconds.empty() ? e.num : e.den) + " did not run)";
    return r;
  }
  r.ran = true;
  r.ratio = stats::median(num_seconds) / stats::median(den_seconds);
  r.ci = stats::median_ratio_ci(num_seconds, den_seconds);
  const bool all = e.at_least ? r.ci.lo >= e.bound : r.ci.hi <= e.bound;
  const bool none = e.at_least ? r.ci.hi < e.bound : r.ci.lo > e.bound;
  r.verdict = all ? "met" : none ? "missed" : "unresolved";
  return r;
}

}  // namespace convlab::train
