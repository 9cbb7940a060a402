// Training data: synthetic (default, fixed seed) or a user's .npy batch file.
//
//   random    uniform noise images, uniform labels: nothing to learn, for timing
//   pattern   a learnable task: each class c has a fixed smooth pattern (a sum of
//             three oriented sinusoids per channel, from a hash of (seed, c));
//             an image is its class's pattern plus Gaussian noise (std `noise`).
//             A short run shows the loss falling.
//   npy       images (N, C, H, W) float32 .npy + labels (N,) .npy (float32 holding
//             integers 0..classes-1, e.g. numpy `labels.astype(np.float32)`),
//             served in order in batches, wrapping around. C, H, W must equal
//             the network's input exactly (no resizing); N >= batch.
//
// Every source is deterministic: batch i is the same for every policy.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/tensor.hpp"
#include "net/layers.hpp"

namespace convlab::train {

struct Batch {
  Tensor images;            // (N, C, H, W)
  std::vector<int> labels;  // N
};

class DataSource {
 public:
  virtual ~DataSource() = default;
  // Batch number `index` (0, 1, ...), always the same for the same index.
  virtual void batch(int64_t index, Batch& out) = 0;
  virtual std::string describe() const = 0;
};

std::unique_ptr<DataSource> make_synthetic(const std::string& kind, const Shape4& input, int classes, uint64_t seed,
                                           float noise = 1.0f);
std::unique_ptr<DataSource> make_npy(const std::string& images_path, const std::string& labels_path,
                                     const Shape4& input, int classes);

}  // namespace convlab::train
