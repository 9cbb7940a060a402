// The fp64 oracle: naive convolution with double accumulation, for the three
// directions, with stride, padding, dilation and groups. Every algorithm in
// convlab is checked against these loops and nothing else.
//
// Inputs are fp32 (the data the algorithm under test sees); products are exact
// in fp64 and sums are accumulated in fp64. Each function can also return the
// magnitude sum_i |a_i * b_i| of every output element: the scale of the fp32
// rounding error any summation order can make (error <= K*eps*magnitude), which
// the tester turns into the per-element tolerance.
//
// Threads: OpenMP over independent output planes (deterministic).
#pragma once
#include "kernels/conv_shape.hpp"

namespace convlab::ref {

// dst(N,K,P,Q) = conv(src(N,C,H,W), wei(K,C/g,R,S)); mag may be nullptr.
void conv_fwd(const ConvShape& sh, const float* src, const float* wei, double* dst, double* mag);
// diff_src(N,C,H,W) = conv_transpose(diff_dst(N,K,P,Q), wei).
void conv_bwd_data(const ConvShape& sh, const float* diff_dst, const float* wei, double* diff_src, double* mag);
// diff_wei(K,C/g,R,S) = correlate(src, diff_dst) summed over N, P, Q.
void conv_bwd_filter(const ConvShape& sh, const float* src, const float* diff_dst, double* diff_wei, double* mag);

}  // namespace convlab::ref
