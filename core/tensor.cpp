#include "core/tensor.hpp"

namespace convlab {

std::string Tensor::shape_string() const {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + ")";
}

std::vector<int64_t> src_shape(const ConvProblem& p) { return {p.n, p.c, p.h, p.w}; }
std::vector<int64_t> wei_shape(const ConvProblem& p) { return {p.k, p.c_per_group(), p.r, p.s}; }
std::vector<int64_t> dst_shape(const ConvProblem& p) { return {p.n, p.k, p.p(), p.q()}; }

namespace {
uint64_t splitmix64(uint64_t& state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
}  // namespace

void fill_uniform(float* data, size_t count, uint64_t seed, float lo, float hi) {
  uint64_t state = seed;
  for (size_t i = 0; i < count; ++i) {
    const double u = double(splitmix64(state) >> 11) * 0x1.0p-53;  // [0, 1)
    data[i] = float(lo + (hi - lo) * u);
  }
}

void fill_small_integers(float* data, size_t count, uint64_t seed, int range) {
  uint64_t state = seed;
  const uint64_t span = uint64_t(2 * range + 1);
  for (size_t i = 0; i < count; ++i) data[i] = float(int64_t(splitmix64(state) % span) - range);
}

}  // namespace convlab
