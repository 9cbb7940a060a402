// The layers of the training engine (Caffe-style: each layer owns its
// parameters, the net owns activations, gradients and the shared workspace).
//
// Device-agnostic interface: a layer is set up for one ExecContext and receives
// buffers of that context's device (on the CPU host pointers, on CUDA device
// pointers). Every layer has two implementations behind the same calls: the CPU
// one in net/layers.cpp (kernels/cpu/layers and the hand SGEMM, on OpenMP) and the CUDA one (the
// hand-written kernels of kernels/cuda/layers/, cuBLAS for fc). The convolution
// layer runs any registered algorithm of its device through the Algorithm
// interface; its bias uses the same kernels. On CUDA every launch goes to the
// context's stream and a layer returns without synchronising: the net
// synchronises where it reads a time.
//
// Tensors are NCHW fp32. Fully connected layers see (N, C*H*W).
//
//   conv      dst = conv(src, wei) + bias; the algorithm of each direction is
//             chosen once by a Policy (autotune/policy.hpp) at network setup
//   relu      y = max(x, 0)
//   lrn       AlexNet's local response normalisation across channels:
//             y = x / (k + alpha * sum_{|c'-c| <= size/2} x_c'^2)^beta
//             (Krizhevsky et al. 2012 as written: alpha is NOT divided by size;
//             Caffe and PyTorch divide it, so alpha 1e-4 here = their 5e-4)
//   maxpool   size x size window, stride; output floor((H - size)/stride) + 1
//   fc        y = x W^T + b, W (out, in); the hand SGEMM (kernels/cpu/gemm), cuBLAS on CUDA
//   dropout   inverted dropout: y = x * mask / (1 - p), mask seeded by
//             (seed, layer, iteration) so every policy sees the same masks
//   softmax cross-entropy: loss = mean_n -log softmax(z_n)[label_n]
//   (it and the SGD update, at the end of this header, are defined in
//   net/loss_update.cpp)
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "autotune/policy.hpp"
#include "core/device.hpp"
#include "core/tensor.hpp"
#include "kernels/cpu/gemm/sgemm.hpp"

namespace convlab::train {

struct Shape4 {
  int n = 0, c = 0, h = 0, w = 0;
  int64_t count() const { return int64_t(n) * c * h * w; }
  int64_t per_sample() const { return int64_t(c) * h * w; }
  std::string str() const;
  bool operator==(const Shape4&) const = default;
};

// A learnable tensor: value, gradient (overwritten by every backward) and the
// SGD momentum buffer. The host tensors are what the CPU path computes on; on
// CUDA the three live on the device (d_*) and the host tensors are staging
// copies: upload() after writing them (init_params does), download() to read
// the device's values (tests, checkpoints).
struct Param {
  std::string name;  // "conv1.wei"
  Tensor value, grad, momentum;
  bool decay = true;  // weight decay applies (weights yes, biases no)
  DeviceKind device = DeviceKind::cpu;
  DeviceBuffer d_value, d_grad, d_momentum;
  explicit Param(std::string n, std::vector<int64_t> shape, bool decay_ = true);

  // Where the value, gradient and momentum the layers use live (device pointers on CUDA).
  float* w() { return device == DeviceKind::cpu ? value.data() : d_value.f32(); }
  float* g() { return device == DeviceKind::cpu ? grad.data() : d_grad.f32(); }
  float* m() { return device == DeviceKind::cpu ? momentum.data() : d_momentum.f32(); }
  // Allocates the device copies (no-op for the CPU).
  void place(DeviceKind d);
  void upload();    // host tensors -> device copies (no-op on the CPU)
  void download();  // device copies -> host tensors (no-op on the CPU)
};

class Layer {
 public:
  explicit Layer(std::string name) : name_(std::move(name)) {}
  virtual ~Layer() = default;
  const std::string& name() const { return name_; }
  virtual std::string_view kind() const = 0;

