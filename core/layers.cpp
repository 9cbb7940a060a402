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

// MobileNetV2 (torchvision mobilenet_v2, width 1.0, 224x224 input): the 3x3 stride-2 stem, 17
// inverted-residual blocks in seven stages s1..s7 of (expansion t, channels c, blocks n, stride s)
// = (1,16,1,1) (6,24,2,2) (6,32,3,2) (6,64,4,2) (6,96,3,1) (6,160,3,2) (6,320,1,1), each block a
// 1x1 expand to t x its input channels (none when t = 1), a 3x3 depthwise (groups = channels;
// the stage's stride in its first block) and a 1x1 project, then the 1x1 to 1280. 52 convolutions.
// Unique shapes with their multiplicity: a stage's expand shape is also the next stage's first
// expand (the same channels in at the same size), and s5's first depthwise is s4's.
const Row kMobileNetV2[] = {
    {"conv0", "ic3ih224oc32oh112kh3sh2ph1", 1},
    {"s1.dw", "g32ic32ih112oc32oh112kh3ph1", 1},
    {"s1.project", "ic32ih112oc16kh1", 1},
    {"s2.expand_first", "ic16ih112oc96kh1", 1},
    {"s2.dw_s2", "g96ic96ih112oc96oh56kh3sh2ph1", 1},
    {"s2.project_first", "ic96ih56oc24kh1", 1},
    {"s2.expand", "ic24ih56oc144kh1", 2},  // + s3's first
    {"s2.dw", "g144ic144ih56oc144oh56kh3ph1", 1},
    {"s2.project", "ic144ih56oc24kh1", 1},
    {"s3.dw_s2", "g144ic144ih56oc144oh28kh3sh2ph1", 1},
    {"s3.project_first", "ic144ih28oc32kh1", 1},
    {"s3.expand", "ic32ih28oc192kh1", 3},  // + s4's first
    {"s3.dw", "g192ic192ih28oc192oh28kh3ph1", 2},
    {"s3.project", "ic192ih28oc32kh1", 2},
    {"s4.dw_s2", "g192ic192ih28oc192oh14kh3sh2ph1", 1},
    {"s4.project_first", "ic192ih14oc64kh1", 1},
    {"s4.expand", "ic64ih14oc384kh1", 4},                  // + s5's first
    {"s4.dw", "g384ic384ih14oc384oh14kh3ph1", 4},          // + s5's first (stride 1)
    {"s4.project", "ic384ih14oc64kh1", 3},
    {"s5.project_first", "ic384ih14oc96kh1", 1},
    {"s5.expand", "ic96ih14oc576kh1", 3},  // + s6's first
    {"s5.dw", "g576ic576ih14oc576oh14kh3ph1", 2},
    {"s5.project", "ic576ih14oc96kh1", 2},
    {"s6.dw_s2", "g576ic576ih14oc576oh7kh3sh2ph1", 1},
    {"s6.project_first", "ic576ih7oc160kh1", 1},
    {"s6.expand", "ic160ih7oc960kh1", 3},              // + s7's
    {"s6.dw", "g960ic960ih7oc960oh7kh3ph1", 3},        // + s7's
    {"s6.project", "ic960ih7oc160kh1", 2},
    {"s7.project", "ic960ih7oc320kh1", 1},
    {"conv_last", "ic320ih7oc1280kh1", 1},
};

