// cpu.direct's backward-filter for few input channels and taps (C <= 4, C x R x S <= 27, one
// group: a network's first 3 x 3 layer), pixels in the lanes. In channel lanes such a layer blocks all of diff_dst (the large
// tensor, 32-64 channels at full resolution) into a copy that crosses memory twice more, and
// reduces over 3 of 16 lanes. Here diff_dst is read as it lies: for each fixed run of
// (image, band of output rows), each tap (c, r, s)'s input pixels are gathered into a row of
// the band's pixels (zeros where the tap falls in the padding), and every output channel's
// weight gradient is a dot product of its diff_dst band with each tap's row
// (kernels/cpu/depthwise's plane_wgrad, a per-tap dot product over pixels in lanes). The runs
// are cut by the problem and the machine's thread count only, each summed into its own copy
// of the gradient, the copies added in run order: bit-identical for any thread count.
// Measured (2 threads, Zen 5, AVX-512): MobileNetV2's first layer (3 -> 32, 224 px, stride 2,
// batch 16) 3.2 -> 1.9 ms (oneDNN 1.8), VGG-16's (3 -> 64, stride 1) 19.6 -> 12.9 ms.
#pragma once
#include <cstddef>

#include "algorithms/cost.hpp"
#include "core/problem.hpp"
#include "kernels/conv_shape.hpp"

namespace convlab::direct_pix_wgrad {

bool applies(const ConvShape& s);
size_t workspace_bytes(const ConvShape& s);
void run(const ConvShape& s, const float* src, const float* diff_dst, float* diff_wei, void* workspace, int threads);
CostPhases cost_phases(const ConvProblem& p, const ConvShape& s);

}  // namespace convlab::direct_pix_wgrad
