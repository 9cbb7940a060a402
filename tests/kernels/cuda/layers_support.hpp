// Shared by the emulated tests of kernels/cuda/layers (layers_test.cpp,
// layers_lrn_pool_test.cpp): the unit roundoffs their tolerances are written
// in, seeded inputs and NaN-poisoned device outputs.
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "kernels/cuda/simt/memory.hpp"

namespace convlab::cuda::layers_test {


using simt::DeviceArray;

constexpr double kU = 0x1p-24;   // float unit roundoff
constexpr double kUd = 0x1p-53;  // double unit roundoff
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

inline std::vector<float> uniform(size_t n, float lo, float hi, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(n);
  for (auto& x : v) x = d(gen);
  return v;
}

// A device array of max(n, 1) NaNs: outputs start poisoned, and a count of 0
// still gets a valid pointer whose element must stay NaN.
inline DeviceArray<float> poisoned(int64_t n) {
  return DeviceArray<float>(std::vector<float>(size_t(std::max<int64_t>(n, 1)), kNaN));
}
inline std::vector<float> padded(std::vector<float> v) {
  if (v.empty()) v.push_back(kNaN);
  return v;
}

inline uint32_t bits(float v) { return std::bit_cast<uint32_t>(v); }
inline uint64_t bits(double v) { return std::bit_cast<uint64_t>(v); }

}  // namespace convlab::cuda::layers_test
