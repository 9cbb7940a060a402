// The per-layer algorithm comparison of `convlab report`: every available
// algorithm of a device on every convolution layer of a network, in every
// direction, timed on the same random data (median of a few runs).
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "core/device.hpp"

namespace convlab::train {

struct LayerAlgoTime {
  std::string layer, dir, algo, family;
  bool supported = true;
  std::string reason;  // why not, when !supported
  double median_s = 0, gflops = 0;
  size_t workspace_bytes = 0;
};

std::vector<LayerAlgoTime> compare_layer_algorithms(const std::string& net, int batch, const ExecContext& ctx,
                                                    double max_seconds_per_case = 0.3,
                                                    const std::function<void(const std::string&)>& log = {});

std::string comparison_markdown(const std::vector<LayerAlgoTime>& rows);
std::string comparison_csv(const std::vector<LayerAlgoTime>& rows);
std::string comparison_json(const std::vector<LayerAlgoTime>& rows);  // a JSON array

}  // namespace convlab::train
