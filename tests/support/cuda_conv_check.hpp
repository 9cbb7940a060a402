// Shared by the SIMT-emulated CUDA tests (tests/kernels/cuda: kernels and
// launchers; tests/algorithms/cuda: the cuda.* algorithms): small ragged
// convolution shapes and a check of one direction against the fp64 reference
// (kernels/ref), with NaN-prefilled outputs and the K*eps (or a given) tolerance.
#pragma once

#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "kernels/conv_shape.hpp"
#include "kernels/cuda/simt/memory.hpp"
#include "kernels/cuda/simt/simt.hpp"
#include "kernels/ref/conv_ref.hpp"

namespace convlab::cuda::test {

using Dir = Direction;  // the one Direction type (core/direction.hpp, via kernels/conv_shape.hpp)
inline const char* name(Dir d) { return d == Dir::fwd ? "fwd" : d == Dir::bwd_data ? "bwd-data" : "bwd-filter"; }
inline constexpr const Dir (&kDirs)[3] = kAllDirections;

// sh with its bottom / right padding set and p, q following from it.
inline ConvShape with_end_padding(ConvShape sh, int pad_h_end, int pad_w_end) {
  sh.pad_h_end = pad_h_end;
  sh.pad_w_end = pad_w_end;
  sh.p = (sh.padded_h() - sh.dil_h * (sh.r - 1) - 1) / sh.stride_h + 1;
  sh.q = (sh.padded_w() - sh.dil_w * (sh.s - 1) - 1) / sh.stride_w + 1;
  return sh;
}

// Symmetric padding (with_end_padding() for the other kind).
inline ConvShape shape(int n, int c, int h, int w, int k, int r, int s, int pad_h, int pad_w, int stride_h,
                       int stride_w, int dil = 1, int groups = 1) {
  const ConvShape sh{n, c, h, w, k, r, s, 0, 0, pad_h, pad_w, pad_h, pad_w, stride_h, stride_w, dil, dil, groups};
  return with_end_padding(sh, pad_h, pad_w);
}

inline std::string label(const ConvShape& sh) {
  return "n" + std::to_string(sh.n) + "c" + std::to_string(sh.c) + "h" + std::to_string(sh.h) + "w" +
         std::to_string(sh.w) + "k" + std::to_string(sh.k) + "r" + std::to_string(sh.r) + "s" + std::to_string(sh.s) +
         "p" + std::to_string(sh.pad_h) + "x" + std::to_string(sh.pad_w) +
         (sh.symmetric_padding() ? ""
                                 : "e" + std::to_string(sh.pad_h_end) + "x" + std::to_string(sh.pad_w_end)) +
         "st" + std::to_string(sh.stride_h) + "x" +
         std::to_string(sh.stride_w) + "d" + std::to_string(sh.dil_h) + "g" + std::to_string(sh.groups);
}

// General small ragged shapes: 1x1 (identity and strided), padding, stride,
// dilation, groups, depthwise, non-square filters, channels across a 64 tile.
inline std::vector<ConvShape> general_shapes() {
  return {
      shape(2, 5, 7, 6, 3, 1, 1, 0, 0, 1, 1),       shape(2, 3, 9, 11, 5, 3, 3, 1, 1, 1, 1),
      shape(1, 4, 13, 10, 6, 5, 5, 2, 2, 2, 2),     shape(2, 3, 10, 9, 4, 3, 3, 1, 1, 1, 1, 2),
      shape(2, 6, 8, 7, 4, 3, 3, 1, 1, 1, 1, 1, 2), shape(1, 4, 7, 9, 4, 3, 3, 1, 1, 1, 1, 1, 4),
      shape(1, 3, 11, 8, 2, 3, 1, 1, 0, 2, 1),      shape(2, 3, 9, 8, 5, 1, 1, 0, 0, 2, 2),
      shape(1, 17, 9, 8, 65, 3, 3, 1, 1, 1, 1),     shape(1, 2, 6, 6, 3, 4, 4, 0, 3, 4, 1),
  };
}

// 1-D (H = 1, one filter row) and asymmetric padding (bottom / right larger,
// smaller or negative than top / left), as tests/support/conv_tester.cpp's
// asym_1d_sweep: what a benchdnn shape file holds.
inline std::vector<ConvShape> asym_1d_shapes() {
  return {
      shape(2, 3, 1, 17, 4, 1, 3, 0, 1, 1, 1),                             // 1-D
      with_end_padding(shape(2, 4, 1, 23, 5, 1, 3, 0, 2, 1, 3, 2), 0, -2),  // 1-D, strided, dilated, -2 right
      with_end_padding(shape(2, 5, 5, 5, 6, 3, 3, 3, 3, 1, 1), 2, 2),       // benchdnn's ih5oh8kh3ph3
      with_end_padding(shape(2, 3, 8, 8, 4, 3, 3, 3, 3, 2, 2), 0, 0),       // stride 2, nothing below
      with_end_padding(shape(1, 3, 9, 8, 4, 3, 3, 1, 2, 2, 3), -1, -1),     // a last row / column unread
      with_end_padding(shape(2, 4, 7, 9, 5, 3, 3, 1, 0, 1, 1), 1, 4),       // 0 left, 4 right
      with_end_padding(shape(1, 3, 6, 6, 4, 3, 3, 1, 1, 1, 1), 4, 4),       // 1 above, 4 below
      with_end_padding(shape(2, 8, 6, 6, 8, 1, 1, 0, 0, 1, 1), 1, 0),       // 1x1 with a zero row below
      with_end_padding(shape(1, 4, 7, 6, 4, 3, 3, 1, 1, 1, 1, 1, 2), 0, 2),  // groups
  };
}

// Strided backward data, where a gather visits only the taps of each pixel's
// stride phase: strides 2, 3 and 4 (phases with 1, 2 or 3 taps of a filter,
// images wider than one 16-pixel tile of a phase), dilation sharing a factor
// with the stride (phases no tap reaches) or not, unequal strides and
// dilations, asymmetric and negative end padding, groups, depthwise, more
// input channels than one block's 8 (or 4), output channels not a multiple of
// what a kernel stages at once, an image smaller than the stride.
inline std::vector<ConvShape> strided_shapes() {
  ConvShape mixed_dil = shape(1, 2, 17, 19, 3, 5, 4, 3, 1, 4, 2, 2);
  mixed_dil.dil_w = 3;
  return {
      shape(2, 3, 11, 13, 4, 3, 3, 1, 1, 2, 2),                              // stride 2
      shape(1, 2, 14, 16, 3, 5, 5, 2, 2, 3, 3),                              // stride 3
      shape(1, 3, 71, 70, 4, 11, 11, 2, 2, 4, 4),                            // AlexNet conv1-like, 2 tiles per phase
      shape(1, 3, 12, 13, 2, 3, 3, 2, 2, 2, 2, 2),                           // stride 2, dilation 2
      shape(1, 2, 15, 14, 3, 3, 3, 1, 2, 3, 3, 2),                           // stride 3, dilation 2
      with_end_padding(mixed_dil, 0, 2),                                     // 4 x 2 strides, dilation 2 x 3
      with_end_padding(shape(1, 3, 13, 12, 4, 5, 5, 2, 1, 3, 2), 0, 3),      // asymmetric padding
      with_end_padding(shape(2, 2, 14, 15, 3, 4, 4, 1, 1, 4, 4), -2, -3),    // last rows / columns unread
      shape(1, 4, 13, 11, 6, 3, 3, 1, 1, 2, 2, 1, 2),                        // groups, stride 2
      shape(1, 4, 10, 10, 4, 3, 3, 1, 1, 3, 3, 1, 4),                        // depthwise, stride 3
      shape(1, 10, 9, 9, 3, 3, 3, 1, 1, 2, 2),                               // 10 input channels
      shape(1, 6, 13, 12, 7, 5, 5, 2, 2, 3, 3),                              // 7 output channels
      shape(1, 2, 3, 3, 2, 2, 2, 1, 1, 4, 4),                                // 3 x 3 image, stride 4
  };
}

inline int64_t reduction(const ConvShape& sh, Dir d) {
  const int64_t cg = sh.c / sh.groups, kg = sh.k / sh.groups;
  switch (d) {
    case Dir::fwd: return cg * sh.r * sh.s;
    case Dir::bwd_data: return kg * sh.r * sh.s;
    case Dir::bwd_filter: return int64_t(sh.n) * sh.p * sh.q;
  }
  return 1;
}

// run(dir, sh, src, wei, dst): device pointers; writes the output of `dir`.
using ConvRun = std::function<void(Dir, const ConvShape&, float*, float*, float*)>;

// A family's three entry points without workspace (kernel(sh, in, in, out, stream),
// in each direction's own argument order) as one ConvRun.
using NoWsKernel = void (*)(const ConvShape&, const float*, const float*, float*, void*);
inline ConvRun by_direction(NoWsKernel fwd, NoWsKernel bwd_data, NoWsKernel bwd_filter) {
  return [=](Dir d, const ConvShape& sh, float* src, float* wei, float* dst) {
    if (d == Dir::fwd) fwd(sh, src, wei, dst, nullptr);
    if (d == Dir::bwd_data) bwd_data(sh, dst, wei, src, nullptr);
    if (d == Dir::bwd_filter) bwd_filter(sh, src, dst, wei, nullptr);
  };
}

// elem / global as in algorithms/algorithm.hpp's Tolerance; elem < 0 means K*eps.
// Returns max_i |y_i - ref_i| / mag_i (the measured error per unit of sum |terms|);
// *global_form, when given, gets max_i |y_i - ref_i| / max_j mag_j (the error in
// the transform algorithms' bound form, eps x max sum|terms|).
inline double check_conv(const ConvShape& sh, Dir d, const ConvRun& run, double elem = -1, double global = 0,
                         double* global_form = nullptr) {
  const int64_t ns = int64_t(sh.n) * sh.c * sh.h * sh.w, nw = int64_t(sh.k) * (sh.c / sh.groups) * sh.r * sh.s,
                nd = int64_t(sh.n) * sh.k * sh.p * sh.q;
  std::vector<float> src(ns), wei(nw), dst(nd);
  uint64_t x = 0x9E3779B97F4A7C15ull ^ uint64_t(ns * 31 + nw * 7 + nd);
  auto uni = [&] {
    x ^= x << 13; x ^= x >> 7; x ^= x << 17;
    return float(double(x >> 11) / double(1ull << 53) * 2.0 - 1.0);
  };
  for (float& v : src) v = uni();
  for (float& v : wei) v = uni();
  for (float& v : dst) v = uni();
  std::vector<double> ref, mag;
  const int64_t nout = d == Dir::fwd ? nd : d == Dir::bwd_data ? ns : nw;
  ref.resize(nout);
  mag.resize(nout);
  if (d == Dir::fwd) ref::conv_fwd(sh, src.data(), wei.data(), ref.data(), mag.data());
  if (d == Dir::bwd_data) ref::conv_bwd_data(sh, dst.data(), wei.data(), ref.data(), mag.data());
  if (d == Dir::bwd_filter) ref::conv_bwd_filter(sh, src.data(), dst.data(), ref.data(), mag.data());

  simt::DeviceArray<float> dsrc(src), dwei(wei), ddst(dst);
  simt::DeviceArray<float>& out = d == Dir::fwd ? ddst : d == Dir::bwd_data ? dsrc : dwei;
  out.fill_bytes(0xFF);  // NaN: an element the kernel forgets fails
  run(d, sh, dsrc.get(), dwei.get(), ddst.get());
  const std::vector<float> got = out.download();

  if (elem < 0) elem = double(reduction(sh, d)) * FLT_EPSILON;
  double max_mag = 0;
  for (double m : mag) max_mag = std::max(max_mag, m);
  int bad = 0;
  double worst = 0, worst_err = 0;
  for (int64_t i = 0; i < nout; ++i) {
    const double err = std::fabs(double(got[i]) - ref[i]);
    if (mag[i] > 0) worst = std::max(worst, err / mag[i]);
    if (!(err <= worst_err)) worst_err = err;  // NaN sticks
    const double allowed = elem * mag[i] + global * max_mag;
    if (!(err <= allowed) && ++bad <= 3)
      ADD_FAILURE() << label(sh) << " " << name(d) << " element " << i << ": " << got[i] << " vs " << ref[i]
                    << " (allowed " << allowed << ")";
  }
  EXPECT_EQ(bad, 0) << label(sh) << " " << name(d);
  if (global_form) *global_form = max_mag > 0 ? worst_err / max_mag : 0;
  return worst;
}

// Launchers whose grid grows with N or groups must split a grid over the
// device's limits (grid.y, grid.z <= 65535) into launches that fit. Emulating
// 65536 blocks is slow, so this fixture lowers the emulator's limits to 3 (y)
// and 2 (z) (simt::set_grid_limits_for_tests): every launcher chunks by
// simt::grid_limits(), and the emulator rejects any launch over them, so a
// launcher that forgets to chunk fails here exactly as it would on a GPU.
class LowGridLimits : public ::testing::Test {
 protected:
  void SetUp() override {
    saved_ = simt::grid_limits();
    simt::set_grid_limits_for_tests({saved_.x, 3, 2});
  }
  void TearDown() override { simt::set_grid_limits_for_tests(saved_); }
  simt::GridLimits saved_{};
};
// N = 5 images (grid.z 5 > 2), 4 groups of one channel block (grid.y 4 > 3).
inline const ConvShape kLowGridShape = shape(5, 4, 6, 7, 4, 3, 3, 1, 1, 1, 1, 1, 4);

}  // namespace convlab::cuda::test

