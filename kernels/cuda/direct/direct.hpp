// Direct convolution kernels (kernels/cuda/direct/direct.cu): any filter,
// stride, padding, dilation and groups; NCHW / KCRS; all three directions.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/conv_shape.hpp"

namespace convlab::cuda {

// Dynamic shared memory the fwd / bwd-data kernels need for this shape
// (input or diff_dst tile + filter slice), bytes.
size_t direct_fwd_smem_bytes(const ConvShape& sh);
size_t direct_bwd_data_smem_bytes(const ConvShape& sh);
// The per-block limit the launchers respect without opting in (48 KiB); the
// launchers opt in (simt::set_max_dynamic_smem) up to kDirectSmemMax (227 KiB,
// sm_90) when called with a larger window.
constexpr size_t kDirectSmemLimit = 48 * 1024;
constexpr size_t kDirectSmemMax = 232448;

void direct_conv_fwd(const ConvShape& sh, const float* src, const float* wei, float* dst, void* stream);
void direct_conv_bwd_data(const ConvShape& sh, const float* diff_dst, const float* wei, float* diff_src, void* stream);
// bwd-filter, the reduction over the N*P*Q output positions (n, p, q) in
// `chunks` runs of chunk_len consecutive positions (the last may be shorter; a
// run may end inside an image; chunks * chunk_len must cover N*P*Q): chunk i
// writes its partial sums to out + i*K*Cg*R*S, (chunks, K, Cg, R, S), each
// weight's products added in position order. chunk_len a multiple of
// kDirectFilterStep wastes no step.
constexpr int kDirectFilterStep = 16;
void direct_conv_bwd_filter_chunks(const ConvShape& sh, const float* src, const float* diff_dst, float* out,
                                   int chunks, int64_t chunk_len, void* stream);
// Blocks of one chunk (tiles of 64 output channels x 64 weights, per group).
int64_t direct_bwd_filter_blocks(const ConvShape& sh);
// One chunk: diff_wei directly.
void direct_conv_bwd_filter(const ConvShape& sh, const float* src, const float* diff_dst, float* diff_wei,
                            void* stream);

}  // namespace convlab::cuda
