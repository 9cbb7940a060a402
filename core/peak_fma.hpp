// The FMA loop behind measure_fma_peak (core/peak.hpp), written once over a
// GCC vector type (__m512, __m256) and compiled per ISA in core/peak_avx512.cpp
// and core/peak_avx2.cpp, the only files built with that ISA's flags; peak.cpp
// picks one from cpu_info() at run time.
//
// `Chains` independent accumulator chains cover the FMA latency x ports (4 x 2
// = 8 in flight, with room to spare) and all stay in registers. One call does
// iters * Chains FMAs of lanes = sizeof(V) / 4 fp32 lanes, i.e.
// iters * Chains * lanes * 2 FLOP. The final sum is returned, so no chain can
// be optimised away.
#pragma once

namespace convlab::peak {

float fma_loop_avx512(long iters, float seed);  // 24 chains of zmm (32 registers)
float fma_loop_avx2(long iters, float seed);    // 12 chains of ymm (16 registers)

// fma(a, b, c) = a * b + c, one instruction (the ISA's intrinsic).
template <class V, int Chains, class Fma>
inline float fma_chains(long iters, float seed, Fma fma) {
  V a[Chains];
  for (int i = 0; i < Chains; ++i) a[i] = V{} + (seed + 1e-3f * float(i));  // a scalar broadcasts
  const V b = V{} + 0.999999f, c = V{} + 1e-7f;
  for (long it = 0; it < iters; ++it) {
#pragma GCC unroll 24
    for (int i = 0; i < Chains; ++i) a[i] = fma(a[i], b, c);
  }
  V s = a[0];
  for (int i = 1; i < Chains; ++i) s += a[i];
  float r = 0;
  for (int l = 0; l < int(sizeof(V) / sizeof(float)); ++l) r += s[l];
  return r;
}

}  // namespace convlab::peak
