// im2col / col2im for one image, and the three convolution directions built on
// them plus a GEMM (kernels/cuda/im2col/im2col.cu). Plain data: ConvShape,
// device pointers, a workspace, a stream.
//
// Column matrix of one image: col (C*R*S, P*Q), row (c*R + r)*S + s, column p*Q + q;
// group g's rows are the contiguous block [g*Cg*R*S, (g+1)*Cg*R*S).
#pragma once

#include <cstdint>
#include <functional>

#include "kernels/conv_shape.hpp"
#include "kernels/cuda/gemm/sgemm.hpp"

namespace convlab::cuda {

// col = im2col(src) for one image src (C, H, W); zero where the filter reads padding.
void im2col(const ConvShape& sh, const float* src, float* col, void* stream);
// diff_src (C, H, W) = col2im(col): each input element gathers the column
// entries it was copied to (no atomics, deterministic).
void col2im(const ConvShape& sh, const float* col, float* diff_src, void* stream);

// The GEMM the drivers call: the hand-written sgemm() or a vendor one.
using GemmFn = std::function<void(const SgemmArgs&, void* stream)>;
GemmFn default_gemm();

// 1x1, stride 1, no padding: the column matrix is the image itself.
bool im2col_is_identity(const ConvShape& sh);
// Workspace (floats) of the drivers below: one image's column matrix, or 0.
int64_t im2col_workspace_floats(const ConvShape& sh);

// Per image n: dst_n[g] (Kg, PQ) = wei[g] (Kg, CgRS) * col_n[g] (CgRS, PQ).
void im2col_conv_fwd(const ConvShape& sh, const float* src, const float* wei, float* dst, float* ws, void* stream,
                     const GemmFn& gemm);
// Per image n: col[g] (CgRS, PQ) = wei[g]^T * diff_dst_n[g] (Kg, PQ); diff_src_n = col2im(col).
void im2col_conv_bwd_data(const ConvShape& sh, const float* diff_dst, const float* wei, float* diff_src, float* ws,
                          void* stream, const GemmFn& gemm);
// diff_wei[g] (Kg, CgRS) = sum over n of diff_dst_n[g] (Kg, PQ) * col_n[g]^T (PQ, CgRS).
void im2col_conv_bwd_filter(const ConvShape& sh, const float* src, const float* diff_dst, float* diff_wei, float* ws,
                            void* stream, const GemmFn& gemm);

}  // namespace convlab::cuda
