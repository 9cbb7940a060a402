// Implicit-GEMM convolution (kernels/cuda/implicit_gemm/implicit_gemm.cu): the
// im2col GEMMs without materialising the column matrix; the tile loaders
// compute each element's tensor address (or the zero of padding) on the fly.
//   fwd        dst[g]      (Kg, N*P*Q)   = wei[g] (Kg, Cg*R*S) * im2col(src)[g] (Cg*R*S, N*P*Q)
//   bwd-data   diff_src[g] (Cg, N*H*W)   = wei[g]^T (Cg, Kg*R*S) * scatter(diff_dst)[g] (Kg*R*S, N*H*W)
//   bwd-filter diff_wei[g] (Kg, Cg*R*S)  = diff_dst[g] (Kg, N*P*Q) * im2col(src)[g]^T (N*P*Q, Cg*R*S)
// No workspace.
#pragma once

#include "kernels/conv_shape.hpp"

namespace convlab::cuda {

void implicit_gemm_conv_fwd(const ConvShape& sh, const float* src, const float* wei, float* dst, void* stream);
void implicit_gemm_conv_bwd_data(const ConvShape& sh, const float* diff_dst, const float* wei, float* diff_src,
                                 void* stream);
void implicit_gemm_conv_bwd_filter(const ConvShape& sh, const float* src, const float* diff_dst, float* diff_wei,
                                   void* stream);

}  // namespace convlab::cuda
