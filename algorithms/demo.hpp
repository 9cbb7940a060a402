// The built-in example behind `convlab demo`: every available CPU algorithm on
// every layer of a network in all three directions, each output checked against
// the fp64 reference under the algorithm's own tolerance and timed. The memory
// the largest (layer, direction, algorithm) holds is checked before anything is
// allocated. Nothing is printed: each row goes to a callback as it is measured.
#pragma once
#include <functional>
#include <string>

#include "core/problem.hpp"

namespace convlab {

struct DemoRow {
  std::string layer;  // the layer's id ("alexnet.conv2")
  Direction dir = Direction::fwd;
  std::string algo;
  double median = 0;  // seconds
  double gflops = 0;  // direct-convolution FLOPs / median
  double max_rel = 0;
  bool passed = false;  // within the algorithm's error bound
};

struct DemoOptions {
  std::string net = "alexnet";
  int batch = 2;
  int threads = 0;  // 0 = all
  std::function<void()> on_start;  // after the memory check, before the first run
  std::function<void(const DemoRow&)> on_row;
};

// The number of rows outside their bound. Throws Error for an unknown network and
// OutOfMemory (one line naming the layer and direction) before any work.
int run_demo(const DemoOptions& opt);

}  // namespace convlab
