// The plain shape every convolution kernel takes. Kernels never see
// ConvProblem or the registry; algorithms fill this in (see
// algorithms/algorithm.hpp: to_shape()).
//
// Layouts: src (N, C, H, W), wei (K, C/groups, R, S), dst (N, K, P, Q), all
// dense, C order. dil_* is 1-based (1 = dense). Padding is symmetric.
#pragma once

#include "core/direction.hpp"

namespace convlab {

struct ConvShape {
  int n, c, h, w;
  int k, r, s;
  int p, q;
  int pad_h, pad_w;
  int stride_h, stride_w;
  int dil_h, dil_w;
  int groups;

  int cg() const { return c / groups; }  // input channels per group
  int kg() const { return k / groups; }  // output channels per group
};

}  // namespace convlab
