// Internal to the counting runtime (counters.cpp, counters_tsan.cpp): one
// access of a kernel thread.
#pragma once

#include <cstddef>

namespace convlab::simt::counters {

enum Op : int { kLoad = 0, kStore = 1, kAtomic = 2 };

// Records an access of `bytes` bytes at p by the instruction at pc (a return
// address inside the kernel's code) when the calling thread runs a kernel
// and p is shared or global memory; otherwise does nothing.
void record(const void* p, size_t bytes, int op, const void* pc);
// Records one fmaf(a, b, c) by the instruction at pc when the calling thread
// runs a kernel: useful unless a or b is zero.
void record_fma(float a, float b, const void* pc);

}  // namespace convlab::simt::counters
