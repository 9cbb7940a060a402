#include "net/net.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/error.hpp"
#include "core/layers.hpp"
#include "core/timing.hpp"

namespace convlab::train {

Net::Net(std::string name, Shape4 input, NetOptions opt) : name_(std::move(name)), input_(input), opt_(opt) {
  if (input.n < 1 || input.c < 1 || input.h < 1 || input.w < 1) fail("network input " + input.str() + " is empty");
  if (opt_.ctx.device == DeviceKind::cuda && !cuda_info().available)
    fail("cannot train '" + name_ + "' on cuda: no CUDA device (" + cuda_info().reason + ")");
  tail_ = input;
}

Layer& Net::add(std::unique_ptr<Layer> layer) {
  if (finalized_) fail("Net::add after finalize()");
  if (opt_.fuse_conv_relu && layer->kind() == "relu" && !layers_.empty())
    if (auto* c = dynamic_cast<ConvLayer*>(layers_.back().get()); c && c->fused_relu().empty()) {
      c->fuse_relu(layer->name());  // the ReLU runs in the conv's output pass (net/layers.hpp)
      return *c;
    }
  tail_ = naming_memory(layer->name() + "'s parameters and state", [&] { return layer->setup(tail_, opt_.ctx); });
  layers_.push_back(std::move(layer));
  return *layers_.back();
}

void Net::finalize() {
  if (layers_.empty()) fail("network '" + name_ + "' has no layers");
  if (tail_.h != 1 || tail_.w != 1) fail("network '" + name_ + "' must end in a fully connected layer");
  const DeviceKind dev = opt_.ctx.device;
  auto buffer = [&](const std::string& what, size_t bytes) {
    return naming_memory(what, [&] { return DeviceBuffer(dev, bytes); });
  };
  for (auto& l : layers_) {
    acts_.push_back(buffer(l->name() + "'s output", size_t(l->out_shape().count()) * sizeof(float)));
    grads_.push_back(buffer(l->name() + "'s output gradient", size_t(l->out_shape().count()) * sizeof(float)));
  }
  for (auto& l : layers_)
    if (auto* d = dynamic_cast<DropoutLayer*>(l.get())) d->set_first_sample(opt_.sample_offset);
  if (opt_.first_layer_grad) dinput_ = buffer("the input gradient", size_t(input_.count()) * sizeof(float));
  if (dev != DeviceKind::cpu) {
    d_images_ = buffer("the uploaded images", size_t(input_.count()) * sizeof(float));
    image_upload_ = std::make_unique<StagedUpload>(d_images_.bytes());
    d_labels_ = buffer("the uploaded labels", size_t(input_.n) * sizeof(int));
    d_loss_ = buffer("the loss's scratch", size_t(input_.n) * sizeof(double));
  }
  finalized_ = true;
}

int Net::classes() const { return tail_.c; }

std::vector<ConvLayer*> Net::conv_layers() const {
  std::vector<ConvLayer*> v;
  for (auto& l : layers_)
    if (auto* c = dynamic_cast<ConvLayer*>(l.get())) v.push_back(c);
  return v;
}

std::vector<Param*> Net::params() const {
  std::vector<Param*> v;
  for (auto& l : layers_)
    for (Param* p : l->params()) v.push_back(p);
  return v;
}

int64_t Net::param_count() const {
  int64_t n = 0;
  for (Param* p : params()) n += p->value.size();
  return n;
}

double Net::choose(const Policy& policy, size_t workspace_limit) {
  const double t0 = now_seconds();
  for (ConvLayer* c : conv_layers())
    c->choose(policy, workspace_limit, opt_.first_layer_grad || c != layers_.front().get());
  const double t = now_seconds() - t0;
  allocate_workspace();
  return t;
}

void Net::inject_all(const Algorithm& algo) {
  for (ConvLayer* c : conv_layers())
    for (Direction d : kAllDirections) c->inject(d, algo);
  allocate_workspace();
}

void Net::allocate_workspace() {
  size_t ws = ws_reserve_;
  for (ConvLayer* c : conv_layers()) ws = std::max(ws, c->workspace_bytes());
  if (ws != ws_.bytes()) {
    ws_.reset();
    ws_ = naming_memory("the convolution workspace", [&] { return DeviceBuffer(opt_.ctx.device, ws); });
    ++ws_allocations_;
    if (opt_.ctx.device == DeviceKind::cpu && ws) std::memset(ws_.get(), 0, ws);  // first touch, here
  }
  for (ConvLayer* c : conv_layers()) c->set_workspace(ws_.get(), ws_.bytes());
}

void Net::reserve_workspace(size_t bytes) {
  ws_reserve_ = bytes;
  allocate_workspace();
}

NetMemory Net::memory() const {
  NetMemory m;
  m.on_gpu = opt_.ctx.device != DeviceKind::cpu;
  for (size_t i = 0; i < layers_.size(); ++i) {
    m.activations += acts_[i].bytes();
    m.gradients += grads_[i].bytes();
    m.layer_state += layers_[i]->state_bytes();
  }
  m.gradients += dinput_.bytes();
  for (Param* p : params()) m.params += 3 * size_t(p->value.size()) * sizeof(float);
  m.io = d_images_.bytes() + d_labels_.bytes() + d_loss_.bytes();
  m.workspace = ws_.bytes();
  return m;
}

void Net::init(uint64_t seed) {
  for (auto& l : layers_) l->init_params(seed);
  sync();
}

const float* Net::stage_images(const float* images) {
  if (opt_.ctx.device == DeviceKind::cpu) return images;
  image_upload_->upload(d_images_.get(), images, d_images_.bytes(), opt_.ctx.stream);  // ordered before layer 0
  return d_images_.f32();
}

const int* Net::stage_labels(const int* labels) {
  if (opt_.ctx.device == DeviceKind::cpu) return labels;
  copy_to_device(opt_.ctx.device, d_labels_.get(), labels, d_labels_.bytes());
  return static_cast<const int*>(d_labels_.get());
}

std::vector<float> Net::output() const {
  if (!finalized_) fail("Net::output before finalize()");
  std::vector<float> out(acts_.back().bytes() / sizeof(float));
  sync();
  copy_to_host(opt_.ctx.device, out.data(), acts_.back().get(), acts_.back().bytes());
  return out;
}

namespace {

// The first element of `bytes` bytes at `p` on `d` that is NaN or Inf (-1: none).
int64_t first_non_finite(DeviceKind d, const void* p, size_t bytes, float* value) {
  const size_t n = bytes / sizeof(float);
  std::vector<float> copy;
  const float* x = static_cast<const float*>(p);
  if (d != DeviceKind::cpu) {
    copy.resize(n);
    copy_to_host(d, copy.data(), p, n * sizeof(float));
    x = copy.data();
  }
  for (size_t i = 0; i < n; ++i)
    if (!std::isfinite(x[i])) {
      *value = x[i];
      return int64_t(i);
    }
  return -1;
}

}  // namespace

std::string Net::first_non_finite_output() const {
  if (!finalized_) return {};
  sync();
  for (size_t i = 0; i < layers_.size(); ++i) {
    float v = 0;
    const int64_t at = first_non_finite(opt_.ctx.device, acts_[i].get(), acts_[i].bytes(), &v);
    if (at < 0) continue;
    return layers_[i]->name() + "'s output (element " + std::to_string(at) + " is " +
           (std::isnan(v) ? "nan" : v > 0 ? "inf" : "-inf") + ")";
  }
  return {};
}

void Net::download_params() {
  sync();
  for (Param* p : params()) p->download();
}

double Net::forward_backward(const float* images, const int* labels, int64_t iteration, StepTimes* times,
                             bool training) {
  if (!finalized_) fail("Net::forward_backward before finalize()");
  const size_t L = layers_.size();
  if (times) times->layers.assign(L, LayerTime{});
  // On CUDA a layer's time is read after synchronising the stream (only when
  // asked for times; conv layers' backward synchronises anyway to time its two halves).
  const bool gpu = opt_.ctx.device != DeviceKind::cpu;
  const float* in = stage_images(images);
  const int* dlabels = stage_labels(labels);
  if (gpu && times) sync();
  for (size_t i = 0; i < L; ++i) {
    const float* x = i == 0 ? in : acts_[i - 1].f32();
    const double t0 = now_seconds();
    layers_[i]->forward(x, acts_[i].f32(), training, iteration);
    if (gpu && times) sync();
    if (times) {
      times->layers[i].fwd = now_seconds() - t0;
      if (auto* c = dynamic_cast<ConvLayer*>(layers_[i].get())) times->layers[i].epilogue_fwd = c->last_epilogue_fwd_seconds();
    }
  }
  double t0 = now_seconds();
  const double loss = softmax_cross_entropy(opt_.ctx, acts_.back().f32(), labels, dlabels, input_.n, classes(),
                                            grads_.back().f32(), static_cast<double*>(d_loss_.get()), opt_.grad_batch);
  if (times) times->loss = now_seconds() - t0;
  for (size_t i = L; i-- > 0;) {
    const float* x = i == 0 ? in : acts_[i - 1].f32();
    float* dx = i == 0 ? (opt_.first_layer_grad ? dinput_.f32() : nullptr) : grads_[i - 1].f32();
    t0 = now_seconds();
    layers_[i]->backward(x, acts_[i].f32(), grads_[i].f32(), dx);
    if (gpu && times) sync();
    if (times) {
      const double t = now_seconds() - t0;
      if (auto* c = dynamic_cast<ConvLayer*>(layers_[i].get())) {
        times->layers[i].bwd_data = c->last_bwd_data_seconds();
        times->layers[i].bwd_filter = t - c->last_bwd_data_seconds();
        times->layers[i].epilogue_bwd = c->last_epilogue_bwd_seconds();
      } else {
        times->layers[i].bwd_data = t;
      }
    }
    if (hook_) hook_->backward_done(i);
  }
  if (hook_) {
    t0 = now_seconds();
    hook_->wait();
    if (times) times->comm_wait = now_seconds() - t0;
  }
  return loss;
}

double Net::train_step(const float* images, const int* labels, const SgdOptions& sgd, int64_t iteration,
                       StepTimes* times) {
  const double t0 = now_seconds();
  const double loss = forward_backward(images, labels, iteration, times, true);
  const double t1 = now_seconds();
  sgd_update(params(), sgd, opt_.ctx);
  sync();
  if (times) {
    times->update = now_seconds() - t1;
    times->total = now_seconds() - t0;
  }
  return loss;
}

double Net::eval_loss(const float* images, const int* labels) {
  if (!finalized_) fail("Net::eval_loss before finalize()");
  const float* in = stage_images(images);
  const int* dlabels = stage_labels(labels);
  for (size_t i = 0; i < layers_.size(); ++i)
    layers_[i]->forward(i == 0 ? in : acts_[i - 1].f32(), acts_[i].f32(), false, 0);
  return softmax_cross_entropy(opt_.ctx, acts_.back().f32(), labels, dlabels, input_.n, classes(), nullptr,
                               static_cast<double*>(d_loss_.get()));
}

double Net::time_first_layer_input_grad() {
  if (opt_.first_layer_grad || layers_.empty()) return 0;
  auto* c = dynamic_cast<ConvLayer*>(layers_.front().get());
  if (!c || !c->choice(Direction::bwd_data).algo) return 0;
  DeviceBuffer dx(opt_.ctx.device, size_t(input_.count()) * sizeof(float));
  c->run_bwd_data(grads_.front().f32(), dx.f32());  // warm
  sync();
  std::vector<double> s;
  for (int r = 0; r < 3; ++r) {
    const double t0 = now_seconds();
    c->run_bwd_data(grads_.front().f32(), dx.f32());
    sync();
    s.push_back(now_seconds() - t0);
  }
  std::sort(s.begin(), s.end());
  return s[1];
}

// ---- networks ----------------------------------------------------------------------

std::vector<std::string> trainable_networks() { return {"alexnet", "alexnet-owt", "tiny"}; }

namespace {

std::unique_ptr<Layer> conv(const NetLayer& l) {
  const std::string short_name = l.id.substr(l.id.find('.') + 1);
  return std::make_unique<ConvLayer>(short_name, l.problem);
}

}  // namespace

Net build_network(const std::string& net, const NetOptions& opt) {
  if (opt.batch < 1) fail("batch must be positive");
  if (opt.classes < 2) fail("a classifier needs at least 2 classes (got " + std::to_string(opt.classes) + ")");
  if (net == "alexnet" || net == "alexnet-owt") {
    const std::vector<NetLayer> cl = network_layers(net, opt.batch);
    if (cl.size() != 5) fail(net + ": expected 5 convolution layers in core/layers.hpp");
    const ConvProblem& c1 = cl[0].problem;
    Net n(net, {opt.batch, c1.c, c1.h, c1.w}, opt);
    const bool lrn = net == "alexnet";  // the original; the one-weird-trick variant has none
    // features
    n.add(conv(cl[0]));
    n.add(std::make_unique<ReluLayer>("relu1"));
    if (lrn) n.add(std::make_unique<LrnLayer>("norm1"));
    n.add(std::make_unique<MaxPoolLayer>("pool1"));
    n.add(conv(cl[1]));
    n.add(std::make_unique<ReluLayer>("relu2"));
    if (lrn) n.add(std::make_unique<LrnLayer>("norm2"));
    n.add(std::make_unique<MaxPoolLayer>("pool2"));
    n.add(conv(cl[2]));
    n.add(std::make_unique<ReluLayer>("relu3"));
    n.add(conv(cl[3]));
    n.add(std::make_unique<ReluLayer>("relu4"));
    n.add(conv(cl[4]));
    n.add(std::make_unique<ReluLayer>("relu5"));
    n.add(std::make_unique<MaxPoolLayer>("pool5"));
    // classifier
    n.add(std::make_unique<FcLayer>("fc6", 4096));
    n.add(std::make_unique<ReluLayer>("relu6"));
    n.add(std::make_unique<DropoutLayer>("drop6", opt.dropout, opt.seed));
    n.add(std::make_unique<FcLayer>("fc7", 4096));
    n.add(std::make_unique<ReluLayer>("relu7"));
    n.add(std::make_unique<DropoutLayer>("drop7", opt.dropout, opt.seed));
    n.add(std::make_unique<FcLayer>("fc8", opt.classes, 0.01f));
    n.finalize();
    return n;
  }
  if (net == "tiny") {
    // A test-sized network with every layer kind (conv with groups, LRN, pooling, FC, dropout).
    const std::vector<NetLayer> cl = network_layers(net, opt.batch);
    if (cl.size() != 2) fail(net + ": expected 2 convolution layers in core/layers.hpp");
    Net n(net, {opt.batch, 3, 16, 16}, opt);
    n.add(conv(cl[0]));
    n.add(std::make_unique<ReluLayer>("relu1"));
    n.add(std::make_unique<LrnLayer>("norm1"));
    n.add(std::make_unique<MaxPoolLayer>("pool1"));  // 16 -> 7
    n.add(conv(cl[1]));
    n.add(std::make_unique<ReluLayer>("relu2"));
    n.add(std::make_unique<MaxPoolLayer>("pool2"));  // 7 -> 3
    n.add(std::make_unique<FcLayer>("fc3", 32));
    n.add(std::make_unique<ReluLayer>("relu3"));
    n.add(std::make_unique<DropoutLayer>("drop3", opt.dropout, opt.seed));
    n.add(std::make_unique<FcLayer>("fc4", opt.classes, 0.01f));
    n.finalize();
    return n;
  }
  std::string known;
  for (auto& s : trainable_networks()) known += (known.empty() ? "" : ", ") + s;
  fail("cannot train '" + printable(net) + "' (trainable networks: " + known + ")");
}

}  // namespace convlab::train
