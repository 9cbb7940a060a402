// im2col of small images from a zero-bordered copy of each plane (im2col.cpp's fast path).
//
// On the 7x7 to 28x28 layers (ResNet's res3-res5, DenseNet's blocks 2-4, VGG's conv4 / conv5) an output
// row is 7-28 floats: the row-by-row copy (a valid range per row, a memcpy or a stride-2 deinterleave,
// scalar zeros at the edges) spends more on its bookkeeping than on the floats. Instead each (image,
// channel) plane is copied once into a buffer plane_width(sh) floats wide whose border is zero, and every
// output row (r, s, p) is then a vector or a few from it: one load at stride 1, two loads and a permute
// at stride 2. Output rows are stored 16 floats (AVX-512) or 8 (AVX2) at a time in increasing p, each
// store's spill into the next rows overwritten by them; a row whose store would pass its image's P*Q
// columns goes through a small buffer.
//
// The buffer (plane_width(sh) floats a row): row ph = ih + pad_h holds input row ih at columns [pad_w, pad_w + W); everything else is
// zero. Output (p, q) of tap (r, s) reads buffer row p*stride_h + r*dil_h, column q*stride_w + s*dil_w.
#pragma once
#include <cstdint>

#include "kernels/conv_shape.hpp"

namespace convlab::cpu {

constexpr int kPlaneWidth = 128;  // floats per buffer row at most
constexpr int kPlaneRows = 64;    // buffer rows at most

// Rows of the buffer an output plane reads: (P - 1) stride_h + (R - 1) dil_h + 1.
inline int plane_rows(const ConvShape& sh) { return (sh.p - 1) * sh.stride_h + (sh.r - 1) * sh.dil_h + 1; }

// Floats per buffer row for sh: 64 or 128, the narrower that holds the input row after its left
// padding and every vector read (the last tap's offset (S - 1) dil_w plus stride_w times Q rounded up
// to 16); 0 when neither does.
inline int plane_width(const ConvShape& sh) {
  const int reach = (sh.s - 1) * sh.dil_w + sh.stride_w * ((sh.q + 15) / 16 * 16);
  const int need = sh.pad_w + sh.w > reach ? sh.pad_w + sh.w : reach;
  return need <= 64 ? 64 : need <= kPlaneWidth ? kPlaneWidth : 0;
}

// Whether the plane path runs sh: stride_w 1 or 2, Q <= 32, non-negative leading padding, a plane_width,
// plane_rows within kPlaneRows.
bool im2col_plane_applies(const ConvShape& sh);

// The R*S rows of one (image, channel) pair from its buffer: row (r, s) at rows + (r*S + s) * ldcol,
// P*Q floats. The ISA variants; tests call each directly.
using Im2colPlaneRows = void (*)(const ConvShape& sh, const float* buf, float* rows, int64_t ldcol);
void im2col_plane_rows_avx512(const ConvShape& sh, const float* buf, float* rows, int64_t ldcol);
void im2col_plane_rows_avx2(const ConvShape& sh, const float* buf, float* rows, int64_t ldcol);
// The variant of this CPU (cpu_info()'s ISA), nullptr without AVX2.
Im2colPlaneRows im2col_plane_rows();

}  // namespace convlab::cpu