  // Once, before anything else: the input shape and where to run. Returns the output shape.
  virtual Shape4 setup(const Shape4& in, const ExecContext& ctx) = 0;
  // y = f(x). `iteration` seeds stochastic layers (dropout); training=false is inference.
  virtual void forward(const float* x, float* y, bool training, int64_t iteration) = 0;
  // Parameter gradients (overwritten) and, when dx != nullptr, dx = dL/dx.
  // x and y are the values of the last forward.
  virtual void backward(const float* x, const float* y, const float* dy, float* dx) = 0;

  virtual std::vector<Param*> params() { return {}; }
  // He-normal weights (std sqrt(2 / fan_in)), zero biases, from `seed`.
  virtual void init_params(uint64_t seed) { (void)seed; }

  const Shape4& in_shape() const { return in_; }
  const Shape4& out_shape() const { return out_; }
  DeviceKind device() const { return ctx_.device; }

  // The bytes one forward (backward = false) or one backward pass (with the
  // input gradient) reads and writes in memory as implemented: each tensor
  // once, fp32, nothing re-read (the kernels are written to keep that promise;
  // a layer's time / (these bytes / measured bandwidth) is how close it runs to
  // its memory limit). Per layer:
  //   relu      fwd 8 B/element (x in, y out)      bwd 12 (x, dy in, dx out)
  //   lrn       fwd 8 (x, y)                       bwd 12 (x, dy, dx: s is recomputed)
  //   maxpool   fwd 4 in + 5 out (y + 1 B argmax)  bwd 5 out + 4 in (dx written once)
  //   dropout   fwd 8 (the mask is recomputed)     bwd 8
  //   conv, fc  x + weights + y forward; x + dy + weights + dW + dx backward
  //             (+ bias) -- their bound is arithmetic, see train/limit.hpp
  // On CUDA the LRN, pooling and dropout layers keep state (scale, int32
  // argmax, mask): their kernels move those bytes too, which this does not count.
  virtual double bytes_moved(bool backward) const = 0;
  // Bytes of state the layer keeps between forward and backward (argmax, masks).
  virtual size_t state_bytes() const { return 0; }

 protected:
  bool on_gpu() const { return ctx_.device == DeviceKind::cuda; }
  std::string name_;
  Shape4 in_, out_;
  ExecContext ctx_;
};

// ---- convolution --------------------------------------------------------------

class ConvLayer : public Layer {
 public:
  // `problem` is the convolution at the net's batch (n = batch), e.g. from network_layers().
  ConvLayer(std::string name, const ConvProblem& problem, bool bias = true);
  std::string_view kind() const override { return "conv"; }
  Shape4 setup(const Shape4& in, const ExecContext& ctx) override;
  void forward(const float* x, float* y, bool training, int64_t iteration) override;
  void backward(const float* x, const float* y, const float* dy, float* dx) override;
  std::vector<Param*> params() override;
  void init_params(uint64_t seed) override;

  const ConvProblem& problem() const { return p_; }
  // Chooses the algorithm of every direction with `policy` (Error when none can run).
  // Without need_input_grad (the first layer) bwd-data is not tuned: the default
  // policy's choice is recorded, used only to report what the gradient would cost.
  void choose(const Policy& policy, size_t workspace_limit = size_t(-1), bool need_input_grad = true);
  // Test / expert path: run `algo` for `dir` (any registered algorithm, the reference included).
  void inject(Direction dir, const Algorithm& algo, std::string why = "injected");
  const Choice& choice(Direction dir) const { return choice_[direction_index(dir)]; }
  bool chosen() const;
  // The largest workspace any chosen direction needs; the net hands one shared buffer.
  size_t workspace_bytes() const;
  void set_workspace(void* ws, size_t bytes) { ws_ = ws; ws_bytes_ = bytes; }

