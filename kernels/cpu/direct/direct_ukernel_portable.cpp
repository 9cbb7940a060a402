// Portable direct-convolution micro-kernels (baseline x86-64 or any CPU):
// V = 8 lanes held in a plain struct the compiler may map to SSE registers;
// conv up to 8 pixels, wgrad up to 8 taps. Also the run-time ISA choice.
// Bodies: direct_ukernel_impl.inc.
#include "core/device.hpp"
#include "kernels/cpu/direct/direct_ukernel_impl.inc"

namespace convlab::cpu::direct {
namespace {
struct Portable {
  static constexpr int V = 8;
  struct vec {
    float x[V];
  };
  static vec load(const float* p) {
    vec v;
    for (int l = 0; l < V; ++l) v.x[l] = p[l];
    return v;
  }
  static void store(float* p, const vec& v) {
    for (int l = 0; l < V; ++l) p[l] = v.x[l];
  }
  static vec zero() { return vec{}; }
  static vec bcast(const float* p) {
    vec v;
    for (int l = 0; l < V; ++l) v.x[l] = *p;
    return v;
  }
  static vec fma(const vec& a, const vec& b, vec c) {
    for (int l = 0; l < V; ++l) c.x[l] += a.x[l] * b.x[l];
    return c;
  }
};
using T = detail::Table<Portable, 8, 8>;
}  // namespace

const Ukernels& ukernels_portable() {
  static const Ukernels k{"portable", 8, 8, 8, &T::conv, &T::wgrad, &T::pix};
  return k;
}

namespace {
const Ukernels* g_override = nullptr;
}  // namespace

void override_ukernels(const Ukernels* uk) { g_override = uk; }

const Ukernels& select_ukernels() {
  if (g_override) return *g_override;
  const CpuInfo& ci = cpu_info();
  if (ci.isa() == "avx512") return ukernels_avx512();  // compiled with F/VL/BW/DQ: F alone is not enough
  if (ci.avx2 && ci.fma) return ukernels_avx2();
  return ukernels_portable();
}

}  // namespace convlab::cpu::direct
