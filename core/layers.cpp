#include "core/layers.hpp"

#include "core/error.hpp"

namespace convlab {

namespace {

struct Row {
  const char* layer;
  const char* desc;  // benchdnn descriptor without mb
  int count;
};

// AlexNet as in Krizhevsky et al. 2012 / Caffe's bvlc_alexnet: 227x227 input,
// two towers expressed as groups=2 in conv2, conv4 and conv5.
const Row kAlexNet[] = {
    {"conv1", "ic3ih227oc96oh55kh11sh4ph0", 1},
    {"conv2", "g2ic96ih27oc256oh27kh5ph2", 1},
    {"conv3", "ic256ih13oc384oh13kh3ph1", 1},
    {"conv4", "g2ic384ih13oc384oh13kh3ph1", 1},
    {"conv5", "g2ic384ih13oc256oh13kh3ph1", 1},
};

// "One weird trick" single-tower AlexNet (convnet-benchmarks, torchvision).
const Row kAlexNetOwt[] = {
    {"conv1", "ic3ih224oc64oh55kh11sh4ph2", 1},
    {"conv2", "ic64ih27oc192oh27kh5ph2", 1},
    {"conv3", "ic192ih13oc384oh13kh3ph1", 1},
    {"conv4", "ic384ih13oc256oh13kh3ph1", 1},
    {"conv5", "ic256ih13oc256oh13kh3ph1", 1},
};

const Row kVgg16[] = {
    {"conv1_1", "ic3ih224oc64kh3ph1", 1},    {"conv1_2", "ic64ih224oc64kh3ph1", 1},
    {"conv2_1", "ic64ih112oc128kh3ph1", 1},  {"conv2_2", "ic128ih112oc128kh3ph1", 1},
    {"conv3_1", "ic128ih56oc256kh3ph1", 1},  {"conv3_2", "ic256ih56oc256kh3ph1", 2},
    {"conv4_1", "ic256ih28oc512kh3ph1", 1},  {"conv4_2", "ic512ih28oc512kh3ph1", 2},
    {"conv5_1", "ic512ih14oc512kh3ph1", 3},
};

// ResNet-50 (v1.5: the stride sits in the 3x3 of each stage's first block).
// Unique shapes with their multiplicity.
const Row kResNet50[] = {
    {"conv1", "ic3ih224oc64kh7sh2ph3", 1},
    {"res2.1x1a_first", "ic64ih56oc64kh1", 1},
    {"res2.1x1a", "ic256ih56oc64kh1", 2},
    {"res2.3x3", "ic64ih56oc64kh3ph1", 3},
    {"res2.1x1b", "ic64ih56oc256kh1", 4},  // 3 expansions + the projection shortcut
    {"res3.1x1a_first", "ic256ih56oc128kh1", 1},
    {"res3.3x3_s2", "ic128ih56oc128kh3sh2ph1", 1},
    {"res3.proj", "ic256ih56oc512kh1sh2", 1},
    {"res3.1x1a", "ic512ih28oc128kh1", 3},
    {"res3.3x3", "ic128ih28oc128kh3ph1", 3},
    {"res3.1x1b", "ic128ih28oc512kh1", 4},
    {"res4.1x1a_first", "ic512ih28oc256kh1", 1},
    {"res4.3x3_s2", "ic256ih28oc256kh3sh2ph1", 1},
    {"res4.proj", "ic512ih28oc1024kh1sh2", 1},
    {"res4.1x1a", "ic1024ih14oc256kh1", 5},
    {"res4.3x3", "ic256ih14oc256kh3ph1", 5},
    {"res4.1x1b", "ic256ih14oc1024kh1", 6},
    {"res5.1x1a_first", "ic1024ih14oc512kh1", 1},
    {"res5.3x3_s2", "ic512ih14oc512kh3sh2ph1", 1},
    {"res5.proj", "ic1024ih14oc2048kh1sh2", 1},
    {"res5.1x1a", "ic2048ih7oc512kh1", 2},
    {"res5.3x3", "ic512ih7oc512kh3ph1", 2},
    {"res5.1x1b", "ic512ih7oc2048kh1", 3},
};

// The test-sized network `convlab train tiny` builds: 16x16 RGB, conv1, LRN, pool to 7x7, conv2 in groups.
const Row kTiny[] = {
    {"conv1", "ic3ih16oc8oh16kh3ph1", 1},
    {"conv2", "g2ic8ih7oc16oh7kh3ph1", 1},
};

struct Net {
  const char* name;
  const Row* rows;
  size_t n;
};

const Net kNets[] = {
    {"alexnet", kAlexNet, std::size(kAlexNet)},
    {"alexnet-owt", kAlexNetOwt, std::size(kAlexNetOwt)},
    {"vgg16", kVgg16, std::size(kVgg16)},
    {"resnet50", kResNet50, std::size(kResNet50)},
    {"tiny", kTiny, std::size(kTiny)},
};

}  // namespace

std::vector<std::string> network_names() {
  std::vector<std::string> out;
  for (const auto& n : kNets) out.emplace_back(n.name);
  return out;
}

bool is_network(std::string_view net) {
  for (const auto& n : kNets)
    if (net == n.name) return true;
  return false;
}

std::vector<NetLayer> network_layers(std::string_view net, int batch) {
  if (batch < 1) fail("batch must be positive (got " + std::to_string(batch) + ")");
  for (const auto& n : kNets) {
    if (net != n.name) continue;
    std::vector<NetLayer> out;
    for (size_t i = 0; i < n.n; ++i) {
      const std::string id = std::string(n.name) + "." + n.rows[i].layer;
      ConvProblem p = parse_problem(n.rows[i].desc);
      p.n = batch;
      p.name = id;
      if (auto e = p.validate(); !e.empty()) fail(id + " at batch " + std::to_string(batch) + ": " + e);
      out.push_back({id, p, n.rows[i].count});
    }
    return out;
  }
  std::string known;
  for (const auto& n : kNets) known += std::string(known.empty() ? "" : ", ") + n.name;
  fail("unknown network '" + printable(net) + "' (known: " + known + ")");
}

NetLayer network_layer(std::string_view id, int batch) {
  const size_t dot = id.find('.');
  if (dot == std::string_view::npos) fail("'" + printable(id) + "' is not a layer id like alexnet.conv3");
  const auto layers = network_layers(id.substr(0, dot), batch);
  std::string known;
  for (auto& l : layers) {
    if (l.id == id) return l;
    known += (known.empty() ? "" : ", ") + l.id.substr(dot + 1);
  }
  fail("unknown layer '" + printable(id) + "' (" + std::string(id.substr(0, dot)) + " has " + known + ")");
}

}  // namespace convlab
