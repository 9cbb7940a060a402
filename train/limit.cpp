#include "train/limit.hpp"

#include <algorithm>

#include "core/error.hpp"
#include "core/peak.hpp"

namespace convlab::train {

namespace {

// The three directions of a layer whose forward reads `src` and `wei` and writes
// `dst` elements with `flops` FLOPs; backward-data only with the input gradient.
std::vector<Pass> three_passes(double flops, double src, double wei, double dst, bool input_grad) {
  const double bytes = 4 * (src + wei + dst);  // every direction touches the same three tensors once
  std::vector<Pass> out{{flops, bytes}, {flops, bytes}};
  if (input_grad) out.push_back({flops, bytes});
  return out;
}

}  // namespace

std::vector<Pass> layer_passes(const Layer& layer, bool input_grad) {
  if (const auto* c = dynamic_cast<const ConvLayer*>(&layer)) {
    const ConvProblem& p = c->problem();
    return three_passes(p.flops(), double(p.src_elems()), double(p.wei_elems()), double(p.dst_elems()), input_grad);
  }
  if (layer.kind() == "fc") {
    const double n = layer.in_shape().n, in = double(layer.in_shape().per_sample()), out = layer.out_shape().c;
    return three_passes(2.0 * n * in * out, n * in, in * out, n * out, input_grad);
  }
  return {};
}

double layer_flops(const Layer& layer, bool input_grad) {
  double f = 0;
  for (const Pass& p : layer_passes(layer, input_grad)) f += p.flops;
  return f;
}

double layer_bytes(const Layer& layer, bool input_grad) {
  if (const auto* c = dynamic_cast<const ConvLayer*>(&layer)) {
    const bool relu = !c->fused_relu().empty();
    const double y = double(layer.out_shape().count());
    return relu ? y * (8 + 12) : y * (8 + 4);  // bias (+ ReLU): forward pass over y, backward pass over dy
  }
  if (layer.kind() == "fc") return 0;
  return layer.bytes_moved(false) + (input_grad ? layer.bytes_moved(true) : 0);
}

StepWork step_work(const Net& net) {
  StepWork w;
  const auto& layers = net.layers();
  for (size_t i = 0; i < layers.size(); ++i) {
    const bool dx = i > 0 || net.options().first_layer_grad;
    const double f = layer_flops(*layers[i], dx);
    if (layers[i]->kind() == "conv") w.conv_flops += f;
    else w.fc_flops += f;
    for (const Pass& p : layer_passes(*layers[i], dx)) w.passes.push_back(p);
    w.other_bytes += layer_bytes(*layers[i], dx);
  }
  w.other_bytes += 8.0 * net.input_shape().n * net.classes();      // the loss: logits in, their gradient out
  w.other_bytes += 20.0 * double(net.param_count());               // SGD: w, v in and out, g in
  return w;
}

double StepLimit::pass_seconds(const Pass& p) const {
  return std::max(p.flops / (peak_gflops * 1e9), p.bytes / (bandwidth_gbs * 1e9));
}

double StepLimit::layer_seconds(const Layer& layer, bool input_grad) const {
  if (peak_gflops <= 0 || bandwidth_gbs <= 0) return 0;
  double s = layer_bytes(layer, input_grad) / (bandwidth_gbs * 1e9);
  for (const Pass& p : layer_passes(layer, input_grad)) s += pass_seconds(p);
  return s;
}

StepLimit step_limit(const StepWork& work, double peak_gflops, double bandwidth_gbs, int threads) {
  if (!(peak_gflops > 0) || !(bandwidth_gbs > 0)) fail("step_limit: the peak and the bandwidth must be positive");
  StepLimit l;
  l.conv_flops = work.conv_flops;
  l.fc_flops = work.fc_flops;
  l.other_bytes = work.other_bytes;
  l.peak_gflops = peak_gflops;
  l.bandwidth_gbs = bandwidth_gbs;
  l.threads = threads;
  for (const Pass& p : work.passes) {
    const double s = l.pass_seconds(p);
    if (p.bytes / (bandwidth_gbs * 1e9) > p.flops / (peak_gflops * 1e9)) {
      l.memory_bound_seconds += s;
      ++l.memory_bound_passes;
    } else {
      l.compute_bound_seconds += s;
    }
    ++l.passes;
  }
  l.seconds = l.compute_bound_seconds + l.memory_bound_seconds + work.other_bytes / (bandwidth_gbs * 1e9);
  return l;
}

StepLimit measure_step_limit(const Net& net, int threads) {
  const PeakResult peak = measure_fma_peak(threads);
  const double bw = measure_stream_bandwidth(threads);
  return step_limit(step_work(net), peak.gflops, bw, threads);
}

}  // namespace convlab::train