  // Seconds of the last backward's two halves (bias gradient counted with bwd-filter).
  double last_bwd_data_seconds() const { return t_bwd_data_; }
  double last_bwd_filter_seconds() const { return t_bwd_filter_; }
  // Seconds of the fused bias (+ ReLU) epilogue in the last forward and backward
  // (0 without one): parts of the forward's time and of last_bwd_filter_seconds().
  double last_epilogue_fwd_seconds() const { return t_epilogue_fwd_; }
  double last_epilogue_bwd_seconds() const { return t_epilogue_bwd_; }

  // One run of a direction on the layer's buffers (for timing what a skipped
  // input gradient would cost): dx receives diff_src.
  void run_bwd_data(const float* dy, float* dx);

  // Fuses the ReLU that follows into the output pass: forward writes
  // max(conv + bias, 0) in one pass over y (kernels/cpu/layers bias_relu_fwd);
  // backward masks dy in place (y > 0) and sums the bias gradient in the same
  // pass, before the filter and data gradients read it. Net::add does this for
  // a ReLU added right after a convolution (NetOptions::fuse_conv_relu).
  void fuse_relu(std::string relu_name) { fused_relu_ = std::move(relu_name); }
  const std::string& fused_relu() const { return fused_relu_; }
  double bytes_moved(bool backward) const override;

 private:
  ConvProblem p_;
  bool has_bias_;
  std::string fused_relu_;  // the fused ReLU's name ("" = none)
  std::unique_ptr<Param> wei_, bias_;
  Choice choice_[3];
  void* ws_ = nullptr;
  size_t ws_bytes_ = 0;
  double t_bwd_data_ = 0, t_bwd_filter_ = 0, t_epilogue_fwd_ = 0, t_epilogue_bwd_ = 0;
  void run(Direction dir, const float* src, const float* wei, const float* dst, float* out);
};

// ---- the rest ------------------------------------------------------------------

class ReluLayer : public Layer {
 public:
  using Layer::Layer;
  std::string_view kind() const override { return "relu"; }
  Shape4 setup(const Shape4& in, const ExecContext& ctx) override;
  void forward(const float* x, float* y, bool training, int64_t iteration) override;
  void backward(const float* x, const float* y, const float* dy, float* dx) override;
  double bytes_moved(bool backward) const override { return double(in_.count()) * (backward ? 12 : 8); }
};

class LrnLayer : public Layer {
 public:
  LrnLayer(std::string name, int size = 5, float alpha = 1e-4f, float beta = 0.75f, float k = 2.f)
      : Layer(std::move(name)), size_(size), alpha_(alpha), beta_(beta), k_(k) {}
  std::string_view kind() const override { return "lrn"; }
  Shape4 setup(const Shape4& in, const ExecContext& ctx) override;
  void forward(const float* x, float* y, bool training, int64_t iteration) override;
  void backward(const float* x, const float* y, const float* dy, float* dx) override;
  double bytes_moved(bool backward) const override { return double(in_.count()) * (backward ? 12 : 8); }
  size_t state_bytes() const override { return scale_.bytes(); }

 private:
  int size_;
  float alpha_, beta_, k_;
  DeviceBuffer scale_;  // CUDA only: k + alpha * sum x^2, kept from forward (the CPU recomputes it)
};

class MaxPoolLayer : public Layer {
 public:
  MaxPoolLayer(std::string name, int size = 3, int stride = 2) : Layer(std::move(name)), size_(size), stride_(stride) {}
  std::string_view kind() const override { return "maxpool"; }
  Shape4 setup(const Shape4& in, const ExecContext& ctx) override;
  void forward(const float* x, float* y, bool training, int64_t iteration) override;
  void backward(const float* x, const float* y, const float* dy, float* dx) override;
  double bytes_moved(bool) const override { return double(in_.count()) * 4 + double(out_.count()) * 5; }
  size_t state_bytes() const override { return argmax_.bytes(); }

