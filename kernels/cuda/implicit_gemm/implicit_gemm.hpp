// Implicit-GEMM convolution (kernels/cuda/implicit_gemm/implicit_gemm.cu): the
// im2col GEMMs without materialising the column matrix; the tile loaders
// gather each element through a precomputed table of the reduction's rows.
//   fwd        dst[g]      (Kg, N*P*Q)   = wei[g] (Kg, Cg*R*S) * im2col(src)[g] (Cg*R*S, N*P*Q)
//   bwd-data   diff_src[g] (Cg, N*H*W)   = wei[g]^T (Cg, Kg*R*S) * scatter(diff_dst)[g] (Kg*R*S, N*H*W),
//              split by the input pixels' phase (h mod stride_h, w mod stride_w) into stride_h*stride_w
//              dense GEMMs, each over the filter taps that reach its phase only
//   bwd-filter diff_wei[g] (Kg, Cg*R*S)  = diff_dst[g] (Kg, N*P*Q) * im2col(src)[g]^T (N*P*Q, Cg*R*S)
// Workspace: implicit_gemm_workspace_bytes(sh, dir), 16-byte aligned: the row
// table (16 bytes per reduction row: Cg*R*S fwd, Kg*R*S bwd-data, N*P*Q
// bwd-filter), then, where bwd-filter splits its reduction, one diff_wei of
// partial sums per split; bwd-data: each phase's wei^T over its rows, dense
// (groups, Cg, rows).
#pragma once

#include <cstddef>

#include "kernels/conv_shape.hpp"

namespace convlab::cuda {

// fp32: FMAs in fp32 on the CUDA cores. tf32: each slab element rounded to TF32
// (cvt.rna) as it is stored in shared memory and multiplied on the tensor cores
// (mma.sync m16n8k8, fp32 accumulators); the same gathers, tables and splits.
enum class Math { fp32, tf32 };

size_t implicit_gemm_workspace_bytes(const ConvShape& sh, Direction dir, Math math = Math::fp32);

void implicit_gemm_conv_fwd(const ConvShape& sh, const float* src, const float* wei, float* dst, void* workspace,
                            void* stream, Math math = Math::fp32);
void implicit_gemm_conv_bwd_data(const ConvShape& sh, const float* diff_dst, const float* wei, float* diff_src,
                                 void* workspace, void* stream, Math math = Math::fp32);
void implicit_gemm_conv_bwd_filter(const ConvShape& sh, const float* src, const float* diff_dst, float* diff_wei,
                                   void* workspace, void* stream, Math math = Math::fp32);

}  // namespace convlab::cuda
