#include "convlab/testing.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cfloat>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <sstream>

#include "algorithms/execute.hpp"
#include "core/error.hpp"
#include "core/layers.hpp"

namespace convlab::testing {

namespace {

ConvProblem P(const char* desc) { return parse_problem(desc); }

// S(n, c, h, w, k, r, s, pad_h, pad_w, stride_h, stride_w, dil, groups): symmetric
// padding; end_padding() sets the bottom / right padding as given (the output
// size follows from it).
ConvProblem S(int n, int c, int h, int w, int k, int r, int s, int pad_h, int pad_w, int stride_h, int stride_w,
              int dil = 1, int groups = 1) {
  ConvProblem p;
  p.n = n, p.c = c, p.h = h, p.w = w, p.k = k, p.r = r, p.s = s;
  p.pad_h = p.pad_h_end = pad_h, p.pad_w = p.pad_w_end = pad_w;
  p.stride_h = stride_h, p.stride_w = stride_w, p.dil_h = p.dil_w = dil, p.groups = groups;
  return p;
}
ConvProblem end_padding(ConvProblem p, int pad_h_end, int pad_w_end) {
  p.pad_h_end = pad_h_end;
  p.pad_w_end = pad_w_end;
  return p;
}

uint64_t hash_string(const std::string& s) {
  uint64_t h = 1469598103934665603ull;
  for (char c : s) h = (h ^ uint64_t(static_cast<unsigned char>(c))) * 1099511628211ull;
  return h;
}

// The reference for a (problem, direction, seed) is shared by every algorithm
// tested in the same process.
struct CachedCase {
  std::shared_ptr<ConvData> data;
  std::shared_ptr<Reference> ref;
};
CachedCase cached_case(const ConvProblem& p, Direction dir, uint64_t seed) {
  static std::mutex mu;
  static std::map<std::string, CachedCase> cache;
  const std::string key = p.key() + "/" + std::string(to_string(dir)) + "/" + std::to_string(seed);
  std::lock_guard lock(mu);
  auto it = cache.find(key);
  if (it != cache.end()) return it->second;
  CachedCase c;
  c.data = std::make_shared<ConvData>(ConvData::random(p, seed));
  c.ref = std::make_shared<Reference>(compute_reference(p, dir, *c.data));
  if (cache.size() > 64) cache.clear();
  cache[key] = c;
  return c;
}

}  // namespace

uint64_t test_seed() {
  if (const char* s = std::getenv("CONVLAB_TEST_SEED")) return std::strtoull(s, nullptr, 10);
  return 20261122;
}

std::vector<TestProblem> edge_sweep() {
  std::vector<TestProblem> v = {
      {"c1", P("mb2ic1ih7oc3kh3ph1")},
      {"k1", P("mb2ic4ih7oc1kh3")},
      {"image_1x1", P("mb2ic3ih1oc4kh1")},
      {"image_1x1_pad", P("mb1ic2ih1oc3kh3ph1")},
      {"odd_sizes", P("mb3ic5ih9iw11oc7kh3kw5ph1pw2")},
      {"asym_pad", P("mb2ic3ih8iw6oc4kh3ph2pw0")},
      {"stride2", P("mb2ic4ih11oc6kh3sh2ph1")},
      {"stride4", P("mb2ic3ih19oc5kh5sh4ph2")},
      {"stride_hw", P("mb1ic3ih10iw12oc4kh3sh2sw3")},
      {"dilation2", P("mb2ic4ih12oc5kh3ph2dh1")},
      {"dilation_hw", P("mb1ic2ih11oc3kh3ph1dh1dw2")},
      {"groups2", P("g2mb2ic8ih9oc6kh3ph1")},
      {"depthwise", P("g8mb2ic8ih9oc8kh3ph1")},
      {"depthwise_x2", P("g4mb1ic4ih7oc8kh3ph1")},
      {"conv1x1", P("mb2ic16ih7oc8kh1")},
      {"conv1x1_s2", P("mb2ic8ih8oc8kh1sh2")},
      {"conv5x5", P("mb2ic6ih13oc8kh5ph2")},
      {"conv7x7_s2", P("mb1ic3ih15oc4kh7sh2ph3")},
      {"conv11x11_s4", P("mb1ic3ih31oc4kh11sh4")},
      {"channels_17_19", P("mb1ic17ih6oc19kh3ph1")},
      {"channels_32_48", P("mb1ic32ih5oc48kh3ph1")},
      {"no_pad_3x3", P("mb2ic4ih10oc4kh3")},
      {"pad2_3x3", P("mb1ic3ih6oc4kh3ph2")},
      {"groups3_5x5", P("g3mb1ic9ih10oc6kh5ph2")},
  };
  for (auto& t : asym_1d_sweep()) v.push_back(std::move(t));
  // 3x3 stride-1 outputs one below / equal / one above the Winograd tiles 2, 4, 6.
  for (int out : {1, 2, 3, 4, 5, 6, 7, 8, 11, 12, 13}) {
    ConvProblem p = P("mb1ic3ih4oc5kh3ph1");
    p.h = out;
    p.w = out + 1;
    v.push_back({"tile_" + std::to_string(out) + "x" + std::to_string(out + 1), p});
  }
  return v;
}

std::vector<TestProblem> asym_1d_sweep() {
  return {
      // 1-D (benchdnn's w letters only: H = 1, a 1-row filter)
      {"1d", P("mb2ic3iw17oc4kw3pw1")},
      {"1d_groups", P("g4mb2ic8iw11oc8kw3pw1")},
      {"1d_wide_filter", P("mb1ic5iw40oc6kw6pw3")},
      {"1d_stride_dil_asym", P("mb2ic4iw23oc5ow7kw3sw3dw1pw2")},  // 2 left, -2 right (1 column unread)
      // asymmetric padding: top/left from ph/pw, bottom/right from the output size
      {"asym_gemm", P("mb2ic5ih5oc6oh8kh3ph3")},              // benchdnn's conv_basic_2d:gemm: 3 above, 2 below
      {"asym_stride2", P("mb2ic3ih8oc4oh5kh3sh2ph3")},        // 3 above, 0 below
      {"asym_negative_end", P("mb1ic3ih9iw8oc4oh4ow3kh3kw3sh2sw3ph1pw2")},  // -1 below, -1 right
      {"asym_3x3_w", P("mb2ic4ih7iw9oc5oh7ow11kh3kw3ph1pw0")},  // 0 left, 4 right
      {"asym_3x3_end4", P("mb1ic3ih6oc4oh9kh3ph1")},            // 1 above, 4 below
      {"asym_dilated", P("mb1ic2ih11oc3oh9kh3ph0dh1")},         // 0 above, 2 below
      {"asym_1x1_bottom", P("mb2ic8ih6oc8oh7kh1ph0")},          // a 1x1 filter with one zero row below
      {"asym_deduced", P("mb1ic3ih12oc4oh6kh5sh2")},            // benchdnn's deduced split: 1 above, 2 below
      // as a kernel's shape states them: the dilation set in both axes of a 1-D
      // problem, a 1x1 filter with one zero row below and none right, groups
      {"1d_dilated_both_axes", end_padding(S(2, 4, 1, 23, 5, 1, 3, 0, 2, 1, 3, 2), 0, -2)},
      {"asym_1x1_bottom_only", end_padding(S(2, 8, 6, 6, 8, 1, 1, 0, 0, 1, 1), 1, 0)},
      {"asym_groups", end_padding(S(1, 4, 7, 6, 4, 3, 3, 1, 1, 1, 1, 1, 2), 0, 2)},
  };
}

std::vector<TestProblem> tile_sweep() {
  return {
      {"tile_1x1", S(2, 5, 7, 6, 3, 1, 1, 0, 0, 1, 1)},
      {"tile_3x3", S(2, 3, 9, 11, 5, 3, 3, 1, 1, 1, 1)},
      {"tile_5x5_s2", S(1, 4, 13, 10, 6, 5, 5, 2, 2, 2, 2)},
      {"tile_dil2", S(2, 3, 10, 9, 4, 3, 3, 1, 1, 1, 1, 2)},
      {"tile_groups2", S(2, 6, 8, 7, 4, 3, 3, 1, 1, 1, 1, 1, 2)},
      {"tile_depthwise", S(1, 4, 7, 9, 4, 3, 3, 1, 1, 1, 1, 1, 4)},
      {"tile_3x1_s2x1", S(1, 3, 11, 8, 2, 3, 1, 1, 0, 2, 1)},
      {"tile_1x1_s2", S(2, 3, 9, 8, 5, 1, 1, 0, 0, 2, 2)},
      {"tile_channels_17_65", S(1, 17, 9, 8, 65, 3, 3, 1, 1, 1, 1)},
      {"tile_4x4_s4x1", S(1, 2, 6, 6, 3, 4, 4, 0, 3, 4, 1)},
  };
}

std::vector<TestProblem> strided_sweep() {
  ConvProblem mixed_dil = S(1, 2, 17, 19, 3, 5, 4, 3, 1, 4, 2, 2);
  mixed_dil.dil_w = 3;
  return {
      {"strided_2", S(2, 3, 11, 13, 4, 3, 3, 1, 1, 2, 2)},
      {"strided_3", S(1, 2, 14, 16, 3, 5, 5, 2, 2, 3, 3)},
      {"strided_4_11x11", S(1, 3, 71, 70, 4, 11, 11, 2, 2, 4, 4)},  // AlexNet conv1-like, 2 tiles per phase
      {"strided_2_dil2", S(1, 3, 12, 13, 2, 3, 3, 2, 2, 2, 2, 2)},
      {"strided_3_dil2", S(1, 2, 15, 14, 3, 3, 3, 1, 2, 3, 3, 2)},
      {"strided_4x2_dil2x3", end_padding(mixed_dil, 0, 2)},
      {"strided_asym", end_padding(S(1, 3, 13, 12, 4, 5, 5, 2, 1, 3, 2), 0, 3)},
      {"strided_unread_end", end_padding(S(2, 2, 14, 15, 3, 4, 4, 1, 1, 4, 4), -2, -3)},  // last rows / columns unread
      {"strided_groups", S(1, 4, 13, 11, 6, 3, 3, 1, 1, 2, 2, 1, 2)},
      {"strided_depthwise", S(1, 4, 10, 10, 4, 3, 3, 1, 1, 3, 3, 1, 4)},
      {"strided_10_channels", S(1, 10, 9, 9, 3, 3, 3, 1, 1, 2, 2)},
      {"strided_7_channels", S(1, 6, 13, 12, 7, 5, 5, 2, 2, 3, 3)},
      {"strided_image_3x3_s4", S(1, 2, 3, 3, 2, 2, 2, 1, 1, 4, 4)},
  };
}

std::vector<TestProblem> alexnet_sweep(int batch) {
  std::vector<TestProblem> v;
  for (const char* net : {"alexnet", "alexnet-owt"})
    for (auto& l : network_layers(net, batch)) v.push_back({l.id, l.problem});
  return v;
}

ConvProblem random_problem(uint64_t& state, const RandomProblemLimits& lim) {
  auto next = [&](int lo, int hi) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return lo + int((state >> 33) % uint64_t(hi - lo + 1));
  };
  ConvProblem p;
  p.groups = next(1, lim.groups);
  p.n = next(1, lim.n);
  p.c = p.groups * next(1, lim.per_group);
  p.k = p.groups * next(1, lim.per_group);
  p.h = next(1, lim.hw);
  p.w = next(1, lim.hw);
  p.r = next(1, lim.rs);
  p.s = next(1, lim.rs);
  p.stride_h = next(1, lim.stride);
  p.stride_w = next(1, lim.stride);
  p.pad_h = next(0, lim.pad);
  p.pad_w = next(0, lim.pad);
  p.dil_h = next(1, lim.dil);
  p.dil_w = next(1, lim.dil);
  // One draw in three pads the two sides of an axis differently: the end
  // padding in [1 - stride, pad], stored as parse_problem() would.
  p.pad_h_end = next(0, 2) == 0 ? next(1 - p.stride_h, lim.pad) : p.pad_h;
  p.pad_w_end = next(0, 2) == 0 ? next(1 - p.stride_w, lim.pad) : p.pad_w;
  p.normalize_padding();
  return p;
}

