// im2col / col2im for one group of a batch of images (the Caffe lowering).
//
// Column matrix of group g for images [0, nb): rows (c, r, s) over the group's
// Cg channels, columns (image i, p, q):
//   col[((c*R + r)*S + s) * ldcol + i*P*Q + p*Q + q] = src[i][g*Cg + c][ih][iw]
//   ih = p*stride_h - pad_h + r*dil_h, iw = q*stride_w - pad_w + s*dil_w (0 outside)
// so ldcol >= nb*P*Q and image i's columns start at i*P*Q.
// src / diff_src point at image 0 of the batch slice (full NCHW tensors: image
// stride C*H*W, the group's channels are selected by g).
// Threads: OpenMP over (channel, image) pairs (im2col) or (image, channel) pairs
// (col2im), static: each pair writes its own
// rows (im2col) or its own plane (col2im), so results do not depend on the
// thread count. col2im sums the taps of each plane in a fixed (r, s, p, q) order.
#pragma once
#include <cstdint>

#include "kernels/conv_shape.hpp"

namespace convlab::cpu {

void im2col(const ConvShape& sh, int nb, int g, const float* src, float* col, int64_t ldcol, int threads);
// Overwrites diff_src's group-g channels of images [0, nb) with the sum of the
// columns that read each input position (the adjoint of im2col).
void col2im(const ConvShape& sh, int nb, int g, const float* col, int64_t ldcol, float* diff_src, int threads);

}  // namespace convlab::cpu
