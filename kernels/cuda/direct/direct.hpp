// Direct convolution kernels (kernels/cuda/direct/direct.cu): any filter,
// stride, padding, dilation and groups; NCHW / KCRS; all three directions.
#pragma once

#include <cstddef>

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
void direct_conv_bwd_filter(const ConvShape& sh, const float* src, const float* diff_dst, float* diff_wei,
                            void* stream);

}  // namespace convlab::cuda
