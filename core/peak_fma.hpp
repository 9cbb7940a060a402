// The FMA loop behind measure_fma_peak (core/peak.hpp), written once over a
// tiny vector-ops type and compiled per ISA in core/peak_avx512.cpp and
// core/peak_avx2.cpp (only those files get the ISA's flags; peak.cpp picks one
// from cpu_info() at run time).
//
// `Chains` independent accumulator chains cover the FMA latency x ports (4 x 2
// = 8 in flight, with room to spare) and all stay in registers. One call does
// iters * Chains FMAs of V::lanes fp32 lanes = iters * Chains * lanes * 2 FLOP.
// The final sum is returned, so no chain can be optimised away.
#pragma once

namespace convlab::peak {

float fma_loop_avx512(long iters, float seed);  // 24 chains of zmm (32 registers)
float fma_loop_avx2(long iters, float seed);    // 12 chains of ymm (16 registers)

// V: vec, lanes, bcast(float), fma(a, b, c) = a * b + c, add(a, b), sum(vec) over the lanes.
template <class V, int Chains>
inline float fma_chains(long iters, float seed) {
  typename V::vec a[Chains];
  for (int i = 0; i < Chains; ++i) a[i] = V::bcast(seed + 1e-3f * float(i));
  const typename V::vec b = V::bcast(0.999999f), c = V::bcast(1e-7f);
  for (long it = 0; it < iters; ++it) {
#pragma GCC unroll 24
    for (int i = 0; i < Chains; ++i) a[i] = V::fma(a[i], b, c);
  }
  typename V::vec s = a[0];
  for (int i = 1; i < Chains; ++i) s = V::add(s, a[i]);
  return V::sum(s);
}

}  // namespace convlab::peak
