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
  static vec add(vec a, const vec& b) {
    for (int l = 0; l < V; ++l) a.x[l] += b.x[l];
    return a;
  }
  static vec set1(float x) {
    vec v;
    for (int l = 0; l < V; ++l) v.x[l] = x;
    return v;
  }
  using mask = uint32_t;
  static mask make_mask(uint32_t bits) { return bits; }
  static vec maskz_load(const float* p, mask m) {
    vec v{};
    for (int l = 0; l < V; ++l)
      if (m >> l & 1) v.x[l] = p[l];
    return v;
  }
  static void mask_store(float* p, mask m, const vec& v) {
    for (int l = 0; l < V; ++l)
      if (m >> l & 1) p[l] = v.x[l];
  }
  static float hsum(const vec& v) {  // pairwise, as the vector ISAs' reductions
    float s[V];
    for (int l = 0; l < V; ++l) s[l] = v.x[l];
    for (int w = V / 2; w >= 1; w /= 2)
      for (int l = 0; l < w; ++l) s[l] += s[l + w];
    return s[0];
  }
};
using T = detail::Table<Portable, 4, 4, 9, 2, 2>;
}  // namespace

const DwUkernels& dw_ukernels_portable() {
  static const DwUkernels k{"portable", 8, 9, &T::row_any, &T::wgrad, &T::plane_, &T::plane_wgrad};
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
