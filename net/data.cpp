#include "net/data.hpp"

#include <cmath>
#include <cstring>

#include "core/error.hpp"
#include "core/npy.hpp"

namespace convlab::train {

namespace {

uint64_t mix(uint64_t z) {
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
double u01(uint64_t key) { return double(mix(key) >> 11) * 0x1.0p-53; }
double normal(uint64_t key) {
  const double a = std::max(u01(key * 2 + 1), 1e-300), b = u01(key * 2 + 2);
  return std::sqrt(-2.0 * std::log(a)) * std::cos(6.283185307179586 * b);
}

class Synthetic : public DataSource {
 public:
  Synthetic(bool pattern, Shape4 in, int classes, uint64_t seed, float noise)
      : pattern_(pattern), in_(in), classes_(classes), seed_(seed), noise_(noise) {}

  void batch(int64_t index, Batch& out) override {
    out.images = Tensor({in_.n, in_.c, in_.h, in_.w});
    out.labels.assign(size_t(in_.n), 0);
    const uint64_t base = mix(seed_ ^ mix(uint64_t(index) + 0x51ED270B27D1ull));
    for (int i = 0; i < in_.n; ++i) out.labels[size_t(i)] = int(mix(base + uint64_t(i)) % uint64_t(classes_));
    const int64_t per = in_.per_sample(), hw = int64_t(in_.h) * in_.w;
    float* x = out.images.data();
#pragma omp parallel for schedule(static)
    for (int i = 0; i < in_.n; ++i) {
      const uint64_t noise_key = mix(base ^ (uint64_t(i) << 32)) * 0x10000;
      float* xi = x + int64_t(i) * per;
      if (!pattern_) {
        for (int64_t j = 0; j < per; ++j) xi[j] = float(2.0 * u01(noise_key + uint64_t(j)) - 1.0);
        continue;
      }
      const int label = out.labels[size_t(i)];
      for (int c = 0; c < in_.c; ++c) {
        // Three oriented waves per (class, channel), 0.5..3 cycles across the image.
        double fx[3], fy[3], ph[3];
        for (int m = 0; m < 3; ++m) {
          const uint64_t k = mix(seed_ * 7919 + uint64_t(label) * 131 + uint64_t(c) * 17 + uint64_t(m));
          const double f = 0.5 + 2.5 * u01(k), th = 6.283185307179586 * u01(k + 1);
          fx[m] = 6.283185307179586 * f * std::cos(th) / in_.w;
          fy[m] = 6.283185307179586 * f * std::sin(th) / in_.h;
          ph[m] = 6.283185307179586 * u01(k + 2);
        }
        for (int y = 0; y < in_.h; ++y)
          for (int xx = 0; xx < in_.w; ++xx) {
            double v = 0;
            for (int m = 0; m < 3; ++m) v += std::sin(fx[m] * xx + fy[m] * y + ph[m]);
            const int64_t j = int64_t(c) * hw + int64_t(y) * in_.w + xx;
            xi[j] = float(v / std::sqrt(1.5) + noise_ * normal(noise_key + uint64_t(j)));
          }
      }
    }
  }

  std::string describe() const override {
    return pattern_ ? "synthetic 'pattern' task (" + std::to_string(classes_) + " classes, class patterns + noise std " +
                          std::to_string(noise_).substr(0, 4) + ", seed " + std::to_string(seed_) + ")"
                    : "synthetic 'random' data (uniform noise, random labels, seed " + std::to_string(seed_) + ")";
  }

 private:
  bool pattern_;
  Shape4 in_;
  int classes_;
  uint64_t seed_;
  float noise_;
};

class NpyData : public DataSource {
 public:
  NpyData(const std::string& ip, const std::string& lp, Shape4 in, int classes) : in_(in), ip_(ip) {
    images_ = read_npy(ip);
    const Tensor labels = read_npy(lp);
    if (images_.shape.size() != 4)
      fail("images '" + ip + "' must be (N, C, H, W) float32, got shape " + images_.shape_string());
    if (images_.shape[1] != in.c || images_.shape[2] != in.h || images_.shape[3] != in.w)
      fail("images '" + ip + "' are " + images_.shape_string() + " but the network takes (N, " + std::to_string(in.c) +
           ", " + std::to_string(in.h) + ", " + std::to_string(in.w) + ") (no resizing is done)");
    // A NaN or Inf pixel would train silently (ReLU and max pooling pass a finite value on): refused here.
    const float* px = images_.data();
    for (int64_t i = 0; i < images_.size(); ++i)
      if (!std::isfinite(px[i])) {
        const int64_t per = in.per_sample(), hw = int64_t(in.h) * in.w;
        fail("images '" + ip + "': element " + std::to_string(i) + " (sample " + std::to_string(i / per) +
             ", channel " + std::to_string(i % per / hw) + ", row " + std::to_string(i % hw / in.w) + ", column " +
             std::to_string(i % in.w) + ") is " + (std::isnan(px[i]) ? "nan" : px[i] > 0 ? "inf" : "-inf") +
             ": images must be finite");
      }
    n_ = images_.shape[0];
    if (n_ < in.n)
      fail("images '" + ip + "' hold " + std::to_string(n_) + " samples, fewer than the batch " + std::to_string(in.n));
    if (labels.shape.size() != 1 || labels.shape[0] != n_)
      fail("labels '" + lp + "' must have shape (" + std::to_string(n_) + ",), got " + labels.shape_string());
    labels_.resize(size_t(n_));
    for (int64_t i = 0; i < n_; ++i) {
      const float v = labels.data()[i];
      if (!(v >= 0 && v < float(classes)) || v != std::floor(v))
        fail("labels '" + lp + "': entry " + std::to_string(i) + " is " + std::to_string(v) + ", not an integer in [0, " +
             std::to_string(classes) + ")");
      labels_[size_t(i)] = int(v);
    }
  }

  void batch(int64_t index, Batch& out) override {
    out.images = Tensor({in_.n, in_.c, in_.h, in_.w});
    out.labels.assign(size_t(in_.n), 0);
    const int64_t per = in_.per_sample();
    for (int i = 0; i < in_.n; ++i) {
      const int64_t s = (index * in_.n + i) % n_;
      std::memcpy(out.images.data() + i * per, images_.data() + s * per, size_t(per) * sizeof(float));
      out.labels[size_t(i)] = labels_[size_t(s)];
    }
  }

  std::string describe() const override { return ".npy data '" + ip_ + "' (" + std::to_string(n_) + " samples)"; }

 private:
  Shape4 in_;
  std::string ip_;
  Tensor images_;
  std::vector<int> labels_;
  int64_t n_ = 0;
};

}  // namespace

std::unique_ptr<DataSource> make_synthetic(const std::string& kind, const Shape4& input, int classes, uint64_t seed,
                                           float noise) {
  if (kind != "pattern" && kind != "random") fail("unknown synthetic data '" + kind + "' (expected pattern or random)");
  return std::make_unique<Synthetic>(kind == "pattern", input, classes, seed, noise);
}

std::unique_ptr<DataSource> make_npy(const std::string& images_path, const std::string& labels_path,
                                     const Shape4& input, int classes) {
  return std::make_unique<NpyData>(images_path, labels_path, input, classes);
}

}  // namespace convlab::train
