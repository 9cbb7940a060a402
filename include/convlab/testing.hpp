// The convolution tester: drop any algorithm in -- a registered one by name, or
// an object of your own -- and it runs every direction over a sweep of
// problems against the fp64 reference, with GoogleTest assertions.
//
//   ConvTester("cpu.winograd_f4x3").sweep(winograd_edges).run();
//   ConvTester(my_algorithm).run();                 // an algorithm of your own
//   ConvTester(CudaDirect()).emulated().run();      // a cuda.* class under the SIMT emulator
//
// Library target convlab::testing (cmake/install.cmake), header <convlab/testing.hpp>.
//
// For every (problem, direction) the algorithm supports: random inputs from a
// seed derived from the problem (printed on failure), output pre-filled with
// NaN and workspace with a poison pattern (so unwritten elements fail), guard
// zones after every buffer (so overruns fail), and the comparison under the
// tolerance the algorithm declares. Unsupported cases are counted and their
// reasons printed; an algorithm that supports nothing in a sweep fails.
// CUDA algorithms without a device are skipped with GTEST_SKIP and the reason.
// The same tester drives the cuda.* classes in the SIMT-emulated test builds
// (tests/support/emulated_cuda.cmake), where device memory is the emulator's:
// emulated() keeps the sweep's problems the emulator runs in reasonable time.
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
// Small ragged shapes around a GPU kernel's tiles: 1x1 (identity and strided),
// padding, stride, dilation, groups, depthwise, non-square filters, channels
// across a 64-wide tile.
std::vector<TestProblem> tile_sweep();
// Strided shapes, where a backward-data gather visits only the taps of each
// pixel's stride phase: strides 2, 3 and 4, dilation sharing a factor with the
// stride or not, unequal strides and dilations, asymmetric and negative end
// padding, groups, depthwise, an image smaller than the stride.
std::vector<TestProblem> strided_sweep();
// edge_sweep + tile_sweep + strided_sweep + AlexNet's five layers at batch 1 +
// random_sweep(test seed, 12). The seed is CONVLAB_TEST_SEED from the
// environment when set, else fixed.
std::vector<TestProblem> standard_sweep();
// The part of standard_sweep() the SIMT emulator runs in the time of a CI
// stage: asym_1d_sweep + tile_sweep + strided_sweep (a GPU kernel's tiles,
// stride phases and edges), every other problem under the sanitizers.
std::vector<TestProblem> emulated_sweep();
// Every other problem of `sweep` in a build under ASan or TSan (5-10x slower
// emulation), else the sweep itself.
std::vector<TestProblem> sanitized_subset(const std::vector<TestProblem>& sweep);
uint64_t test_seed();

class ConvTester {
 public:
  // A registered algorithm by name (a failure when the registry has no such name).
  explicit ConvTester(std::string algorithm);
  // Any algorithm object, registered or not; it must outlive run().
  explicit ConvTester(const Algorithm& algorithm);
  ConvTester& sweep(std::vector<TestProblem> problems);
  // The SIMT-emulated test builds (device memory is the emulator's):
  // emulated_sweep() unless a sweep() is given (that one through
  // sanitized_subset()).
  ConvTester& emulated(bool on = true);
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
  const Algorithm* algo_ = nullptr;
  std::string name_;
  std::vector<TestProblem> problems_;
  bool swept_ = false, emulated_ = false;
  std::vector<Direction> dirs_;
  int threads_ = 0;
  bool require_all_ = false;
  bool determinism_ = false;
  int run_ = 0, unsupported_ = 0;
};

}  // namespace convlab::testing
