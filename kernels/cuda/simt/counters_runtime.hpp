// Internal to the counting runtime (counters.cpp, counters_tsan.cpp): one
// access of a kernel thread.
#pragma once

#include <cstddef>
#include <string>

namespace convlab::simt::counters {

enum Op : int { kLoad = 0, kStore = 1, kAtomic = 2 };

// Records an access of `bytes` bytes at p by the instruction at pc (a return
// address inside the kernel's code) when the calling thread runs a kernel
// and p is shared or global memory; otherwise does nothing.
void record(const void* p, size_t bytes, int op, const void* pc);
// Records one fmaf(a, b, c) by the instruction at pc when the calling thread
// runs a kernel: useful unless a or b is zero.
void record_fma(float a, float b, const void* pc);
// The demangled name of the function at fn ("ns::kernel<16, 128>"; "" when
// this executable's symbol table does not list it).
std::string function_name(const void* fn);

}  // namespace convlab::simt::counters
