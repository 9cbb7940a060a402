// The shared convolution tester: drop any registered algorithm in and it runs
// every direction over a sweep of problems against the fp64 reference.
//
//   ConvTester("cpu.winograd_f4x3").sweep(winograd_edges).run();
//
// For every (problem, direction) the algorithm supports: random inputs from a
// seed derived from the problem (printed on failure), output pre-filled with
// NaN and workspace with a poison pattern (so unwritten elements fail), guard
// zones after every buffer (so overruns fail), and the comparison under the
// tolerance the algorithm declares. Unsupported cases are counted and their
// reasons printed; an algorithm that supports nothing in a sweep fails.
// CUDA algorithms without a device are skipped with GTEST_SKIP and the reason.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "algorithms/algorithm.hpp"

namespace convlab::testing {

struct TestProblem {
  std::string label;
  ConvProblem problem;
};

// Edge shapes: C=1, K=1, 1x1 images, odd sizes, different padding per axis,
// stride 2 and 4, dilation 2, groups 2 and depthwise, 1x1 / 5x5 / 7x7 / 11x11
// filters, channel counts around 16, asym_1d_sweep(), and 3x3 output sizes
// around the Winograd tiles 2, 4, 6.
std::vector<TestProblem> edge_sweep();
// 1-D problems (benchdnn's iw/kw/ow strings) and asymmetric padding (bottom /
// right from the output size: larger, smaller, negative, deduced), over 1x1,
// 3x3, strided and dilated filters.
std::vector<TestProblem> asym_1d_sweep();
// AlexNet's five layers (alexnet and alexnet-owt) at batch `batch`.
std::vector<TestProblem> alexnet_sweep(int batch = 1);
// `count` valid random small problems from `seed`.
std::vector<TestProblem> random_sweep(uint64_t seed, int count);
// One seeded random problem (an LCG, so a seed reproduces the sequence), maybe
// invalid (the caller checks validate()): groups, n, channels per group, h, w,
// r, s, strides, dilations uniform in [1, max], paddings in [0, max]; in one
// axis of three the end padding differs (in [1 - stride, max]).
struct RandomProblemLimits {
  int groups, n, per_group, hw, rs, stride, pad, dil;
};
ConvProblem random_problem(uint64_t& state, const RandomProblemLimits& lim);
// edge_sweep + AlexNet's five layers at batch 1 + random_sweep(test seed, 12). The seed is
// CONVLAB_TEST_SEED from the environment when set, else fixed.
std::vector<TestProblem> standard_sweep();
uint64_t test_seed();

class ConvTester {
 public:
  explicit ConvTester(std::string algorithm);
  ConvTester& sweep(std::vector<TestProblem> problems);
  ConvTester& directions(std::vector<Direction> dirs);
  ConvTester& threads(int n);
  // Require every problem of the sweep to be supported in every direction.
  ConvTester& require_all_supported(bool on = true);
  // Run each case twice and require bit-identical output (determinism).
  ConvTester& check_determinism(bool on = true);
  // Runs the sweep with GoogleTest assertions (ADD_FAILURE per failing case).
  void run();

  int cases_run() const { return run_; }
  int cases_unsupported() const { return unsupported_; }

 private:
  std::string name_;
  std::vector<TestProblem> problems_;
  std::vector<Direction> dirs_;
  int threads_ = 0;
  bool require_all_ = false;
  bool determinism_ = false;
  int run_ = 0, unsupported_ = 0;
};

}  // namespace convlab::testing
