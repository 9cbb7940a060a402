// Shared helpers of the kernels/cpu/layers tests: seeded data, NaN-poisoned
// outputs, running a kernel under every ISA table this CPU has, and bitwise
// comparison.
#pragma once
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "core/device.hpp"
#include "kernels/cpu/layers/layer_kernels.hpp"

namespace convlab::cpu::testing {

inline std::vector<float> uniform(int64_t n, uint64_t seed, float lo = -1.f, float hi = 1.f) {
  std::vector<float> v(static_cast<size_t>(n));
  uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
  for (auto& x : v) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    x = lo + (hi - lo) * float(double(s >> 40) / double(1ull << 24));
  }
  return v;
}

inline std::vector<float> poisoned(int64_t n) {
  return std::vector<float>(static_cast<size_t>(n), std::numeric_limits<float>::quiet_NaN());
}

// The ISA tables this CPU can run (widest first, as CONVLAB_ISA caps).
inline std::vector<const LayerKernels*> isa_tables() {
  std::vector<const LayerKernels*> v;
  bool on = false;
  for (const char* isa : kIsaLevels) {
    on = on || cpu_info().isa() == isa;
    if (on) v.push_back(layer_kernels(isa));
  }
  return v;
}

// Runs f() with every ISA table in turn (and back to the CPU's choice after).
template <class F>
void for_each_isa(F f) {
  for (const LayerKernels* k : isa_tables()) {
    SCOPED_TRACE(std::string("isa ") + k->isa);
    override_layer_kernels(k);
    f(*k);
  }
  override_layer_kernels(nullptr);
}

// Exact equality, NaN included (the same bits).
inline int64_t bit_mismatches(const std::vector<float>& a, const std::vector<float>& b) {
  EXPECT_EQ(a.size(), b.size());
  int64_t bad = 0;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) bad += std::memcmp(&a[i], &b[i], sizeof(float)) != 0;
  return bad;
}

constexpr double kEps = 0x1p-23;  // FLT_EPSILON

}  // namespace convlab::cpu::testing
