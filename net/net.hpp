// A sequential network: layers, activations, gradients, one shared
// convolution workspace, and a timed SGD step.
//
//   Net net = build_network("alexnet", {.batch = 8, .classes = 1000});
//   net.choose(Policy::parse("find"));      // once per (conv layer, direction)
//   net.init(seed);                          // weights, zero momentum
//   StepTimes t; double loss = net.train_step(images, labels, sgd, iteration, &t);
//
// The convolution shapes of alexnet / alexnet-owt come from core/layers.hpp
// (network_layers), never retyped here; the network between them (ReLU, LRN,
// pooling, the classifier) follows Krizhevsky et al. 2012 and torchvision.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "core/cuda_stream.hpp"
#include "net/layers.hpp"

namespace convlab::train {

struct NetOptions {
  int batch = 8;
  int classes = 1000;
  float dropout = 0.5f;
  uint64_t seed = 1;               // dropout masks
  bool first_layer_grad = false;   // compute dL/d(input) of the first layer (nobody needs dL/dimage)
  bool fuse_conv_relu = true;      // a ReLU added right after a conv runs in the conv's output pass
  // Data-parallel ranks (dist/grad_sync.hpp): the index of this net's first sample in the
  // global batch. Dropout masks follow the global sample, so R ranks of batch B/R draw the
  // masks one net of batch B draws.
  int64_t sample_offset = 0;
  // The batch the loss gradient is a mean over (0: batch). Data-parallel ranks give the
  // global batch: their gradients then sum to the global mean (dist/grad_sync.hpp).
  int grad_batch = 0;
  ExecContext ctx;                 // device (cpu or cuda: every layer runs there), threads, stream
};

// Seconds per layer of one step. For conv layers: fwd, bwd_data, bwd_filter;
// for the others bwd_data holds the whole backward. A conv layer's fused bias (+
// ReLU) epilogue is part of its fwd (the output pass) and of its bwd_filter (the
// mask and the bias gradient, before the filter gradient); epilogue_fwd and
// epilogue_bwd say how much, so that fwd - epilogue_fwd is the convolution alone.
struct LayerTime {
  double fwd = 0, bwd_data = 0, bwd_filter = 0;
  double epilogue_fwd = 0, epilogue_bwd = 0;  // conv layers: parts of fwd and bwd_filter
  double total() const { return fwd + bwd_data + bwd_filter; }
};
// The bytes one net holds, by kind (the trainer's memory check before it builds
// one net per policy). On CUDA every buffer is device memory and the parameters
// also keep host copies (value, gradient, momentum: the staging tensors).
struct NetMemory {
  size_t activations = 0, gradients = 0;  // each layer's output and its gradient (+ dL/dimage when computed)
  size_t params = 0;                      // value + gradient + momentum of every parameter
  size_t layer_state = 0;                 // what LRN, pooling and dropout keep from forward: 4 bytes per output
  size_t io = 0;                          // CUDA: the uploaded batch, labels, the loss's scratch
  size_t workspace = 0;                   // the shared convolution workspace
  bool on_gpu = false;
  size_t device_bytes() const { return activations + gradients + params + layer_state + io + workspace; }
  size_t host_bytes() const { return on_gpu ? params + io : device_bytes(); }
};

struct StepTimes {
  std::vector<LayerTime> layers;  // net order
  double comm_wait = 0;           // data-parallel: the gradient hook's wait() (communication not hidden)
  double loss = 0;                // softmax cross-entropy forward + backward
  double update = 0;              // SGD over every parameter
  double total = 0;               // wall time of the whole step
};

// Called by the net during backward (data-parallel training, dist/grad_sync.hpp):
// backward_done(i) once layer i's parameter gradients are final (on CUDA: enqueued
// on the context's stream), layers in backward order; wait() after the last layer,
// before anything reads the gradients. The gradients must then hold what the
// update should apply.
class GradientHook {
 public:
  virtual ~GradientHook() = default;
  virtual void backward_done(size_t layer) = 0;
  virtual void wait() = 0;
};

class Net {
 public:
  Net(std::string name, Shape4 input, NetOptions opt);
  Net(Net&&) = default;
  // Adds a layer; its input is the previous layer's output.
  Layer& add(std::unique_ptr<Layer> layer);
  // Allocates activations and gradients; call after the last add().
  void finalize();