// DenseNet-121 (torchvision densenet121, 224x224 input): the 7x7 stride-2 stem (then a 3x3
// stride-2 max pool to 56x56), four dense blocks of 6, 12, 24 and 16 layers, each layer a 1x1
// bottleneck to 4 x 32 = 128 channels over everything before it in the block (the block's input
// + 32 per earlier layer) and a 3x3 to the growth rate 32, and between the blocks a transition
// 1x1 halving the channels (then a 2x2 average pool). 120 convolutions; within a block the 3x3s
// are one shape and every 1x1 has its own input channels.
const Row kDenseNet121[] = {
    {"conv0", "ic3ih224oc64oh112kh7sh2ph3", 1},
    {"block1.l1.1x1", "ic64ih56oc128kh1", 1},
    {"block1.3x3", "ic128ih56oc32kh3ph1", 6},
    {"block1.l2.1x1", "ic96ih56oc128kh1", 1},
    {"block1.l3.1x1", "ic128ih56oc128kh1", 1},
    {"block1.l4.1x1", "ic160ih56oc128kh1", 1},
    {"block1.l5.1x1", "ic192ih56oc128kh1", 1},
    {"block1.l6.1x1", "ic224ih56oc128kh1", 1},
    {"trans1", "ic256ih56oc128kh1", 1},
    {"block2.l1.1x1", "ic128ih28oc128kh1", 1},
    {"block2.3x3", "ic128ih28oc32kh3ph1", 12},
    {"block2.l2.1x1", "ic160ih28oc128kh1", 1},
    {"block2.l3.1x1", "ic192ih28oc128kh1", 1},
    {"block2.l4.1x1", "ic224ih28oc128kh1", 1},
    {"block2.l5.1x1", "ic256ih28oc128kh1", 1},
    {"block2.l6.1x1", "ic288ih28oc128kh1", 1},
    {"block2.l7.1x1", "ic320ih28oc128kh1", 1},
    {"block2.l8.1x1", "ic352ih28oc128kh1", 1},
    {"block2.l9.1x1", "ic384ih28oc128kh1", 1},
    {"block2.l10.1x1", "ic416ih28oc128kh1", 1},
    {"block2.l11.1x1", "ic448ih28oc128kh1", 1},
    {"block2.l12.1x1", "ic480ih28oc128kh1", 1},
    {"trans2", "ic512ih28oc256kh1", 1},
    {"block3.l1.1x1", "ic256ih14oc128kh1", 1},
    {"block3.3x3", "ic128ih14oc32kh3ph1", 24},
    {"block3.l2.1x1", "ic288ih14oc128kh1", 1},
    {"block3.l3.1x1", "ic320ih14oc128kh1", 1},
    {"block3.l4.1x1", "ic352ih14oc128kh1", 1},
    {"block3.l5.1x1", "ic384ih14oc128kh1", 1},
    {"block3.l6.1x1", "ic416ih14oc128kh1", 1},
    {"block3.l7.1x1", "ic448ih14oc128kh1", 1},
    {"block3.l8.1x1", "ic480ih14oc128kh1", 1},
    {"block3.l9.1x1", "ic512ih14oc128kh1", 1},
    {"block3.l10.1x1", "ic544ih14oc128kh1", 1},
    {"block3.l11.1x1", "ic576ih14oc128kh1", 1},
    {"block3.l12.1x1", "ic608ih14oc128kh1", 1},
    {"block3.l13.1x1", "ic640ih14oc128kh1", 1},
    {"block3.l14.1x1", "ic672ih14oc128kh1", 1},
    {"block3.l15.1x1", "ic704ih14oc128kh1", 1},
    {"block3.l16.1x1", "ic736ih14oc128kh1", 1},
    {"block3.l17.1x1", "ic768ih14oc128kh1", 1},
    {"block3.l18.1x1", "ic800ih14oc128kh1", 1},
    {"block3.l19.1x1", "ic832ih14oc128kh1", 1},
    {"block3.l20.1x1", "ic864ih14oc128kh1", 1},
    {"block3.l21.1x1", "ic896ih14oc128kh1", 1},
    {"block3.l22.1x1", "ic928ih14oc128kh1", 1},
    {"block3.l23.1x1", "ic960ih14oc128kh1", 1},
    {"block3.l24.1x1", "ic992ih14oc128kh1", 1},
    {"trans3", "ic1024ih14oc512kh1", 1},
    {"block4.l1.1x1", "ic512ih7oc128kh1", 1},
    {"block4.3x3", "ic128ih7oc32kh3ph1", 16},
    {"block4.l2.1x1", "ic544ih7oc128kh1", 1},
    {"block4.l3.1x1", "ic576ih7oc128kh1", 1},
    {"block4.l4.1x1", "ic608ih7oc128kh1", 1},
    {"block4.l5.1x1", "ic640ih7oc128kh1", 1},
    {"block4.l6.1x1", "ic672ih7oc128kh1", 1},
    {"block4.l7.1x1", "ic704ih7oc128kh1", 1},
    {"block4.l8.1x1", "ic736ih7oc128kh1", 1},
    {"block4.l9.1x1", "ic768ih7oc128kh1", 1},
    {"block4.l10.1x1", "ic800ih7oc128kh1", 1},
    {"block4.l11.1x1", "ic832ih7oc128kh1", 1},
    {"block4.l12.1x1", "ic864ih7oc128kh1", 1},
    {"block4.l13.1x1", "ic896ih7oc128kh1", 1},
    {"block4.l14.1x1", "ic928ih7oc128kh1", 1},
    {"block4.l15.1x1", "ic960ih7oc128kh1", 1},
    {"block4.l16.1x1", "ic992ih7oc128kh1", 1},
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
    {"mobilenet_v2", kMobileNetV2, std::size(kMobileNetV2)},
    {"densenet121", kDenseNet121, std::size(kDenseNet121)},
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
