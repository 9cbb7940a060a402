// The measured FMA peak (flop/s) of `threads` cores: see fma_peak_avx512.cpp.
// Call only where cpu_info().avx512f.
#pragma once

namespace convlab::cpu {

double fma_peak_flops_avx512(int threads, long iters = 20'000'000);

}  // namespace convlab::cpu
