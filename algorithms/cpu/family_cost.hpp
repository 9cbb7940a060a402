// The cost statements two classes share: cpu.direct's and oneDNN's direct kernels block alike, so do
// cpu.direct_depthwise and oneDNN's depthwise kernel;
// cpu.winograd_f4x3 and oneDNN's Winograd compute the same F(4x4) (algorithms/cost.hpp). Not an
// algorithm header: including it ties no code unit to another (cmake/code_versions.cmake).
#pragma once
#include "algorithms/cost.hpp"

namespace convlab {

// The phases of a direct convolution over blocked layouts (algorithms/cpu/direct_cost.cpp): the FMAs
// with the lanes wasted on fewer channels than a vector, and the layout copies. pixel_bwd_data: the
// kernel vectorises bwd-data over pixels when the channels fill under half a vector (cpu.direct's).
CostPhases direct_cost_phases(const ConvProblem& p, Direction dir, bool pixel_bwd_data);

// The phases of a depthwise convolution with the channels in the vector lanes (groups == C == K;
// algorithms/cpu/direct_depthwise.cpp): cpu.direct_depthwise's, and oneDNN's JIT depthwise kernel's,
// which blocks alike: the FMAs with the last block's lanes wasted, the plain tensors crossing memory
// once, the bands blocked and unblocked in cache.
CostPhases depthwise_cost_phases(const ConvProblem& p, Direction dir);

// The phases of a non-fused Winograd F(m x m, 3x3) (algorithms/cpu/winograd_cost.cpp): the tile
// transforms, the a^2 batched GEMMs on the sgemm micro-kernel, the GEMM operands' copies.
CostPhases winograd_cost_phases(const ConvProblem& p, Direction dir, int m);

}  // namespace convlab