std::vector<TestProblem> random_sweep(uint64_t seed, int count) {
  std::vector<TestProblem> v;
  uint64_t state = seed;
  while (int(v.size()) < count) {
    const ConvProblem p = random_problem(state, {3, 3, 6, 16, 5, 3, 2, 2});
    if (!p.validate().empty()) continue;
    v.push_back({"random" + std::to_string(v.size()) + "_seed" + std::to_string(seed), p});
  }
  return v;
}

std::vector<TestProblem> standard_sweep() {
  auto v = edge_sweep();
  for (auto* more : {&tile_sweep, &strided_sweep})
    for (auto& t : more()) v.push_back(std::move(t));
  for (auto& l : network_layers("alexnet", 1)) v.push_back({l.id, l.problem});
  for (auto& t : random_sweep(test_seed(), 12)) v.push_back(t);
  return v;
}

std::vector<TestProblem> sanitized_subset(const std::vector<TestProblem>& sweep) {
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
  std::vector<TestProblem> v;  // 5-10x slower emulation: every other problem, still every code path
  for (size_t i = 0; i < sweep.size(); i += 2) v.push_back(sweep[i]);
  return v;
#else
  return sweep;
#endif
}

std::vector<TestProblem> emulated_sweep() {
  std::vector<TestProblem> v = asym_1d_sweep();
  for (auto* more : {&tile_sweep, &strided_sweep})
    for (auto& t : more()) v.push_back(std::move(t));
  return sanitized_subset(v);
}