  const std::string& name() const { return name_; }
  const Shape4& input_shape() const { return input_; }
  const NetOptions& options() const { return opt_; }
  int classes() const;
  const std::vector<std::unique_ptr<Layer>>& layers() const { return layers_; }
  std::vector<ConvLayer*> conv_layers() const;
  std::vector<Param*> params() const;
  int64_t param_count() const;

  // Chooses every conv layer's algorithms with `policy` (Error when a layer has
  // none) and sizes the shared workspace. Returns the wall time of all choices.
  double choose(const Policy& policy, size_t workspace_limit = size_t(-1));
  // Test / expert path: `algo` for every direction of every conv layer.
  void inject_all(const Algorithm& algo);
  // Sizes the shared workspace for the current choices (choose/inject_all call it),
  // at least the reserve below; a new host buffer has its pages touched here, so
  // that no timed step pays their first-touch faults.
  void allocate_workspace();
  // Keeps at least `bytes` of workspace while choices are swapped back and forth
  // (find in context), so that no swap reallocates it; 0 gives the reserve up.
  void reserve_workspace(size_t bytes);
  // How many times the workspace buffer has been (re)allocated.
  int workspace_allocations() const { return ws_allocations_; }
  size_t workspace_bytes() const { return ws_.bytes(); }
  // What this net holds now (workspace: the current one); see NetMemory.
  NetMemory memory() const;

  // Fresh weights from `seed` (He-normal, zero biases) and zero momentum.
  void init(uint64_t seed);

  // Data-parallel: the hook sees every backward (null: none). Not owned.
  void set_gradient_hook(GradientHook* hook) { hook_ = hook; }
  GradientHook* gradient_hook() const { return hook_; }

  // Forward, loss, backward, SGD update. `iteration` seeds the dropout masks.
  // images and labels are host memory (on CUDA they are uploaded first, inside
  // the step's total time but outside every layer's).
  double train_step(const float* images, const int* labels, const SgdOptions& sgd, int64_t iteration,
                    StepTimes* times = nullptr);
  // Forward only (training-mode dropout off); returns the mean loss.
  double eval_loss(const float* images, const int* labels);
  // Forward + backward without the update: gradients land in the params (tests).
  double forward_backward(const float* images, const int* labels, int64_t iteration, StepTimes* times = nullptr,
                          bool training = true);

  // The last layer's output (the logits) of the last forward, copied to the host.
  std::vector<float> output() const;
  // Where the last forward first went non-finite: "conv3's output (element 17 is nan)"; "" when
  // every layer's output is finite. (The parameters are not looked at: after a step whose loss
  // is not finite the update has made them non-finite whatever the cause.)
  std::string first_non_finite_output() const;
  // Copies every parameter's device value, gradient and momentum to its host tensors (no-op on the CPU).
  void download_params();
  // What the first layer's skipped input gradient would cost now (one run, seconds);
  // 0 when it is computed anyway or the first layer is not a convolution.
  double time_first_layer_input_grad();

 private:
  std::string name_;
  Shape4 input_;
  NetOptions opt_;
  std::vector<std::unique_ptr<Layer>> layers_;
  // On the context's device: output of / gradient at the output of layer i,
  // dL/d(input) when first_layer_grad, and on CUDA the uploaded batch and the
  // loss's per-sample scratch.
  std::vector<DeviceBuffer> acts_, grads_;
  DeviceBuffer dinput_, d_images_, d_labels_, d_loss_;
  DeviceBuffer ws_;
  size_t ws_reserve_ = 0;
  int ws_allocations_ = 0;
  // CUDA: the input batch goes host -> pinned staging buffer -> d_images_ by
  // an asynchronous copy on the stream (core/cuda_stream.hpp), not a pageable
  // synchronous cudaMemcpy of the whole batch every step.
  std::unique_ptr<StagedUpload> image_upload_;
  const float* stage_images(const float* images);  // host images -> where layer 0 reads them
  const int* stage_labels(const int* labels);
  void sync() const { device_synchronize(opt_.ctx); }
  Shape4 tail_;
  bool finalized_ = false;
  GradientHook* hook_ = nullptr;
};

// "alexnet", "alexnet-owt", or "tiny" (a 2-conv network for tests and smoke
// runs, 3x16x16 input). Throws Error for anything else.
std::vector<std::string> trainable_networks();
Net build_network(const std::string& net, const NetOptions& opt);

}  // namespace convlab::train
