// im2col / col2im for a chunk of images, and the three convolution directions built on
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

// col = im2col(src) for `images` consecutive images src (images, C, H, W) ->
// col (images, C*R*S, P*Q); zero where the filter reads padding.
void im2col(const ConvShape& sh, const float* src, float* col, void* stream, int images = 1);
// diff_src (images, C, H, W) = col2im(col (images, C*R*S, P*Q)): each input
// element gathers the column entries it was copied to (no atomics, deterministic).
void col2im(const ConvShape& sh, const float* col, float* diff_src, void* stream, int images = 1);

// The GEMM the drivers call: the hand-written sgemm() or a vendor one.
using GemmFn = std::function<void(const SgemmArgs&, void* stream)>;
GemmFn default_gemm();

// 1x1, stride 1, no padding: the column matrix is the image itself.
bool im2col_is_identity(const ConvShape& sh);
// Images per chunk: as many images' column matrices as fit in
// kIm2colChunkFloats (64 MiB), at least 1, at most N. One image's GEMM on a
// small layer fills a fraction of a big GPU (AlexNet conv3-5 at 13x13: 18
// 64x64 blocks for 132 SMs); a chunk's images go into one strided-batched
// GEMM per group instead. The 1x1 identity case needs no column matrix: one
// chunk of all N images.
inline constexpr int64_t kIm2colChunkFloats = int64_t(16) << 20;
int im2col_chunk_images(const ConvShape& sh);
// Workspace (floats) of the drivers below: `chunk` images' column matrices
// (chunk 0: im2col_chunk_images), or 0 for the identity case.
int64_t im2col_workspace_floats(const ConvShape& sh, int chunk = 0);

// `chunk` (0: im2col_chunk_images(sh)) images at a time; ws holds
// im2col_workspace_floats(sh, chunk) floats. Results do not depend on chunk:
// every output element is the same GEMM dot product in the same order.
// Per image n: dst_n[g] (Kg, PQ) = wei[g] (Kg, CgRS) * col_n[g] (CgRS, PQ);
// a chunk: one GEMM per group batched over the chunk's images (wei stride 0),
// or per image batched over groups when there are more groups than images.
void im2col_conv_fwd(const ConvShape& sh, const float* src, const float* wei, float* dst, float* ws, void* stream,
                     const GemmFn& gemm, int chunk = 0);
// Per image n: col[g] (CgRS, PQ) = wei[g]^T * diff_dst_n[g] (Kg, PQ); diff_src_n = col2im(col);
// batched like fwd, one col2im per chunk.
void im2col_conv_bwd_data(const ConvShape& sh, const float* diff_dst, const float* wei, float* diff_src, float* ws,
                          void* stream, const GemmFn& gemm, int chunk = 0);
// diff_wei[g] (Kg, CgRS) = sum over n of diff_dst_n[g] (Kg, PQ) * col_n[g]^T (PQ, CgRS): one im2col per
// chunk, then one GEMM per image accumulating into diff_wei (a reduction over images: batching the
// GEMM would need per-image partial results or a transposed diff_dst; not done).
void im2col_conv_bwd_filter(const ConvShape& sh, const float* src, const float* diff_dst, float* diff_wei, float* ws,
                            void* stream, const GemmFn& gemm, int chunk = 0);

}  // namespace convlab::cuda
