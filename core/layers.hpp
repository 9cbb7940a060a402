// Network layer tables: the one place where "alexnet.conv2" gets its meaning.
// Tests, benchmarks, the autotuner, the trainer and reports all read these.
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "core/problem.hpp"

namespace convlab {

struct NetLayer {
  std::string id;       // "alexnet.conv2": network + '.' + layer, used in every output
  ConvProblem problem;  // at the batch asked for; problem.name == id
  int count = 1;        // how many times this shape occurs in the network
};

// Names of the built-in networks: alexnet, alexnet-owt, vgg16, resnet50, mobilenet_v2, densenet121, tiny.
std::vector<std::string> network_names();
bool is_network(std::string_view net);
// The convolution layers of `net` at batch `batch`, in network order. Throws
// Error for an unknown network.
std::vector<NetLayer> network_layers(std::string_view net, int batch);
// One layer by id ("alexnet.conv3") or throws Error.
NetLayer network_layer(std::string_view id, int batch);

}  // namespace convlab
