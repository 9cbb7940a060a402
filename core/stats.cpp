#include "core/stats.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <random>
#include <string>

#include "core/error.hpp"

namespace convlab::stats {

double median(std::vector<double> v) {
  if (v.empty()) return std::numeric_limits<double>::quiet_NaN();
  const size_t n = v.size(), mid = n / 2;
  std::nth_element(v.begin(), v.begin() + long(mid), v.end());
  if (n % 2) return v[mid];
  const double upper = v[mid];
  const double lower = *std::max_element(v.begin(), v.begin() + long(mid));
  return 0.5 * (lower + upper);
}

double quantile_sorted(const std::vector<double>& s, double q) {
  if (s.empty()) return std::numeric_limits<double>::quiet_NaN();
  q = std::clamp(q, 0.0, 1.0);
  const double h = q * double(s.size() - 1);
  const size_t i = size_t(std::floor(h));
  if (i + 1 >= s.size()) return s.back();
  return s[i] + (h - double(i)) * (s[i + 1] - s[i]);
}

namespace {

// The percentile interval of `statistic` over resamples of n paired indices.
Interval bootstrap(size_t n, const BootstrapOptions& opt, const std::function<double(const std::vector<size_t>&)>& statistic) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  if (n == 0) return {nan, nan};
  if (opt.resamples < 1 || !(opt.level > 0 && opt.level < 1))
    fail("bootstrap: need at least one resample and a level in (0, 1)");
  std::mt19937_64 gen(opt.seed);
  std::vector<size_t> idx(n);
  std::vector<double> stat;
  stat.reserve(size_t(opt.resamples));
  for (int r = 0; r < opt.resamples; ++r) {
    for (size_t& i : idx) i = size_t(gen() % n);
    stat.push_back(statistic(idx));
  }
  std::sort(stat.begin(), stat.end());
  const double tail = (1 - opt.level) / 2;
  return {quantile_sorted(stat, tail), quantile_sorted(stat, 1 - tail)};
}

double median_at(const std::vector<double>& x, const std::vector<size_t>& idx, std::vector<double>& scratch) {
  scratch.resize(idx.size());
  for (size_t k = 0; k < idx.size(); ++k) scratch[k] = x[idx[k]];
  return median(scratch);
}

void require_paired(const std::vector<double>& a, const std::vector<double>& b, const char* what) {
  if (a.size() != b.size())
    fail(std::string(what) + ": paired samples of different lengths (" + std::to_string(a.size()) + " and " +
         std::to_string(b.size()) + ")");
}

}  // namespace

Interval median_ci(const std::vector<double>& x, const BootstrapOptions& opt) {
  std::vector<double> s;
  return bootstrap(x.size(), opt, [&](const std::vector<size_t>& idx) { return median_at(x, idx, s); });
}

Interval median_ratio_ci(const std::vector<double>& a, const std::vector<double>& b, const BootstrapOptions& opt) {
  require_paired(a, b, "median_ratio_ci");
  std::vector<double> s;
  return bootstrap(a.size(), opt, [&](const std::vector<size_t>& idx) {
    const double num = median_at(a, idx, s);
    return num / median_at(b, idx, s);
  });
}

Interval median_diff_ci(const std::vector<double>& a, const std::vector<double>& b, const BootstrapOptions& opt) {
  require_paired(a, b, "median_diff_ci");
  std::vector<double> s;
  return bootstrap(a.size(), opt, [&](const std::vector<size_t>& idx) {
    const double first = median_at(a, idx, s);
    return first - median_at(b, idx, s);
  });
}

}  // namespace convlab::stats
