// One row of a strided gather: out[i] = in[i * stride] for i < n, the copy im2col and cpu.direct's
// pixel-lane backward-filter make of every filter tap's input row. Stride 1 is a memcpy; stride 2 (the
// strided layers of ResNet, MobileNet, DenseNet) deinterleaves in vector registers on AVX-512 and
// AVX2, chosen at run time from cpu_info(). Nothing past in[(n - 1) * stride] is read.
#pragma once
#include <cstdint>

namespace convlab::cpu {

void copy_strided(const float* in, int stride, int n, float* out);

// The ISA variants of stride 2 (row_copy_avx512.cpp, row_copy_avx2.cpp), called by copy_strided
// where the CPU has the ISA; tests call each directly.
void copy_stride2_avx512(const float* in, int n, float* out);
void copy_stride2_avx2(const float* in, int n, float* out);

}  // namespace convlab::cpu
