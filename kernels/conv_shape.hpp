// The plain shape every convolution kernel takes. Kernels never see
// ConvProblem or the registry; algorithms fill this in (see
// algorithms/algorithm.hpp: to_shape()).
//
// Layouts: src (N, C, H, W), wei (K, C/groups, R, S), dst (N, K, P, Q), all
// dense, C order. dil_* is 1-based (1 = dense). Padding may differ on the two
// sides: pad_h / pad_w zero rows / columns before the image (top, left),
// pad_h_end / pad_w_end after it (bottom, right; negative, down to 1 - stride:
// the last ones are never read), so that
//   p = (pad_h + h + pad_h_end - (r - 1) * dil_h - 1) / stride_h + 1
// (and q alike). A kernel that indexes ih = p*stride_h - pad_h + r*dil_h with
// 0 <= ih < h needs only pad_h and p; one that lays out a padded copy takes
// padded_h() rows.
#pragma once

#include "core/direction.hpp"

namespace convlab {

struct ConvShape {
  int n, c, h, w;
  int k, r, s;
  int p, q;
  int pad_h, pad_w;          // top, left
  int pad_h_end, pad_w_end;  // bottom, right
  int stride_h, stride_w;
  int dil_h, dil_w;
  int groups;

  int cg() const { return c / groups; }  // input channels per group
  int kg() const { return k / groups; }  // output channels per group
  int padded_h() const { return pad_h + h + pad_h_end; }
  int padded_w() const { return pad_w + w + pad_w_end; }
  bool symmetric_padding() const { return pad_h_end == pad_h && pad_w_end == pad_w; }
};

}  // namespace convlab
