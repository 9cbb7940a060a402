// cpu.direct_depthwise's plane path: a stride-1 depthwise convolution whose output
// plane is its input plane (H x W, "same" padding) on small images runs in the
// plain layout as it lies, no conversion at all. Each channel plane is read flat,
// pixels in the vector lanes; a tap's shift is one masked load of the plane at the
// tap's offset (the mask clears the lanes whose pixel or tap pixel lies outside the
// image); kernels/cpu/depthwise's plane / plane_wgrad.
//   forward, backward-data (as a forward, filter reversed): each thread a fixed run
//     of the planes of all images and channels, in memory order;
//   backward-filter: each thread a fixed run of channels, each channel's taps summed
//     over every image in order (bit-identical for any thread count).
// Applies where the (tap, chunk) masks fit the kernels' table (kPlaneMaxMasks: up to
// 28 x 28 for 3 x 3 on AVX-512, 32 x 32 on AVX2). On those images the blocked path
// spent most of its time converting layouts: measured, batch 16, 2 threads, Zen 5
// AVX-512, 7 x 7 forward 0.157 -> 0.123 ms, 28 x 28 0.426 -> 0.324 ms, backward-filter
// 8 % faster on 7 x 7, equal on 14 and 28 (docs/results).
#pragma once
#include <cstddef>

#include "algorithms/cost.hpp"
#include "core/problem.hpp"
#include "kernels/conv_shape.hpp"
#include "kernels/cpu/depthwise/dw_ukernel.hpp"

namespace convlab::dw_plane {

// Whether the plane path runs this (depthwise) shape with these kernels.
bool applies(const ConvShape& s, const cpu::depthwise::DwUkernels& uk);
size_t workspace_bytes(const ConvShape& s, const cpu::depthwise::DwUkernels& uk, bool flip);
// out = in (*) wei, planes (N, C, H, W); flip: the filter reversed in (r, s) (backward-data).
void forward(const ConvShape& s, const cpu::depthwise::DwUkernels& uk, bool flip, const float* in, const float* wei,
             float* out, void* workspace, int threads);
void wgrad(const ConvShape& s, const cpu::depthwise::DwUkernels& uk, const float* src, const float* diff_dst,
           float* diff_wei, void* workspace, int threads);
CostPhases cost_phases(const ConvProblem& p, const ConvShape& s, const cpu::depthwise::DwUkernels& uk);

}  // namespace convlab::dw_plane
