// fp32 transposes for the blocked-layout conversions: 16 x 16 (AVX-512) and
// 8 x 8 (AVX2); layout.cpp checks cpu_info() before calling.
#pragma once
#include <cstdint>

namespace convlab::cpu::direct {

// dst[i*dst_stride + j] = src[j*src_stride + i] for i, j < 16.
void transpose16x16_avx512(const float* src, int64_t src_stride, float* dst, int64_t dst_stride);
// dst[i*dst_stride + j] = src[j*src_stride + i] for i, j < 8.
void transpose8x8_avx2(const float* src, int64_t src_stride, float* dst, int64_t dst_stride);
// The same for i < ni, j < nj only (1..16 / 1..8): masked, touching nothing else.
void transpose16x16_part_avx512(const float* src, int64_t src_stride, float* dst, int64_t dst_stride, int ni,
                                int nj);
void transpose8x8_part_avx2(const float* src, int64_t src_stride, float* dst, int64_t dst_stride, int ni, int nj);
// Every channel, each pixel to its own place: dst[dst_off[i] + j] = src[j*src_stride + i] for
// i < ni (1..16 / 1..8), j < 16 / 8. Pixels that run over rows of a padded layout.
void transpose16x16_to_avx512(const float* src, int64_t src_stride, float* dst, const int64_t* dst_off, int ni);
void transpose8x8_to_avx2(const float* src, int64_t src_stride, float* dst, const int64_t* dst_off, int ni);
// Three channel planes' 8 pixels interleaved (a 3-channel input's blocked row):
// dst[3 * x + i] = (i == 0 ? p0 : i == 1 ? p1 : p2)[x] for x < 8.
void interleave3x8_avx2(const float* p0, const float* p1, const float* p2, float* dst);

}  // namespace convlab::cpu::direct
