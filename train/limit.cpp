#include "train/limit.hpp"

#include "core/error.hpp"
#include "core/peak.hpp"

namespace convlab::train {

double layer_flops(const Layer& layer, bool input_grad) {
  if (const auto* c = dynamic_cast<const ConvLayer*>(&layer)) return c->problem().flops() * (input_grad ? 3 : 2);
  if (layer.kind() == "fc") {
    const Shape4& in = layer.in_shape();
    const double one = 2.0 * in.n * double(in.per_sample()) * double(layer.out_shape().c);
    return one * (input_grad ? 3 : 2);
  }
  return 0;
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
    w.other_bytes += layer_bytes(*layers[i], dx);
  }
  w.other_bytes += 8.0 * net.input_shape().n * net.classes();      // the loss: logits in, their gradient out
  w.other_bytes += 20.0 * double(net.param_count());               // SGD: w, v in and out, g in
  return w;
}

double StepLimit::layer_seconds(const Layer& layer, bool input_grad) const {
  if (peak_gflops <= 0 || bandwidth_gbs <= 0) return 0;
  return layer_flops(layer, input_grad) / (peak_gflops * 1e9) + layer_bytes(layer, input_grad) / (bandwidth_gbs * 1e9);
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
  l.seconds = (work.conv_flops + work.fc_flops) / (peak_gflops * 1e9) + work.other_bytes / (bandwidth_gbs * 1e9);
  return l;
}

StepLimit measure_step_limit(const Net& net, int threads) {
  const PeakResult peak = measure_fma_peak(threads);
  const double bw = measure_stream_bandwidth(threads);
  return step_limit(step_work(net), peak.gflops, bw, threads);
}

}  // namespace convlab::train
