// Portable depthwise micro-kernels (baseline x86-64 or any CPU): V = 8 lanes in
// a plain struct the compiler may map to SSE registers; 4 pixels per tile,
// wgrad up to 9 taps. Also the run-time ISA choice. Bodies: dw_ukernel_impl.inc.
#include "core/device.hpp"
#include "kernels/cpu/depthwise/dw_ukernel_impl.inc"

namespace convlab::cpu::depthwise {
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
  static vec fma(const vec& a, const vec& b, vec c) {
    for (int l = 0; l < V; ++l) c.x[l] += a.x[l] * b.x[l];
    return c;
  }
};
using T = detail::Table<Portable, 4, 4, 9>;
}  // namespace

const DwUkernels& dw_ukernels_portable() {
  static const DwUkernels k{"portable", 8, 9, &T::row_any, &T::wgrad};
  return k;
}

namespace {
const DwUkernels* g_override = nullptr;
}  // namespace

void override_dw_ukernels(const DwUkernels* uk) { g_override = uk; }

const DwUkernels& select_dw_ukernels() {
  if (g_override) return *g_override;
  const CpuInfo& ci = cpu_info();
  if (ci.isa() == "avx512") return dw_ukernels_avx512();  // compiled with F/VL/BW/DQ: F alone is not enough
  if (ci.avx2 && ci.fma) return dw_ukernels_avx2();
  return dw_ukernels_portable();
}

}  // namespace convlab::cpu::depthwise