ConvTester::ConvTester(const Algorithm& algorithm)
    : algo_(&algorithm), name_(algorithm.name()), dirs_(std::begin(kAllDirections), std::end(kAllDirections)) {}

ConvTester& ConvTester::sweep(std::vector<TestProblem> problems) { problems_ = std::move(problems); swept_ = true; return *this; }
ConvTester& ConvTester::emulated(bool on) { emulated_ = on; return *this; }
ConvTester& ConvTester::directions(std::vector<Direction> dirs) { dirs_ = std::move(dirs); return *this; }
ConvTester& ConvTester::threads(int n) { threads_ = n; return *this; }
ConvTester& ConvTester::require_all_supported(bool on) { require_all_ = on; return *this; }
ConvTester& ConvTester::check_determinism(bool on) { determinism_ = on; return *this; }

void ConvTester::run() {
  const Algorithm* algo = algo_;
  ASSERT_NE(algo, nullptr) << "algorithm '" << name_ << "' is not in the registry";
  if (auto why = algo->unavailable_reason(); !why.empty()) GTEST_SKIP() << name_ << ": " << why;
  ExecContext ctx;
  ctx.device = algo->device();
  ctx.threads = threads_;
  std::map<std::string, int> reasons;
  // CONVLAB_SWEEP_LIMIT=N runs only the first N problems: for slow
  // instrumentation (compute-sanitizer in scripts/gpu-check.sh), never in CI.
  std::vector<TestProblem> problems = swept_ ? problems_ : standard_sweep();
  if (emulated_) problems = swept_ ? sanitized_subset(problems) : emulated_sweep();
  if (const char* lim = std::getenv("CONVLAB_SWEEP_LIMIT"); lim && std::atoi(lim) > 0 &&
      size_t(std::atoi(lim)) < problems.size()) {
    problems.resize(size_t(std::atoi(lim)));
    std::printf("%s: CONVLAB_SWEEP_LIMIT=%s: the first %zu problems of the sweep only\n", name_.c_str(), lim,
                problems.size());
  }
  // The measured error in the transform algorithms' form (algorithms/algorithm.hpp):
  // max |y - ref| / (eps * max_j mag_j), worst case per direction and filter size, printed with the
  // summary so a declared bound can be set from (and checked against) measurements.
  std::map<std::string, double> worst_global;
  for (const auto& tp : problems) {
    for (Direction dir : dirs_) {
      const ConvProblem& p = tp.problem;
      const std::string where = name_ + " " + std::string(to_string(dir)) + " " + tp.label + " [" + p.key() + "]";
      const Support sup = algo->supports(p, dir);
      if (!sup) {
        ++unsupported_;
        ++reasons[std::string(to_string(dir)) + ": " + sup.reason];
        EXPECT_FALSE(sup.reason.empty()) << where << " unsupported without a reason";
        EXPECT_FALSE(require_all_) << where << " unsupported: " << sup.reason;
        continue;
      }
      const uint64_t seed = hash_string(p.key()) ^ test_seed();
      CachedCase cc = cached_case(p, dir, seed);
      ConvData out(p);
      try {
        ConvRunner runner(*algo, p, dir, ctx);
        runner.upload(*cc.data);
        runner.poison();
        runner.run();
        runner.download_output(out);
        const std::string guards = runner.check_guards();
        EXPECT_TRUE(guards.empty()) << where << ": " << guards;
        const std::string inputs = runner.check_inputs(*cc.data);
        EXPECT_TRUE(inputs.empty()) << where << ": " << inputs;
        const Tolerance tol = algo->tolerance(p, dir);
        const ErrorStats st = compare(out.output(dir).data(), *cc.ref, tol);
        ++run_;
        Tolerance unit;
        unit.global = double(FLT_EPSILON);
        double& w = worst_global[std::string(to_string(dir)) + ", " + std::to_string(p.r) + "x" + std::to_string(p.s)];
        w = std::max(w, compare(out.output(dir).data(), *cc.ref, unit).worst_ratio);
        EXPECT_TRUE(st.passed()) << where << " (seed " << seed << "): " << st.bad << " elements over the bound, "
                                 << st.non_finite << " non-finite; worst index " << st.worst_index << " value "
                                 << out.output(dir).data()[st.worst_index] << " vs reference "
                                 << cc.ref->value[size_t(st.worst_index)] << ", worst error/bound "
                                 << st.worst_ratio << ", max abs " << st.max_abs << " (tolerance: " << tol.basis
                                 << ")";
        if (determinism_) {
          ConvData again(p);
          runner.poison();
          runner.run();
          runner.download_output(again);
          const Tensor& a = out.output(dir);
          const Tensor& b = again.output(dir);
          EXPECT_EQ(std::memcmp(a.data(), b.data(), size_t(a.size()) * 4), 0)
              << where << ": two runs gave different bits";
        }
      } catch (const Error& e) {
        ADD_FAILURE() << where << ": threw: " << e.what();
      }
    }
  }
  std::ostringstream summary;
  summary << name_ << ": " << run_ << " cases checked, " << unsupported_ << " unsupported";
  for (auto& [why, n] : reasons) summary << "\n    " << n << "x " << why;
  for (auto& [dir, w] : worst_global) summary << "\n    measured " << dir << " filters: max |err| = " << w << " eps x max sum|terms|";
  std::printf("%s\n", summary.str().c_str());
  EXPECT_GT(run_, 0) << name_ << " supported none of the " << problems.size() * dirs_.size() << " cases";
}

}  // namespace convlab::testing
