// im2col / col2im for a chunk of images (kernels/cuda/im2col/im2col.cu), one
// kernel launch each. Plain data: ConvShape, device pointers, a stream. The
// im2col + GEMM convolution that composes them with a GEMM, in chunks of
// images, is cuda.im2col_gemm (algorithms/cuda/im2col_gemm.cu).
//
// Column matrix of one image: col (C*R*S, P*Q), row (c*R + r)*S + s, column p*Q + q;
// group g's rows are the contiguous block [g*Cg*R*S, (g+1)*Cg*R*S).
#pragma once

#include <cstdint>

#include "kernels/conv_shape.hpp"

namespace convlab::cuda {

// col = im2col(src) for `images` consecutive images src (images, C, H, W) ->
// col (images, C*R*S, P*Q); zero where the filter reads padding.
void im2col(const ConvShape& sh, const float* src, float* col, void* stream, int images = 1);
// diff_src (images, C, H, W) = col2im(col (images, C*R*S, P*Q)): each input
// element gathers the column entries it was copied to (no atomics, deterministic).
void col2im(const ConvShape& sh, const float* col, float* diff_src, void* stream, int images = 1);
// out (len) = [out +] partials[0] + partials[1] + ... + partials[count-1], added in
// that order (partials (count, len)): per-image partial results reduced
// deterministically, as the same images accumulated one at a time would be.
void sum_partials(const float* partials, int count, int64_t len, float* out, bool accumulate, void* stream);

}  // namespace convlab::cuda