#include "core/layers.hpp"

namespace convlab::cuda::test {

// ThreadSanitizer makes the emulator ~10x slower: the AlexNet-size runs skip there.
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
inline constexpr bool kSanitized = true;
#else
inline constexpr bool kSanitized = false;
#endif

// Under the sanitizers (5-10x slower emulation) every other shape of a sweep:
// still every code path of the kernels, at half the cost.
template <typename T>
std::vector<T> sanitized_subset(std::vector<T> v) {
  if (!kSanitized) return v;
  std::vector<T> out;
  for (size_t i = 0; i < v.size(); i += 2) out.push_back(v[i]);
  return out;
}

// The 3x3 stride-1 layers of AlexNet (both variants) at batch 1, from core's table.
inline std::vector<std::pair<std::string, ConvShape>> alexnet_3x3_layers() {
  std::vector<std::pair<std::string, ConvShape>> v;
  for (const char* net : {"alexnet", "alexnet-owt"})
    for (const NetLayer& l : network_layers(net, 1)) {
      const ConvProblem& p = l.problem;
      if (p.r != 3 || p.s != 3 || p.stride_h != 1 || p.stride_w != 1) continue;
      v.emplace_back(l.id, ConvShape{p.n, p.c, p.h, p.w, p.k, p.r, p.s, p.p(), p.q(), p.pad_h, p.pad_w,
                                       p.pad_h_end, p.pad_w_end, p.stride_h, p.stride_w, p.dil_h, p.dil_w,
                                       p.groups});
    }
  return v;
}

}  // namespace convlab::cuda::test