 private:
  int size_, stride_;
  // Per output, the winner: on the CPU one byte, its place in the window (r *
  // size + s, kernels/cpu/layers); on CUDA an int32 index into the input plane.
  DeviceBuffer argmax_;
};

class FcLayer : public Layer {
 public:
  // init_std > 0: N(0, init_std^2) weights instead of He-normal (the classifier:
  // Caffe's AlexNet uses 0.01 for fc8, which starts the loss near ln(classes)).
  FcLayer(std::string name, int out_features, float init_std = 0.f)
      : Layer(std::move(name)), out_features_(out_features), init_std_(init_std) {}
  std::string_view kind() const override { return "fc"; }
  Shape4 setup(const Shape4& in, const ExecContext& ctx) override;
  void forward(const float* x, float* y, bool training, int64_t iteration) override;
  void backward(const float* x, const float* y, const float* dy, float* dx) override;
  std::vector<Param*> params() override { return {wei_.get(), bias_.get()}; }
  void init_params(uint64_t seed) override;
  double bytes_moved(bool backward) const override;
  size_t state_bytes() const override { return gemm_ws_.bytes(); }

 private:
  int out_features_;
  float init_std_;
  std::unique_ptr<Param> wei_, bias_;
  AlignedBuffer<unsigned char> gemm_ws_;  // CPU: the SGEMM's packing space for the largest of the three calls
  cpu::SgemmConfig gemm_cfg() const;
};

class DropoutLayer : public Layer {
 public:
  DropoutLayer(std::string name, float p, uint64_t seed) : Layer(std::move(name)), p_(p), seed_(seed) {}
  std::string_view kind() const override { return "dropout"; }
  Shape4 setup(const Shape4& in, const ExecContext& ctx) override;
  void forward(const float* x, float* y, bool training, int64_t iteration) override;
  void backward(const float* x, const float* y, const float* dy, float* dx) override;
  double bytes_moved(bool) const override { return double(in_.count()) * 8; }
  size_t state_bytes() const override { return mask_.bytes(); }
  // The layer's masks are the slice starting at global sample `first` of the
  // masks a net of the whole global batch draws (NetOptions::sample_offset).
  void set_first_sample(int64_t first) { first_sample_ = first; }

 private:
  float p_;
  uint64_t seed_;
  int64_t first_sample_ = 0;
  // CUDA only: 0 or 1/(1-p) from the last training forward. The CPU recomputes
  // the mask from key_ (the same counter-based values, bit for bit).
  DeviceBuffer mask_;
  uint64_t key_ = 0;
  bool last_training_ = false;
};

// Mean softmax cross-entropy of logits (n, classes) against integer labels;
// dlogits = (softmax - onehot) / grad_n (0: n). Returns the loss (accumulated in double).
// Throws Error for a label outside [0, classes).
double softmax_cross_entropy(const float* logits, const int* labels, int n, int classes, float* dlogits,
                             int threads = 0, int grad_n = 0);
// The same on ctx's device: logits, dlogits, device_labels (int32) and
// loss_scratch (n doubles) are device pointers on CUDA; host_labels are
// checked on the host first. Synchronises (it returns the loss).
double softmax_cross_entropy(const ExecContext& ctx, const float* logits, const int* host_labels,
                             const int* device_labels, int n, int classes, float* dlogits, double* loss_scratch,
                             int grad_n = 0);

// SGD with momentum and weight decay (PyTorch semantics):
//   g' = g + weight_decay * w (decay params only);  v = momentum * v + g';  w -= lr * v
struct SgdOptions {
  float lr = 0.01f;
  float momentum = 0.9f;
  float weight_decay = 5e-4f;
};
void sgd_update(Param& p, const SgdOptions& opt, int threads = 0);
// The same on ctx's device (the param's device copies on CUDA; asynchronous there).
void sgd_update(Param& p, const SgdOptions& opt, const ExecContext& ctx);
// Every parameter in one pass on the CPU (kernels/cpu/layers sgd_update: the
// tensors end to end, one contiguous range per thread); per tensor on CUDA.
// Reads and writes 20 bytes per parameter (w, v in and out, g in).
void sgd_update(const std::vector<Param*>& params, const SgdOptions& opt, const ExecContext& ctx);

}  // namespace convlab::train
